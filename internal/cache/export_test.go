package cache

// HeardMembers returns how many other members' heartbeats the feed heard
// within the bound, and whether it has listened for a whole bound: what a
// strict change needs to know whom to wait for (position) instead of
// waiting the bound blind. Tests wait on it rather than sleeping a bound.
func (f *Feed) HeardMembers() (members int, knowsAll bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now, bound := f.mono(), int64(f.cfg.Bound)
	for _, at := range f.members {
		if now-at < bound {
			members++
		}
	}
	return members, f.listening != 0 && now-f.listening >= bound
}

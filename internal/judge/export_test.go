package judge

import "path/filepath"

// HeldPIDs returns the host pids of e's held sandboxes (bwrap and the
// supervisor of each): the processes of the engine's uids that may live
// between runs.
func HeldPIDs(e *Engine) []int {
	var out []int
	for _, s := range e.allSlots {
		s.mu.Lock()
		if s.h != nil && s.h.alive() {
			out = append(out, s.h.cmd.Process.Pid, s.h.pid)
		}
		s.mu.Unlock()
	}
	return out
}

// Executable returns the path of p's built executable on the host, for
// running the very same binary without the judge.
func Executable(p *Program) string { return filepath.Join(p.build, "main") }

package main

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
)

// profiling state of a run (see -profile).
type profiling struct {
	pprofAddr   string
	profilePath string
	profileWG   sync.WaitGroup
}

// profiled starts a CPU profile of the server when scenario is the one
// asked for with -profile, covering the scenario's measuring time, and
// returns f unchanged.
func (b *run) profiled(ctx context.Context, scenario string, f op) op {
	if b.opts.profile != scenario || b.pprofAddr == "" {
		return f
	}
	path := b.opts.profileOut
	if path == "" {
		path = filepath.Join(b.logDir, fmt.Sprintf("bench-%s.pprof", scenario))
	}
	seconds := int(b.opts.duration.Seconds()) + 1
	b.profileWG.Add(1)
	go func() {
		defer b.profileWG.Done()
		if err := fetchProfile(ctx, b.pprofAddr, seconds, path); err != nil {
			b.logf("profile: %v", err)
			return
		}
		b.profilePath = path
		b.logf("CPU profile of the server (%d s) written to %s", seconds, path)
	}()
	return f
}

// profileWait waits for a profile being taken.
func (b *run) profileWait() { b.profileWG.Wait() }

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"
)

// profiling state of a run (see -profile).
type profiling struct {
	pprofAddr   string
	profilePath string
	profileWG   sync.WaitGroup
	// deliveries are the 1-second CPU profiles of the fan-out rounds.
	deliveries []string
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
	addr := b.pprofAddr
	b.profileWG.Add(1)
	go func() {
		defer b.profileWG.Done()
		if err := fetchProfile(ctx, addr, seconds, path); err != nil {
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

// idleProfiles saves the server's goroutines and heap while scenario holds
// its connections idle (where RSS per subscriber is measured).
func (b *run) idleProfiles(ctx context.Context, scenario string) {
	if b.opts.profile != scenario || b.pprofAddr == "" {
		return
	}
	for _, p := range []struct{ name, query string }{{"goroutine", "debug=1"}, {"heap", "gc=1"}} {
		path := filepath.Join(b.logDir, fmt.Sprintf("bench-%s-idle-%s.pprof", scenario, p.name))
		if err := fetchPprof(ctx, b.pprofAddr, p.name+"?"+p.query, 30*time.Second, path); err != nil {
			b.logf("profile: %v", err)
			continue
		}
		b.logf("%s profile of the idle server written to %s", p.name, path)
	}
}

// deliveryProfile starts a 1-second CPU profile of the server when scenario
// is profiled and on is set, and returns the function that waits for it. The
// profiles of all rounds are merged by mergeDeliveries: one event's delivery
// lasts a fraction of a second, too short for a profile of its own.
func (b *run) deliveryProfile(ctx context.Context, scenario string, on bool) (wait func()) {
	if b.opts.profile != scenario || b.pprofAddr == "" || !on {
		return func() {}
	}
	path := filepath.Join(b.logDir, fmt.Sprintf("bench-%s-round%d.pprof", scenario, len(b.deliveries)))
	done := make(chan error, 1)
	go func() { done <- fetchProfile(ctx, b.pprofAddr, 1, path) }()
	time.Sleep(50 * time.Millisecond) // the profiler has started
	return func() {
		if err := <-done; err != nil {
			b.logf("profile: %v", err)
			return
		}
		b.deliveries = append(b.deliveries, path)
	}
}

// mergeDeliveries merges the delivery profiles into the scenario's profile.
func (b *run) mergeDeliveries(scenario string) {
	if len(b.deliveries) == 0 {
		return
	}
	path := b.opts.profileOut
	if path == "" {
		path = filepath.Join(b.logDir, fmt.Sprintf("bench-%s.pprof", scenario))
	}
	args := append([]string{"tool", "pprof", "-proto"}, b.deliveries...)
	out, err := exec.Command("go", args...).Output()
	if err == nil {
		err = os.WriteFile(path, out, 0o644)
	}
	if err != nil {
		b.logf("profile: merge: %v", err)
		return
	}
	b.profilePath = path
	b.logf("CPU profile of the server during %d deliveries written to %s", len(b.deliveries), path)
}

// fetchPprof saves one pprof endpoint's answer.
func fetchPprof(ctx context.Context, addr, what string, timeout time.Duration, path string) error {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/debug/pprof/"+what, nil)
	resp, err := (&http.Client{Timeout: timeout}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("pprof %s: %s", what, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

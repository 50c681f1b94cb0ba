package judge

import (
	"strings"
	"sync"
	"time"
)

// maxSeenKeys bounds the command lines a pool remembers.
const maxSeenKeys = 64

// A warm pool keeps sandboxes of one Program started ahead of need.
//
// Starting bubblewrap (namespaces, mounts, the supervisor) is most of what a
// sandboxed run costs over running the program bare: ≈ 7 ms of a trivial
// run's ≈ 10 ms overhead on our machines. A Program that is run again and
// again with the same command, limits and mounts — the tests of a
// submission, a reference solution producing outputs — gets, from its
// third such run on (the second starts one ahead), a sandbox started while
// the previous run was going:
// everything is set up and the supervisor waits for the go-ahead on a pipe
// (process.letGo). Each sandbox is used once, for one run, exactly as a
// freshly started one would be; isolation between runs is unchanged.
//
// At most Config.Workers sandboxes wait per Program; one that waits longer
// than Config.WarmIdle, and every one still waiting when the Program is
// closed, is discarded (its supervisor exits without running anything).
type warmPool struct {
	mu       sync.Mutex
	closed   bool
	idle     []*warmSandbox
	starting int             // sandboxes being started
	seen     map[string]bool // keys run before
	wg       sync.WaitGroup  // starts in flight
}

type warmSandbox struct {
	key     string
	p       *process
	uid     int
	release func() // frees the uid and the engine
	timer   *time.Timer
}

// alive reports whether the sandbox still waits: bwrap's status pipe ends
// when its processes are gone (killed while waiting, say).
func (w *warmSandbox) alive() bool {
	select {
	case <-w.p.statusDone:
		return false
	default:
		return true
	}
}

func (w *warmSandbox) discard() {
	w.p.discard()
	w.release()
}

// warmKey identifies the sandboxes interchangeable for r: the whole
// command line (limits, mounts, environment, program) and the directory.
func (e *Engine) warmKey(r *spawnReq) string {
	argv, dir, _ := e.commandLine(r, true)
	return strings.Join(argv, "\x00") + "\x00" + dir
}

// takeWarm returns a started sandbox for r, or nil when none waits, and
// starts the sandbox the next run like r will take: when r's key has been
// run before (a program run once, or with changing arguments, starts
// nothing ahead). Only sandboxed engines keep warm sandboxes.
func (p *Program) takeWarm(r *spawnReq) *warmSandbox {
	e := p.e
	if !e.sandboxed || e.cfg.WarmIdle < 0 {
		return nil
	}
	key := e.warmKey(r)
	pool := &p.warm
	pool.mu.Lock()
	defer pool.mu.Unlock()
	if pool.closed {
		return nil
	}
	var taken *warmSandbox
	for i, w := range pool.idle {
		if w.key == key {
			taken = w
			pool.idle = append(pool.idle[:i], pool.idle[i+1:]...)
			w.timer.Stop()
			break
		}
	}
	if pool.seen == nil {
		pool.seen = map[string]bool{}
	}
	if (taken != nil || pool.seen[key]) && len(pool.idle)+pool.starting < e.cfg.Workers {
		pool.starting++
		pool.wg.Add(1)
		go p.startWarm(key, *r)
	}
	if len(pool.seen) >= maxSeenKeys {
		clear(pool.seen) // a program run with ever-new arguments (checkers, generators)
	}
	pool.seen[key] = true
	return taken
}

// startWarm starts a held sandbox for runs like r and adds it to the pool.
func (p *Program) startWarm(key string, r spawnReq) {
	pool := &p.warm
	defer pool.wg.Done()
	w, err := p.newWarm(key, r)
	pool.mu.Lock()
	defer pool.mu.Unlock()
	pool.starting--
	if err != nil {
		return // the next run starts its own sandbox, and reports the error
	}
	if pool.closed {
		go w.discard()
		return
	}
	w.timer = time.AfterFunc(p.e.cfg.WarmIdle, func() {
		pool.mu.Lock()
		defer pool.mu.Unlock()
		for i, x := range pool.idle {
			if x == w {
				pool.idle = append(pool.idle[:i], pool.idle[i+1:]...)
				go w.discard()
				return
			}
		}
	})
	pool.idle = append(pool.idle, w)
}

func (p *Program) newWarm(key string, r spawnReq) (*warmSandbox, error) {
	e := p.e
	leave, err := e.enter()
	if err != nil {
		return nil, err
	}
	uid, releaseUID, err := e.acquireRunUID()
	if err != nil {
		leave()
		return nil, err
	}
	r.uid, r.sweepUID = uid, uid >= 0
	proc, err := e.start(&r, true)
	if err != nil {
		releaseUID()
		leave()
		return nil, err
	}
	return &warmSandbox{key: key, p: proc, uid: uid, release: func() { releaseUID(); leave() }}, nil
}

// close discards the waiting sandboxes, after the starts in flight.
func (pool *warmPool) close() {
	pool.mu.Lock()
	pool.closed = true
	pool.mu.Unlock()
	pool.wg.Wait()
	pool.mu.Lock()
	idle := pool.idle
	pool.idle = nil
	pool.mu.Unlock()
	for _, w := range idle {
		w.timer.Stop()
		w.discard()
	}
}

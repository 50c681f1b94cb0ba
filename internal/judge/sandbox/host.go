package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The host side of the sandbox: its work and cache directories, the check
// that bubblewrap works, the held sandboxes' set-up, the per-run uids and
// scratch directories.

// setupHolders decides whether runs are held in the slots' sandboxes (and
// accounted with control groups): it starts slot 0's and runs `true` in
// it, so that a host where that does not work is found at start-up and
// every run starts a sandbox of its own instead.
func (sb *Sandbox) setupHolders() {
	if sb.cfg.WarmIdle < 0 {
		sb.holderReason = "WarmIdle < 0"
		return
	}
	switch {
	case sb.cfg.Cgroups == CgroupOff:
		sb.cgroupReason = "Config.Cgroups is off"
	case !sb.switchUID:
		sb.cgroupReason = "not root"
	default:
		cg, err := newCgroupRoot()
		if err != nil {
			sb.cgroupReason = err.Error()
			break
		}
		sb.cgroups = cg
		for _, s := range sb.allSlots {
			if s.cg, err = cg.slot(s.idx); err == nil {
				err = s.cg.prepare(sb.cfg.ProbeLimits)
			}
			if err != nil {
				sb.cgroupReason = err.Error()
				sb.removeCgroups()
				break
			}
		}
	}
	sb.holders = true
	s := <-sb.slots
	defer func() { sb.slots <- s }()
	s.mu.Lock()
	_, err := sb.holderFor(s)
	s.mu.Unlock()
	if err != nil {
		sb.holders, sb.holderReason = false, err.Error()
		sb.removeCgroups()
		return
	}
	res, handled, err := sb.runHeld(context.Background(), s, spawnReq{
		argv: []string{"true"}, dir: BoxDir, lim: sb.cfg.ProbeLimits, stderrCap: 4096,
	})
	switch {
	case !handled:
		sb.holderReason = "a held sandbox does not start here"
	case err != nil:
		sb.holderReason = err.Error()
	case res.setupFailed || res.exitCode != 0:
		sb.holderReason = fmt.Sprintf("`true` in a held sandbox: exit %d: %s", res.exitCode, firstLine(string(res.stderr)))
	default:
		sb.markUsed(s)
		return
	}
	sb.holders = false
	s.mu.Lock()
	sb.dropHolder(s)
	s.mu.Unlock()
	sb.removeCgroups()
}

func (sb *Sandbox) removeCgroups() {
	for _, s := range sb.allSlots {
		if s.cg != nil {
			s.cg.remove()
			s.cg = nil
		}
	}
	if sb.cgroups != nil {
		sb.cgroups.remove()
		sb.cgroups = nil
	}
}

// setupDirs creates the work and cache directories with modes that let the
// sandbox uids traverse (but not list) them.
func (sb *Sandbox) setupDirs() error {
	dirMode := os.FileMode(0o700)
	if sb.switchUID {
		dirMode = 0o711
	}
	if sb.cfg.WorkDir == "" {
		sweepWorkDirs()
		dir, err := os.MkdirTemp("", workDirPrefix)
		if err != nil {
			return err
		}
		sb.workDir, sb.ownWorkDir = dir, true
		if sb.workLock, err = lockWorkDir(dir); err != nil {
			RemoveAll(dir)
			return err
		}
	} else {
		abs, err := filepath.Abs(sb.cfg.WorkDir)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(abs, 0o700); err != nil {
			return err
		}
		sb.workDir = abs
	}
	if err := os.Chmod(sb.workDir, dirMode); err != nil {
		return err
	}
	sb.cacheDir = sb.cfg.CacheDir
	if sb.cacheDir == "" {
		sb.cacheDir = filepath.Join(os.TempDir(), fmt.Sprintf("algoitny-judge-cache-%d", os.Geteuid()))
	}
	if err := ownedDir(sb.cacheDir, dirMode); err != nil {
		return err
	}
	if sb.switchUID {
		for _, d := range []string{sb.workDir, sb.cacheDir} {
			if err := checkTraversable(d); err != nil {
				return err
			}
		}
	}
	return nil
}

// ownedDir makes dir with mode if needed and checks that it is a directory
// of this process's uid, not a symlink: one in a shared place such as /tmp
// may have been made by someone else first (to poison what it holds, or
// to hold its locks). ErrInvalidConfig if it is not.
func ownedDir(dir string, mode os.FileMode) error {
	if err := os.MkdirAll(dir, mode); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !fi.IsDir() || (ok && int(st.Uid) != os.Geteuid()) {
		return fmt.Errorf("%w: %s is not a directory owned by uid %d", ErrInvalidConfig, dir, os.Geteuid())
	}
	return os.Chmod(dir, mode)
}

// checkTraversable verifies that every ancestor of dir can be traversed by
// other uids, which bwrap (running as a sandbox uid) needs to bind it.
func checkTraversable(dir string) error {
	for p := filepath.Dir(dir); ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		if fi.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("%w: %s is not reachable by the sandbox uids: %s has mode %v (needs o+x); choose another WorkDir/CacheDir",
				ErrInvalidConfig, dir, p, fi.Mode().Perm())
		}
		if p == "/" {
			return nil
		}
	}
}

// probeSandbox runs `true` in the sandbox, falling back to a bwrap without
// --disable-userns (older than 0.8) if needed, so that a broken setup (no user
// namespaces, seccomp-restricted container) is reported at start-up.
func (sb *Sandbox) probeSandbox() error {
	base := []string{"--unshare-all", "--unshare-user", "--die-with-parent", "--new-session", "--as-pid-1",
		"--hostname", "judge"}
	etcParent, err := os.MkdirTemp(sb.workDir, "sys-")
	if err != nil {
		return err
	}
	if err := os.Chmod(etcParent, 0o755); err != nil {
		return err
	}
	sb.sysDir = etcParent
	etc := filepath.Join(etcParent, "etc")
	if err := mirrorEtc(etc, sb.etcPatterns()); err != nil {
		return fmt.Errorf("%w: mirroring /etc: %v", ErrUnavailable, err)
	}
	sys := systemMounts(etc, sb.cfg.ReadOnlyPaths)
	var lastErr error
	for _, extra := range [][]string{{"--disable-userns"}, nil} {
		sb.bwrapPrefix = append(append(append([]string{}, base...), extra...), sys...)
		sb.bwrapPrefix = append(sb.bwrapPrefix, "--proc", "/proc", "--dev", "/dev")
		res, err := sb.runTool(context.Background(), []string{"true"}, nil, 10*time.Second)
		if err == nil && res.exitCode == 0 && !res.setupFailed {
			return nil
		}
		lastErr = fmt.Errorf("exit %d: %s", res.exitCode, strings.TrimSpace(string(res.stderr)))
		if err != nil {
			lastErr = err
		}
	}
	return fmt.Errorf("%w: bubblewrap does not work here (%v); %s", ErrUnavailable, lastErr, bwrapHint(lastErr.Error()))
}

// bwrapHint says what to change for the failure bwrap reported. In a
// container, bwrap blames the user-namespace sysctls for what the
// container's seccomp profile refuses, and a /proc it cannot mount comes
// from the container's masked /proc.
func bwrapHint(stderr string) string {
	switch {
	case strings.Contains(stderr, "mount proc"):
		return "the kernel mounts a sandbox's /proc only where a fully visible procfs is mounted: " +
			"in a container, mount one (docker-compose.yml's judge-proc volume) or unmask /proc " +
			"(--security-opt systempaths=unconfined), as a non-root user (docs/operations.md: Containers)"
	case strings.Contains(stderr, "namespace"), strings.Contains(stderr, "Operation not permitted"):
		return "it needs unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 / " +
			"user.max_user_namespaces>0) and, in a container, a seccomp profile that allows namespaces " +
			"and mounts (deploy/seccomp-worker.json; docs/operations.md: Containers)"
	}
	return "it needs unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 / user.max_user_namespaces>0)"
}

func (sb *Sandbox) removeWorkDir() {
	if sb.ownWorkDir {
		RemoveAll(sb.workDir)
		if sb.workLock != nil {
			sb.workLock.Close()
		}
	} else if sb.sysDir != "" {
		RemoveAll(sb.sysDir)
	}
}

// Work directories the sandbox makes for itself are named workDirPrefix +
// random, hold a lock file locked while their sandbox lives, and are swept
// by the next sandbox when their process died without Close (a crash would
// otherwise leave its programs and scratch space in /tmp for good).
const (
	workDirPrefix = "algoitny-judge-"
	workLockName  = ".lock"
	// staleAfter spares the directory of a sandbox that is just starting
	// (made, not yet locked).
	staleAfter = time.Minute
)

func lockWorkDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, workLockName), os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// sweepWorkDirs removes the work directories of sandboxes whose process is
// gone: ours (same uid), locked by nobody, older than staleAfter.
func sweepWorkDirs() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), workDirPrefix+"*"))
	for _, dir := range dirs {
		fi, err := os.Lstat(dir)
		if err != nil || !fi.IsDir() || time.Since(fi.ModTime()) < staleAfter {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Geteuid() {
			continue
		}
		f, err := os.OpenFile(filepath.Join(dir, workLockName), os.O_RDWR|syscall.O_NOFOLLOW, 0)
		if err != nil {
			continue // no lock file: not a work directory (the cache, the uid locks) or an old one
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			RemoveAll(dir) // its sandbox is gone
		}
		f.Close()
	}
}

// runUIDs hands out the per-run uids; shared by every Engine of the process so
// that two sandboxes never give the same uid to concurrent runs. Other processes
// (another judge, another package's tests) are kept apart by a lock file per
// uid: a uid is only used while its lock is held, so the sweep of one run's
// uid can never kill another process's program.
var runUIDs = struct {
	sync.Mutex
	used map[int]bool
}{used: map[int]bool{}}

// maxRunUIDs bounds the uid range above UIDBase.
const maxRunUIDs = 4096

// uidLockDir holds the per-uid lock files (root only); checked once per
// process (ownedDir).
var (
	uidLockDir      = filepath.Join(os.TempDir(), "algoitny-judge-uids")
	checkUIDLockDir = sync.OnceValue(func() error { return ownedDir(uidLockDir, 0o700) })
)

func (sb *Sandbox) acquireRunUID() (int, func(), error) {
	if !sb.switchUID {
		return -1, func() {}, nil
	}
	if err := checkUIDLockDir(); err != nil {
		return 0, nil, err
	}
	runUIDs.Lock()
	defer runUIDs.Unlock()
	for i := 1; i <= maxRunUIDs; i++ {
		uid := sb.cfg.UIDBase + i
		if runUIDs.used[uid] {
			continue
		}
		lock, err := os.OpenFile(filepath.Join(uidLockDir, strconv.Itoa(uid)), os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o600)
		if err != nil {
			return 0, nil, err
		}
		if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			lock.Close() // held by another process
			continue
		}
		runUIDs.used[uid] = true
		return uid, func() {
			runUIDs.Lock()
			delete(runUIDs.used, uid)
			runUIDs.Unlock()
			lock.Close()
		}, nil
	}
	return 0, nil, errors.New("judge: no free sandbox uid")
}

// newScratch creates a fresh scratch directory owned by uid (mode 0700) for an
// unsandboxed run. Sandboxed runs get a size-capped tmpfs instead, which never
// exists on the host: "" is returned for them.
func (sb *Sandbox) newScratch(uid int) (string, error) {
	if sb.sandboxed {
		return "", nil
	}
	dir, err := os.MkdirTemp(sb.workDir, "box-")
	if err != nil {
		return "", err
	}
	if sb.switchUID {
		if err := os.Chown(dir, uid, uid); err != nil {
			RemoveAll(dir)
			return "", err
		}
	}
	return dir, nil
}

// removeScratch removes what newScratch made.
func removeScratch(dir string) {
	if dir != "" {
		RemoveAll(dir)
	}
}

// RemoveAll removes a directory a sandboxed program wrote to. os.RemoveAll never
// follows symlinks; directories the program made unreadable are fixed first.
func RemoveAll(dir string) {
	if os.RemoveAll(dir) == nil {
		return
	}
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	_ = os.RemoveAll(dir)
}

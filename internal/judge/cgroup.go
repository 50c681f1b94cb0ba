package judge

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
)

// CgroupMode says whether runs are accounted with control groups.
type CgroupMode string

const (
	// CgroupAuto (the default) accounts the memory and the processes of
	// every run held in a worker slot's sandbox with a control group of
	// that slot, where the host offers one (cgroup v2 with the memory and
	// pids controllers delegated, or v1 memory and pids hierarchies, and
	// the right to make groups: root); otherwise it falls back to polling.
	CgroupAuto CgroupMode = "auto"
	// CgroupOff never uses control groups: peak memory is the largest
	// process's (rusage) and the process tree's as the watchdog polls it
	// every 50 ms, processes are bounded by RLIMIT_NPROC only.
	CgroupOff CgroupMode = "off"
)

// cgroupSlack is what a slot's group may hold on top of the run's memory
// limit and its scratch space (tmpfs pages are charged to the group) before
// the kernel stops it: page tables, pipes, kernel objects. The hard limit
// is a backstop; the verdict comes from the peak.
const cgroupSlack = 64 << 20

// cgroupRoot is the engine's own group (one per controller hierarchy on
// v1), under which each worker slot gets one.
type cgroupRoot struct {
	v2  bool
	mem string // the group in the memory hierarchy (v1), or the group (v2)
	pid string // the group in the pids hierarchy (v1); == mem on v2
}

var cgroupSeq atomic.Int64

// cgroupDirPrefix names the engine groups: prefix + pid + "-" + sequence.
const cgroupDirPrefix = "algoitny-judge-"

// newCgroupRoot makes the engine's group under the process's own group,
// nested so that limits set on the process (a container's, a service's)
// still hold for its programs. An error says why accounting is not
// available.
func newCgroupRoot() (*cgroupRoot, error) {
	mounts, err := cgroupMounts()
	if err != nil {
		return nil, err
	}
	own, err := ownCgroups()
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("%s%d-%d", cgroupDirPrefix, os.Getpid(), cgroupSeq.Add(1))
	// v2 first, when it has both controllers.
	if m, ok := mounts["cgroup2"]; ok {
		parent := filepath.Join(m, own[""])
		if ctrl, err := os.ReadFile(filepath.Join(parent, "cgroup.controllers")); err == nil &&
			hasWords(string(ctrl), "memory", "pids") {
			sweepCgroups(parent)
			r, err := newCgroupV2(parent, name)
			if err == nil {
				return r, nil
			}
			if _, v1 := mounts["memory"]; !v1 {
				return nil, err
			}
		}
	}
	memMount, okMem := mounts["memory"]
	pidMount, okPid := mounts["pids"]
	if !okMem || !okPid {
		return nil, errors.New("no cgroup v2 with the memory and pids controllers, nor v1 memory and pids hierarchies")
	}
	r := &cgroupRoot{
		mem: filepath.Join(memMount, own["memory"], name),
		pid: filepath.Join(pidMount, own["pids"], name),
	}
	for _, d := range []string{r.mem, r.pid} {
		sweepCgroups(filepath.Dir(d))
		if err := os.Mkdir(d, 0o755); err != nil {
			r.remove()
			return nil, fmt.Errorf("cgroup v1: %v", err)
		}
	}
	return r, nil
}

// newCgroupV2 makes the engine's group under parent and delegates the
// memory and pids controllers to it: possible only where parent has no
// processes of its own (the no-internal-processes rule), e.g. a service
// started in a leaf of a delegated subtree.
func newCgroupV2(parent, name string) (*cgroupRoot, error) {
	if err := writeFile(filepath.Join(parent, "cgroup.subtree_control"), "+memory +pids"); err != nil {
		return nil, fmt.Errorf("cgroup v2: enabling memory and pids below %s: %v (the process must not share its group with its children's; run it in a leaf of a delegated group)", parent, err)
	}
	dir := filepath.Join(parent, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cgroup v2: %v", err)
	}
	if err := writeFile(filepath.Join(dir, "cgroup.subtree_control"), "+memory +pids"); err != nil {
		os.Remove(dir)
		return nil, fmt.Errorf("cgroup v2: %v", err)
	}
	return &cgroupRoot{v2: true, mem: dir, pid: dir}, nil
}

func (r *cgroupRoot) version() string {
	if r.v2 {
		return "v2"
	}
	return "v1"
}

// remove removes the engine's groups; the slots' are removed first.
func (r *cgroupRoot) remove() {
	for _, d := range []string{r.mem, r.pid} {
		if d == "" {
			continue
		}
		subs, _ := filepath.Glob(filepath.Join(d, "slot-*"))
		for _, s := range subs {
			os.Remove(s)
		}
		os.Remove(d)
	}
}

// sweepCgroups removes the empty groups that engines whose process is gone
// left under parent.
func sweepCgroups(parent string) {
	dirs, _ := filepath.Glob(filepath.Join(parent, cgroupDirPrefix+"*"))
	for _, d := range dirs {
		pidStr, _, _ := strings.Cut(strings.TrimPrefix(filepath.Base(d), cgroupDirPrefix), "-")
		pid, err := strconv.Atoi(pidStr)
		if err != nil || pid == os.Getpid() || syscall.Kill(pid, 0) == nil {
			continue
		}
		(&cgroupRoot{mem: d}).remove()
	}
}

// cgroupSlot is one worker slot's group: the slot's sandbox and every run
// in it are in it.
type cgroupSlot struct {
	v2       bool
	mem, pid string
	peak     *os.File // v2: memory.peak, reset through this descriptor

	baseUsage, baseOOM int64
}

func (r *cgroupRoot) slot(i int) (*cgroupSlot, error) {
	s := &cgroupSlot{v2: r.v2, mem: filepath.Join(r.mem, fmt.Sprintf("slot-%d", i)), pid: filepath.Join(r.pid, fmt.Sprintf("slot-%d", i))}
	for _, d := range []string{s.mem, s.pid} {
		if err := os.Mkdir(d, 0o755); err != nil && !os.IsExist(err) {
			return nil, err
		}
	}
	if s.v2 {
		f, err := os.OpenFile(filepath.Join(s.mem, "memory.peak"), os.O_RDWR, 0)
		if err != nil {
			return nil, fmt.Errorf("cgroup v2: memory.peak: %v (kernel 5.19 or later)", err)
		}
		s.peak = f
	}
	return s, nil
}

// join moves process pid (the slot's sandbox, before it runs anything)
// into the slot's group.
func (s *cgroupSlot) join(pid int) error {
	for _, d := range uniq(s.mem, s.pid) {
		if err := writeFile(filepath.Join(d, "cgroup.procs"), strconv.Itoa(pid)); err != nil {
			return err
		}
	}
	return nil
}

// prepare bounds the next run (memory: what the group holds now, plus the
// limit, the scratch space and cgupSlack; tasks: nproc plus the sandbox's
// supervisor) and resets the peak.
func (s *cgroupSlot) prepare(l effLimits) error {
	usage, err := readInt(filepath.Join(s.mem, s.file("memory.usage_in_bytes", "memory.current")))
	if err != nil {
		return err
	}
	limit := satAdd(satAdd(usage, l.memory), satAdd(l.fsize, cgroupSlack))
	if err := writeFile(filepath.Join(s.mem, s.file("memory.limit_in_bytes", "memory.max")), strconv.FormatInt(limit, 10)); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(s.pid, "pids.max"), strconv.Itoa(l.nproc+1)); err != nil {
		return err
	}
	if s.v2 {
		if _, err := s.peak.WriteAt([]byte("reset\n"), 0); err != nil {
			return fmt.Errorf("cgroup v2: resetting memory.peak: %v (kernel 6.12 or later)", err)
		}
	} else if err := writeFile(filepath.Join(s.mem, "memory.max_usage_in_bytes"), "0"); err != nil {
		return err
	}
	s.baseUsage = usage
	s.baseOOM = s.oomKills()
	return nil
}

// result is the run's peak memory above what the group held before it,
// and whether the kernel killed a process of it for want of memory.
func (s *cgroupSlot) result() (peak int64, oomKilled bool, err error) {
	if s.v2 {
		b := make([]byte, 32)
		n, err := s.peak.ReadAt(b, 0)
		if n == 0 {
			return 0, false, err
		}
		peak, err = strconv.ParseInt(strings.TrimSpace(string(b[:n])), 10, 64)
		if err != nil {
			return 0, false, err
		}
	} else if peak, err = readInt(filepath.Join(s.mem, "memory.max_usage_in_bytes")); err != nil {
		return 0, false, err
	}
	return max(peak-s.baseUsage, 0), s.oomKills() > s.baseOOM, nil
}

// oomKills is the group's count of processes the kernel killed at its
// memory limit (v1: memory.oom_control, v2: memory.events).
func (s *cgroupSlot) oomKills() int64 {
	f, err := os.Open(filepath.Join(s.mem, s.file("memory.oom_control", "memory.events")))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), " "); ok && k == "oom_kill" {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

func (s *cgroupSlot) file(v1, v2 string) string {
	if s.v2 {
		return v2
	}
	return v1
}

// remove removes the slot's group (empty once its sandbox has ended).
func (s *cgroupSlot) remove() {
	if s.peak != nil {
		s.peak.Close()
	}
	for _, d := range uniq(s.mem, s.pid) {
		os.Remove(d)
	}
}

// cgroupMounts maps each v1 controller to its hierarchy's mount point,
// and "cgroup2" to the unified hierarchy's.
func cgroupMounts() (map[string]string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// id parent major:minor root mountpoint options [optional...] - fstype source superoptions
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok {
			continue
		}
		pf, sf := strings.Fields(pre), strings.Fields(post)
		if len(pf) < 5 || len(sf) < 3 {
			continue
		}
		switch sf[0] {
		case "cgroup2":
			if _, seen := out["cgroup2"]; !seen {
				out["cgroup2"] = pf[4]
			}
		case "cgroup":
			for _, opt := range strings.Split(sf[2], ",") {
				if opt == "memory" || opt == "pids" {
					out[opt] = pf[4]
				}
			}
		}
	}
	return out, sc.Err()
}

// ownCgroups maps each v1 controller to the process's group in it, and ""
// to its v2 group.
func ownCgroups() (map[string]string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[1] == "" {
			out[""] = parts[2]
		}
		for _, c := range strings.Split(parts[1], ",") {
			out[c] = parts[2]
		}
	}
	return out, nil
}

func hasWords(s string, words ...string) bool {
	fields := strings.Fields(s)
	for _, w := range words {
		found := false
		for _, f := range fields {
			found = found || f == w
		}
		if !found {
			return false
		}
	}
	return true
}

func uniq(a, b string) []string {
	if a == b {
		return []string{a}
	}
	return []string{a, b}
}

func writeFile(path, value string) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString(value)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func readInt(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
}

package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"math"
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

// cgroupRoot is the sandbox's own group (one per controller hierarchy on
// v1), under which each worker slot gets one.
type cgroupRoot struct {
	v2  bool
	mem string // the group in the memory hierarchy (v1), or the group (v2)
	pid string // the group in the pids hierarchy (v1); == mem on v2
}

var cgroupSeq atomic.Int64

// cgroupDirPrefix names the sandbox groups: prefix + pid + "-" + sequence.
const cgroupDirPrefix = "algoitny-judge-"

// newCgroupRoot makes the sandbox's group under the process's own group,
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

// newCgroupV2 makes the sandbox's group under parent and delegates the
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

// remove removes the sandbox's groups; the slots' are removed first.
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

// sweepCgroups removes the empty groups that sandboxes whose process is gone
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
// in it are in it. Its files stay open: a run costs three reads and
// writes (and the limits' writes when they change).
type cgroupSlot struct {
	v2       bool
	mem, pid string
	usage    *os.File // memory.usage_in_bytes / memory.current
	peak     *os.File // memory.max_usage_in_bytes / memory.peak (v2: reset through this descriptor)
	limit    *os.File // memory.limit_in_bytes / memory.max
	pidsMax  *os.File

	lastLimit int64
	lastPids  int
	baseUsage int64
}

func (r *cgroupRoot) slot(i int) (s *cgroupSlot, err error) {
	s = &cgroupSlot{v2: r.v2, mem: filepath.Join(r.mem, fmt.Sprintf("slot-%d", i)), pid: filepath.Join(r.pid, fmt.Sprintf("slot-%d", i))}
	for _, d := range []string{s.mem, s.pid} {
		if err := os.Mkdir(d, 0o755); err != nil && !os.IsExist(err) {
			return nil, err
		}
	}
	defer func() {
		if err != nil {
			s.remove()
		}
	}()
	open := func(dir, v1, v2 string, flag int) (*os.File, error) {
		f, err := os.OpenFile(filepath.Join(dir, s.file(v1, v2)), flag, 0)
		if err != nil && s.v2 && v2 == "memory.peak" {
			err = fmt.Errorf("cgroup v2: %v (memory.peak: kernel 5.19 or later)", err)
		}
		return f, err
	}
	if s.usage, err = open(s.mem, "memory.usage_in_bytes", "memory.current", os.O_RDONLY); err != nil {
		return s, err
	}
	if s.peak, err = open(s.mem, "memory.max_usage_in_bytes", "memory.peak", os.O_RDWR); err != nil {
		return s, err
	}
	if s.limit, err = open(s.mem, "memory.limit_in_bytes", "memory.max", os.O_WRONLY); err != nil {
		return s, err
	}
	if s.pidsMax, err = open(s.pid, "pids.max", "pids.max", os.O_WRONLY); err != nil {
		return s, err
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

// prepare bounds the next run (memory: the limit, the scratch space and
// cgroupSlack, which also covers the sandbox's supervisor and what the
// group's page cache holds — the kernel reclaims that first; tasks: nproc
// plus the supervisor) and resets the peak.
func (s *cgroupSlot) prepare(l Limits) error {
	if limit := satAdd(l.Memory, satAdd(l.FileSize, cgroupSlack)); limit != s.lastLimit {
		if _, err := s.limit.WriteAt([]byte(strconv.FormatInt(limit, 10)), 0); err != nil {
			return err
		}
		s.lastLimit = limit
	}
	if n := l.Processes + 1; n != s.lastPids {
		if _, err := s.pidsMax.WriteAt([]byte(strconv.Itoa(n)), 0); err != nil {
			return err
		}
		s.lastPids = n
	}
	reset := "0"
	if s.v2 {
		reset = "reset\n"
	}
	if _, err := s.peak.WriteAt([]byte(reset), 0); err != nil {
		if s.v2 {
			return fmt.Errorf("cgroup v2: resetting memory.peak: %v (kernel 6.12 or later)", err)
		}
		return err
	}
	usage, err := preadInt(s.usage)
	s.baseUsage = usage
	return err
}

// result is the run's peak memory above what the group held before it.
func (s *cgroupSlot) result() (int64, error) {
	peak, err := preadInt(s.peak)
	return max(peak-s.baseUsage, 0), err
}

func (s *cgroupSlot) file(v1, v2 string) string {
	if s.v2 {
		return v2
	}
	return v1
}

// remove removes the slot's group (empty once its sandbox has ended).
func (s *cgroupSlot) remove() {
	for _, f := range []*os.File{s.usage, s.peak, s.limit, s.pidsMax} {
		if f != nil {
			f.Close()
		}
	}
	for _, d := range uniq(s.mem, s.pid) {
		os.Remove(d)
	}
}

func preadInt(f *os.File) (int64, error) {
	var b [32]byte
	n, err := f.ReadAt(b[:], 0)
	if n == 0 {
		return 0, err
	}
	return strconv.ParseInt(strings.TrimSpace(string(b[:n])), 10, 64)
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

// satAdd is a+b, at most math.MaxInt64.
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

package sandbox

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
	"time"
)

// clockTicks is USER_HZ, fixed at 100 by the Linux ABI for /proc.
const clockTicks = 100

// procInfo is the part of /proc/<pid>/stat the watchdog needs.
type procInfo struct {
	pid, ppid int
	state     byte
	ticks     uint64 // utime+stime+cutime+cstime
	rssPages  int64
	threads   int
}

// readProcStat parses /proc/<pid>/stat. The command name may contain spaces and
// parentheses, so fields are counted from the last ')'.
func readProcStat(pid int) (procInfo, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procInfo{}, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return procInfo{}, false
	}
	f := bytes.Fields(b[i+2:])
	// f[0]=state(3) f[1]=ppid(4) ... f[11]=utime(14) f[12]=stime f[13]=cutime
	// f[14]=cstime f[21]=rss(24)
	if len(f) < 22 {
		return procInfo{}, false
	}
	p := procInfo{pid: pid, state: f[0][0]}
	p.ppid, _ = strconv.Atoi(string(f[1]))
	for _, k := range []int{11, 12, 13, 14} {
		v, _ := strconv.ParseUint(string(f[k]), 10, 64)
		p.ticks += v
	}
	p.rssPages, _ = strconv.ParseInt(string(f[21]), 10, 64)
	p.threads, _ = strconv.Atoi(string(f[17])) // num_threads(20)
	return p, true
}

// anyThreadRunning reports whether a thread of process pid is running or
// waiting for a CPU (state R). The process's own state is its main
// thread's; a JVM, say, computes on other threads.
func anyThreadRunning(p procInfo) bool {
	if p.state == 'R' {
		return true
	}
	if p.threads <= 1 {
		return false
	}
	d, err := os.Open("/proc/" + strconv.Itoa(p.pid) + "/task")
	if err != nil {
		return false
	}
	defer d.Close()
	tids, _ := d.Readdirnames(-1)
	for _, tid := range tids {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(p.pid) + "/task/" + tid + "/stat")
		if err != nil {
			continue
		}
		if i := bytes.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) && b[i+2] == 'R' {
			return true
		}
	}
	return false
}

// listPIDs returns the numeric entries of /proc.
func listPIDs() []int {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	pids := make([]int, 0, len(names))
	for _, n := range names {
		if n[0] < '0' || n[0] > '9' {
			continue
		}
		if pid, err := strconv.Atoi(n); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// treeUsage sums CPU time and resident memory over root and all its live
// descendants. Children that were already reaped are included through their
// parent's cutime/cstime.
func treeUsage(root int) (cpu time.Duration, rss int64) {
	u := sampleTree(root, false)
	return u.cpu, u.rss
}

// treeSample is what one look at a process tree saw.
type treeSample struct {
	cpu time.Duration
	rss int64
	// running is set when a thread of the tree was running or ready to run
	// (state R), as opposed to sleeping or blocked: asked for only.
	running bool
}

// sampleTree is treeUsage, and with running also whether any thread of the
// tree is running or runnable.
func sampleTree(root int, running bool) treeSample {
	infos := map[int]procInfo{}
	children := map[int][]int{}
	for _, pid := range listPIDs() {
		p, ok := readProcStat(pid)
		if !ok {
			continue
		}
		infos[pid] = p
		children[p.ppid] = append(children[p.ppid], pid)
	}
	var out treeSample
	var ticks uint64
	var pages int64
	stack := []int{root}
	for len(stack) > 0 {
		pid := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		p, ok := infos[pid]
		if !ok {
			continue
		}
		ticks += p.ticks
		if p.state != 'Z' {
			pages += p.rssPages
			if running && !out.running {
				out.running = anyThreadRunning(p)
			}
		}
		stack = append(stack, children[pid]...)
	}
	out.cpu, out.rss = time.Duration(ticks)*(time.Second/clockTicks), pages*int64(os.Getpagesize())
	return out
}

// processesOf returns the live (non-zombie) processes whose owner is uid.
func processesOf(uid int) []int {
	var out []int
	for _, pid := range listPIDs() {
		fi, err := os.Lstat("/proc/" + strconv.Itoa(pid))
		if err != nil {
			continue
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok || int(st.Uid) != uid {
			continue
		}
		if p, ok := readProcStat(pid); ok && p.state == 'Z' {
			continue
		}
		out = append(out, pid)
	}
	return out
}

// killUID SIGKILLs every process owned by uid until none is left (or a second
// has passed). The sandbox gives each concurrent run its own uid, so this is the
// "kill the whole tree" of last resort; it reports how many it had to kill.
func killUID(uid int) int {
	killed := 0
	deadline := time.Now().Add(time.Second)
	for {
		pids := processesOf(uid)
		if len(pids) == 0 || time.Now().After(deadline) {
			return killed
		}
		for _, pid := range pids {
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed++
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
}

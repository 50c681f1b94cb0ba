package judge

import (
	"fmt"
	"math"
	"time"

	"github.com/algoitny/api/internal/judge/sandbox"
)

// Limits are the resource limits of one run (one test). A zero field takes the
// value from DefaultLimits; a negative one is invalid (ErrInvalidInput). The
// language's own allowance (Language.ExtraTime, Language.ExtraMemoryBytes,
// Language.ExtraProcesses) is added on top by the engine, so a problem states one
// set of limits for every language.
type Limits struct {
	// CPUTime is the CPU time (user+system, all threads and children) the program
	// may use. It alone decides TIME_LIMIT_EXCEEDED for busy programs, so runs
	// executing in parallel do not distort each other's verdicts.
	CPUTime time.Duration
	// WallTime is the real-time limit, a safety net for programs that sleep or
	// block. It is raised to at least 2×CPUTime; zero means 2×CPUTime + 1s.
	WallTime time.Duration
	// MemoryBytes is the peak memory (resident set) allowed. How it is enforced
	// depends on the language (Language.MemoryPolicy).
	MemoryBytes int64
	// OutputBytes is the maximum size of standard output.
	OutputBytes int64
	// FileSizeBytes is the maximum size of any file the program writes in its
	// scratch directory (RLIMIT_FSIZE), and in the sandbox also the size of the
	// scratch directory itself (a tmpfs).
	FileSizeBytes int64
	// MaxProcesses is the number of processes and threads the program itself may
	// have, itself included (1 = no fork, no threads). The runtime's own threads
	// (JVM, Go, Node) are allowed on top of it. With 1, the default, the
	// program may start no process at all in any language: the runtime's
	// thread allowance (RLIMIT_NPROC counts threads and processes alike) is
	// for threads only, a system call filter refuses every other clone,
	// fork and vfork (EAGAIN, as at the process limit).
	MaxProcesses int
	// MaxThreads is the number of threads the program may start besides
	// those MaxProcesses allows, never processes: with MaxProcesses 1 the
	// system call filter still refuses every clone that does not make a
	// thread. Problem authors' programs get some (DefaultCheckerLimits: an
	// interactor that writes from one thread and reads from another);
	// submissions none unless their limits say so.
	MaxThreads int
}

// DefaultLimits returns the limits used for zero fields: 2s CPU, 256 MiB memory,
// 64 MiB output, 16 MiB files, a single process. They exist so that callers can
// leave fields unset; problems normally state CPUTime and MemoryBytes.
func DefaultLimits() Limits {
	return Limits{
		CPUTime:       2 * time.Second,
		MemoryBytes:   256 << 20,
		OutputBytes:   64 << 20,
		FileSizeBytes: 16 << 20,
		MaxProcesses:  1,
	}
}

// withDefaults fills zero fields from def and rejects negative ones.
func (l Limits) withDefaults(def Limits) (Limits, error) {
	if l.CPUTime < 0 || l.WallTime < 0 || l.MemoryBytes < 0 || l.OutputBytes < 0 ||
		l.FileSizeBytes < 0 || l.MaxProcesses < 0 || l.MaxThreads < 0 {
		return l, fmt.Errorf("%w: negative limit in %+v", ErrInvalidInput, l)
	}
	if l.CPUTime == 0 {
		l.CPUTime = def.CPUTime
	}
	if l.MemoryBytes == 0 {
		l.MemoryBytes = def.MemoryBytes
	}
	if l.OutputBytes == 0 {
		l.OutputBytes = def.OutputBytes
	}
	if l.FileSizeBytes == 0 {
		l.FileSizeBytes = def.FileSizeBytes
	}
	if l.MaxProcesses == 0 {
		l.MaxProcesses = def.MaxProcesses
	}
	if l.MaxThreads == 0 {
		l.MaxThreads = def.MaxThreads
	}
	if l.WallTime == 0 {
		l.WallTime = def.WallTime
	}
	return l, nil
}

// authorMinCPU is the least CPU time a custom checker or an interactor
// gets per test, however short the test's own limit: reading and judging
// an output may cost more than producing it, and an interpreter's start
// alone takes tens of milliseconds.
const authorMinCPU = time.Second

// authorLimits are the limits of a problem author's program — a custom
// checker, an interactor — for one test whose limits are test (defaults
// applied). Its CPU time is the test's, at least authorMinCPU and at most
// Config.CheckerLimits.CPUTime; its wall time follows from it as a
// program's does (2×CPU + 1 s), at most Config.CheckerLimits.WallTime when
// that is set; memory, output, files and processes are
// Config.CheckerLimits'. So an author's program that hangs or spins costs
// about what the test may cost, not a fixed ceiling per test.
func (e *Engine) authorLimits(test Limits) Limits {
	c := e.cfg.CheckerLimits
	lim := c
	lim.CPUTime = min(max(test.CPUTime, authorMinCPU), c.CPUTime)
	lim.WallTime = 0
	if c.WallTime > 0 {
		lim.WallTime = min(c.WallTime, 2*lim.CPUTime+time.Second)
	}
	return lim
}

// effLimits are the limits actually enforced for one run of one language:
// what the sandbox holds the run to, and the problem's own limits, which
// messages show apart from the language's allowance.
type effLimits struct {
	sandbox.Limits
	userCPU    time.Duration // the problem's CPU limit alone
	userMemory int64         // the problem's limit alone (for -Xmx, GOMEMLIMIT, ...)
}

// effective combines the problem's limits with the language's allowances:
// the wall time (at least 2×CPU), the memory threshold (limit +
// allowance), the rlimits of the language's MemoryPolicy, the processes
// (the program's and the runtime's threads; no process of its own with
// MaxProcesses 1).
func (l Limits) effective(lang Language) effLimits {
	cpu := l.CPUTime
	if lang.TimeFactor > 0 {
		cpu = time.Duration(float64(cpu) * lang.TimeFactor)
	}
	cpu += lang.ExtraTime
	wall := l.WallTime
	if wall == 0 {
		wall = 2*cpu + time.Second
	}
	if wall < 2*cpu {
		wall = 2 * cpu
	}
	mem := l.MemoryBytes + lang.ExtraMemoryBytes
	e := effLimits{
		Limits: sandbox.Limits{
			CPU: cpu, Wall: wall, Memory: mem, Output: l.OutputBytes, FileSize: l.FileSizeBytes,
			Processes: l.MaxProcesses + l.MaxThreads + lang.ExtraProcesses, NoFork: l.MaxProcesses <= 1,
		},
		userCPU:    l.CPUTime,
		userMemory: l.MemoryBytes,
	}
	switch lang.MemoryPolicy {
	case MemoryAddressSpace:
		e.AddressSpace = satAdd(mem, lang.AddressSpaceSlackBytes)
		// Deep recursion is common in contest code: the main stack may use the
		// whole memory limit. Not for runtimes with threads, whose default
		// pthread stack size is RLIMIT_STACK.
		e.Stack = mem
	case MemoryDataSegment:
		e.Data = satAdd(mem, lang.DataSlackBytes)
		if lang.AddressSpaceSlackBytes > 0 {
			e.AddressSpace = satAdd(mem, lang.AddressSpaceSlackBytes)
		}
	case MemoryResident: // only the watchdog's poll of the resident set
		if lang.AddressSpaceSlackBytes > 0 {
			e.AddressSpace = satAdd(mem, lang.AddressSpaceSlackBytes)
		}
	}
	return e
}

func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

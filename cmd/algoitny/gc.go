package main

import (
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
)

// gcPercent is the server's GOGC when the environment sets none. A server
// keeps a few to a few hundred MB live (caches, the schema, clients), and
// at the runtime's default of 100 the collector marks all of it every time
// the heap grows by as much again: for `{ __typename }` that was 8–10 % of
// the server's CPU, about three times what a bare gqlgen with a heap under
// the runtime's 4 MB floor spends per request (issue 18, docs/benchmarks.md).
// At 400 the heap may reach five times what is live; memoryLimit bounds it
// where the container's memory is limited.
const gcPercent = 400

// tuneGC applies gcPercent unless GOGC is set, and a soft memory limit of
// 90 % of the cgroup's memory limit unless GOMEMLIMIT is set (the runtime
// then collects earlier rather than outgrow the container). It returns
// what it set (for the log): the GC percent, -1 when GOGC decided, and the
// limit in bytes, 0 when none was set.
func tuneGC(cgroupRoot string) (percent int, limit int64) {
	percent = -1
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(gcPercent)
		percent = gcPercent
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		if max := cgroupMemoryLimit(cgroupRoot); max > 0 {
			limit = max / 10 * 9
			debug.SetMemoryLimit(limit)
		}
	}
	return percent, limit
}

// cgroupMemoryLimit reads the memory limit of this process's cgroup under
// root ("/sys/fs/cgroup"): v2's memory.max, or v1's memory.limit_in_bytes;
// 0 when there is none (unlimited, or no cgroup file to read).
func cgroupMemoryLimit(root string) int64 {
	for _, f := range []string{"memory.max", "memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			continue
		}
		v := strings.TrimSpace(string(b))
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 || n >= math.MaxInt64/2 { // "max", or v1's "unlimited" (a page-rounded MaxInt64)
			return 0
		}
		return n
	}
	return 0
}

// tuneGC applies the server's GC settings (tuneGC) and logs them.
func (m *Main) tuneGC() {
	percent, limit := tuneGC("/sys/fs/cgroup")
	m.Logger.Info("garbage collector", "gogc", percent, "memoryLimit", limit)
}

package judge

import (
	"strconv"
	"strings"
	"time"
)

// MemoryPolicy says how Limits.MemoryBytes is enforced for a language. Runtimes
// differ: native programs live happily under an address-space limit, while the
// JVM, Go and V8 reserve gigabytes of virtual memory they never touch, so an
// RLIMIT_AS equal to the memory limit would kill them at start-up.
type MemoryPolicy int

const (
	// MemoryAddressSpace sets RLIMIT_AS to the limit (+ allowance + slack). Exact
	// and cheap; used for C, C++ and Python.
	MemoryAddressSpace MemoryPolicy = iota
	// MemoryDataSegment sets RLIMIT_DATA (private writable memory, which excludes
	// PROT_NONE reservations) to the limit (+ allowance + DataSlackBytes) and a
	// generous RLIMIT_AS as a backstop; used for Go (plus GOMEMLIMIT) and
	// JavaScript (plus --max-old-space-size).
	MemoryDataSegment
	// MemoryResident relies on the runtime's own heap limit (java -Xmx) and on
	// the engine polling the resident set of the process tree, killing it over
	// the limit, with a generous RLIMIT_AS as a backstop; used for Java, whose
	// thread stacks (-Xss64m) make RLIMIT_DATA meaningless.
	MemoryResident
)

// Language describes how to build and run one programming language. The
// engine's table comes from data: DefaultLanguages reads the built-in
// languages.json, LoadLanguages an operator's file on top of it
// (langfile.go documents the format), and Config.Languages can replace the
// table. Commands are argument vectors, never shell strings.
//
// Placeholders expanded in Compile, Run and Env: {dir} is the directory holding
// the source and the build output (read-only while running), {cache} the
// language's persistent cache directory (compilation only), {memory_mb} and
// {memory_bytes} the problem's memory limit (without the language allowance).
type Language struct {
	// ID is the stable identifier used in submissions: python, c, cpp, java, go,
	// javascript, ...
	ID string
	// Name is a human-readable name with the standard, e.g. "C++17 (g++ -O2)".
	Name string
	// SourceFile is the file name the source is saved under, e.g.
	// "main.cpp", or "{main}.java": {main} is the program's entry point
	// (Engine.CompileFiles; "Main" otherwise), which Compile and Run may
	// name too.
	SourceFile string
	// Compile is the build command, run in {dir}; nil when the language has no
	// build step. Interpreted languages use it for a syntax check so that syntax
	// errors are COMPILATION_ERROR rather than RUNTIME_ERROR.
	Compile []string
	// Run is the command that runs the built program; the working directory is a
	// fresh, writable scratch directory.
	Run []string
	// Env holds extra KEY=VALUE pairs for compiling and running, on top of the
	// engine's minimal fixed environment.
	Env []string
	// VersionArgs prints the toolchain version; it is also how availability is
	// detected. Defaults to the first tool with --version.
	VersionArgs []string
	// CacheDir names a persistent, judge-owned directory under Config.CacheDir
	// that is mounted writable at {cache} while compiling (Go's build cache).
	CacheDir string
	// ExtraTime is added to Limits.CPUTime for this language (JVM start-up).
	ExtraTime time.Duration
	// TimeFactor multiplies Limits.CPUTime for this language before ExtraTime
	// is added; zero means 1 (every built-in language: a problem states one
	// time limit for all).
	TimeFactor float64
	// ExtraMemoryBytes is added to Limits.MemoryBytes, both for enforcement and
	// for the MEMORY_LIMIT_EXCEEDED verdict (the runtime's own footprint).
	ExtraMemoryBytes int64
	// ExtraProcesses is added to Limits.MaxProcesses for the runtime's
	// threads (threads only: see Limits.MaxProcesses).
	ExtraProcesses int
	// MemoryPolicy selects how the memory limit is enforced.
	MemoryPolicy MemoryPolicy
	// AddressSpaceSlackBytes is added to the RLIMIT_AS of the language (shared
	// libraries for native code, reservations for managed runtimes). Zero with
	// MemoryDataSegment or MemoryResident means no RLIMIT_AS.
	AddressSpaceSlackBytes int64
	// DataSlackBytes is added to RLIMIT_DATA under MemoryDataSegment.
	DataSlackBytes int64
	// OutOfMemoryMarkers are substrings of standard error that mean the program
	// died because an allocation failed; such a death is MEMORY_LIMIT_EXCEEDED.
	OutOfMemoryMarkers []string
	// SandboxEtc are entries of /etc (glob patterns, e.g. "mono") the
	// language's tools read, mirrored into every sandbox's /etc beside the
	// engine's own allowlist; the rest of /etc stays out of the sandbox.
	SandboxEtc []string
	// SandboxPaths are host directories outside /usr (absolute) the
	// language's toolchain lives in, bound read-only into every sandbox,
	// like Config.ReadOnlyPaths.
	SandboxPaths []string
	// Extensions are the file name extensions of its source files (".cpp"),
	// for LanguageForFile; the first language of the table to claim one
	// takes it.
	Extensions []string
	// Problemtools is the key of the language in problemtools' language
	// table that this language judges ("cpp", "python3"), for
	// DetectLanguage; empty for none.
	Problemtools string
	// Warm is a program reading two integers and printing their sum,
	// compiled and run by Engine.Warm; empty: the language is not warmed.
	Warm string

	// Available reports whether the toolchain works on this machine, inside the
	// sandbox. Filled in by Engine.Languages.
	Available bool
	// Version is the first line the toolchain printed for VersionArgs.
	Version string
	// Reason explains why the language is unavailable.
	Reason string
}

// sourceFile is the file the source is saved under for the entry point main.
func (l Language) sourceFile(main string) string {
	return strings.ReplaceAll(l.SourceFile, "{main}", main)
}

// expand replaces the placeholders of one command argument or env entry.
func expand(s string, vars map[string]string) string {
	if !strings.Contains(s, "{") {
		return s
	}
	for k, v := range vars {
		s = strings.ReplaceAll(s, "{"+k+"}", v)
	}
	return s
}

func expandAll(in []string, vars map[string]string) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = expand(s, vars)
	}
	return out
}

func memoryVars(userMemory int64) map[string]string {
	mb := userMemory >> 20
	if mb < 1 {
		mb = 1
	}
	return map[string]string{
		"memory_mb":    strconv.FormatInt(mb, 10),
		"memory_bytes": strconv.FormatInt(userMemory, 10),
	}
}

// versionArgs returns the command that prints the toolchain version.
func (l Language) versionArgs() []string {
	if len(l.VersionArgs) > 0 {
		return l.VersionArgs
	}
	tool := l.tools()[0]
	return []string{tool, "--version"}
}

// tools returns the executables the language needs (compiler first).
func (l Language) tools() []string {
	var out []string
	for _, cmd := range [][]string{l.Compile, l.Run} {
		if len(cmd) == 0 || strings.Contains(cmd[0], "{") {
			continue
		}
		seen := false
		for _, t := range out {
			seen = seen || t == cmd[0]
		}
		if !seen {
			out = append(out, cmd[0])
		}
	}
	return out
}

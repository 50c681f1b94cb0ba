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

// Language describes how to build and run one programming language. The engine
// ships DefaultLanguages; Config.Languages can replace them (another compiler
// version, extra flags). Commands are argument vectors, never shell strings.
//
// Placeholders expanded in Compile, Run and Env: {dir} is the directory holding
// the source and the build output (read-only while running), {cache} the
// language's persistent cache directory (compilation only), {memory_mb} and
// {memory_bytes} the problem's memory limit (without the language allowance).
type Language struct {
	// ID is the stable identifier used in submissions: python, c, cpp, java, go,
	// javascript.
	ID string
	// Name is a human-readable name with the standard, e.g. "C++17 (g++ -O2)".
	Name string
	// SourceFile is the file name the source is saved under, e.g. "Main.java".
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
	// ExtraMemoryBytes is added to Limits.MemoryBytes, both for enforcement and
	// for the MEMORY_LIMIT_EXCEEDED verdict (the runtime's own footprint).
	ExtraMemoryBytes int64
	// ExtraProcesses is added to Limits.MaxProcesses for the runtime's threads.
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

	// Available reports whether the toolchain works on this machine, inside the
	// sandbox. Filled in by Engine.Languages.
	Available bool
	// Version is the first line the toolchain printed for VersionArgs.
	Version string
	// Reason explains why the language is unavailable.
	Reason string
}

// DefaultLanguages returns the built-in language table: Python 3, C17, C++17,
// Java 17, Go, JavaScript (Node), Rust and Kotlin. The memory choices are
// documented on each entry and in the package documentation. Each call
// returns a new table.
func DefaultLanguages() []Language {
	return []Language{pythonLanguage(), cLanguage(), cppLanguage(), javaLanguage(), goLanguage(), javascriptLanguage(),
		rustLanguage(), kotlinLanguage()}
}

// Sizes in the language table.
const (
	mib = 1 << 20
	gib = 1 << 30
)

// pythonLanguage returns the entry of Python 3: py_compile checks the
// syntax, the interpreter runs the file.
func pythonLanguage() Language {
	return Language{
		ID: "python", Name: "Python 3", SourceFile: "main.py",
		// py_compile reports syntax errors as a compilation error.
		Compile: []string{"python3", "-m", "py_compile", "main.py"},
		Run:     []string{"python3", "{dir}/main.py"},
		Env:     []string{"PYTHONDONTWRITEBYTECODE=1", "PYTHONIOENCODING=utf-8", "PYTHONHASHSEED=0"},
		// The interpreter itself needs ~10 MiB resident, ~30 MiB mapped.
		ExtraMemoryBytes:       16 * mib,
		MemoryPolicy:           MemoryAddressSpace,
		AddressSpaceSlackBytes: 32 * mib,
		OutOfMemoryMarkers:     []string{"MemoryError", "Cannot allocate memory"},
	}
}

// cLanguage returns the entry of C17 with gcc -O2.
func cLanguage() Language {
	return nativeLanguage("c", "C17 (gcc -O2)", "main.c",
		[]string{"gcc", "-std=c17", "-O2", "-pipe", "-DONLINE_JUDGE", "-o", "main", "main.c", "-lm"})
}

// cppLanguage returns the entry of C++17 with g++ -O2.
func cppLanguage() Language {
	return nativeLanguage("cpp", "C++17 (g++ -O2)", "main.cpp",
		[]string{"g++", "-std=c++17", "-O2", "-pipe", "-DONLINE_JUDGE", "-o", "main", "main.cpp"})
}

// nativeLanguage returns the entry of a language compiled to a native
// executable (C, C++): its address space bounded with a little slack, and
// the messages a failed allocation prints.
func nativeLanguage(id, name, sourceFile string, compile []string) Language {
	return Language{
		ID: id, Name: name, SourceFile: sourceFile,
		Compile:                compile,
		Run:                    []string{"{dir}/main"},
		MemoryPolicy:           MemoryAddressSpace,
		AddressSpaceSlackBytes: 16 * mib,
		OutOfMemoryMarkers:     []string{"std::bad_alloc", "Cannot allocate memory", "out of memory"},
	}
}

// javaLanguage returns the entry of Java 17: the JVM's heap is the
// problem's limit, its own footprint an allowance.
func javaLanguage() Language {
	return jvmLanguage("java", "Java 17", "Main.java",
		[]string{"javac", "-J-Xmx512m", "-J-XX:+UseSerialGC", "-J-XX:TieredStopAtLevel=1",
			"-encoding", "UTF-8", "-d", ".", "Main.java"},
		[]string{"javac", "-version"}, "-cp", "{dir}", "Main")
}

// kotlinLanguage returns the entry of Kotlin (Debian's kotlinc 1.3) on the
// JVM of Java's entry: the program is built into a jar with the Kotlin
// runtime, run like a Java program. kotlinc is slow to start (a JVM
// loading the compiler: seconds of CPU time), well within CompileLimits.
func kotlinLanguage() Language {
	l := jvmLanguage("kotlin", "Kotlin 1.3 (JVM)", "main.kt",
		[]string{"kotlinc", "-nowarn", "main.kt", "-include-runtime", "-d", "main.jar"},
		[]string{"kotlinc", "-J-XX:-PrintWarnings", "-version"}, "-jar", "{dir}/main.jar")
	// kotlinc's script runs java with JAVA_OPTS: a bounded heap, as javac's,
	// and without the JVM's warning about the -noverify it passes.
	l.Env = []string{"JAVA_OPTS=-Xmx512m -Xms32m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -XX:-PrintWarnings"}
	return l
}

// jvmLanguage returns the entry of a language run by the JVM (Java,
// Kotlin): -Xmx is the problem's limit; the JVM's own footprint
// (metaspace, code cache, stacks) is the ExtraMemoryBytes allowance. One
// "processor" keeps GC and JIT threads (and their CPU time) bounded on big
// hosts. main names the class path and the program to run.
func jvmLanguage(id, name, sourceFile string, compile, version []string, main ...string) Language {
	return Language{
		ID: id, Name: name, SourceFile: sourceFile,
		Compile: compile,
		Run: append([]string{"java", "-Xmx{memory_mb}m", "-Xss64m", "-XX:+UseSerialGC",
			"-XX:ActiveProcessorCount=1", "-XX:-UsePerfData", "-Xshare:auto"}, main...),
		VersionArgs:            version,
		ExtraTime:              time.Second,
		ExtraMemoryBytes:       96 * mib,
		ExtraProcesses:         31,
		MemoryPolicy:           MemoryResident,
		AddressSpaceSlackBytes: 8 * gib,
		OutOfMemoryMarkers:     []string{"java.lang.OutOfMemoryError"},
	}
}

// rustLanguage returns the entry of Rust 2021 with rustc -O (Debian's
// rustc): a native executable like C's. A failed allocation aborts with
// "memory allocation of N bytes failed".
func rustLanguage() Language {
	l := nativeLanguage("rust", "Rust 2021 (rustc -O)", "main.rs",
		[]string{"rustc", "--edition=2021", "-O", "--cfg", "ONLINE_JUDGE", "-o", "main", "main.rs"})
	l.OutOfMemoryMarkers = append(l.OutOfMemoryMarkers, "memory allocation of")
	return l
}

// goLanguage returns the entry of Go: the build cache is kept between
// compilations, the toolchain offline.
func goLanguage() Language {
	return Language{
		ID: "go", Name: "Go", SourceFile: "main.go",
		Compile:     []string{"go", "build", "-o", "main", "main.go"},
		Run:         []string{"{dir}/main"},
		VersionArgs: []string{"go", "version"},
		Env: []string{"GOCACHE={cache}", "GOTOOLCHAIN=local", "GOPROXY=off",
			"GOENV=off", "GOTELEMETRY=off", "GOWORK=off", "GOFLAGS=", "CGO_ENABLED=0",
			"GOMAXPROCS=1", "GOMEMLIMIT={memory_bytes}"},
		CacheDir:         "go-build",
		ExtraMemoryBytes: 8 * mib,
		ExtraProcesses:   15,
		MemoryPolicy:     MemoryDataSegment,
		// The runtime maps ~60 MiB of (mostly untouched) writable metadata and
		// reserves address space in PROT_NONE arenas.
		DataSlackBytes:         96 * mib,
		AddressSpaceSlackBytes: 2 * gib,
		OutOfMemoryMarkers:     []string{"runtime: out of memory", "cannot allocate memory"},
	}
}

// javascriptLanguage returns the entry of JavaScript on Node.js, its old
// space bounded by the limit.
func javascriptLanguage() Language {
	return Language{
		ID: "javascript", Name: "JavaScript (Node.js)", SourceFile: "main.js",
		Compile: []string{"node", "--check", "main.js"},
		Run: []string{"node", "--max-old-space-size={memory_mb}", "--v8-pool-size=1",
			"{dir}/main.js"},
		Env:                    []string{"UV_THREADPOOL_SIZE=1", "NODE_OPTIONS="},
		ExtraMemoryBytes:       64 * mib,
		ExtraProcesses:         15,
		MemoryPolicy:           MemoryDataSegment,
		DataSlackBytes:         128 * mib,
		AddressSpaceSlackBytes: 8 * gib,
		OutOfMemoryMarkers:     []string{"heap out of memory", "Allocation failed", "Cannot allocate memory"},
	}
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

package problempkg

import (
	"fmt"
	"time"

	"github.com/algoitny/api/internal/judge"
)

// Format is the layout a package was written in.
type Format string

// The formats Open reads.
const (
	// FormatICPC is the ICPC / Kattis problem package format (problem.yaml,
	// data/sample and data/secret, input_validators, output_validators or
	// output_validator, submissions), in its legacy, 2023-07 and 2025-09
	// versions.
	FormatICPC Format = "icpc"
	// FormatPolygon is a Codeforces Polygon package (problem.xml, files/,
	// solutions/, tests/).
	FormatPolygon Format = "polygon"
)

// Package is a problem package read from disk: everything the judge needs
// to run its tests and its example submissions, in the judge's terms.
type Package struct {
	Format Format
	// Root is the directory the package was read from (a zip is unpacked
	// into a temporary directory, removed by Close).
	Root string
	// Name is the package's short name (its directory or Polygon's
	// short-name): a problem id.
	Name string
	// Title is the problem's name in English when the package has it, else
	// in its first language, else Name.
	Title string
	// Version is the ICPC problem_format_version ("legacy" when absent), or
	// Polygon's revision.
	Version string

	// Interactive says the output validator (ICPC) or interactor (Polygon)
	// talks with the submission.
	Interactive bool
	// Scoring says submissions get a score (ICPC "scoring" type; a Polygon
	// package whose tests or groups carry points).
	Scoring bool
	// MultiPass says a submission may run several times on a test (ICPC
	// multi-pass type): again with the nextpass.in its output validator
	// writes, at most Limits.ValidationPasses times.
	MultiPass bool

	Limits Limits

	// Tests are the package's test cases in judging order: samples first,
	// then secret tests in lexicographic order of their names (ICPC), or in
	// Polygon's numbering.
	Tests []Test
	// Groups partition the scored tests (ICPC test data groups, Polygon
	// groups); empty when the package has none.
	Groups []Group
	// MaxScore is the best score a submission can get (scoring packages).
	MaxScore float64
	// Data is an ICPC package's test data tree, which decides a
	// submission's verdict and score (nil for Polygon); Scoring2025 says
	// its groups score as the 2025-09 format defines (max_score,
	// score_aggregation, require_pass) rather than by the legacy grader.
	Data        *DataGroup
	Scoring2025 bool

	// Checker judges a test's output (unused when Interactive: the
	// Interactor decides).
	Checker Checker
	// CheckerPoints is how a testlib checker's or interactor's points
	// (quitp) are read: Polygon's are the test's own points (Test.Points),
	// or a percentage of the test (treat-points-from-checker-as-percent);
	// the default, a fraction of the test, otherwise. ICPC validators'
	// score multipliers are fractions whatever it says.
	CheckerPoints judge.PointsScale
	// Interactor is the interactive output validator or Polygon interactor.
	Interactor *Program
	// InputValidators check every test's input.
	InputValidators []Program
	// Generators are Polygon's executables that tests are generated with,
	// by name (the first word of a test's generation command).
	Generators map[string]*Program
	// Resources are Polygon's files/ resources (testlib.h, headers) that
	// programs of the package compile with, by base name.
	Resources map[string][]byte

	// Submissions are the example solutions with what each must get.
	Submissions []Submission
	// Constants are problem.yaml's constants (2025-09): name → variant
	// ("value" and the others) → text; Includes the files of include/ by
	// language code ("default" for the rest) — constants.go.
	Constants map[string]map[string]string
	Includes  map[string]map[string][]byte
	// Skipped lists what was found but cannot be run here, with why.
	Skipped []Skipped
	// Warnings are things a setter should know that do not stop the
	// package from being used.
	Warnings []string

	cleanup func()
}

// Close removes what Open unpacked.
func (p *Package) Close() error {
	if p.cleanup != nil {
		p.cleanup()
		p.cleanup = nil
	}
	return nil
}

// Limits are the package's resource limits for submissions.
type Limits struct {
	// TimeLimit is the CPU time per test; zero when the package leaves it
	// to be inferred from its accepted submissions (ICPC).
	TimeLimit time.Duration
	// ACToTimeLimit is how many times the slowest accepted submission the
	// inferred time limit is (ICPC time_multiplier / ac_to_time_limit).
	ACToTimeLimit float64
	// TimeLimitToTLE is how many times the time limit a
	// time_limit_exceeded submission must take (ICPC time_safety_margin /
	// time_limit_to_tle).
	TimeLimitToTLE float64
	// TimeResolution is what an inferred time limit is rounded up to a
	// multiple of (ICPC 2025-09 time_resolution; 1 s otherwise).
	TimeResolution time.Duration
	// MemoryMB is the memory limit (0: the judge's default).
	MemoryMB int
	// OutputMB bounds a submission's output (0: the judge's default).
	OutputMB int
	// ValidationPasses is the most passes of a multi-pass problem (ICPC
	// limits.validation_passes, at least 2; 2 when absent).
	ValidationPasses int
}

// Test is one test case.
type Test struct {
	// Name identifies the test: its path under data/ without extension
	// (ICPC, e.g. "secret/group1/03") or its number (Polygon, "03").
	Name string
	// Input and Answer are files under Root ("" when a Polygon test is
	// generated and not shipped: Generation then says how to make it).
	Input, Answer string
	// Sample says the test is shown to solvers (data/sample, Polygon's
	// sample="true").
	Sample bool
	// Group is the name of the Group the test belongs to ("" for none).
	Group string
	// Points is the test's own score (Polygon each-test points; ICPC
	// per-test accept_score); 0 when the group decides.
	Points float64
	// OutputValidatorArgs are passed to the checker or interactor after
	// its three standard arguments (ICPC).
	OutputValidatorArgs []string
	// InputValidatorArgs are passed to each input validator, by validator
	// name ("" for every validator).
	InputValidatorArgs map[string][]string
	// Generation is how a Polygon test was generated; nil for a manual one.
	Generation *Generation
}

// Generation is a test produced by running a generator: `name args... >
// test`.
type Generation struct {
	// Generator names a Package.Generators entry.
	Generator string
	Args      []string
	// Command is the line as the package wrote it, for messages.
	Command string
}

// ScoreMode is how a group's tests make its score.
type ScoreMode string

// The aggregation modes.
const (
	// ScoreAll gives the group's points when every test is accepted.
	ScoreAll ScoreMode = "all"
	// ScoreSum gives each accepted test its share (the group's points split
	// evenly, or the test's own points).
	ScoreSum ScoreMode = "sum"
	// ScoreMin gives the group's points times the smallest fraction any of
	// its tests earned (ICPC min aggregation).
	ScoreMin ScoreMode = "min"
)

// Group is a scored group of tests.
type Group struct {
	Name string
	// Points is what the group is worth.
	Points float64
	Mode   ScoreMode
	// DependsOn names groups whose tests must all be accepted for this one
	// to score.
	DependsOn []string
}

// CheckerKind is how outputs are compared.
type CheckerKind string

// The checker kinds.
const (
	// CheckDefault is ICPC's default output validator: tokens compared
	// case-insensitively unless CaseSensitive, whitespace ignored unless
	// SpaceSensitive, numbers within a tolerance when one is set.
	CheckDefault CheckerKind = "default"
	// CheckICPC runs an ICPC output validator program (exit 42 accepted, 43
	// wrong answer, a feedback directory).
	CheckICPC CheckerKind = "icpc"
	// CheckTestlib runs a testlib checker (exit 0 OK, 1 WA, 2 PE, 3 FAIL, 7
	// points).
	CheckTestlib CheckerKind = "testlib"
)

// Checker says how a test's output is judged.
type Checker struct {
	Kind CheckerKind
	// CaseSensitive, SpaceSensitive, AbsTolerance and RelTolerance are the
	// default validator's flags (a tolerance of 0 is unset).
	CaseSensitive, SpaceSensitive bool
	AbsTolerance, RelTolerance    float64
	// Program is the custom checker (CheckICPC, CheckTestlib).
	Program *Program
	// Standard names a Polygon standard checker ("std::ncmp.cpp"), for
	// messages; Program still holds its source.
	Standard string
}

// Program is a program of the package: a single source file, or a
// directory of them.
type Program struct {
	// Name is the program's base name (its file or directory).
	Name string
	// Path is the file or directory under Root.
	Path string
	// Language is the judge's language id (internal/judge), chosen by
	// extension and shebang; "" when unknown.
	Language string
	// Main is the source file that is compiled or run, relative to Path
	// when Path is a directory (and its base name otherwise).
	Main string
	// Files are the other files that compile with Main (headers, modules),
	// by name relative to the program's directory.
	Files map[string][]byte

	why string // why the program cannot be run ("" when it can)
	// mainSource replaces Main's content when an included file of the
	// same name does (constants.go).
	mainSource []byte
}

// Outcome is a test's result in the terms packages state expectations in.
type Outcome string

// The outcomes.
const (
	AC  Outcome = "AC"
	WA  Outcome = "WA"
	PE  Outcome = "PE" // presentation error (Polygon); ICPC counts it as WA
	TLE Outcome = "TLE"
	MLE Outcome = "MLE"
	RTE Outcome = "RTE"
	OLE Outcome = "OLE"
	// JE is a judge error: a checker, interactor or validator failed.
	JE Outcome = "JE"
)

// Expectation is what a submission must get.
type Expectation struct {
	// Folder is the directory (ICPC) or tag (Polygon) the expectation
	// comes from.
	Folder string
	// Verdict, when set, is the overall verdict the submission must get
	// (the legacy ICPC format: the folder's verdict, as the test data
	// tree's graders decide it); Partial also asks for a score below the
	// best (partially_accepted).
	Verdict Outcome
	Partial bool
	// CompileError says the submission must not compile.
	CompileError bool
	// Rules must all hold over the tests' outcomes (the 2025-09 format's
	// permitted/required, Polygon's tags).
	Rules []Rule
	// Score, when set, bounds the submission's score (inclusive).
	Score *[2]float64
	// LowerBoundsTime marks a submission whose run times the time limit
	// must allow: the time limit is inferred from them when the package
	// does not state it.
	LowerBoundsTime bool
}

// Rule constrains the outcomes of a set of tests: each must be among
// Permitted (when set), and one at least among Required (when set).
type Rule struct {
	Permitted, Required []Outcome
	// Tests is a pattern of test names the rule applies to ("" for all):
	// a test matches when its name, or a group it is in, matches.
	Tests string
}

// Submission is an example solution of the package.
type Submission struct {
	// Path is the file or directory, relative to Root
	// ("submissions/accepted/x.cc", "solutions/sol.cpp").
	Path    string
	Program Program
	Expect  Expectation
	// Main says this is the reference solution (Polygon's main; ICPC's
	// first accepted submission): the one answers are made with.
	Main bool
}

// Skipped is a part of the package that is not used, and why.
type Skipped struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Error is a package that cannot be used as it is.
type Error struct {
	Path string // the file at fault, relative to Root ("" for the package)
	Msg  string
}

func (e *Error) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

func errorf(path, format string, args ...any) error {
	return &Error{Path: path, Msg: fmt.Sprintf(format, args...)}
}

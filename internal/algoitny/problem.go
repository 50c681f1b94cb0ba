package algoitny

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Problem is an algorithm problem from a judge, identified by its platform and
// the platform's own problem id ("baekjoon", "1000"). A problem is a draft
// until its test cases are produced; only completed problems are visible to
// everyone. Deleting a problem is soft: it leaves every list but stays
// readable by key (an audit trail, and history items keep pointing at it).
type Problem struct {
	Platform  Platform
	ProblemID string
	// InternalID is a stable UUID, kept from the seed's relational id.
	InternalID   string
	Title        string
	ProblemURL   string
	Tags         []string
	SolutionCode string
	Language     Language
	Constraints  string
	// Statement is the problem's statement as plain text (description,
	// input and output sections), as extraction read it from the judge's
	// page; "" for problems registered by hand.
	Statement string
	// Checker says how outputs are compared; the zero value is the default
	// line comparison.
	Checker Checker
	// CheckerPoints is how the points a testlib checker or interactor
	// gives a test (quitp) are read: a fraction of the test (the default,
	// and what problems stored before it was recorded read as), a
	// percentage, or the test's own points (TestCase.Points), as the
	// Polygon package the problem came from means them. The judge turns
	// them into the fraction TestResult.Points holds.
	CheckerPoints PointsScale
	// ValidationPasses makes the problem multi-pass (an ICPC package's
	// multi-pass type, its limits.validation_passes): while its ICPC
	// output validator or interactor accepts a test and leaves nextpass.in
	// in its feedback directory, the submission runs again on that input,
	// at most this many times in all. 0: one pass.
	ValidationPasses int
	// Generator and Validator are the programs the current generated tests
	// were produced with (saveProblem), kept with the problem so that
	// regenerateTests can rebuild those tests from them and anyone who may
	// edit the problem can see exactly what made its tests: a test names
	// only its program's hash (TestCase.Generator). The reference solution
	// is SolutionCode. Zero when none is stored (hand-written tests, or
	// tests produced before programs were kept); Validator also when the
	// production had none. Like SolutionCode, only staff and the problem's
	// author may see them.
	Generator Program
	Validator Program
	// Production is the number of the production run (saveProblem or
	// regenerateTests, numbered per problem from 1) whose generated tests
	// are current; 0 before the first. A run writes its tests, then makes
	// itself current (only ever to a higher number), then deletes the
	// generated tests of earlier runs: numbers, not times, decide which of
	// two concurrent runs wins, and a run never deletes the tests of a run
	// that may still become current.
	Production int
	// Subtasks group the tests for partial scores (ScoreSubtasks); none
	// means the problem is judged pass/fail only.
	Subtasks      []Subtask
	TimeLimitMs   int
	MemoryLimitMB int
	IsCompleted   bool
	IsDeleted     bool
	DeletedAt     *time.Time
	DeletedReason string
	TestCaseCount int
	// Review state (seed 003): extracted or generated problems need a staff
	// review before they are trusted.
	NeedsReview     bool
	ReviewNotes     string
	VerifiedByAdmin bool
	ReviewedAt      *time.Time
	// CreatedBy is the id of the user who registered the problem ("" for seeded ones).
	CreatedBy string
	CreatedAt time.Time
	UpdatedAt time.Time

	// Interactor makes the problem interactive: a program that talks with
	// each submission over its standard input and output, reads the test's
	// input from the file named by its first argument and decides the
	// verdict by its exit code (testlib's: 0 accepted, 1 wrong answer, 3
	// its own failure). Tests then hold the interactor's input (the
	// expected output is given to it as the answer file, often empty), and
	// Checker is used only when it is CheckerCustom: it judges the
	// interactor's output file when the interactor accepts (Polygon's
	// interactive problems). Zero for batch problems. Like SolutionCode, only
	// staff and the problem's author may see its code.
	Interactor Program
}

// ProblemRef identifies a problem.
type ProblemRef struct {
	Platform  Platform
	ProblemID string
}

// Ref returns the problem's identity.
func (p *Problem) Ref() ProblemRef { return ProblemRef{Platform: p.Platform, ProblemID: p.ProblemID} }

// IsPublished says whether everyone may see p: completed and not deleted.
// Only executions of a published problem may be public: a public
// execution shows its problem's title and each test's output, which for a
// draft would publish what only its author (and some plans) may see.
func (p *Problem) IsPublished() bool { return p.IsCompleted && !p.IsDeleted }

// CheckerKind names an output comparison (testlib's standard checkers).
type CheckerKind string

// The checker kinds.
const (
	CheckerLines  CheckerKind = "lines"  // default: ignore trailing spaces and trailing blank lines
	CheckerTokens CheckerKind = "tokens" // any whitespace separates tokens
	CheckerExact  CheckerKind = "exact"
	CheckerFloat  CheckerKind = "float" // numbers within an absolute or relative epsilon
	CheckerYesNo  CheckerKind = "yesno" // case-insensitive yes/no
	CheckerCustom CheckerKind = "custom"
	// CheckerICPCDefault is the ICPC problem package format's default
	// output validator: tokens compared case-insensitively, numbers within
	// a tolerance when one is set; its flags are Checker.Args
	// (case_sensitive, space_change_sensitive, float_tolerance ε, …).
	CheckerICPCDefault CheckerKind = "icpc_default"
	// CheckerICPC is an ICPC output validator program (Code, Language,
	// Files): run as `validator input answer feedback_dir/ Args… < output`,
	// exit code 42 accepted, 43 wrong answer.
	CheckerICPC CheckerKind = "icpc"
)

// Checker configures the comparison of a program's output with the expected one.
type Checker struct {
	Kind     CheckerKind
	Epsilon  float64
	Code     string   // custom checker source
	Language Language // custom checker language
	// Files are further source files the checker compiles with (headers),
	// by file name: a problem package's multi-file validator.
	Files map[string]string
	// Args are an ICPC checker's flags (CheckerICPCDefault) or extra
	// arguments (CheckerICPC).
	Args []string
}

// ProblemFilter selects problems in a list. At most one of Platform and
// Language narrows the index that is queried; the rest are applied as filters.
type ProblemFilter struct {
	Platform *Platform
	Language *Language
	// Completed selects completed problems (true) or drafts (false); nil means
	// completed ones.
	Completed *bool
	// TitleContains matches titles case-insensitively.
	TitleContains string
	// NeedsReview selects problems by review state (staff).
	NeedsReview *bool
	// CreatedBy keeps only the problems this user registered (the service
	// sets it when a user may list only their own drafts).
	CreatedBy string
}

// ProblemReview is a staff review of a problem.
type ProblemReview struct {
	Verified bool
	Notes    string
}

// ProblemUpdate changes some fields of a problem; nil fields are left alone.
type ProblemUpdate struct {
	Title        *string
	ProblemURL   *string
	Tags         *[]string
	SolutionCode *string
	Language     *Language
	Constraints  *string
	Checker      *Checker
	// Subtasks replaces all subtasks (an empty slice removes them).
	Subtasks      *[]Subtask
	TimeLimitMs   *int
	MemoryLimitMB *int
	IsCompleted   *bool
	// Generator, Validator and Production record a production run (see
	// Problem): set together, once the run's tests are stored. Storage
	// refuses with ECONFLICT to make a run current that is not newer than
	// the current one.
	Generator  *Program
	Validator  *Program
	Production *int
	// ReplacesProduction, with Production, makes the run current only if
	// the current one is still this one (regenerateTests rebuilt it): a
	// run that finished meanwhile is not replaced by an older program's.
	ReplacesProduction *int
	// Unreviewed undoes a staff review (the problem needs one again and is
	// no longer verified): its author changed what was reviewed.
	Unreviewed bool
	// IfUnchangedSince, if set, makes the write apply only if the problem
	// was not written since it was read (its UpdatedAt is still this),
	// else storage refuses with ECONFLICT: subtasks were checked against
	// the test cases the problem had then, and a test deleted meanwhile
	// must not be named.
	IfUnchangedSince *time.Time

	// Interactor replaces the interactor; a Program without code makes the
	// problem a batch problem again.
	Interactor *Program
}

// TestCase is one input/expected-output pair of a problem. Inputs and outputs
// may be several megabytes; storage takes care of DynamoDB's item size limit.
type TestCase struct {
	Platform  Platform
	ProblemID string
	ID        string
	Input     string
	Output    string
	// Generator, Seed and Args record how a generated test was produced,
	// so that it can be rebuilt byte for byte (regenerateTests): Generator
	// names the exact program, "generator:<language>@<hash>"
	// (GeneratorName), and Args are the command-line arguments it was run
	// with (SEED INDEX). Tests produced before programs were kept say
	// "generator:<language>" and no Args (they were run with SEED SEED:
	// GeneratorArgs). Extraction's samples say "sample" (Seed 0);
	// hand-written tests have none of these.
	Generator string
	Seed      int64
	Args      []string
	// Points is what the test is worth in its problem's own points (a
	// Polygon test's points), 0 when it has none: what a checker's points
	// are a share of with PointsOfTest. Subtasks, not this, decide the
	// score.
	Points float64
	// Production is the production run (Problem.Production) a generated
	// test belongs to: the next run replaces the tests of earlier ones, and
	// only generated tests (IsGenerated), never hand-written ones. 0 for
	// tests older than numbered runs (replaced by the next run as well).
	Production int
	CreatedAt  time.Time
	// InputSize and OutputSize are the bytes of the whole input and output.
	// Truncated says that Input and Output hold only their beginnings: a
	// list of test cases is read as previews, a test case alone in full.
	InputSize, OutputSize int
	Truncated             bool
}

// PointsScale is how a problem's testlib checker or interactor gives a
// test partial credit (quitp's points).
type PointsScale string

// The scales (internal/judge's PointsScale).
const (
	// PointsFraction reads them as the fraction of the test, in [0, 1].
	PointsFraction PointsScale = ""
	// PointsPercent reads them as a percentage of the test (Polygon's
	// treat-points-from-checker-as-percent).
	PointsPercent PointsScale = "percent"
	// PointsOfTest reads them in the test's own points (Polygon's
	// default): 5 of a test worth 10 is half of it.
	PointsOfTest PointsScale = "test"
)

// Program is a program kept with a problem: its language and source.
type Program struct {
	Language Language
	Code     string
	// Files are further source files the program compiles with (headers,
	// modules), by file name: a problem package's multi-file program.
	Files map[string]string
	// Protocol is how the program reports: testlib's exit codes (the
	// default) or the ICPC format's (ProtocolICPC: an interactor exits 42
	// accepted, 43 wrong answer, with a feedback directory).
	Protocol Protocol
	// Args are passed to the program after its standard arguments (an
	// ICPC interactor's output validator arguments).
	Args []string
}

// Protocol is how an author's program (checker, interactor, validator)
// reports its verdict.
type Protocol string

// The protocols.
const (
	ProtocolTestlib Protocol = ""
	ProtocolICPC    Protocol = "icpc"
)

// IsZero reports whether no program is stored.
func (p Program) IsZero() bool { return p.Code == "" }

// Hash is a short hash of the program (the first 12 hex digits of the
// SHA-256 of its language and code): enough for a test to name the exact
// program it came from, short enough to read.
func (p Program) Hash() string {
	h := sha256.New()
	h.Write([]byte(p.Language))
	h.Write([]byte{0})
	h.Write([]byte(p.Code))
	if len(p.Files) > 0 || len(p.Args) > 0 || p.Protocol != "" { // programs of one file hash as they always did
		names := make([]string, 0, len(p.Files))
		for name := range p.Files {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			fmt.Fprintf(h, "\x00%s\x00%d\x00%s", name, len(p.Files[name]), p.Files[name])
		}
		fmt.Fprintf(h, "\x00%q\x00%s", p.Args, p.Protocol)
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// generatorPrefix begins the Generator of every generated test.
const generatorPrefix = "generator:"

// GeneratorName is what a test produced by the generator g records as its
// Generator: "generator:<language>@<hash>".
func GeneratorName(g Program) string { return generatorPrefix + string(g.Language) + "@" + g.Hash() }

// IsGenerated reports whether tc was produced by a generator (saveProblem,
// regenerateTests), as opposed to hand-written tests and samples.
func (tc *TestCase) IsGenerated() bool { return strings.HasPrefix(tc.Generator, generatorPrefix) }

// GeneratorArgs returns the arguments a generated test's generator was run
// with: Args, or SEED SEED for tests produced before Args were recorded
// (always run so). Nil for tests that are not generated.
func (tc *TestCase) GeneratorArgs() []string {
	switch {
	case !tc.IsGenerated():
		return nil
	case tc.Args != nil:
		return tc.Args
	}
	s := strconv.FormatInt(tc.Seed, 10)
	return []string{s, s}
}

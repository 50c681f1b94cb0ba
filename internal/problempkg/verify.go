package problempkg

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/algoitny/api/internal/judge"
)

// Options configure Verify.
type Options struct {
	// ProbeTime is the time limit the submissions that bound the time
	// limit run with while it is being inferred (a package that states
	// none); default 60 s.
	ProbeTime time.Duration
	// Log receives a line per step (nil: none).
	Log io.Writer
}

// Report is what Verify found: every submission's verdict beside the one
// its folder or tag expects, and what is wrong with the package.
type Report struct {
	Problem string `json:"problem"`
	Format  Format `json:"format"`
	// TimeLimitMs is the time limit submissions were judged with (stated
	// by the package or inferred from its accepted submissions).
	TimeLimitMs int64              `json:"timeLimitMs"`
	Submissions []SubmissionReport `json:"submissions"`
	Skipped     []Skipped          `json:"skipped"`
	// Errors are faults of the package: test inputs its validators refuse,
	// generated tests that do not regenerate byte for byte, programs that
	// do not compile.
	Errors   []string `json:"errors,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// OK says the package verified: no errors, and every submission got what
// it must.
func (r *Report) OK() bool {
	if len(r.Errors) > 0 {
		return false
	}
	for _, s := range r.Submissions {
		if !s.OK {
			return false
		}
	}
	return true
}

// SubmissionReport is one submission's result.
type SubmissionReport struct {
	// Path is relative to the package root.
	Path string `json:"path"`
	// Language is the API's name of the judge language (CPP, PYTHON …).
	Language string `json:"language"`
	// Verdict is the judge's verdict name (ACCEPTED, WRONG_ANSWER …).
	Verdict string `json:"verdict"`
	// Score is the submission's score: a scoring package's, or 100 when
	// ACCEPTED and 0 otherwise.
	Score float64 `json:"score"`
	// TimeMs is the largest CPU time over its tests.
	TimeMs int64 `json:"timeMs"`
	// Expected is the folder (ICPC) or tag (Polygon) the submission is in.
	Expected string `json:"expected"`
	// OK says the submission got what its folder or tag requires.
	OK bool `json:"ok"`
	// Message says why not, or what the judge said.
	Message string `json:"message,omitempty"`
}

// verifier holds what Verify builds once.
type verifier struct {
	pkg    *Package
	e      *judge.Engine
	opts   Options
	report *Report
	tests  *testFiles
	judgeWith
}

// Verify judges every submission of the package and reports each
// verdict beside the one it must get, as problemtools' verifyproblem and
// Polygon's invocations do: the test inputs are generated where the
// package generates them (and must regenerate byte for byte where it
// ships them), validated by every input validator, and the time limit is
// the package's or, when it states none, inferred from its accepted
// submissions (ICPC's multipliers). The error is for what stops the whole
// verification (a checker that does not compile, a cancelled context);
// faults found on the way are in the report.
func Verify(ctx context.Context, pkg *Package, e *judge.Engine, opts Options) (*Report, error) {
	report, v, err := verifyKeeping(ctx, pkg, e, opts)
	if v != nil {
		v.close()
	}
	return report, err
}

// chooseLanguages maps the package's programs to languages this judge
// offers: C++ is judged as C++17 where C++20 is not available, and an
// ICPC package's Python 3 with PyPy 3 where it is (as Kattis runs it);
// submissions in a language the judge does not offer are skipped.
func (v *verifier) chooseLanguages() {
	avail := map[string]bool{}
	for _, l := range v.e.Languages() {
		avail[l.ID] = l.Available
	}
	choose := func(lang string) string {
		switch {
		case lang == langCPP20 && !avail[langCPP20]:
			return langCPP
		case lang == langPython3 && v.pkg.Format == FormatICPC && avail[langPyPy3]:
			return langPyPy3
		}
		return lang
	}
	fix := func(p *Program) {
		if p != nil {
			p.Language = choose(p.Language)
		}
	}
	fix(v.pkg.Interactor)
	fix(v.pkg.Checker.Program)
	for i := range v.pkg.InputValidators {
		fix(&v.pkg.InputValidators[i])
	}
	for _, g := range v.pkg.Generators {
		fix(g)
	}
	kept := v.pkg.Submissions[:0]
	for _, s := range v.pkg.Submissions {
		s.Program.Language = choose(s.Program.Language)
		if !avail[s.Program.Language] {
			v.report.Skipped = append(v.report.Skipped, Skipped{Path: s.Path, Reason: "the judge does not offer " + s.Program.Language})
			continue
		}
		kept = append(kept, s)
	}
	v.pkg.Submissions = kept
}

func (v *verifier) logf(format string, args ...any) {
	if v.opts.Log != nil {
		fmt.Fprintf(v.opts.Log, format+"\n", args...)
	}
}

func (v *verifier) errorf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	v.report.Errors = append(v.report.Errors, msg)
	v.logf("error: %s", msg)
}

func (v *verifier) close() {
	v.judgeWith.close()
	if v.tests != nil {
		v.tests.close()
	}
}

// judgeAll infers the time limit when the package leaves it open, then
// judges every submission.
func (v *verifier) judgeAll(ctx context.Context) error {
	subs := v.pkg.Submissions
	results := make([]*judged, len(subs))
	tl := v.pkg.Limits.TimeLimit
	if tl == 0 {
		var slowest time.Duration
		for i, s := range subs {
			if !s.Expect.LowerBoundsTime {
				continue
			}
			r, err := v.judgeOne(ctx, s, v.opts.ProbeTime)
			if err != nil {
				return err
			}
			results[i] = r
			if r.compiled && r.result.Outcome == AC {
				slowest = max(slowest, r.maxTime)
			}
		}
		tl = v.inferTimeLimit(slowest)
	}
	v.report.TimeLimitMs = tl.Milliseconds()
	high := time.Duration(float64(tl) * v.pkg.Limits.TimeLimitToTLE)
	for i, s := range subs {
		r := results[i]
		if r == nil {
			var err error
			if r, err = v.judgeOne(ctx, s, high); err != nil {
				return err
			}
		}
		v.report.Submissions = append(v.report.Submissions, v.assess(s, r, tl, high))
	}
	return nil
}

// inferTimeLimit is the smallest multiple of the time resolution at least
// the slowest accepted run times ACToTimeLimit (and at least one
// resolution step), as the ICPC format infers it.
func (v *verifier) inferTimeLimit(slowest time.Duration) time.Duration {
	l := v.pkg.Limits
	res := l.TimeResolution
	if res <= 0 {
		res = time.Second
	}
	if slowest == 0 {
		v.report.Warnings = append(v.report.Warnings, "no accepted submission ran: the time limit is the probe time")
		return v.opts.ProbeTime
	}
	exact := float64(slowest) * l.ACToTimeLimit
	steps := math.Max(1, math.Ceil(exact/float64(res)))
	tl := time.Duration(steps) * res
	v.logf("time limit: %v (slowest accepted run %v × %g)", tl, slowest.Round(time.Millisecond), l.ACToTimeLimit)
	return tl
}

// judged is one submission's run over the tests.
type judged struct {
	compiled bool
	compile  string // the compiler's message when it did not compile
	tests    []judge.TestResult
	result   Result
	maxTime  time.Duration
}

// assess compares what a submission got with what it must get, at the
// time limit tl; a submission run at the higher limit (tl times the TLE
// margin) that passes only there passes too, with a warning, as
// problemtools judges.
func (v *verifier) assess(s Submission, r *judged, tl, high time.Duration) SubmissionReport {
	rep := SubmissionReport{Path: s.Path, Language: strings.ToUpper(s.Program.Language), Expected: s.Expect.Folder}
	if !r.compiled {
		rep.Verdict, rep.Message, rep.OK = string(judge.CompilationError), firstLineOf(r.compile), s.Expect.CompileError
		return rep
	}
	atTL := v.outcomesAt(r.tests, tl)
	res := v.pkg.Evaluate(atTL)
	rep.Verdict, rep.Score, rep.TimeMs = verdictName(res.Outcome), round2(res.Score), r.maxTime.Milliseconds()
	ok, why := v.pkg.satisfies(s.Expect, atTL, res)
	if !ok && high > tl {
		atHigh := v.outcomesAt(r.tests, high)
		if okHigh, _ := v.pkg.satisfies(s.Expect, atHigh, v.pkg.Evaluate(atHigh)); okHigh {
			ok, why = true, ""
			v.report.Warnings = append(v.report.Warnings, fmt.Sprintf("%s is sensitive to the time limit: it gets what %s requires only with %v", s.Path, s.Expect.Folder, high))
		}
	}
	rep.OK, rep.Message = ok, why
	if rep.Message == "" && res.Outcome != AC {
		rep.Message = firstFailureMessage(r.tests)
	}
	v.logf("%-50s %-22s %s", s.Path, rep.Verdict, okWord(rep.OK))
	return rep
}

func okWord(ok bool) string {
	if ok {
		return "OK"
	}
	return "UNEXPECTED"
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }

// outcomesAt are the tests' outcomes had the time limit been tl: a test
// that ran longer is a TLE.
func (v *verifier) outcomesAt(tests []judge.TestResult, tl time.Duration) []TestOutcome {
	out := make([]TestOutcome, len(v.pkg.Tests))
	for i := range out {
		out[i] = TestOutcome{Outcome: JE}
	}
	for _, tr := range tests {
		if tr.Verdict == "" {
			continue // not run: judging stopped at an earlier failure
		}
		o := outcomeOf(tr)
		if tr.CPUTime > tl && (o.Outcome == AC || o.Outcome == WA) {
			o = TestOutcome{Outcome: TLE, Message: fmt.Sprintf("%d ms of CPU time past the time limit %d ms", tr.CPUTime.Milliseconds(), tl.Milliseconds())}
		}
		out[tr.Index] = o
	}
	return out
}

// outcomeOf is a test result in package terms.
func outcomeOf(tr judge.TestResult) TestOutcome {
	o := TestOutcome{Fraction: tr.Points, Score: tr.Score, Message: tr.Message}
	switch tr.Verdict {
	case judge.Accepted:
		o.Outcome = AC
	case judge.WrongAnswer:
		o.Outcome = WA
		if strings.HasPrefix(tr.Message, "presentation error") {
			o.Outcome = PE
		}
	case judge.TimeLimitExceeded:
		o.Outcome = TLE
	case judge.MemoryLimitExceeded:
		o.Outcome = MLE
	case judge.RuntimeError:
		o.Outcome = RTE
	case judge.OutputLimitExceeded:
		o.Outcome = OLE
	default:
		o.Outcome = JE
	}
	return o
}

func verdictName(o Outcome) string {
	switch o {
	case AC:
		return string(judge.Accepted)
	case WA, PE:
		return string(judge.WrongAnswer)
	case TLE:
		return string(judge.TimeLimitExceeded)
	case MLE:
		return string(judge.MemoryLimitExceeded)
	case RTE:
		return string(judge.RuntimeError)
	case OLE:
		return string(judge.OutputLimitExceeded)
	}
	return string(judge.InternalError)
}

func firstFailureMessage(tests []judge.TestResult) string {
	for _, tr := range tests {
		if tr.Verdict != judge.Accepted {
			return fmt.Sprintf("test %s: %s %s", tr.TestID, tr.Verdict, firstLineOf(tr.Message))
		}
	}
	return ""
}

// satisfies says whether a submission's outcomes and result are what the
// expectation requires, and if not why.
func (p *Package) satisfies(exp Expectation, outcomes []TestOutcome, res Result) (bool, string) {
	if exp.CompileError {
		return false, "it compiled"
	}
	if exp.Verdict != "" && !sameCategory(exp.Verdict, res.Outcome, p.Format) {
		return false, fmt.Sprintf("expected %s, got %s", verdictName(exp.Verdict), verdictName(res.Outcome))
	}
	if exp.Partial && res.Score >= p.MaxScore {
		return false, "expected a partial score, got the full score"
	}
	for _, rule := range exp.Rules {
		if ok, why := p.ruleHolds(rule, outcomes); !ok {
			return false, why
		}
	}
	if s := exp.Score; s != nil && (res.Score < s[0]-1e-9 || res.Score > s[1]+1e-9) {
		return false, fmt.Sprintf("score %g outside [%g, %g]", res.Score, s[0], s[1])
	}
	return true, ""
}

// ruleHolds checks one rule over the tests it applies to.
func (p *Package) ruleHolds(r Rule, outcomes []TestOutcome) (bool, string) {
	hit := len(r.Required) == 0
	for i, t := range p.Tests {
		if r.Tests != "" && !globMatchesPath(r.Tests, t.Name) {
			continue
		}
		o := outcomes[i].Outcome
		if len(r.Permitted) > 0 && !containsCategory(r.Permitted, o, p.Format) {
			why := fmt.Sprintf("test %s: %s is not permitted (%s)", t.Name, verdictName(o), joinOutcomes(r.Permitted))
			if m := shortMessage(outcomes[i].Message); m != "" {
				why += ": " + m
			}
			return false, why
		}
		if containsCategory(r.Required, o, p.Format) {
			hit = true
		}
	}
	if !hit {
		return false, "no test got any of " + joinOutcomes(r.Required)
	}
	return true, ""
}

func joinOutcomes(os []Outcome) string {
	s := make([]string, len(os))
	for i, o := range os {
		s[i] = string(o)
	}
	return strings.Join(s, ", ")
}

func containsCategory(set []Outcome, o Outcome, f Format) bool {
	for _, want := range set {
		if sameCategory(want, o, f) {
			return true
		}
	}
	return false
}

// sameCategory says the outcome got counts as the outcome wanted: in the
// ICPC format a memory or output limit exceeded is a run-time error and a
// presentation error a wrong answer; in Polygon's, PE is its own unless WA
// is asked.
func sameCategory(want, got Outcome, f Format) bool {
	if want == got {
		return true
	}
	switch {
	case want == RTE && f == FormatICPC:
		return got == MLE || got == OLE
	case want == WA:
		return got == PE
	}
	return false
}

// shortMessage is a judge message on one line, at most about 400 bytes:
// its beginning and its end (where a traceback says what went wrong).
func shortMessage(m string) string {
	m = strings.Join(strings.Fields(m), " ")
	if len(m) <= 400 {
		return m
	}
	return strings.ToValidUTF8(m[:150], "") + " … " + strings.ToValidUTF8(m[len(m)-250:], "")
}

package authoring

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/problems"
)

// fakeProblems keeps one problem's generated tests by run in memory and
// records what replace asks of it; fail makes one step fail.
type fakeProblems struct {
	current, seq int
	tests        map[int]int // run → generated tests
	steps        []string
	fail         string
	conflict     bool // a newer run is current when Update is asked
}

var errFault = errors.New("injected fault")

func (f *fakeProblems) step(s string) error {
	f.steps = append(f.steps, s)
	if f.fail == s {
		return errFault
	}
	return nil
}

func (f *fakeProblems) Get(context.Context, algoitny.ProblemRef) (*algoitny.Problem, error) {
	return &algoitny.Problem{Production: f.current, TestCaseCount: f.count()}, nil
}

func (f *fakeProblems) Create(context.Context, problems.CreateInput) (*algoitny.Problem, error) {
	return nil, errors.New("not used")
}

func (f *fakeProblems) StartProduction(context.Context, algoitny.ProblemRef) (int, error) {
	f.seq++
	return f.seq, f.step("start")
}

func (f *fakeProblems) AddTestCases(_ context.Context, _ algoitny.ProblemRef, cases []*algoitny.TestCase) (*algoitny.Problem, error) {
	if err := f.step("add"); err != nil {
		f.tests[cases[0].Production] += len(cases) / 2 // half of them got in
		return nil, err
	}
	f.tests[cases[0].Production] += len(cases)
	return nil, nil
}

func (f *fakeProblems) Update(_ context.Context, _ algoitny.ProblemRef, u algoitny.ProblemUpdate) (*algoitny.Problem, error) {
	if err := f.step("update"); err != nil {
		return nil, err
	}
	if f.conflict || *u.Production <= f.current || (u.ReplacesProduction != nil && *u.ReplacesProduction != f.current) {
		return nil, algoitny.Errorf(algoitny.ECONFLICT, "conflict")
	}
	f.current = *u.Production
	return nil, nil
}

func (f *fakeProblems) GeneratedTestCases(context.Context, algoitny.ProblemRef) ([]*algoitny.TestCase, error) {
	return nil, errors.New("not used")
}

func (f *fakeProblems) DeleteGeneratedTests(ctx context.Context, _ algoitny.ProblemRef, drop func(int) bool, _ map[string]string) (int, error) {
	if ctx.Err() != nil {
		return 0, ctx.Err()
	}
	var runs []int
	for run := range f.tests {
		if drop(run) {
			runs = append(runs, run)
		}
	}
	slices.Sort(runs)
	if err := f.step(fmt.Sprintf("delete %v", runs)); err != nil {
		return 0, err
	}
	n := 0
	for _, run := range runs {
		n += f.tests[run]
		delete(f.tests, run)
	}
	return n, nil
}

func (f *fakeProblems) TestCaseData(context.Context, algoitny.ProblemRef, string) (*algoitny.TestCase, error) {
	return nil, errors.New("not used")
}

func (f *fakeProblems) count() int {
	n := 0
	for _, c := range f.tests {
		n += c
	}
	return n
}

// TestReplace: a run's tests are all written before it becomes current,
// and only then are the older runs' deleted, so no failure leaves the
// problem without tests: a failed write takes back its own tests, a run
// that lost to a newer one takes back its own, a failure after the switch
// leaves both sets (the next run deletes the older one). Once the tests
// are written, the client going away does not stop the replace.
func TestReplace(t *testing.T) {
	ref := algoitny.ProblemRef{Platform: algoitny.PlatformCustom, ProblemID: "p"}
	newRun := func(n int) run {
		var tests []*algoitny.TestCase
		for i := range n {
			tests = append(tests, &algoitny.TestCase{Input: fmt.Sprint(i), Generator: "generator:python@x"})
		}
		return run{generator: Source{Language: algoitny.LanguagePython, Code: "print(1)"}, tests: tests, complete: true}
	}
	for _, c := range []struct {
		name      string
		fail      string
		conflict  bool
		cancel    bool // the client goes away once the tests are written
		code      string
		steps     string
		current   int
		remaining map[int]int
	}{
		{name: "Replaces", steps: "start add update delete [0 1]", current: 2, remaining: map[int]int{2: 4}},
		{name: "ClientGoneAfterWrite", cancel: true, steps: "start add update delete [0 1]", current: 2, remaining: map[int]int{2: 4}},
		{name: "WriteFails", fail: "add", code: "", steps: "start add delete [2]", current: 1, remaining: map[int]int{0: 1, 1: 3}},
		{name: "NewerRunWon", conflict: true, code: algoitny.ECONFLICT, steps: "start add update delete [2]", current: 1, remaining: map[int]int{0: 1, 1: 3}},
		{name: "SwitchFails", fail: "update", steps: "start add update", current: 1, remaining: map[int]int{0: 1, 1: 3, 2: 4}},
		{name: "CleanupFails", fail: "delete [0 1]", steps: "start add update delete [0 1]", current: 2, remaining: map[int]int{0: 1, 1: 3, 2: 4}},
	} {
		t.Run(c.name, func(t *testing.T) {
			// Run 1 is current; a test of an unnumbered (older) run is left over.
			f := &fakeProblems{current: 1, seq: 1, tests: map[int]int{0: 1, 1: 3}, fail: c.fail, conflict: c.conflict}
			ctx, cancel := context.WithCancel(algoitny.WithActor(context.Background(), &algoitny.Actor{User: &algoitny.User{ID: "u", IsStaff: true}}))
			defer cancel()
			var s Service
			s.Problems = f
			if c.cancel {
				f.fail = ""
				s.Problems = cancelAfterAdd{f, cancel}
			}
			_, err := s.replace(ctx, ref, newRun(4))
			switch {
			case c.fail != "" && !errors.Is(err, errFault):
				t.Fatalf("err %v, want the fault", err)
			case c.code != "" && !algoitny.IsCode(err, c.code):
				t.Fatalf("err %v, want %s", err, c.code)
			case c.fail == "" && c.code == "" && err != nil:
				t.Fatal(err)
			}
			if got := strings.Join(f.steps, " "); got != c.steps {
				t.Errorf("steps %q, want %q", got, c.steps)
			}
			if f.current != c.current || fmt.Sprint(f.tests) != fmt.Sprint(c.remaining) {
				t.Errorf("current run %d, tests by run %v; want %d, %v", f.current, f.tests, c.current, c.remaining)
			}
			if f.tests[f.current] == 0 {
				t.Errorf("the current run %d has no tests", f.current)
			}
		})
	}
}

// cancelAfterAdd cancels the request once the tests are written.
type cancelAfterAdd struct {
	*fakeProblems
	cancel context.CancelFunc
}

func (c cancelAfterAdd) AddTestCases(ctx context.Context, ref algoitny.ProblemRef, cases []*algoitny.TestCase) (*algoitny.Problem, error) {
	p, err := c.fakeProblems.AddTestCases(ctx, ref, cases)
	c.cancel()
	return p, err
}

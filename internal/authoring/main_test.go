package authoring_test

import (
	"cmp"
	"context"
	"slices"
	"testing"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/authoring"
	"github.com/algoitny/api/internal/dynamo"
	"github.com/algoitny/api/internal/dynamo/dynamotest"
	"github.com/algoitny/api/internal/judge"
	"github.com/algoitny/api/internal/problems"
)

// The storage of the problems the service registers is *dynamo.DB.
var _ problems.Store = (*dynamo.DB)(nil)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// bundle is a test's problems service (on tables of its own), the jobs
// the service may read, and the service under test.
type bundle struct {
	problems *problems.Service
	jobs     fakeJobs
	svc      *authoring.Service
}

// setup returns a service on tables of the test's own without a judge:
// enough for every rule checked before a program runs.
func setup(t testing.TB) bundle {
	t.Helper()
	db := dynamotest.NewDB(t)
	ps := &problems.Service{Store: db}
	jobs := fakeJobs{}
	return bundle{problems: ps, jobs: jobs, svc: &authoring.Service{Problems: ps, Jobs: jobs}}
}

// withJudge gives b's service an unsandboxed judge (plain processes with
// rlimits: no bwrap needed) for the tests whose rules run programs.
func (b bundle) withJudge(t testing.TB) bundle {
	t.Helper()
	e := algoitnytest.Must[*judge.Engine](t)(judge.New(judge.Config{Sandbox: judge.SandboxNone, AllowUnsandboxed: true, Workers: 2}))
	t.Cleanup(func() { e.Close() })
	svc := *b.svc
	svc.Judge = e
	b.svc = &svc
	return b
}

// fakeJobs holds the jobs of the test by id; anyone may read them (the
// access rules are jobs.Service's).
type fakeJobs map[string]*algoitny.Job

func (f fakeJobs) Get(_ context.Context, id string) (*algoitny.Job, error) {
	j, ok := f[id]
	if !ok {
		return nil, algoitny.Errorf(algoitny.ENOTFOUND, "job %s not found", id)
	}
	c := *j
	return &c, nil
}

// Actors: staff, authors on a plan that registers problems, and a user on
// one that does not.
var (
	proPlan  = &algoitny.Plan{Name: "Pro", MaxProblems: 50, CanRegisterProblems: true, CanViewAllProblems: true}
	freePlan = &algoitny.Plan{Name: "Free"}
)

func as(id string, plan *algoitny.Plan) context.Context {
	return algoitny.WithActor(context.Background(), &algoitny.Actor{User: &algoitny.User{ID: id, Email: id + "@example.com"}, Plan: plan})
}

var (
	staff     = algoitny.WithActor(context.Background(), &algoitny.Actor{User: &algoitny.User{ID: "staff", IsStaff: true}})
	author    = as("author", proPlan)
	otherPro  = as("other", proPlan)
	freeUser  = as("free", freePlan)
	anonymous = context.Background()
)

// Programs of an a+b problem: the generator prints "SEED 2*SEED", the
// validator accepts b = 2a, the solution prints a+b.
var (
	generator = authoring.Source{Language: algoitny.LanguagePython, Code: "import sys\ns = int(sys.argv[1])\nprint(s, 2 * s)\n"}
	validator = authoring.Source{Language: algoitny.LanguagePython, Code: "a, b = map(int, input().split())\nassert b == 2 * a\n"}
	solution  = "a, b = map(int, input().split())\nprint(a + b)\n"
)

// createProblem registers a draft a+b problem by author with one
// hand-written test and returns its ref.
func (b bundle) createProblem(t testing.TB, id string) algoitny.ProblemRef {
	t.Helper()
	p := algoitnytest.Must[*algoitny.Problem](t)(b.problems.Create(author, problems.CreateInput{
		Problem: algoitny.Problem{Platform: algoitny.PlatformCustom, ProblemID: id, Title: "A+B " + id, Language: algoitny.LanguagePython,
			SolutionCode: solution, TimeLimitMs: 2000, MemoryLimitMB: 256},
		TestCases: []*algoitny.TestCase{{Input: "1 1\n", Output: "2\n"}},
	}))
	return p.Ref()
}

// generated returns the generated tests of ref by seed.
func (b bundle) generated(t testing.TB, ref algoitny.ProblemRef) []*algoitny.TestCase {
	t.Helper()
	tests := algoitnytest.Must[[]*algoitny.TestCase](t)(b.problems.GeneratedTestCases(staff, ref))
	slices.SortStableFunc(tests, func(a, b *algoitny.TestCase) int { return cmp.Compare(a.Seed, b.Seed) })
	return tests
}

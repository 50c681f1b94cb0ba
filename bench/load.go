package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/dynamo"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/logging"
	"github.com/aws/smithy-go/middleware"
)

// dataset is what was loaded, for the scenarios to pick from.
type dataset struct {
	problems []algoitny.ProblemRef
	users    []*algoitny.User
	// histories holds a few executions of each user (by user index);
	// failed a few failed ones, which can be hinted.
	histories, failed map[int][]*algoitny.SearchHistory
	// ab10 is the problem with 10 A+B tests of the execute scenario.
	ab10 algoitny.ProblemRef
	// counts and load time, for the report.
	nProblems, nTestCases, nUsers, nHistory, nPublic int
	loadTime                                         time.Duration
}

const aPlusBPython = "a, b = map(int, input().split())\nprint(a + b)\n"

// sizes returns the data set's counts at scale (1.0 = 1,000 problems with
// 20 test cases, 200 users, 50,000 history items).
func sizes(scale float64) (problems, users, history int) {
	n := func(full int, least int) int { return max(least, int(math.Round(float64(full)*scale))) }
	return n(1000, 10), n(200, 10), n(50000, 100)
}

// loadData writes the data set with parallel writers through internal/dynamo
// (the server's own repository code, on the server's tables).
func loadData(ctx context.Context, db *dynamo.DB, scale float64, writers int, logf func(string, ...any)) (*dataset, error) {
	start := time.Now()
	nProblems, nUsers, nHistory := sizes(scale)
	l := &loader{db: db, writers: writers, logf: logf,
		ds: &dataset{histories: map[int][]*algoitny.SearchHistory{}, failed: map[int][]*algoitny.SearchHistory{}}}
	if err := l.users(ctx, nUsers); err != nil {
		return nil, err
	}
	logf("load: %d users in %s", nUsers, time.Since(start).Round(time.Millisecond))
	cases, err := l.problems(ctx, nProblems)
	if err != nil {
		return nil, err
	}
	public, err := l.histories(ctx, nHistory)
	if err != nil {
		return nil, err
	}
	ds := l.ds
	ds.nProblems, ds.nTestCases, ds.nUsers, ds.nHistory, ds.nPublic = nProblems, cases, nUsers, nHistory, public
	ds.loadTime = time.Since(start)
	return ds, nil
}

// loader writes the data set, writers at a time.
type loader struct {
	db      *dynamo.DB
	writers int
	logf    func(string, ...any)
	ds      *dataset
}

// users creates n users on the default plan, every metered action of
// which is made unlimited (quotas are still checked and counted: the
// transaction runs, only its limit is -1).
func (l *loader) users(ctx context.Context, n int) error {
	unlimited := algoitny.Unlimited
	if _, err := l.db.UpdatePlan(ctx, algoitny.DefaultPlanName, algoitny.PlanUpdate{MaxExecutionsPerDay: &unlimited, MaxHintsPerDay: &unlimited}); err != nil {
		return fmt.Errorf("update plan: %w", err)
	}
	plan, err := l.db.GetPlan(ctx, algoitny.DefaultPlanName)
	if err != nil {
		return err
	}
	l.ds.users = make([]*algoitny.User, n)
	if err := parallel(ctx, l.writers, n, func(i int) error {
		u := &algoitny.User{Email: fmt.Sprintf("user%04d@bench.example", i), Name: fmt.Sprintf("User %d", i), IsActive: true}
		l.ds.users[i] = u
		return l.db.CreateUser(ctx, u, plan)
	}); err != nil {
		return fmt.Errorf("users: %w", err)
	}
	return nil
}

// problems creates n problems of 20 test cases and ab10 (10 cases); it
// returns how many test cases it created.
func (l *loader) problems(ctx context.Context, n int) (int, error) {
	t := time.Now()
	l.ds.problems = make([]algoitny.ProblemRef, n)
	var cases atomic.Int64
	if err := parallel(ctx, l.writers, n+1, func(i int) error {
		id, tests := strconv.Itoa(1000+i), 20
		if i == n {
			id, tests = "ab10", 10
		}
		ref, err := createProblem(ctx, l.db, id, tests)
		if i < n {
			l.ds.problems[i] = ref
		} else {
			l.ds.ab10 = ref
		}
		cases.Add(int64(tests))
		return err
	}); err != nil {
		return 0, fmt.Errorf("problems: %w", err)
	}
	l.logf("load: %d problems with %d test cases in %s", n+1, cases.Load(), time.Since(t).Round(time.Millisecond))
	return int(cases.Load()), nil
}

// histories creates n history items of random users and problems (a third
// public), keeping up to 5 of each user's, and of their failed ones, in
// the data set; it returns how many are public.
func (l *loader) histories(ctx context.Context, n int) (int, error) {
	t := time.Now()
	ds := l.ds
	var public atomic.Int64
	var mu sync.Mutex
	var done atomic.Int64
	if err := parallel(ctx, l.writers, n, func(i int) error {
		r := rand.New(rand.NewPCG(uint64(i), 7))
		ui := r.IntN(len(ds.users))
		u, p := ds.users[ui], ds.problems[r.IntN(len(ds.problems))]
		h := history(u, p, i%3 == 0, r)
		if err := l.db.CreateHistory(ctx, h); err != nil {
			return err
		}
		if h.IsCodePublic {
			public.Add(1)
		}
		mu.Lock()
		if len(ds.histories[ui]) < 5 {
			ds.histories[ui] = append(ds.histories[ui], h)
		}
		if h.Verdict != algoitny.VerdictAccepted && len(ds.failed[ui]) < 5 {
			ds.failed[ui] = append(ds.failed[ui], h)
		}
		mu.Unlock()
		if k := done.Add(1); k%10000 == 0 {
			l.logf("load: %d/%d history items (%s)", k, n, time.Since(t).Round(time.Second))
		}
		return nil
	}); err != nil {
		return 0, fmt.Errorf("history: %w", err)
	}
	l.logf("load: %d history items (%d public) in %s", n, public.Load(), time.Since(t).Round(time.Millisecond))
	return int(public.Load()), nil
}

// createProblem registers a completed A+B problem with n test cases.
func createProblem(ctx context.Context, db *dynamo.DB, id string, n int) (algoitny.ProblemRef, error) {
	p := &algoitny.Problem{
		Platform: algoitny.PlatformBaekjoon, ProblemID: id, Title: "A+B " + id,
		ProblemURL: "https://www.acmicpc.net/problem/" + id, Tags: []string{"math", "implementation"},
		SolutionCode: aPlusBPython, Language: algoitny.LanguagePython,
		Constraints: "0 <= a, b <= 10^9", TimeLimitMs: 2000, MemoryLimitMB: 256, IsCompleted: true,
	}
	if err := db.CreateProblem(ctx, p, algoitny.Unlimited); err != nil {
		return algoitny.ProblemRef{}, err
	}
	cases := make([]*algoitny.TestCase, n)
	for i := range cases {
		a, b := i*7919%100000, i*104729%100000
		cases[i] = &algoitny.TestCase{Input: fmt.Sprintf("%d %d\n", a, b), Output: fmt.Sprintf("%d\n", a+b)}
	}
	return p.Ref(), db.AddTestCases(ctx, p.Ref(), cases)
}

// history is a realistic stored execution: 20 test results, a page of code.
func history(u *algoitny.User, p algoitny.ProblemRef, public bool, r *rand.Rand) *algoitny.SearchHistory {
	h := &algoitny.SearchHistory{
		UserID: u.ID, UserEmail: u.Email, Platform: p.Platform, ProblemID: p.ProblemID, ProblemTitle: "A+B " + p.ProblemID,
		Language: algoitny.LanguagePython, Code: aPlusBPython + "# " + strconv.Itoa(r.IntN(1e9)) + "\n", IsCodePublic: public,
		Verdict: algoitny.VerdictAccepted, TotalCount: 20, MaxTimeMs: 20 + r.IntN(30), MaxMemoryKB: 9000 + r.IntN(1000),
	}
	wrong := r.IntN(4) == 0
	for i := range 20 {
		tr := algoitny.TestResult{TestCaseID: fmt.Sprintf("t%02d", i), Verdict: algoitny.VerdictAccepted, TimeMs: 15 + r.IntN(20), MemoryKB: 9000}
		if wrong && i == 19 {
			tr.Verdict, tr.Output = algoitny.VerdictWrongAnswer, "41"
			h.Verdict = algoitny.VerdictWrongAnswer
		}
		h.TestResults = append(h.TestResults, tr)
	}
	for _, tr := range h.TestResults {
		if tr.Verdict == algoitny.VerdictAccepted {
			h.PassedCount++
		} else {
			h.FailedCount++
		}
	}
	return h
}

// parallel runs f(0..n-1) on workers goroutines and returns the first error.
func parallel(ctx context.Context, workers, n int, f func(i int) error) error {
	var next atomic.Int64
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					once.Do(func() { first = err; cancel() })
					return
				}
			}
		}()
	}
	wg.Wait()
	if first == nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return first
}

// sdkClient is a plain DynamoDB client configured like internal/dynamo's
// (same endpoint, credentials and checksum settings) for the direct
// baselines, with SDK middleware counting its calls.
type sdkClient struct {
	*dynamodb.Client
	calls atomic.Int64
}

func newSDKClient(ctx context.Context, endpoint string) (*sdkClient, error) {
	cfg, err := config.LoadDefaultConfig(ctx, config.WithRegion("us-east-1"),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("local", "local", "")))
	if err != nil {
		return nil, err
	}
	s := &sdkClient{}
	s.Client = dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		o.DisableValidateResponseChecksum = true
		// Calls cut short at the end of a measuring phase are expected.
		o.Logger = logging.Nop{}
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("benchCount",
				func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
					s.calls.Add(1)
					return next.HandleInitialize(ctx, in)
				}), middleware.Before)
		})
	})
	return s, nil
}

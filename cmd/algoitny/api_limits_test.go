package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
)

// The cost of a request is bounded before the work is done (issue 17).

// fragmentBomb is `{...F0}` and levels fragments each spreading the next
// twice: 2^levels fields once expanded, about 40 bytes a level.
func fragmentBomb(levels int) string {
	var b strings.Builder
	b.WriteString("{...F0}\n")
	for i := range levels {
		fmt.Fprintf(&b, "fragment F%d on Query{...F%d ...F%d}\n", i, i+1, i+1)
	}
	fmt.Fprintf(&b, "fragment F%d on Query{__typename}\n", levels)
	return b.String()
}

// TestAPIHostileDocuments: small documents whose checks used to cost
// seconds to minutes (a fragment bomb ran 53.8 s, a __typename flood
// 8.8 s) are refused at once, with the code that says why. "At once" is
// counted, not timed: the server's checks (the pre-check before
// validation, the complexity count after it) report the selections they
// visit in /metrics, and each document costs at most one per byte of it —
// where expanding every spread of the bomb visits 2^27.
func TestAPIHostileDocuments(t *testing.T) {
	t.Parallel()
	s := startAPI(t, nil)
	checked := func() float64 {
		return s.metricValue(t, "algoitny_graphql_precheck_selections_total") + s.metricValue(t, "algoitny_graphql_complexity_selections_total")
	}
	for _, c := range []struct {
		name, query, code string
	}{
		{"FragmentBomb", fragmentBomb(26), "COMPLEXITY_LIMIT_EXCEEDED"},
		{"UnknownFragmentBomb", strings.Replace(fragmentBomb(26), "Query{__typename}", "Query{...Missing}", 1), "COMPLEXITY_LIMIT_EXCEEDED"},
		{"TypenameFlood", "{" + strings.Repeat(" __typename", 4990) + "}", "SELECTION_LIMIT_EXCEEDED"},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := checked()
			r := s.query(t, "", c.query, nil)
			if r.code() != c.code || r.Status != http.StatusOK || r.Data != nil {
				t.Fatalf("%d bytes of document: %d %.300s", len(c.query), r.Status, r.Raw)
			}
			if work := checked() - before; work < 1 || work > float64(len(c.query)) {
				t.Fatalf("the checks visited %v selections for %d bytes of document; want at most one per byte", work, len(c.query))
			}
		})
	}
	// What stays allowed: fragments spread many times over, as colocated
	// fragments are, and fields selected a few times — checked in linear
	// work too, complexity count included.
	const ordinary = "{ ...A ...A ...B } fragment A on Query { plans { name ...N } } fragment B on Query { plans { ...N } } fragment N on Plan { name id }"
	before := s.metricValue(t, "algoitny_graphql_complexity_selections_total")
	r := s.query(t, "", ordinary, nil)
	if len(r.Errors) != 0 {
		t.Fatalf("ordinary fragments refused: %s", r.Raw)
	}
	if work := s.metricValue(t, "algoitny_graphql_complexity_selections_total") - before; work < 1 || work > float64(len(ordinary)) {
		t.Fatalf("the complexity count visited %v selections for %d bytes of document", work, len(ordinary))
	}
}

// randomNumbers returns n bytes of random numbers, eight to a line, as
// generated tests hold (gzip halves them: they are stored in parts).
func randomNumbers(r *rand.Rand, n int) string {
	b := make([]byte, 0, n+24)
	for i := 0; len(b) < n; i++ {
		b = strconv.AppendUint(b, r.Uint64(), 10)
		if i%8 == 7 {
			b = append(b, '\n')
		} else {
			b = append(b, ' ')
		}
	}
	return string(b[:n])
}

// TestAPITestCaseBytes: the query that returned 100 MB signed out (twelve
// published problems with one 8 MB test each) answers previews at once;
// test cases are read whole one per request, within the request's byte
// budget, checked before their data is read; a response past the budget is
// stopped with RESPONSE_TOO_LARGE.
func TestAPITestCaseBytes(t *testing.T) {
	t.Parallel()
	s := startAPI(t, func(c *Config) {
		c.ResponseBudget.SignedOut = 512 << 10
		// Megabytes of test cases are read and written here: on a loaded
		// machine longer than the default 30 s, which is not what is tested.
		c.RequestTimeout = 3 * time.Minute
	})
	alice := s.login(t, "alice@example.com")
	ctx := context.Background()
	const big = 8 << 20
	ids := make([]string, 12)
	// Twelve 8 MB test cases: a few at a time, each write retried while it
	// is answered UNAVAILABLE (a change the loaded machine could not
	// announce in time was not made: the API's clients retry it too).
	var wg sync.WaitGroup
	errs := make(chan error, len(ids))
	slots := make(chan struct{}, 3)
	for i := range ids {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			p := &algoitny.Problem{Platform: algoitny.PlatformBaekjoon, ProblemID: fmt.Sprint(5000 + i), Title: "Big", Language: algoitny.LanguagePython,
				Tags: []string{"math"}, TimeLimitMs: 1000, MemoryLimitMB: 256, IsCompleted: true}
			if err := retryUnavailable(func() error { return s.DB.CreateProblem(ctx, p, algoitny.Unlimited) }); err != nil {
				errs <- err
				return
			}
			// A quarter of random numbers (stored in parts), the rest
			// repetitive (gzipped into the item): both kinds of storage,
			// and gzip under the race detector stays quick.
			input := strings.Repeat(fmt.Sprintf("%d 1 2 3 4 5 6 7\n", i), big/16)[:big]
			if i%4 == 0 {
				input = randomNumbers(rand.New(rand.NewPCG(uint64(i), 1)), big)
			}
			tc := &algoitny.TestCase{Input: input, Output: "42\n"}
			if err := retryUnavailable(func() error { return s.DB.AddTestCases(ctx, p.Ref(), []*algoitny.TestCase{tc}) }); err != nil {
				errs <- err
				return
			}
			ids[i] = globalIDOf("TestCase", string(p.Platform), p.ProblemID, tc.ID)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	requests := func(r *gqlResult) float64 {
		n, _ := r.Extensions["dynamodbRequests"].(float64)
		return n
	}

	t.Run("ListsArePreviews", func(t *testing.T) {
		const q = `{problems(first:20){edges{node{testCases(first:1){edges{node{input output inputSize outputSize truncated}}}}}}}`
		// The first read of a large problem's partition in a second also costs
		// the partition cache one DynamoDB page of it (≤ 1 MB) to learn it
		// is too big to keep: one request more per problem. The work is
		// counted, not timed (bytes answered, DynamoDB requests made).
		first := s.query(t, "", q, nil)
		if len(first.Raw) > 128<<10 || requests(first) > 1+3*12 {
			t.Fatalf("first request: %d bytes with %v DynamoDB requests", len(first.Raw), requests(first))
		}
		r := s.query(t, "", q, nil)
		var out struct {
			Problems struct {
				Edges []struct {
					Node struct {
						TestCases struct {
							Edges []struct {
								Node struct {
									Input, Output         string
									InputSize, OutputSize int
									Truncated             bool
								}
							}
						}
					}
				}
			}
		}
		r.decode(t, &out)
		if len(out.Problems.Edges) != len(ids) {
			t.Fatalf("%d problems", len(out.Problems.Edges))
		}
		for _, e := range out.Problems.Edges {
			tc := e.Node.TestCases.Edges[0].Node
			if len(tc.Input) != 4096 || tc.InputSize != big || tc.Output != "42\n" || tc.OutputSize != 3 || !tc.Truncated {
				t.Fatalf("test case: input %d of %d bytes, output %q, truncated %t", len(tc.Input), tc.InputSize, tc.Output, tc.Truncated)
			}
		}
		// 12 previews of 4 KB, not 12 × 8 MB: one problems page, and two
		// reads of each problem with parts (its item, the end after its
		// parts; the others are in the partition cache).
		if len(r.Raw) > 128<<10 || requests(r) > 1+2*12 {
			t.Fatalf("%d bytes with %v DynamoDB requests", len(r.Raw), requests(r))
		}
	})

	t.Run("OneLargeCaseInFullPerRequest", func(t *testing.T) {
		q := `query($a: ID!, $b: ID!) { a: node(id: $a) { ... on TestCase { input truncated } } b: node(id: $b) { ... on TestCase { input truncated } } }`
		r := s.query(t, alice, q, map[string]any{"a": ids[4], "b": ids[8]})
		var out struct {
			A, B *struct {
				Input     string
				Truncated bool
			}
		}
		if err := json.Unmarshal(r.Data, &out); err != nil {
			t.Fatalf("data %s: %v", r.Data, err)
		}
		whole := out.A
		if whole == nil {
			whole = out.B
		}
		if len(r.Errors) != 1 || r.code() != "RESPONSE_TOO_LARGE" || (out.A == nil) == (out.B == nil) || len(whole.Input) != big || whole.Truncated {
			t.Fatalf("%d errors (%s), a %t b %t", len(r.Errors), r.code(), out.A != nil, out.B != nil)
		}
	})

	t.Run("BudgetCheckedBeforeReading", func(t *testing.T) {
		// 8 MB does not fit a signed-out request's 512 KB: refused from the
		// test case's stored size, its data unread.
		r := s.query(t, "", `query($id: ID!) { node(id: $id) { ... on TestCase { input } } }`, map[string]any{"id": ids[0]})
		if r.code() != "RESPONSE_TOO_LARGE" || len(r.Raw) > 4<<10 {
			t.Fatalf("%.300s", r.Raw)
		}
		// The problem and the test case's item; reading its 3.7 MB of
		// gzipped parts would take 4 more.
		if n := requests(r); n > 3 {
			t.Fatalf("the refused read made %v DynamoDB requests", n)
		}
	})

	t.Run("BudgetStopsTheResponse", func(t *testing.T) {
		// Fifteen aliases of the previews: 740 KB, over the 512 KB budget.
		var b strings.Builder
		for i := range 15 {
			fmt.Fprintf(&b, " p%d: problems(first: 20) { edges { node { testCases(first: 1) { edges { node { input } } } } } }", i)
		}
		r := s.query(t, "", "{"+b.String()+" }", nil)
		if r.code() != "RESPONSE_TOO_LARGE" || len(r.Errors) != 1 || string(r.Data) != "null" || len(r.Raw) > 4<<10 {
			t.Fatalf("%d bytes: %.300s", len(r.Raw), r.Raw)
		}
		// Signed in, the budget is 80 MB: the same query is answered.
		if r := s.query(t, alice, "{"+b.String()+" }", nil); len(r.Errors) != 0 || len(r.Raw) < 512<<10 {
			t.Fatalf("signed in: %d bytes, %.300s", len(r.Raw), r.Raw)
		}
	})
}

// retryUnavailable runs write until it is not refused UNAVAILABLE (which
// the API documents as "nothing was done, try again later"), ten times at
// most, waiting a little longer each time.
func retryUnavailable(write func() error) error {
	for i := 1; ; i++ {
		err := write()
		if !algoitny.IsCode(err, algoitny.EUNAVAILABLE) || i == 10 {
			return err
		}
		time.Sleep(time.Duration(i) * 200 * time.Millisecond)
	}
}

// metricValue reads one unlabelled metric from /metrics.
func (s *apiServer) metricValue(t testing.TB, name string) float64 {
	t.Helper()
	resp, err := http.Get("http://" + s.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			var f float64
			_, _ = fmt.Sscan(v, &f)
			return f
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// TestAPIAuthenticationReadsCounted: extensions.dynamodbRequests (dev mode)
// counts the reads that authenticated the request, once per request.
func TestAPIAuthenticationReadsCounted(t *testing.T) {
	t.Parallel()
	s := startAPI(t, nil)
	// A session is read from DynamoDB, in one request, on every use.
	token := s.login(t, "alice@example.com")
	count := func(r *gqlResult) float64 {
		n, ok := r.Extensions["dynamodbRequests"].(float64)
		if !ok {
			t.Fatalf("no dynamodbRequests: %s", r.Raw)
		}
		return n
	}
	if n := count(s.query(t, "", "{ __typename }", nil)); n != 0 {
		t.Fatalf("anonymous { __typename }: %v requests", n)
	}
	signedIn := count(s.query(t, token, "{ __typename }", nil))
	if signedIn != 1 {
		t.Fatalf("signed-in { __typename }: %v requests; want the session's one", signedIn)
	}
	// A batch authenticates once: the first operation counts it.
	r := s.post(t, token, "application/json", []byte(`[{"query":"{ __typename }"},{"query":"{ __typename }"}]`), nil)
	var batch []struct {
		Extensions struct{ DynamodbRequests float64 }
	}
	if err := json.Unmarshal(r.Raw, &batch); err != nil || len(batch) != 2 {
		t.Fatalf("batch: %s", r.Raw)
	}
	if a, b := batch[0].Extensions.DynamodbRequests, batch[1].Extensions.DynamodbRequests; a < 1 || b != 0 {
		t.Fatalf("batch: %v and %v requests; want the session's reads (at least 1) and 0", a, b)
	}
}

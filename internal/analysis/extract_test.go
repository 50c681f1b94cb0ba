package analysis_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/analysis"
)

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	algoitnytest.OK(t, err)
	return b
}

// pageCases are saved problem pages and what ParseProblemPage must read from them.
var pageCases = []struct {
	name    string
	fixture string
	url     string
	want    analysis.ExtractedProblem
	// Text fields are checked by excerpt.
	description, input, output string
}{
	{
		name: "Baekjoon", fixture: "baekjoon_1920.html", url: "https://www.acmicpc.net/problem/1920",
		want: analysis.ExtractedProblem{
			Platform: algoitny.PlatformBaekjoon, ProblemID: "1920", Title: "수 찾기", URL: "https://www.acmicpc.net/problem/1920",
			Constraints: "1 ≤ N ≤ 100,000\n1 ≤ M ≤ 100,000", TimeLimitMs: 1000, MemoryLimitMB: 128,
			Samples: []analysis.Sample{{Input: "5\n4 1 5 2 3\n5\n1 3 7 9 5\n", Output: "1\n1\n0\n0\n1\n"}},
			Tags:    []string{"자료 구조", "정렬", "이분 탐색"},
		},
		description: "N개의 정수 A[1], A[2], …, A[N]이 주어져 있을 때",
		input:       "모든 정수의 범위는 -2^31 보다 크거나 같고 2^31보다 작다.",
		output:      "M개의 줄에 답을 출력한다.",
	},
	{
		name: "BaekjoonWithoutURL", fixture: "baekjoon_1920.html", url: "",
		want: analysis.ExtractedProblem{
			Platform: algoitny.PlatformBaekjoon, ProblemID: "1920", Title: "수 찾기", URL: "https://www.acmicpc.net/problem/1920",
			Constraints: "1 ≤ N ≤ 100,000\n1 ≤ M ≤ 100,000", TimeLimitMs: 1000, MemoryLimitMB: 128,
			Samples: []analysis.Sample{{Input: "5\n4 1 5 2 3\n5\n1 3 7 9 5\n", Output: "1\n1\n0\n0\n1\n"}},
			Tags:    []string{"자료 구조", "정렬", "이분 탐색"},
		},
	},
	{
		name: "CodeforcesMathJaxAndLinePerDiv", fixture: "codeforces_1850B.html", url: "https://codeforces.com/problemset/problem/1850/B",
		want: analysis.ExtractedProblem{
			Platform: algoitny.PlatformCodeforces, ProblemID: "1850B", Title: "Ten Words of Wisdom", URL: "https://codeforces.com/problemset/problem/1850/B",
			Constraints: "1 ≤ t ≤ 100\n1 ≤ n ≤ 50\n1 ≤ a_i, b_i ≤ 50\n" +
				"Additional constraints on the input: in each test case, at least one value of i satisfies a_i ≤ 10, and all values of b_i are distinct",
			TimeLimitMs: 1000, MemoryLimitMB: 256,
			Samples: []analysis.Sample{{Input: "3\n5\n7 2\n12 5\n9 3\n9 4\n10 1\n3\n1 2\n3 4\n5 6\n1\n1 43\n", Output: "4\n3\n1\n"}},
		},
		description: "there are n participants numbered from 1 to n",
		input:       "The first line contains a single integer t (1 ≤ t ≤ 100) — the number of test cases.",
		output:      "output a single line containing one integer x (1 ≤ x ≤ n)",
	},
	{
		name: "CodeforcesClassic", fixture: "codeforces_4A.html", url: "https://codeforces.com/contest/4/problem/A",
		want: analysis.ExtractedProblem{
			Platform: algoitny.PlatformCodeforces, ProblemID: "4A", Title: "Watermelon", URL: "https://codeforces.com/contest/4/problem/A",
			Constraints: "1 ≤ w ≤ 100", TimeLimitMs: 1000, MemoryLimitMB: 64,
			Samples: []analysis.Sample{{Input: "8\n", Output: "YES\n"}},
		},
		description: "the scales showed w kilos",
		input:       "integer number w (1 ≤ w ≤ 100)",
		output:      "Print YES, if the boys can divide",
	},
	{
		name: "AtCoderEnglishPart", fixture: "atcoder_abc086_a.html", url: "https://atcoder.jp/contests/abc086/tasks/abc086_a",
		want: analysis.ExtractedProblem{
			Platform: algoitny.PlatformAtCoder, ProblemID: "abc086_a", Title: "Product", URL: "https://atcoder.jp/contests/abc086/tasks/abc086_a",
			Constraints: "1 ≤ a,b ≤ 10000\na and b are integers.", TimeLimitMs: 2000, MemoryLimitMB: 256,
			Samples: []analysis.Sample{{Input: "3 4\n", Output: "Even\n"}, {Input: "1 21\n", Output: "Odd\n"}},
		},
		description: "Determine whether the product of a and b is even or odd.",
		input:       "in the following format:\na b",
		output:      "If the product is odd, print Odd",
	},
}

func TestParseProblemPage(t *testing.T) {
	t.Parallel()
	for _, c := range pageCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got, err := analysis.ParseProblemPage(analysis.ExtractRequest{URL: c.url, HTML: readFixture(t, c.fixture)})
			algoitnytest.OK(t, err)
			requireContains(t, got.Description, c.description)
			requireContains(t, got.InputSpec, c.input)
			requireContains(t, got.OutputSpec, c.output)
			got.Description, got.InputSpec, got.OutputSpec = "", "", ""
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got  %#v\nwant %#v", got, c.want)
			}
		})
	}

	t.Run("CodeforcesTagsAndStatement", func(t *testing.T) {
		t.Parallel()
		page := strings.Replace(string(readFixture(t, "codeforces_4A.html")), "</body>",
			`<div class="roundbox sidebox"><span class="tag-box" title="Brute force"> brute force </span><span class="tag-box"> math </span>`+
				`<span class="tag-box" title="Difficulty">*800</span><span class="tag-box">math</span></div></body>`, 1)
		got, err := analysis.ParseProblemPage(analysis.ExtractRequest{URL: "https://codeforces.com/contest/4/problem/A", HTML: []byte(page)})
		algoitnytest.OK(t, err)
		if !reflect.DeepEqual(got.Tags, []string{"brute force", "math"}) {
			t.Fatalf("Tags = %q", got.Tags)
		}
		st := got.Statement()
		requireContains(t, st, "the scales showed w kilos", "\n\nInput\nThe first (and the only) input line", "\n\nOutput\nPrint YES")
	})

	t.Run("AtCoderJapaneseOnly", func(t *testing.T) {
		t.Parallel()
		page := string(readFixture(t, "atcoder_abc086_a.html"))
		page = page[:strings.Index(page, `<span class="lang-en">`)] + "</span></div></div></div></div></body></html>"
		got, err := analysis.ParseProblemPage(analysis.ExtractRequest{URL: "https://atcoder.jp/contests/abc086/tasks/abc086_a", HTML: []byte(page)})
		algoitnytest.OK(t, err)
		if got.Constraints != "1 ≤ a,b ≤ 10000\na,b は整数" {
			t.Fatalf("Constraints = %q", got.Constraints)
		}
		if len(got.Samples) != 1 || got.Samples[0] != (analysis.Sample{Input: "3 4\n", Output: "Even\n"}) {
			t.Fatalf("Samples = %#v", got.Samples)
		}
		requireContains(t, got.Description, "積が偶数か奇数か判定してください")
	})

	t.Run("ExtractedConstraintsFeedTheGenerator", func(t *testing.T) {
		t.Parallel()
		p, err := analysis.ParseProblemPage(analysis.ExtractRequest{URL: "https://codeforces.com/problemset/problem/1850/B", HTML: readFixture(t, "codeforces_1850B.html")})
		algoitnytest.OK(t, err)
		g, err := analysis.Generate(analysis.GeneratorRequest{Problem: algoitny.Problem{Title: p.Title, Constraints: p.Constraints}, Samples: p.Samples})
		algoitnytest.OK(t, err)
		requireContains(t, g.Notes, "checked against the sample input", "n lines: a_i b_i")
	})

	t.Run("ErrUnknownSite", func(t *testing.T) {
		t.Parallel()
		_, err := analysis.ParseProblemPage(analysis.ExtractRequest{URL: "https://example.com/problem/1", HTML: []byte("<html><body><h1>Hello</h1></body></html>")})
		algoitnytest.ErrCode(t, err, algoitny.EINVALID)
	})

	t.Run("ErrNoTitle", func(t *testing.T) {
		t.Parallel()
		_, err := analysis.ParseProblemPage(analysis.ExtractRequest{URL: "https://www.acmicpc.net/problem/99999", HTML: []byte("<html><body><div class=\"error\">404 Not Found</div></body></html>")})
		e := algoitnytest.ErrCode(t, err, algoitny.EINVALID)
		requireContains(t, e.Message, "no problem title")
	})

	t.Run("MalformedHTMLDoesNotPanic", func(t *testing.T) {
		t.Parallel()
		for _, page := range []string{"", "<", "<div", "<!--", "</", "<span id=\"problem_title\">A<b>B", "<a href='x>y'>", "<pre id=\"sample-input-1\">1 2"} {
			_, _ = analysis.ParseProblemPage(analysis.ExtractRequest{URL: "https://www.acmicpc.net/problem/1000", HTML: []byte(page)})
		}
	})
}

package practice

import (
	"context"
	"slices"
	"strconv"
	"strings"
)

// shrink makes the failing input c smaller while the budget lasts: first
// through the generator (smaller numeric arguments, each with the same
// seed and then a fresh one), then — only with a validator, which decides
// what is still an input — by removing lines and tokens from it.
func (s *searcher) shrink(ctx context.Context, c *candidate) (*candidate, error) {
	s.step = "shrinking"
	c, err := s.shrinkArgs(ctx, c)
	if err != nil || s.progs.val == nil {
		return c, err
	}
	if c, err = s.shrinkLines(ctx, c); err != nil {
		return c, err
	}
	return s.shrinkTokens(ctx, c)
}

// shrinkArgs lowers each numeric generator argument but the seed, the
// smallest values first, keeping any that still fails without a longer
// input.
func (s *searcher) shrinkArgs(ctx context.Context, c *candidate) (*candidate, error) {
	for i := range c.shape.args {
		if i == c.shape.seedAt {
			continue
		}
		for lowered := true; lowered; {
			lowered = false
			v, err := strconv.ParseInt(c.shape.args[i], 10, 64)
			if err != nil {
				break
			}
			for _, w := range smaller(v) {
				sh := c.shape
				sh.args = slices.Clone(sh.args)
				sh.args[i] = strconv.FormatInt(w, 10)
				next, err := s.tryShape(ctx, sh, c)
				if err != nil || next != nil {
					if next != nil {
						c, lowered = next, true
						s.shrinks++
					}
					if err != nil {
						return c, err
					}
					break
				}
				if s.exhausted(ctx) {
					return c, nil
				}
			}
		}
	}
	return c, nil
}

// tryShape generates sh with c's seed, then with a fresh one, and returns
// the first that fails with an input no longer than c's.
func (s *searcher) tryShape(ctx context.Context, sh shape, c *candidate) (*candidate, error) {
	for _, seed := range []int64{c.seed, 0} {
		if s.exhausted(ctx) {
			return nil, nil
		}
		if seed == 0 {
			seed = s.freshSeed()
		}
		next, err := s.generate(ctx, sh, seed)
		if err != nil {
			return nil, err
		}
		if next != nil && len(next.input) <= len(c.input) {
			return next, nil
		}
	}
	return nil, nil
}

// smaller are the values tried in place of v, ascending: 1, v/10, v/4,
// v/2, v-1 (those between 1 and v).
func smaller(v int64) []int64 {
	var out []int64
	for _, w := range []int64{1, v / 10, v / 4, v / 2, v - 1} {
		if w >= 1 && w < v && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	slices.Sort(out)
	return out
}

// lines is an input split into lines for shrinking. When its first line
// is a count of the lines after it (a "T test cases" header), body holds
// those and the count is rewritten as lines are removed.
type lines struct {
	counted bool
	head    string
	body    []string
}

func splitLines(input string) lines {
	all := strings.SplitAfter(input, "\n")
	if all[len(all)-1] == "" {
		all = all[:len(all)-1]
	}
	if len(all) > 1 {
		if n, err := strconv.Atoi(strings.TrimSpace(all[0])); err == nil && n == len(all)-1 {
			return lines{counted: true, head: all[0], body: all[1:]}
		}
	}
	return lines{body: all}
}

// join is the input of body.
func (l lines) join(body []string) string {
	var b strings.Builder
	if l.counted {
		b.WriteString(strconv.Itoa(len(body)) + "\n")
	}
	for _, line := range body {
		b.WriteString(line)
	}
	return b.String()
}

// shrinkLines removes chunks of lines (halves, then quarters, … single
// lines), keeping each removal after which the validator accepts the
// input and the code still fails on it.
func (s *searcher) shrinkLines(ctx context.Context, c *candidate) (*candidate, error) {
	l := splitLines(c.input)
	body := l.body
	for chunk := len(body) / 2; chunk >= 1; chunk = min(chunk/2, len(body)/2) {
		for start := 0; start < len(body) && len(body) > 1; {
			if s.exhausted(ctx) {
				return c, nil
			}
			end := min(start+chunk, len(body))
			cand := slices.Concat(body[:start], body[end:])
			next, err := s.shrunk(ctx, c, l.join(cand))
			if err != nil {
				return c, err
			}
			if next == nil {
				start = end
				continue
			}
			c, body = next, cand
		}
	}
	return c, nil
}

// shrinkTokens removes single tokens from each line, keeping each
// removal the validator accepts and the code still fails on.
func (s *searcher) shrinkTokens(ctx context.Context, c *candidate) (*candidate, error) {
	l := splitLines(c.input)
	body := slices.Clone(l.body)
	for i := range body {
		for j := 0; ; {
			tokens := strings.Fields(body[i])
			if j >= len(tokens) || len(tokens) < 2 {
				break
			}
			if s.exhausted(ctx) {
				return c, nil
			}
			cand := slices.Clone(body)
			cand[i] = strings.Join(slices.Delete(tokens, j, j+1), " ") + "\n"
			next, err := s.shrunk(ctx, c, l.join(cand))
			if err != nil {
				return c, err
			}
			if next == nil {
				j++
				continue
			}
			c, body = next, cand
		}
	}
	return c, nil
}

// shrunk checks input, made by shrinking c, and returns it as c's
// successor if the code still fails on it.
func (s *searcher) shrunk(ctx context.Context, c *candidate, input string) (*candidate, error) {
	if len(input) >= len(c.input) {
		return nil, nil
	}
	next, err := s.check(ctx, input)
	if next == nil || err != nil {
		return nil, err
	}
	next.shape, next.seed, next.shrunk = c.shape, c.seed, true
	s.shrinks++
	return next, nil
}

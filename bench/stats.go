package main

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// samples collects latencies from concurrent clients.
type samples struct {
	mu  sync.Mutex
	d   []time.Duration
	ops int           // completed operations (= len(d) unless only counted)
	err int           // failed operations
	dur time.Duration // wall time the operations were measured over
}

func (s *samples) add(d time.Duration) {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.ops++
	s.mu.Unlock()
}

func (s *samples) fail() {
	s.mu.Lock()
	s.err++
	s.mu.Unlock()
}

// merge adds o's samples and time to s.
func (s *samples) merge(o *samples) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, o.d...)
	s.ops += o.ops
	s.err += o.err
	s.dur += o.dur
}

// quantile returns the q-quantile (nearest rank) of the samples, 0 if none.
func (s *samples) quantile(q float64) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return quantile(s.d, q)
}

func quantile(d []time.Duration, q float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	sorted := slices.Clone(d)
	slices.Sort(sorted)
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// throughput is operations per second over the measured wall time.
func (s *samples) throughput() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.dur <= 0 {
		return 0
	}
	return float64(s.ops) / s.dur.Seconds()
}

// row is one line of the result table.
type row struct {
	scenario string
	baseline string // what the baseline is, with its numbers
	p50, p99 string
	thr      string // throughput
	ratio    string
	target   string
	pass     *bool // nil: information only
	note     string
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000)
}

func ratioOf(a, b time.Duration) float64 {
	if b <= 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func ptr[T any](v T) *T { return &v }

func verdict(r row) string {
	switch {
	case r.pass == nil:
		return "info"
	case *r.pass:
		return "PASS"
	default:
		return "FAIL"
	}
}

// table renders rows as a Markdown table (also readable on a terminal).
func table(rows []row) string {
	var b strings.Builder
	b.WriteString("| scenario | baseline (same run) | p50 | p99 | throughput | ratio | target | result |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n",
			cell(r.scenario), cell(r.baseline), cell(r.p50), cell(r.p99), cell(r.thr), cell(r.ratio), cell(r.target), verdict(r))
	}
	return b.String()
}

func cell(s string) string {
	if s == "" {
		return "—"
	}
	return strings.ReplaceAll(s, "|", "\\|")
}

// notes lists the rows' notes under the table.
func notes(rows []row) string {
	var b strings.Builder
	for _, r := range rows {
		if r.note != "" {
			fmt.Fprintf(&b, "- **%s**: %s\n", r.scenario, r.note)
		}
	}
	return b.String()
}

// us formats a duration in microseconds ("84.2 µs").
func us(d time.Duration) string {
	return fmt.Sprintf("%.1f µs", float64(d.Nanoseconds())/1e3)
}

package problempkg

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// TestOutcome is how a submission did on one test, in package terms.
type TestOutcome struct {
	Outcome Outcome
	// Score is an absolute score the output validator gave (ICPC
	// score.txt); nil when it gave none.
	Score *float64
	// Fraction is the share of the test's points a checker gave (testlib's
	// quitp, ICPC score_multiplier.txt); nil when it gave none.
	Fraction *float64
	// Message is the judge's message for the test (a checker's comment,
	// why a program failed), shown when the test breaks a rule.
	Message string
}

// Result is a submission's verdict and score over the whole package.
type Result struct {
	// Outcome is the submission's verdict: AC, or the failure the package's
	// rules single out (the first in judging order unless its groups say
	// otherwise).
	Outcome Outcome
	// Score is the submission's score (scoring packages; for pass-fail ones
	// 100 when accepted, else 0).
	Score float64
}

// Evaluate aggregates per-test outcomes (indexed like Tests) into the
// submission's result, as the package's format defines it: an ICPC
// package through its test data tree (the legacy grader, or the 2025-09
// scoring), a Polygon package through its groups.
func (p *Package) Evaluate(outcomes []TestOutcome) Result {
	if p.Data != nil && !p.Scoring2025 {
		out, score := p.evalLegacy(p.Data, outcomes)
		if !p.Scoring {
			score = passFailScore(out)
		}
		return Result{Outcome: out, Score: score}
	}
	out := firstFailure(outcomes)
	if !p.Scoring {
		return Result{Outcome: out, Score: passFailScore(out)}
	}
	if p.Data != nil {
		return Result{Outcome: out, Score: p.eval2025(outcomes)}
	}
	return Result{Outcome: out, Score: p.evalGroups(outcomes)}
}

// StopsAtFirstFailure says a submission's result is decided by its tests
// up to its first failure: a legacy ICPC pass-fail package whose test data
// groups all stop judging at a rejection (on_reject: break, the default).
func (p *Package) StopsAtFirstFailure() bool {
	if p.Data == nil || p.Scoring2025 || p.Scoring {
		return false
	}
	var breaks func(g *DataGroup) bool
	breaks = func(g *DataGroup) bool {
		if g.OnReject == "continue" {
			return false
		}
		for _, it := range g.Items {
			if it.Group != nil && !breaks(it.Group) {
				return false
			}
		}
		return true
	}
	return breaks(p.Data)
}

func passFailScore(o Outcome) float64 {
	if o == AC {
		return 100
	}
	return 0
}

// firstFailure is the first outcome that is not AC (a judge error first of
// all), or AC.
func firstFailure(outcomes []TestOutcome) Outcome {
	for _, o := range outcomes {
		if o.Outcome == JE {
			return JE
		}
	}
	for _, o := range outcomes {
		if o.Outcome != AC {
			return o.Outcome
		}
	}
	return AC
}

// graded is one sub-result handed to a group's grader.
type graded struct {
	outcome Outcome
	score   float64
}

// evalLegacy grades the group g as the legacy format's default grader
// does: items in order, stopping at the first rejected one when on_reject
// is break; a test scores its validator's score.txt, else the group's
// accept_score or reject_score; the group's verdict and score come from
// its grader_flags.
func (p *Package) evalLegacy(g *DataGroup, outcomes []TestOutcome) (Outcome, float64) {
	var subs []graded
	for _, it := range g.Items {
		var r graded
		if it.Group != nil {
			r.outcome, r.score = p.evalLegacy(it.Group, outcomes)
		} else {
			o := outcomes[it.Test]
			r.outcome, r.score = o.Outcome, g.RejectScore
			switch {
			case o.Outcome == AC && o.Score != nil:
				r.score = *o.Score
			case o.Outcome == AC:
				r.score = g.AcceptScore
			}
		}
		subs = append(subs, r)
		if r.outcome != AC && g.OnReject != "continue" {
			break
		}
	}
	return grade(subs, g.GraderFlags)
}

// verdictOrder is the default grader's worst_error order, worst first.
var verdictOrder = []Outcome{JE, "IF", RTE, MLE, TLE, OLE, WA, PE, AC}

// grade is the legacy format's default grader over sub-results.
func grade(subs []graded, flags []string) (Outcome, float64) {
	if len(subs) == 0 {
		return AC, 0
	}
	for _, s := range subs {
		if s.outcome == JE {
			return JE, 0
		}
	}
	verdictMode, scoreMode := "worst_error", "sum"
	ignoreSample, anyAccepted := false, false
	for _, f := range flags {
		switch f {
		case "worst_error", "no_errors", "first_error", "always_accept":
			verdictMode = f
		case "sum", "avg", "min", "max":
			scoreMode = f
		case "ignore_sample":
			ignoreSample = true
		case "accept_if_any_accepted":
			anyAccepted = true
		}
	}
	if ignoreSample && len(subs) <= 2 {
		subs = subs[len(subs)-1:]
	}
	return aggregateVerdict(subs, verdictMode, anyAccepted), aggregateScore(subs, scoreMode)
}

func aggregateVerdict(subs []graded, mode string, anyAccepted bool) Outcome {
	if anyAccepted && slices.ContainsFunc(subs, func(s graded) bool { return s.outcome == AC }) {
		return AC
	}
	switch mode {
	case "always_accept":
		return AC
	case "first_error":
		for _, s := range subs {
			if s.outcome != AC {
				return s.outcome
			}
		}
		return AC
	}
	worst := len(verdictOrder) - 1
	for _, s := range subs {
		if i := slices.Index(verdictOrder, s.outcome); i >= 0 && i < worst {
			worst = i
		}
	}
	return verdictOrder[worst]
}

func aggregateScore(subs []graded, mode string) float64 {
	scores := make([]float64, len(subs))
	for i, s := range subs {
		scores[i] = s.score
	}
	switch mode {
	case "min":
		return slices.Min(scores)
	case "max":
		return slices.Max(scores)
	}
	sum := 0.0
	for _, s := range scores {
		sum += s
	}
	if mode == "avg" {
		return sum / float64(len(scores))
	}
	return sum
}

// eval2025 is the 2025-09 format's score: data/secret's, from its test
// data groups (or its tests), each scored by its aggregation, max_score
// and require_pass; samples score nothing.
func (p *Package) eval2025(outcomes []TestOutcome) float64 {
	secret := p.dataGroup("secret")
	if secret == nil {
		return 0
	}
	max := secret.MaxScore
	if max < 0 {
		max = 100 // the default; an unbounded secret is not supported
	}
	agg := cmpOr(secret.Aggregation, "sum")
	var groups []*DataGroup
	for _, it := range secret.Items {
		if it.Group != nil {
			groups = append(groups, it.Group)
		}
	}
	if len(groups) == 0 {
		return p.groupScore2025(secret, agg, max, outcomes)
	}
	var scores []float64
	for _, g := range groups {
		gmax := g.MaxScore
		scores = append(scores, p.groupScore2025(g, cmpOr(g.Aggregation, "pass-fail"), gmax, outcomes))
	}
	switch agg {
	case "min":
		return slices.Min(scores)
	case "pass-fail":
		if p.allAccepted(secret, outcomes) {
			return max
		}
		return 0
	}
	sum := 0.0
	for _, s := range scores {
		sum += s
	}
	return sum
}

// groupScore2025 scores one group (or secret without groups).
func (p *Package) groupScore2025(g *DataGroup, agg string, max float64, outcomes []TestOutcome) float64 {
	for _, dep := range g.RequirePass {
		if d := p.dataGroup(dep); d != nil && !p.allAccepted(d, outcomes) {
			return 0
		}
	}
	tests := p.testsUnder(g)
	if agg == "pass-fail" {
		if p.allAccepted(g, outcomes) && max > 0 {
			return max
		}
		return 0
	}
	if len(tests) == 0 {
		return 0
	}
	perTest := max
	if agg == "sum" && max >= 0 {
		perTest = max / float64(len(tests))
	}
	scores := make([]float64, 0, len(tests))
	for _, i := range tests {
		o := outcomes[i]
		s := 0.0
		if o.Outcome == AC {
			switch {
			case o.Score != nil:
				s = *o.Score
			case o.Fraction != nil && perTest >= 0:
				s = *o.Fraction * perTest
			case perTest >= 0:
				s = perTest
			}
		}
		scores = append(scores, s)
	}
	if agg == "min" {
		return slices.Min(scores)
	}
	sum := 0.0
	for _, s := range scores {
		sum += s
	}
	return sum
}

// evalGroups is a Polygon package's score: its groups' points, each
// earned as its points policy says (Group.Mode), or the tests' own points
// when it has no groups.
func (p *Package) evalGroups(outcomes []TestOutcome) float64 {
	total := 0.0
	passed := map[string]bool{}
	for _, g := range p.Groups {
		ok := true
		for i, t := range p.Tests {
			if t.Group == g.Name && outcomes[i].Outcome != AC {
				ok = false
			}
		}
		passed[g.Name] = ok
	}
	for _, g := range p.Groups {
		if !dependenciesPassed(g, passed) {
			continue
		}
		total += p.groupPoints(g, outcomes)
	}
	if len(p.Groups) == 0 {
		for i, t := range p.Tests {
			total += t.Points * credit(outcomes[i])
		}
	}
	return total
}

func dependenciesPassed(g Group, passed map[string]bool) bool {
	for _, d := range g.DependsOn {
		if !passed[d] {
			return false
		}
	}
	return true
}

// groupPoints is what a group earns: all its points when every test is
// accepted (ScoreAll); each test's points times its credit (ScoreSum,
// tests with points of their own) or an even share of the group's.
func (p *Package) groupPoints(g Group, outcomes []TestOutcome) float64 {
	var idx []int
	for i, t := range p.Tests {
		if t.Group == g.Name {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return 0
	}
	switch g.Mode {
	case ScoreAll:
		for _, i := range idx {
			if outcomes[i].Outcome != AC {
				return 0
			}
		}
		return g.Points
	case ScoreMin:
		m := 1.0
		for _, i := range idx {
			m = math.Min(m, credit(outcomes[i]))
		}
		return g.Points * m
	}
	sum := 0.0
	for _, i := range idx {
		pts := p.Tests[i].Points
		if pts == 0 {
			pts = g.Points / float64(len(idx))
		}
		sum += pts * credit(outcomes[i])
	}
	return sum
}

// credit is the share of a test's points an outcome earns.
func credit(o TestOutcome) float64 {
	switch {
	case o.Outcome != AC && o.Fraction == nil:
		return 0
	case o.Fraction != nil:
		return *o.Fraction
	}
	return 1
}

// dataGroup finds the data group named name ("sample", "secret",
// "secret/group1"); nil when there is none.
func (p *Package) dataGroup(name string) *DataGroup {
	var find func(g *DataGroup) *DataGroup
	find = func(g *DataGroup) *DataGroup {
		if g.Name == name {
			return g
		}
		for _, it := range g.Items {
			if it.Group != nil {
				if f := find(it.Group); f != nil {
					return f
				}
			}
		}
		return nil
	}
	if p.Data == nil {
		return nil
	}
	return find(p.Data)
}

// testsUnder lists the tests in g and below, in judging order.
func (p *Package) testsUnder(g *DataGroup) []int {
	var out []int
	for _, it := range g.Items {
		if it.Group != nil {
			out = append(out, p.testsUnder(it.Group)...)
		} else {
			out = append(out, it.Test)
		}
	}
	return out
}

func (p *Package) allAccepted(g *DataGroup, outcomes []TestOutcome) bool {
	for _, i := range p.testsUnder(g) {
		if outcomes[i].Outcome != AC {
			return false
		}
	}
	return true
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// flattenGroups derives the flat groups a stored problem scores by
// (subtasks: Groups, Tests' Group and Points, MaxScore) from an ICPC
// package's test data tree. The legacy grader's min groups become
// all-or-nothing groups worth their accept_score, its sum groups groups
// worth the sum of their tests' scores; anything the flat view cannot say
// exactly (avg or max aggregation, scores from the output validator) is a
// warning.
func flattenGroups(pkg *Package) {
	if pkg.Scoring2025 {
		flatten2025(pkg)
	} else {
		flattenLegacy(pkg)
	}
	pkg.MaxScore = 0
	for _, g := range pkg.Groups {
		pkg.MaxScore += g.Points
	}
}

func flattenLegacy(pkg *Package) {
	ignoreSample := slices.Contains(pkg.Data.GraderFlags, "ignore_sample")
	for _, it := range pkg.Data.Items {
		g := it.Group
		if g == nil || (g.Name == "sample" && (ignoreSample || g.AcceptScore == 0)) {
			continue
		}
		if g.Name == "sample" || !hasSubgroups(g) {
			pkg.Groups = append(pkg.Groups, legacyGroup(pkg, g, g.Name))
			continue
		}
		if mode := scoreFlag(g.GraderFlags); mode != "sum" && !slices.Contains(g.GraderFlags, "accept_if_any_accepted") {
			pkg.Warnings = append(pkg.Warnings, fmt.Sprintf("data/%s aggregates its groups by %s: stored problems add them up", g.Name, mode))
		}
		for _, sub := range g.Items {
			if sub.Group != nil {
				pkg.Groups = append(pkg.Groups, legacyGroup(pkg, sub.Group, path2name(sub.Group.Name)))
			}
		}
	}
}

func legacyGroup(pkg *Package, g *DataGroup, name string) Group {
	tests := pkg.testsUnder(g)
	for _, i := range tests {
		pkg.Tests[i].Group = name
		pkg.Tests[i].Points = g.AcceptScore
	}
	out := Group{Name: name, Mode: ScoreSum, Points: g.AcceptScore * float64(len(tests))}
	switch mode := scoreFlag(g.GraderFlags); mode {
	case "min":
		out.Mode, out.Points = ScoreMin, g.AcceptScore
	case "sum":
	default:
		pkg.Warnings = append(pkg.Warnings, fmt.Sprintf("data/%s aggregates its tests by %s: stored problems add them up", g.Name, mode))
	}
	return out
}

func flatten2025(pkg *Package) {
	secret := pkg.dataGroup("secret")
	if secret == nil {
		return
	}
	max := secret.MaxScore
	if max < 0 {
		max = 100
	}
	var groups []*DataGroup
	for _, it := range secret.Items {
		if it.Group != nil {
			groups = append(groups, it.Group)
		}
	}
	if len(groups) == 0 {
		groups = []*DataGroup{secret}
		secret.MaxScore = max
		if secret.Aggregation == "" {
			secret.Aggregation = "sum"
		}
	}
	for _, g := range groups {
		name := path2name(g.Name)
		for _, i := range pkg.testsUnder(g) {
			pkg.Tests[i].Group = name
			pkg.Tests[i].Points = 0
		}
		out := Group{Name: name, Points: math.Max(g.MaxScore, 0), Mode: ScoreAll}
		switch g.Aggregation {
		case "sum":
			out.Mode = ScoreSum
		case "min":
			out.Mode = ScoreMin
		}
		for _, dep := range g.RequirePass {
			out.DependsOn = append(out.DependsOn, path2name(dep))
		}
		pkg.Groups = append(pkg.Groups, out)
	}
}

// path2name is a group's name in the flat view: its directory's name.
func path2name(p string) string {
	if i := strings.LastIndex(p, "/"); i >= 0 {
		return p[i+1:]
	}
	return p
}

func hasSubgroups(g *DataGroup) bool {
	return slices.ContainsFunc(g.Items, func(it DataItem) bool { return it.Group != nil })
}

func scoreFlag(flags []string) string {
	mode := "sum"
	for _, f := range flags {
		if f == "sum" || f == "avg" || f == "min" || f == "max" {
			mode = f
		}
	}
	return mode
}

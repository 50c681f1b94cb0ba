package problempkg

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/judge"
)

// ImportOptions configure Import.
type ImportOptions struct {
	Options
	// Platform and ProblemID name the new problem; the defaults are CUSTOM
	// and the package's name.
	Platform  algoitny.Platform
	ProblemID string
	// RequireVerified refuses a package whose submissions do not all get
	// what their folders or tags require.
	RequireVerified bool
}

// Imported is a package as a problem of the judge: what
// problems.Service.Create stores.
type Imported struct {
	Problem  algoitny.Problem
	Tests    []*algoitny.TestCase
	Subtasks []algoitny.Subtask
	// Report is the verification the import ran.
	Report *Report
	// Notes say what of the package the problem does not keep.
	Notes []string
}

// Import verifies the package (as Verify does: generated tests made,
// every input validated, the time limit stated or inferred) and turns it
// into a problem: its tests with their answers (samples first), its
// groups as subtasks, its checker or interactor, its reference solution,
// and — for Polygon packages whose generated tests come from one
// generator — the generator, validator and each test's arguments, so that
// regenerateTests can rebuild them. A package with faults (test inputs
// its validators refuse, tests that do not regenerate byte for byte,
// programs that do not compile), and with RequireVerified one whose
// submissions do not all verify, is refused with EINVALID and the report.
func Import(ctx context.Context, pkg *Package, e *judge.Engine, opts ImportOptions) (*Imported, error) {
	report, v, err := verifyKeeping(ctx, pkg, e, opts.Options)
	if err != nil {
		return nil, err
	}
	defer v.close()
	imp := &Imported{Report: report}
	switch {
	case len(report.Errors) > 0:
		return imp, algoitny.Invalid("package", "the package has faults: %s", strings.Join(report.Errors, "; "))
	case opts.RequireVerified && !report.OK():
		return imp, algoitny.Invalid("package", "not every submission gets what its folder or tag requires: %s", unverified(report))
	}
	if err := v.toProblem(imp, opts); err != nil {
		return imp, err
	}
	return imp, nil
}

// verifyKeeping is Verify, keeping the verifier (its test files) open.
func verifyKeeping(ctx context.Context, pkg *Package, e *judge.Engine, opts Options) (*Report, *verifier, error) {
	if opts.ProbeTime <= 0 {
		opts.ProbeTime = time.Minute
	}
	v := &verifier{pkg: pkg, e: e, opts: opts, report: &Report{Problem: pkg.Name, Format: pkg.Format,
		Skipped: append([]Skipped{}, pkg.Skipped...), Warnings: append([]string{}, pkg.Warnings...)}}
	v.chooseLanguages()
	for _, step := range []func(context.Context) error{v.build, v.prepareTests, v.judgeAll} {
		if err := step(ctx); err != nil {
			v.close()
			return v.report, nil, err
		}
	}
	return v.report, v, nil
}

func unverified(r *Report) string {
	var paths []string
	for _, s := range r.Submissions {
		if !s.OK {
			paths = append(paths, s.Path+" ("+s.Message+")")
		}
	}
	return strings.Join(paths, ", ")
}

// toProblem fills imp from the verified package.
func (v *verifier) toProblem(imp *Imported, opts ImportOptions) error {
	pkg := v.pkg
	p := &imp.Problem
	p.Platform = opts.Platform
	if p.Platform == "" {
		p.Platform = algoitny.PlatformCustom
	}
	p.ProblemID = opts.ProblemID
	if p.ProblemID == "" {
		p.ProblemID = pkg.Name
	}
	p.Title = pkg.Title
	p.TimeLimitMs = int(v.report.TimeLimitMs)
	p.MemoryLimitMB = pkg.Limits.MemoryMB
	if p.MemoryLimitMB == 0 || p.MemoryLimitMB > 2048 {
		p.MemoryLimitMB = min(max(p.MemoryLimitMB, 1024), 2048)
	}
	steps := []func(*Imported) error{v.mapJudging, v.mapReference, v.mapTests, v.mapSubtasks}
	for _, step := range steps {
		if err := step(imp); err != nil {
			return err
		}
	}
	return nil
}

// language is a program's language in the domain's terms.
func language(p Program) (algoitny.Language, error) {
	l, err := algoitny.ParseLanguage(p.Language)
	if err != nil {
		return "", algoitny.Invalid("package", "%s: the language %s cannot be stored with a problem", p.Path, p.Language)
	}
	return l, nil
}

// domainProgram is a package program as a problem keeps it; testlib.h is
// left out (the judge offers its own to every program).
func domainProgram(v *verifier, p Program) (algoitny.Program, error) {
	lang, err := language(p)
	if err != nil {
		return algoitny.Program{}, err
	}
	src, err := v.source(p)
	if err != nil {
		return algoitny.Program{}, err
	}
	out := algoitny.Program{Language: lang, Code: string(src)}
	for name, data := range v.files(p) {
		if name == "testlib.h" || !isSourceOrHeader(name) {
			continue
		}
		if out.Files == nil {
			out.Files = map[string]string{}
		}
		out.Files[name] = string(data)
	}
	return out, nil
}

// commonArgs are the output validator arguments every test shares; a
// problem keeps one set.
func (v *verifier) commonArgs() ([]string, error) {
	var args []string
	for i, t := range v.pkg.Tests {
		if i == 0 {
			args = t.OutputValidatorArgs
			continue
		}
		if !slices.Equal(args, t.OutputValidatorArgs) {
			return nil, algoitny.Invalid("package", "tests %s and %s have different output validator arguments (%q, %q): a problem keeps one set",
				v.pkg.Tests[0].Name, t.Name, args, t.OutputValidatorArgs)
		}
	}
	return args, nil
}

// mapJudging maps the checker or interactor.
func (v *verifier) mapJudging(imp *Imported) error {
	pkg, p := v.pkg, &imp.Problem
	p.CheckerPoints = algoitny.PointsScale(pkg.CheckerPoints)
	p.ValidationPasses = pkg.Limits.ValidationPasses
	args, err := v.commonArgs()
	if err != nil {
		return err
	}
	if pkg.Interactive {
		it, err := domainProgram(v, *pkg.Interactor)
		if err != nil {
			return err
		}
		if pkg.Format == FormatICPC {
			it.Protocol, it.Args = algoitny.ProtocolICPC, args
		}
		p.Interactor = it
		if pkg.interactorChecked() {
			prog, err := domainProgram(v, *pkg.Checker.Program)
			if err != nil {
				return err
			}
			p.Checker = algoitny.Checker{Kind: algoitny.CheckerCustom, Code: prog.Code, Language: prog.Language, Files: prog.Files}
		}
		return nil
	}
	switch pkg.Checker.Kind {
	case CheckDefault:
		p.Checker = algoitny.Checker{Kind: algoitny.CheckerICPCDefault, Args: args}
	case CheckICPC, CheckTestlib:
		prog, err := domainProgram(v, *pkg.Checker.Program)
		if err != nil {
			return err
		}
		kind := algoitny.CheckerCustom
		if pkg.Checker.Kind == CheckICPC {
			kind = algoitny.CheckerICPC
		}
		p.Checker = algoitny.Checker{Kind: kind, Code: prog.Code, Language: prog.Language, Files: prog.Files, Args: args}
	}
	return nil
}

// mapReference keeps the main solution as the reference solution, and a
// Polygon package's generator and validator when its generated tests come
// from one generator.
func (v *verifier) mapReference(imp *Imported) error {
	p := &imp.Problem
	for _, s := range v.pkg.Submissions {
		if !s.Main || len(s.Program.Files) > 0 && v.pkg.Format == FormatICPC {
			continue
		}
		prog, err := domainProgram(v, s.Program)
		if err != nil {
			imp.Notes = append(imp.Notes, err.Error())
			continue
		}
		p.SolutionCode, p.Language = prog.Code, prog.Language
		break
	}
	if p.Language == "" {
		p.Language = algoitny.LanguageCPP
		imp.Notes = append(imp.Notes, "no reference solution kept: the package's main solution is a multi-file program or in a language a problem cannot keep")
	}
	if len(v.pkg.Includes) > 0 {
		imp.Notes = append(imp.Notes, "include/: the included files were added to the package's example submissions when it was verified; users' submissions are judged without them")
	}
	gens := map[string]bool{}
	for _, t := range v.pkg.Tests {
		if t.Generation != nil {
			gens[t.Generation.Generator] = true
		}
	}
	if len(gens) != 1 || v.pkg.Format != FormatPolygon {
		if len(gens) > 1 {
			imp.Notes = append(imp.Notes, fmt.Sprintf("the tests come from %d generators: they are kept as tests, and regenerateTests cannot rebuild them", len(gens)))
		}
		return nil
	}
	for name := range gens {
		gen, err := domainProgram(v, *v.pkg.Generators[name])
		if err != nil {
			return err
		}
		p.Generator = gen
	}
	if len(v.pkg.InputValidators) > 0 {
		val, err := domainProgram(v, v.pkg.InputValidators[0])
		if err != nil {
			return err
		}
		p.Validator = val
	}
	return nil
}

// maxImportedTestBytes bounds one imported test (its input and answer).
const maxImportedTestBytes = 64 << 20

// mapTests reads every test's input and answer.
func (v *verifier) mapTests(imp *Imported) error {
	genName := ""
	if !imp.Problem.Generator.IsZero() {
		genName = algoitny.GeneratorName(imp.Problem.Generator)
	}
	for i, t := range v.pkg.Tests {
		in, err := os.ReadFile(v.tests.input[i])
		if err != nil {
			return err
		}
		ans, err := os.ReadFile(v.tests.answers[i])
		if err != nil {
			return err
		}
		if len(in)+len(ans) > maxImportedTestBytes {
			return algoitny.Invalid("package", "test %s is larger than %d MB", t.Name, maxImportedTestBytes>>20)
		}
		tc := &algoitny.TestCase{Input: string(in), Output: string(ans), Points: t.Points}
		if t.Generation != nil && genName != "" {
			tc.Generator, tc.Args = genName, slices.Clone(t.Generation.Args)
		}
		imp.Tests = append(imp.Tests, tc)
	}
	return nil
}

// mapSubtasks turns the package's groups into subtasks: all-or-nothing
// groups (and ICPC min groups, the same for tests that pass or fail) as
// ALL_OR_NOTHING, the others as SUM; a Polygon package with points but no
// groups gets a SUM subtask per test, so that the part of it a checker
// gives (quitp) counts, as in Polygon.
func (v *verifier) mapSubtasks(imp *Imported) error {
	pkg := v.pkg
	if !pkg.Scoring {
		return nil
	}
	groups := pkg.Groups
	if len(groups) == 0 {
		for i, t := range pkg.Tests {
			if t.Points > 0 {
				imp.Subtasks = append(imp.Subtasks, algoitny.Subtask{Name: "test " + t.Name, Points: t.Points,
					Mode: algoitny.ScoreSum, TestIndexes: []int{i}})
			}
		}
		return nil
	}
	for _, g := range groups {
		st := algoitny.Subtask{Name: g.Name, Points: g.Points, Mode: algoitny.ScoreSum, DependsOn: slices.Clone(g.DependsOn)}
		if g.Mode != ScoreSum {
			st.Mode = algoitny.ScoreAllOrNothing
		}
		var points []float64
		for i, t := range pkg.Tests {
			if t.Group == g.Name {
				st.TestIndexes = append(st.TestIndexes, i)
				points = append(points, t.Points)
			}
		}
		if len(st.TestIndexes) == 0 {
			continue
		}
		if st.Mode == algoitny.ScoreSum && slices.Min(points) != slices.Max(points) {
			imp.Notes = append(imp.Notes, fmt.Sprintf("group %s: its tests' points differ; the subtask shares its %g points evenly", g.Name, g.Points))
		}
		imp.Subtasks = append(imp.Subtasks, st)
	}
	return nil
}

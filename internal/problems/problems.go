// Package problems holds the rules for reading and registering problems:
// who may see drafts and deleted problems, who may register or edit them,
// input limits, and plan capabilities (canRegisterProblems, maxProblems).
package problems

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/judge"
)

// Input limits.
const (
	MaxTitleLen       = 200
	MaxProblemIDLen   = 64
	MaxCodeBytes      = 64 << 10
	MaxConstraintsLen = 4000
	MaxTags           = 20
	MaxTagLen         = 50
	MaxURLLen         = 2000
	MaxTestCasesAdded = 500
	// MaxTestCaseInputBytes bounds one test case added through the API
	// (generated tests may be larger; storage takes up to 64 MB).
	MaxTestCaseInputBytes = 8 << 20
	DefaultTimeLimitMs    = 2000
	DefaultMemoryLimitMB  = 256
	// MaxProgramFiles and MaxProgramFilesBytes bound the further files of
	// one program (a problem package's headers and modules).
	MaxProgramFiles      = 16
	MaxProgramFilesBytes = 64 << 10
	// MaxProgramsBytes bounds all the code a problem keeps (its programs
	// and their files), which lives in the problem's one item of at most
	// 400 KB.
	MaxProgramsBytes = 300 << 10
	// MaxImportedTests and MaxImportedTestBytes bound the tests a problem
	// package brings (Import): as many as subtasks can name, each as large
	// as storage takes.
	MaxImportedTests     = 2000
	MaxImportedTestBytes = 64 << 20
)

// Store is what the service needs from storage.
type Store interface {
	CreateProblem(ctx context.Context, p *algoitny.Problem, maxProblems int) error
	GetProblem(ctx context.Context, ref algoitny.ProblemRef) (*algoitny.Problem, error)
	ListProblems(ctx context.Context, f algoitny.ProblemFilter, page algoitny.PageRequest) (algoitny.Page[*algoitny.Problem], error)
	UpdateProblem(ctx context.Context, ref algoitny.ProblemRef, u algoitny.ProblemUpdate) (*algoitny.Problem, error)
	DeleteProblem(ctx context.Context, ref algoitny.ProblemRef, reason string) error
	AddTestCases(ctx context.Context, ref algoitny.ProblemRef, cases []*algoitny.TestCase) error
	AddTestCasesWithSubtasks(ctx context.Context, ref algoitny.ProblemRef, cases []*algoitny.TestCase, subtasks []algoitny.Subtask) ([]algoitny.Subtask, error)
	DiscardProblem(ctx context.Context, ref algoitny.ProblemRef, createdBy string) error
	ListTestCases(ctx context.Context, ref algoitny.ProblemRef, page algoitny.PageRequest) (algoitny.Page[*algoitny.TestCase], error)
	GetTestCase(ctx context.Context, ref algoitny.ProblemRef, id string) (*algoitny.TestCase, error)
	ReviewProblem(ctx context.Context, ref algoitny.ProblemRef, r algoitny.ProblemReview) (*algoitny.Problem, error)
	StartProduction(ctx context.Context, ref algoitny.ProblemRef) (int, error)
	ReplaceTestCases(ctx context.Context, ref algoitny.ProblemRef, successors map[string]string) (int, error)
	ReadTestCase(ctx context.Context, ref algoitny.ProblemRef, id string) (*algoitny.TestCase, error)
}

// Service applies the problem rules on top of a Store.
type Service struct {
	Store Store
}

// notFound is the one answer for problems the actor may not see, so that
// drafts and deleted problems do not reveal they exist.
func notFound(ref algoitny.ProblemRef) error {
	return algoitny.Errorf(algoitny.ENOTFOUND, "problem %s/%s not found", ref.Platform, ref.ProblemID)
}

// Get returns a problem the actor may see. ENOTFOUND otherwise.
func (s *Service) Get(ctx context.Context, ref algoitny.ProblemRef) (*algoitny.Problem, error) {
	if err := validateRef(ref); err != nil {
		return nil, err
	}
	p, err := s.Store.GetProblem(ctx, ref)
	if err != nil {
		return nil, err
	}
	if !algoitny.ActorFrom(ctx).CanSeeProblem(p) {
		return nil, notFound(ref)
	}
	return p, nil
}

// List pages through problems. Drafts (Completed=false) are listed for staff
// and plans that can view all problems; other users see only their own
// drafts. EFORBIDDEN for anonymous draft listings.
func (s *Service) List(ctx context.Context, f algoitny.ProblemFilter, page algoitny.PageRequest) (algoitny.Page[*algoitny.Problem], error) {
	if len(f.TitleContains) > MaxTitleLen {
		return algoitny.Page[*algoitny.Problem]{}, algoitny.Invalid("titleContains", "at most %d characters", MaxTitleLen)
	}
	if err := algoitny.CheckText("titleContains", f.TitleContains); err != nil {
		return algoitny.Page[*algoitny.Problem]{}, err
	}
	if f.NeedsReview != nil && !algoitny.ActorFrom(ctx).IsStaff() {
		return algoitny.Page[*algoitny.Problem]{}, algoitny.Errorf(algoitny.EFORBIDDEN, "only staff list problems by review state")
	}
	f.CreatedBy = ""
	if f.Completed != nil && !*f.Completed {
		a := algoitny.ActorFrom(ctx)
		if err := a.RequireUser(); err != nil {
			return algoitny.Page[*algoitny.Problem]{}, err
		}
		if !a.IsStaff() && (a.Plan == nil || !a.Plan.CanViewAllProblems) {
			f.CreatedBy = a.User.ID // their own drafts (CanSeeProblem)
		}
	}
	return s.Store.ListProblems(ctx, f, page)
}

// CreateInput is a new problem with optional initial test cases and
// subtasks grouping them.
type CreateInput struct {
	// Problem is the problem; its Subtasks must be empty (its tests have
	// no ids yet: Subtasks below name them by position).
	Problem   algoitny.Problem
	TestCases []*algoitny.TestCase
	// Subtasks name their tests by 0-based position in TestCases
	// (algoitny.Subtask.TestIndexes), not by id.
	Subtasks []algoitny.Subtask
}

// Create registers a problem. The actor must be staff or on a plan that can
// register problems; the plan's MaxProblems is enforced exactly (staff are
// unlimited). A problem marked completed needs test cases. Its subtasks are
// validated (validateNewSubtasks) before anything is written, and stored
// with the write of its last test cases (AddTestCasesWithSubtasks), so a
// problem never names tests it does not have. If none of its test cases
// could be stored, the problem is discarded too (when a later batch of
// many fails, the draft stays with the first ones and without subtasks).
// Returns EUNAUTHENTICATED, EFORBIDDEN, EINVALID (subtasks: field
// subtasks.testIndexes for a position out of range, as validateSubtasks
// otherwise), ECONFLICT (exists) or ERATELIMITED.
func (s *Service) Create(ctx context.Context, in CreateInput) (*algoitny.Problem, error) {
	return s.create(ctx, in, testLimits{MaxTestCasesAdded, MaxTestCaseInputBytes})
}

// Import registers a problem read from a problem package: Create's rules,
// with the tests a package brings (up to MaxImportedTests of up to
// MaxImportedTestBytes each, where the API takes MaxTestCasesAdded of
// MaxTestCaseInputBytes). Errors as Create's.
func (s *Service) Import(ctx context.Context, in CreateInput) (*algoitny.Problem, error) {
	return s.create(ctx, in, testLimits{MaxImportedTests, MaxImportedTestBytes})
}

// testLimits bound the tests a new problem comes with.
type testLimits struct{ count, bytes int }

func (s *Service) create(ctx context.Context, in CreateInput, lim testLimits) (*algoitny.Problem, error) {
	a := algoitny.ActorFrom(ctx)
	limit, err := registrationLimit(a)
	if err != nil {
		return nil, err
	}
	p := in.Problem
	normalize(&p)
	if err := validateProblem(&p); err != nil {
		return nil, err
	}
	if err := validateTestCases(in.TestCases, lim); err != nil {
		return nil, err
	}
	if len(p.Subtasks) > 0 {
		return nil, algoitny.Invalid("subtasks.testIds", "the tests of a new problem have no ids yet: name them by position (testIndexes)")
	}
	if err := validateNewSubtasks(in.Subtasks, len(in.TestCases)); err != nil {
		return nil, err
	}
	completed := p.IsCompleted
	if completed && len(in.TestCases) == 0 {
		return nil, algoitny.Invalid("isCompleted", "a problem needs test cases to be completed")
	}
	p.CreatedBy = a.UserID()
	p.IsCompleted = false // completed only once its test cases are stored
	if err := s.Store.CreateProblem(ctx, &p, limit); err != nil {
		return nil, err
	}
	ref := p.Ref()
	production, err := s.numberGenerated(ctx, ref, &p, in.TestCases)
	if err != nil {
		_ = s.Store.DiscardProblem(context.WithoutCancel(ctx), ref, p.CreatedBy)
		return nil, err
	}
	if len(in.TestCases) > 0 {
		if _, err := s.Store.AddTestCasesWithSubtasks(ctx, ref, in.TestCases, in.Subtasks); err != nil {
			// No empty draft left behind (even if the client went away): a
			// retry starts afresh.
			_ = s.Store.DiscardProblem(context.WithoutCancel(ctx), ref, p.CreatedBy)
			return nil, err
		}
	}
	if completed || production > 0 {
		u := algoitny.ProblemUpdate{IsCompleted: &completed}
		if production > 0 {
			u.Production = &production
		}
		return s.Store.UpdateProblem(ctx, ref, u)
	}
	return s.Store.GetProblem(ctx, ref)
}

// numberGenerated makes the generated tests a new problem comes with (an
// imported package's, made by its stored generator) its first production
// run, so that regenerateTests can rebuild them; 0 when there are none.
func (s *Service) numberGenerated(ctx context.Context, ref algoitny.ProblemRef, p *algoitny.Problem, cases []*algoitny.TestCase) (int, error) {
	if p.Generator.IsZero() || !slices.ContainsFunc(cases, (*algoitny.TestCase).IsGenerated) {
		return 0, nil
	}
	n, err := s.Store.StartProduction(ctx, ref)
	if err != nil {
		return 0, err
	}
	for _, tc := range cases {
		if tc.IsGenerated() {
			tc.Production = n
		}
	}
	return n, nil
}

// registrationLimit returns the actor's MaxProblems, or an error when the
// actor may not register problems at all.
func registrationLimit(a *algoitny.Actor) (int, error) {
	if err := a.RequireUser(); err != nil {
		return 0, err
	}
	if a.IsStaff() {
		return algoitny.Unlimited, nil
	}
	if a.Plan == nil || !a.Plan.CanRegisterProblems {
		return 0, algoitny.Errorf(algoitny.EFORBIDDEN, "your plan cannot register problems")
	}
	return a.Plan.MaxProblems, nil
}

// CheckCanRegister returns nil when the actor may register problems (used
// before starting test-case generation jobs).
func CheckCanRegister(ctx context.Context) error {
	_, err := registrationLimit(algoitny.ActorFrom(ctx))
	return err
}

// Update changes a problem the actor may edit (staff or its author).
// Completing a problem needs at least one test case; subtasks must name its
// test cases (validateSubtasks), and are written only if the problem was
// not written since its tests were read. An author's change to a problem
// staff reviewed undoes the review (reviewUndone). Returns ENOTFOUND,
// EFORBIDDEN, EINVALID, or ECONFLICT (the problem changed meanwhile: try
// again).
func (s *Service) Update(ctx context.Context, ref algoitny.ProblemRef, u algoitny.ProblemUpdate) (*algoitny.Problem, error) {
	p, err := s.editable(ctx, ref)
	if err != nil {
		return nil, err
	}
	completing := u
	completing.IsCompleted = nil
	u.Unreviewed = completing != (algoitny.ProblemUpdate{}) && reviewUndone(ctx, p)
	next := *p
	applyUpdate(&next, u)
	normalize(&next)
	if err := validateProblem(&next); err != nil {
		return nil, err
	}
	if u.Subtasks != nil {
		ids, err := s.testCaseIDs(ctx, ref)
		if err != nil {
			return nil, err
		}
		if err := validateSubtasks(next.Subtasks, ids); err != nil {
			return nil, err
		}
		// The tests they were checked against must be the ones that are
		// there when they are written: a test deleted in between (its
		// deletion writes the problem) refuses the write.
		if len(next.Subtasks) > 0 {
			since := p.UpdatedAt
			u.IfUnchangedSince = &since
		}
	}
	if u.IsCompleted != nil && *u.IsCompleted && p.TestCaseCount == 0 {
		return nil, algoitny.Invalid("isCompleted", "a problem needs test cases to be completed")
	}
	return s.Store.UpdateProblem(ctx, ref, normalizedUpdate(u, &next))
}

// Delete soft-deletes a problem the actor may edit and returns it as deleted.
func (s *Service) Delete(ctx context.Context, ref algoitny.ProblemRef, reason string) (*algoitny.Problem, error) {
	if _, err := s.editable(ctx, ref); err != nil {
		return nil, err
	}
	if utf8.RuneCountInString(reason) > 500 {
		return nil, algoitny.Invalid("reason", "at most 500 characters")
	}
	if err := algoitny.CheckText("reason", reason); err != nil {
		return nil, err
	}
	if err := s.Store.DeleteProblem(ctx, ref, strings.TrimSpace(reason)); err != nil {
		return nil, err
	}
	return s.Store.GetProblem(ctx, ref)
}

// AddTestCases adds hand-written test cases to a problem the actor may edit
// (an author's undo a staff review: reviewUndone).
func (s *Service) AddTestCases(ctx context.Context, ref algoitny.ProblemRef, cases []*algoitny.TestCase) (*algoitny.Problem, error) {
	p, err := s.editable(ctx, ref)
	if err != nil {
		return nil, err
	}
	if len(cases) == 0 {
		return nil, algoitny.Invalid("testCases", "give at least one test case")
	}
	if err := validateTestCases(cases, testLimits{MaxTestCasesAdded, MaxTestCaseInputBytes}); err != nil {
		return nil, err
	}
	if reviewUndone(ctx, p) {
		// First: should adding fail halfway, the problem needs a review.
		if _, err := s.Store.UpdateProblem(ctx, ref, algoitny.ProblemUpdate{Unreviewed: true}); err != nil {
			return nil, err
		}
	}
	if err := s.Store.AddTestCases(ctx, ref, cases); err != nil {
		return nil, err
	}
	return s.Store.GetProblem(ctx, ref)
}

// reviewUndone says whether a change the actor makes to p undoes its staff
// review: a review vouches for what staff saw, and an author who is not
// staff could otherwise change the solution, the checker or the tests of a
// verified problem and keep the badge. Staff's own changes keep it.
func reviewUndone(ctx context.Context, p *algoitny.Problem) bool {
	return p.ReviewedAt != nil && !algoitny.ActorFrom(ctx).IsStaff()
}

// TestCases pages through the test cases of a problem the actor may see.
func (s *Service) TestCases(ctx context.Context, p *algoitny.Problem, page algoitny.PageRequest) (algoitny.Page[*algoitny.TestCase], error) {
	if !algoitny.ActorFrom(ctx).CanSeeProblem(p) {
		return algoitny.Page[*algoitny.TestCase]{}, notFound(p.Ref())
	}
	return s.Store.ListTestCases(ctx, p.Ref(), page)
}

// Review records a staff review of a problem (it no longer needs review).
// EUNAUTHENTICATED, EFORBIDDEN (not staff), ENOTFOUND, EINVALID (notes too long).
func (s *Service) Review(ctx context.Context, ref algoitny.ProblemRef, r algoitny.ProblemReview) (*algoitny.Problem, error) {
	if err := algoitny.ActorFrom(ctx).RequireStaff(); err != nil {
		return nil, err
	}
	if utf8.RuneCountInString(r.Notes) > 2000 {
		return nil, algoitny.Invalid("notes", "notes must be at most 2000 characters")
	}
	if err := algoitny.CheckText("notes", r.Notes); err != nil {
		return nil, err
	}
	return s.Store.ReviewProblem(ctx, ref, r)
}

// StartProduction numbers a new production run of a live problem the
// actor may edit (algoitny.Problem.Production): its tests carry the number,
// and Update with Production makes it current.
func (s *Service) StartProduction(ctx context.Context, ref algoitny.ProblemRef) (int, error) {
	if _, err := s.editable(ctx, ref); err != nil {
		return 0, err
	}
	return s.Store.StartProduction(ctx, ref)
}

// GeneratedTestCases returns the generated test cases (IsGenerated) of a
// live problem the actor may edit, oldest first, as previews
// (ListTestCases), read from DynamoDB itself.
func (s *Service) GeneratedTestCases(ctx context.Context, ref algoitny.ProblemRef) ([]*algoitny.TestCase, error) {
	if _, err := s.editable(ctx, ref); err != nil {
		return nil, err
	}
	ctx = algoitny.WithFreshReads(ctx)
	var out []*algoitny.TestCase
	for after := ""; ; {
		page, err := s.Store.ListTestCases(ctx, ref, algoitny.PageRequest{First: algoitny.MaxPageSize, After: after})
		if err != nil {
			return nil, err
		}
		for _, tc := range page.Items {
			if tc.IsGenerated() {
				out = append(out, tc)
			}
		}
		if !page.HasNextPage {
			return out, nil
		}
		after = page.EndCursor
	}
}

// DeleteGeneratedTests deletes the generated test cases of a live problem
// the actor may edit whose production run drop selects, lowering its
// count with them; hand-written tests and samples are never deleted. The
// subtasks lose the deleted tests in the same writes (algoitny.PruneSubtasks:
// a subtask left without tests is removed), except that a deleted test that
// successors maps to another (its rebuilt copy, regenerateTests) is
// replaced by it there. It returns how many it deleted; ENOTFOUND,
// EFORBIDDEN, and ECONFLICT when the subtasks kept changing meanwhile.
func (s *Service) DeleteGeneratedTests(ctx context.Context, ref algoitny.ProblemRef, drop func(production int) bool, successors map[string]string) (int, error) {
	tests, err := s.GeneratedTestCases(ctx, ref)
	if err != nil {
		return 0, err
	}
	gone := map[string]string{}
	for _, tc := range tests {
		if drop(tc.Production) {
			gone[tc.ID] = successors[tc.ID]
		}
	}
	if len(gone) == 0 {
		return 0, nil
	}
	return s.Store.ReplaceTestCases(ctx, ref, gone)
}

// TestCaseData returns one test case of a live problem the actor may edit
// in full, for the server's own comparisons: it is not bounded by what a
// response may hold (the data must go into none).
func (s *Service) TestCaseData(ctx context.Context, ref algoitny.ProblemRef, id string) (*algoitny.TestCase, error) {
	if _, err := s.editable(ctx, ref); err != nil {
		return nil, err
	}
	return s.Store.ReadTestCase(algoitny.WithFreshReads(ctx), ref, id)
}

// TestCase returns one test case of a problem the actor may see. ENOTFOUND otherwise.
func (s *Service) TestCase(ctx context.Context, ref algoitny.ProblemRef, id string) (*algoitny.TestCase, error) {
	if _, err := s.Get(ctx, ref); err != nil {
		return nil, err
	}
	return s.Store.GetTestCase(ctx, ref, id)
}

// editable loads a live problem the actor may change.
func (s *Service) editable(ctx context.Context, ref algoitny.ProblemRef) (*algoitny.Problem, error) {
	a := algoitny.ActorFrom(ctx)
	if err := a.RequireUser(); err != nil {
		return nil, err
	}
	// Read fresh: what it says decides the write (who may edit, whether a
	// review is undone).
	p, err := s.Get(algoitny.WithFreshReads(ctx), ref)
	if err != nil {
		return nil, err
	}
	if p.IsDeleted {
		return nil, notFound(ref)
	}
	if !a.CanEditProblem(p) {
		return nil, algoitny.Errorf(algoitny.EFORBIDDEN, "only staff and the problem's author may change it")
	}
	return p, nil
}

func applyUpdate(p *algoitny.Problem, u algoitny.ProblemUpdate) {
	set := func(dst *string, src *string) {
		if src != nil {
			*dst = *src
		}
	}
	set(&p.Title, u.Title)
	set(&p.ProblemURL, u.ProblemURL)
	set(&p.SolutionCode, u.SolutionCode)
	set(&p.Constraints, u.Constraints)
	if u.Tags != nil {
		p.Tags = *u.Tags
	}
	if u.Language != nil {
		p.Language = *u.Language
	}
	if u.Checker != nil {
		p.Checker = *u.Checker
	}
	if u.Interactor != nil {
		p.Interactor = *u.Interactor
	}
	if u.Subtasks != nil {
		p.Subtasks = *u.Subtasks
	}
	if u.TimeLimitMs != nil {
		p.TimeLimitMs = *u.TimeLimitMs
	}
	if u.MemoryLimitMB != nil {
		p.MemoryLimitMB = *u.MemoryLimitMB
	}
	if u.Generator != nil {
		p.Generator = *u.Generator
	}
	if u.Validator != nil {
		p.Validator = *u.Validator
	}
	if u.Production != nil {
		p.Production = *u.Production
	}
}

// normalizedUpdate returns u with each field it sets taken from next, the
// problem after applyUpdate and normalize: what is stored is what was
// validated (trimmed, defaults for zero limits).
func normalizedUpdate(u algoitny.ProblemUpdate, next *algoitny.Problem) algoitny.ProblemUpdate {
	if u.Title != nil {
		u.Title = &next.Title
	}
	if u.ProblemURL != nil {
		u.ProblemURL = &next.ProblemURL
	}
	if u.SolutionCode != nil {
		u.SolutionCode = &next.SolutionCode
	}
	if u.Constraints != nil {
		u.Constraints = &next.Constraints
	}
	if u.Tags != nil {
		u.Tags = &next.Tags
	}
	if u.Language != nil {
		u.Language = &next.Language
	}
	if u.Checker != nil {
		u.Checker = &next.Checker
	}
	if u.Interactor != nil {
		u.Interactor = &next.Interactor
	}
	if u.Subtasks != nil {
		u.Subtasks = &next.Subtasks
	}
	if u.TimeLimitMs != nil {
		u.TimeLimitMs = &next.TimeLimitMs
	}
	if u.MemoryLimitMB != nil {
		u.MemoryLimitMB = &next.MemoryLimitMB
	}
	return u
}

func normalize(p *algoitny.Problem) {
	p.ProblemID = strings.TrimSpace(p.ProblemID)
	p.Title = strings.TrimSpace(p.Title)
	p.ProblemURL = strings.TrimSpace(p.ProblemURL)
	if p.TimeLimitMs == 0 {
		p.TimeLimitMs = DefaultTimeLimitMs
	}
	if p.MemoryLimitMB == 0 {
		p.MemoryLimitMB = DefaultMemoryLimitMB
	}
	if p.Checker.Kind == "" {
		p.Checker.Kind = algoitny.CheckerLines
	}
	if p.Interactor.IsZero() {
		p.Interactor = algoitny.Program{} // a batch problem: no language either
	}
	if p.Tags == nil {
		p.Tags = []string{}
	}
}

func validateRef(ref algoitny.ProblemRef) error {
	if _, err := algoitny.ParsePlatform(string(ref.Platform)); err != nil {
		return err
	}
	id := ref.ProblemID
	if id == "" || len(id) > MaxProblemIDLen {
		return algoitny.Invalid("problemId", "problemId must be 1–%d characters", MaxProblemIDLen)
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return algoitny.Invalid("problemId", "problemId may contain letters, digits, '_', '-' and '.' only")
		}
	}
	return nil
}

// validateProblem checks every field of p, each independently, so that
// the caller learns every invalid field at once (algoitny.Invalids: EINVALID
// with the first invalid field in Field and all of them in Fields).
func validateProblem(p *algoitny.Problem) error {
	return algoitny.Invalids(validateRef(p.Ref()), validateTexts(p), validateLanguageAndTitle(p), validateURLAndCode(p),
		validatePrograms(p), validateTags(p), validateLimits(p),
		validateInteractor(p.Interactor), validateChecker(p.Checker), validateFiles(p))
}

// validateTexts checks p's texts hold no NUL byte (algoitny.CheckText).
func validateTexts(p *algoitny.Problem) error {
	var errs []error
	for field, text := range map[string]string{"title": p.Title, "problemUrl": p.ProblemURL, "constraints": p.Constraints, "solutionCode": p.SolutionCode, "checker.code": p.Checker.Code,
		"generatorCode": p.Generator.Code, "validatorCode": p.Validator.Code, "interactor.code": p.Interactor.Code} {
		errs = append(errs, algoitny.CheckText(field, text))
	}
	return algoitny.Invalids(append(errs, algoitny.CheckTexts("tags", p.Tags))...)
}

func validateLanguageAndTitle(p *algoitny.Problem) error {
	var title error
	switch n := utf8.RuneCountInString(p.Title); {
	case n == 0:
		title = algoitny.Invalid("title", "title is required")
	case n > MaxTitleLen:
		title = algoitny.Invalid("title", "title must be at most %d characters", MaxTitleLen)
	}
	_, lang := algoitny.ParseLanguage(string(p.Language))
	return algoitny.Invalids(lang, title)
}

func validateURLAndCode(p *algoitny.Problem) error {
	var errs []error
	if p.ProblemURL != "" {
		u, err := url.Parse(p.ProblemURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || len(p.ProblemURL) > MaxURLLen {
			errs = append(errs, algoitny.Invalid("problemUrl", "problemUrl must be an http(s) URL"))
		}
	}
	if len(p.SolutionCode) > MaxCodeBytes {
		errs = append(errs, algoitny.Invalid("solutionCode", "solutionCode must be at most %d KB", MaxCodeBytes>>10))
	}
	return algoitny.Invalids(errs...)
}

// validatePrograms checks the generator and the validator, when given.
func validatePrograms(p *algoitny.Problem) error {
	var errs []error
	for field, prog := range map[string]algoitny.Program{"generator": p.Generator, "validator": p.Validator} {
		if prog.IsZero() {
			continue
		}
		if len(prog.Code) > MaxCodeBytes {
			errs = append(errs, algoitny.Invalid(field+"Code", "%sCode must be at most %d KB", field, MaxCodeBytes>>10))
		}
		if _, err := algoitny.ParseLanguage(string(prog.Language)); err != nil {
			errs = append(errs, algoitny.Invalid(field+"Language", "unknown %s language %q", field, prog.Language))
		}
	}
	return algoitny.Invalids(errs...)
}

func validateTags(p *algoitny.Problem) error {
	var errs []error
	if utf8.RuneCountInString(p.Constraints) > MaxConstraintsLen {
		errs = append(errs, algoitny.Invalid("constraints", "constraints must be at most %d characters", MaxConstraintsLen))
	}
	if len(p.Tags) > MaxTags {
		errs = append(errs, algoitny.Invalid("tags", "at most %d tags", MaxTags))
	}
	for _, t := range p.Tags {
		if t == "" || utf8.RuneCountInString(t) > MaxTagLen {
			errs = append(errs, algoitny.Invalid("tags", "tags must be 1–%d characters", MaxTagLen))
		}
	}
	return algoitny.Invalids(errs...)
}

func validateLimits(p *algoitny.Problem) error {
	var errs []error
	if p.TimeLimitMs < 100 || p.TimeLimitMs > 20_000 {
		errs = append(errs, algoitny.Invalid("timeLimitMs", "timeLimitMs must be between 100 and 20000"))
	}
	if p.MemoryLimitMB < 16 || p.MemoryLimitMB > 2048 {
		errs = append(errs, algoitny.Invalid("memoryLimitMb", "memoryLimitMb must be between 16 and 2048"))
	}
	return algoitny.Invalids(errs...)
}

// validateFiles checks the programs' further files (plain names, at most
// MaxProgramFiles of at most MaxProgramFilesBytes in all per program) and
// that all the code fits the problem's item (MaxProgramsBytes).
func validateFiles(p *algoitny.Problem) error {
	total := len(p.SolutionCode)
	for field, files := range map[string]map[string]string{"checker.files": p.Checker.Files, "interactor.files": p.Interactor.Files,
		"generatorFiles": p.Generator.Files, "validatorFiles": p.Validator.Files} {
		if len(files) > MaxProgramFiles {
			return algoitny.Invalid(field, "at most %d files", MaxProgramFiles)
		}
		size := 0
		for name, data := range files {
			if name == "" || strings.ContainsAny(name, "/\\\x00") || name[0] == '.' || len(name) > 100 {
				return algoitny.Invalid(field, "%q is not a plain file name", name)
			}
			if err := algoitny.CheckText(field, data); err != nil {
				return err
			}
			size += len(name) + len(data)
		}
		if size > MaxProgramFilesBytes {
			return algoitny.Invalid(field, "the files are larger than %d KB", MaxProgramFilesBytes>>10)
		}
		total += size
	}
	total += len(p.Checker.Code) + len(p.Interactor.Code) + len(p.Generator.Code) + len(p.Validator.Code)
	if total > MaxProgramsBytes {
		return algoitny.Invalid("checker.files", "the problem's programs and their files are larger than %d KB in all", MaxProgramsBytes>>10)
	}
	return nil
}

// validateInteractor checks an interactive problem's interactor: code of at
// most MaxCodeBytes in a known language. No code (a batch problem) is
// valid.
func validateInteractor(it algoitny.Program) error {
	if it.IsZero() {
		return nil
	}
	if strings.TrimSpace(it.Code) == "" || len(it.Code) > MaxCodeBytes {
		return algoitny.Invalid("interactor.code", "an interactor needs code (at most %d KB)", MaxCodeBytes>>10)
	}
	if _, err := algoitny.ParseLanguage(string(it.Language)); err != nil {
		return algoitny.Invalid("interactor.language", "unknown interactor language %q", it.Language)
	}
	return nil
}

func validateChecker(c algoitny.Checker) error {
	switch c.Kind {
	case algoitny.CheckerLines, algoitny.CheckerTokens, algoitny.CheckerExact, algoitny.CheckerYesNo:
	case algoitny.CheckerFloat:
		if c.Epsilon <= 0 || c.Epsilon >= 1 {
			return algoitny.Invalid("checker.epsilon", "a float checker needs 0 < epsilon < 1")
		}
	case algoitny.CheckerICPCDefault:
		if _, err := judge.ParseDefaultValidator(c.Args); err != nil {
			return algoitny.Invalid("checker.args", "the default output validator's flags: %v", err)
		}
	case algoitny.CheckerCustom, algoitny.CheckerICPC:
		if c.Code == "" || len(c.Code) > MaxCodeBytes {
			return algoitny.Invalid("checker.code", "a custom checker needs code (at most %d KB)", MaxCodeBytes>>10)
		}
		if _, err := algoitny.ParseLanguage(string(c.Language)); err != nil {
			return algoitny.Invalid("checker.language", "a custom checker needs a language")
		}
	default:
		return algoitny.Invalid("checker.kind", "unknown checker %q", c.Kind)
	}
	return nil
}

func validateTestCases(cases []*algoitny.TestCase, lim testLimits) error {
	if len(cases) > lim.count {
		return algoitny.Invalid("testCases", "at most %d test cases at once", lim.count)
	}
	for i, tc := range cases {
		if len(tc.Input)+len(tc.Output) > lim.bytes {
			return algoitny.Invalid("testCases", "test case %d is larger than %d MB", i+1, lim.bytes>>20)
		}
		if !utf8.ValidString(tc.Input) || !utf8.ValidString(tc.Output) {
			return algoitny.Invalid("testCases", "test case %d is not valid UTF-8", i+1)
		}
		if algoitny.HasNUL(tc.Input) || algoitny.HasNUL(tc.Output) {
			return algoitny.Invalid("testCases", "test case %d holds a NUL byte", i+1)
		}
	}
	return nil
}

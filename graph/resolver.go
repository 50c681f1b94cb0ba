// Package graph is the GraphQL layer: gqlgen's generated code and thin
// resolvers that convert arguments, call one service method and return. The
// rules live in the services of internal/; errors are mapped to
// `extensions.code` once, in errors.go; per-operation dataloaders come from
// internal/loader.
package graph

import (
	"context"

	"github.com/algoitny/api/internal/accounts"
	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/authoring"
	"github.com/algoitny/api/internal/problems"
	"github.com/algoitny/api/internal/submissions"
)

//go:generate go tool gqlgen generate

// Accounts is users, plans, sessions and quotas (accounts.Service).
type Accounts interface {
	LoginWithGoogle(ctx context.Context, idToken string) (*accounts.Session, error)
	DevLogin(ctx context.Context, email string) (*accounts.Session, error)
	Logout(ctx context.Context) error
	Me(ctx context.Context) *algoitny.User
	Plans(ctx context.Context) ([]*algoitny.Plan, error)
	Plan(ctx context.Context, name string) (*algoitny.Plan, error)
	PlanOf(ctx context.Context, name string) (*algoitny.Plan, error)
	CreatePlan(ctx context.Context, p *algoitny.Plan) error
	UpdatePlan(ctx context.Context, name string, u algoitny.PlanUpdate) (*algoitny.Plan, error)
	User(ctx context.Context, id string) (*algoitny.User, error)
	Users(ctx context.Context, planName string, page algoitny.PageRequest) (algoitny.Page[*algoitny.User], error)
	SetUserPlan(ctx context.Context, userID, planName string) (*algoitny.User, error)
	SetUserActive(ctx context.Context, userID string, active bool) (*algoitny.User, error)
	MyUsage(ctx context.Context) ([]*algoitny.Usage, error)
	UsageLog(ctx context.Context, userID string, action algoitny.UsageAction, id string) (*algoitny.UsageLog, error)
	UsageStats(ctx context.Context) ([]algoitny.ExecutionStat, error)
	DeleteMyAccount(ctx context.Context) error
}

// Problems is problem reading and registration (problems.Service).
type Problems interface {
	Get(ctx context.Context, ref algoitny.ProblemRef) (*algoitny.Problem, error)
	List(ctx context.Context, f algoitny.ProblemFilter, page algoitny.PageRequest) (algoitny.Page[*algoitny.Problem], error)
	Create(ctx context.Context, in problems.CreateInput) (*algoitny.Problem, error)
	Update(ctx context.Context, ref algoitny.ProblemRef, u algoitny.ProblemUpdate) (*algoitny.Problem, error)
	Delete(ctx context.Context, ref algoitny.ProblemRef, reason string) (*algoitny.Problem, error)
	AddTestCases(ctx context.Context, ref algoitny.ProblemRef, cases []*algoitny.TestCase) (*algoitny.Problem, error)
	TestCase(ctx context.Context, ref algoitny.ProblemRef, id string) (*algoitny.TestCase, error)
	Review(ctx context.Context, ref algoitny.ProblemRef, r algoitny.ProblemReview) (*algoitny.Problem, error)
}

// History is reading users' executions (history.Service).
type History interface {
	Get(ctx context.Context, ref algoitny.HistoryRef) (*algoitny.SearchHistory, error)
	Mine(ctx context.Context, f algoitny.HistoryFilter, page algoitny.PageRequest) (algoitny.Page[*algoitny.SearchHistory], error)
	Public(ctx context.Context, f algoitny.HistoryFilter, page algoitny.PageRequest) (algoitny.Page[*algoitny.SearchHistory], error)
	Feed(ctx context.Context, page algoitny.PageRequest) (algoitny.Page[*algoitny.SearchHistory], error)
	SetVisibility(ctx context.Context, ref algoitny.HistoryRef, public bool) (*algoitny.SearchHistory, error)
	Stats(ctx context.Context, userID string) (*algoitny.UserStats, error)
	Leaderboard(ctx context.Context, first int) ([]algoitny.LeaderboardEntry, error)
}

// Jobs is starting, reading and cancelling async work (submissions.Service).
type Jobs interface {
	Execute(ctx context.Context, in submissions.ExecuteInput) (*algoitny.Job, error)
	GenerateHints(ctx context.Context, ref algoitny.HistoryRef) (*algoitny.Job, error)
	RunCode(ctx context.Context, in submissions.RunInput) (*algoitny.Job, error)
	FindCounterexample(ctx context.Context, ref algoitny.HistoryRef) (*algoitny.Job, error)
	GenerateTestCases(ctx context.Context, in submissions.ScriptInput) (*algoitny.Job, error)
	ExtractProblem(ctx context.Context, url string) (*algoitny.Job, error)
	ImportPackage(ctx context.Context, in submissions.ImportPackageInput) (*algoitny.Job, error)
	Get(ctx context.Context, id string) (*algoitny.Job, error)
	List(ctx context.Context, typ *algoitny.JobType, status *algoitny.JobStatus, page algoitny.PageRequest) (algoitny.Page[*algoitny.Job], error)
	Progress(ctx context.Context, j *algoitny.Job, page algoitny.PageRequest) (algoitny.Page[*algoitny.JobProgress], error)
	ProgressStep(ctx context.Context, jobID, id string) (*algoitny.JobProgress, error)
	Cancel(ctx context.Context, id string) (*algoitny.Job, error)
	Languages(ctx context.Context) ([]*algoitny.LanguageOffer, error)
}

// Authoring produces test cases from a generator (authoring.Service).
type Authoring interface {
	SaveProblem(ctx context.Context, in authoring.SaveInput) (*algoitny.Problem, error)
	RegenerateTests(ctx context.Context, ref algoitny.ProblemRef) (*algoitny.Problem, error)
}

// Events feeds the subscriptions (jobs.Events). Each channel starts with the
// current state and closes once the job (or the hint) is final.
type Events interface {
	// JobEvents reads the job with get once it follows it (the access
	// check and the current state in one read).
	JobEvents(ctx context.Context, id string, get func(context.Context, string) (*algoitny.Job, error)) (<-chan *algoitny.JobEvent, error)
	ExecutionEvents(ctx context.Context, job *algoitny.Job) (<-chan *algoitny.ExecutionEvent, error)
	HintEvents(ctx context.Context, h *algoitny.SearchHistory) (<-chan *algoitny.HintEvent, error)
}

// AtCoder is linked AtCoder accounts and their solved problems (atcoder.Service).
type AtCoder interface {
	LinkAccount(ctx context.Context, handle string) (*algoitny.AtCoderLink, error)
	UnlinkAccount(ctx context.Context) error
	Handle(ctx context.Context, userID string) (string, error)
	Solved(ctx context.Context, userID string) (algoitny.SolvedProblems, error)
	SolvedBy(ctx context.Context, userID string, problemIDs []string) (map[string]bool, error)
	SyncNow(ctx context.Context) (algoitny.AtCoderSyncResult, error)
	ADTContests(ctx context.Context, month string) ([]algoitny.ADTContest, error)
	MarkSolvedByMe(ctx context.Context, contests []algoitny.ADTContest) error
	FilterProblems(ctx context.Context, problems []algoitny.ADTContestProblem, filter algoitny.AtCoderProblemFilter) ([]algoitny.ADTContestProblem, error)
}

// Watches is URL checks (watch.Service).
type Watches interface {
	Create(ctx context.Context, in algoitny.CheckInput) (*algoitny.Check, error)
	Update(ctx context.Context, id string, in algoitny.CheckUpdate) (*algoitny.Check, error)
	Pause(ctx context.Context, id string) (*algoitny.Check, error)
	Resume(ctx context.Context, id string) (*algoitny.Check, error)
	Delete(ctx context.Context, id string) error
	Get(ctx context.Context, id string) (*algoitny.Check, error)
	List(ctx context.Context, page algoitny.PageRequest) (algoitny.Page[*algoitny.Check], error)
	RecentResults(ctx context.Context, id string, limit int) ([]*algoitny.CheckResult, error)
	Subscribe(ctx context.Context, id string) (<-chan *algoitny.CheckEvent, error)
	Stats(ctx context.Context, id string) ([]*algoitny.CheckWindowStats, error)
	CreateWebhook(ctx context.Context, url string) (*algoitny.NotificationChannel, error)
	NotificationChannels(ctx context.Context) ([]*algoitny.NotificationChannel, error)
	DeleteNotificationChannel(ctx context.Context, id string) error
	Deliveries(ctx context.Context, channelID string, page algoitny.PageRequest) (algoitny.Page[*algoitny.NotificationDelivery], error)
}

// Resolver is the root resolver; it holds only interfaces.
type Resolver struct {
	Accounts  Accounts
	Problems  Problems
	History   History
	Jobs      Jobs
	Authoring Authoring
	Events    Events
	AtCoder   AtCoder
	Watches   Watches
}

// watches returns the URL checks' service, or, where the Resolver was built
// without one, a stand-in whose every method returns UNAVAILABLE: each
// resolver of checks calls it, so none can forget the case.
func (r *Resolver) watches() Watches {
	if r.Watches == nil {
		return noWatches{}
	}
	return r.Watches
}

// errNoChecks is what noWatches answers.
var errNoChecks = algoitny.Errorf(algoitny.EUNAVAILABLE, "URL checks are not available on this server")

// noWatches is Watches on a server without URL checks.
type noWatches struct{}

func (noWatches) Create(context.Context, algoitny.CheckInput) (*algoitny.Check, error) {
	return nil, errNoChecks
}
func (noWatches) Update(context.Context, string, algoitny.CheckUpdate) (*algoitny.Check, error) {
	return nil, errNoChecks
}
func (noWatches) Pause(context.Context, string) (*algoitny.Check, error)  { return nil, errNoChecks }
func (noWatches) Resume(context.Context, string) (*algoitny.Check, error) { return nil, errNoChecks }
func (noWatches) Delete(context.Context, string) error                    { return errNoChecks }
func (noWatches) Get(context.Context, string) (*algoitny.Check, error)    { return nil, errNoChecks }
func (noWatches) List(context.Context, algoitny.PageRequest) (algoitny.Page[*algoitny.Check], error) {
	return algoitny.Page[*algoitny.Check]{}, errNoChecks
}
func (noWatches) RecentResults(context.Context, string, int) ([]*algoitny.CheckResult, error) {
	return nil, errNoChecks
}
func (noWatches) Subscribe(context.Context, string) (<-chan *algoitny.CheckEvent, error) {
	return nil, errNoChecks
}
func (noWatches) Stats(context.Context, string) ([]*algoitny.CheckWindowStats, error) {
	return nil, errNoChecks
}
func (noWatches) CreateWebhook(context.Context, string) (*algoitny.NotificationChannel, error) {
	return nil, errNoChecks
}
func (noWatches) NotificationChannels(context.Context) ([]*algoitny.NotificationChannel, error) {
	return nil, errNoChecks
}
func (noWatches) DeleteNotificationChannel(context.Context, string) error { return errNoChecks }
func (noWatches) Deliveries(context.Context, string, algoitny.PageRequest) (algoitny.Page[*algoitny.NotificationDelivery], error) {
	return algoitny.Page[*algoitny.NotificationDelivery]{}, errNoChecks
}

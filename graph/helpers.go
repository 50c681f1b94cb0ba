package graph

import (
	"context"
	"encoding/json"

	"github.com/99designs/gqlgen/graphql"
	"github.com/algoitny/api/graph/model"
	"github.com/algoitny/api/internal/accounts"
	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/loader"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// errUnavailable answers operations whose backing service is not wired in
// this process (saveProblem on a replica without the judge): not the
// caller's mistake, nor a bug (UNAVAILABLE, logged below ERROR).
var errUnavailable = algoitny.Errorf(algoitny.EUNAVAILABLE, "this operation is not available on this server (it has no judge: try another server)")

// nilIfNotFound turns ENOTFOUND into a null result: a nullable root field
// answers "no such thing" with null, not an error.
func nilIfNotFound[T any](v *T, err error) (*T, error) {
	if algoitny.IsCode(err, algoitny.ENOTFOUND) {
		return nil, nil
	}
	return v, err
}

// visibleProblem loads a problem through the operation's loader and returns
// it only if the actor may see it.
func visibleProblem(ctx context.Context, ref algoitny.ProblemRef) (*algoitny.Problem, error) {
	p, err := loader.For(ctx).Problem.Load(ctx, ref)()
	if err != nil || p == nil || !algoitny.ActorFrom(ctx).CanSeeProblem(p) {
		return nil, err
	}
	return p, nil
}

// programCode is the code of a program kept with p (its generator or
// validator), shown only to those who may see its solutionCode (staff and
// its author): the programs that make the tests reveal as much as the
// solution. Nil when none is stored.
func programCode(ctx context.Context, p *algoitny.Problem, prog algoitny.Program) *string {
	if prog.IsZero() || !algoitny.ActorFrom(ctx).CanEditProblem(p) {
		return nil
	}
	return &prog.Code
}

// programLanguage is the language of programCode's program, under the same rule.
func programLanguage(ctx context.Context, p *algoitny.Problem, prog algoitny.Program) *algoitny.Language {
	if programCode(ctx, p, prog) == nil {
		return nil
	}
	return &prog.Language
}

func authPayload(s *accounts.Session, err error) (*model.AuthPayload, error) {
	if err != nil {
		return nil, err
	}
	return &model.AuthPayload{Token: s.Token, ExpiresAt: s.ExpiresAt, User: s.User}, nil
}

// node loads the object a global id names, applying the same access rules
// as the typed queries.
func (r *queryResolver) node(ctx context.Context, typ string, parts []string) (model.Node, error) {
	want := map[string]int{"Problem": 2, "TestCase": 3, "SearchHistory": 2, "UsageLog": 3, "Job": 1, "JobProgress": 2, "User": 1, "Plan": 1, "Check": 1,
		"NotificationChannel": 1}
	if n, ok := want[typ]; !ok || n != len(parts) {
		return nil, algoitny.Invalid("id", "invalid id")
	}
	ref := func() algoitny.ProblemRef {
		return algoitny.ProblemRef{Platform: algoitny.Platform(parts[0]), ProblemID: parts[1]}
	}
	switch typ {
	case "Problem":
		return r.Resolver.Problems.Get(ctx, ref())
	case "TestCase":
		return r.Resolver.Problems.TestCase(ctx, ref(), parts[2])
	case "SearchHistory":
		return r.Resolver.History.Get(ctx, algoitny.HistoryRef{UserID: parts[0], ID: parts[1]})
	case "UsageLog":
		return r.Resolver.Accounts.UsageLog(ctx, parts[0], algoitny.UsageAction(parts[1]), parts[2])
	case "Job":
		return r.Resolver.Jobs.Get(ctx, parts[0])
	case "JobProgress":
		return r.Resolver.Jobs.ProgressStep(ctx, parts[0], parts[1])
	case "User":
		if me := r.Resolver.Accounts.Me(ctx); me != nil && me.ID == parts[0] {
			return me, nil
		}
		return r.Resolver.Accounts.User(ctx, parts[0])
	case "Check":
		return r.Resolver.watches().Get(ctx, parts[0])
	case "NotificationChannel":
		return r.notificationChannel(ctx, parts[0])
	default: // Plan
		return r.Resolver.Accounts.Plan(ctx, parts[0])
	}
}

// seesPrivateFields says whether the caller may read u's private fields
// (email, staff status, last sign-in): u themselves or staff. The user of a
// sign-in payload is the caller, although the request carried no session
// yet.
func seesPrivateFields(ctx context.Context, u *algoitny.User) bool {
	if fc := graphql.GetFieldContext(ctx); fc != nil && fc.Parent != nil && fc.Parent.Object == "AuthPayload" {
		return true
	}
	return algoitny.ActorFrom(ctx).OwnsOrStaff(u.ID)
}

// notificationChannel is one of the caller's channels (at most
// watch.MaxChannels, read together); ENOTFOUND for another's.
func (r *queryResolver) notificationChannel(ctx context.Context, id string) (*algoitny.NotificationChannel, error) {
	chs, err := r.Resolver.watches().NotificationChannels(ctx)
	if err != nil {
		return nil, err
	}
	for _, ch := range chs {
		if ch.ID == id {
			return ch, nil
		}
	}
	return nil, algoitny.Errorf(algoitny.ENOTFOUND, "no such notification channel")
}

// deleted answers a deletion that returned ok with the id of what it
// deleted (Relay's @deleteRecord, Apollo's cache.evict).
func deleted(id string) func(bool, error) (*model.DeletePayload, error) {
	return func(_ bool, err error) (*model.DeletePayload, error) {
		if err != nil {
			return nil, err
		}
		return &model.DeletePayload{DeletedID: id}, nil
	}
}

// entryError is err as the error of the i-th entry of the list the field
// in ctx answers (its path ends with i), presented as any other.
func entryError(ctx context.Context, i int, err error) *gqlerror.Error {
	e := graphql.DefaultErrorPresenter(ctx, err)
	e.Path = append(graphql.GetPath(ctx), ast.PathIndex(i))
	e.Err = err
	return e
}

// selects says whether the selection of the field in ctx asks for a
// field of this name (fragments included).
func selects(ctx context.Context, name string) bool {
	for _, f := range graphql.CollectFieldsCtx(ctx, nil) {
		if f.Name == name {
			return true
		}
	}
	return false
}

// requestCost is the operation's cost as the transport computed it
// (algoitny.RequestCost; zero where none did, as in graph's own tests).
func requestCost(ctx context.Context) algoitny.RequestCost {
	rc, _ := graphql.GetOperationContext(ctx).Stats.GetExtension(algoitny.RequestCostStat).(algoitny.RequestCost)
	return rc
}

// jobResult is the JSON result of a COMPLETED job of type t, decoded; nil
// for another type or before it completed.
func jobResult[T any](j *algoitny.Job, t algoitny.JobType) (*T, error) {
	if j.Type != t || j.Status != algoitny.JobCompleted || j.Result == "" {
		return nil, nil
	}
	var out T
	if err := json.Unmarshal([]byte(j.Result), &out); err != nil {
		return nil, algoitny.Internal(err, "decode the job's result")
	}
	return &out, nil
}

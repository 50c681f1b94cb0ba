package accounts_test

import (
	"context"
	"testing"

	"github.com/algoitny/api/internal/accounts"
	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
	"github.com/algoitny/api/internal/auth"
	"github.com/algoitny/api/internal/dynamo"
	"github.com/algoitny/api/internal/dynamo/dynamotest"
	"github.com/algoitny/api/internal/pubsub"
)

// The storage of the package is *dynamo.DB (asserted here, beside the
// consumer, so that internal/dynamo need not import the feature).
var _ accounts.Store = (*dynamo.DB)(nil)

func TestMain(m *testing.M) { dynamotest.Main(m) }

// bundle is a test's store and service (dev mode, telling account changes
// on an in-process broker, with a Google verifier that trusts google's
// profiles).
type bundle struct {
	db     *dynamo.DB
	google *fakeGoogle
	svc    *accounts.Service
}

// setup returns a service on tables of the test's own, seeded with the
// default plans (Free, Pro, Admin).
func setup(t testing.TB) bundle {
	t.Helper()
	db := dynamotest.NewDB(t)
	algoitnytest.Must[[]string](t)(db.SeedPlans(context.Background(), algoitny.DefaultPlans(), false))
	tokens := algoitnytest.Must[*auth.Sessions](t)(auth.NewSessions(auth.SessionConfig{Secret: []byte("a test secret of at least 32 bytes!!")}))
	changes := pubsub.NewMemory(pubsub.MemoryConfig{})
	t.Cleanup(func() { changes.Close() })
	g := &fakeGoogle{profiles: map[string]algoitny.GoogleProfile{}}
	return bundle{db: db, google: g,
		svc: &accounts.Service{Store: db, Tokens: tokens, Google: g, Dev: true, Changes: changes}}
}

// fakeGoogle verifies the ID tokens it was given profiles for.
type fakeGoogle struct {
	profiles map[string]algoitny.GoogleProfile
}

func (g *fakeGoogle) Verify(_ context.Context, idToken string) (algoitny.GoogleProfile, error) {
	p, ok := g.profiles[idToken]
	if !ok {
		return algoitny.GoogleProfile{}, algoitny.Errorf(algoitny.EUNAUTHENTICATED, "ID token is invalid")
	}
	return p, nil
}

// signIn signs email in (dev login, created on the Free plan at first) and
// returns the context of a request with the session's token.
func (b bundle) signIn(t testing.TB, email string) context.Context {
	t.Helper()
	s := algoitnytest.Must[*accounts.Session](t)(b.svc.DevLogin(context.Background(), email))
	return b.authenticate(t, s.Token)
}

// authenticate returns the context of a request with token.
func (b bundle) authenticate(t testing.TB, token string) context.Context {
	t.Helper()
	a := algoitnytest.Must[*algoitny.Actor](t)(b.svc.Authenticate(context.Background(), token))
	return algoitny.WithActor(context.Background(), a)
}

// staff signs email in and makes them staff.
func (b bundle) staff(t testing.TB, email string) context.Context {
	t.Helper()
	b.signIn(t, email)
	algoitnytest.Must[*algoitny.User](t)(b.svc.GrantStaff(context.Background(), email, true))
	return b.signIn(t, email)
}

// anonymous is the context of a request without a session.
var anonymous = context.Background()

func userOf(ctx context.Context) *algoitny.User { return algoitny.ActorFrom(ctx).User }

func ptr[T any](v T) *T { return &v }

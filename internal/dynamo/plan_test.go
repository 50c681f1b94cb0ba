package dynamo_test

import (
	"context"
	"slices"
	"testing"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
)

func TestPlans(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("CreateGetUpdate", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		p := &algoitny.Plan{Name: "Gold", MaxHintsPerDay: 3, MaxExecutionsPerDay: 7, IsActive: true}
		algoitnytest.OK(t, db.CreatePlan(ctx, p))
		if p.ID == "" {
			t.Fatal("no id assigned")
		}
		algoitnytest.ErrCode(t, db.CreatePlan(ctx, &algoitny.Plan{Name: "Gold"}), algoitny.ECONFLICT)

		got := algoitnytest.Must[*algoitny.Plan](t)(db.GetPlan(ctx, "Gold"))
		if got.ID != p.ID || got.MaxExecutionsPerDay != 7 {
			t.Fatalf("got %+v", got)
		}
		hints := 99
		up := algoitnytest.Must[*algoitny.Plan](t)(db.UpdatePlan(ctx, "Gold", algoitny.PlanUpdate{MaxHintsPerDay: &hints}))
		if up.MaxHintsPerDay != 99 || up.MaxExecutionsPerDay != 7 {
			t.Fatalf("update touched other fields: %+v", up)
		}
		_, err := db.UpdatePlan(ctx, "Nope", algoitny.PlanUpdate{MaxHintsPerDay: &hints})
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
		_, err = db.GetPlan(ctx, "Nope")
		algoitnytest.ErrCode(t, err, algoitny.ENOTFOUND)
	})

	t.Run("ListByActivity", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		for _, p := range []algoitny.Plan{{Name: "B", IsActive: true}, {Name: "A", IsActive: true}, {Name: "Old", IsActive: false}} {
			algoitnytest.OK(t, db.CreatePlan(ctx, &p))
		}
		active := algoitnytest.Must[[]*algoitny.Plan](t)(db.ListPlans(ctx, false))
		if len(active) != 2 || active[0].Name != "A" || active[1].Name != "B" {
			t.Fatalf("active plans = %v", names(active))
		}
		all := algoitnytest.Must[[]*algoitny.Plan](t)(db.ListPlans(ctx, true))
		if len(all) != 3 || all[2].Name != "Old" {
			t.Fatalf("all plans = %v", names(all))
		}
		off := false
		algoitnytest.Must[*algoitny.Plan](t)(db.UpdatePlan(ctx, "A", algoitny.PlanUpdate{IsActive: &off}))
		if active := algoitnytest.Must[[]*algoitny.Plan](t)(db.ListPlans(ctx, false)); len(active) != 1 {
			t.Fatalf("deactivated plan still listed: %v", names(active))
		}
	})

	t.Run("SeedIsIdempotent", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		created := algoitnytest.Must[[]string](t)(db.SeedPlans(ctx, algoitny.DefaultPlans(), false))
		if len(created) != 3 {
			t.Fatalf("created %v", created)
		}
		free := algoitnytest.Must[*algoitny.Plan](t)(db.GetPlan(ctx, "Free"))
		if free.MaxHintsPerDay != 5 || free.MaxExecutionsPerDay != 10 {
			t.Fatalf("Free = %+v", free)
		}
		admin := algoitnytest.Must[*algoitny.Plan](t)(db.GetPlan(ctx, "Admin"))
		if admin.MaxHintsPerDay != algoitny.Unlimited || admin.MaxExecutionsPerDay != algoitny.Unlimited {
			t.Fatalf("Admin = %+v", admin)
		}
		// An operator's edit survives a re-seed, and --force resets it.
		n := 42
		algoitnytest.Must[*algoitny.Plan](t)(db.UpdatePlan(ctx, "Free", algoitny.PlanUpdate{MaxHintsPerDay: &n}))
		if again := algoitnytest.Must[[]string](t)(db.SeedPlans(ctx, algoitny.DefaultPlans(), false)); len(again) != 0 {
			t.Fatalf("second seed changed %v", again)
		}
		if got := algoitnytest.Must[*algoitny.Plan](t)(db.GetPlan(ctx, "Free")); got.MaxHintsPerDay != 42 || got.ID != free.ID {
			t.Fatalf("seed overwrote an edited plan: %+v", got)
		}
		algoitnytest.Must[[]string](t)(db.SeedPlans(ctx, algoitny.DefaultPlans(), true))
		if got := algoitnytest.Must[*algoitny.Plan](t)(db.GetPlan(ctx, "Free")); got.MaxHintsPerDay != 5 || got.ID != free.ID {
			t.Fatalf("forced seed: %+v", got)
		}
	})

	t.Run("SeedFillsFieldsOfOlderPlans", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		old := algoitny.Plan{Name: "Free", MaxHintsPerDay: 7, IsActive: true}
		algoitnytest.OK(t, db.CreatePlan(ctx, &old))
		algoitnytest.OK(t, db.RemovePlanAttribute(ctx, "Free", "MaxChecks"))
		changed := algoitnytest.Must[[]string](t)(db.SeedPlans(ctx, algoitny.DefaultPlans(), false))
		if !slices.Contains(changed, "Free (new fields)") {
			t.Fatalf("changed %v", changed)
		}
		got := algoitnytest.Must[*algoitny.Plan](t)(db.GetPlan(ctx, "Free"))
		if got.MaxChecks != 3 || got.MinCheckDelayMs != 60_000 || got.MaxHintsPerDay != 7 {
			t.Fatalf("after seeding: %+v", got)
		}
		if again := algoitnytest.Must[[]string](t)(db.SeedPlans(ctx, algoitny.DefaultPlans(), false)); slices.Contains(again, "Free (new fields)") {
			t.Fatal("filled twice")
		}
	})

	t.Run("PracticeQuotasOfOlderPlans", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		old := algoitny.Plan{Name: "Free", MaxExecutionsPerDay: 9, MaxCodeRunsPerDay: 1, MaxCounterexamplesPerDay: 1, IsActive: true}
		algoitnytest.OK(t, db.CreatePlan(ctx, &old))
		algoitnytest.OK(t, db.RemovePlanAttribute(ctx, "Free", "MaxCodeRunsPerDay"))
		algoitnytest.OK(t, db.RemovePlanAttribute(ctx, "Free", "MaxCounterexamplesPerDay"))
		// Until seeded, the plan's executions limit.
		got := algoitnytest.Must[*algoitny.Plan](t)(db.GetPlan(ctx, "Free"))
		if got.DailyLimit(algoitny.ActionCodeRun) != 9 || got.DailyLimit(algoitny.ActionCounterexample) != 9 {
			t.Fatalf("before seeding: %+v", got)
		}
		changed := algoitnytest.Must[[]string](t)(db.SeedPlans(ctx, algoitny.DefaultPlans(), false))
		got = algoitnytest.Must[*algoitny.Plan](t)(db.GetPlan(ctx, "Free"))
		if !slices.Contains(changed, "Free (new fields)") || got.MaxCodeRunsPerDay != 50 || got.MaxCounterexamplesPerDay != 3 || got.MaxExecutionsPerDay != 9 {
			t.Fatalf("after seeding %v: %+v", changed, got)
		}
		ten := 10
		got = algoitnytest.Must[*algoitny.Plan](t)(db.UpdatePlan(ctx, "Free", algoitny.PlanUpdate{MaxCodeRunsPerDay: &ten}))
		if got.MaxCodeRunsPerDay != 10 || got.MaxCounterexamplesPerDay != 3 {
			t.Fatalf("after an update: %+v", got)
		}
	})

}

func names(plans []*algoitny.Plan) []string {
	var out []string
	for _, p := range plans {
		out = append(out, p.Name)
	}
	return out
}

package dynamo_test

import (
	"context"
	"slices"
	"testing"

	"github.com/algoitny/api/internal/algoitny"
)

func TestPlans(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("CreateGetUpdate", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		p := &algoitny.Plan{Name: "Gold", MaxHintsPerDay: 3, MaxExecutionsPerDay: 7, IsActive: true}
		ok(t, db.CreatePlan(ctx, p))
		if p.ID == "" {
			t.Fatal("no id assigned")
		}
		errCode(t, db.CreatePlan(ctx, &algoitny.Plan{Name: "Gold"}), algoitny.ECONFLICT)

		got := must[*algoitny.Plan](t)(db.GetPlan(ctx, "Gold"))
		if got.ID != p.ID || got.MaxExecutionsPerDay != 7 {
			t.Fatalf("got %+v", got)
		}
		hints := 99
		up := must[*algoitny.Plan](t)(db.UpdatePlan(ctx, "Gold", algoitny.PlanUpdate{MaxHintsPerDay: &hints}))
		if up.MaxHintsPerDay != 99 || up.MaxExecutionsPerDay != 7 {
			t.Fatalf("update touched other fields: %+v", up)
		}
		_, err := db.UpdatePlan(ctx, "Nope", algoitny.PlanUpdate{MaxHintsPerDay: &hints})
		errCode(t, err, algoitny.ENOTFOUND)
		_, err = db.GetPlan(ctx, "Nope")
		errCode(t, err, algoitny.ENOTFOUND)
	})

	t.Run("ListByActivity", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		for _, p := range []algoitny.Plan{{Name: "B", IsActive: true}, {Name: "A", IsActive: true}, {Name: "Old", IsActive: false}} {
			ok(t, db.CreatePlan(ctx, &p))
		}
		active := must[[]*algoitny.Plan](t)(db.ListPlans(ctx, false))
		if len(active) != 2 || active[0].Name != "A" || active[1].Name != "B" {
			t.Fatalf("active plans = %v", names(active))
		}
		all := must[[]*algoitny.Plan](t)(db.ListPlans(ctx, true))
		if len(all) != 3 || all[2].Name != "Old" {
			t.Fatalf("all plans = %v", names(all))
		}
		off := false
		must[*algoitny.Plan](t)(db.UpdatePlan(ctx, "A", algoitny.PlanUpdate{IsActive: &off}))
		if active := must[[]*algoitny.Plan](t)(db.ListPlans(ctx, false)); len(active) != 1 {
			t.Fatalf("deactivated plan still listed: %v", names(active))
		}
	})

	t.Run("SeedIsIdempotent", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		created := must[[]string](t)(db.SeedPlans(ctx, algoitny.DefaultPlans(), false))
		if len(created) != 3 {
			t.Fatalf("created %v", created)
		}
		free := must[*algoitny.Plan](t)(db.GetPlan(ctx, "Free"))
		if free.MaxHintsPerDay != 5 || free.MaxExecutionsPerDay != 10 {
			t.Fatalf("Free = %+v", free)
		}
		admin := must[*algoitny.Plan](t)(db.GetPlan(ctx, "Admin"))
		if admin.MaxHintsPerDay != algoitny.Unlimited || admin.MaxExecutionsPerDay != algoitny.Unlimited {
			t.Fatalf("Admin = %+v", admin)
		}
		// An operator's edit survives a re-seed, and --force resets it.
		n := 42
		must[*algoitny.Plan](t)(db.UpdatePlan(ctx, "Free", algoitny.PlanUpdate{MaxHintsPerDay: &n}))
		if again := must[[]string](t)(db.SeedPlans(ctx, algoitny.DefaultPlans(), false)); len(again) != 0 {
			t.Fatalf("second seed changed %v", again)
		}
		if got := must[*algoitny.Plan](t)(db.GetPlan(ctx, "Free")); got.MaxHintsPerDay != 42 || got.ID != free.ID {
			t.Fatalf("seed overwrote an edited plan: %+v", got)
		}
		must[[]string](t)(db.SeedPlans(ctx, algoitny.DefaultPlans(), true))
		if got := must[*algoitny.Plan](t)(db.GetPlan(ctx, "Free")); got.MaxHintsPerDay != 5 || got.ID != free.ID {
			t.Fatalf("forced seed: %+v", got)
		}
	})

	t.Run("SeedFillsFieldsOfOlderPlans", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		old := algoitny.Plan{Name: "Free", MaxHintsPerDay: 7, IsActive: true}
		ok(t, db.CreatePlan(ctx, &old))
		ok(t, db.RemovePlanAttribute(ctx, "Free", "MaxChecks"))
		changed := must[[]string](t)(db.SeedPlans(ctx, algoitny.DefaultPlans(), false))
		if !slices.Contains(changed, "Free (new fields)") {
			t.Fatalf("changed %v", changed)
		}
		got := must[*algoitny.Plan](t)(db.GetPlan(ctx, "Free"))
		if got.MaxChecks != 3 || got.MinCheckDelayMs != 60_000 || got.MaxHintsPerDay != 7 {
			t.Fatalf("after seeding: %+v", got)
		}
		if again := must[[]string](t)(db.SeedPlans(ctx, algoitny.DefaultPlans(), false)); slices.Contains(again, "Free (new fields)") {
			t.Fatal("filled twice")
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

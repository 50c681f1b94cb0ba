package dynamo_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
)

func TestUsage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("ExactUnderConcurrency", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		const limit, callers = 10, 50
		var mu sync.Mutex
		admitted, limited := 0, 0
		var wg sync.WaitGroup
		for range callers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := db.ConsumeQuota(ctx, &algoitny.UsageLog{UserID: "u1", Action: algoitny.ActionExecution, Platform: algoitny.PlatformBaekjoon, ProblemID: "1000"}, limit)
				mu.Lock()
				defer mu.Unlock()
				switch algoitny.ErrorCode(err) {
				case "":
					admitted++
				case algoitny.ERATELIMITED:
					limited++
				default:
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		if admitted != limit || limited != callers-limit {
			t.Fatalf("admitted %d, limited %d; want %d and %d", admitted, limited, limit, callers-limit)
		}
		day := algoitny.UsageDay(time.Now())
		counts := algoitnytest.Must[map[algoitny.UsageAction]int](t)(db.UsageCounts(ctx, "u1", day))
		if counts[algoitny.ActionExecution] != limit || counts[algoitny.ActionHint] != 0 {
			t.Fatalf("counts %v", counts)
		}
		logs, _ := listAll(t, 4, func(r algoitny.PageRequest) (algoitny.Page[*algoitny.UsageLog], error) {
			return db.ListUsageLogs(ctx, "u1", day, day, r)
		})
		if len(logs) != limit {
			t.Fatalf("%d usage logs, want %d", len(logs), limit)
		}
		if logs[0].Platform != algoitny.PlatformBaekjoon || logs[0].ProblemID != "1000" {
			t.Fatalf("log %+v", logs[0])
		}
	})

	t.Run("RateLimitDetails", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		now := time.Date(2026, 11, 22, 23, 59, 0, 0, time.UTC)
		db.SetClock(func() time.Time { return now })
		for range 2 {
			algoitnytest.OK(t, db.ConsumeQuota(ctx, &algoitny.UsageLog{UserID: "u", Action: algoitny.ActionHint}, 2))
		}
		err := db.ConsumeQuota(ctx, &algoitny.UsageLog{UserID: "u", Action: algoitny.ActionHint}, 2)
		algoitnytest.ErrCode(t, err, algoitny.ERATELIMITED)
		rl := err.(*algoitny.Error).RateLimit
		if rl.Limit != 2 || rl.Used != 2 || !rl.ResetAt.Equal(time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)) {
			t.Fatalf("rate limit %+v", rl)
		}
		// A zero limit admits nothing; -1 admits everything.
		algoitnytest.ErrCode(t, db.ConsumeQuota(ctx, &algoitny.UsageLog{UserID: "z", Action: algoitny.ActionHint}, 0), algoitny.ERATELIMITED)
		for range 25 {
			algoitnytest.OK(t, db.ConsumeQuota(ctx, &algoitny.UsageLog{UserID: "u", Action: algoitny.ActionExecution}, algoitny.Unlimited))
		}
		// The next UTC day starts from zero.
		now = now.Add(2 * time.Minute)
		algoitnytest.OK(t, db.ConsumeQuota(ctx, &algoitny.UsageLog{UserID: "u", Action: algoitny.ActionHint}, 2))
		counts := algoitnytest.Must[map[algoitny.UsageAction]int](t)(db.UsageCounts(ctx, "u", "2026-11-23"))
		if counts[algoitny.ActionHint] != 1 {
			t.Fatalf("next day counts %v", counts)
		}
	})

	t.Run("ReleaseAndExpiry", func(t *testing.T) {
		t.Parallel()
		db := newDB(t)
		now := time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC)
		db.SetClock(func() time.Time { return now })
		log := &algoitny.UsageLog{UserID: "u", Action: algoitny.ActionExecution}
		algoitnytest.OK(t, db.ConsumeQuota(ctx, log, 1))
		if !log.ExpiresAt.Equal(now.Add(90 * 24 * time.Hour)) {
			t.Fatalf("expires %v", log.ExpiresAt)
		}
		algoitnytest.ErrCode(t, db.ConsumeQuota(ctx, &algoitny.UsageLog{UserID: "u", Action: algoitny.ActionExecution}, 1), algoitny.ERATELIMITED)
		algoitnytest.OK(t, db.ReleaseQuota(ctx, log))
		algoitnytest.OK(t, db.ReleaseQuota(ctx, log)) // twice is a no-op
		if c := algoitnytest.Must[map[algoitny.UsageAction]int](t)(db.UsageCounts(ctx, "u", "2026-01-10")); c[algoitny.ActionExecution] != 0 {
			t.Fatalf("after release %v", c)
		}
		algoitnytest.OK(t, db.ConsumeQuota(ctx, &algoitny.UsageLog{UserID: "u", Action: algoitny.ActionExecution}, 1))
		// 91 days later the log is past its TTL: reads skip it even though
		// DynamoDB has not deleted it yet.
		day := "2026-01-10"
		if p := algoitnytest.Must[algoitny.Page[*algoitny.UsageLog]](t)(db.ListUsageLogs(ctx, "u", day, day, algoitny.PageRequest{})); len(p.Items) != 1 {
			t.Fatalf("%d logs before expiry", len(p.Items))
		}
		now = now.Add(91 * 24 * time.Hour)
		if p := algoitnytest.Must[algoitny.Page[*algoitny.UsageLog]](t)(db.ListUsageLogs(ctx, "u", day, day, algoitny.PageRequest{})); len(p.Items) != 0 {
			t.Fatalf("%d expired logs returned", len(p.Items))
		}
		_, err := db.ListUsageLogs(ctx, "u", "2026-02-01", "2026-01-01", algoitny.PageRequest{})
		algoitnytest.ErrCode(t, err, algoitny.EINVALID)
	})
}

package dynamo_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/algoitny/algoitnytest"
)

func TestCursors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := newDB(t)
	for _, u := range []string{"u1", "u2"} {
		for range 3 {
			algoitnytest.OK(t, db.CreateHistory(ctx, newHistory(u, algoitny.PlatformBaekjoon, "1", algoitny.LanguagePython, true)))
		}
	}
	mine := algoitnytest.Must[algoitny.Page[*algoitny.SearchHistory]](t)(db.ListUserHistory(ctx, "u1", algoitny.HistoryFilter{}, algoitny.PageRequest{First: 1}))
	public := algoitnytest.Must[algoitny.Page[*algoitny.SearchHistory]](t)(db.ListPublicHistory(ctx, algoitny.HistoryFilter{}, algoitny.PageRequest{First: 1}))

	forge := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	cases := map[string]func() error{
		"Garbage": func() error {
			_, err := db.ListUserHistory(ctx, "u1", algoitny.HistoryFilter{}, algoitny.PageRequest{After: "%%%not base64"})
			return err
		},
		"NotJSON": func() error {
			_, err := db.ListUserHistory(ctx, "u1", algoitny.HistoryFilter{}, algoitny.PageRequest{After: "bm90IGpzb24"})
			return err
		},
		"OtherList": func() error {
			_, err := db.ListUserHistory(ctx, "u1", algoitny.HistoryFilter{}, algoitny.PageRequest{After: public.EndCursor})
			return err
		},
		"OtherUser": func() error {
			_, err := db.ListUserHistory(ctx, "u2", algoitny.HistoryFilter{}, algoitny.PageRequest{After: mine.EndCursor})
			return err
		},
		"MissingKey": func() error {
			_, err := db.ListUserHistory(ctx, "u1", algoitny.HistoryFilter{}, algoitny.PageRequest{After: forge(map[string]any{"l": "userHistory", "k": map[string]string{"PK": "USER#u1"}})})
			return err
		},
		"ExtraKey": func() error {
			_, err := db.ListUserHistory(ctx, "u1", algoitny.HistoryFilter{}, algoitny.PageRequest{After: forge(map[string]any{"l": "userHistory", "k": map[string]string{"PK": "USER#u1", "SK": "HISTORY#x", "GSI1PK": "y"}})})
			return err
		},
		"WrongSKPrefix": func() error {
			_, err := db.ListUserHistory(ctx, "u1", algoitny.HistoryFilter{}, algoitny.PageRequest{After: forge(map[string]any{"l": "userHistory", "k": map[string]string{"PK": "USER#u1", "SK": "USAGE#x"}})})
			return err
		},
		"WrongTypes": func() error {
			_, err := db.ListUserHistory(ctx, "u1", algoitny.HistoryFilter{}, algoitny.PageRequest{After: forge(map[string]any{"l": "userHistory", "k": map[string]int{"PK": 1, "SK": 2}})})
			return err
		},
		"FirstTooLarge": func() error {
			_, err := db.ListUserHistory(ctx, "u1", algoitny.HistoryFilter{}, algoitny.PageRequest{First: 101})
			return err
		},
		"FirstNegative": func() error {
			_, err := db.ListPublicHistory(ctx, algoitny.HistoryFilter{}, algoitny.PageRequest{First: -1})
			return err
		},
		"TestCasesForeign": func() error {
			_, err := db.ListTestCases(ctx, algoitny.ProblemRef{Platform: "baekjoon", ProblemID: "1"}, algoitny.PageRequest{After: mine.EndCursor})
			return err
		},
	}
	for name, call := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			err := call()
			algoitnytest.ErrCode(t, err, algoitny.EINVALID)
			if e := err.(*algoitny.Error); e.Field != "after" && e.Field != "first" {
				t.Fatalf("field = %q", e.Field)
			}
		})
	}
	t.Run("ValidCursorResumes", func(t *testing.T) {
		next := algoitnytest.Must[algoitny.Page[*algoitny.SearchHistory]](t)(db.ListUserHistory(ctx, "u1", algoitny.HistoryFilter{}, algoitny.PageRequest{First: 5, After: mine.EndCursor}))
		if len(next.Items) != 2 || next.HasNextPage || next.Items[0].ID == mine.Items[0].ID {
			t.Fatalf("resumed page: %d items, hasNext %v", len(next.Items), next.HasNextPage)
		}
	})
}

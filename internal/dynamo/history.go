package dynamo

import (
	"context"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// historyItem is an execution in its owner's partition. GSI1 (the public
// feed) is set only while the code is public; GSI2 and GSI3 index every
// execution by platform and by language.
type historyItem struct {
	PK, SK            string
	EntityType        string
	HistoryID         string
	UserID            string
	UserIdentifier    string // the owner's email, as in seed 001
	ProblemPK         string
	ProblemInternalID string `dynamodbav:",omitempty"`
	Platform          string
	ProblemNumber     string
	ProblemTitle      string
	Language          string
	Code              string
	PassedCount       int
	FailedCount       int
	TotalCount        int
	IsCodePublic      bool
	Verdict           string
	CompileMessage    string `dynamodbav:",omitempty"`
	TestResults       []testResultItem
	Hints             []string `dynamodbav:",omitempty"`
	// Counterexample is the last findCounterexample's find (a detail:
	// not in summaries).
	Counterexample *counterexampleItem `dynamodbav:",omitempty"`
	JobID          string              `dynamodbav:",omitempty"`
	MaxTimeMs      int
	MaxMemoryKB    int
	// Score, MaxScore and Subtasks are the partial score
	// (algoitny.SearchHistory.Score); absent when the problem had no
	// subtasks. In summaries too: a list shows scores.
	Score          *float64            `dynamodbav:",omitempty"`
	MaxScore       *float64            `dynamodbav:",omitempty"`
	Subtasks       []subtaskResultItem `dynamodbav:",omitempty"`
	CreatedAt      time.Time
	GSI1PK, GSI1SK string `dynamodbav:",omitempty"`
	GSI2PK, GSI2SK string
	GSI3PK, GSI3SK string
}

type testResultItem struct {
	TestCaseID string `dynamodbav:"test_case_id"`
	Verdict    string `dynamodbav:"status"`
	Output     string `dynamodbav:"actual_output,omitempty"`
	Stderr     string `dynamodbav:"stderr,omitempty"`
	TimeMs     int    `dynamodbav:"time_ms"`
	MemoryKB   int    `dynamodbav:"memory_kb"`
	Message    string `dynamodbav:"message,omitempty"`
	// Points is a testlib checker's partial credit (quitp), absent when none.
	Points *float64 `dynamodbav:"points,omitempty"`
}

// counterexampleItem is algoitny.Counterexample as stored.
type counterexampleItem struct {
	Input, ExpectedOutput, ActualOutput string
	Verdict, Message                    string
	Seed                                int64
	Args                                []string
	Shrunk, Truncated                   bool
}

func marshalCounterexample(c *algoitny.Counterexample) *counterexampleItem {
	if c == nil {
		return nil
	}
	return &counterexampleItem{Input: c.Input, ExpectedOutput: c.ExpectedOutput, ActualOutput: c.ActualOutput,
		Verdict: string(c.Verdict), Message: c.Message, Seed: c.Seed, Args: c.Args, Shrunk: c.Shrunk, Truncated: c.Truncated}
}

func unmarshalCounterexample(it *counterexampleItem) *algoitny.Counterexample {
	if it == nil {
		return nil
	}
	return &algoitny.Counterexample{Input: it.Input, ExpectedOutput: it.ExpectedOutput, ActualOutput: it.ActualOutput,
		Verdict: algoitny.Verdict(it.Verdict), Message: it.Message, Seed: it.Seed, Args: it.Args, Shrunk: it.Shrunk, Truncated: it.Truncated}
}

type subtaskResultItem struct {
	Name      string
	Points    float64
	MaxPoints float64
	Passed    int
	Total     int
}

// marshalScore and unmarshalScore convert a history's partial score.
func marshalScore(it *historyItem, s *algoitny.Score) {
	if s == nil {
		return
	}
	it.Score, it.MaxScore = &s.Score, &s.MaxScore
	it.Subtasks = make([]subtaskResultItem, len(s.Subtasks))
	for i, r := range s.Subtasks {
		it.Subtasks[i] = subtaskResultItem(r)
	}
}

func unmarshalScore(it *historyItem) *algoitny.Score {
	if it.Score == nil || it.MaxScore == nil {
		return nil
	}
	s := &algoitny.Score{Score: *it.Score, MaxScore: *it.MaxScore, Subtasks: make([]algoitny.SubtaskResult, len(it.Subtasks))}
	for i, r := range it.Subtasks {
		s.Subtasks[i] = algoitny.SubtaskResult(r)
	}
	return s
}

func marshalHistory(h *algoitny.SearchHistory) (map[string]types.AttributeValue, error) {
	sk, err := historySK(h.ID)
	if err != nil {
		return nil, err
	}
	created := keyTime(h.CreatedAt)
	it := historyItem{
		PK: userPK(h.UserID), SK: sk, EntityType: "SearchHistory",
		HistoryID: h.ID, UserID: h.UserID, UserIdentifier: h.UserEmail,
		ProblemPK: problemPK(h.Platform, h.ProblemID), ProblemInternalID: h.ProblemInternalID,
		Platform: string(h.Platform), ProblemNumber: h.ProblemID, ProblemTitle: h.ProblemTitle,
		Language: string(h.Language), Code: h.Code,
		PassedCount: h.PassedCount, FailedCount: h.FailedCount, TotalCount: h.TotalCount,
		IsCodePublic: h.IsCodePublic, Verdict: string(h.Verdict), CompileMessage: h.CompileMessage,
		Hints: h.Hints, Counterexample: marshalCounterexample(h.Counterexample),
		JobID: h.JobID, MaxTimeMs: h.MaxTimeMs, MaxMemoryKB: h.MaxMemoryKB, CreatedAt: h.CreatedAt,
		GSI2PK: gsiHistoryPlatform(h.Platform), GSI2SK: created,
		GSI3PK: gsiHistoryLanguage(h.Language), GSI3SK: created,
	}
	it.TestResults = make([]testResultItem, len(h.TestResults))
	for i, r := range h.TestResults {
		it.TestResults[i] = testResultItem{TestCaseID: r.TestCaseID, Verdict: string(r.Verdict), Output: r.Output, Stderr: r.Stderr, TimeMs: r.TimeMs, MemoryKB: r.MemoryKB, Message: r.Message, Points: r.Points}
	}
	marshalScore(&it, h.Score)
	if h.IsCodePublic {
		it.GSI1PK, it.GSI1SK = gsiPublicHistory, created
	}
	av, err := attributevalue.MarshalMap(it)
	if err != nil {
		return nil, algoitny.Internal(err, "encode history")
	}
	return av, nil
}

func unmarshalHistory(av map[string]types.AttributeValue) (*algoitny.SearchHistory, error) {
	var it historyItem
	if err := attributevalue.UnmarshalMap(av, &it); err != nil {
		return nil, algoitny.Internal(err, "decode history")
	}
	h := &algoitny.SearchHistory{
		ID: it.HistoryID, UserID: it.UserID, UserEmail: it.UserIdentifier,
		Platform: algoitny.Platform(it.Platform), ProblemID: it.ProblemNumber, ProblemTitle: it.ProblemTitle,
		ProblemInternalID: it.ProblemInternalID, Language: algoitny.Language(it.Language), Code: it.Code,
		PassedCount: it.PassedCount, FailedCount: it.FailedCount, TotalCount: it.TotalCount,
		IsCodePublic: it.IsCodePublic, Verdict: algoitny.Verdict(it.Verdict), CompileMessage: it.CompileMessage,
		Hints: it.Hints, Counterexample: unmarshalCounterexample(it.Counterexample),
		JobID: it.JobID, MaxTimeMs: it.MaxTimeMs, MaxMemoryKB: it.MaxMemoryKB, CreatedAt: it.CreatedAt,
	}
	h.TestResults = make([]algoitny.TestResult, len(it.TestResults))
	for i, r := range it.TestResults {
		h.TestResults[i] = algoitny.TestResult{TestCaseID: r.TestCaseID, Verdict: algoitny.Verdict(r.Verdict), Output: r.Output, Stderr: r.Stderr, TimeMs: r.TimeMs, MemoryKB: r.MemoryKB, Message: r.Message, Points: r.Points}
	}
	h.Score = unmarshalScore(&it)
	return h, nil
}

// NewHistoryID returns a fresh history id and its creation time. Callers that
// need the id before the item is written (a job that will produce it) use
// this; CreateHistory assigns one otherwise.
func (db *DB) NewHistoryID() (string, time.Time) { return newID(db.now()) }

// CreateHistory stores a new execution (seed pattern #12) and counts it in
// the platform × language execution statistics. If h.ID is empty an id is
// assigned; a given id must come from NewHistoryID. Writing the same id twice
// returns ECONFLICT, which makes a retried job idempotent.
//
// An execution of a job (h.JobID set) is only written while that job is
// PROCESSING, in one transaction with that check: a job cancelled meanwhile
// — by its owner, or by the deletion of the account, which must not find
// an execution appear after it emptied the partition — gets ECONFLICT too.
func (db *DB) CreateHistory(ctx context.Context, h *algoitny.SearchHistory) error {
	if h.ID == "" {
		h.ID, h.CreatedAt = db.NewHistoryID()
	} else {
		t, err := idTime(h.ID)
		if err != nil {
			return err
		}
		h.CreatedAt = t
	}
	av, err := marshalHistory(h)
	if err != nil {
		return err
	}
	// A first accepted run of a problem makes the user's solved count grow
	// in the same transaction; a concurrent one of the same user can make
	// the transaction's read of it stale, and then it is read again.
	for attempt := 1; ; attempt++ {
		items := []types.TransactWriteItem{{Put: &types.Put{
			TableName: aws.String(db.tables.Main), Item: av, ConditionExpression: aws.String("attribute_not_exists(PK)"),
		}}}
		if h.JobID != "" {
			items = append(items, types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
				TableName: aws.String(db.tables.Main), Key: itemKey{jobPK(h.JobID), skMetadata}.av(),
				ConditionExpression:       aws.String("#s = :processing"),
				ExpressionAttributeNames:  map[string]string{"#s": "Status"},
				ExpressionAttributeValues: map[string]types.AttributeValue{":processing": &types.AttributeValueMemberS{Value: string(algoitny.JobProcessing)}},
			}})
		}
		jobCheck := len(items) - 1
		items = append(items, db.countExecution(h))
		solved, err := db.solvedWrites(ctx, h)
		if err != nil {
			return err
		}
		items = append(items, solved...)
		_, err = db.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		switch {
		case isConditionFailed(err) || conditionFailedAt(err, 0):
			return algoitny.Errorf(algoitny.ECONFLICT, "history %s already exists", h.ID)
		case h.JobID != "" && conditionFailedAt(err, jobCheck):
			return algoitny.Errorf(algoitny.ECONFLICT, "job %s is no longer running", h.JobID)
		case len(solved) > 0 && (conditionFailedAt(err, len(items)-2) || conditionFailedAt(err, len(items)-1)):
			// The solved count moved (another first accepted run of the
			// user's): read it again. Never ECONFLICT, which would say the
			// execution is stored.
			if attempt == maxSolvedAttempts {
				return algoitny.Internal(err, "storage is busy; retry")
			}
			if err := sleepCtx(ctx, time.Duration(1+rand.IntN(10*attempt))*time.Millisecond); err != nil {
				return err
			}
			continue
		case err != nil:
			return translate(err, "create history")
		}
		if len(solved) > 0 {
			db.solved.add(solvedMarker(h))
		}
		break
	}
	return db.CountExecution(ctx, h)
}

// CountExecution adds a stored execution to the global platform × language
// statistics (CreateHistory does; CompleteExecution leaves it to its
// caller, after the job's end is announced). The statistics item is hot
// (every execution adds to it), so it is not part of a transaction, where
// concurrent writers would cancel each other; a plain ADD serializes. A
// crash in between undercounts by one (the user's own counts are exact).
func (db *DB) CountExecution(ctx context.Context, h *algoitny.SearchHistory) error {
	_, err := db.client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(db.tables.Main), Key: itemKey{statsPK(), statsSK(h.Platform, h.Language)}.av(),
		UpdateExpression:          aws.String("ADD #c :one"),
		ExpressionAttributeNames:  map[string]string{"#c": "Count"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":one": &types.AttributeValueMemberN{Value: "1"}},
	})
	return translate(err, "count execution")
}

// CompleteExecution stores the execution h of job cur (PROCESSING, read
// by the caller) and completes the job with t and its progress step p, in
// one transaction: the execution, the job's status, its owner's pointer
// to it, the progress item, the user's counts. A job's completion and
// its execution are thus never apart, and a rescued attempt finds the job
// final. The global statistics are not counted (CountExecution).
//
// It returns the job as stored (cur with t applied). ECONFLICT: the job
// is no longer PROCESSING (cancelled), or h exists already (an earlier
// attempt stored it without completing the job); ENOTFOUND: the owner's
// pointer is gone (the account was deleted).
func (db *DB) CompleteExecution(ctx context.Context, h *algoitny.SearchHistory, cur *algoitny.Job, t algoitny.JobTransition, p *algoitny.JobProgress) (*algoitny.Job, error) {
	if h.JobID != cur.ID || cur.Status != algoitny.JobProcessing || !cur.Status.CanTransition(t.Status) {
		return nil, algoitny.Errorf(algoitny.ECONFLICT, "job is %s and cannot become %s with execution %s", cur.Status, t.Status, h.ID)
	}
	created, err := idTime(h.ID)
	if err != nil {
		return nil, err
	}
	h.CreatedAt = created
	av, err := marshalHistory(h)
	if err != nil {
		return nil, err
	}
	now := db.now().UTC()
	next, sets := applyTransition(cur, t, now)
	jobItems, err := db.transitionItems(cur, t.Status, sets)
	if err != nil {
		return nil, err
	}
	if p.ID == "" {
		p.ID, p.CreatedAt = newID(now)
	}
	p.JobID, p.Status = cur.ID, next.Status
	progress, err := marshalProgress(p)
	if err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		items := []types.TransactWriteItem{{Put: &types.Put{
			TableName: aws.String(db.tables.Main), Item: av, ConditionExpression: aws.String("attribute_not_exists(PK)"),
		}}}
		items = append(items, jobItems...) // 1: the job (its status), 2: the owner's pointer
		items = append(items, types.TransactWriteItem{Put: &types.Put{TableName: aws.String(db.tables.Main), Item: progress}})
		items = append(items, db.countExecution(h))
		solved, err := db.solvedWrites(ctx, h)
		if err != nil {
			return nil, err
		}
		items = append(items, solved...)
		_, err = db.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		switch {
		case conditionFailedAt(err, 0):
			return nil, algoitny.Errorf(algoitny.ECONFLICT, "history %s already exists", h.ID)
		case conditionFailedAt(err, 1):
			return nil, algoitny.Errorf(algoitny.ECONFLICT, "job %s is no longer running", cur.ID)
		case len(jobItems) > 1 && conditionFailedAt(err, 2):
			return nil, algoitny.Errorf(algoitny.ENOTFOUND, "job not found")
		case len(solved) > 0 && (conditionFailedAt(err, len(items)-2) || conditionFailedAt(err, len(items)-1)):
			if attempt == maxSolvedAttempts {
				return nil, algoitny.Internal(err, "storage is busy; retry")
			}
			if err := sleepCtx(ctx, time.Duration(1+rand.IntN(10*attempt))*time.Millisecond); err != nil {
				return nil, err
			}
			continue
		case err != nil:
			return nil, translate(err, "complete execution")
		}
		if len(solved) > 0 {
			db.solved.add(solvedMarker(h))
		}
		return &next, nil
	}
}

// maxSolvedAttempts bounds CreateHistory's reads again of a solved count
// that concurrent stores of the same user keep moving.
const maxSolvedAttempts = 20

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// countExecution adds an execution to its user's counts of its platform and
// language.
func (db *DB) countExecution(h *algoitny.SearchHistory) types.TransactWriteItem {
	accepted := "0"
	if h.Verdict == algoitny.VerdictAccepted {
		accepted = "1"
	}
	return types.TransactWriteItem{Update: &types.Update{
		TableName: aws.String(db.tables.Main), Key: itemKey{userPK(h.UserID), userStatsSK(h.Platform, h.Language)}.av(),
		UpdateExpression: aws.String("ADD Executions :one, Accepted :acc SET EntityType = :type"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":one": &types.AttributeValueMemberN{Value: "1"}, ":acc": &types.AttributeValueMemberN{Value: accepted},
			":type": &types.AttributeValueMemberS{Value: "UserStats"},
		},
	}}
}

// userTotalsItem is a user's solved count and leaderboard entry.
type userTotalsItem struct {
	PK, SK         string
	EntityType     string
	UserID         string
	UserIdentifier string // the email, to load the user by key
	Solved         int
	LastSolvedAt   time.Time
	GSI1PK, GSI1SK string
}

// solvedMarker is the key of the item that says h's user solved h's problem.
func solvedMarker(h *algoitny.SearchHistory) itemKey {
	return itemKey{userPK(h.UserID), solvedSK(algoitny.ProblemRef{Platform: h.Platform, ProblemID: h.ProblemID})}
}

// solvedWrites are the writes that count h's problem as solved by its user:
// none unless h is an accepted, ranked execution of a problem the user had
// not solved yet; else the problem's marker (which must not exist) and the
// totals with the count one higher (which must still be the count read).
// A marker once seen is remembered (db.solved): it is never deleted but
// with its account, whose id is not used again, so an accepted run of a
// problem its user solved before costs no read on the way to its result.
// A marker not seen is read, and its absence checked by the write.
func (db *DB) solvedWrites(ctx context.Context, h *algoitny.SearchHistory) ([]types.TransactWriteItem, error) {
	if !h.Ranked || h.Verdict != algoitny.VerdictAccepted {
		return nil, nil
	}
	marker := solvedMarker(h)
	totalsKey := itemKey{userPK(h.UserID), skUserTotals}
	if db.solved.has(marker) {
		return nil, nil
	}
	got, err := db.getItemFromDynamoDB(fresh(ctx), db.tables.Main, marker, memoTicket{})
	if err != nil || got != nil {
		if got != nil {
			db.solved.add(marker)
		}
		return nil, err
	}
	av, err := db.getItemFromDynamoDB(fresh(ctx), db.tables.Main, totalsKey, memoTicket{})
	if err != nil {
		return nil, err
	}
	var totals userTotalsItem
	cond := "attribute_not_exists(PK)"
	values := map[string]types.AttributeValue{}
	if av != nil {
		if err := attributevalue.UnmarshalMap(av, &totals); err != nil {
			return nil, algoitny.Internal(err, "decode user totals")
		}
		cond = "Solved = :was"
		values[":was"] = &types.AttributeValueMemberN{Value: strconv.Itoa(totals.Solved)}
	}
	totals = userTotalsItem{
		PK: totalsKey.PK, SK: totalsKey.SK, EntityType: "UserTotals", UserID: h.UserID, UserIdentifier: h.UserEmail,
		Solved: totals.Solved + 1, LastSolvedAt: h.CreatedAt,
		GSI1PK: gsiLeaderboard, GSI1SK: gsiLeaderboardSK(totals.Solved+1, h.CreatedAt, h.UserID),
	}
	item, err := attributevalue.MarshalMap(totals)
	if err != nil {
		return nil, algoitny.Internal(err, "encode user totals")
	}
	markerItem, err := attributevalue.MarshalMap(struct {
		PK, SK, EntityType, HistoryID string
		SolvedAt                      time.Time
	}{marker.PK, marker.SK, "Solved", h.ID, h.CreatedAt})
	if err != nil {
		return nil, algoitny.Internal(err, "encode solved marker")
	}
	put := &types.Put{TableName: aws.String(db.tables.Main), Item: item, ConditionExpression: aws.String(cond)}
	if len(values) > 0 {
		put.ExpressionAttributeValues = values
	}
	return []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(db.tables.Main), Item: markerItem, ConditionExpression: aws.String("attribute_not_exists(PK)")}},
		{Put: put},
	}, nil
}

// GetUserStats returns a user's execution statistics (seed 001 #31), in one
// Query of their partition; a user with no execution has zero counts.
func (db *DB) GetUserStats(ctx context.Context, userID string) (*algoitny.UserStats, error) {
	items, err := db.all(ctx, &query{list: "userStats", table: db.tables.Main, pk: userPK(userID), skPrefix: skPrefixUserStats, forward: true})
	if err != nil {
		return nil, err
	}
	stats := &algoitny.UserStats{}
	for _, av := range items {
		sk := stringAttr(av, attrSK)
		if sk == skUserTotals {
			var t userTotalsItem
			if err := attributevalue.UnmarshalMap(av, &t); err != nil {
				return nil, algoitny.Internal(err, "decode user totals")
			}
			stats.SolvedProblems, stats.LastSolvedAt = t.Solved, t.LastSolvedAt
			continue
		}
		p, l, ok := parseUserStatsSK(sk)
		if !ok {
			continue
		}
		var c struct{ Executions, Accepted int }
		if err := attributevalue.UnmarshalMap(av, &c); err != nil {
			return nil, algoitny.Internal(err, "decode user stats")
		}
		stats.Executions += c.Executions
		stats.Accepted += c.Accepted
		stats.ByPlatformAndLanguage = append(stats.ByPlatformAndLanguage, algoitny.UserExecutionStat{Platform: p, Language: l, Executions: c.Executions, Accepted: c.Accepted})
	}
	return stats, nil
}

// Leaderboard returns the n users (at most 100) who solved the most
// problems (seed 001 #33), in one Query of GSI1; users with as many solved
// problems share a rank, the first to get there listed first.
func (db *DB) Leaderboard(ctx context.Context, n int) ([]algoitny.LeaderboardEntry, error) {
	if n < 1 || n > 100 {
		return nil, algoitny.Invalid("first", "first must be between 1 and 100")
	}
	items, _, err := db.query(ctx, &query{list: "leaderboard", table: db.tables.Main, index: "GSI1", pk: gsiLeaderboard}, int32(n), nil)
	if err != nil {
		return nil, err
	}
	out := make([]algoitny.LeaderboardEntry, 0, len(items))
	for i, av := range items {
		var t userTotalsItem
		if err := attributevalue.UnmarshalMap(av, &t); err != nil {
			return nil, algoitny.Internal(err, "decode leaderboard")
		}
		rank := i + 1
		if i > 0 && out[i-1].SolvedProblems == t.Solved {
			rank = out[i-1].Rank
		}
		out = append(out, algoitny.LeaderboardEntry{Rank: rank, UserID: t.UserID, UserEmail: t.UserIdentifier, SolvedProblems: t.Solved, LastSolvedAt: t.LastSolvedAt})
	}
	return out, nil
}

// GetHistory returns one execution of a user (#10), or ENOTFOUND.
func (db *DB) GetHistory(ctx context.Context, ref algoitny.HistoryRef) (*algoitny.SearchHistory, error) {
	sk, err := historySK(ref.ID)
	if err != nil {
		return nil, algoitny.Errorf(algoitny.ENOTFOUND, "history not found")
	}
	return getOne(ctx, db, db.tables.Main, itemKey{userPK(ref.UserID), sk}, unmarshalHistory, "history not found")
}

// GetHistories loads many executions with BatchGetItem; missing or malformed
// refs are absent from the map.
func (db *DB) GetHistories(ctx context.Context, refs []algoitny.HistoryRef) (map[algoitny.HistoryRef]*algoitny.SearchHistory, error) {
	keys := make([]itemKey, 0, len(refs))
	for _, r := range refs {
		if sk, err := historySK(r.ID); err == nil {
			keys = append(keys, itemKey{userPK(r.UserID), sk})
		}
	}
	return getMany(ctx, db, db.tables.Main, keys, unmarshalHistory, (*algoitny.SearchHistory).Ref)
}

// GetHistoriesAndProblems reads executions and problems in one
// BatchGetItem (both live in the main table, and at most 100 keys go in one
// call): a page of the public list confirms its executions, and that their
// problems are published, in one round trip. Missing ones are absent from
// the maps.
func (db *DB) GetHistoriesAndProblems(ctx context.Context, refs []algoitny.HistoryRef, problems []algoitny.ProblemRef) (map[algoitny.HistoryRef]*algoitny.SearchHistory, map[algoitny.ProblemRef]*algoitny.Problem, error) {
	keys := make([]itemKey, 0, len(refs)+len(problems))
	for _, r := range refs {
		if sk, err := historySK(r.ID); err == nil {
			keys = append(keys, itemKey{userPK(r.UserID), sk})
		}
	}
	for _, r := range problems {
		keys = append(keys, itemKey{problemPK(r.Platform, r.ProblemID), skMetadata})
	}
	found, err := db.batchGet(ctx, db.tables.Main, keys)
	if err != nil {
		return nil, nil, err
	}
	hs := make(map[algoitny.HistoryRef]*algoitny.SearchHistory, len(refs))
	ps := make(map[algoitny.ProblemRef]*algoitny.Problem, len(problems))
	for k, av := range found {
		if isHistorySK(k.SK) {
			h, err := unmarshalHistory(av)
			if err != nil {
				return nil, nil, err
			}
			hs[h.Ref()] = h
			continue
		}
		p, err := unmarshalProblem(av)
		if err != nil {
			return nil, nil, err
		}
		ps[p.Ref()] = p
	}
	return hs, ps, nil
}

func historyFilter(f algoitny.HistoryFilter) *expression.ConditionBuilder {
	var conds []expression.ConditionBuilder
	if f.Platform != nil {
		conds = append(conds, expression.Name("Platform").Equal(expression.Value(string(*f.Platform))))
	}
	if f.Language != nil {
		conds = append(conds, expression.Name("Language").Equal(expression.Value(string(*f.Language))))
	}
	if f.ProblemID != "" {
		conds = append(conds, expression.Name("ProblemNumber").Equal(expression.Value(f.ProblemID)))
	}
	return andAll(conds)
}

// ListUserHistory pages through a user's executions, newest first (#7, #11:
// platform, language and problem narrow the user's own partition).
func (db *DB) ListUserHistory(ctx context.Context, userID string, f algoitny.HistoryFilter, page algoitny.PageRequest) (algoitny.Page[*algoitny.SearchHistory], error) {
	return db.listHistory(ctx, &query{list: "userHistory", table: db.tables.Main, pk: userPK(userID), skPrefix: skPrefixHistory, filter: historyFilter(f)}, page)
}

// ListPublicHistory pages through everyone's public executions, newest first
// (#8, the sparse GSI1).
func (db *DB) ListPublicHistory(ctx context.Context, f algoitny.HistoryFilter, page algoitny.PageRequest) (algoitny.Page[*algoitny.SearchHistory], error) {
	return db.listHistory(ctx, &query{list: "publicHistory", table: db.tables.Main, index: indexGSI1, pk: gsiPublicHistory, filter: historyFilter(f)}, page)
}

// ListHistoryByPlatform pages through all executions on a platform, newest
// first (GSI2; staff only — it includes private code).
func (db *DB) ListHistoryByPlatform(ctx context.Context, platform algoitny.Platform, page algoitny.PageRequest) (algoitny.Page[*algoitny.SearchHistory], error) {
	return db.listHistory(ctx, &query{list: "historyByPlatform", table: db.tables.Main, index: indexGSI2, pk: gsiHistoryPlatform(platform)}, page)
}

// ListHistoryByLanguage pages through all executions in a language, newest
// first (GSI3, history only; staff only).
func (db *DB) ListHistoryByLanguage(ctx context.Context, lang algoitny.Language, page algoitny.PageRequest) (algoitny.Page[*algoitny.SearchHistory], error) {
	return db.listHistory(ctx, &query{list: "historyByLanguage", table: db.tables.Main, index: indexGSI3, pk: gsiHistoryLanguage(lang)}, page)
}

// listHistory reads a page of executions; when ctx allows summaries
// (algoitny.WithHistorySummaries) only historySummaryAttrs are read and the
// items are marked Summary.
func (db *DB) listHistory(ctx context.Context, q *query, page algoitny.PageRequest) (algoitny.Page[*algoitny.SearchHistory], error) {
	summary := algoitny.HistorySummaries(ctx)
	if summary {
		q.project = historySummaryAttrs
	}
	p, err := db.page(ctx, q, page)
	if err != nil {
		return algoitny.Page[*algoitny.SearchHistory]{}, err
	}
	out, err := convertPage(p, unmarshalHistory)
	for _, h := range out.Items {
		h.Summary = summary
	}
	return out, err
}

// historySummaryAttrs are the attributes of a history item but its details
// (code, compile message, test results, hints), taken from historyItem so
// that a new attribute is in summaries unless it is named here.
var historySummaryAttrs = func() []string {
	details := map[string]bool{"Code": true, "CompileMessage": true, "TestResults": true, "Hints": true, "Counterexample": true}
	var names []string
	t := reflect.TypeFor[historyItem]()
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("dynamodbav"), ",")
		if name == "" {
			name = f.Name
		}
		if !details[f.Name] {
			names = append(names, name)
		}
	}
	return names
}()

// SetHistoryVisibility makes an execution public (it enters the public feed)
// or private (it leaves it). ENOTFOUND if there is no such execution.
func (db *DB) SetHistoryVisibility(ctx context.Context, ref algoitny.HistoryRef, public bool) (*algoitny.SearchHistory, error) {
	h, err := db.GetHistory(ctx, ref)
	if err != nil {
		return nil, err
	}
	upd := expression.Set(expression.Name("IsCodePublic"), expression.Value(public))
	if public {
		upd = upd.Set(expression.Name(attrGSI1PK), expression.Value(gsiPublicHistory)).
			Set(expression.Name(attrGSI1SK), expression.Value(keyTime(h.CreatedAt)))
	} else {
		upd = upd.Remove(expression.Name(attrGSI1PK)).Remove(expression.Name(attrGSI1SK))
	}
	return db.updateHistory(ctx, ref, upd)
}

// SetHints stores the hints of an execution (#17). ENOTFOUND if there is no
// such execution.
func (db *DB) SetHints(ctx context.Context, ref algoitny.HistoryRef, hints []string) (*algoitny.SearchHistory, error) {
	return db.updateHistory(ctx, ref, expression.Set(expression.Name("Hints"), expression.Value(hints)))
}

// SetCounterexample stores the counterexample found for an execution (nil:
// none found, which removes an earlier one). ENOTFOUND if there is no such
// execution.
func (db *DB) SetCounterexample(ctx context.Context, ref algoitny.HistoryRef, c *algoitny.Counterexample) (*algoitny.SearchHistory, error) {
	if c == nil {
		return db.updateHistory(ctx, ref, expression.Remove(expression.Name("Counterexample")))
	}
	return db.updateHistory(ctx, ref, expression.Set(expression.Name("Counterexample"), expression.Value(marshalCounterexample(c))))
}

func (db *DB) updateHistory(ctx context.Context, ref algoitny.HistoryRef, upd expression.UpdateBuilder) (*algoitny.SearchHistory, error) {
	sk, err := historySK(ref.ID)
	if err != nil {
		return nil, algoitny.Errorf(algoitny.ENOTFOUND, "history not found")
	}
	av, err := db.update(ctx, db.tables.Main, itemKey{userPK(ref.UserID), sk}, upd, nil)
	if isConditionFailed(err) {
		return nil, algoitny.Errorf(algoitny.ENOTFOUND, "history not found")
	}
	if err != nil {
		return nil, translate(err, "update history")
	}
	return unmarshalHistory(av)
}

// ExecutionStats returns the execution counts by platform and language,
// pre-aggregated on write (seed 001 "Aggregations"), in one Query.
func (db *DB) ExecutionStats(ctx context.Context) ([]algoitny.ExecutionStat, error) {
	items, err := db.all(ctx, &query{list: "stats", table: db.tables.Main, pk: statsPK(), forward: true})
	if err != nil {
		return nil, err
	}
	stats := make([]algoitny.ExecutionStat, 0, len(items))
	for _, av := range items {
		var it struct {
			SK    string
			Count int
		}
		if err := attributevalue.UnmarshalMap(av, &it); err != nil {
			return nil, algoitny.Internal(err, "decode stats")
		}
		p, l, ok := parseStatsSK(it.SK)
		if !ok {
			continue
		}
		stats = append(stats, algoitny.ExecutionStat{Platform: p, Language: l, Count: it.Count})
	}
	return stats, nil
}

// knownKeysMax bounds knownKeys: about 6 MB of keys.
const knownKeysMax = 1 << 16

// knownKeys is a bounded set of keys of items known to exist and never to
// be deleted while their owner lives (solved markers). When full, an
// arbitrary key gives way: forgetting one only costs a read.
type knownKeys struct {
	mu sync.Mutex
	m  map[itemKey]struct{}
}

func (k *knownKeys) has(key itemKey) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	_, ok := k.m[key]
	return ok
}

func (k *knownKeys) add(key itemKey) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil {
		k.m = map[itemKey]struct{}{}
	}
	if len(k.m) >= knownKeysMax {
		for old := range k.m {
			delete(k.m, old)
			break
		}
	}
	k.m[key] = struct{}{}
}

package atcoder

import (
	"context"
	"time"

	"github.com/algoitny/api/internal/algoitny"
)

// Store is the storage of this package, implemented by *dynamo.DB. Every
// method returns EINTERNAL when storage fails, besides the codes listed.
type Store interface {
	// LinkAtCoder links userID to handle. Linking the handle already linked
	// (compared case-insensitively) changes nothing and reports changed =
	// false; another handle replaces the link and deletes the AC list, which
	// belonged to the old handle. ECONFLICT when a concurrent link won.
	LinkAtCoder(ctx context.Context, userID, handle string) (link *algoitny.AtCoderLink, changed bool, err error)
	// UnlinkAtCoder deletes the link and the AC list; unlinking an account
	// that is not linked is not an error.
	UnlinkAtCoder(ctx context.Context, userID string) error
	// GetAtCoderLink returns the link, or ENOTFOUND.
	GetAtCoderLink(ctx context.Context, userID string) (*algoitny.AtCoderLink, error)
	// GetAtCoderState reads the link and the AC list in one strongly
	// consistent request. ENOTFOUND when not linked; the list is empty
	// (Version 0) before the first sync.
	GetAtCoderState(ctx context.Context, userID string) (*algoitny.AtCoderLink, *algoitny.ACList, error)
	// GetACList reads one user's AC list in exactly one request; an empty
	// list when there is none.
	GetACList(ctx context.Context, userID string) (*algoitny.ACList, error)
	// GetACLists reads many users' AC lists with BatchGetItem (100 keys a
	// call, unprocessed keys retried); users without a list are absent.
	GetACLists(ctx context.Context, userIDs []string) (map[string]*algoitny.ACList, error)
	// CommitAtCoderSync stores one page of sync progress atomically. It
	// returns ECONFLICT when the link or the list changed since they were
	// read (another sync, a new link, an unlink).
	CommitAtCoderSync(ctx context.Context, c algoitny.AtCoderSyncCommit) error
	// RecordAtCoderSyncFailure notes a failed sync on the link. ECONFLICT
	// when the link is gone or was replaced.
	RecordAtCoderSyncFailure(ctx context.Context, f algoitny.AtCoderSyncFailure) error
	// ListAtCoderLinksDue pages through the links whose last sync attempt is
	// before attemptedBefore (never attempted first), least recent first.
	// EINVALID for a bad page request.
	ListAtCoderLinksDue(ctx context.Context, attemptedBefore time.Time, page algoitny.PageRequest) (algoitny.Page[*algoitny.AtCoderLink], error)
	// ListADTContests returns the ADT contests starting in month (YYYYMM,
	// UTC), in chronological order.
	ListADTContests(ctx context.Context, month string) ([]algoitny.ADTContest, error)
	// PutADTContests stores contest records with BatchWriteItem (25 a call,
	// unprocessed items retried), replacing records of the same key.
	PutADTContests(ctx context.Context, contests []algoitny.ADTContest) error
	// SetADTContestProblems replaces the problems of contest c's record; it
	// reports false (and changes nothing) when the record is missing.
	SetADTContestProblems(ctx context.Context, c algoitny.ADTContest, problems []algoitny.ADTContestProblem) (bool, error)
	// AdvanceADTContest raises the contest's last_fetched_submission_id to
	// submissionID; it reports false (and changes nothing) when the record
	// is missing or already at or past it.
	AdvanceADTContest(ctx context.Context, c algoitny.ADTContest, submissionID int64) (bool, error)
}

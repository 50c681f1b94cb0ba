// Package atcoder syncs the problems AlgoItny users have solved on AtCoder
// (the system of seed 004, issue 9): a user links an AtCoder handle, a sync
// pulls the handle's submissions from the AtCoder Problems API
// (kenkoooo.com), keeps the accepted ("AC") ones and merges their problem ids
// into one per-user AC list, with each problem's first-AC time; AtCoder
// Daily Training (ADT) contests are discovered from the same API and
// recorded by month, with their problems and AtCoder Problems' difficulty
// estimates (issue 20).
//
// The domain types (algoitny.AtCoderLink, ACList, ADTContest,
// SolvedProblems, AtCoderSyncResult) live in internal/algoitny, so that
// storage, the dataloaders and the GraphQL layer share them without
// importing this package. This package holds the HTTP client of the API
// with its etiquette (Client: one call per MinInterval shared by every
// caller, a user agent, timeouts, retries with backoff on 429/5xx honouring
// Retry-After), the sync itself (Syncer) and the service the GraphQL layer
// calls (Service). Storage is the
// Store interface, implemented by internal/dynamo. The River jobs (Jobs:
// the periodic sweep and on-demand syncs, which call the Syncer; Queue
// inserts the latter) live here too, and the runner of internal/jobs
// hosts them as a plugin.
//
// # Sync progress
//
// The API returns at most 500 submissions a call, those with epoch_second ≥
// from_second, oldest first. Several submissions can share a second and a page
// can end in the middle of one, so progress is a Cursor: the second to ask
// from next and the ids already processed at that second. Every page is
// committed with its cursor in one DynamoDB transaction (link item: cursor and
// version; AC item: the merged list), conditional on the versions read, so a
// sync that stops anywhere resumes after the last committed page: nothing is
// processed twice and nothing is skipped. Only the submissions of the boundary
// second are transferred again, and ignored by id (the one exception is the
// backfill of first-AC times below).
//
// # First-AC times
//
// The AC list keeps, for each problem, the epoch second of its earliest
// accepted submission (issue 20). A page is merged into the list by taking
// the minimum, so duplicate, repeated and out-of-order submissions give the
// same times whatever the order of pages and of submissions within one.
//
// Upgrade path: a list stored before times were kept has none
// (algoitny.ACList.TimesRecorded false); its problems show no first-AC time
// and count for no streak day. The next sync of such a list (the periodic
// sweep's or syncSolvedProblems) starts over from from_second=0: the
// history is read again, one call per 500 submissions as in a first sync,
// and the first page's commit already stores the list with times (unknown
// ones as 0), so a backfill that stops resumes from its own cursor rather
// than starting over. Only the cursor moves back; the list never loses a
// problem. A problem whose accepted submissions AtCoder Problems no longer
// lists keeps an unknown time, and is not asked about again.
//
// # Streaks
//
// Streak computes, when the list is read (Service.Solved: the one read of
// the user's state), AtCoder Problems' streak: the days in JST (UTC+9) of
// the first-AC times, the longest run of consecutive days and the run that
// ends today or yesterday relative to the clock. Unknown times count for no
// day.
//
// # ADT problems and difficulties
//
// The first run of every periodic sweep records newly announced ADT contests
// (contests.json), then SyncADTProblems reads contest-problem.json,
// problems.json and problem-models.json and stores, in each recorded ADT
// contest's record, its problems in index order with their names and raw
// difficulties. A record is rewritten only when that list changed, so a run
// with nothing new costs three downloads and one Query per month with ADT
// contests. Reading a month is one Query; MarkSolvedByMe adds the reader's
// progress with one read of their AC list.
//
// # ADT contest records
//
// last_fetched_submission_id of an ADT contest is the highest submission id
// of that contest that any user's sync has processed. It is raised (never
// lowered) with a conditional update before the page that contains the
// submission is committed, so a crash in between only repeats an idempotent
// update.
package atcoder

package dynamo

// Every key of every table is built in this file. The formats are those of
// design.md §4 (from seed 001), with the seed's defects fixed where noted.

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/google/uuid"
)

// Attribute names of keys and indexes.
const (
	attrPK     = "PK"
	attrSK     = "SK"
	attrGSI1PK = "GSI1PK"
	attrGSI1SK = "GSI1SK"
	attrGSI2PK = "GSI2PK"
	attrGSI2SK = "GSI2SK"
	attrGSI3PK = "GSI3PK"
	attrGSI3SK = "GSI3SK"
	attrTTL    = "TTL"
)

// Index names.
const (
	indexGSI1 = "GSI1"
	indexGSI2 = "GSI2"
	indexGSI3 = "GSI3"
)

const skMetadata = "METADATA"

// timeLayout is the timestamp format inside keys: UTC, fixed width, millisecond
// precision, so that string order is time order.
const timeLayout = "2006-01-02T15:04:05.000Z"

func keyTime(t time.Time) string { return t.UTC().Format(timeLayout) }

// newID returns a new time-ordered id (UUIDv7) and the millisecond timestamp
// embedded in it. Ids of items whose sort key starts with a timestamp are
// UUIDv7 so that the sort key can be rebuilt from the id alone (see
// historySK): a GetItem by id needs no index.
//
// Ids made by this process in the same millisecond sort in the order they
// were made: test cases added together keep their order (test 1 stays the
// sample), and so do a job's progress steps.
func newID(now time.Time) (string, time.Time) {
	id := uuid.Must(uuid.NewV7())
	// Overwrite the 48-bit millisecond timestamp with our clock so tests can
	// control it and the key's time equals CreatedAt.
	ms := uint64(now.UnixMilli())
	for i := 0; i < 6; i++ {
		id[i] = byte(ms >> (40 - 8*i))
	}
	lastID.Lock()
	if last := lastID.id; bytes.Equal(id[:6], last[:6]) && bytes.Compare(id[:], last[:]) <= 0 {
		// The random bits after the millisecond need not grow with our
		// clock's (uuid reads its own): count up from the last id instead.
		id = nextID(last)
	}
	lastID.id = id
	lastID.Unlock()
	return id.String(), time.UnixMilli(int64(ms)).UTC()
}

var lastID struct {
	sync.Mutex
	id uuid.UUID
}

// nextID is id plus one in its 62 random bits after the variant (bytes
// 8–15), leaving the version and variant bits alone.
func nextID(id uuid.UUID) uuid.UUID {
	for i := 15; i >= 8; i-- {
		mask := byte(0xff)
		if i == 8 {
			mask = 0x3f // the variant's two bits stay
		}
		v := (id[i] & mask) + 1
		id[i] = id[i]&^mask | v&mask
		if v&mask != 0 {
			break
		}
	}
	return id
}

// idTime returns the timestamp embedded in a UUIDv7 id. It returns EINVALID
// (and ENOTFOUND-worthy garbage never reaches DynamoDB) for anything else.
func idTime(id string) (time.Time, error) {
	u, err := uuid.Parse(id)
	if err != nil || u.Version() != 7 {
		return time.Time{}, algoitny.Invalid("id", "malformed id %q", id)
	}
	var ms int64
	for i := 0; i < 6; i++ {
		ms = ms<<8 | int64(u[i])
	}
	return time.UnixMilli(ms).UTC(), nil
}

// --- Main table: problems and test cases -----------------------------------

func problemPK(platform algoitny.Platform, problemID string) string {
	return pkPrefixProblem + string(platform) + "#" + problemID
}

// pkPrefixProblem begins every problem partition's key (see partitions.go).
const pkPrefixProblem = "PROBLEM#"

const skPrefixTestCase = "TESTCASE#"

func testCaseSK(createdAt time.Time, id string) string {
	return skPrefixTestCase + keyTime(createdAt) + "#" + id
}

// testCasePartSK is the key of one part of a test case too large for one item.
// Parts sort right after their test case (its SK is a prefix of theirs), so
// one Query of the problem's partition reads a test case and then its parts.
func testCasePartSK(parentSK string, n int) string {
	return fmt.Sprintf("%s#PART#%05d", parentSK, n)
}

// isTestCasePartSK reports whether sk is a part key rather than a test case.
func isTestCasePartSK(sk string) bool { return strings.Contains(sk, "#PART#") }

func gsiProblemPlatform(p algoitny.Platform) string { return "PLATFORM#" + string(p) }

func gsiProblemCompleted(completed bool) string {
	return "COMPLETED#" + strconv.FormatBool(completed)
}

// gsiProblemLanguage fixes a seed defect: the seed writes GSI3PK
// "LANGUAGE#python" on both problems and history items, so a "problems by
// language" Query also returned history. Values are now qualified per entity.
func gsiProblemLanguage(l algoitny.Language) string { return "PROBLEM#LANGUAGE#" + string(l) }

// userProblemsSK is the per-user counter of registered problems, which gates a
// plan's MaxProblems exactly (a conditional ADD in the same transaction as the
// problem).
const skUserProblemCount = "PROBLEMCOUNT"

// --- Main table: a user's partition ----------------------------------------

func userPK(userID string) string { return pkPrefixUser + userID }

const skPrefixHistory = "HISTORY#"

// isHistorySK reports whether sk is a historySK (partitions.go caches them).
func isHistorySK(sk string) bool { return strings.HasPrefix(sk, skPrefixHistory) }

// historySK is rebuilt from the history id alone: ids are UUIDv7 whose
// embedded time is the item's CreatedAt.
func historySK(id string) (string, error) {
	t, err := idTime(id)
	if err != nil {
		return "", err
	}
	return skPrefixHistory + keyTime(t) + "#" + id, nil
}

// gsiPublicHistory is the sparse public feed: only public items carry it.
const gsiPublicHistory = "PUBLIC#true"

func gsiHistoryPlatform(p algoitny.Platform) string { return "PLATFORM#" + string(p) }

// gsiHistoryLanguage: see gsiProblemLanguage.
func gsiHistoryLanguage(l algoitny.Language) string { return "HISTORY#LANGUAGE#" + string(l) }

const skPrefixUsage = "USAGE#"

func usageDayPrefix(day string) string { return skPrefixUsage + day + "#" }

func usageSK(day string, action algoitny.UsageAction, createdAt time.Time, id string) string {
	return usageDayPrefix(day) + string(action) + "#" + keyTime(createdAt) + "#" + id
}

// quotaSK is the per-user, per-day counter item that makes quotas exact.
// The seed counted today's logs and then wrote one, which lets concurrent
// requests overshoot the limit; a conditional ADD on a counter in the same
// transaction as the log cannot. One item holds every action's counter of
// the day (quotaCountAttr), so that showing a user's usage is one GetItem.
func quotaSK(day string) string { return skPrefixQuota + day }

const skPrefixQuota = "QUOTA#"

// isQuotaSK reports whether sk is a quotaSK (partitions.go caches them).
func isQuotaSK(sk string) bool { return strings.HasPrefix(sk, skPrefixQuota) }

// quotaCountAttr is the attribute of quotaSK's item counting action.
func quotaCountAttr(action algoitny.UsageAction) string { return "Count_" + string(action) }

const skPrefixUserJob = "JOB#"

// userJobSK is a pointer from the user's partition to one of their jobs, so
// that "my jobs" is a Query (the job's own GSIs are taken by type, status and
// River id).
func userJobSK(jobID string) string { return skPrefixUserJob + jobID }

// --- Main table: jobs --------------------------------------------------------

func jobPK(jobID string) string { return "JOB#" + jobID }

const skPrefixProgress = "PROG#"

// progressSK adds a unique suffix to the seed's PROG#{timestamp}: two steps in
// the same millisecond must not overwrite each other.
func progressSK(createdAt time.Time, id string) string {
	return skPrefixProgress + keyTime(createdAt) + "#" + id
}

// skPrefixExecutionTest begins the items of a running execution's finished
// tests in its job's partition (execution_tests.go); executionTestSK
// orders them by index (5 digits).
const skPrefixExecutionTest = "TEST#"

func executionTestSK(index int) string { return fmt.Sprintf("%s%05d", skPrefixExecutionTest, index) }

// A job's upload (a problem package to import) is kept beside the job as
// numbered parts of at most uploadPartBytes: JOB#{id} / UPLOAD#{n}.
const skPrefixUpload = "UPLOAD#"

func uploadSK(part int) string { return fmt.Sprintf("%s%05d", skPrefixUpload, part) }

func gsiJobType(t algoitny.JobType) string     { return "JOBTYPE#" + string(t) }
func gsiJobStatus(s algoitny.JobStatus) string { return "STATUS#" + string(s) }
func gsiJobTask(riverJobID int64) string       { return "TASK#" + strconv.FormatInt(riverJobID, 10) }
func statsPK() string                          { return "STATS#EXECUTIONS" }
func statsSK(p algoitny.Platform, l algoitny.Language) string {
	return "PLATFORM#" + string(p) + "#LANGUAGE#" + string(l)
}

// A user's statistics (seed 001 #31, #33) live in their partition, so that
// deleting the account deletes them: one item per platform and language
// (executions, accepted), a totals item (solved problems) that is also the
// user's leaderboard entry on GSI1, and a marker per problem solved, which
// makes "distinct problems" exact.
const (
	skPrefixUserStats = "STATS#"
	skUserTotals      = "STATS#TOTAL"
	skPrefixSolved    = "SOLVED#"
	// gsiLeaderboard is the one GSI1 partition of every user with a solved
	// problem: read newest-first (descending), its sort key puts the most
	// solved problems first, and among equals the one who got there first.
	gsiLeaderboard = "LEADERBOARD"
)

func userStatsSK(p algoitny.Platform, l algoitny.Language) string {
	return skPrefixUserStats + "PLATFORM#" + string(p) + "#LANGUAGE#" + string(l)
}

// parseUserStatsSK is the inverse of userStatsSK.
func parseUserStatsSK(sk string) (algoitny.Platform, algoitny.Language, bool) {
	rest, ok := strings.CutPrefix(sk, skPrefixUserStats)
	if !ok {
		return "", "", false
	}
	return parseStatsSK(rest)
}

func solvedSK(p algoitny.ProblemRef) string {
	return skPrefixSolved + string(p.Platform) + "#" + p.ProblemID
}

// gsiLeaderboardSK orders the leaderboard: solved problems, zero-padded,
// then the time they were reached, inverted (read descending, earlier
// first), then the user.
func gsiLeaderboardSK(solved int, at time.Time, userID string) string {
	return fmt.Sprintf("%010d#%013d#%s", solved, 9_999_999_999_999-at.UnixMilli(), userID)
}

// --- Users table -------------------------------------------------------------

func userEmailPK(email string) string { return pkPrefixUser + strings.ToLower(email) }

// pkPrefixUser begins users' partition keys (see partitions.go).
const pkPrefixUser = "USER#"

func gsiUserGoogleID(googleID string) string { return "GOOGLEID#" + googleID }

func gsiUserPlan(planID string) string { return "PLAN#" + planID }

func gsiUserID(userID string) string { return "USERID#" + userID }

// googleIDMarkerPK is a uniqueness marker. DynamoDB does not enforce unique
// GSI values, so the seed's GSI1 alone would let two concurrent first
// sign-ins create two users for one Google account; the marker is written in
// the same transaction as the user with attribute_not_exists.
func googleIDMarkerPK(googleID string) string { return "GOOGLEID#" + googleID }

const skUnique = "UNIQUE"

// sessionRevokedPK marks a logged-out session until its token would expire.
func sessionRevokedPK(sessionID string) string { return pkPrefixSession + sessionID }

// pkPrefixSession begins the keys of logged-out session markers (see partitions.go).
const pkPrefixSession = "SESSION#"

const skRevoked = "REVOKED"

// --- Plans table -------------------------------------------------------------

func planPK(name string) string { return pkPrefixPlan + name }

// pkPrefixPlan begins plans' keys (see partitions.go).
const pkPrefixPlan = "PLAN#"

func gsiPlanActive(active bool) string { return "ACTIVE#" + strconv.FormatBool(active) }

// parseStatsSK is the inverse of statsSK.
func parseStatsSK(sk string) (algoitny.Platform, algoitny.Language, bool) {
	rest, ok := strings.CutPrefix(sk, "PLATFORM#")
	if !ok {
		return "", "", false
	}
	p, l, ok := strings.Cut(rest, "#LANGUAGE#")
	return algoitny.Platform(p), algoitny.Language(l), ok
}

// parseProblemPK is the inverse of problemPK.
func parseProblemPK(pk string) (algoitny.Platform, string) {
	rest, _ := strings.CutPrefix(pk, "PROBLEM#")
	p, id, _ := strings.Cut(rest, "#")
	return algoitny.Platform(p), id
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// idempotencySK lives in the user's partition, so that deleting an account
// finds it with everything else.
func idempotencySK(key string) string { return "IDEMPOTENCY#" + key }

// --- AtCoder (issue 9) ---
//
// Seed 004's records, in the main table. UserAcProblemRecord keeps the seed's
// PK USER_AC#{user_id} and SK AC; the same partition holds the account link
// (SK LINK: handle, sync cursor, optimistic-concurrency version), so that one
// consistent Query reads a user's whole AtCoder state and unlinking deletes
// one partition. AdtContestRecord keeps PK CONTEST#{YYYYMM} (UTC month of the
// start) and SK {start_epoch_second}-{difficulty_order}.

func atcoderUserPK(userID string) string { return "USER_AC#" + userID }

const (
	skAtCoderAC   = "AC"
	skAtCoderLink = "LINK"
)

// gsiAtCoderLinked is the sparse GSI1 partition of every link item: the
// periodic sweep reads the linked users from it, least recently attempted
// first, without a Scan.
const gsiAtCoderLinked = "ATCODER#LINKED"

// gsiAtCoderLinkSK orders links by their last sync attempt (never attempted:
// the zero time, first); the user id keeps keys unique.
func gsiAtCoderLinkSK(lastAttempt time.Time, userID string) string {
	return keyTime(lastAttempt) + "#" + userID
}

func adtContestPK(month string) string { return "CONTEST#" + month }

// adtContestSK is {start_epoch_second}-{difficulty_order} as in the seed
// ("1746688000-02"). The epoch is zero-padded to 10 digits (which changes
// nothing between 2001 and 2286) so that string order is start order.
func adtContestSK(startEpochSecond int64, difficultyOrder int) string {
	return fmt.Sprintf("%010d-%02d", startEpochSecond, difficultyOrder)
}

// adtMonth is the YYYYMM partition of a start time, in UTC.
func adtMonth(start time.Time) string { return start.UTC().Format("200601") }

// --- URL checks (issue 10) ---
//
// Seed 002's CHECK table, in the main table. The seed keys a check by its
// bare id (PK {checkid}, SK CHECK); the CHECK# prefix keeps it apart from
// every other entity here. The same partition holds the check's recent
// results, so deleting a check is one partition. The seed's two indexes map
// onto the overloaded GSIs with entity-qualified values: User-Check on GSI1,
// Type-Status on GSI2.

func checkPK(id string) string { return "CHECK#" + id }

const skPrefixCheckResult = "RESULT#"

// checkResultSK numbers a check's results (fixed width, so string order is
// numeric order): newest first is a descending Query, and the result that
// falls out of the kept window has a key known without reading it.
func checkResultSK(seq int64) string { return fmt.Sprintf("%s%012d", skPrefixCheckResult, seq) }

// gsiCheckUser is seed 002's User-Check index (partition userid); the sort
// key orders a user's checks by creation.
func gsiCheckUser(userID string) string { return "CHECK#USER#" + userID }

func gsiCheckUserSK(createdAt time.Time, id string) string { return keyTime(createdAt) + "#" + id }

// gsiCheckType is seed 002's Type-Status index: partition checkType, sort
// key status first (then creation and id, so keys are unique), so that the
// checks of one type and status are a begins_with range.
func gsiCheckType(checkType string) string { return "CHECK#TYPE#" + checkType }

func gsiCheckStatusSK(status string, createdAt time.Time, id string) string {
	return gsiCheckStatusPrefix(status) + keyTime(createdAt) + "#" + id
}

func gsiCheckStatusPrefix(status string) string { return status + "#" }

const skPrefixCheckStats = "STATS#"

// checkStatsSK is a check's statistics of one hour (UTC), in the check's
// partition beside its results: a window of hours is one Query of a key
// range, and deleting the check takes them along.
func checkStatsSK(hour time.Time) string {
	return skPrefixCheckStats + hour.UTC().Truncate(time.Hour).Format("2006-01-02T15")
}

// skUserCheckCount is the per-user counter of checks that gates a plan's
// MaxChecks exactly (a conditional ADD in the same transaction as the
// check). It lives in the user's partition, so account deletion removes it.
const skUserCheckCount = "CHECKCOUNT"

// --- Check notifications (issue 20) ---
//
// A user's notification channels live in the user's partition (a handful
// each; listing them is one Query, and account deletion takes them along),
// counted by a counter item that gates the limit exactly. Each channel's
// delivery log is a partition of its own, newest first by the delivery id
// (UUIDv7, time-ordered), expiring after algoitny.DeliveryRetention.

const skPrefixNotifyChannel = "NOTIFYCHANNEL#"

func notifyChannelSK(id string) string { return skPrefixNotifyChannel + id }

// skUserChannelCount counts a user's notification channels.
const skUserChannelCount = "NOTIFYCHANNELCOUNT"

func deliveryPK(channelID string) string { return "NOTIFYDELIVERIES#" + channelID }

const skPrefixDelivery = "DELIVERY#"

func deliverySK(id string) string { return skPrefixDelivery + id }

// pkAlertOutbox is the partition of the notification outbox: the changes
// of checks' states stored with their runs and not yet turned into
// deliveries (algoitny.CheckAlert). It is one partition, oldest first by
// the alert id (UUIDv7), so the sweep for alerts a crash left behind is one
// Query; it stays small, because an alert lives only between its run and
// its dispatch, a few milliseconds, and changes of state are rare.
const pkAlertOutbox = "ALERTOUTBOX"

const skPrefixAlert = "ALERT#"

func alertSK(id string) string { return skPrefixAlert + id }

// --- Judge workers ---
//
// Every worker's record (algoitny.Worker: the languages its judge runs)
// is an item of one partition, so that the API reads all of them with one
// Query; there are a handful, each renewed every algoitny.WorkerHeartbeat,
// and DynamoDB's TTL removes those of workers long gone.

const pkWorkers = "WORKERS"

const skPrefixWorker = "WORKER#"

func workerSK(id string) string { return skPrefixWorker + id }

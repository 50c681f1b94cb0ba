package dynamo

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Test case data and DynamoDB's 400 KB item limit (a seed defect: large test
// cases made writes fail). Small cases are stored as plain strings. Larger
// ones are gzipped into the item. What still does not fit is gzipped as one
// payload and split into part items that sort right after the test case (see
// testCasePartSK); the parts are written before the test case itself, so a
// crash in between leaves only invisible orphan parts, never a test case with
// missing data.
const (
	// plainLimit is the largest input+output stored uncompressed.
	plainLimit = 32 << 10
	// inlineLimit is the largest compressed input+output kept in the item.
	inlineLimit = 300 << 10
	// partSize is the payload of one part item.
	partSize = 300 << 10
	// MaxTestCaseBytes bounds input+output of one test case.
	MaxTestCaseBytes = 64 << 20
	// txMaxBytes keeps a TransactWriteItems call under DynamoDB's 4 MB.
	txMaxBytes = 3 << 20
	// PreviewBytes is how much of a test case's input and of its output a
	// list of test cases holds (ListTestCases, PrefetchProblem): a page of
	// a hundred cases of megabytes each must not be read, nor held, to be
	// shown. The whole of a case is read alone (GetTestCase).
	PreviewBytes = algoitny.TestCasePreviewBytes
)

const (
	encodingPlain = ""
	encodingGzip  = "gzip"
	encodingParts = "gzip-parts"
)

type testCaseItem struct {
	PK, SK     string
	EntityType string
	TestCaseID string
	Platform   string
	ProblemID  string
	Input      string `dynamodbav:",omitempty"`
	Output     string `dynamodbav:",omitempty"`
	Encoding   string `dynamodbav:",omitempty"`
	InputGz    []byte `dynamodbav:",omitempty"`
	OutputGz   []byte `dynamodbav:",omitempty"`
	PartCount  int    `dynamodbav:",omitempty"`
	Generator  string `dynamodbav:",omitempty"`
	Seed       int64  `dynamodbav:",omitempty"`
	// Args and Production: see algoitny.TestCase (absent on items written
	// before they were recorded).
	Args       []string `dynamodbav:",omitempty"`
	Production int      `dynamodbav:",omitempty"`
	// Points is algoitny.TestCase.Points, absent when the test has none
	// (and on items written before it was recorded).
	Points    float64 `dynamodbav:",omitempty"`
	CreatedAt time.Time
	// InputSize and OutputSize are the data's bytes and, when it is not
	// stored plain, InputHead and OutputHead its first PreviewBytes: a list
	// reads these and not the data (nor its parts). Items written before
	// they were stored have neither; their previews are cut from the data.
	InputSize  *int   `dynamodbav:",omitempty"`
	OutputSize *int   `dynamodbav:",omitempty"`
	InputHead  string `dynamodbav:",omitempty"`
	OutputHead string `dynamodbav:",omitempty"`
}

// preview returns the beginning of s a list shows (at most PreviewBytes,
// cut at a character boundary).
func preview(s string) string {
	if len(s) <= PreviewBytes {
		return s
	}
	n := PreviewBytes
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// storedSize returns the input and output bytes an item records, -1 for an
// item written before sizes were stored.
func storedSize(av map[string]types.AttributeValue) int {
	in, ok1 := av["InputSize"].(*types.AttributeValueMemberN)
	out, ok2 := av["OutputSize"].(*types.AttributeValueMemberN)
	if !ok1 || !ok2 {
		return -1
	}
	i, err1 := strconv.Atoi(in.Value)
	o, err2 := strconv.Atoi(out.Value)
	if err1 != nil || err2 != nil {
		return -1
	}
	return i + o
}

// hasParts reports whether a test case item's data is in part items.
func hasParts(av map[string]types.AttributeValue) bool {
	return stringAttr(av, "Encoding") == encodingParts
}

type testCasePartItem struct {
	PK, SK     string
	EntityType string
	Data       []byte
}

func gz(data []byte) []byte {
	var b bytes.Buffer
	w, _ := gzip.NewWriterLevel(&b, gzip.BestSpeed)
	_, _ = w.Write(data) // writes to a bytes.Buffer cannot fail
	_ = w.Close()
	return b.Bytes()
}

func gunzip(data []byte) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(r, MaxTestCaseBytes+16))
}

// encodeTestCase returns the test case item and, for very large cases, its parts.
func encodeTestCase(tc *algoitny.TestCase) (map[string]types.AttributeValue, []map[string]types.AttributeValue, error) {
	pk := problemPK(tc.Platform, tc.ProblemID)
	it := testCaseItem{
		PK: pk, SK: testCaseSK(tc.CreatedAt, tc.ID), EntityType: "TestCase", TestCaseID: tc.ID,
		Platform: string(tc.Platform), ProblemID: tc.ProblemID, Generator: tc.Generator, Seed: tc.Seed,
		Args: tc.Args, Production: tc.Production, Points: tc.Points, CreatedAt: tc.CreatedAt,
	}
	inSize, outSize := len(tc.Input), len(tc.Output)
	it.InputSize, it.OutputSize = &inSize, &outSize
	var parts []map[string]types.AttributeValue
	switch size := len(tc.Input) + len(tc.Output); {
	case size <= plainLimit:
		it.Input, it.Output = tc.Input, tc.Output
	default:
		it.InputHead, it.OutputHead = preview(tc.Input), preview(tc.Output)
		in, out := gz([]byte(tc.Input)), gz([]byte(tc.Output))
		if len(in)+len(out) <= inlineLimit {
			it.Encoding, it.InputGz, it.OutputGz = encodingGzip, in, out
			break
		}
		// One payload: uvarint(len(input)) | input | output, gzipped and split.
		raw := binary.AppendUvarint(make([]byte, 0, size+binary.MaxVarintLen64), uint64(len(tc.Input)))
		raw = append(append(raw, tc.Input...), tc.Output...)
		payload := gz(raw)
		it.Encoding = encodingParts
		for n := 0; n*partSize < len(payload); n++ {
			chunk := payload[n*partSize : min((n+1)*partSize, len(payload))]
			av, err := attributevalue.MarshalMap(testCasePartItem{PK: pk, SK: testCasePartSK(it.SK, n), EntityType: "TestCasePart", Data: chunk})
			if err != nil {
				return nil, nil, algoitny.Internal(err, "encode test case part")
			}
			parts = append(parts, av)
		}
		it.PartCount = len(parts)
	}
	av, err := attributevalue.MarshalMap(it)
	if err != nil {
		return nil, nil, algoitny.Internal(err, "encode test case")
	}
	return av, parts, nil
}

// decodeTestCase rebuilds a test case from its item and its parts (in
// order). With preview it holds the beginnings of the input and output
// (Truncated tells whether they are whole), read from the item alone when
// it records them (parts may then be nil).
func decodeTestCase(av map[string]types.AttributeValue, parts [][]byte, previews bool) (*algoitny.TestCase, error) {
	var it testCaseItem
	if err := attributevalue.UnmarshalMap(av, &it); err != nil {
		return nil, algoitny.Internal(err, "decode test case")
	}
	tc := &algoitny.TestCase{
		Platform: algoitny.Platform(it.Platform), ProblemID: it.ProblemID, ID: it.TestCaseID,
		Generator: it.Generator, Seed: it.Seed, Args: it.Args, Production: it.Production, Points: it.Points, CreatedAt: it.CreatedAt,
	}
	if previews && it.Encoding != encodingPlain && it.InputSize != nil && it.OutputSize != nil {
		tc.Input, tc.Output, tc.InputSize, tc.OutputSize = it.InputHead, it.OutputHead, *it.InputSize, *it.OutputSize
		tc.Truncated = len(tc.Input) < tc.InputSize || len(tc.Output) < tc.OutputSize
		return tc, nil
	}
	if err := decodeData(tc, &it, parts); err != nil {
		return nil, err
	}
	tc.InputSize, tc.OutputSize = len(tc.Input), len(tc.Output)
	if previews {
		tc.Input, tc.Output = preview(tc.Input), preview(tc.Output)
		tc.Truncated = len(tc.Input) < tc.InputSize || len(tc.Output) < tc.OutputSize
	}
	return tc, nil
}

// decodeData sets tc's input and output from the item's data and parts.
func decodeData(tc *algoitny.TestCase, it *testCaseItem, parts [][]byte) error {
	switch it.Encoding {
	case encodingPlain:
		tc.Input, tc.Output = it.Input, it.Output
	case encodingGzip:
		in, err := gunzip(it.InputGz)
		if err != nil {
			return algoitny.Internal(err, "decode test case %s input", it.TestCaseID)
		}
		out, err := gunzip(it.OutputGz)
		if err != nil {
			return algoitny.Internal(err, "decode test case %s output", it.TestCaseID)
		}
		tc.Input, tc.Output = string(in), string(out)
	case encodingParts:
		if len(parts) != it.PartCount {
			return algoitny.Internal(nil, "test case %s: %d of %d parts", it.TestCaseID, len(parts), it.PartCount)
		}
		raw, err := gunzip(bytes.Join(parts, nil))
		if err != nil {
			return algoitny.Internal(err, "decode test case %s", it.TestCaseID)
		}
		n, k := binary.Uvarint(raw)
		if k <= 0 || uint64(len(raw)-k) < n {
			return algoitny.Internal(nil, "test case %s: corrupt payload", it.TestCaseID)
		}
		tc.Input, tc.Output = string(raw[k:k+int(n)]), string(raw[k+int(n):])
	default:
		return algoitny.Internal(nil, "test case %s: unknown encoding %q", it.TestCaseID, it.Encoding)
	}
	return nil
}

// AddTestCases stores test cases under a live problem and raises its
// TestCaseCount by as many. Ids and timestamps are assigned here. The count
// and the test cases are written in the same transactions (as many as the
// 4 MB/100 item limits require), so the count always matches the visible test
// cases. It returns ENOTFOUND if the problem is missing or deleted and
// EINVALID for a test case over MaxTestCaseBytes.
func (db *DB) AddTestCases(ctx context.Context, ref algoitny.ProblemRef, cases []*algoitny.TestCase) error {
	_, err := db.AddTestCasesWithSubtasks(ctx, ref, cases, nil)
	return err
}

// AddTestCasesWithSubtasks is AddTestCases for the first tests of a new
// problem together with its subtasks, which name them by position
// (algoitny.Subtask.TestIndexes: their ids are assigned here). The
// subtasks, with the assigned ids as TestIDs, replace the problem's in the
// transaction that writes the last of the cases: they appear with the
// tests they name, and a write that fails halfway leaves no subtask naming
// a test that was not stored. It returns the subtasks as stored, and
// EINVALID (field subtasks.testIndexes) for a position out of range,
// before anything is written; other errors as AddTestCases.
func (db *DB) AddTestCasesWithSubtasks(ctx context.Context, ref algoitny.ProblemRef, cases []*algoitny.TestCase, subtasks []algoitny.Subtask) ([]algoitny.Subtask, error) {
	type encoded struct {
		item  map[string]types.AttributeValue
		parts []map[string]types.AttributeValue
		size  int
	}
	enc := make([]encoded, len(cases))
	for i, tc := range cases {
		if len(tc.Input)+len(tc.Output) > MaxTestCaseBytes {
			return nil, algoitny.Invalid("testCases", "test case %d is larger than %d MB", i+1, MaxTestCaseBytes>>20)
		}
		tc.Platform, tc.ProblemID = ref.Platform, ref.ProblemID
		tc.ID, tc.CreatedAt = newID(db.now())
		item, parts, err := encodeTestCase(tc)
		if err != nil {
			return nil, err
		}
		enc[i] = encoded{item: item, parts: parts, size: itemSize(item)}
	}
	stored, err := resolveTestIndexes(subtasks, cases)
	if err != nil {
		return nil, err
	}
	// Parts first: until their test case is written they are invisible.
	var partWrites []types.WriteRequest
	for _, e := range enc {
		for _, p := range e.parts {
			partWrites = append(partWrites, putRequest(p))
		}
	}
	if err := db.batchWrite(ctx, db.tables.Main, partWrites); err != nil {
		return nil, err
	}
	// Then the test cases with the count, in transactions of ≤ 99 cases and ≤ 3 MB;
	// the subtasks with the last.
	for start := 0; start < len(enc); {
		end, bytes := start, 0
		for end < len(enc) && end-start < 99 && (end == start || bytes+enc[end].size <= txMaxBytes) {
			bytes += enc[end].size
			end++
		}
		items := make([]types.TransactWriteItem, 0, end-start+1)
		var withLast []algoitny.Subtask
		if end == len(enc) {
			withLast = stored
		}
		items = append(items, db.testCaseCountAdd(ref, end-start, withLast))
		for _, e := range enc[start:end] {
			items = append(items, types.TransactWriteItem{Put: &types.Put{TableName: aws.String(db.tables.Main), Item: e.item}})
		}
		_, err := db.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		if conditionFailedAt(err, 0) {
			return nil, algoitny.Errorf(algoitny.ENOTFOUND, "problem %s/%s not found", ref.Platform, ref.ProblemID)
		}
		if err != nil {
			return nil, translate(err, "add test cases")
		}
		start = end
	}
	return stored, nil
}

// resolveTestIndexes returns subtasks with the ids of the cases their
// TestIndexes name as TestIDs (and no TestIndexes); EINVALID for a
// position out of range.
func resolveTestIndexes(subtasks []algoitny.Subtask, cases []*algoitny.TestCase) ([]algoitny.Subtask, error) {
	var out []algoitny.Subtask
	for _, st := range subtasks {
		ids := make([]string, len(st.TestIndexes))
		for j, x := range st.TestIndexes {
			if x < 0 || x >= len(cases) {
				return nil, algoitny.Invalid("subtasks.testIndexes", "subtask %q: there is no test case %d (0-based) among the %d given", st.Name, x, len(cases))
			}
			ids[j] = cases[x].ID
		}
		st.TestIDs, st.TestIndexes = ids, nil
		out = append(out, st)
	}
	return out, nil
}

// DeleteTestCases deletes test cases of a live problem by id and lowers
// its TestCaseCount by as many in the same transactions (≤ 99 cases each,
// like AddTestCases), so the count always matches the visible test cases;
// the same transactions remove the deleted ids from the problem's subtasks
// (algoitny.PruneSubtasks: a subtask left without tests goes, and its name
// from the others' dependencies), so no subtask ever names a test that is
// gone. Then it deletes the deleted cases' part items. A part without its
// test case is never read (testCaseReader skips it), so a crash before the
// parts are gone leaves only invisible orphans, never a test case with
// missing data. Ids of test cases that do not exist, or that another call
// deleted meanwhile, are skipped and not counted. It returns how many it
// deleted, ENOTFOUND if the problem is missing or deleted, and ECONFLICT
// if its subtasks kept changing under it (each change makes it read them
// again).
func (db *DB) DeleteTestCases(ctx context.Context, ref algoitny.ProblemRef, ids []string) (int, error) {
	gone := make(map[string]string, len(ids))
	for _, id := range ids {
		gone[id] = ""
	}
	return db.removeTestCases(ctx, ref, gone)
}

// ReplaceTestCases is DeleteTestCases for tests that were rebuilt byte for
// byte as other test cases (regenerateTests): successors maps the id of
// each test case to delete to the id of its rebuilt copy, which takes its
// place in the problem's subtasks (algoitny.PruneSubtasks) in the
// transaction that deletes it, or to "" for a test without one (it leaves
// them, as with DeleteTestCases). Errors as DeleteTestCases.
func (db *DB) ReplaceTestCases(ctx context.Context, ref algoitny.ProblemRef, successors map[string]string) (int, error) {
	return db.removeTestCases(ctx, ref, successors)
}

// maxSubtaskRaces bounds how often removeTestCases reads the subtasks
// again because a concurrent write changed them.
const maxSubtaskRaces = 10

// removeTestCases deletes the test cases whose ids are gone's keys, and
// applies their removal to the problem's subtasks (gone as in
// algoitny.PruneSubtasks). See DeleteTestCases.
func (db *DB) removeTestCases(ctx context.Context, ref algoitny.ProblemRef, gone map[string]string) (int, error) {
	pk := problemPK(ref.Platform, ref.ProblemID)
	pending, heads, idOf, err := db.existingTestCases(ctx, ref, slices.Sorted(maps.Keys(gone)))
	if err != nil {
		return 0, err
	}
	deleted, races := 0, 0
	var parts []types.WriteRequest
	for len(pending) > 0 {
		batch := pending[:min(99, len(pending))]
		batchGone := make(map[string]string, len(batch))
		for _, k := range batch {
			batchGone[idOf[k]] = gone[idOf[k]]
		}
		removal, err := db.testCasesRemoval(ctx, ref, len(batch), batchGone)
		if err != nil {
			return deleted, err
		}
		items := make([]types.TransactWriteItem, 0, len(batch)+1)
		items = append(items, removal)
		for _, k := range batch {
			items = append(items, types.TransactWriteItem{Delete: &types.Delete{
				TableName: aws.String(db.tables.Main), Key: k.av(),
				// A case deleted meanwhile must not lower the count twice.
				ConditionExpression: aws.String("attribute_exists(PK)"),
			}})
		}
		_, err = db.client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
		if conditionFailedAt(err, 0) {
			// Deleted meanwhile (the next read says so), or its subtasks
			// changed since they were read: read them again.
			if races++; races > maxSubtaskRaces {
				return deleted, algoitny.Errorf(algoitny.ECONFLICT, "the subtasks of problem %s/%s kept changing while its test cases were deleted; try again", ref.Platform, ref.ProblemID)
			}
			continue
		}
		if codes := cancellationCodes(err); slices.Contains(codes, "ConditionalCheckFailed") {
			// Some cases are gone already: try again without them.
			var rest []itemKey
			for i, k := range pending {
				if i >= len(batch) || i+1 >= len(codes) || codes[i+1] != "ConditionalCheckFailed" {
					rest = append(rest, k)
				}
			}
			pending = rest
			continue
		}
		if err != nil {
			return deleted, translate(err, "delete test cases")
		}
		deleted += len(batch)
		for _, k := range batch {
			for n := range intAttr(heads[k], "PartCount") {
				parts = append(parts, deleteRequest(itemKey{pk, testCasePartSK(k.SK, n)}))
			}
		}
		pending = pending[len(batch):]
	}
	// Then the parts, invisible now that their cases are gone.
	if err := db.batchWrite(ctx, db.tables.Main, parts); err != nil {
		return deleted, err
	}
	return deleted, nil
}

// existingTestCases returns the keys of the test cases of ids that exist,
// with the item of each (its keys and PartCount only, not its data: how
// many parts it has), read from DynamoDB itself, and the id of each key.
// Ids that are not test cases' are skipped.
func (db *DB) existingTestCases(ctx context.Context, ref algoitny.ProblemRef, ids []string) ([]itemKey, map[itemKey]map[string]types.AttributeValue, map[itemKey]string, error) {
	pk := problemPK(ref.Platform, ref.ProblemID)
	var keys []itemKey
	idOf := map[itemKey]string{}
	for _, id := range ids {
		t, err := idTime(id)
		if err != nil || idOf[itemKey{pk, testCaseSK(t, id)}] != "" {
			continue // not a test case's id (there is no such test case), or twice
		}
		k := itemKey{pk, testCaseSK(t, id)}
		keys = append(keys, k)
		idOf[k] = id
	}
	heads := map[itemKey]map[string]types.AttributeValue{}
	for start := 0; start < len(keys); start += maxBatchGet {
		got, err := db.batchGetTables(ctx, map[string][]itemKey{db.tables.Main: keys[start:min(start+maxBatchGet, len(keys))]}, true, "PartCount")
		if err != nil {
			return nil, nil, nil, err
		}
		maps.Copy(heads, got[db.tables.Main])
	}
	var existing []itemKey
	for _, k := range keys {
		if heads[k] != nil {
			existing = append(existing, k)
		}
	}
	return existing, heads, idOf, nil
}

// storedValue is an attribute's value as it was read, for a condition
// that it is still exactly that (DynamoDB compares lists and maps whole).
type storedValue struct{ av types.AttributeValue }

// MarshalDynamoDBAttributeValue returns the value as read.
func (v storedValue) MarshalDynamoDBAttributeValue() (types.AttributeValue, error) { return v.av, nil }

// testCasesRemoval is the problem's part of a transaction deleting n of its
// test cases: TestCaseCount goes down by n and the subtasks, read here from
// DynamoDB itself, lose the deleted ids (algoitny.PruneSubtasks with gone),
// on condition that the problem is live and its subtasks are still the ones
// read (no concurrent updateProblem can slip a deleted id in). ENOTFOUND if
// the problem is missing or deleted.
func (db *DB) testCasesRemoval(ctx context.Context, ref algoitny.ProblemRef, n int, gone map[string]string) (types.TransactWriteItem, error) {
	key := itemKey{problemPK(ref.Platform, ref.ProblemID), skMetadata}
	got, err := db.batchGetTables(ctx, map[string][]itemKey{db.tables.Main: {key}}, true, "Subtasks", "IsDeleted")
	if err != nil {
		return types.TransactWriteItem{}, err
	}
	item := got[db.tables.Main][key]
	var deleted bool
	if v, ok := item["IsDeleted"]; ok {
		_ = attributevalue.Unmarshal(v, &deleted)
	}
	if item == nil || deleted {
		return types.TransactWriteItem{}, algoitny.Errorf(algoitny.ENOTFOUND, "problem %s/%s not found", ref.Platform, ref.ProblemID)
	}
	upd := expression.Add(expression.Name("TestCaseCount"), expression.Value(-n)).
		Set(expression.Name("UpdatedAt"), expression.Value(db.now().UTC()))
	cond := expression.AttributeExists(expression.Name(attrPK)).And(expression.Name("IsDeleted").Equal(expression.Value(false)))
	if old, ok := item["Subtasks"]; ok {
		var stored []subtaskItem
		if err := attributevalue.Unmarshal(old, &stored); err != nil {
			return types.TransactWriteItem{}, algoitny.Internal(err, "decode subtasks")
		}
		cond = cond.And(expression.Name("Subtasks").Equal(expression.Value(storedValue{old})))
		if pruned, changed := algoitny.PruneSubtasks(unmarshalSubtasks(stored), gone); changed && len(pruned) == 0 {
			upd = upd.Remove(expression.Name("Subtasks"))
		} else if changed {
			upd = upd.Set(expression.Name("Subtasks"), expression.Value(marshalSubtasks(pruned)))
		}
	} else {
		cond = cond.And(expression.AttributeNotExists(expression.Name("Subtasks")))
	}
	expr, err := expression.NewBuilder().WithUpdate(upd).WithCondition(cond).Build()
	if err != nil {
		return types.TransactWriteItem{}, algoitny.Internal(err, "build test case removal")
	}
	return types.TransactWriteItem{Update: &types.Update{
		TableName: aws.String(db.tables.Main), Key: key.av(),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	}}, nil
}

// testCaseCountAdd is the problem's part of a transaction adding n test
// cases: the count goes up by n, and subtasks, if any, replace the
// problem's (AddTestCasesWithSubtasks).
func (db *DB) testCaseCountAdd(ref algoitny.ProblemRef, n int, subtasks []algoitny.Subtask) types.TransactWriteItem {
	upd := expression.Add(expression.Name("TestCaseCount"), expression.Value(n)).
		Set(expression.Name("UpdatedAt"), expression.Value(db.now().UTC()))
	if len(subtasks) > 0 {
		upd = upd.Set(expression.Name("Subtasks"), expression.Value(marshalSubtasks(subtasks)))
	}
	expr, _ := expression.NewBuilder().
		WithUpdate(upd).
		WithCondition(expression.AttributeExists(expression.Name(attrPK)).And(expression.Name("IsDeleted").Equal(expression.Value(false)))).
		Build()
	return types.TransactWriteItem{Update: &types.Update{
		TableName: aws.String(db.tables.Main), Key: itemKey{problemPK(ref.Platform, ref.ProblemID), skMetadata}.av(),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
	}}
}

// itemSize approximates an item's size as DynamoDB counts it (names + values).
func itemSize(item map[string]types.AttributeValue) int {
	n := 0
	for k, v := range item {
		n += len(k)
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			n += len(v.Value)
		case *types.AttributeValueMemberB:
			n += len(v.Value)
		case *types.AttributeValueMemberL:
			for _, e := range v.Value {
				n += itemSize(map[string]types.AttributeValue{"": e}) + 1
			}
		case *types.AttributeValueMemberM:
			n += itemSize(v.Value) + 3
		default:
			n += 16
		}
	}
	return n
}

// testCaseReader assembles test cases from a stream of items of a problem's
// partition, in key order: a test case, then its parts. With previews it
// makes previews (decodeTestCase), and keeps no parts of a case whose item
// holds its preview.
type testCaseReader struct {
	previews bool
	// projected: the items were read with previewAttrs only.
	projected bool
	pending   map[string]types.AttributeValue
	parts     [][]byte
	cases     []*algoitny.TestCase
	keys      []map[string]types.AttributeValue // the item of each case, for cursors
}

// skipsParts reports whether the pending case's parts are of no use: a
// preview is read from its item.
func (r *testCaseReader) skipsParts() bool {
	return r.previews && r.pending != nil && hasParts(r.pending) && storedSize(r.pending) >= 0
}

func (r *testCaseReader) add(av map[string]types.AttributeValue) error {
	sk := stringAttr(av, attrSK)
	switch {
	case isTestCasePartSK(sk):
		if r.pending != nil && !r.skipsParts() && len(sk) > len(stringAttr(r.pending, attrSK)) && sk[:len(stringAttr(r.pending, attrSK))] == stringAttr(r.pending, attrSK) {
			data, _ := av["Data"].(*types.AttributeValueMemberB)
			if data != nil {
				r.parts = append(r.parts, data.Value)
			}
		}
		// A part without its test case: an orphan of a failed write, or the
		// tail of the previous page's last case. Skip it.
		return nil
	case len(sk) >= len(skPrefixTestCase) && sk[:len(skPrefixTestCase)] == skPrefixTestCase:
		if err := r.flush(); err != nil {
			return err
		}
		r.pending = av
	}
	return nil
}

func (r *testCaseReader) flush() error {
	if r.pending == nil {
		return nil
	}
	if r.projected && storedSize(r.pending) < 0 && stringAttr(r.pending, "Encoding") != encodingPlain {
		return errNeedsData
	}
	tc, err := decodeTestCase(r.pending, r.parts, r.previews)
	if err != nil {
		return err
	}
	r.cases = append(r.cases, tc)
	r.keys = append(r.keys, r.pending)
	r.pending, r.parts = nil, nil
	return nil
}

// GetProblemWithTestCases returns a problem and all its test cases, oldest
// first, with one paginated Query of the problem's partition (seed pattern #6,
// #13): the METADATA item sorts before the TESTCASE# items. ENOTFOUND if the
// problem does not exist (a deleted problem is returned; IsDeleted tells).
func (db *DB) GetProblemWithTestCases(ctx context.Context, ref algoitny.ProblemRef) (*algoitny.Problem, []*algoitny.TestCase, error) {
	items, err := db.all(ctx, &query{list: "problemWithTests", table: db.tables.Main, pk: problemPK(ref.Platform, ref.ProblemID), forward: true})
	if err != nil {
		return nil, nil, err
	}
	var p *algoitny.Problem
	var r testCaseReader
	for _, av := range items {
		if stringAttr(av, attrSK) == skMetadata {
			if p, err = unmarshalProblem(av); err != nil {
				return nil, nil, err
			}
			continue
		}
		if err := r.add(av); err != nil {
			return nil, nil, err
		}
	}
	if err := r.flush(); err != nil {
		return nil, nil, err
	}
	if p == nil {
		return nil, nil, algoitny.Errorf(algoitny.ENOTFOUND, "problem %s/%s not found", ref.Platform, ref.ProblemID)
	}
	return p, r.cases, nil
}

// ListTestCases pages through a problem's test cases, oldest first, as
// previews: each input and output holds its first PreviewBytes, with its
// size, and Truncated tells whether that is all of it (GetTestCase reads a
// case in full). It reads the attributes previews are made of only, so the
// parts of large cases come back as bare keys, and a read that ends among
// them is followed by one that starts after them (cases written before
// sizes were stored are read whole, parts along, to cut their previews).
// Parts never count toward the page size.
func (db *DB) ListTestCases(ctx context.Context, ref algoitny.ProblemRef, page algoitny.PageRequest) (algoitny.Page[*algoitny.TestCase], error) {
	first, err := page.Validate()
	if err != nil {
		return algoitny.Page[*algoitny.TestCase]{}, err
	}
	q := testCasesQuery(db, ref)
	var start map[string]types.AttributeValue
	if page.Cursor() != "" {
		if start, err = decodeCursor(page.Cursor(), page.CursorField(), q); err != nil {
			return algoitny.Page[*algoitny.TestCase]{}, err
		}
	}
	backward := page.IsBackward()
	if backward {
		// The cases before the cursor, read as a forward page from the
		// case before them.
		if first, start, err = db.testCasesBefore(ctx, q, first, start); err != nil || first == 0 {
			return algoitny.Page[*algoitny.TestCase]{HasNextPage: page.Before != ""}, err
		}
	}
	// The attributes a preview is made of, not the data: a part's item
	// then comes back as its key alone, an item's gzipped data not at all.
	projected := *q
	projected.project = previewAttrs
	out, err := db.testCasePage(ctx, &projected, q, first, start, nil)
	if errors.Is(err, errNeedsData) { // cases written before sizes were stored
		out, err = db.testCasePage(ctx, q, q, first, start, nil)
	}
	if err != nil {
		return algoitny.Page[*algoitny.TestCase]{}, err
	}
	if len(out.Cursors) > 0 {
		out.StartCursor = out.Cursors[0]
	}
	if out.HasPreviousPage = start != nil; backward {
		out.HasNextPage = page.Before != ""
	}
	return out, nil
}

// testCasesBefore finds where the last n test cases of q before the item
// start (nil: the end of the list) begin: it returns how many there are
// (at most n) and the key to read them from, forward (nil: the start of
// the list). It reads keys only, backward.
func (db *DB) testCasesBefore(ctx context.Context, q *query, n int, start map[string]types.AttributeValue) (int, map[string]types.AttributeValue, error) {
	keys := *q
	keys.forward, keys.project = false, []string{attrPK}
	var found []string // the cases' sort keys, last first
	for len(found) <= n {
		items, next, err := db.fetch(ctx, &keys, int32(n+1-len(found)), start)
		if err != nil {
			return 0, nil, err
		}
		for _, it := range items {
			if sk := stringAttr(it, attrSK); !isTestCasePartSK(sk) && len(found) <= n {
				found = append(found, sk)
			}
		}
		if len(next) == 0 {
			break
		}
		start = next
	}
	if len(found) <= n {
		return len(found), nil, nil
	}
	// Past the case before the page and its parts (they sort right after it).
	return n, itemKey{PK: q.pk, SK: testCasePartSK(found[n], 99999)}.av(), nil
}

// previewAttrs are the attributes of a test case item a preview is made of.
var previewAttrs = []string{"EntityType", "TestCaseID", "Platform", "ProblemID", "Input", "Output", "Encoding", "PartCount",
	"Generator", "Seed", "Args", "Production", "Points", "CreatedAt", "InputSize", "OutputSize", "InputHead", "OutputHead"}

// errNeedsData: a test case written before sizes were stored was read
// without its data (previewAttrs); its preview is cut from the data.
var errNeedsData = errors.New("the preview of a test case needs its data")

func testCasesQuery(db *DB, ref algoitny.ProblemRef) *query {
	return &query{list: "testCases", table: db.tables.Main, pk: problemPK(ref.Platform, ref.ProblemID), skPrefix: skPrefixTestCase, forward: true}
}

// testCasePage reads one page of test cases with fetchQ from start; cursors
// are those of list q. Items that are not test cases go to other (if set).
func (db *DB) testCasePage(ctx context.Context, fetchQ, q *query, first int, start map[string]types.AttributeValue, other func(map[string]types.AttributeValue)) (algoitny.Page[*algoitny.TestCase], error) {
	// Read until a test case beyond the page is seen (so all parts of the
	// page's last case are in) or the partition ends. A case whose item
	// holds its preview is followed by parts of no use here: they are not
	// kept, and a read that ends among them is followed by one that starts
	// after them (parts sort right after their case), so a read goes
	// through at most one DynamoDB page (1 MB) of them.
	r := testCaseReader{previews: true, projected: len(fetchQ.project) > 0}
	extra := int32(8) // the parts of the page's last case, read along
	if r.projected {
		extra = 0 // nothing to read them for
	}
	if other != nil {
		extra++ // the METADATA item
	}
	for (len(r.cases) < first || r.pending == nil) && casesBytes(r.cases) < db.maxCasePageBytes {
		items, next, err := db.fetch(ctx, fetchQ, int32(first+1-len(r.cases))+extra, start)
		if err != nil {
			return algoitny.Page[*algoitny.TestCase]{}, err
		}
		for _, av := range items {
			if other != nil && !strings.HasPrefix(stringAttr(av, attrSK), skPrefixTestCase) {
				other(av)
				continue
			}
			if err := r.add(av); err != nil {
				return algoitny.Page[*algoitny.TestCase]{}, err
			}
		}
		if len(next) == 0 {
			if err := r.flush(); err != nil {
				return algoitny.Page[*algoitny.TestCase]{}, err
			}
			break
		}
		start = next
		if r.skipsParts() {
			start = itemKey{PK: stringAttr(r.pending, attrPK), SK: testCasePartSK(stringAttr(r.pending, attrSK), 99999)}.av()
		}
	}
	out := algoitny.Page[*algoitny.TestCase]{Items: r.cases, HasNextPage: r.pending != nil || len(r.cases) > first}
	if len(r.cases) > first {
		out.Items = r.cases[:first]
	}
	// A page holds at most maxCasePageBytes of inputs and outputs (but
	// always one case): a hundred cases of megabytes each would be one
	// response of gigabytes.
	for n := len(out.Items); n > 1 && casesBytes(out.Items) > db.maxCasePageBytes; n-- {
		out.Items, out.HasNextPage = out.Items[:n-1], true
	}
	for i := range out.Items {
		out.Cursors = append(out.Cursors, encodeCursor(q.list, "", r.keys[i]))
	}
	if n := len(out.Cursors); n > 0 {
		out.EndCursor = out.Cursors[n-1]
	}
	return out, nil
}

// casesBytes is the size of test cases' inputs and outputs.
func casesBytes(cases []*algoitny.TestCase) int {
	n := 0
	for _, tc := range cases {
		n += len(tc.Input) + len(tc.Output)
	}
	return n
}

// prefetchedKey carries an item read ahead in a context (see PrefetchProblem).
type prefetchedKey struct{}

type prefetched struct {
	table string
	key   itemKey
	item  map[string]types.AttributeValue
}

// fromPrefetch returns the item with key k of table if ctx carries it.
func fromPrefetch(ctx context.Context, table string, k itemKey) (map[string]types.AttributeValue, bool) {
	p, ok := ctx.Value(prefetchedKey{}).(*prefetched)
	if !ok || p.table != table || p.key != k {
		return nil, false
	}
	return p.item, true
}

// PrefetchProblem reads a problem and the first page of its test cases with
// ONE Query of the problem's partition (its METADATA item sorts before the
// TESTCASE# items), for `problem { testCases(first) }`, which would
// otherwise cost a GetItem and then a Query. It returns the page (with the
// cursors ListTestCases gives) and a context in which GetProblem of ref is
// answered from this read, without a request. The read is strongly
// consistent, like GetProblem's. A page with a cursor (After) cannot start
// at the METADATA item: it returns EINVALID for it, and the callers use
// ListTestCases. If the problem does not exist the context is returned
// unchanged.
func (db *DB) PrefetchProblem(ctx context.Context, ref algoitny.ProblemRef, page algoitny.PageRequest) (context.Context, algoitny.Page[*algoitny.TestCase], error) {
	first, err := page.Validate()
	if err != nil {
		return ctx, algoitny.Page[*algoitny.TestCase]{}, err
	}
	if page.After != "" || page.IsBackward() {
		return ctx, algoitny.Page[*algoitny.TestCase]{}, algoitny.Invalid("after", "a page after a cursor, or backward, is not prefetched with its problem")
	}
	pk := problemPK(ref.Platform, ref.ProblemID)
	whole := &query{list: "problemWithTests", table: db.tables.Main, pk: pk, forward: true}
	var meta map[string]types.AttributeValue
	out, err := db.testCasePage(ctx, whole, testCasesQuery(db, ref), first, nil, func(av map[string]types.AttributeValue) {
		if stringAttr(av, attrSK) == skMetadata {
			meta = av
		}
	})
	if err != nil {
		return ctx, algoitny.Page[*algoitny.TestCase]{}, err
	}
	if len(out.Cursors) > 0 {
		out.StartCursor = out.Cursors[0] // as ListTestCases gives it
	}
	if meta != nil {
		ctx = context.WithValue(ctx, prefetchedKey{}, &prefetched{table: db.tables.Main, key: itemKey{pk, skMetadata}, item: meta})
	}
	return ctx, out, nil
}

// GetTestCase returns one test case of a problem by id (its key is rebuilt
// from the UUIDv7 id), in full, with its parts. ENOTFOUND if absent. The
// case's item is read first: in a context of algoitny.WithFullReadCheck
// the check is asked before the data is read, and its error returned.
func (db *DB) GetTestCase(ctx context.Context, ref algoitny.ProblemRef, id string) (*algoitny.TestCase, error) {
	return db.getTestCase(ctx, ref, id, true)
}

// ReadTestCase is GetTestCase for the server's own use: it reads a test
// case in full without asking the check of algoitny.WithFullReadCheck,
// which bounds what a response holds. Only for data that goes into no
// response (the comparison of regenerateTests).
func (db *DB) ReadTestCase(ctx context.Context, ref algoitny.ProblemRef, id string) (*algoitny.TestCase, error) {
	return db.getTestCase(ctx, ref, id, false)
}

func (db *DB) getTestCase(ctx context.Context, ref algoitny.ProblemRef, id string, checked bool) (*algoitny.TestCase, error) {
	t, err := idTime(id)
	if err != nil {
		return nil, algoitny.Errorf(algoitny.ENOTFOUND, "test case not found")
	}
	q := &query{list: "testCase", table: db.tables.Main, pk: problemPK(ref.Platform, ref.ProblemID), skPrefix: testCaseSK(t, id), forward: true}
	items, next, err := db.fetch(ctx, q, 1, nil) // the case sorts before its parts
	if err != nil {
		return nil, err
	}
	if len(items) == 0 || isTestCasePartSK(stringAttr(items[0], attrSK)) {
		return nil, algoitny.Errorf(algoitny.ENOTFOUND, "test case not found")
	}
	if check, ok := algoitny.FullReadCheck(ctx); ok && checked {
		if err := check.CheckFullRead(storedSize(items[0])); err != nil {
			return nil, err
		}
	}
	for hasParts(items[0]) && len(next) > 0 {
		var more []map[string]types.AttributeValue
		if more, next, err = db.fetch(ctx, q, 0, next); err != nil {
			return nil, err
		}
		items = append(items, more...)
	}
	var r testCaseReader
	for _, av := range items {
		if err := r.add(av); err != nil {
			return nil, err
		}
	}
	if err := r.flush(); err != nil {
		return nil, err
	}
	if len(r.cases) != 1 {
		return nil, algoitny.Errorf(algoitny.ENOTFOUND, "test case not found")
	}
	return r.cases[0], nil
}

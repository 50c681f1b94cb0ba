package dynamo

import (
	"encoding/base64"
	"encoding/json"
	"maps"
	"slices"
	"strings"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// A cursor is the key of the last item of a page, as DynamoDB wants it back in
// ExclusiveStartKey, tagged with the list it belongs to and base64url-encoded.
// Clients must treat it as opaque. Decoding checks everything a forged cursor
// could get wrong (encoding, list, attribute set, partition) and answers
// EINVALID on "after" rather than letting DynamoDB fail or a foreign
// partition leak.
type cursorBody struct {
	List string            `json:"l"`
	Key  map[string]string `json:"k"`
}

// keyAttrs returns the attributes that make up an ExclusiveStartKey for a
// query on index ("" = the table itself).
func keyAttrs(index string) []string {
	attrs := []string{attrPK, attrSK}
	if index != "" {
		pk, sk := gsiKeyAttrs(index)
		attrs = append(attrs, pk, sk)
	}
	return attrs
}

// encodeCursor builds the cursor that resumes list after item.
func encodeCursor(list, index string, item map[string]types.AttributeValue) string {
	body := cursorBody{List: list, Key: map[string]string{}}
	for _, a := range keyAttrs(index) {
		if s, ok := item[a].(*types.AttributeValueMemberS); ok {
			body.Key[a] = s.Value
		}
	}
	b, _ := json.Marshal(body) // a map of strings always marshals
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeCursor checks cursor against the query q and returns its start key.
func decodeCursor(cursor, field string, q *query) (map[string]types.AttributeValue, error) {
	bad := algoitny.Invalid(field, "invalid cursor")
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return nil, bad
	}
	var body cursorBody
	if err := json.Unmarshal(raw, &body); err != nil || body.List != q.list {
		return nil, bad
	}
	want := keyAttrs(q.index)
	got := slices.Sorted(maps.Keys(body.Key))
	if !slices.Equal(got, slices.Sorted(slices.Values(want))) {
		return nil, bad
	}
	pkAttr, skAttr := q.keyNames()
	if !q.scan && body.Key[pkAttr] != q.pk {
		return nil, bad
	}
	if q.skPrefix != "" && !strings.HasPrefix(body.Key[skAttr], q.skPrefix) {
		return nil, bad
	}
	if q.skBetween[0] != "" && (body.Key[skAttr] < q.skBetween[0] || body.Key[skAttr] > q.skBetween[1]) {
		return nil, bad
	}
	start := make(map[string]types.AttributeValue, len(body.Key))
	for k, v := range body.Key {
		if v == "" {
			return nil, bad
		}
		start[k] = &types.AttributeValueMemberS{Value: v}
	}
	return start, nil
}

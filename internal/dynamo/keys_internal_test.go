package dynamo

import (
	"testing"
	"time"

	"github.com/google/uuid"
)

// TestNewIDOrderWithinAMillisecond: ids made in the same millisecond sort in
// the order they were made (test cases added together keep their order),
// stay valid UUIDv7 and carry that millisecond.
func TestNewIDOrderWithinAMillisecond(t *testing.T) {
	now := time.UnixMilli(1_800_000_000_123)
	prev := ""
	for i := range 10_000 {
		id, at := newID(now)
		if id <= prev {
			t.Fatalf("id %d %s does not sort after %s", i, id, prev)
		}
		u, err := uuid.Parse(id)
		if err != nil || u.Version() != 7 || u.Variant() != uuid.RFC4122 {
			t.Fatalf("id %s: %v, version %d, variant %v", id, err, u.Version(), u.Variant())
		}
		if got, _ := idTime(id); !got.Equal(now) || !at.Equal(now) {
			t.Fatalf("id %s carries %v (returned %v), want %v", id, got, at, now)
		}
		prev = id
	}
}

func TestNextIDCarries(t *testing.T) {
	id := uuid.MustParse("01890a5d-ac96-774b-bcce-ffffffffffff")
	if got := nextID(id).String(); got != "01890a5d-ac96-774b-bccf-000000000000" {
		t.Fatalf("nextID = %s", got)
	}
	id = uuid.MustParse("01890a5d-ac96-774b-bfff-ffffffffffff") // the 62 bits are all ones
	if got := nextID(id); got.Variant() != uuid.RFC4122 || got.Version() != 7 {
		t.Fatalf("nextID broke the version or variant: %s", got)
	}
}

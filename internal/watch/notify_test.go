package watch_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/safehttp"
	"github.com/algoitny/api/internal/watch"
)

// TestWebhookSignature: a webhook carries its delivery's id and the time it
// was sent, signed with the body, so that a receiver refuses a changed
// body, another secret, a changed timestamp or delivery id and a request
// replayed after SignatureTolerance — and can drop a delivery it has.
func TestWebhookSignature(t *testing.T) {
	t.Parallel()
	var header http.Header
	var body []byte
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		header = r.Header.Clone()
		body, _ = io.ReadAll(r.Body)
	}))
	defer receiver.Close()
	client := safehttp.New(safehttp.Config{AllowHosts: []string{strings.TrimPrefix(receiver.URL, "http://")}, AnyPort: true})
	n := &watch.WebhookNotifier{Client: client}
	ch := &algoitny.NotificationChannel{URL: receiver.URL + "/hook", Secret: "whsec_test"}
	payload := []byte(`{"checkId":"c1","state":"DOWN"}`)
	before := time.Now()
	if err := n.Send(context.Background(), ch, &algoitny.NotificationDelivery{ID: "d-1", Payload: payload}); err != nil {
		t.Fatal(err)
	}
	if string(body) != string(payload) {
		t.Fatalf("body %q", body)
	}
	sent, err := strconv.ParseInt(header.Get(watch.TimestampHeader), 10, 64)
	if err != nil || sent < before.Unix() || sent > time.Now().Unix() {
		t.Fatalf("%s = %q, sent between %d and now", watch.TimestampHeader, header.Get(watch.TimestampHeader), before.Unix())
	}
	now := time.Unix(sent, 0)
	if id, err := watch.Verify(ch.Secret, header, body, now.Add(time.Minute)); err != nil || id != "d-1" {
		t.Fatalf("a genuine webhook a minute later: %q %v", id, err)
	}
	if sig := header.Get(watch.SignatureHeader); !strings.HasPrefix(sig, "v1=") || len(sig) != len("v1=")+64 {
		t.Fatalf("%s = %q, want v1=<64 hex digits>", watch.SignatureHeader, sig)
	}
	// A receiver that knows only v1 still verifies a webhook that also
	// carries a signature of a later scheme.
	both := header.Clone()
	both.Set(watch.SignatureHeader, "v2=00ff, "+header.Get(watch.SignatureHeader))
	if _, err := watch.Verify(ch.Secret, both, body, now); err != nil {
		t.Fatalf("v1 beside an unknown scheme: %v", err)
	}
	lines := header.Clone()
	lines.Set(watch.SignatureHeader, "v2=00ff")
	lines.Add(watch.SignatureHeader, header.Get(watch.SignatureHeader))
	if _, err := watch.Verify(ch.Secret, lines, body, now); err != nil {
		t.Fatalf("v1 on a second header line: %v", err)
	}
	for name, c := range map[string]struct {
		secret string
		body   string
		at     time.Time
		edit   func(http.Header)
	}{
		"ChangedBody":      {ch.Secret, `{"checkId":"c1","state":"UP"}`, now, nil},
		"OtherSecret":      {"whsec_other", string(payload), now, nil},
		"Replayed":         {ch.Secret, string(payload), now.Add(watch.SignatureTolerance + time.Second), nil},
		"FromTheFuture":    {ch.Secret, string(payload), now.Add(-watch.SignatureTolerance - time.Second), nil},
		"ChangedTimestamp": {ch.Secret, string(payload), now, func(h http.Header) { h.Set(watch.TimestampHeader, strconv.FormatInt(sent+60, 10)) }},
		"NoTimestamp":      {ch.Secret, string(payload), now, func(h http.Header) { h.Del(watch.TimestampHeader) }},
		"OtherDelivery":    {ch.Secret, string(payload), now, func(h http.Header) { h.Set(watch.DeliveryHeader, "d-2") }},
		"NoDelivery":       {ch.Secret, string(payload), now, func(h http.Header) { h.Del(watch.DeliveryHeader) }},
		// The same HMAC under another scheme's name, or none, is not a v1 signature.
		"OtherScheme": {ch.Secret, string(payload), now, func(h http.Header) {
			h.Set(watch.SignatureHeader, "v2="+strings.TrimPrefix(h.Get(watch.SignatureHeader), "v1="))
		}},
		"Unversioned": {ch.Secret, string(payload), now, func(h http.Header) {
			h.Set(watch.SignatureHeader, "sha256="+strings.TrimPrefix(h.Get(watch.SignatureHeader), "v1="))
		}},
	} {
		h := header.Clone()
		if c.edit != nil {
			c.edit(h)
		}
		if _, err := watch.Verify(c.secret, h, []byte(c.body), c.at); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

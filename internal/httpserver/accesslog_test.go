package httpserver

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestAccessLineIsSlogs: the access log written by hand is, byte for byte,
// what slog's JSON handler writes for the same record, for strings a client
// controls (path, operation name) with every kind of character slog escapes.
func TestAccessLineIsSlogs(t *testing.T) {
	at := time.Date(2026, 11, 25, 21, 4, 5, 120_000_000, time.FixedZone("x", 9*3600))
	for _, s := range []string{"", "/query", `quote " and \ backslash`, "ctl \x00\x01\x1f\x7f \n\r\t", "héllo 世界 🙂",
		"bad \xff\xfe utf8 \xe2\x82", "sep \u2028 \u2029", "<html> & 'x'", strings.Repeat("x", 300)} {
		var want, got bytes.Buffer
		l := slog.New(slog.NewJSONHandler(&want, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				a.Value = slog.TimeValue(at)
			}
			return a
		}}))
		l.LogAttrs(context.Background(), slog.LevelInfo, "request",
			slog.String("request_id", "0123456789abcdef"), slog.String("method", "POST"), slog.String("path", s),
			slog.Int("status", 200), slog.Int("bytes", 35), slog.Duration("duration", 1234567*time.Nanosecond),
			slog.String("operation", s))
		writeAccessLine(&got, at, accessLine{requestID: "0123456789abcdef", method: "POST", path: s, status: 200, bytes: 35, duration: 1234567 * time.Nanosecond, operation: s})
		if got.String() != want.String() {
			t.Errorf("%q:\n got %s\nwant %s", s, got.String(), want.String())
		}
	}
}

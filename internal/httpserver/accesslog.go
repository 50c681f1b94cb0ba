package httpserver

import (
	"io"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// accessLine is one request's line of the access log.
type accessLine struct {
	requestID, method, path, operation string
	status, bytes                      int
	duration                           time.Duration
}

// linePool recycles the buffers access lines are built in.
var linePool = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

// writeAccessLine writes l to w as the line slog's JSON handler writes for
//
//	Logger.LogAttrs(ctx, slog.LevelInfo, "request", request_id, method, path, status, bytes, duration, operation)
//
// byte for byte (TestAccessLineIsSlogs), at a fraction of its cost: it is
// written for every request, and through slog it was the largest part of
// what the server adds to a small request (issue 18). w must take a line in
// one Write call from several goroutines (cmd's buffered log writer).
func writeAccessLine(w io.Writer, now time.Time, l accessLine) {
	bp := linePool.Get().(*[]byte)
	b := (*bp)[:0]
	b = append(b, `{"time":"`...)
	b = now.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","level":"INFO","msg":"request","request_id":`...)
	b = appendJSONString(b, l.requestID)
	b = append(b, `,"method":`...)
	b = appendJSONString(b, l.method)
	b = append(b, `,"path":`...)
	b = appendJSONString(b, l.path)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(l.status), 10)
	b = append(b, `,"bytes":`...)
	b = strconv.AppendInt(b, int64(l.bytes), 10)
	b = append(b, `,"duration":`...)
	b = strconv.AppendInt(b, int64(l.duration), 10)
	b = append(b, `,"operation":`...)
	b = appendJSONString(b, l.operation)
	b = append(b, "}\n"...)
	w.Write(b)
	*bp = b
	linePool.Put(bp)
}

// appendJSONString appends s as a JSON string the way slog's JSON handler
// does: quotes, backslashes and control characters escaped, invalid UTF-8
// as U+FFFD, U+2028 and U+2029 escaped, everything else as it is.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

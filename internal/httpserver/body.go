package httpserver

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/algoitny/api/internal/apierror"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// BodyMinRate is the pace below which a request body is cut
// (Config.BodyTimeout), in bytes per second.
const BodyMinRate = 64 << 10

// readBody reads r's body whole into ri.body (at most MaxBodyBytes, at
// least at BodyMinRate after BodyTimeout) and reports whether it did; when
// it did not it has answered r: 413 for a body too large, 408
// REQUEST_TIMEOUT (and the connection closed) for one too slow, 400 for
// one that broke off.
func (cfg Config) readBody(w http.ResponseWriter, r *http.Request, ri *requestInfo) bool {
	limit := cfg.MaxBodyBytes
	if uploadAllowed(r) {
		limit = cfg.MaxUploadBytes // a problem package
	}
	var body io.Reader = http.MaxBytesReader(w, r.Body, limit)
	rc := http.NewResponseController(w)
	start := time.Now()
	// A body of at most BodyMinRate bytes (most) has one deadline: its
	// pace's for its last byte. Set is an error on a writer that is not a
	// connection's (tests): the body is read unpaced.
	first := start.Add(cfg.BodyTimeout + time.Second)
	if rc.SetReadDeadline(first) == nil {
		if r.ContentLength < 0 || r.ContentLength > BodyMinRate {
			body = &paced{r: body, rc: rc, start: start, grace: cfg.BodyTimeout}
		}
		// The connection's reads are net/http's again once the body is
		// read: it watches for the client going away, which a deadline
		// passed would look like.
		defer func() { _ = rc.SetReadDeadline(time.Time{}) }()
	}
	buf, err := readAll(body)
	if err == nil {
		ri.body = buf
		return true
	}
	status, code, msg := http.StatusBadRequest, apierror.BadRequest, "the request body could not be read: "+err.Error()
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		status, msg = http.StatusRequestEntityTooLarge, err.Error()
	case errors.Is(err, os.ErrDeadlineExceeded):
		status, code, msg = http.StatusRequestTimeout, codeTimeout, "the request body did not arrive in time"
		w.Header().Set("Connection", "close")
	}
	setErrorMediaType(w, r)
	writeResponse(w, status, response{Errors: gqlerror.List{apierror.New(code, msg)}})
	return false
}

// paced reads a body at a minimum pace: its nth byte must have come by
// start + grace + n/BodyMinRate (the connection's read deadline, set
// before each read).
type paced struct {
	r     io.Reader
	rc    *http.ResponseController
	start time.Time
	grace time.Duration
	n     int64
}

func (p *paced) Read(b []byte) (int, error) {
	_ = p.rc.SetReadDeadline(p.start.Add(p.grace + time.Duration(p.n*int64(time.Second)/BodyMinRate)))
	n, err := p.r.Read(b)
	p.n += int64(n)
	return n, err
}

// readAll reads r into a buffer of bodyPool.
func readAll(r io.Reader) (*bytes.Buffer, error) {
	buf := bodyPool.Get().(*bytes.Buffer)
	buf.Reset()
	if _, err := buf.ReadFrom(r); err != nil {
		putBody(buf)
		return nil, err
	}
	return buf, nil
}

// bodyPool recycles the buffers request bodies are read into (decodeParams
// copies out what it keeps).
var bodyPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func putBody(buf *bytes.Buffer) {
	if buf.Cap() <= 64<<10 { // a large body's buffer is not kept
		bodyPool.Put(buf)
	}
}

// freeBody returns the request's body to the pool (the request is done).
func (ri *requestInfo) freeBody() {
	if ri.body != nil {
		putBody(ri.body)
		ri.body = nil
	}
}

// admissionKey carries the admission to the websocket transport, whose
// operations take its slots too.
type admissionKey struct{}

func withAdmission(ctx context.Context, a *admission) context.Context {
	if a == nil {
		return ctx
	}
	return context.WithValue(ctx, admissionKey{}, a)
}

func admissionFrom(ctx context.Context) *admission {
	a, _ := ctx.Value(admissionKey{}).(*admission)
	return a
}

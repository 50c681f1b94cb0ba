package httpserver

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the Prometheus metrics of the server.
type Metrics struct {
	registry   *prometheus.Registry
	requests   *prometheus.CounterVec
	duration   *prometheus.HistogramVec
	operations opNames
	// series caches the children of requests and duration by their labels
	// (a lookup in the vectors hashes every label value, per request).
	series sync.Map // seriesKey → *series
}

type seriesKey struct {
	route, operation string
	code             int
}

type series struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

// observe counts a request and its latency under its route, operation and
// status code.
func (m *Metrics) observe(route, operation string, code int, elapsed time.Duration) {
	k := seriesKey{route, operation, code}
	v, ok := m.series.Load(k)
	if !ok {
		v, _ = m.series.LoadOrStore(k, &series{
			requests: m.requests.WithLabelValues(route, operation, strconv.Itoa(code)),
			duration: m.duration.WithLabelValues(route, operation),
		})
	}
	s := v.(*series)
	s.requests.Inc()
	s.duration.Observe(elapsed.Seconds())
}

// NewMetrics registers the server's metrics; dynamoRequests, if set, is
// exported as algoitny_dynamodb_requests_total.
func NewMetrics(dynamoRequests func() float64) *Metrics {
	m := &Metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "algoitny_http_requests_total", Help: "HTTP requests by route, GraphQL operation and status code.",
		}, []string{"route", "operation", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "algoitny_http_request_duration_seconds", Help: "HTTP request latency by route and GraphQL operation.",
			Buckets: prometheus.ExponentialBuckets(0.002, 2, 14),
		}, []string{"route", "operation"}),
	}
	m.registry.MustRegister(m.requests, m.duration, prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	if dynamoRequests != nil {
		m.registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "algoitny_dynamodb_requests_total", Help: "DynamoDB API calls made by this process.",
		}, dynamoRequests))
	}
	return m
}

// CounterFunc exports a counter whose value f reads (for parts of the
// process the server does not own, such as the caches' change feed).
func (m *Metrics) CounterFunc(name, help string, f func() float64) {
	m.registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, f))
}

// GaugeFunc exports a gauge whose value f reads.
func (m *Metrics) GaugeFunc(name, help string, f func() float64) {
	m.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f))
}

// GaugesFunc exports a gauge with one label, a series for each key of the
// map f returns when scraped.
func (m *Metrics) GaugesFunc(name, help, label string, f func() map[string]float64) {
	m.registry.MustRegister(&gaugesFunc{desc: prometheus.NewDesc(name, help, []string{label}, nil), f: f})
}

// gaugesFunc is GaugesFunc's collector.
type gaugesFunc struct {
	desc *prometheus.Desc
	f    func() map[string]float64
}

func (g *gaugesFunc) Describe(ch chan<- *prometheus.Desc) { ch <- g.desc }

func (g *gaugesFunc) Collect(ch chan<- prometheus.Metric) {
	for k, v := range g.f() {
		ch <- prometheus.MustNewConstMetric(g.desc, prometheus.GaugeValue, v, k)
	}
}

// watchAdmission exports the admission's state: requests being served,
// waiting for a slot and reading their body (what an operator sizes
// ALGOITNY_MAX_CONCURRENT_REQUESTS by, and sees slow clients in; turned
// away ones are the 503s and 429s of algoitny_http_requests_total).
func (m *Metrics) watchAdmission(a *admission) {
	m.registry.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "algoitny_http_requests_in_flight", Help: "GraphQL requests and websocket operations being served (at most the concurrency limit).",
		}, func() float64 { n, _, _ := a.counts(); return float64(n) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "algoitny_http_requests_queued", Help: "GraphQL requests and websocket operations waiting for a slot.",
		}, func() float64 { _, n, _ := a.counts(); return float64(n) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "algoitny_http_requests_reading_body", Help: "GraphQL HTTP requests whose body is being read (they hold no slot).",
		}, func() float64 { _, _, n := a.counts(); return float64(n) }),
	)
}

// opNames bounds the operation label's cardinality: clients choose
// operation names, so only well-formed ones count and at most 200 distinct.
type opNames struct {
	mu   sync.Mutex
	seen map[string]bool
}

var opNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,63}$`)

func (o *opNames) label(name string) string {
	if name == "" {
		return "anonymous"
	}
	if !opNameRE.MatchString(name) {
		return "other"
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.seen == nil {
		o.seen = map[string]bool{}
	}
	if !o.seen[name] {
		if len(o.seen) >= 200 {
			return "other"
		}
		o.seen[name] = true
	}
	return name
}

// requestInfo is filled while a request is served (the transport reports the
// operation name) and read by the access log and metrics.
type requestInfo struct {
	id        string
	operation string
	w         statusWriter // the response's writer (one allocation with this)
	// body is the request's body, read before it took a slot (readBody);
	// nil when it was not read.
	body *bytes.Buffer
	// stop ends the request (its timeout's context; its response budget
	// calls it when spent).
	stop   context.CancelFunc
	budget budget // the response budget of an HTTP request
}

func requestInfoFrom(ctx context.Context) *requestInfo {
	ri, _ := ctx.Value(requestInfoKey{}).(*requestInfo)
	return ri
}

type requestInfoKey struct{}

// RequestID returns the id of the request in ctx ("" outside a request).
func RequestID(ctx context.Context) string {
	if ri, ok := ctx.Value(requestInfoKey{}).(*requestInfo); ok {
		return ri.id
	}
	return ""
}

// ObserveOperation records the GraphQL operation name of the request in ctx.
func ObserveOperation(ctx context.Context, name string) {
	if ri, ok := ctx.Value(requestInfoKey{}).(*requestInfo); ok {
		ri.operation = name
	}
}

var requestIDRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// newRequestID returns 16 random hex digits: a request's id only has to be
// unique in the logs (it is no secret), so it comes from the runtime's
// generator rather than crypto/rand.
func newRequestID() string {
	var b [16]byte
	const digits = "0123456789abcdef"
	v := rand.Uint64()
	for i := range b {
		b[i] = digits[v>>(60-4*i)&0xf]
	}
	return string(b[:])
}

type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += n
	return n, err
}

// Unwrap lets http.ResponseController (and websocket upgrades) reach the writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// observe gives every request an id (X-Request-Id, the client's if sane),
// logs one structured line per request and records metrics. /query goes
// to query with the request's info as it is (query puts it in the
// request's context with the rest: one copy of the request); other routes
// to mux.
func (cfg Config) observe(mux http.Handler, query func(http.ResponseWriter, *http.Request, *requestInfo)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ri := &requestInfo{id: r.Header.Get("X-Request-Id"), w: statusWriter{ResponseWriter: w}}
		if !requestIDRE.MatchString(ri.id) {
			ri.id = newRequestID()
		}
		w.Header()["X-Request-Id"] = []string{ri.id}
		sw := &ri.w
		route := r.URL.Path
		if route == "/query" {
			query(sw, r, ri)
		} else {
			mux.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, ri)))
		}
		elapsed := time.Since(start)
		switch route {
		case "/query", "/healthz", "/readyz", "/metrics", "/playground":
		default:
			route = "other"
		}
		op := ""
		if cfg.Metrics != nil {
			op = cfg.Metrics.operations.label(ri.operation)
			cfg.Metrics.observe(route, op, sw.status, elapsed)
		}
		if route == "/healthz" || route == "/readyz" || route == "/metrics" {
			return
		}
		// The Logger's handler, without the caller's program counter
		// (Logger.LogAttrs reads the stack for it; the access log has no
		// use for the source line).
		if h := cfg.Logger.Handler(); h.Enabled(r.Context(), slog.LevelInfo) {
			rec := slog.NewRecord(time.Now(), slog.LevelInfo, "request", 0)
			rec.AddAttrs(slog.String("request_id", ri.id), slog.String("method", r.Method), slog.String("path", r.URL.Path),
				slog.Int("status", sw.status), slog.Int("bytes", sw.bytes), slog.Duration("duration", elapsed),
				slog.String("operation", ri.operation))
			_ = h.Handle(r.Context(), rec)
		}
	})
}

// Hijack lets websocket upgrades take over the connection (gorilla needs
// http.Hijacker on the writer itself).
func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("the response writer cannot be hijacked")
	}
	w.status = http.StatusSwitchingProtocols
	return h.Hijack()
}

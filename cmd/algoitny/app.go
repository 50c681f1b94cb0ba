package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/algoitny/api/graph"
	"github.com/algoitny/api/internal/accounts"
	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/atcoder"
	"github.com/algoitny/api/internal/auth"
	"github.com/algoitny/api/internal/authoring"
	"github.com/algoitny/api/internal/devstack"
	"github.com/algoitny/api/internal/dynamo"
	"github.com/algoitny/api/internal/history"
	"github.com/algoitny/api/internal/httpserver"
	"github.com/algoitny/api/internal/jobs"
	"github.com/algoitny/api/internal/judge"
	"github.com/algoitny/api/internal/llm"
	"github.com/algoitny/api/internal/practice"
	"github.com/algoitny/api/internal/problempkg"
	"github.com/algoitny/api/internal/problems"
	"github.com/algoitny/api/internal/pubsub"
	"github.com/algoitny/api/internal/safehttp"
	"github.com/algoitny/api/internal/submissions"
	"github.com/algoitny/api/internal/watch"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Main is the running application: every dependency opened once and wired in
// one place. Tests run it on ":0" with the real dependencies.
type Main struct {
	Config Config
	Logger *slog.Logger

	// DB is the API's: it keeps display data at most ALGOITNY_CACHE_BOUND.
	// Work is the jobs' view of it (dynamo.DB.Uncached): every read from
	// DynamoDB itself, so a judge never runs a problem's tests as they were
	// a second ago.
	DB, Work *dynamo.DB
	Pool     *pgxpool.Pool
	Broker   *pubsub.Postgres
	Judge    *judge.Engine
	Jobs     *jobs.Runner
	Events   *jobs.Events
	Accounts *accounts.Service
	Watches  *watch.Service

	// worker is this process's record as a judge worker (workers only):
	// the languages its judge runs, announced at Open and renewed by Run.
	worker *algoitny.Worker

	// Tune adjusts the job runner's configuration (tests shorten its timings).
	Tune func(*jobs.Config)
	// ShutdownGrace bounds Run's graceful shutdown (default 30 s): in-flight
	// requests and running jobs have it to finish.
	ShutdownGrace time.Duration

	stopWarm   context.CancelFunc // the judge's warm-up (workers)
	warmDone   chan struct{}
	listener   net.Listener
	server     *http.Server
	websocket  *httpserver.WebsocketTransport // serve only: told of account changes
	atcoderAPI *atcoder.Client                // the AtCoder Problems client of the sync and the API
	syncQueue  *atcoder.Queue                 // queues on-demand AtCoder syncs
	logs       *logWriter
	pprof      *http.Server
}

// Open connects to DynamoDB and PostgreSQL, builds the services and the River
// runner. With serveHTTP it also listens on Config.Addr (so Addr is known
// before Run).
func (m *Main) Open(ctx context.Context, serveHTTP bool) error {
	if m.Logger == nil {
		m.logs = newLogWriter(os.Stderr)
		m.Logger = slog.New(slog.NewJSONHandler(m.logs, nil))
		// What libraries print with the log package goes to the JSON log
		// too (one line format for the log collector).
		slog.SetDefault(m.Logger)
	}
	if m.Config.PprofAddr != "" {
		if err := m.startPprof(); err != nil {
			return err
		}
	}
	if err := m.openStorage(ctx); err != nil {
		return err
	}
	if err := m.openJudge(serveHTTP); err != nil {
		return err
	}
	if err := m.openJobs(); err != nil {
		return err
	}
	if !serveHTTP {
		return nil
	}
	if err := m.openAccounts(); err != nil {
		return err
	}
	return m.openHTTP()
}

// openStorage connects to DynamoDB and PostgreSQL. Each process keeps
// display data it reads for at most ALGOITNY_CACHE_BOUND; nothing it
// writes to DynamoDB depends on PostgreSQL.
func (m *Main) openStorage(ctx context.Context) error {
	var err error
	if m.DB, err = dynamo.Open(ctx, m.Config.Dynamo); err != nil {
		return err
	}
	if m.Pool, err = openPool(ctx, m.Config.DatabaseURL); err != nil {
		return err
	}
	if m.Broker, err = pubsub.NewPostgres(ctx, pubsub.PostgresConfig{Pool: m.Pool, Channel: m.Config.PubsubChannel, Logger: m.Logger}); err != nil {
		return fmt.Errorf("live events: %w", err)
	}
	m.DB.CacheDisplayData(cmp.Or(m.Config.CacheBound, dynamo.DisplayBound))
	m.Work = m.DB.Uncached()
	m.Events = &jobs.Events{Broker: m.Broker, Store: m.Work, Logger: m.Logger}
	return nil
}

// openJudge starts the sandbox. The judge runs jobs in workers and
// saveProblem's test production in the API; an API-only replica without a
// sandbox serves everything else.
func (m *Main) openJudge(serveHTTP bool) error {
	var err error
	if m.Judge, err = newJudge(m.Config); err != nil {
		if m.Config.Workers || !serveHTTP {
			return err
		}
		m.Logger.Warn("the judge is unavailable: saveProblem is disabled on this replica", "err", err)
		m.Judge = nil
	}
	if m.Judge != nil && m.Config.Workers {
		m.worker = m.newWorkerRecord()
		m.announceWorker(context.Background())
		if m.Config.JudgeWarm {
			m.warmJudge()
		}
	}
	return nil
}

// openJobs builds the River runner with its workers and plugins (AtCoder
// sync, URL checks) and the URL-check service.
func (m *Main) openJobs() error {
	provider, err := llm.New(m.Config.LLM)
	if err != nil {
		return fmt.Errorf("LLM provider: %s", algoitny.ErrorMessage(err))
	}
	if m.atcoderAPI, err = atcoder.NewClient(atcoder.ClientConfig{BaseURL: m.Config.AtCoderBaseURL, MinInterval: m.Config.AtCoderMinInterval}); err != nil {
		return fmt.Errorf("ATCODER_API_BASE_URL: %w", err)
	}
	// The features whose River jobs the runner hosts queue them with a
	// client of their own (API-only replicas too).
	insert, err := jobs.NewInsertClient(m.Pool, m.Config.RiverSchema, m.Logger)
	if err != nil {
		return err
	}
	m.syncQueue = atcoder.NewQueue(insert)
	atcoderJobs, err := atcoder.NewJobs(atcoder.JobsConfig{
		Syncer:   &atcoder.Syncer{Store: m.Work, API: m.atcoderAPI, Logger: m.Logger},
		Interval: m.Config.AtCoderSyncEvery, Logger: m.Logger, Manual: !m.Config.AtCoderPeriodic(),
	})
	if err != nil {
		return err
	}
	// URL checks fetch user-given URLs through their own SSRF-safe client
	// (no per-host spacing: a check's period is its own rate limit).
	// Any port: status pages often listen on :8080; the address must be public.
	checkFetch := safehttp.New(safehttp.Config{Timeout: 15 * time.Second, MaxBodyBytes: 1 << 20, AllowHosts: m.Config.FetchAllowHosts, Resolver: m.Config.FetchResolver, OwnAddresses: m.Config.FetchOwnAddresses, AnyPort: true})
	watchEvents := &watch.Events{Broker: m.Broker, Logger: m.Logger}
	// Webhooks of check notifications go out through an SSRF-safe client too.
	notifications := watch.NewNotifications(watch.NotificationsConfig{
		Store: m.Work, River: insert,
		Poster: safehttp.New(safehttp.Config{Timeout: 10 * time.Second, MaxBodyBytes: 64 << 10, AllowHosts: m.Config.FetchAllowHosts, Resolver: m.Config.FetchResolver, OwnAddresses: m.Config.FetchOwnAddresses, AnyPort: true}),
		Queue:  "watch", Logger: m.Logger,
	})
	checks := watch.NewChecks(watch.ChecksConfig{Store: m.Work, River: insert, Fetch: checkFetch, Events: watchEvents, Alerts: notifications, Logger: m.Logger, Queue: "watch"})
	jcfg := jobs.Config{
		Pool: m.Pool, Schema: m.Config.RiverSchema, Store: m.Work, Events: m.Events,
		LLM: provider, Fetch: safehttp.New(safehttp.Config{AllowHosts: m.Config.FetchAllowHosts, MinHostInterval: time.Second, Resolver: m.Config.FetchResolver, OwnAddresses: m.Config.FetchOwnAddresses}),
		StandInHosts: m.Config.FetchAllowHosts,
		Plugins:      []jobs.Plugin{atcoderJobs, checks, notifications},
		Logger:       m.Logger, Work: m.Config.Workers,
		JobTimeout: m.Config.JobTimeout, RescueAfter: m.Config.JobRescueAfter,
		FetchPollInterval: m.Config.JobPollInterval, StaleAfter: m.Config.JobStaleAfter,
	}
	if m.Judge != nil { // not a nil *judge.Engine in the interface: New checks for none
		jcfg.Judge = m.Judge
		jcfg.Packages = &problempkg.Importer{Judge: m.Judge, Problems: &problems.Service{Store: m.Work}, Plans: m.Work}
		jcfg.PackageStore = m.Work
		jcfg.Practice = &practice.Runner{Engine: m.Judge}
	}
	if m.warmDone != nil {
		// Executions wait for the warm-up: none pays for a cold toolchain.
		jcfg.JudgeReady = m.warmDone
	}
	if m.Tune != nil {
		m.Tune(&jcfg)
	}
	if m.Jobs, err = jobs.New(jcfg); err != nil {
		return err
	}
	m.Watches = &watch.Service{Store: m.DB, URLs: checkFetch, Scheduler: checks, Events: watchEvents, Logger: m.Logger,
		MinDelayMs: int(m.Config.CheckMinDelay.Milliseconds())}
	return nil
}

// resolver builds the API's services over the opened parts.
func (m *Main) resolver() *graph.Resolver {
	problemSvc := &problems.Service{Store: m.DB}
	jobSvc := &submissions.Service{
		Store: m.DB, Problems: problemSvc, Quota: m.Accounts,
		CanRegister: problems.CheckCanRegister, Queue: m.Jobs, Events: m.Events,
		ExtraExtractHosts: m.Config.FetchAllowHosts, Logger: m.Logger, Workers: m.DB, Uploads: m.DB,
		Searchable: practice.Supports,
	}
	resolver := &graph.Resolver{
		Accounts: m.Accounts,
		Problems: problemSvc,
		History:  &history.Service{Store: m.DB},
		Jobs:     jobSvc,
		Events:   m.Events,
		AtCoder:  &atcoder.Service{Store: m.DB, Queue: m.syncQueue, API: m.atcoderAPI},
		Watches:  m.Watches,
	}
	if m.Judge != nil {
		resolver.Authoring = &authoring.Service{Problems: problemSvc, Jobs: jobSvc, Judge: m.Judge}
	}
	return resolver
}

// metrics builds /metrics: the transport's own series and the process's
// (the judge's warm-up, live events, the GraphQL document work).
func (m *Main) metrics(work *httpserver.DocumentWork) *httpserver.Metrics {
	metrics := httpserver.NewMetrics(func() float64 { return float64(m.DB.Requests()) })
	if m.warmDone != nil {
		// Benchmarks that compare the judge in a job with the judge alone
		// wait for 0: a warm-up (Go's standard packages, on a fresh
		// machine) takes the judge's slots and CPU while it runs.
		metrics.GaugeFunc("algoitny_judge_warming", "1 while the judge warms its languages' toolchains after the workers start, else 0.",
			func() float64 {
				select {
				case <-m.warmDone:
					return 0
				default:
					return 1
				}
			})
	}
	metrics.GaugesFunc("algoitny_pubsub_last_received_seconds", "When this process last received an event notification, by topic kind (unix time).", "kind",
		func() map[string]float64 {
			out := map[string]float64{}
			for kind, at := range m.Broker.Received() {
				out[kind] = float64(at.UnixNano()) / 1e9
			}
			return out
		})
	metrics.CounterFunc("algoitny_graphql_precheck_selections_total", "Selections the document checks before validation visited (fragments walked once: linear in the documents).",
		func() float64 { return float64(work.PreCheck.Load()) })
	metrics.CounterFunc("algoitny_graphql_complexity_selections_total", "Selections the complexity count visited (fragments walked once: linear in the documents).",
		func() float64 { return float64(work.Complexity.Load()) })
	return metrics
}

// openHTTP builds the HTTP server (GraphQL over POST and websockets,
// metrics, health) and listens on Config.Addr.
func (m *Main) openHTTP() error {
	openFiles, err := httpserver.RaiseOpenFileLimit()
	if err != nil {
		m.Logger.Warn("cannot raise the open-file limit", "limit", openFiles, "err", err)
	}
	sockets := m.Config.socketLimits(openFiles)
	m.Logger.Info("websocket caps", "openFiles", openFiles, "perAddress", sockets.MaxPerAddress,
		"unauthenticated", sockets.MaxUnauthenticated, "reserve", sockets.Reserve,
		"operations", sockets.MaxOperations, "operationsSignedOut", sockets.MaxOperationsSignedOut, "operationsPerAddress", sockets.MaxOperationsPerAddress,
		"unsentBytes", sockets.MaxUnsentBytes, "unsentBytesPerAddress", sockets.MaxUnsentBytesPerAddress, "trustedProxies", len(sockets.TrustedProxies))
	m.websocket = httpserver.NewWebsocket(httpserver.WebsocketConfig{
		Auth: m.Accounts, AllowedOrigins: m.Config.CORSOrigins, LocalOrigins: m.Config.Dev,
		PingInterval: m.Config.WebsocketPing, InitTimeout: m.Config.WebsocketInitTimeout,
		RecheckInterval: m.Config.WebsocketRecheck,
		Limits:          sockets, Logger: m.Logger,
	})
	work := &httpserver.DocumentWork{}
	metrics := m.metrics(work)
	metrics.GaugeFunc("algoitny_websockets", "Websockets open.",
		func() float64 { n, _, _ := m.websocket.Load(); return float64(n) })
	metrics.GaugeFunc("algoitny_websocket_operations", "Operations the websockets run (subscriptions until they complete).",
		func() float64 { _, n, _ := m.websocket.Load(); return float64(n) })
	metrics.GaugeFunc("algoitny_websocket_unsent_bytes", "Bytes queued for websockets and not sent yet.",
		func() float64 { _, _, n := m.websocket.Load(); return float64(n) })
	trusted, err := m.Config.trustedDocuments()
	if err != nil {
		return err
	}
	if m.Config.TrustedOnly && m.Config.Dev {
		m.Logger.Warn("ALGOITNY_TRUSTED_DOCUMENTS_ONLY is not enforced in dev mode", "documents", len(trusted.Docs))
	}
	gql := httpserver.NewGraphQL(withGraphQL(m.resolver(), httpserver.GraphQLConfig{
		Trusted: trusted,
		Loaders: m.DB, Dev: m.Config.Dev, Introspection: m.Config.IntrospectionOn(), Logger: m.Logger, Budget: m.Config.ResponseBudget,
		Observe:       httpserver.ObserveOperation,
		Websocket:     m.websocket,
		Work:          work,
		CountRequests: countDynamoRequests,
	}))
	m.server = &http.Server{
		Handler: httpserver.New(httpserver.Config{
			GraphQL: gql, Auth: m.Accounts, Dev: m.Config.Dev, Logger: m.Logger, Metrics: metrics,
			CORSOrigins: m.Config.CORSOrigins, LocalOrigins: m.Config.Dev, RequestTimeout: m.Config.RequestTimeout, BodyTimeout: m.Config.BodyTimeout,
			Admission: m.Config.Admission, TrustedProxies: m.Config.TrustedProxies,
			CountRequests: countDynamoRequests,
			Ready: func(ctx context.Context) error {
				if err := m.DB.Ping(ctx); err != nil {
					return err
				}
				return m.Pool.Ping(ctx)
			},
		}),
		ReadHeaderTimeout: 10 * time.Second,
		// An idle keep-alive connection holds an open file: without a bound
		// a client could keep thousands (websockets have their own caps).
		IdleTimeout: 2 * time.Minute,
	}
	if m.listener, err = net.Listen("tcp", m.Config.Addr); err != nil {
		return fmt.Errorf("listen on %s: %w", m.Config.Addr, err)
	}
	return nil
}

// openAccounts builds sessions, Google sign-in and the accounts service.
func (m *Main) openAccounts() error {
	secret, err := sessionSecret(m.Config)
	if err != nil {
		return err
	}
	sessions, err := auth.NewSessions(auth.SessionConfig{Secret: secret, Lifetime: m.Config.SessionLifetime})
	if err != nil {
		return fmt.Errorf("SESSION_SECRET: %s", algoitny.ErrorMessage(err))
	}
	m.Accounts = &accounts.Service{Store: m.DB, Tokens: sessions, Dev: m.Config.Dev,
		Changes: m.Broker, Logger: m.Logger}
	if m.Config.GoogleClientID != "" {
		v, err := auth.NewGoogleVerifier(auth.GoogleConfig{ClientID: m.Config.GoogleClientID, JWKSURL: m.Config.GoogleJWKSURL})
		if err != nil {
			return fmt.Errorf("Google sign-in: %s", algoitny.ErrorMessage(err))
		}
		m.Accounts.Google = v
	}
	return nil
}

// sessionSecret returns SESSION_SECRET. In dev mode without one, a random
// secret is kept in .data/session-secret (ALGOITNY_DATA_DIR) so that sessions survive restarts of
// `make run`; outside dev mode it is required, and refused when anyone
// could guess it (auth.CheckSessionSecret: a published placeholder, too
// little entropy).
func sessionSecret(cfg Config) ([]byte, error) {
	if cfg.SessionSecret != "" {
		if !cfg.Dev {
			// Outside dev mode a guessable secret lets anyone sign a
			// session for any account: refuse to start with one.
			if err := auth.CheckSessionSecret([]byte(cfg.SessionSecret)); err != nil {
				return nil, err
			}
		}
		return []byte(cfg.SessionSecret), nil
	}
	if !cfg.Dev {
		return nil, errors.New("SESSION_SECRET is required (at least 32 bytes, e.g. `openssl rand -hex 32`)")
	}
	path := ""
	if dir, err := devstack.DataDir(); err == nil {
		path = filepath.Join(dir, "session-secret")
		if b, err := os.ReadFile(path); err == nil && len(b) >= auth.MinSessionSecretLen {
			return b, nil
		}
	}
	b := make([]byte, 32)
	rand.Read(b)
	secret := []byte(hex.EncodeToString(b))
	if path != "" {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, secret, 0o600); err != nil {
			return nil, err
		}
	}
	return secret, nil
}

// Addr is the address the server listens on.
func (m *Main) Addr() string { return m.listener.Addr().String() }

// Run starts the workers (if configured) and serves HTTP (if opened with it)
// until ctx is done, then shuts down gracefully: in-flight requests finish,
// websockets are closed with 1012 Service Restart (clients subscribe again,
// to this server's successor, and get the current state first), and
// running jobs get ShutdownGrace to finish before River cancels them; a job
// cancelled so is handed back to the queue (jobs.Runner.Stop) and runs
// again, on this worker's successor or another.
func (m *Main) Run(ctx context.Context) error {
	// Not ctx: River cancels the jobs of a client whose start context ends,
	// and they must drain (Stop) rather than fail.
	if err := m.Jobs.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("start workers: %w", err)
	}
	errc := make(chan error, 1)
	watching := make(chan struct{})
	wctx, stopWatching := context.WithCancel(ctx)
	defer stopWatching()
	beating := make(chan struct{})
	go func() {
		defer close(beating)
		if m.worker != nil {
			m.heartbeat(wctx)
		}
	}()
	if m.server != nil {
		go func() { errc <- m.server.Serve(m.listener) }()
		go func() {
			defer close(watching)
			m.Accounts.FollowChanges(wctx, m.websocket.UserChanged)
		}()
	} else {
		close(watching)
	}
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	}
	shutdown, cancel := context.WithTimeout(context.Background(), cmp.Or(m.ShutdownGrace, 30*time.Second))
	defer cancel()
	if m.server != nil {
		if serr := m.server.Shutdown(shutdown); serr != nil && err == nil {
			err = serr
		}
		// Before the jobs stop and the live events with them: a
		// subscription must not complete before its job's final status.
		// Their close frames have a few seconds to go out; the jobs
		// keep the rest of the grace.
		sockets, stop := context.WithTimeout(shutdown, 5*time.Second)
		_ = m.websocket.Shutdown(sockets) // sockets still open then close with the process
		stop()
	}
	if jerr := m.Jobs.Stop(shutdown); jerr != nil && err == nil {
		err = jerr
	}
	stopWatching()
	<-watching
	<-beating
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

// Close releases the connections and the judge's work directory.
func (m *Main) Close() {
	defer func() {
		if m.logs != nil {
			m.logs.Close()
		}
	}()
	if m.pprof != nil {
		_ = m.pprof.Close()
	}
	if m.Broker != nil {
		m.Broker.Close()
	}
	if m.Pool != nil {
		m.Pool.Close()
	}
	if m.stopWarm != nil {
		m.stopWarm()
		<-m.warmDone
	}
	if m.Judge != nil {
		m.Judge.Close()
	}
}

// warmJudge warms every language's toolchain in the background, so that
// the first job in each (Go: its standard packages, built into the
// judge's cache on a fresh machine) costs what later ones do; the workers
// take executions only once it is done (jobs.Config.JudgeReady). Close
// stops it.
func (m *Main) warmJudge() {
	ctx, stop := context.WithCancel(context.Background())
	m.stopWarm, m.warmDone = stop, make(chan struct{})
	go func() {
		defer close(m.warmDone)
		start := time.Now()
		defer func() {
			if ctx.Err() == nil {
				m.Logger.Info("judge warm-up done", "ms", time.Since(start).Milliseconds())
			}
		}()
		for _, r := range m.Judge.Warm(ctx) {
			if r.Err != nil && ctx.Err() == nil {
				m.Logger.Warn("judge warm-up failed", "language", r.Language, "ms", r.Duration.Milliseconds(), "err", r.Err)
			} else if r.Err == nil {
				m.Logger.Info("judge warmed", "language", r.Language, "ms", r.Duration.Milliseconds())
			}
		}
	}()
}

// newJudge starts the sandboxed judge. JUDGE_SANDBOX=none runs user code
// without a sandbox and is accepted in dev mode only.
func newJudge(cfg Config) (*judge.Engine, error) {
	mode := judge.SandboxMode(cfg.JudgeSandbox)
	if mode == judge.SandboxNone && !cfg.Dev {
		return nil, errors.New("JUDGE_SANDBOX=none runs users' code unsandboxed and is only allowed with ALGOITNY_DEV=true")
	}
	langs, err := judge.LoadLanguages(cfg.JudgeLanguages)
	if err != nil {
		return nil, fmt.Errorf("JUDGE_LANGUAGES: %w", err)
	}
	e, err := judge.New(judge.Config{Sandbox: mode, AllowUnsandboxed: mode == judge.SandboxNone, UIDBase: cfg.JudgeUIDBase, Languages: langs})
	if errors.Is(err, judge.ErrSandboxUnavailable) && cfg.Workers {
		return nil, fmt.Errorf("%w; or run API-only with `serve --no-workers` (for local development only, "+
			"JUDGE_SANDBOX=none with ALGOITNY_DEV=true runs code unsandboxed)", err)
	}
	return e, err
}

// defaultPoolConns is the size of the PostgreSQL pool unless DATABASE_URL
// sets pool_max_conns: River and the live events share it, and pgx's default (4 on two cores) makes writes queue for it.
const defaultPoolConns = 16

func openPool(ctx context.Context, url string) (*pgxpool.Pool, error) {
	if url == "" {
		url = devstack.DefaultLocalURL
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	if !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = defaultPoolConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := pool.Ping(pctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("PostgreSQL unreachable (set DATABASE_URL): %w", err)
	}
	return pool, nil
}

package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/devstack"
	"github.com/algoitny/api/internal/dynamo"
	"github.com/algoitny/api/internal/httpserver"
	"github.com/algoitny/api/internal/llm"
)

// Config is the whole configuration of the binary, read from the environment
// (design.md §3) so that any operator or test harness starts it the same way.
type Config struct {
	Addr string // ALGOITNY_ADDR
	// PublicURL is where clients reach this server (ALGOITNY_PUBLIC_URL),
	// when that is not ALGOITNY_ADDR itself: a published container port or
	// a proxy. Only the start-up lines that name the API's URLs read it.
	PublicURL string
	Dev       bool // ALGOITNY_DEV: devLogin, playground, introspection (unless Introspection is set)
	Workers   bool // ALGOITNY_WORKERS: run River workers in serve
	// Dynamo is the DynamoDB connection. Its Endpoint is DYNAMODB_ENDPOINT;
	// DYNAMODB_ENDPOINT=aws (DynamoAWS) asks for AWS itself, which an empty
	// one never does (see resolveStack).
	Dynamo      dynamo.Config
	DynamoAWS   bool
	DatabaseURL string // DATABASE_URL
	RiverSchema string // ALGOITNY_RIVER_SCHEMA: PostgreSQL schema of River's tables ("" = search path)
	// PubsubChannel is the LISTEN/NOTIFY channel of live events
	// (ALGOITNY_PUBSUB_CHANNEL, default algoitny_events); replicas that
	// serve one deployment share it.
	PubsubChannel string
	// Introspection allows __schema and __type queries
	// (ALGOITNY_INTROSPECTION=true|false); nil follows Dev, so it is on in
	// dev mode and off otherwise. Clients that introspect in production
	// (code generators, the graphql-http audit) need it on.
	Introspection *bool

	SessionSecret  string // SESSION_SECRET
	GoogleClientID string // GOOGLE_CLIENT_ID
	GoogleJWKSURL  string // GOOGLE_JWKS_URL

	// LLM chooses the hint/generator provider (LLM_PROVIDER offline|gemini|openai,
	// GEMINI_API_KEY, OPENAI_API_KEY, LLM_BASE_URL, LLM_MODEL, LLM_TIMEOUT).
	LLM llm.Config
	// FetchAllowHosts lets problem extraction, URL checks and webhooks
	// reach non-public hosts (ALGOITNY_FETCH_ALLOW_HOSTS, comma-separated;
	// tests only): "host" allows every port of host, "host:port" that port
	// only (safehttp.Config.AllowHosts).
	FetchAllowHosts []string
	// FetchResolver, if set, resolves the host names of users' URLs
	// (checks, extraction) instead of the system's resolver: tests only,
	// never from the environment.
	FetchResolver *net.Resolver
	// FetchOwnAddresses are this server's public addresses its interfaces
	// do not show (a NATed or load-balanced IP; ALGOITNY_OWN_ADDRESSES,
	// comma-separated): users' URLs may not lead there
	// (safehttp.Config.OwnAddresses).
	FetchOwnAddresses []netip.Addr

	JudgeSandbox string // JUDGE_SANDBOX: bwrap | none
	// JudgeWarm warms every language's toolchain when workers start
	// (JUDGE_WARM, default true; judge.Engine.Warm): the first submission
	// in Go on a fresh machine otherwise builds Go's standard packages.
	JudgeWarm bool
	// JudgeUIDBase (JUDGE_UID_BASE, default the judge's 1500000) is the
	// first of the host uids users' code runs as (judge.Config.UIDBase):
	// for a host where that range is taken, or processes that must tell
	// their sandboxes apart from another judge's on the same host.
	JudgeUIDBase int
	// JudgeLanguages (JUDGE_LANGUAGES) names a language table file that
	// changes or extends the judge's built-in languages
	// (judge.LoadLanguages); empty: the built-in table.
	JudgeLanguages string

	CORSOrigins []string // ALGOITNY_CORS_ORIGINS: comma-separated browser origins allowed to call the API
	// SessionLifetime is how long a session token lasts (SESSION_LIFETIME, default 7 days).
	SessionLifetime time.Duration
	// CacheBound (ALGOITNY_CACHE_BOUND, default and most 1s) is how long a
	// process keeps display data (problems, quota counters) it read: how
	// stale another replica's change can be seen (dynamo.CacheDisplayData).
	CacheBound time.Duration
	// WebsocketPing is the websocket keep-alive period (default 15 s) and
	// WebsocketInitTimeout the time a client has to send connection_init
	// (default 10 s); WebsocketRecheck is how often a signed-in socket's
	// session is checked again (default 1 min). Tests shorten them.
	WebsocketPing, WebsocketInitTimeout, WebsocketRecheck time.Duration
	// Websocket caps (httpserver.SocketLimits): open sockets per client
	// address (ALGOITNY_WS_MAX_PER_ADDRESS), sockets not signed in
	// (ALGOITNY_WS_MAX_UNAUTHENTICATED) and the slots of those kept for
	// sockets about to sign in (ALGOITNY_WS_RESERVE); operations running
	// at once per signed-in socket (ALGOITNY_WS_MAX_OPERATIONS), per
	// signed-out one (ALGOITNY_WS_MAX_OPERATIONS_SIGNED_OUT) and per
	// address (ALGOITNY_WS_MAX_OPERATIONS_PER_ADDRESS). 0 means the default
	// (httpserver.DefaultSocketLimits, the first two sized from the
	// open-file limit), -1 no cap (no reserve); the environment says "off"
	// (or 0) for -1.
	WebsocketMaxPerAddress, WebsocketMaxUnauthenticated, WebsocketReserve                     int
	WebsocketMaxOperations, WebsocketMaxOperationsSignedOut, WebsocketMaxOperationsPerAddress int
	// Bytes a socket (ALGOITNY_WS_MAX_UNSENT_BYTES) and the sockets of an
	// address (ALGOITNY_WS_MAX_UNSENT_BYTES_PER_ADDRESS) may leave unread
	// before the socket is closed with 1008; 0 the default, -1 no cap.
	WebsocketMaxUnsentBytes, WebsocketMaxUnsentBytesPerAddress int64
	// BodyTimeout bounds the reading of a request body
	// (httpserver.Config.BodyTimeout, 10 s like the headers'); tests
	// shorten it.
	BodyTimeout time.Duration
	// TrustedProxies are the reverse proxies and load balancers whose
	// X-Forwarded-For names the client address the per-address cap counts
	// (ALGOITNY_TRUSTED_PROXIES, comma-separated addresses and CIDR
	// networks; none by default: the header is ignored).
	TrustedProxies []netip.Prefix

	// Job runner timings (ALGOITNY_JOB_TIMEOUT, ALGOITNY_JOB_RESCUE_AFTER,
	// ALGOITNY_JOB_POLL_INTERVAL, ALGOITNY_JOB_STALE_AFTER); zero means the
	// jobs package's defaults.
	JobTimeout, JobRescueAfter, JobPollInterval, JobStaleAfter time.Duration

	// AtCoder sync: the AtCoder Problems API (ATCODER_API_BASE_URL, default
	// https://kenkoooo.com), the least time between its calls
	// (ATCODER_MIN_INTERVAL, default 1s) and how often all linked users are
	// synced (ATCODER_SYNC_INTERVAL, default 1h).
	AtCoderBaseURL                       string
	AtCoderMinInterval, AtCoderSyncEvery time.Duration
	// AtCoderSync (ATCODER_SYNC, true/false) says whether the periodic
	// sweep (contest discovery, every linked user's sync) runs; nil: on,
	// but in dev mode only when ATCODER_API_BASE_URL is set — `make run`
	// reaches the internet only when told to.
	AtCoderSync *bool

	// PprofAddr serves net/http/pprof on its own listener (ALGOITNY_PPROF_ADDR,
	// e.g. 127.0.0.1:6060; off by default: profiles reveal internals).
	PprofAddr string

	// CheckMinDelay is the floor of every URL check's period under the plans'
	// minimums (ALGOITNY_CHECK_MIN_DELAY, default 1s; tests lower it).
	CheckMinDelay time.Duration

	// RequestTimeout bounds an HTTP request, from parsing to the last
	// field (ALGOITNY_REQUEST_TIMEOUT, default 30s).
	RequestTimeout time.Duration
	// Admission is the back-pressure of /query: requests served at once
	// (ALGOITNY_MAX_CONCURRENT_REQUESTS, default 8 per CPU, "off" for no limit),
	// more waiting for a slot (ALGOITNY_MAX_QUEUED_REQUESTS, default 512)
	// for at most ALGOITNY_QUEUE_TIMEOUT (default 5s); the rest get 503 +
	// Retry-After. One client address holds at most
	// ALGOITNY_MAX_CONCURRENT_REQUESTS_PER_ADDRESS slots (default a quarter)
	// and has at most ALGOITNY_MAX_QUEUED_REQUESTS_PER_ADDRESS requests
	// waiting (default 64; 429 over it). See httpserver.Admission; zero
	// fields are the defaults, -1 ("off") none.
	Admission httpserver.Admission
	// ResponseBudget bounds the bytes of one request's answer, signed out
	// (ALGOITNY_RESPONSE_BYTES_SIGNED_OUT, default 16MB) and signed in
	// (ALGOITNY_RESPONSE_BYTES_SIGNED_IN, default 80MB)
	// (httpserver.ResponseBudget). Zero fields are the defaults.
	ResponseBudget httpserver.ResponseBudget
	// TrustedDocuments names the front-end's persisted-documents manifest
	// (ALGOITNY_TRUSTED_DOCUMENTS: a JSON file of SHA-256 hex → document
	// text; docs/trusted-documents.md), and TrustedOnly
	// (ALGOITNY_TRUSTED_DOCUMENTS_ONLY) refuses any other document but
	// staff's. Dev mode does not enforce TrustedOnly.
	TrustedDocuments string
	TrustedOnly      bool
}

// configFromEnv reads and validates the configuration.
func configFromEnv() (Config, error) {
	cfg := Config{
		Addr:             envOr("ALGOITNY_ADDR", ":8080"),
		PublicURL:        strings.TrimRight(strings.TrimSpace(os.Getenv("ALGOITNY_PUBLIC_URL")), "/"),
		Dynamo:           dynamo.ConfigFromEnv(),
		DatabaseURL:      os.Getenv("DATABASE_URL"),
		RiverSchema:      os.Getenv("ALGOITNY_RIVER_SCHEMA"),
		PubsubChannel:    os.Getenv("ALGOITNY_PUBSUB_CHANNEL"),
		SessionSecret:    os.Getenv("SESSION_SECRET"),
		GoogleClientID:   os.Getenv("GOOGLE_CLIENT_ID"),
		GoogleJWKSURL:    envOr("GOOGLE_JWKS_URL", "https://www.googleapis.com/oauth2/v3/certs"),
		LLM:              llm.ConfigFromEnv(os.Getenv),
		FetchAllowHosts:  httpserver.ParseOrigins(os.Getenv("ALGOITNY_FETCH_ALLOW_HOSTS")),
		JudgeSandbox:     envOr("JUDGE_SANDBOX", "bwrap"),
		JudgeLanguages:   strings.TrimSpace(os.Getenv("JUDGE_LANGUAGES")),
		CORSOrigins:      httpserver.ParseOrigins(os.Getenv("ALGOITNY_CORS_ORIGINS")),
		AtCoderBaseURL:   os.Getenv("ATCODER_API_BASE_URL"),
		PprofAddr:        os.Getenv("ALGOITNY_PPROF_ADDR"),
		TrustedDocuments: strings.TrimSpace(os.Getenv("ALGOITNY_TRUSTED_DOCUMENTS")),
	}
	if strings.EqualFold(cfg.Dynamo.Endpoint, "aws") {
		cfg.Dynamo.Endpoint, cfg.DynamoAWS = "", true
	}
	steps := []func() error{cfg.readDurations, cfg.readSocketLimits, cfg.readTrustedProxies,
		cfg.readOwnAddresses, cfg.readLimits, cfg.readSwitches, cfg.validate}
	for _, step := range steps {
		if err := step(); err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}

// readOwnAddresses reads ALGOITNY_OWN_ADDRESSES: IP addresses, comma-separated.
func (cfg *Config) readOwnAddresses() error {
	for _, f := range strings.Split(os.Getenv("ALGOITNY_OWN_ADDRESSES"), ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		ip, err := netip.ParseAddr(f)
		if err != nil {
			return fmt.Errorf("ALGOITNY_OWN_ADDRESSES: %q is not an IP address", f)
		}
		cfg.FetchOwnAddresses = append(cfg.FetchOwnAddresses, ip.Unmap())
	}
	return nil
}

// readDurations reads the durations of the environment (each must be
// positive) and refuses the removed SESSION_CACHE_TTL.
func (cfg *Config) readDurations() error {
	for name, dst := range map[string]*time.Duration{
		"SESSION_LIFETIME":           &cfg.SessionLifetime,
		"ALGOITNY_JOB_TIMEOUT":       &cfg.JobTimeout,
		"ALGOITNY_JOB_RESCUE_AFTER":  &cfg.JobRescueAfter,
		"ALGOITNY_JOB_POLL_INTERVAL": &cfg.JobPollInterval,
		"ALGOITNY_JOB_STALE_AFTER":   &cfg.JobStaleAfter,
		"ATCODER_MIN_INTERVAL":       &cfg.AtCoderMinInterval,
		"ATCODER_SYNC_INTERVAL":      &cfg.AtCoderSyncEvery,
		"ALGOITNY_CHECK_MIN_DELAY":   &cfg.CheckMinDelay,
		"ALGOITNY_CACHE_BOUND":       &cfg.CacheBound,
		"ALGOITNY_REQUEST_TIMEOUT":   &cfg.RequestTimeout,
		"ALGOITNY_QUEUE_TIMEOUT":     &cfg.Admission.QueueTimeout,
	} {
		if v := os.Getenv(name); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return fmt.Errorf("%s=%q: want a duration such as 90s or 168h", name, v)
			}
			*dst = d
		}
	}
	if os.Getenv("SESSION_CACHE_TTL") != "" {
		return fmt.Errorf("SESSION_CACHE_TTL is no longer used: a logout or an account change is never served stale by any replica (README, Running several replicas); unset it")
	}
	if os.Getenv("ALGOITNY_CACHE_WRITE_WINDOW") != "" {
		return fmt.Errorf("ALGOITNY_CACHE_WRITE_WINDOW is no longer used: no replica announces its writes to the others; unset it")
	}
	if cfg.CacheBound > time.Second {
		return fmt.Errorf("ALGOITNY_CACHE_BOUND=%s: at most 1s (how stale display data may be shown)", cfg.CacheBound)
	}
	return nil
}

// readSocketLimits reads the websocket limits of the environment: a
// number (a size for bytes), or off (0 is off too: -1 in Config).
func (cfg *Config) readSocketLimits() error {
	for name, dst := range map[string]*int{
		"ALGOITNY_WS_MAX_PER_ADDRESS":            &cfg.WebsocketMaxPerAddress,
		"ALGOITNY_WS_MAX_UNAUTHENTICATED":        &cfg.WebsocketMaxUnauthenticated,
		"ALGOITNY_WS_MAX_OPERATIONS":             &cfg.WebsocketMaxOperations,
		"ALGOITNY_WS_MAX_OPERATIONS_SIGNED_OUT":  &cfg.WebsocketMaxOperationsSignedOut,
		"ALGOITNY_WS_MAX_OPERATIONS_PER_ADDRESS": &cfg.WebsocketMaxOperationsPerAddress,
	} {
		v := strings.TrimSpace(os.Getenv(name))
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		switch {
		case v == "off" || (err == nil && n == 0):
			*dst = -1
		case err != nil || n < 0:
			return fmt.Errorf("%s=%q: want a number, or off", name, v)
		default:
			*dst = n
		}
	}
	for name, dst := range map[string]*int64{
		"ALGOITNY_WS_MAX_UNSENT_BYTES":             &cfg.WebsocketMaxUnsentBytes,
		"ALGOITNY_WS_MAX_UNSENT_BYTES_PER_ADDRESS": &cfg.WebsocketMaxUnsentBytesPerAddress,
	} {
		v := strings.TrimSpace(os.Getenv(name))
		if v == "" {
			continue
		}
		n, err := parseBytes(v)
		switch {
		case v == "off" || (err == nil && n == 0):
			*dst = -1
		case err != nil || n < 0:
			return fmt.Errorf("%s=%q: want a size such as 16MB, or off", name, v)
		default:
			*dst = n
		}
	}
	if v := strings.TrimSpace(os.Getenv("ALGOITNY_WS_RESERVE")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("ALGOITNY_WS_RESERVE=%q: want a number of sockets (0 for none)", v)
		}
		cfg.WebsocketReserve = n
		if n == 0 {
			cfg.WebsocketReserve = -1
		}
	}
	return nil
}

// readTrustedProxies reads ALGOITNY_TRUSTED_PROXIES.
func (cfg *Config) readTrustedProxies() error {
	proxies, err := httpserver.ParseTrustedProxies(os.Getenv("ALGOITNY_TRUSTED_PROXIES"))
	if err != nil {
		return fmt.Errorf("ALGOITNY_TRUSTED_PROXIES: %v", err)
	}
	cfg.TrustedProxies = proxies
	return nil
}

// readSwitches reads the on/off settings of the environment.
func (cfg *Config) readSwitches() error {
	var err error
	if cfg.Dev, err = envBool("ALGOITNY_DEV", false); err != nil {
		return err
	}
	if cfg.Workers, err = envBool("ALGOITNY_WORKERS", true); err != nil {
		return err
	}
	if cfg.JudgeWarm, err = envBool("JUDGE_WARM", true); err != nil {
		return err
	}
	if cfg.JudgeUIDBase, err = judgeUIDBaseFromEnv(); err != nil {
		return err
	}
	if cfg.TrustedOnly, err = envBool("ALGOITNY_TRUSTED_DOCUMENTS_ONLY", false); err != nil {
		return err
	}
	if v := os.Getenv("ALGOITNY_INTROSPECTION"); strings.TrimSpace(v) != "" {
		on, err := envBool("ALGOITNY_INTROSPECTION", false)
		if err != nil {
			return err
		}
		cfg.Introspection = &on
	}
	if v := os.Getenv("ATCODER_SYNC"); strings.TrimSpace(v) != "" {
		on, err := envBool("ATCODER_SYNC", true)
		if err != nil {
			return err
		}
		cfg.AtCoderSync = &on
	}
	return nil
}

// judgeUIDBaseFromEnv reads JUDGE_UID_BASE: 0 when it is unset (the
// judge's default), an error naming the allowed range when it is not a uid
// in it. The server and `algoitny judge` read it alike.
func judgeUIDBaseFromEnv() (int, error) {
	v := strings.TrimSpace(os.Getenv("JUDGE_UID_BASE"))
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < minJudgeUIDBase || n > maxJudgeUIDBase {
		return 0, fmt.Errorf("JUDGE_UID_BASE=%q: want a uid from %d to %d (users' code runs as it and the next 4,096 uids)", v, minJudgeUIDBase, maxJudgeUIDBase)
	}
	return n, nil
}

// The range JUDGE_UID_BASE may start: above the uids of a host's accounts
// and of the subordinate ranges /etc/subuid hands out from 100000 (65536
// per user), and low enough that the judge's 4,097 uids stay below 2^31.
const (
	minJudgeUIDBase = 1_000_000
	maxJudgeUIDBase = 2_000_000_000
)

// validate checks what a read value cannot: that the LLM provider can be
// built and the judge's sandbox mode is known.
func (cfg *Config) validate() error {
	if _, err := llm.New(cfg.LLM); err != nil {
		return fmt.Errorf("LLM_PROVIDER: %s", algoitny.ErrorMessage(err))
	}
	switch cfg.JudgeSandbox {
	case "bwrap", "none":
	default:
		return fmt.Errorf("JUDGE_SANDBOX=%q: want bwrap or none", cfg.JudgeSandbox)
	}
	if cfg.PublicURL != "" {
		u, err := url.Parse(cfg.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("ALGOITNY_PUBLIC_URL=%q: want an http(s) URL such as http://localhost:18080", cfg.PublicURL)
		}
	}
	return nil
}

// AtCoderPeriodic says whether the AtCoder sweep runs (AtCoderSync).
func (c Config) AtCoderPeriodic() bool {
	if c.AtCoderSync != nil {
		return *c.AtCoderSync
	}
	return !c.Dev || c.AtCoderBaseURL != ""
}

// trustedDocuments loads the manifest of TrustedDocuments (none when
// unset) with the trusted-only switch, which dev mode leaves off.
func (c Config) trustedDocuments() (httpserver.TrustedDocuments, error) {
	t := httpserver.TrustedDocuments{Only: c.TrustedOnly && !c.Dev}
	if c.TrustedDocuments == "" {
		return t, nil
	}
	docs, err := httpserver.LoadTrustedDocuments(c.TrustedDocuments)
	if err != nil {
		return t, fmt.Errorf("ALGOITNY_TRUSTED_DOCUMENTS: %v", err)
	}
	t.Docs = docs
	return t, nil
}

// IntrospectionOn says whether the schema may be introspected:
// ALGOITNY_INTROSPECTION when set, else dev mode.
func (c Config) IntrospectionOn() bool {
	if c.Introspection != nil {
		return *c.Introspection
	}
	return c.Dev
}

// socketLimits are the websocket caps: the configured ones, the others
// the defaults (sized from openFiles, the open-file limit; 0 if unknown).
func (c Config) socketLimits(openFiles uint64) httpserver.SocketLimits {
	l := httpserver.DefaultSocketLimits(openFiles)
	for _, v := range []struct {
		set int
		dst *int
	}{
		{c.WebsocketMaxPerAddress, &l.MaxPerAddress}, {c.WebsocketMaxUnauthenticated, &l.MaxUnauthenticated}, {c.WebsocketReserve, &l.Reserve},
		{c.WebsocketMaxOperations, &l.MaxOperations}, {c.WebsocketMaxOperationsSignedOut, &l.MaxOperationsSignedOut},
		{c.WebsocketMaxOperationsPerAddress, &l.MaxOperationsPerAddress},
	} {
		switch {
		case v.set < 0:
			*v.dst = 0
		case v.set > 0:
			*v.dst = v.set
		}
	}
	for _, v := range []struct {
		set int64
		dst *int64
	}{{c.WebsocketMaxUnsentBytes, &l.MaxUnsentBytes}, {c.WebsocketMaxUnsentBytesPerAddress, &l.MaxUnsentBytesPerAddress}} {
		switch {
		case v.set < 0:
			*v.dst = 0
		case v.set > 0:
			*v.dst = v.set
		}
	}
	l.TrustedProxies = c.TrustedProxies
	return l
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func envBool(name string, def bool) (bool, error) {
	v := strings.TrimSpace(os.Getenv(name))
	if v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return def, fmt.Errorf("%s=%q: want true or false", name, v)
	}
	return b, nil
}

// readLimits reads the admission's sizes and the response budgets.
func (cfg *Config) readLimits() error {
	for _, v := range []struct {
		name string
		dst  *int
		min  int
	}{
		{"ALGOITNY_MAX_CONCURRENT_REQUESTS", &cfg.Admission.Concurrency, 1},
		{"ALGOITNY_MAX_CONCURRENT_REQUESTS_PER_ADDRESS", &cfg.Admission.PerAddress, 1},
		{"ALGOITNY_MAX_QUEUED_REQUESTS_PER_ADDRESS", &cfg.Admission.PerAddressQueue, 1},
	} {
		switch s := strings.TrimSpace(os.Getenv(v.name)); s {
		case "":
		case "off":
			*v.dst = -1
		default:
			n, err := strconv.Atoi(s)
			if err != nil || n < v.min {
				return fmt.Errorf("%s=%q: want a number of requests ≥ %d, or off", v.name, s, v.min)
			}
			*v.dst = n
		}
	}
	if v := strings.TrimSpace(os.Getenv("ALGOITNY_MAX_QUEUED_REQUESTS")); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("ALGOITNY_MAX_QUEUED_REQUESTS=%q: want a number of requests ≥ 0", v)
		}
		cfg.Admission.Queue = n
		if n == 0 {
			cfg.Admission.Queue = -1 // none may wait (0 is the default)
		}
	}
	for name, dst := range map[string]*int64{
		"ALGOITNY_RESPONSE_BYTES_SIGNED_OUT": &cfg.ResponseBudget.SignedOut,
		"ALGOITNY_RESPONSE_BYTES_SIGNED_IN":  &cfg.ResponseBudget.SignedIn,
	} {
		if v := os.Getenv(name); v != "" {
			n, err := parseBytes(v)
			if err != nil || n <= 0 {
				return fmt.Errorf("%s=%q: want a size such as 16MB, 512KB or 1048576", name, v)
			}
			*dst = n
		}
	}
	return nil
}

// parseBytes reads a size: a number of bytes, or one with a KB, MB or GB
// suffix (powers of 1024).
func parseBytes(s string) (int64, error) {
	s = strings.ToUpper(strings.TrimSpace(s))
	mult := int64(1)
	for suffix, m := range map[string]int64{"KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30} {
		if rest, ok := strings.CutSuffix(s, suffix); ok {
			s, mult = strings.TrimSpace(rest), m
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSuffix(s, "B"), 10, 64)
	if err != nil || n > (1<<62)/mult {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return n * mult, nil
}

// errNoDynamoDB refuses to guess where DynamoDB is: an empty endpoint would
// be AWS, with whatever credentials the machine has.
var errNoDynamoDB = errors.New("DYNAMODB_ENDPOINT is not set and no `make run` stack runs in this checkout: " +
	"start one with `make run`, set DYNAMODB_ENDPOINT=http://HOST:PORT (DynamoDB Local or another compatible endpoint), " +
	"or set DYNAMODB_ENDPOINT=aws to use AWS DynamoDB with the standard AWS configuration (AWS_REGION, credentials)")

// resolveStack decides where a subcommand's data is when the environment
// does not say: the stack `make run` runs in this checkout (or in
// ALGOITNY_DATA_DIR), whose DynamoDB endpoint, database, tables, River
// schema and change channel it takes, so that `algoitny admin grant` acts on
// the running server at once. Without DYNAMODB_ENDPOINT and without such a
// stack it returns errNoDynamoDB: AWS only when asked for (aws). What it
// took is said on stderr.
func (cfg *Config) resolveStack(stderr io.Writer) error {
	if cfg.Dynamo.Endpoint != "" || cfg.DynamoAWS {
		return nil
	}
	dir, err := devstack.DataDir()
	if err != nil {
		return errNoDynamoDB
	}
	st, err := devstack.Running(dir)
	if err != nil {
		return err
	}
	if st == nil {
		return errNoDynamoDB
	}
	if st.DynamoDB == "aws" { // a `make run` told DYNAMODB_ENDPOINT=aws
		cfg.DynamoAWS = true
	} else {
		cfg.Dynamo.Endpoint = st.DynamoDB
	}
	if cfg.DatabaseURL == "" {
		cfg.DatabaseURL = st.DatabaseURL
	}
	if cfg.Dynamo.TablePrefix == "" {
		cfg.Dynamo.TablePrefix = st.TablePrefix
	}
	if cfg.RiverSchema == "" {
		cfg.RiverSchema = st.RiverSchema
	}
	if cfg.PubsubChannel == "" {
		cfg.PubsubChannel = st.PubsubChannel
	}
	fmt.Fprintf(stderr, "using the stack of `make run` (pid %d): DynamoDB %s, PostgreSQL %s\n", st.Pid, st.DynamoDB, redact(cfg.DatabaseURL))
	return nil
}

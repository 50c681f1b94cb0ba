// Package watch is URL checks ("watches", the system of seed 002): a user
// watches a judge, a contest page or a problem page — is it up, has a
// keyword appeared (registration opened) — and sees the results live.
//
// A check (algoitny.Check) is fetched every DelayMs by the scheduler
// (Checks: a River worker, hosted by the runner of internal/jobs, that
// calls Executor.RunDue and sleeps until the time it returns). Each run is judged by the Prober: AVAILABILITY checks are UP
// when the URL answers below HTTP 400; KEYWORD checks also need the keyword
// in the page (case-insensitive), or its absence when inverted. Runs that
// cannot fetch the page (network error, timeout, HTTP ≥ 400) fail, after a
// few quick retries; after FailureThreshold failures in a row the check's
// state (algoitny.CheckState, apart from the owner's ACTIVE/PAUSED status)
// becomes DOWN. A DOWN check keeps running at a slower pace (DownDelay) and
// its first good run makes it UP again; both changes are published and
// handed to an Alerter (notifications). A destination that resolves to a
// non-public address makes the check DOWN at once, and so, in the same
// words, does a host name that does not exist: checks must not tell which
// names the server's DNS knows.
//
// Fetches go through internal/safehttp: http(s) only, loopback, private,
// link-local and metadata addresses refused when the check is created and
// again after DNS resolution and on every redirect, bodies capped, timeouts.
//
// Service is the API GraphQL calls: Create, Update, Pause, Resume, Delete,
// Get, List, ListAll (staff), RecentResults and Subscribe. Plans limit the
// number of checks (MaxChecks, exact under concurrency: storage raises a
// counter with a conditional ADD in the check's own transaction) and how
// often they run (MinCheckDelayMs). Every change and every result is
// published on Topic(id) as a JSON CheckEvent.
//
// Results are kept for algoitny.CheckResultRetention (DynamoDB TTL) and at
// most DefaultResultsKept per check, newest first.
//
// The vocabulary of checks (algoitny.Check, CheckResult, CheckEvent,
// CheckFilter, CheckInput, CheckUpdate, CheckRunRecord, the type and status
// enums) lives in internal/algoitny, so that storage and the GraphQL layer
// share it without importing this package; the rules applied to it are here.
package watch

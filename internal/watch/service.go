package watch

import (
	"cmp"
	"context"
	"log/slog"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/safehttp"
)

// Store is what the service needs from storage (internal/dynamo).
type Store interface {
	// CreateCheck stores c (assigning its id, times and version) if the
	// owner has fewer than maxChecks checks (-1 = unlimited); ERATELIMITED
	// otherwise.
	CreateCheck(ctx context.Context, c *algoitny.Check, maxChecks int) error
	GetCheck(ctx context.Context, id string) (*algoitny.Check, error)
	// UpdateCheck stores the settings and status of c if its version is
	// still c.Version; ECONFLICT otherwise, ENOTFOUND if it is gone.
	UpdateCheck(ctx context.Context, c *algoitny.Check) (*algoitny.Check, error)
	// DeleteCheck removes a check and its results and lowers its owner's
	// count; ENOTFOUND if it is gone.
	DeleteCheck(ctx context.Context, id string) (*algoitny.Check, error)
	ListUserChecks(ctx context.Context, userID string, page algoitny.PageRequest) (algoitny.Page[*algoitny.Check], error)
	ListChecks(ctx context.Context, f algoitny.CheckFilter, page algoitny.PageRequest) (algoitny.Page[*algoitny.Check], error)
	ListCheckResults(ctx context.Context, id string, limit int) ([]*algoitny.CheckResult, error)
	ChannelStore
	StatsStore
}

// Scheduler makes an ACTIVE check's runs happen from its NextRunAt on
// (Checks; the service's tests use a stand-in). It must be idempotent: the service calls it after every
// change that may move NextRunAt earlier.
type Scheduler interface {
	Schedule(ctx context.Context, c *algoitny.Check) error
}

// URLChecker refuses URLs that may not be fetched, before any DNS lookup
// (*safehttp.Client with AnyPort: http(s) only, no literal non-public
// address, no localhost; any port).
type URLChecker interface {
	CheckURL(raw string) error
}

var _ URLChecker = (*safehttp.Client)(nil)

// Service is the API of URL checks for GraphQL: it applies who may see and
// change which check, the input rules and the plan's limits (MaxChecks,
// exact under concurrency; MinCheckDelayMs), and keeps the scheduler and
// subscribers informed. Every method needs a signed-in actor
// (EUNAUTHENTICATED otherwise); users see only their own checks and staff
// see all, and a check the actor may not see is ENOTFOUND, so its existence
// does not leak.
//
// Staff are exempt from their plan's MaxChecks and MinCheckDelayMs (they run
// checks for the platform), but not from MinDelayMs, which protects the
// targets.
type Service struct {
	Store Store
	// URLs refuses non-public targets when a check is created or its URL
	// changed (required; runs are checked again after DNS resolution).
	URLs URLChecker
	// Scheduler starts runs at once after Create, Resume and Update; nil
	// leaves it to the scheduler's periodic sweep.
	Scheduler Scheduler
	// Events tells subscribers about changes and serves Subscribe.
	Events *Events
	// MinDelayMs is the floor of every check's delay, below any plan's
	// MinCheckDelayMs (default DefaultMinDelayMs; tests lower it).
	MinDelayMs int
	Logger     *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func notFound() error { return algoitny.Errorf(algoitny.ENOTFOUND, "check not found") }

// limits returns the actor's MaxChecks and minimum delay.
func (s *Service) limits(a *algoitny.Actor) (maxChecks, minDelayMs int) {
	floor := cmp.Or(s.MinDelayMs, DefaultMinDelayMs)
	switch {
	case a.IsStaff():
		return algoitny.Unlimited, floor
	case a.Plan == nil:
		return 0, floor
	}
	return a.Plan.MaxChecks, max(floor, a.Plan.MinCheckDelayMs)
}

// Create adds a check for the signed-in user and starts running it at once.
// It returns EUNAUTHENTICATED, EINVALID naming the field (url, type, keyword,
// invert, delayMs) and ERATELIMITED when the plan's MaxChecks is reached —
// exactly, even for concurrent calls.
func (s *Service) Create(ctx context.Context, in algoitny.CheckInput) (*algoitny.Check, error) {
	a := algoitny.ActorFrom(ctx)
	if err := a.RequireUser(); err != nil {
		return nil, err
	}
	maxChecks, minDelay := s.limits(a)
	if in.DelayMs == 0 {
		in.DelayMs = max(DefaultDelayMs, minDelay)
	}
	now := s.now().UTC()
	c := &algoitny.Check{
		UserID: a.UserID(), URL: strings.TrimSpace(in.URL), Type: in.Type, Keyword: strings.TrimSpace(in.Keyword),
		Invert: in.Invert, DelayMs: in.DelayMs, Status: algoitny.CheckActive, NextRunAt: &now,
		Maintenance: normalizeWindows(in.Maintenance),
	}
	if err := s.validate(c, minDelay, true); err != nil {
		return nil, err
	}
	if err := s.Store.CreateCheck(ctx, c, maxChecks); err != nil {
		return nil, err
	}
	s.schedule(ctx, c)
	return c, nil
}

// validate checks a check's settings. checkURL is false when the URL did not
// change (a URL accepted before stays accepted).
func (s *Service) validate(c *algoitny.Check, minDelayMs int, checkURL bool) error {
	if err := algoitny.CheckText("url", c.URL); err != nil {
		return err
	}
	if err := algoitny.CheckText("keyword", c.Keyword); err != nil {
		return err
	}
	switch {
	case c.URL == "":
		return algoitny.Invalid("url", "url is required")
	case len(c.URL) > MaxURLLen:
		return algoitny.Invalid("url", "url must be at most %d characters", MaxURLLen)
	}
	if checkURL {
		if s.URLs == nil {
			return algoitny.Internal(nil, "URL checks are not configured")
		}
		if err := s.URLs.CheckURL(c.URL); err != nil {
			if algoitny.IsCode(err, algoitny.EINVALID) {
				return err
			}
			return algoitny.Invalid("url", "only public http(s) addresses can be watched")
		}
	}
	t, err := algoitny.ParseCheckType(string(c.Type))
	if err != nil {
		return err
	}
	c.Type = t
	switch {
	case t == algoitny.CheckKeyword && c.Keyword == "":
		return algoitny.Invalid("keyword", "a KEYWORD check needs a keyword")
	case t == algoitny.CheckAvailability && c.Keyword != "":
		return algoitny.Invalid("keyword", "an AVAILABILITY check takes no keyword")
	case t == algoitny.CheckAvailability && c.Invert:
		return algoitny.Invalid("invert", "only KEYWORD checks can be inverted")
	case utf8.RuneCountInString(c.Keyword) > MaxKeywordLen:
		return algoitny.Invalid("keyword", "keyword must be at most %d characters", MaxKeywordLen)
	case !utf8.ValidString(c.Keyword):
		return algoitny.Invalid("keyword", "keyword must be valid UTF-8")
	case c.DelayMs < minDelayMs:
		return algoitny.Invalid("delayMs", "delayMs must be at least %d for your plan", minDelayMs)
	case c.DelayMs > MaxDelayMs:
		return algoitny.Invalid("delayMs", "delayMs must be at most %d (one day)", MaxDelayMs)
	}
	return validateWindows(c.Maintenance)
}

// validateWindows refuses more than MaxMaintenanceWindows windows and any
// that does not end after it starts (EINVALID naming maintenanceWindows).
func validateWindows(ws []algoitny.MaintenanceWindow) error {
	if len(ws) > MaxMaintenanceWindows {
		return algoitny.Invalid("maintenanceWindows", "at most %d maintenance windows", MaxMaintenanceWindows)
	}
	for _, w := range ws {
		if !w.End.After(w.Start) {
			return algoitny.Invalid("maintenanceWindows", "a maintenance window must end after it starts")
		}
	}
	return nil
}

// normalizeWindows returns ws in UTC at millisecond precision (as stored),
// sorted by start; nil for none.
func normalizeWindows(ws []algoitny.MaintenanceWindow) []algoitny.MaintenanceWindow {
	if len(ws) == 0 {
		return nil
	}
	out := make([]algoitny.MaintenanceWindow, len(ws))
	for i, w := range ws {
		out[i] = algoitny.MaintenanceWindow{Start: w.Start.UTC().Truncate(time.Millisecond), End: w.End.UTC().Truncate(time.Millisecond)}
	}
	slices.SortFunc(out, func(a, b algoitny.MaintenanceWindow) int { return a.Start.Compare(b.Start) })
	return out
}

// schedule asks the scheduler to run an ACTIVE check from its NextRunAt. A
// failure is logged only: the check is stored, and the scheduler's sweep
// picks up ACTIVE checks whose runs are overdue.
func (s *Service) schedule(ctx context.Context, c *algoitny.Check) {
	if s.Scheduler == nil || c.Status != algoitny.CheckActive {
		return
	}
	if err := s.Scheduler.Schedule(context.WithoutCancel(ctx), c); err != nil && s.Logger != nil {
		s.Logger.WarnContext(ctx, "schedule check; the sweep will", "check", c.ID, "err", err)
	}
}

// Get returns a check the actor may see. It returns EUNAUTHENTICATED and
// ENOTFOUND (also for other users' checks).
func (s *Service) Get(ctx context.Context, id string) (*algoitny.Check, error) {
	a := algoitny.ActorFrom(ctx)
	if err := a.RequireUser(); err != nil {
		return nil, err
	}
	c, err := s.Store.GetCheck(ctx, id)
	if err != nil {
		return nil, err
	}
	if !a.OwnsOrStaff(c.UserID) {
		return nil, notFound()
	}
	return c, nil
}

// maxUpdateAttempts bounds the read-modify-write retries of a change that
// races with runs recording their results.
const maxUpdateAttempts = 8

// change applies edit to the current state of a check the actor may see and
// stores it, retrying when a run recorded a result meanwhile. edit returns
// false when there is nothing to store. Changes are published.
func (s *Service) change(ctx context.Context, id string, edit func(c *algoitny.Check) (bool, error)) (*algoitny.Check, error) {
	c, err := s.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			if c, err = s.Store.GetCheck(ctx, id); err != nil {
				return nil, err
			}
		}
		changed, err := edit(c)
		if err != nil || !changed {
			return c, err
		}
		updated, err := s.Store.UpdateCheck(ctx, c)
		if algoitny.IsCode(err, algoitny.ECONFLICT) && attempt+1 < maxUpdateAttempts {
			continue
		}
		if err != nil {
			return nil, err
		}
		s.Events.Publish(ctx, &algoitny.CheckEvent{Check: updated})
		s.schedule(ctx, updated)
		return updated, nil
	}
}

// replan plans an ACTIVE check's next run: now, unless that would run it
// sooner than DelayMs after its last run (edits and resumes must not be a
// way around the minimum delay).
func (s *Service) replan(c *algoitny.Check) {
	next := s.now().UTC()
	if c.LastExecutedAt != nil {
		if earliest := c.LastExecutedAt.Add(c.Delay()); earliest.After(next) {
			next = earliest
		}
	}
	// Storage keeps milliseconds; round up so that the delay is never cut short.
	if r := next.Truncate(time.Millisecond); r.Before(next) {
		next = r.Add(time.Millisecond)
	}
	c.NextRunAt = &next
}

// Update changes the settings of a check the actor may see. A check whose
// URL, type, keyword or delay changed starts over: its failure count is
// reset and, when ACTIVE, it runs again as soon as its delay allows; new
// maintenance windows alone change nothing else. It returns
// EUNAUTHENTICATED, ENOTFOUND and EINVALID naming the field.
func (s *Service) Update(ctx context.Context, id string, in algoitny.CheckUpdate) (*algoitny.Check, error) {
	_, minDelay := s.limits(algoitny.ActorFrom(ctx))
	return s.change(ctx, id, func(c *algoitny.Check) (bool, error) {
		before := *c
		if in.URL != nil {
			c.URL = strings.TrimSpace(*in.URL)
		}
		if in.Type != nil {
			t, err := algoitny.ParseCheckType(string(*in.Type))
			if err != nil {
				return false, err
			}
			c.Type = t
			if t == algoitny.CheckAvailability && in.Keyword == nil {
				c.Keyword, c.Invert = "", false
			}
		}
		if in.Keyword != nil {
			c.Keyword = strings.TrimSpace(*in.Keyword)
		}
		if in.Invert != nil {
			c.Invert = *in.Invert
		}
		if in.DelayMs != nil {
			c.DelayMs = *in.DelayMs
		}
		windowsChanged := false
		if in.Maintenance != nil {
			ws := normalizeWindows(*in.Maintenance)
			windowsChanged = !slices.Equal(ws, c.Maintenance)
			c.Maintenance = ws
		}
		if c.URL == before.URL && c.Type == before.Type && c.Keyword == before.Keyword && c.Invert == before.Invert && c.DelayMs == before.DelayMs {
			// Only the windows (or nothing) changed: the check goes on as it was.
			if windowsChanged {
				if err := validateWindows(c.Maintenance); err != nil {
					return false, err
				}
			}
			return windowsChanged, nil
		}
		// A delay the check already had stays allowed (the plan may have changed since).
		floor := minDelay
		if c.DelayMs == before.DelayMs {
			floor = min(floor, before.DelayMs)
		}
		if err := s.validate(c, floor, c.URL != before.URL); err != nil {
			return false, err
		}
		c.ConsecutiveFailures = 0
		if c.Status == algoitny.CheckActive {
			s.replan(c)
		}
		return true, nil
	})
}

// Pause stops an ACTIVE check until Resume; pausing a check that is not
// ACTIVE changes nothing. A run in progress is dropped. It returns
// EUNAUTHENTICATED and ENOTFOUND.
func (s *Service) Pause(ctx context.Context, id string) (*algoitny.Check, error) {
	return s.change(ctx, id, func(c *algoitny.Check) (bool, error) {
		if c.Status != algoitny.CheckActive {
			return false, nil
		}
		c.Status, c.NextRunAt = algoitny.CheckPaused, nil
		return true, nil
	})
}

// Resume makes a PAUSED check (or a legacy FAILED one) ACTIVE again, with
// its failure count cleared (its state stays: a DOWN check reports UP at its
// first good run); it runs as soon as its delay allows. A delay below the
// actor's current minimum (the plan changed) is raised to it. Resuming an
// ACTIVE check changes nothing. It returns EUNAUTHENTICATED and ENOTFOUND.
func (s *Service) Resume(ctx context.Context, id string) (*algoitny.Check, error) {
	_, minDelay := s.limits(algoitny.ActorFrom(ctx))
	return s.change(ctx, id, func(c *algoitny.Check) (bool, error) {
		if c.Status == algoitny.CheckActive {
			return false, nil
		}
		c.Status, c.ConsecutiveFailures = algoitny.CheckActive, 0
		if c.State != algoitny.CheckStateDown {
			c.FailureReason = ""
		}
		c.DelayMs = max(c.DelayMs, minDelay)
		s.replan(c)
		return true, nil
	})
}

// Delete removes a check the actor may see, with its results; its schedule
// ends and its subscribers get a last event with Deleted set. It returns
// EUNAUTHENTICATED and ENOTFOUND.
func (s *Service) Delete(ctx context.Context, id string) error {
	if _, err := s.Get(ctx, id); err != nil {
		return err
	}
	c, err := s.Store.DeleteCheck(ctx, id)
	if err != nil {
		return err
	}
	s.Events.Publish(ctx, &algoitny.CheckEvent{Check: c, Deleted: true})
	return nil
}

// List pages through the signed-in user's checks, newest first. It returns
// EUNAUTHENTICATED and EINVALID for a bad page request.
func (s *Service) List(ctx context.Context, page algoitny.PageRequest) (algoitny.Page[*algoitny.Check], error) {
	a := algoitny.ActorFrom(ctx)
	if err := a.RequireUser(); err != nil {
		return algoitny.Page[*algoitny.Check]{}, err
	}
	return s.Store.ListUserChecks(ctx, a.UserID(), page)
}

// ListAll pages through everyone's checks of one type, optionally of one
// status (seed 002's Type-Status index), for staff. It returns
// EUNAUTHENTICATED, EFORBIDDEN for non-staff and EINVALID for a bad filter
// or page request.
func (s *Service) ListAll(ctx context.Context, f algoitny.CheckFilter, page algoitny.PageRequest) (algoitny.Page[*algoitny.Check], error) {
	if err := algoitny.ActorFrom(ctx).RequireStaff(); err != nil {
		return algoitny.Page[*algoitny.Check]{}, err
	}
	t, err := algoitny.ParseCheckType(string(f.Type))
	if err != nil {
		return algoitny.Page[*algoitny.Check]{}, err
	}
	f.Type = t
	if f.Status != nil {
		st, err := algoitny.ParseCheckStatus(string(*f.Status))
		if err != nil {
			return algoitny.Page[*algoitny.Check]{}, err
		}
		f.Status = &st
	}
	return s.Store.ListChecks(ctx, f, page)
}

// RecentResults returns up to limit of a check's results of the last
// ResultRetention, newest first (limit 0 means DefaultRecentResults). It
// returns EUNAUTHENTICATED, ENOTFOUND and EINVALID for a limit outside
// 0–DefaultResultsKept.
func (s *Service) RecentResults(ctx context.Context, id string, limit int) ([]*algoitny.CheckResult, error) {
	if limit < 0 || limit > DefaultResultsKept {
		return nil, algoitny.Invalid("limit", "limit must be between 1 and %d (0 for %d)", DefaultResultsKept, DefaultRecentResults)
	}
	if _, err := s.Get(ctx, id); err != nil {
		return nil, err
	}
	return s.Store.ListCheckResults(ctx, id, cmp.Or(limit, DefaultRecentResults))
}

// Subscribe follows a check the actor may see: the first event carries its
// current state (Result unset), then one event per recorded run (Result
// set) and per change, until the check is deleted (a last event with
// Deleted set), the subscriber falls behind or ctx ends; the channel is then
// closed. It returns EUNAUTHENTICATED and ENOTFOUND.
func (s *Service) Subscribe(ctx context.Context, id string) (<-chan *algoitny.CheckEvent, error) {
	if _, err := s.Get(ctx, id); err != nil {
		return nil, err
	}
	return s.Events.follow(ctx, id, func(ctx context.Context) (*algoitny.Check, error) { return s.Get(ctx, id) })
}

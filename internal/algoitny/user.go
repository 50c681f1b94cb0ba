package algoitny

import "time"

// User is an account. Users sign in with Google; the email is the primary key
// and the Google id is unique across users.
type User struct {
	ID       string
	Email    string
	Name     string
	Picture  string
	GoogleID string
	IsActive bool
	IsStaff  bool
	PlanID   string
	// PlanName is denormalized from the plan so that the plan can be loaded by key.
	PlanName  string
	CreatedAt time.Time
	UpdatedAt time.Time
	LastLogin *time.Time
}

// GoogleProfile is what a verified Google ID token says about its owner.
type GoogleProfile struct {
	GoogleID string
	Email    string
	Name     string
	Picture  string
}

// Plan is a subscription plan: its daily quotas and capabilities. A limit of
// -1 means unlimited. The name is the plan's key and cannot change.
type Plan struct {
	ID                  string
	Name                string
	Description         string
	MaxHintsPerDay      int
	MaxExecutionsPerDay int
	MaxProblems         int
	CanViewAllProblems  bool
	CanRegisterProblems bool
	PriceCents          int
	IsActive            bool
	// MaxChecks bounds the URL watches a user may have (-1 = unlimited), and
	// MinCheckDelayMs how often they may run.
	MaxChecks       int
	MinCheckDelayMs int
	// MaxCodeRunsPerDay bounds runCode, MaxCounterexamplesPerDay
	// findCounterexample (-1 = unlimited).
	MaxCodeRunsPerDay        int
	MaxCounterexamplesPerDay int
	CreatedAt                time.Time
	UpdatedAt                time.Time
}

// Unlimited is the value of a limit without a bound.
const Unlimited = -1

// DailyLimit returns the plan's daily limit for action (-1 = unlimited).
func (p *Plan) DailyLimit(action UsageAction) int {
	switch action {
	case ActionHint:
		return p.MaxHintsPerDay
	case ActionExecution:
		return p.MaxExecutionsPerDay
	case ActionCodeRun:
		return p.MaxCodeRunsPerDay
	case ActionCounterexample:
		return p.MaxCounterexamplesPerDay
	}
	return 0
}

// DefaultPlans are the plans `algoitny seed-plans` creates: Free (5 hints,
// 10 executions, 50 code runs and 3 counterexample searches a day), Pro
// (20/500/1000/50) and Admin (unlimited).
func DefaultPlans() []Plan {
	return []Plan{
		{Name: "Free", Description: "Free plan", MaxHintsPerDay: 5, MaxExecutionsPerDay: 10, MaxProblems: 0, CanViewAllProblems: false, CanRegisterProblems: false, IsActive: true,
			MaxChecks: 3, MinCheckDelayMs: 60_000, MaxCodeRunsPerDay: 50, MaxCounterexamplesPerDay: 3},
		{Name: "Pro", Description: "Professional plan", MaxHintsPerDay: 20, MaxExecutionsPerDay: 500, MaxProblems: 50, CanViewAllProblems: true, CanRegisterProblems: true, PriceCents: 999, IsActive: true,
			MaxChecks: 50, MinCheckDelayMs: 10_000, MaxCodeRunsPerDay: 1000, MaxCounterexamplesPerDay: 50},
		{Name: "Admin", Description: "Unlimited plan for staff", MaxHintsPerDay: Unlimited, MaxExecutionsPerDay: Unlimited, MaxProblems: Unlimited, CanViewAllProblems: true, CanRegisterProblems: true, IsActive: true,
			MaxChecks: Unlimited, MinCheckDelayMs: 1_000, MaxCodeRunsPerDay: Unlimited, MaxCounterexamplesPerDay: Unlimited},
	}
}

// DefaultPlanName is the plan new users get.
const DefaultPlanName = "Free"

// PlanUpdate changes some fields of a plan; nil fields are left alone.
type PlanUpdate struct {
	Description         *string
	MaxHintsPerDay      *int
	MaxExecutionsPerDay *int
	MaxProblems         *int
	CanViewAllProblems  *bool
	CanRegisterProblems *bool
	PriceCents          *int
	IsActive            *bool
	MaxChecks           *int
	MinCheckDelayMs     *int
	// MaxCodeRunsPerDay and MaxCounterexamplesPerDay: see Plan.
	MaxCodeRunsPerDay        *int
	MaxCounterexamplesPerDay *int
}

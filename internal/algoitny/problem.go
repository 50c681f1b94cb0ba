package algoitny

import "time"

// Problem is an algorithm problem from a judge, identified by its platform and
// the platform's own problem id ("baekjoon", "1000"). A problem is a draft
// until its test cases are produced; only completed problems are visible to
// everyone. Deleting a problem is soft: it leaves every list but stays
// readable by key (an audit trail, and history items keep pointing at it).
type Problem struct {
	Platform  Platform
	ProblemID string
	// InternalID is a stable UUID, kept from the seed's relational id.
	InternalID   string
	Title        string
	ProblemURL   string
	Tags         []string
	SolutionCode string
	Language     Language
	Constraints  string
	// Statement is the problem's statement as plain text (description,
	// input and output sections), as extraction read it from the judge's
	// page; "" for problems registered by hand.
	Statement string
	// Checker says how outputs are compared; the zero value is the default
	// line comparison.
	Checker       Checker
	TimeLimitMs   int
	MemoryLimitMB int
	IsCompleted   bool
	IsDeleted     bool
	DeletedAt     *time.Time
	DeletedReason string
	TestCaseCount int
	// Review state (seed 003): extracted or generated problems need a staff
	// review before they are trusted.
	NeedsReview     bool
	ReviewNotes     string
	VerifiedByAdmin bool
	ReviewedAt      *time.Time
	// CreatedBy is the id of the user who registered the problem ("" for seeded ones).
	CreatedBy string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ProblemRef identifies a problem.
type ProblemRef struct {
	Platform  Platform
	ProblemID string
}

// Ref returns the problem's identity.
func (p *Problem) Ref() ProblemRef { return ProblemRef{Platform: p.Platform, ProblemID: p.ProblemID} }

// IsPublished says whether everyone may see p: completed and not deleted.
// Only executions of a published problem may be public: a public
// execution shows its problem's title and each test's output, which for a
// draft would publish what only its author (and some plans) may see.
func (p *Problem) IsPublished() bool { return p.IsCompleted && !p.IsDeleted }

// CheckerKind names an output comparison (testlib's standard checkers).
type CheckerKind string

// The checker kinds.
const (
	CheckerLines  CheckerKind = "lines"  // default: ignore trailing spaces and trailing blank lines
	CheckerTokens CheckerKind = "tokens" // any whitespace separates tokens
	CheckerExact  CheckerKind = "exact"
	CheckerFloat  CheckerKind = "float" // numbers within an absolute or relative epsilon
	CheckerYesNo  CheckerKind = "yesno" // case-insensitive yes/no
	CheckerCustom CheckerKind = "custom"
)

// Checker configures the comparison of a program's output with the expected one.
type Checker struct {
	Kind     CheckerKind
	Epsilon  float64
	Code     string   // custom checker source
	Language Language // custom checker language
}

// ProblemFilter selects problems in a list. At most one of Platform and
// Language narrows the index that is queried; the rest are applied as filters.
type ProblemFilter struct {
	Platform *Platform
	Language *Language
	// Completed selects completed problems (true) or drafts (false); nil means
	// completed ones.
	Completed *bool
	// TitleContains matches titles case-insensitively.
	TitleContains string
	// NeedsReview selects problems by review state (staff).
	NeedsReview *bool
	// CreatedBy keeps only the problems this user registered (the service
	// sets it when a user may list only their own drafts).
	CreatedBy string
}

// ProblemReview is a staff review of a problem.
type ProblemReview struct {
	Verified bool
	Notes    string
}

// ProblemUpdate changes some fields of a problem; nil fields are left alone.
type ProblemUpdate struct {
	Title         *string
	ProblemURL    *string
	Tags          *[]string
	SolutionCode  *string
	Language      *Language
	Constraints   *string
	Checker       *Checker
	TimeLimitMs   *int
	MemoryLimitMB *int
	IsCompleted   *bool
	// Unreviewed undoes a staff review (the problem needs one again and is
	// no longer verified): its author changed what was reviewed.
	Unreviewed bool
}

// TestCase is one input/expected-output pair of a problem. Inputs and outputs
// may be several megabytes; storage takes care of DynamoDB's item size limit.
type TestCase struct {
	Platform  Platform
	ProblemID string
	ID        string
	Input     string
	Output    string
	// Generator and Seed record how a generated test was produced so that it
	// can be regenerated deterministically ("" and 0 for hand-written tests).
	Generator string
	Seed      int64
	CreatedAt time.Time
	// InputSize and OutputSize are the bytes of the whole input and output.
	// Truncated says that Input and Output hold only their beginnings: a
	// list of test cases is read as previews, a test case alone in full.
	InputSize, OutputSize int
	Truncated             bool
}

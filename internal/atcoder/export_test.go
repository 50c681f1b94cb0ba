package atcoder

// Internals exercised directly by the tests of package atcoder_test.
var (
	ParseRetryAfter = parseRetryAfter
	Advance         = advance
	ADTMonthsOf     = adtMonthsOf
)

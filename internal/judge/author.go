package judge

import (
	"fmt"
	"strings"
)

// A problem author's programs — a custom checker, an interactor — are the
// judge's side of a test: when one of them fails, the test is a judge
// failure (INTERNAL_ERROR) whose message names the program, never a verdict
// on the contestant's program. They run under limits derived from the
// test's (Engine.authorLimits), so that one that hangs or spins costs about
// what the test may cost.

// authorFailure describes how an author's program (program names it:
// "checker", "interactor") failed to end on its own — stopped at a limit,
// killed by a signal, never started — with what it printed (comment), and
// reports whether it did. A program that exited by itself, whatever its
// status, did not fail in this sense: its status is read as testlib's.
func authorFailure(program string, rr RunResult, comment string) (string, bool) {
	var msg string
	switch {
	case rr.Verdict == TimeLimitExceeded:
		msg = fmt.Sprintf("%s exceeded its time limit: %s", program, rr.Message)
	case rr.Verdict == InternalError:
		msg = fmt.Sprintf("%s could not run: %s", program, rr.Message)
	case rr.Signal == "" && rr.ExitCode >= 0:
		return "", false
	case rr.Verdict == MemoryLimitExceeded:
		msg = fmt.Sprintf("%s exceeded its memory limit: %s", program, rr.Message)
	case rr.Verdict == OutputLimitExceeded:
		msg = fmt.Sprintf("%s exceeded its output limit: %s", program, rr.Message)
	case rr.Signal != "":
		msg = fmt.Sprintf("%s was killed by %s", program, rr.Signal)
	default:
		msg = fmt.Sprintf("%s failed: %s", program, rr.Message)
	}
	if comment = strings.TrimSpace(comment); comment != "" {
		msg += ": " + comment
	}
	return truncate(msg, previewMax), true
}

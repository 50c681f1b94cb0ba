package judge

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/algoitny/api/internal/judge/sandbox"
)

// The checker kinds of the ICPC problem package format.
const (
	// CheckDefaultValidator is the format's default output validator; its
	// flags are each test's CheckerArgs (DefaultValidator).
	CheckDefaultValidator CheckerKind = "icpc_default"
	// CheckICPC runs an output validator program the format's way:
	// `validator input answer feedback_dir/ [args] < output`, where args
	// are the test's CheckerArgs. Exit code 42 is ACCEPTED and 43
	// WRONG_ANSWER; anything else (0 included) is the validator failing,
	// INTERNAL_ERROR. judgemessage.txt in the feedback directory becomes
	// the test's message; score_multiplier.txt (in [0, 1]) its Points and
	// score.txt its Score.
	CheckICPC CheckerKind = "icpc"
)

// InteractionProtocol is how an interactor is run and read.
type InteractionProtocol string

// The interaction protocols.
const (
	// InteractTestlib runs the interactor as testlib does: `interactor
	// input output answer`, its exit code as testlib's (0 OK, 1 WA, 2 PE,
	// 3 FAIL, 7 points).
	InteractTestlib InteractionProtocol = ""
	// InteractICPC runs an ICPC interactive output validator: `validator
	// input answer feedback_dir/ [args]`, the solution's output on its
	// standard input and its standard output to the solution; 42 accepted,
	// 43 wrong answer, anything else its failure.
	InteractICPC InteractionProtocol = "icpc"
)

// The ICPC output validator's exit codes.
const (
	icpcAccepted    = 42
	icpcWrongAnswer = 43
)

// feedbackDir is where an ICPC validator's feedback directory is mounted.
const feedbackDir = "/feedback"

// feedbackMax bounds each feedback file the engine reads.
const feedbackMax = 64 << 10

// feedback is what an ICPC validator left in its feedback directory.
type feedback struct {
	judgeMessage, teamMessage string
	score, multiplier         *float64
	err                       string // a malformed score file
}

// newFeedbackDir makes a feedback directory the sandboxed validator can
// write to (every run has a directory of its own, reached only through
// its mount).
func (e *Engine) newFeedbackDir() (string, error) {
	dir, err := os.MkdirTemp(e.sb.WorkDir(), "feedback-")
	if err != nil {
		return "", err
	}
	return dir, os.Chmod(dir, 0o777)
}

// readFeedback reads the feedback files, never following a link the
// validator may have made in their place, at most feedbackMax bytes each.
func readFeedback(dir string) feedback {
	var fb feedback
	read := func(name string) (string, bool) {
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
		if err != nil {
			return "", false
		}
		defer f.Close()
		if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
			return "", false
		}
		b, _ := io.ReadAll(io.LimitReader(f, feedbackMax))
		return string(b), true
	}
	fb.judgeMessage, _ = read("judgemessage.txt")
	fb.teamMessage, _ = read("teammessage.txt")
	for _, f := range []struct {
		name string
		dst  **float64
	}{{"score.txt", &fb.score}, {"score_multiplier.txt", &fb.multiplier}} {
		text, ok := read(f.name)
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
		if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) || (f.name == "score_multiplier.txt" && v > 1) {
			fb.err = fmt.Sprintf("%s does not hold a valid score: %q", f.name, truncate(strings.TrimSpace(text), 80))
			continue
		}
		*f.dst = &v
	}
	return fb
}

// icpcArgs are an ICPC validator's arguments: the input, the answer, the
// feedback directory (with its trailing slash) and the test's own.
func icpcArgs(args []string, tc TestCase) []string {
	out := append([]string{"{check}/input.txt", "{check}/answer.txt", "{feedback}/"}, args...)
	return append(out, tc.CheckerArgs...)
}

// runICPCChecker runs an ICPC output validator on the output saved in
// hostDir (output.txt), with the test's input and answer beside it and
// fbDir as its feedback directory.
func (e *Engine) runICPCChecker(ctx context.Context, c Checker, test Limits, tc TestCase, hostDir, fbDir string) (checkerOutcome, error) {
	if err := writeTestFiles(tc, hostDir); err != nil {
		return checkerOutcome{verdict: InternalError}, err
	}
	output, err := os.Open(filepath.Join(hostDir, "output.txt"))
	if err != nil {
		return checkerOutcome{verdict: InternalError}, err
	}
	defer output.Close()
	if test, err = test.withDefaults(DefaultLimits()); err != nil {
		return checkerOutcome{verdict: InternalError}, err
	}
	mounts, vars := e.icpcMounts(hostDir, fbDir)
	var out strings.Builder
	rr, err := c.Program.run(ctx, RunOptions{Args: icpcArgs(c.Args, tc), Stdin: output, Stdout: &cappedWriter{b: &out, n: previewMax},
		Limits: e.authorLimits(test)}, true, mounts, vars)
	if err != nil {
		return checkerOutcome{verdict: InternalError}, err
	}
	if msg, failed := authorFailure("output validator", rr, truncate(strings.TrimSpace(rr.Stderr), previewMax)); failed {
		return checkerOutcome{verdict: InternalError, message: msg}, nil
	}
	return interpretICPC(rr, readFeedback(fbDir), "output validator"), nil
}

// icpcMounts are the mounts of an ICPC validator's run: the test's files
// read-only, its feedback directory writable; and the paths its arguments
// name them by.
func (e *Engine) icpcMounts(hostDir, fbDir string) ([]sandbox.Mount, map[string]string) {
	vars := map[string]string{"check": hostDir, "feedback": fbDir}
	if e.sb.Sandboxed() {
		vars = map[string]string{"check": sandbox.CheckDir, "feedback": feedbackDir}
	}
	return []sandbox.Mount{{Src: hostDir, Dst: sandbox.CheckDir}, {Src: fbDir, Dst: feedbackDir, RW: true}}, vars
}

// interpretICPC maps an ICPC validator's exit code (what names it in
// messages) to a verdict: 42 ACCEPTED (with its score files), 43
// WRONG_ANSWER, anything else the validator failing.
func interpretICPC(rr RunResult, fb feedback, what string) checkerOutcome {
	msg := strings.TrimSpace(fb.judgeMessage)
	if msg == "" {
		msg = strings.TrimSpace(fb.teamMessage)
	}
	msg = truncate(msg, previewMax)
	switch {
	case rr.Signal != "" || rr.Verdict == TimeLimitExceeded || rr.Verdict == MemoryLimitExceeded:
		return checkerOutcome{verdict: InternalError, message: fmt.Sprintf("%s failed (%s: %s): %s", what, rr.Verdict, rr.Message, msg)}
	case fb.err != "":
		return checkerOutcome{verdict: InternalError, message: fmt.Sprintf("%s failed: %s", what, fb.err)}
	case rr.ExitCode == icpcAccepted:
		return checkerOutcome{verdict: Accepted, message: msg, points: fb.multiplier, score: fb.score}
	case rr.ExitCode == icpcWrongAnswer:
		if fb.score != nil || fb.multiplier != nil {
			return checkerOutcome{verdict: InternalError, message: what + " failed: a score for a rejected output"}
		}
		return checkerOutcome{verdict: WrongAnswer, message: msg}
	}
	return checkerOutcome{verdict: InternalError, message: fmt.Sprintf("%s failed (exit code %d, expected 42 or 43): %s",
		what, rr.ExitCode, firstLine(strings.TrimSpace(msg+"\n"+rr.Stderr)))}
}

// comparer is the built-in comparison of a test's output: the checker's
// own, or the default validator with the test's flags.
func (c Checker) comparer(tc TestCase) (func(expected, actual io.Reader) (bool, string, error), error) {
	if c.Kind != CheckDefaultValidator {
		return c.Compare, nil
	}
	v, err := ParseDefaultValidator(append(append([]string{}, c.Args...), tc.CheckerArgs...))
	if err != nil {
		return nil, err
	}
	return v.Compare, nil
}

// runsProgram says the checker is a program (testlib's or ICPC's).
func (c Checker) runsProgram() bool { return c.Kind == CheckCustom || c.Kind == CheckICPC }

// interactorArgs are the interactor's arguments and extra mounts for its
// protocol.
// A testlib interactor writes its output file (testlib's tout) to fbDir,
// where the engine finds it for a checker (checkInteraction); with fbDir ""
// (no checker reads it) to its working directory, so that it may run in a
// held sandbox, which takes no writable mount.
func (e *Engine) interactorArgs(it *Interactor, tc TestCase, hostDir, fbDir string) ([]string, []sandbox.Mount, map[string]string) {
	if it.Protocol == InteractICPC || fbDir != "" {
		mounts, vars := e.icpcMounts(hostDir, fbDir)
		if it.Protocol == InteractICPC {
			return icpcArgs(it.Args, tc), mounts, vars
		}
		return []string{"{check}/input.txt", "{feedback}/" + interactorOutput, "{check}/answer.txt"}, mounts, vars
	}
	inBox := hostDir
	if e.sb.Sandboxed() {
		inBox = sandbox.CheckDir
	}
	return []string{"{check}/input.txt", interactorOutput, "{check}/answer.txt"},
		[]sandbox.Mount{{Src: hostDir, Dst: sandbox.CheckDir}}, map[string]string{"check": inBox}
}

// interactorOutput is the name of a testlib interactor's output file in
// its feedback directory.
const interactorOutput = "output.txt"

// asTestlib restates an ICPC interactor's outcome in testlib's exit codes
// (42 → 0, 43 → 1, anything else 3), its feedback as its message, so the
// interaction is judged by one set of rules.
func asTestlib(rr RunResult, fb feedback) RunResult {
	msg := strings.TrimSpace(fb.judgeMessage + "\n" + rr.Stderr)
	switch {
	case rr.Signal != "" || rr.ExitCode < 0:
	case fb.err != "":
		rr.ExitCode, msg = exitFail, fb.err
	case rr.ExitCode == icpcAccepted:
		rr.ExitCode = exitOK
		if fb.multiplier != nil {
			rr.ExitCode, msg = exitPoints, "points "+strconv.FormatFloat(*fb.multiplier, 'f', -1, 64)+" "+msg
		}
	case rr.ExitCode == icpcWrongAnswer:
		rr.ExitCode = exitWrongAnswer
	default:
		msg = fmt.Sprintf("exit code %d, expected 42 or 43: %s", rr.ExitCode, msg)
		rr.ExitCode = exitFail
	}
	rr.Stderr = msg
	return rr
}

package judge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/algoitny/api/internal/judge/sandbox"
)

// Interactor makes a Submission interactive: for each test the solution and
// the interactor run at the same time, each in a sandbox of its own with its
// own limits, the solution's standard output piped to the interactor's
// standard input and the interactor's standard output to the solution's
// standard input. It is run the testlib way, as `interactor input output
// answer`: the test's input and expected output (the answer, often empty)
// read-only, and a file of its own to write its result to, which a custom
// Submission.Checker judges when the interactor accepts, as Polygon does
// (unused without one). Its exit status is the verdict, as testlib's: 0 accepted, 1 wrong
// answer, 2 presentation error and 8 unexpected end of the solution's output
// (both WRONG_ANSWER), 7 points (TestResult.Points), 3 or any other outcome
// the interactor failing (INTERNAL_ERROR naming the interactor, never the
// contestant's fault). What it writes to standard error becomes the test's
// message.
//
// Who is to blame when the two wait for each other: the solution, stopped
// at its wall time while it was waiting, ends its output; an interactor
// that was waiting for that output ends too (end of file: testlib's
// unexpected EOF), and the solution did not answer (TIME_LIMIT_EXCEEDED).
// An interactor that does not end then — asleep, spinning, waiting for
// something else — was not waiting for the solution, and is stopped at
// its own limits: "interactor exceeded its time limit", a judge failure.
type Interactor struct {
	// Language and Source are the interactor's program, compiled once per
	// Judge call.
	Language, Source string
	// Program is an interactor compiled beforehand with Engine.Compile; it
	// takes precedence over Language/Source. Judge does not close it.
	Program *Program
	// Limits bound the interactor, per test; zero fields are derived from
	// the test's limits as a checker's are (Config.CheckerLimits: the
	// test's CPU time, at least one second). Its wall time is raised past
	// the solution's, so that a solution that stops answering is the one
	// stopped (its wall time is the idleness limit).
	Limits Limits
	// Protocol is how it is run: testlib's (the default) or as an ICPC
	// interactive output validator (InteractICPC).
	Protocol InteractionProtocol
	// Args are an ICPC interactor's arguments after its three standard
	// ones, before the test's own CheckerArgs.
	Args []string
	// Files are further source files it compiles with (headers), by name.
	Files map[string][]byte
	// Points is how a testlib interactor's points (quitp, exit 7) are
	// read, as a checker's (Checker.Points). An ICPC interactor's score
	// multiplier is a fraction whatever it says.
	Points PointsScale
	// Passes makes an ICPC interactive problem multi-pass, as
	// Checker.Passes: while the validator accepts and leaves nextpass.in,
	// the two programs talk again, that file the validator's input file
	// now (its feedback directory kept), at most Passes times in all.
	Passes int
}

// interactorGrace is how long the solution may still run once the
// interactor has ended: long enough to exit after reading the end of its
// input, short enough that a solution ignoring it does not hold two slots.
const interactorGrace = time.Second

// errSolutionEnded and errInteractorEnded end the pipe from a finished
// program, so the other one's output is drained instead of blocking.
var (
	errSolutionEnded   = errors.New("the solution has ended")
	errInteractorEnded = errors.New("the interactor has ended")
)

// validate checks that the interactor has a program or a source.
func (it *Interactor) validate() error {
	if err := it.Points.validate(); err != nil {
		return err
	}
	if it.Program == nil && (it.Language == "" || it.Source == "") {
		return fmt.Errorf("%w: an interactor needs a Program or Language and Source", ErrInvalidInput)
	}
	if _, err := it.Limits.withDefaults(DefaultCheckerLimits()); err != nil {
		return err
	}
	if it.Passes < 0 || it.Passes > maxPasses {
		return fmt.Errorf("%w: passes %d: at most %d", ErrInvalidInput, it.Passes, maxPasses)
	}
	return nil
}

// compileInteractor compiles an interactor's source; one that does not
// compile is ErrInvalidInput.
func (e *Engine) compileInteractor(ctx context.Context, it Interactor) (*Program, error) {
	p, err := e.CompileAuthor(ctx, it.Language, "", it.Source, it.Files) // a C++ interactor may include testlib.h
	if err != nil {
		var ce *CompileError
		if errors.As(err, &ce) {
			return nil, fmt.Errorf("%w: the interactor does not compile: %s", ErrInvalidInput, ce.Output)
		}
		return nil, fmt.Errorf("interactor: %w", err)
	}
	return p, nil
}

// slotFor returns held when the caller already holds a slot (and a release
// that leaves it to the caller), else waits for one.
func (e *Engine) slotFor(ctx context.Context, held *sandbox.Slot) (*sandbox.Slot, func(), error) {
	if held != nil {
		return held, func() {}, nil
	}
	return e.acquireSlot(ctx)
}

// acquirePair takes two slots for one interactive test: the solution's, a
// worker slot, and the interactor's, another worker slot or, on an engine
// of one worker, the partner slot (Config.Workers). So any engine judges
// interactive problems, and one of several workers runs as many pairs at
// once as its worker slots allow, without deadlock (sandbox.AcquirePair).
func (e *Engine) acquirePair(ctx context.Context) (sol, it *sandbox.Slot, release func(), err error) {
	return e.sb.AcquirePair(ctx)
}

// interaction is what happened in one interactive test.
type interaction struct {
	sol, it RunResult
	solErr  error
	itErr   error
	// stopped: the solution was still running interactorGrace after the
	// interactor ended, and was killed.
	stopped bool
	// solFirst: the solution ended before the interactor. A solution that
	// fails after the interactor ended may have failed because its input
	// ended.
	solFirst bool
}

// runInteractiveTest runs test i with the interactor and judges it. The
// error is only for a cancelled context; every other failure is an
// INTERNAL_ERROR result.
func (e *Engine) runInteractiveTest(ctx context.Context, prog *Program, checker Checker, sub Submission, i int) (TestResult, error) {
	tc := sub.Tests[i]
	tr := TestResult{Index: i, TestID: tc.ID}
	if tr.TestID == "" {
		tr.TestID = strconv.Itoa(i + 1)
	}
	if sub.Interactor.Protocol == InteractICPC && sub.Interactor.Passes > 1 {
		return e.runPasses(tr, sub.Interactor.Passes, tc, func(tc TestCase, fbDir string) (TestResult, error) {
			return e.interactPass(ctx, prog, checker, sub, tc, tr, fbDir)
		})
	}
	fbDir, err := e.newFeedbackDir()
	if err != nil {
		return tr.internal("%v", err)
	}
	defer sandbox.RemoveAll(fbDir)
	return e.interactPass(ctx, prog, checker, sub, tc, tr, fbDir)
}

// interactPass runs the solution and the interactor on tc once, the
// interactor's feedback directory fbDir: tr with the outcome. A testlib
// interactor that accepts hands its output file to a custom checker when
// there is one (checkInteraction). The error is only ctx's.
func (e *Engine) interactPass(ctx context.Context, prog *Program, checker Checker, sub Submission, tc TestCase, tr TestResult, fbDir string) (TestResult, error) {
	hostDir, err := e.newCheckDir()
	if err != nil {
		return tr.internal("%v", err)
	}
	defer sandbox.RemoveAll(hostDir)
	if err := writeTestFiles(tc, hostDir); err != nil {
		return tr.internal("%v", err)
	}
	preview := &cappedWriter{b: &strings.Builder{}, n: previewMax}
	checked := checker.Kind == CheckCustom && sub.Interactor.Protocol == InteractTestlib
	itDir := fbDir
	if sub.Interactor.Protocol == InteractTestlib && !checked {
		itDir = "" // its output file is not read
	}
	in, err := e.interact(ctx, prog, sub, tc, hostDir, itDir, preview)
	if err != nil {
		return tr, err
	}
	var fb feedback
	reading := pointsReading{sub.Interactor.Points, tc.Points}
	if sub.Interactor.Protocol == InteractICPC {
		reading = pointsReading{} // the score multiplier, a fraction
	}
	if sub.Interactor.Protocol == InteractICPC && in.itErr == nil {
		fb = readFeedback(fbDir)
		in.it = asTestlib(in.it, fb)
	}
	tr.CPUTime, tr.WallTime, tr.MemoryBytes = in.sol.CPUTime, in.sol.WallTime, in.sol.MemoryBytes
	tr.ExitCode, tr.Signal = in.sol.ExitCode, in.sol.Signal
	tr.Output, tr.Stderr = truncate(preview.b.String(), previewMax), truncate(in.sol.Stderr, previewMax)
	switch {
	case in.itErr != nil:
		return tr.internal("interactor: %v", in.itErr)
	case in.solErr != nil:
		return tr.internal("%v", in.solErr)
	}
	tr.Verdict, tr.Message, tr.Points = in.verdict(reading)
	if tr.Verdict == Accepted {
		tr.Score = fb.score
	}
	if checked && tr.Verdict == Accepted && tr.Points == nil {
		return e.checkInteraction(ctx, tr, checker, sub.Limits, tc, fbDir)
	}
	return tr, nil
}

// checkInteraction has the custom checker judge what a testlib
// interactor that accepted wrote to its output file, as Polygon judges an
// interactive problem: `checker input interactor_output answer`. The
// interactor may leave the answer's checking to the checker. The error is
// only ctx's.
func (e *Engine) checkInteraction(ctx context.Context, tr TestResult, checker Checker, limits Limits, tc TestCase, fbDir string) (TestResult, error) {
	hostDir, err := e.newCheckDir()
	if err != nil {
		return tr.internal("checker: %v", err)
	}
	defer sandbox.RemoveAll(hostDir)
	out, err := os.OpenFile(filepath.Join(fbDir, interactorOutput), os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return tr.internal("interactor failed: it left no output file for the checker (%v)", err)
	}
	defer out.Close()
	if st, err := out.Stat(); err != nil || !st.Mode().IsRegular() {
		return tr.internal("interactor failed: its output file is not a regular file")
	}
	if err := writeNew(filepath.Join(hostDir, "output.txt"), out); err != nil {
		return tr.internal("checker: %v", err)
	}
	co, err := e.runChecker(ctx, checker.Program, limits, tc, hostDir, pointsReading{checker.Points, tc.Points})
	if err != nil {
		if ctx.Err() != nil {
			return tr, ctx.Err()
		}
		return tr.internal("checker: %v", err)
	}
	tr.Verdict, tr.Message, tr.Points = co.verdict, co.message, co.points
	return tr, nil
}

// interact runs the solution and the interactor of one test connected to
// each other, on two slots taken together (acquirePair), and kills the
// solution when it outlives the interactor by interactorGrace. The error
// is only ctx's.
func (e *Engine) interact(ctx context.Context, prog *Program, sub Submission, tc TestCase, hostDir, fbDir string, preview io.Writer) (interaction, error) {
	var in interaction
	solSlot, itSlot, release, err := e.acquirePair(ctx)
	if err != nil {
		return in, err
	}
	defer release()
	toIt, solOut := io.Pipe() // the solution's output, the interactor's input
	toSol, itOut := io.Pipe() // the interactor's output, the solution's input
	solCtx, stopSol := context.WithCancel(ctx)
	defer stopSol()
	solEnded, solDone := make(chan struct{}), make(chan struct{})
	itEnded := make(chan struct{})
	var solOutEarly atomic.Bool
	go func() {
		defer close(solDone)
		in.sol, in.solErr = prog.Run(solCtx, RunOptions{Stdin: toSol, Stdout: io.MultiWriter(preview, solOut),
			Limits: sub.Limits, slot: solSlot, stdoutEnd: endOutput(solOut, solEnded, &solOutEarly)})
		close(solEnded)                        // before the interactor reads EOF
		_ = solOut.Close()                     // the interactor reads EOF
		toSol.CloseWithError(errSolutionEnded) // the interactor's writes drain
	}()
	in.it, in.itErr = e.runInteractor(ctx, prog, sub, tc, hostDir, fbDir, toIt, itOut, itSlot, endOutput(itOut, itEnded, new(atomic.Bool)))
	close(itEnded)
	select {
	case <-solEnded:
		in.solFirst = true
	default:
	}
	_ = itOut.Close()                       // the solution reads EOF
	toIt.CloseWithError(errInteractorEnded) // the solution's writes drain
	select {
	case <-solDone:
	case <-time.After(interactorGrace):
		stopSol()
		<-solDone
	}
	// Which program ended first, by the supervisors' clock (endOutput's
	// grace may have passed before a dying solution's run returned). A
	// solution whose supervisor did not report (killed with its sandbox)
	// and whose output's end was passed on before its run returned ended
	// first: the interactor then only saw that end.
	switch {
	case in.sol.exitedAt != 0 && in.it.exitedAt != 0:
		in.solFirst = in.sol.exitedAt < in.it.exitedAt
	case in.sol.exitedAt == 0 && solOutEarly.Load():
		in.solFirst = true
	}
	if ctx.Err() != nil {
		return in, ctx.Err()
	}
	if in.solErr != nil && solCtx.Err() != nil {
		in.stopped, in.solErr = true, nil
	}
	return in, nil
}

// outputEndGrace is how long a program whose output has ended must go on
// running before the other program of an interactive test reads the end
// of it (endOutput).
const outputEndGrace = 200 * time.Millisecond

// endOutput is the stdoutEnd of a program of an interactive test whose
// output w carries to the other program: the other reads the end of it
// when the program's run has returned (ended is closed; the caller closes
// w then) or, if the program is still running outputEndGrace after its
// output ended, at that moment. So a program that closes its output and
// waits for the other's (Kattis' interactive protocol) is not deadlocked
// until its time limit, while a program's output that ends because it
// died reaches the other only after its death is known: which program
// ended first (solFirst) decides whose failure the verdict names.
// early is set when the grace passed first.
func endOutput(w *io.PipeWriter, ended <-chan struct{}, early *atomic.Bool) func() {
	return func() {
		go func() {
			t := time.NewTimer(outputEndGrace)
			defer t.Stop()
			select {
			case <-ended:
			case <-t.C:
				early.Store(true)
				_ = w.Close()
			}
		}()
	}
}

// runInteractor runs the interactor of sub on the test files in hostDir,
// reading stdin and writing stdout, under limits derived from the test's
// (Engine.authorLimits; Interactor.Limits' fields where set), its wall
// time past the solution's.
func (e *Engine) runInteractor(ctx context.Context, prog *Program, sub Submission, tc TestCase, hostDir, fbDir string, stdin io.Reader, stdout io.Writer, s *sandbox.Slot, stdoutEnd func()) (RunResult, error) {
	solLim, err := sub.Limits.withDefaults(DefaultLimits())
	if err != nil {
		return RunResult{}, err
	}
	lim, err := sub.Interactor.Limits.withDefaults(e.authorLimits(solLim))
	if err != nil {
		return RunResult{}, err
	}
	if sub.Interactor.Limits.OutputBytes == 0 {
		// An interactor's standard output is the solution's input, as
		// large as a test's input may be, not a checker's verdict.
		lim.OutputBytes = max(lim.OutputBytes, DefaultLimits().OutputBytes)
	}
	solWall := solLim.effective(prog.lang).Wall
	// Past the solution's by a margin that a loaded machine's scheduling
	// does not eat: an interactor that notices the solution's end (killed
	// at its limit) must get to exit on its own, or the solution's TLE
	// would read as the interactor's failure.
	lim.WallTime = max(lim.effective(sub.Interactor.Program.lang).Wall, solWall+interactorGrace+5*time.Second)
	args, mounts, vars := e.interactorArgs(sub.Interactor, tc, hostDir, fbDir)
	return sub.Interactor.Program.run(ctx, RunOptions{
		Args:      args,
		Stdin:     stdin,
		Stdout:    stdout,
		Limits:    lim,
		slot:      s,
		stdoutEnd: stdoutEnd,
	}, true, mounts, vars)
}

// verdict combines the two programs' outcomes. The interactor failing to
// end on its own (a limit, a signal) is the judge's fault — unless the
// solution had failed on its own before (a limit, a crash: not stopped
// while it waited for the interactor), and the interactor misbehaved once
// its input had ended —, and so is its FAIL (exit 3); then the solution's
// own failures win over what the interactor says of its answers, unless
// they came after the interactor rejected it (its input ended then); then
// the interactor's exit status, as testlib's (exit 7 gives the points
// quitp wrote, read with r like a checker's: TestResult.Points).
func (in interaction) verdict(r pointsReading) (Verdict, string, *float64) {
	it, sol := in.it, in.sol
	comment := truncate(strings.TrimSpace(it.Stderr), previewMax)
	solFailed := !in.stopped && sol.Verdict != Accepted
	if msg, failed := authorFailure("interactor", it, comment); failed {
		if solFailed && in.solFirst && !sol.waited {
			return sol.Verdict, sol.Message, nil
		}
		return InternalError, msg, nil
	}
	var points struct {
		out checkerOutcome
		why string
	}
	if it.ExitCode == exitPoints {
		points.out, points.why = pointsOutcome(it.Stderr, comment, r, "interactor")
	}
	switch {
	case it.ExitCode == exitFail:
		return InternalError, "interactor failed: " + comment, nil
	case it.ExitCode == exitPoints && points.why != "":
		return InternalError, "interactor failed (" + points.why + "): " + comment, nil
	case solFailed && (in.solFirst || it.ExitCode == exitOK || it.ExitCode == exitPoints):
		return sol.Verdict, sol.Message, nil
	case in.stopped && (it.ExitCode == exitOK || it.ExitCode == exitPoints):
		return TimeLimitExceeded, fmt.Sprintf("the solution did not exit within %v after the interactor finished", interactorGrace), nil
	}
	switch it.ExitCode {
	case exitOK:
		return Accepted, comment, nil
	case exitWrongAnswer:
		return WrongAnswer, comment, nil
	case exitPresentation:
		return WrongAnswer, strings.TrimSpace("presentation error: " + comment), nil
	case exitUnexpectedEOF:
		return WrongAnswer, strings.TrimSpace("unexpected end of the solution's output: " + comment), nil
	case exitPoints:
		return points.out.verdict, points.out.message, points.out.points
	}
	return InternalError, fmt.Sprintf("interactor exited with code %d: %s", it.ExitCode, comment), nil
}

// writeTestFiles writes the test's input and answer into hostDir as
// input.txt and answer.txt.
func writeTestFiles(tc TestCase, hostDir string) error {
	for _, f := range []struct {
		name string
		data []byte
		file string
	}{{"input.txt", tc.Input, tc.InputFile}, {"answer.txt", tc.Expected, tc.ExpectedFile}} {
		src, err := tc.open(f.data, f.file)
		if err != nil {
			return err
		}
		err = writeNew(filepath.Join(hostDir, f.name), src)
		src.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

package judge

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/algoitny/api/internal/judge/sandbox"
)

// maxPasses bounds Checker.Passes and Interactor.Passes: each pass is a
// run of the program and of the validator.
const maxPasses = 100

// nextPassMax bounds the input a validator may give the next pass.
const nextPassMax = 1 << 30

// runPasses runs a test of a multi-pass problem (the ICPC format's
// multi-pass type): pass runs the program once on tc and has the
// validator write its feedback to fbDir, which every pass shares. While a
// pass is accepted and the validator left nextpass.in there, another pass
// runs with that file as the test's input — the program's and the
// validator's, as BAPCtools runs them —, at most passes in all; a
// validator that rejects and leaves nextpass.in, or asks for one pass too
// many, fails (INTERNAL_ERROR). The limits apply to each pass; the result
// is the last pass's, with the most CPU time, wall time and memory any
// pass used. The error is only for a cancelled context.
func (e *Engine) runPasses(tr TestResult, passes int, tc TestCase, pass func(tc TestCase, fbDir string) (TestResult, error)) (TestResult, error) {
	fbDir, err := e.newFeedbackDir()
	if err != nil {
		return tr.internal("%v", err)
	}
	defer sandbox.RemoveAll(fbDir)
	var input string // the current pass's input when a validator wrote it
	defer func() {
		if input != "" {
			_ = os.Remove(input)
		}
	}()
	var most TestResult
	for n := 1; ; n++ {
		res, err := pass(tc, fbDir)
		most.CPUTime, most.WallTime = max(most.CPUTime, res.CPUTime), max(most.WallTime, res.WallTime)
		most.MemoryBytes = max(most.MemoryBytes, res.MemoryBytes)
		res.CPUTime, res.WallTime, res.MemoryBytes = most.CPUTime, most.WallTime, most.MemoryBytes
		if err != nil {
			return res, err
		}
		next, err := e.takeNextPass(fbDir)
		if err != nil {
			return res.internal("output validator failed: nextpass.in: %v", err)
		}
		switch {
		case next == "":
			if res.Verdict != Accepted && n > 1 {
				res.Message = fmt.Sprintf("pass %d: %s", n, res.Message)
			}
			return res, nil
		case res.Verdict == WrongAnswer && res.Points == nil:
			_ = os.Remove(next)
			return res.internal("output validator failed: it rejected pass %d and left nextpass.in", n)
		// A pass accepted with part of the score (an interactive
		// validator's score_multiplier.txt below 1 reads as WRONG_ANSWER
		// with points) goes on like an accepted one.
		case res.Verdict != Accepted && res.Points == nil:
			_ = os.Remove(next)
			return res, nil
		case n >= passes:
			_ = os.Remove(next)
			return res.internal("output validator failed: it asked for pass %d of at most %d (limits.validation_passes)", n+1, passes)
		}
		if input != "" {
			_ = os.Remove(input)
		}
		input = next
		tc.Input, tc.InputFile = nil, next
		shareFeedback(fbDir)
	}
}

// shareFeedback lets the next pass's validator, which may run as another
// of the sandbox's uids, write to the files an earlier pass left in fbDir
// (the format keeps them between passes: judgemessage.txt is appended to
// pass after pass): each regular file and directory becomes writable by
// all, changed through a descriptor opened without following links.
func shareFeedback(fbDir string) {
	_ = filepath.WalkDir(fbDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == fbDir || !d.Type().IsRegular() && !d.IsDir() {
			return nil
		}
		f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
		if err != nil {
			return nil
		}
		defer f.Close()
		mode := fs.FileMode(0o666)
		if d.IsDir() {
			mode = 0o777
		}
		_ = f.Chmod(mode)
		return nil
	})
}

// takeNextPass moves the nextpass.in a validator left in fbDir to a file
// of the engine's and returns its path; "" when there is none. A link or
// anything but a regular file is refused, never followed.
func (e *Engine) takeNextPass(fbDir string) (string, error) {
	name := filepath.Join(fbDir, "nextpass.in")
	src, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", errors.New("not a regular file")
	}
	defer func() {
		src.Close()
		_ = os.Remove(name)
	}()
	if st, err := src.Stat(); err != nil || !st.Mode().IsRegular() {
		return "", errors.New("not a regular file")
	}
	dst, err := os.CreateTemp(e.sb.WorkDir(), "nextpass-")
	if err != nil {
		return "", err
	}
	n, err := io.Copy(dst, io.LimitReader(src, nextPassMax+1))
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > nextPassMax {
		err = fmt.Errorf("larger than %d bytes", nextPassMax)
	}
	if err == nil {
		err = os.Chmod(dst.Name(), 0o644) // the engine's copy, as the test's own input files
	}
	if err != nil {
		_ = os.Remove(dst.Name())
		return "", err
	}
	return dst.Name(), nil
}

package problempkg

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/algoitny/api/internal/algoitny"
	"github.com/algoitny/api/internal/judge"
	"github.com/algoitny/api/internal/problems"
)

// Registrar registers an imported problem with the rules of
// problems.Service.Import (the caller's right to register problems, its
// plan's maxProblems).
type Registrar interface {
	Import(ctx context.Context, in problems.CreateInput) (*algoitny.Problem, error)
}

// Plans reads a user's plan (*dynamo.DB), which the rights of a
// registration read.
type Plans interface {
	GetPlan(ctx context.Context, name string) (*algoitny.Plan, error)
}

// Importer imports uploaded packages for PACKAGE_IMPORT jobs
// (jobs.PackageImporter): Open, Import, then the registration as the job's
// owner.
type Importer struct {
	Judge    *judge.Engine
	Problems Registrar
	Plans    Plans
}

// ImportPackage unpacks the zip, verifies and imports it (Import) and
// registers the problem as owner, with progress called for each step of
// the verification. The package's faults, and the registration's refusals,
// are EINVALID, EFORBIDDEN, ECONFLICT or ERATELIMITED with a message for the
// owner; other errors are the machine's.
func (im *Importer) ImportPackage(ctx context.Context, zip []byte, job *algoitny.Job, owner *algoitny.User, params algoitny.PackageImportParams,
	progress func(step string)) (*algoitny.PackageImportResult, error) {
	dir, err := os.MkdirTemp("", "algoitny-upload-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	// The zip's name is the package's when its files are at its root.
	name := strings.TrimSuffix(filepath.Base(params.FileName), filepath.Ext(params.FileName))
	if name == "" || ignored(name) {
		name = "package"
	}
	path := filepath.Join(dir, name+".zip")
	if err := os.WriteFile(path, zip, 0o600); err != nil {
		return nil, err
	}
	pkg, err := Open(path)
	if err != nil {
		if _, ok := err.(*Error); ok {
			return nil, algoitny.Invalid("file", "%v", err)
		}
		return nil, err
	}
	defer pkg.Close()
	imp, err := Import(ctx, pkg, im.Judge, ImportOptions{ProblemID: job.ProblemID, RequireVerified: params.RequireVerified,
		Options: Options{Log: &lineWriter{each: progress}}})
	if err != nil {
		return nil, err
	}
	imp.Problem.IsCompleted = params.Publish
	actor := &algoitny.Actor{User: owner}
	if owner != nil && owner.PlanID != "" && im.Plans != nil {
		if actor.Plan, err = im.Plans.GetPlan(ctx, owner.PlanID); err != nil && !algoitny.IsCode(err, algoitny.ENOTFOUND) {
			return nil, err
		}
	}
	p, err := im.Problems.Import(algoitny.WithActor(ctx, actor), problems.CreateInput{Problem: imp.Problem, TestCases: imp.Tests, Subtasks: imp.Subtasks})
	if err != nil {
		return nil, err
	}
	return &algoitny.PackageImportResult{Platform: p.Platform, ProblemID: p.ProblemID, Tests: p.TestCaseCount, Subtasks: len(p.Subtasks),
		Report: imp.Report, Notes: imp.Notes}, nil
}

// lineWriter calls each with every line written to it.
type lineWriter struct {
	mu   sync.Mutex
	each func(string)
	buf  bytes.Buffer
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for {
		line, err := w.buf.ReadString('\n')
		if err != nil { // no newline yet: keep it
			w.buf.WriteString(line)
			return len(p), nil
		}
		if s := strings.TrimSpace(line); s != "" && w.each != nil {
			w.each(s)
		}
	}
}

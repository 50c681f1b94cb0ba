package submissions

import (
	"context"
	"encoding/json"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/algoitny/api/internal/algoitny"
)

// MaxPackageBytes bounds an uploaded problem package (a zip).
const MaxPackageBytes = 32 << 20

// Uploads keeps the files jobs work on beside them (*dynamo.DB).
type Uploads interface {
	PutJobUpload(ctx context.Context, jobID string, data []byte) error
}

// ImportPackageInput is a problem package to import.
type ImportPackageInput struct {
	// Package is the zip's bytes; FileName its name.
	Package  []byte
	FileName string
	// ProblemID names the new problem ("" for the package's name).
	ProblemID string
	Publish   bool
	// RequireVerified refuses a package whose submissions do not all get
	// what their folders or tags require.
	RequireVerified bool
}

// ImportPackage starts a PACKAGE_IMPORT job: a worker verifies the
// package (ICPC or Polygon, docs/packages.md) and registers it as a CUSTOM
// problem of the caller, with live progress through jobUpdated. The zip is
// kept beside the job until its worker has read it. The caller must be able
// to register problems. Returns EUNAUTHENTICATED, EFORBIDDEN, EINVALID
// (package: empty, larger than MaxPackageBytes, not a zip; problemId) and
// EINTERNAL (the upload could not be stored: the job is FAILED).
func (s *Service) ImportPackage(ctx context.Context, in ImportPackageInput) (*algoitny.Job, error) {
	a := algoitny.ActorFrom(ctx)
	if err := s.CanRegister(ctx); err != nil {
		return nil, err
	}
	switch {
	case len(in.Package) == 0:
		return nil, algoitny.Invalid("file", "the package is empty")
	case len(in.Package) > MaxPackageBytes:
		return nil, algoitny.Invalid("file", "the package is larger than %d MB", MaxPackageBytes>>20)
	case !strings.HasPrefix(string(in.Package), "PK\x03\x04") && !strings.HasPrefix(string(in.Package), "PK\x05\x06"):
		return nil, algoitny.Invalid("file", "the package must be a zip archive")
	case len(in.ProblemID) > 64 || strings.ContainsAny(in.ProblemID, "#/ \x00"):
		return nil, algoitny.Invalid("problemId", "problemId may contain letters, digits, '_', '-' and '.' only")
	}
	name := path.Base(strings.ReplaceAll(in.FileName, `\`, "/"))
	if !utf8.ValidString(name) || len(name) > 200 {
		name = "package.zip"
	}
	params, err := json.Marshal(algoitny.PackageImportParams{FileName: name, Publish: in.Publish, RequireVerified: in.RequireVerified})
	if err != nil {
		return nil, algoitny.Internal(err, "encode parameters")
	}
	job := &algoitny.Job{Type: algoitny.JobPackageImport, UserID: a.UserID(), Platform: algoitny.PlatformCustom,
		ProblemID: in.ProblemID, Title: name, Params: string(params)}
	if u := a.User; u != nil {
		job.UserEmail = u.Email
	}
	created, _, err := s.Store.CreateChargedJob(ctx, job, nil)
	if err != nil {
		return nil, err
	}
	if err := s.Uploads.PutJobUpload(ctx, created.ID, in.Package); err != nil {
		msg := "the package could not be stored; upload it again"
		if _, terr := s.Store.TransitionJobFrom(context.WithoutCancel(ctx), created, algoitny.JobTransition{Status: algoitny.JobFailed, ErrorMessage: &msg}); terr != nil {
			s.logger().WarnContext(ctx, "fail a package import whose upload failed", "job", created.ID, "err", terr)
		}
		return nil, err
	}
	queued, err := s.Queue.Enqueue(ctx, created)
	if err != nil {
		s.logger().WarnContext(ctx, "job stored but not queued; the reaper queues it", "job", created.ID, "err", err)
	}
	return queued, nil
}

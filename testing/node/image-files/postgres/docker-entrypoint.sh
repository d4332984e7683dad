#!/bin/sh
# The postgres image's start, as its documentation defines it: on the first start (no PG_VERSION in
# PGDATA) the cluster is made with superuser POSTGRES_USER (default postgres) and password
# POSTGRES_PASSWORD (required), clients anywhere may log in by password, database POSTGRES_DB
# (default: the user's name) is created and /docker-entrypoint-initdb.d's *.sql and *.sh run; then
# the server runs in the foreground as the container's one process.
set -eu

# `docker run postgres -c x=y` means `postgres -c x=y`.
if [ "${1#-}" != "${1:-}" ]; then set -- postgres "$@"; fi

if [ "${1:-}" = postgres ]; then
    PGDATA="${PGDATA:-/var/lib/postgresql/data}"
    POSTGRES_USER="${POSTGRES_USER:-postgres}"
    POSTGRES_DB="${POSTGRES_DB:-$POSTGRES_USER}"
    export PGDATA
    if [ ! -s "$PGDATA/PG_VERSION" ]; then
        if [ -z "${POSTGRES_PASSWORD:-}" ] && [ "${POSTGRES_HOST_AUTH_METHOD:-}" != trust ]; then
            echo 'Error: the database is uninitialized and POSTGRES_PASSWORD is not set.' >&2
            echo '  Set it to a non-empty value for the superuser (or POSTGRES_HOST_AUTH_METHOD=trust, never in production).' >&2
            exit 1
        fi
        mkdir -p "$PGDATA"
        chmod 700 "$PGDATA"
        password_file="$(mktemp)"
        printf '%s\n' "${POSTGRES_PASSWORD:-}" > "$password_file"
        # shellcheck disable=SC2086 # POSTGRES_INITDB_ARGS is a list of arguments, as the image documents.
        initdb --username="$POSTGRES_USER" --pwfile="$password_file" ${POSTGRES_INITDB_ARGS:-}
        rm -f "$password_file"
        printf "\nlisten_addresses = '*'\n" >> "$PGDATA/postgresql.conf"
        printf '\nhost all all all %s\n' "${POSTGRES_HOST_AUTH_METHOD:-scram-sha-256}" >> "$PGDATA/pg_hba.conf"

        # A first server on the local socket only: nothing is served before the database exists.
        pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start
        if [ "$POSTGRES_DB" != postgres ]; then
            # psql quotes the name (:"db"); it interpolates variables in its input, not in -c.
            echo 'CREATE DATABASE :"db";' |
                psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres --set db="$POSTGRES_DB"
        fi
        for f in /docker-entrypoint-initdb.d/*; do
            case "$f" in
                *.sql) psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" -f "$f" ;;
                *.sh) if [ -x "$f" ]; then "$f"; else . "$f"; fi ;;
            esac
        done
        pg_ctl -D "$PGDATA" -m fast -w stop
        echo 'PostgreSQL init process complete; ready for start up.'
    fi
fi
exec "$@"

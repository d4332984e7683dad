#!/bin/sh
# The mysql image's start, as its documentation defines it, for a MariaDB server: on the first
# start (no `mysql` system database in the data directory) one of MYSQL_ROOT_PASSWORD,
# MYSQL_ALLOW_EMPTY_PASSWORD or MYSQL_RANDOM_ROOT_PASSWORD is required; the system tables are made;
# a server on the socket only sets root's password (a random one is printed as
# "GENERATED ROOT PASSWORD: …"), creates MYSQL_DATABASE and MYSQL_USER (password MYSQL_PASSWORD)
# with every right on that database only, and runs /docker-entrypoint-initdb.d's *.sql and *.sh;
# then the server runs in the foreground as the container's one process.
set -eu

# `docker run mysql --x=y` means `mysqld --x=y`.
if [ "${1#-}" != "${1:-}" ]; then set -- mysqld "$@"; fi

# A value as an SQL string literal: backslashes and quotes escaped.
literal() { printf "'%s'" "$(printf '%s' "$1" | sed -e 's/\\/\\\\/g' -e "s/'/\\\\'/g")"; }
# A name as an SQL identifier.
identifier() { printf '`%s`' "$(printf '%s' "$1" | sed -e 's/`/``/g')"; }

if [ "${1:-}" = mysqld ]; then
    datadir=/var/lib/mysql
    if [ ! -d "$datadir/mysql" ]; then
        if [ -z "${MYSQL_ROOT_PASSWORD:-}" ] && [ -z "${MYSQL_ALLOW_EMPTY_PASSWORD:-}" ] && [ -z "${MYSQL_RANDOM_ROOT_PASSWORD:-}" ]; then
            echo 'error: database is uninitialized and password option is not specified' >&2
            echo '  You need to specify one of MYSQL_ROOT_PASSWORD, MYSQL_ALLOW_EMPTY_PASSWORD and MYSQL_RANDOM_ROOT_PASSWORD' >&2
            exit 1
        fi
        echo 'Initializing database files'
        # --force: a pod's hostname need not resolve (clients are never looked up: skip-name-resolve).
        mariadb-install-db --datadir="$datadir" --auth-root-authentication-method=normal \
            --skip-test-db --skip-name-resolve --force
        socket=/var/run/mysqld/init.sock
        # A first server on a socket of its own, without networking: nothing is served before the
        # users exist.
        "$@" --skip-networking --socket="$socket" &
        server=$!
        tries=0
        until mariadb-admin --socket="$socket" --user=root ping > /dev/null 2>&1; do
            tries=$((tries + 1))
            if [ "$tries" -gt 300 ]; then echo 'error: the first server did not start' >&2; exit 1; fi
            sleep 0.1
        done
        if [ -n "${MYSQL_RANDOM_ROOT_PASSWORD:-}" ]; then
            MYSQL_ROOT_PASSWORD="$(head -c 24 /dev/urandom | base64 | tr -d '/+=')"
            echo "GENERATED ROOT PASSWORD: $MYSQL_ROOT_PASSWORD"
        fi
        {
            # No anonymous users, as the official image has none.
            echo "DELETE FROM mysql.global_priv WHERE User = ''; FLUSH PRIVILEGES;"
            echo "ALTER USER 'root'@'localhost' IDENTIFIED BY $(literal "${MYSQL_ROOT_PASSWORD:-}");"
            if [ -n "${MYSQL_DATABASE:-}" ]; then
                echo "CREATE DATABASE IF NOT EXISTS $(identifier "$MYSQL_DATABASE");"
            fi
            if [ -n "${MYSQL_USER:-}" ] && [ -n "${MYSQL_PASSWORD:-}" ]; then
                echo "CREATE USER $(literal "$MYSQL_USER")@'%' IDENTIFIED BY $(literal "$MYSQL_PASSWORD");"
                if [ -n "${MYSQL_DATABASE:-}" ]; then
                    echo "GRANT ALL ON $(identifier "$MYSQL_DATABASE").* TO $(literal "$MYSQL_USER")@'%';"
                fi
            fi
        } | mariadb --socket="$socket" --user=root
        for f in /docker-entrypoint-initdb.d/*; do
            case "$f" in
                *.sql) mariadb --socket="$socket" --user=root --password="${MYSQL_ROOT_PASSWORD:-}" ${MYSQL_DATABASE:+"$MYSQL_DATABASE"} < "$f" ;;
                *.sh) if [ -x "$f" ]; then "$f"; else . "$f"; fi ;;
            esac
        done
        kill "$server"
        wait "$server" || true
        echo 'MySQL init process done. Ready for start up.'
    fi
fi
exec "$@"

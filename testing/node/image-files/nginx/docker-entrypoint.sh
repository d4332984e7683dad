#!/bin/sh
# The nginx image's entrypoint: when the command is nginx, the scripts in /docker-entrypoint.d run
# first (in name order), then the command replaces this shell.
set -e
if [ "$1" = nginx ] || [ "$1" = nginx-debug ]; then
    for script in /docker-entrypoint.d/*.sh; do
        if [ -x "$script" ]; then "$script"; fi
    done
fi
exec "$@"

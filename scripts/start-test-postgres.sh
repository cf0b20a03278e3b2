#!/usr/bin/env bash
# Starts a throwaway PostgreSQL on loopback for tests (CI and local), printing
# the URL to use as TEST_DATABASE_URL. Needs root (it runs the server as the
# `postgres` user) and Debian's postgresql package (installed if missing).
set -euo pipefail
PORT="${PGPORT_TEST:-54329}"
DIR="${PGDATA_TEST:-/tmp/mnemo-pg-$PORT}"
BIN="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)"
if [ -z "$BIN" ]; then
  echo "installing postgresql from Debian" >&2
  apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
  BIN="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)"
fi
if ! runuser -u postgres -- "$BIN/pg_ctl" -D "$DIR" status >/dev/null 2>&1; then
  rm -rf "$DIR" && mkdir -p "$DIR" && chown postgres:postgres "$DIR"
  runuser -u postgres -- "$BIN/initdb" -D "$DIR" -A trust -U postgres >/dev/null
  runuser -u postgres -- "$BIN/pg_ctl" -D "$DIR" -l "$DIR/server.log" \
    -o "-p $PORT -k $DIR -c listen_addresses=127.0.0.1 -c max_connections=300 -c fsync=off" -w start >/dev/null
fi
echo "postgresql://postgres@127.0.0.1:$PORT/postgres"

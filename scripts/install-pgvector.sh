#!/usr/bin/env bash
# Builds and installs the pgvector extension into the local PostgreSQL (for CI
# and for developers running the tests on PostgreSQL), from the release source
# vendored in ../shared/vendor: Debian 12 has no pgvector package. Needs root.
# Does nothing when the extension is already installed. Run it BEFORE starting
# the server (.ci/run does): the Debian packages it may install can update the
# server's own files, which a running server does not survive.
set -euo pipefail
BIN="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)"
if [ -z "$BIN" ]; then
  echo "installing postgresql from Debian" >&2
  apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
  BIN="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)"
fi
SHARE="$("$BIN/pg_config" --sharedir)"
if ls "$SHARE"/extension/vector.control >/dev/null 2>&1; then exit 0; fi
VER="$("$BIN/pg_config" --version | sed -E 's/^PostgreSQL ([0-9]+).*/\1/')"
SRC="$(ls "${MNEMO_SHARED_DIR:-$(dirname "$0")/../../shared}"/vendor/pgvector-*.tar.gz 2>/dev/null | sort -V | tail -1 || true)"
[ -n "$SRC" ] || { echo "install-pgvector: no pgvector-*.tar.gz under ../shared/vendor" >&2; exit 1; }
if [ ! -x "$BIN/pg_config" ] || ! dpkg -s "postgresql-server-dev-$VER" >/dev/null 2>&1 || ! command -v make >/dev/null; then
  echo "installing postgresql-server-dev-$VER and build tools from Debian" >&2
  apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "postgresql-server-dev-$VER" build-essential >&2
fi
WORK="$(mktemp -d)"
tar -xzf "$SRC" -C "$WORK"
cd "$WORK"/pgvector-*
# OPTFLAGS="": no -march=native, so the build runs on any CPU of the same architecture.
make -s OPTFLAGS="" PG_CONFIG="$BIN/pg_config" >&2
make -s OPTFLAGS="" PG_CONFIG="$BIN/pg_config" install >&2
rm -rf "$WORK"
echo "install-pgvector: installed $(basename "$SRC" .tar.gz) into PostgreSQL $VER" >&2

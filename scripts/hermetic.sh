#!/usr/bin/env bash
# Runs a command that cannot see anything beside the repository: in a private mount namespace,
# every neighbour of the repository's folder (../shared, ../anything) is hidden under an empty,
# read-only tmpfs, while the repository stays at the same path (so nothing is rebuilt). A build or
# test that reads a sibling folder fails here exactly as it would in a fresh clone with nothing
# beside it. Toolchains, package caches and registries stay visible even where they are
# neighbours (CARGO_HOME, RUSTUP_HOME, Go's paths, ~/.cache, the PATH), and so does /tmp.
#
# Needs a private mount namespace: root, or unprivileged user namespaces (`unshare -rm`). Where
# neither exists the command runs unhidden with a warning, except under CI=true, where that fails.
# Usage: scripts/hermetic.sh COMMAND [ARGS...]
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd -P)"
parent="$(dirname "$repo")"

if [ "${SLIPSTREAM_HERMETIC:-}" != inside ]; then
  for how in "-m" "-rm"; do
    if unshare $how true 2>/dev/null; then
      SLIPSTREAM_HERMETIC=inside exec unshare $how --propagation private "$0" "$@"
    fi
  done
  if [ "${CI:-}" = true ]; then
    echo "hermetic: cannot make a private mount namespace (unshare -m / -rm), so cannot prove the" >&2
    echo "hermetic: tests read nothing beside the repository; run as root or allow user namespaces" >&2
    exit 1
  fi
  echo "hermetic: no private mount namespace here; running without hiding the repository's neighbours" >&2
  exec "$@"
fi

# Paths that must stay visible: the toolchains and caches the build and tests use.
keep=(
  "${CARGO_HOME:-$HOME/.cargo}" "${RUSTUP_HOME:-$HOME/.rustup}" "$HOME/.cache" "$HOME/.local"
  "$HOME/.m2" "$HOME/.npm" "${TMPDIR:-/tmp}"
)
if command -v go >/dev/null; then
  while read -r p; do [ -n "$p" ] && keep+=("$p"); done < <(go env GOPATH GOMODCACHE GOCACHE GOROOT)
fi
IFS=: read -r -a path_dirs <<<"$PATH"
keep+=("${path_dirs[@]}")

# Whether `entry` is (or holds) a path that must stay visible.
needed() {
  local k
  for k in "${keep[@]}"; do
    [ -n "$k" ] || continue
    case "$(realpath -m "$k")/" in "$1"/*) return 0 ;; esac
  done
  return 1
}

hidden=()
shopt -s dotglob nullglob
for entry in "$parent"/*; do
  entry="$(realpath -m "$entry")"
  [ "$entry" = "$repo" ] && continue
  case "$repo/" in "$entry"/*) continue ;; esac
  needed "$entry" && continue
  if [ -d "$entry" ]; then
    mount -t tmpfs -o ro,size=4k,mode=0555 slipstream-hermetic "$entry"
  elif [ -e "$entry" ]; then
    mount --bind /dev/null "$entry"
  else
    continue
  fi
  hidden+=("$(basename "$entry")")
done

# The proof: nothing of a hidden neighbour can be read.
for name in "${hidden[@]}"; do
  if [ -d "$parent/$name" ] && [ -n "$(ls -A "$parent/$name")" ]; then
    echo "hermetic: $parent/$name is still readable" >&2
    exit 1
  fi
done
echo "hermetic: hid ${#hidden[@]} neighbour(s) of the repository in $parent: ${hidden[*]:-none}" >&2
exec "$@"

#!/usr/bin/env bash
# Runs every cargo-fuzz target of crates/sign/fuzz for SECONDS each (default 60). Any single
# allocation over 32 MiB fails the run (inputs are at most 4 KiB, so that is unbounded growth);
# the RSS limit is high because AddressSanitizer keeps freed memory in quarantine.
# Needs the nightly toolchain; cargo-fuzz is installed into .tools on first use.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
if ! rustup toolchain list | grep -q '^nightly'; then
  echo "fuzz: the nightly toolchain is required (rustup toolchain install nightly)" >&2
  exit 1
fi
if [ ! -x .tools/bin/cargo-fuzz ]; then
  echo "installing cargo-fuzz into .tools (first run only)..." >&2
  cargo install cargo-fuzz --locked --root .tools
fi
export PATH="$PWD/.tools/bin:$PATH"
cd crates/sign/fuzz
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
for target in $(cargo +nightly fuzz list); do
  echo "fuzz: $target for ${seconds}s" >&2
  if ! cargo +nightly fuzz run "$target" -- -max_total_time="$seconds" -rss_limit_mb=512 -malloc_limit_mb=32 \
      -print_final_stats=1 >"$log" 2>&1; then
    tail -n 60 "$log" >&2
    echo "fuzz: $target FAILED (the crashing input is under crates/sign/fuzz/artifacts/$target)" >&2
    exit 1
  fi
  grep -E "^stat::(number_of_executed_units|peak_rss_mb)" "$log" | sed "s/^/  $target /" >&2
done

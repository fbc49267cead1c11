#!/usr/bin/env bash
# Runs each fuzz target for a set time with a corpus seeded from the test fixtures.
#   fuzz/run.sh [SECONDS_PER_TARGET]   (default 600)
# Needs a nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`).
set -euo pipefail
cd "$(dirname "$0")"
secs=${1:-600}
root=..
mkdir -p corpus/manifest_reader corpus/policy_parser
find "$root/crates" "$root/examples" -path '*/target' -prune -o \( -name '*.yaml' -o -name '*.json' \) -print \
  | grep -v '/snapshots/' | while read -r f; do
    case "$f" in
      *policy*|*tenancy*) cp "$f" "corpus/policy_parser/$(echo "$f" | md5sum | cut -c1-16).yaml" ;;
      *) cp "$f" "corpus/manifest_reader/$(echo "$f" | md5sum | cut -c1-16).yaml" ;;
    esac
  done
for target in manifest_reader policy_parser; do
  echo "== $target: ${secs}s"
  cargo +nightly fuzz run "$target" "corpus/$target" -- -max_total_time="$secs" -max_len=262144 -rss_limit_mb=4096 -timeout=10
done

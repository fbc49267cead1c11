#!/usr/bin/env bash
# Runs fuzz targets for a set time each, with a corpus seeded from the test fixtures, the examples and the
# hostile-input corpus. Targets given together run side by side, one process each.
#   fuzz/run.sh [SECONDS_PER_TARGET] [TARGET...]   (default: 600 s, every target)
# Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`). Logs go to fuzz/logs/, new
# inputs to fuzz/corpus/, crashes to fuzz/artifacts/ (all three are ignored by git).
set -euo pipefail
cd "$(dirname "$0")"
secs=${1:-600}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(manifest_reader policy_parser)
root=..
mkdir -p corpus/manifest_reader corpus/policy_parser logs
find "$root/crates" "$root/examples" -path '*/target' -prune -o \( -name '*.yaml' -o -name '*.json' \) -print \
  | grep -v '/snapshots/' | while read -r f; do
    [ "$(stat -c %s "$f")" -le 262144 ] || continue
    case "$f" in
      *policy*|*tenancy*) cp "$f" "corpus/policy_parser/$(echo "$f" | md5sum | cut -c1-16).yaml" ;;
      *) cp "$f" "corpus/manifest_reader/$(echo "$f" | md5sum | cut -c1-16).yaml" ;;
    esac
  done
cargo +nightly fuzz build -O
pids=()
for target in "${targets[@]}"; do
  echo "== $target: ${secs}s, log fuzz/logs/$target.log"
  cargo +nightly fuzz run -O "$target" "corpus/$target" -- \
    -max_total_time="$secs" -max_len=262144 -rss_limit_mb=4096 -timeout=10 -print_final_stats=1 \
    >"logs/$target.log" 2>&1 &
  pids+=($!)
done
status=0
for i in "${!pids[@]}"; do
  if wait "${pids[$i]}"; then
    echo "== ${targets[$i]}: no crash; $(grep -E '^Done [0-9]+ runs' "logs/${targets[$i]}.log" | tail -1)"
  else
    echo "== ${targets[$i]}: FAILED, see fuzz/logs/${targets[$i]}.log and fuzz/artifacts/${targets[$i]}/"
    status=1
  fi
done
exit $status

#!/usr/bin/env bash
# Runs the repository's pre-commit hook definition (.pre-commit-hooks.yaml) with the real
# `pre-commit` tool from PyPI on two sample repositories: one whose manifests audit clean (the
# commit passes) and one where two tenants share a time-sliced GPU (the commit is refused, GT101).
#
# Usage: .ci/pre-commit-hook.sh [GPU_TRUST_BINARY]   (default: target/debug/gpu-trust, built)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
bin="${1:-}"
if [[ -z "$bin" ]]; then
  (cd "$here" && cargo build --locked -q -p gpu-trust)
  bin="$here/target/debug/gpu-trust"
fi
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q pre-commit
export PATH="$(dirname "$bin"):$work/venv/bin:$PATH"
export PRE_COMMIT_HOME="$work/cache"
git_quiet() { git -c user.name=ci -c user.email=ci@localhost -c init.defaultBranch=main "$@" >/dev/null; }

# The hook repository: this checkout's hook definition, committed in a repository of its own so
# that the working tree's version is what runs.
mkdir "$work/hooks"
cp "$here/.pre-commit-hooks.yaml" "$work/hooks/"
git_quiet -C "$work/hooks" init
git_quiet -C "$work/hooks" add .
git_quiet -C "$work/hooks" commit -m hooks
rev="$(git -C "$work/hooks" rev-parse HEAD)"

data="$here/crates/cli/tests/data/audit"
sample() { # NAME MANIFEST -> a repository with deploy/cluster.yaml and the hook configured
  local dir="$work/$1"
  mkdir -p "$dir/deploy"
  cp "$data/$2" "$dir/deploy/cluster.yaml"
  cat > "$dir/.pre-commit-config.yaml" <<YAML
repos:
  - repo: $work/hooks
    rev: $rev
    hooks:
      - id: gpu-trust-audit
        args: [deploy/, --today, "2026-11-15"]
YAML
  git_quiet -C "$dir" init
  git_quiet -C "$dir" add .
  echo "$dir"
}

clean="$(sample clean one-tenant-exclusive.yaml)"
(cd "$clean" && pre-commit run --all-files) || { echo "FAIL: the clean sample was refused"; exit 1; }

shared="$(sample shared two-tenants-time-sliced.yaml)"
if (cd "$shared" && pre-commit run --all-files >"$work/shared.log" 2>&1); then
  cat "$work/shared.log"
  echo "FAIL: two tenants on one time-sliced GPU passed the hook"
  exit 1
fi
grep -q GT101 "$work/shared.log" || { cat "$work/shared.log"; echo "FAIL: GT101 not reported"; exit 1; }

# A hook configured without paths must fail with the fix, never audit the kubeconfig's cluster: a
# kubeconfig that names an unreachable server shows it was not read.
bare="$(sample bare one-tenant-exclusive.yaml)"
sed -i 's|args: \[deploy/, |args: [|' "$bare/.pre-commit-config.yaml"
git_quiet -C "$bare" add .pre-commit-config.yaml
cat > "$work/kubeconfig" <<'YAML'
apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:9"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
YAML
if (cd "$bare" && KUBECONFIG="$work/kubeconfig" pre-commit run --all-files >"$work/bare.log" 2>&1); then
  cat "$work/bare.log"
  echo "FAIL: the hook without paths passed"
  exit 1
fi
grep -q -- "--no-live refuses" "$work/bare.log" || { cat "$work/bare.log"; echo "FAIL: the hook without paths did not name the fix"; exit 1; }
echo "pre-commit hook: the clean sample passes, the shared GPU is refused (GT101), a hook without paths fails with the fix"

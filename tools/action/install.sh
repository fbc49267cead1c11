#!/usr/bin/env bash
# The GitHub Action's install step (action.yml): puts a gpu-trust binary on PATH.
#
# From a release (the default): downloads gpu-trust-vVERSION-OS-ARCH.tar.gz of the release tagged
# vVERSION, checks its SHA-256 against INPUT_SHA256 when given, else against the release's
# SHA256SUMS, and unpacks it. With INPUT_BUILD_FROM_SOURCE=true: builds the checked-out action's
# own source with cargo (the `dist` profile) instead.
#
# Environment: INPUT_VERSION (e.g. 0.1.0; empty: the action's ref when it is a tag vX.Y.Z),
# INPUT_SHA256, INPUT_BUILD_FROM_SOURCE, ACTION_REF (the ref the action is used at), GITHUB_ACTION_PATH, GITHUB_PATH,
# RUNNER_TEMP, and GPU_TRUST_RELEASES (where releases are downloaded from; default the
# repository's GitHub releases).
set -euo pipefail

die() {
  echo "::error title=gpu-trust install::$*" >&2
  exit 1
}

version="${INPUT_VERSION:-}"
version="${version#v}"
if [ -z "$version" ]; then
  ref="${ACTION_REF:-${GITHUB_ACTION_REF:-}}"
  if [[ "$ref" =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
    version="${ref#v}"
  elif [ "${INPUT_BUILD_FROM_SOURCE:-false}" != true ]; then
    die "say which release to install: the input version (e.g. 0.1.0), or use the action at a release tag"
  fi
fi
if [ -n "$version" ] && ! [[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$ ]]; then
  die "version '$version' is not a release version (e.g. 0.1.0)"
fi

dest="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/gpu-trust-${version:-source}"
mkdir -p "$dest/bin"

if [ "${INPUT_BUILD_FROM_SOURCE:-false}" = true ]; then
  [ -n "${GITHUB_ACTION_PATH:-}" ] || die "GITHUB_ACTION_PATH is not set"
  command -v cargo >/dev/null 2>&1 || die "building from source needs cargo (a Rust toolchain) on the runner"
  cargo install --locked --profile dist --root "$dest" --path "$GITHUB_ACTION_PATH/crates/cli"
else
  case "$(uname -s)" in
    Linux) os=linux ;;
    Darwin) os=darwin ;;
    *) die "no gpu-trust release for $(uname -s); set build-from-source: true" ;;
  esac
  case "$(uname -m)" in
    x86_64 | amd64) arch=amd64 ;;
    aarch64 | arm64) arch=arm64 ;;
    *) die "no gpu-trust release for $(uname -m); set build-from-source: true" ;;
  esac
  name="gpu-trust-v$version-$os-$arch"
  base="${GPU_TRUST_RELEASES:-https://github.com/gpu-trust/gpu-trust/releases/download}/v$version"
  download="$(mktemp -d)"
  trap 'rm -rf "$download"' EXIT
  curl -fsSL --retry 3 -o "$download/$name.tar.gz" "$base/$name.tar.gz" ||
    die "cannot download $base/$name.tar.gz"
  if command -v sha256sum >/dev/null 2>&1; then
    actual="$(sha256sum "$download/$name.tar.gz" | cut -d' ' -f1)"
  else
    actual="$(shasum -a 256 "$download/$name.tar.gz" | cut -d' ' -f1)"
  fi
  expected="$(echo "${INPUT_SHA256:-}" | tr 'A-F' 'a-f' | tr -d '[:space:]')"
  if [ -z "$expected" ]; then
    curl -fsSL --retry 3 -o "$download/SHA256SUMS" "$base/SHA256SUMS" ||
      die "cannot download $base/SHA256SUMS (or give the input sha256)"
    expected="$(awk -v f="$name.tar.gz" '$2 == f { print $1 }' "$download/SHA256SUMS")"
    [ -n "$expected" ] || die "SHA256SUMS of v$version lists no $name.tar.gz"
  fi
  [ "$actual" = "$expected" ] || die "$name.tar.gz has SHA-256 $actual, not $expected: not installed"
  tar -xzf "$download/$name.tar.gz" -C "$download"
  install -m 0755 "$download/$name/gpu-trust" "$dest/bin/gpu-trust"
fi

"$dest/bin/gpu-trust" --version
if [ -n "${GITHUB_PATH:-}" ]; then
  echo "$dest/bin" >>"$GITHUB_PATH"
fi

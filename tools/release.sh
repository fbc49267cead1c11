#!/usr/bin/env bash
# Release archives of gpu-trust, for people who install it without a Rust toolchain.
#
#   tools/release.sh archive [--target TRIPLE] [--binary FILE] [--out DIR]
#       Builds the binary with the `dist` profile for TRIPLE (default: this machine's), unless
#       --binary names one already built, and writes DIR/gpu-trust-vVERSION-OS-ARCH.tar.gz: the
#       binary, shell completions (bash, zsh, fish), the man pages (generated from the command
#       definitions by the binary itself, so build on the platform the archive is for), LICENSE
#       and README.md, in a folder of the archive's name.
#   tools/release.sh manifest [--out DIR] [--require-all]
#       Writes DIR/SHA256SUMS over the archives in DIR, and DIR/gpu-trust.yaml, the krew plugin
#       manifest: .krew.yaml with the version and each platform's archive URL and SHA-256. A
#       platform whose archive is not in DIR is left out (and named on standard error); with
#       --require-all it is an error.
#
# DIR defaults to target/release-archives. The archives are reproducible: the same binary on the
# same commit gives the same bytes (file times are the commit's time, SOURCE_DATE_EPOCH when set;
# owners, modes and order are fixed; gzip stores no name or time), so SHA256SUMS and the krew
# manifest do not change when the step is run again. GNU tar is needed (`gtar` on macOS).
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

die() {
  echo "release.sh: $*" >&2
  exit 2
}

usage() {
  sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

# The workspace version, from Cargo.toml's [workspace.package].
version() {
  awk '
    /^\[workspace\.package\]/ { inside = 1; next }
    /^\[/ { inside = 0 }
    inside && /^version *=/ { gsub(/.*= *"|".*/, ""); print; exit }
  ' Cargo.toml
}

# GNU tar: `tar` where it is GNU tar, else `gtar`.
gnu_tar() {
  local t
  for t in tar gtar; do
    if command -v "$t" >/dev/null 2>&1 && "$t" --version 2>/dev/null | head -1 | grep -q 'GNU tar'; then
      echo "$t"
      return
    fi
  done
  die "GNU tar is needed (on macOS: brew install gnu-tar, which installs gtar)"
}

sha256() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d' ' -f1
  else
    shasum -a 256 "$1" | cut -d' ' -f1
  fi
}

# krew's os and arch names for a Rust target triple.
platform() {
  local os arch
  case "$1" in
    *-linux-*) os=linux ;;
    *-apple-darwin) os=darwin ;;
    *) die "no release platform for target $1" ;;
  esac
  case "$1" in
    x86_64-*) arch=amd64 ;;
    aarch64-*) arch=arm64 ;;
    *) die "no release architecture for target $1" ;;
  esac
  echo "$os-$arch"
}

host_target() {
  rustc -vV | awk '/^host:/ { print $2 }'
}

# The time every file of an archive carries: SOURCE_DATE_EPOCH, else the commit's time.
epoch() {
  if [ -n "${SOURCE_DATE_EPOCH:-}" ]; then
    echo "$SOURCE_DATE_EPOCH"
  else
    git -C "$root" log -1 --format=%ct 2>/dev/null ||
      die "not a git checkout: set SOURCE_DATE_EPOCH to the release commit's time"
  fi
}

cmd_archive() {
  local target="" binary="" out="target/release-archives"
  while [ $# -gt 0 ]; do
    case "$1" in
      --target) target="${2:?--target needs a value}"; shift 2 ;;
      --binary) binary="${2:?--binary needs a value}"; shift 2 ;;
      --out) out="${2:?--out needs a value}"; shift 2 ;;
      *) usage ;;
    esac
  done
  if [ -z "$binary" ]; then
    [ -n "$target" ] || target="$(host_target)"
    # Paths of this checkout and of cargo's sources are left out of the binary (panic locations),
    # so that where the checkout lies does not change its bytes.
    RUSTFLAGS="${RUSTFLAGS:-} --remap-path-prefix=$root=. --remap-path-prefix=${CARGO_HOME:-$HOME/.cargo}=cargo" \
      cargo build --profile dist --locked -p gpu-trust --target "$target"
    binary="target/$target/dist/gpu-trust"
  elif [ -z "$target" ]; then
    target="$(host_target)"
  fi
  [ -x "$binary" ] || die "$binary: not an executable"

  local v name stage tar t
  v="v$(version)"
  [ "$v" != "v" ] || die "no version in Cargo.toml"
  name="gpu-trust-$v-$(platform "$target")"
  t="$(epoch)"
  tar="$(gnu_tar)"
  mkdir -p "$out"
  stage="$(mktemp -d)"
  trap 'rm -rf "$stage"' EXIT

  local dir="$stage/$name"
  mkdir -p "$dir/completions" "$dir/man/man1"
  cp "$binary" "$dir/gpu-trust"
  "$dir/gpu-trust" completions bash >"$dir/completions/gpu-trust.bash"
  "$dir/gpu-trust" completions zsh >"$dir/completions/_gpu-trust"
  "$dir/gpu-trust" completions fish >"$dir/completions/gpu-trust.fish"
  "$dir/gpu-trust" manpages "$dir/man/man1"
  cp LICENSE README.md "$dir/"

  # Fixed modes (and, below, times, owners and order): only the content decides the bytes.
  find "$dir" -type d -exec chmod 0755 {} +
  find "$dir" -type f -exec chmod 0644 {} +
  chmod 0755 "$dir/gpu-trust"

  "$tar" --sort=name --format=gnu --owner=0 --group=0 --numeric-owner \
    --mtime="@$t" -C "$stage" -cf - "$name" | gzip -9 -n >"$out/$name.tar.gz"
  rm -rf "$stage"
  trap - EXIT
  echo "$out/$name.tar.gz"
}

# .krew.yaml with `{{ .TagName }}` replaced by the tag and each
# `{{addURIAndSha "URL" .TagName }}` line by `uri:` and `sha256:` of the archive URL names, read
# from DIR. An entry of the platform list (from its `- selector:` line to the next, or to a line
# indented less than its fields) whose archive is absent is dropped; an error with --require-all.
render_krew() {
  local dir="$1" tag="$2" require_all="$3"
  local line url file item="" in_item=0 keep=1 missing=0 out=""
  local item_re='^( *)- selector:' uri_re='^( *)\{\{addURIAndSha "([^"]+)" \.TagName *\}\}$'
  local field_indent=0
  while IFS= read -r line || [ -n "$line" ]; do
    # The template's own comments (how it is rendered) stay out of the manifest.
    [[ "$line" == \#* ]] && continue
    line="${line//\{\{ .TagName \}\}/$tag}"
    if [[ "$line" =~ $item_re ]]; then
      [ "$keep" = 1 ] && out+="$item"
      item="" keep=1 in_item=1 field_indent=$((${#BASH_REMATCH[1]} + 2))
    elif [ "$in_item" = 1 ] && [ -n "${line// /}" ]; then
      local lead="${line%%[! ]*}"
      if [ "${#lead}" -lt "$field_indent" ]; then
        [ "$keep" = 1 ] && out+="$item"
        item="" keep=1 in_item=0
      fi
    fi
    if [ "$in_item" = 0 ]; then
      out+="$line"$'\n'
    elif [[ "$line" =~ $uri_re ]]; then
      url="${BASH_REMATCH[2]}"
      file="$dir/${url##*/}"
      if [ -f "$file" ]; then
        item+="${BASH_REMATCH[1]}uri: $url"$'\n'"${BASH_REMATCH[1]}sha256: $(sha256 "$file")"$'\n'
      else
        echo "release.sh: ${url##*/} is not in $dir: its platform is left out of the krew manifest" >&2
        keep=0
        missing=$((missing + 1))
      fi
    else
      item+="$line"$'\n'
    fi
  done <.krew.yaml
  [ "$keep" = 1 ] && out+="$item"
  if [ "$missing" -gt 0 ] && [ "$require_all" = 1 ]; then
    die "$missing platform archives missing (--require-all)"
  fi
  printf '%s' "$out"
}

cmd_manifest() {
  local out="target/release-archives" require_all=0
  while [ $# -gt 0 ]; do
    case "$1" in
      --out) out="${2:?--out needs a value}"; shift 2 ;;
      --require-all) require_all=1; shift ;;
      *) usage ;;
    esac
  done
  local v tag archives=()
  v="$(version)"
  tag="v$v"
  shopt -s nullglob
  archives=("$out"/gpu-trust-"$tag"-*.tar.gz)
  shopt -u nullglob
  [ ${#archives[@]} -gt 0 ] || die "no gpu-trust-$tag-*.tar.gz in $out"
  (
    cd "$out"
    for a in "${archives[@]##*/}"; do
      printf '%s  %s\n' "$(sha256 "$a")" "$a"
    done | LC_ALL=C sort -k2 >SHA256SUMS
  )
  render_krew "$out" "$tag" "$require_all" >"$out/gpu-trust.yaml"
  echo "$out/SHA256SUMS"
  echo "$out/gpu-trust.yaml"
}

case "${1:-}" in
  archive) shift; cmd_archive "$@" ;;
  manifest) shift; cmd_manifest "$@" ;;
  *) usage ;;
esac

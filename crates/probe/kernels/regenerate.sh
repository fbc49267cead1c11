#!/usr/bin/env bash
# Regenerates probe.ptx, the PTX the probe embeds, from probe.cu with clang's NVPTX back end: no CUDA
# toolkit and no GPU needed. Run it after every change to probe.cu and commit both files.
#
#   crates/probe/kernels/regenerate.sh [OUTPUT]     # default: probe.ptx beside this script
#
# Needs clang with the NVPTX target (Debian and Ubuntu: `apt-get install clang`; CLANG=... picks another).
# The committed probe.ptx was produced by Debian clang 14.0.6; its header records the generator, the
# command and the POSIX `cksum` of the probe.cu it came from. tests/it/kernels.rs checks that cksum against
# probe.cu (so a stale probe.ptx fails the tests without clang), the entry points and their parameter
# types, and, where the same clang version is installed, that regenerating gives the committed bytes.
#
# Target and ISA. `.target sm_70` is Volta, the oldest compute capability in the GPU catalogue
# (crates/model/src/catalogue/data.rs; a test checks every catalogue GPU against it). PTX is forward
# compatible: the driver JIT-compiles PTX generated for compute capability X for any GPU of compute
# capability X or higher, Hopper and Blackwell included (CUDA Blackwell Compatibility Guide, section
# "Application Compatibility on Blackwell Architecture",
# https://docs.nvidia.com/cuda/blackwell-compatibility-guide/index.html). PTX ISA 6.0 is the lowest ISA
# with the sm_70 target (CUDA 9.0; PTX ISA release history,
# https://docs.nvidia.com/cuda/parallel-thread-execution/index.html#release-notes), and clang emits that
# minimum for sm_70; the kernels need nothing newer (%globaltimer, 64-bit atom.add and fma are all older).
# Every driver that runs a V100 loads ISA 6.0. This script refuses output with any other header.
#
# nvcc users can produce equivalent PTX with `nvcc -ptx -arch=compute_70 probe.cu`, but it writes its own
# toolkit's (newer) ISA version, which older drivers refuse: the committed file is clang's.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=${1:-"$here/probe.ptx"}
clang=${CLANG:-clang}

# The command as recorded in the header, run from this directory.
flags=(-x cuda --cuda-device-only -nocudainc -nocudalib --cuda-gpu-arch=sm_70 -O3 -S
    -include clang-cuda-shim.h)
command_line="clang ${flags[*]} probe.cu -o probe.ptx"

generator=$("$clang" --version | head -n 1)
sum=$(cksum < "$here/probe.cu")
tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp.out"' EXIT

(cd "$here" && "$clang" "${flags[@]}" probe.cu -o "$tmp")

for want in '.version 6.0' '.target sm_70' '.address_size 64'; do
    if ! grep -qxF "$want" "$tmp"; then
        echo "regenerate.sh: $clang did not write \`$want\`; the probe's PTX must keep it (see the comment at the top)" >&2
        exit 1
    fi
done

{
    printf '// gpu-trust probe kernels: PTX generated from probe.cu by regenerate.sh. Do not edit: regenerate.\n'
    printf '// source cksum: %s\n' "$sum"
    printf '// generator: %s\n' "$generator"
    printf '// command: %s\n' "$command_line"
    cat "$tmp"
} > "$tmp.out"
mv "$tmp.out" "$out"
echo "wrote $out" >&2

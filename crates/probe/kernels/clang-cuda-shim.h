// What nvcc and NVRTC provide to probe.cu without a header, for clang compiling it without a CUDA
// install (regenerate.sh force-includes this file; nothing else uses it).
//
// - __global__ / __device__: clang's CUDA attributes, which the CUDA headers would otherwise define.
// - threadIdx, blockIdx, blockDim, gridDim: clang's own resource header, which reads the PTX special
//   registers (%tid, %ctaid, %ntid, %nctaid).
// - atomicAdd on unsigned long long: clang's NVPTX built-in for a 64-bit atomic add on a generic address.

#pragma once

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))

#include <__clang_cuda_builtin_vars.h>

static __device__ inline unsigned long long atomicAdd(unsigned long long *address, unsigned long long value)
{
    return (unsigned long long)__nvvm_atom_add_gen_ll((long long *)address, (long long)value);
}

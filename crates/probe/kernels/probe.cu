// Kernels of gpu-trust probe, in CUDA C.
//
// The binary does not compile this file: it embeds probe.ptx, generated from it by regenerate.sh (beside
// this file), and hands that PTX to the driver's module loader, which compiles it for the GPU it runs on.
// The file uses only CUDA built-ins, so nvcc or NVRTC compile it as it is; clang, which regenerate.sh
// uses, gets the few built-ins it lacks without a CUDA install from clang-cuda-shim.h.
//
// Every entry point is `extern "C"` so that its name in the PTX is the name the loader asks for; the list of
// names lives in src/kernels.rs (ENTRY_POINTS), and tests/kernels.rs checks that it, this file and
// probe.ptx agree (names and parameter types) and that probe.ptx was generated from this very text.

typedef unsigned long long u64;

// Fixed arithmetic work: each thread runs `iters` dependent multiply-adds and stores the result, so the
// compiler cannot drop the loop. One block of it is the short latency kernel; a full grid of it is the unit
// of useful work in the utilisation scenario.
extern "C" __global__ void gt_work(float *out, unsigned int iters)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    float a = 1.0f + (float)(i & 7u) * 0.0001f;
    float b = 0.999f;
    for (unsigned int k = 0; k < iters; ++k) {
        a = a * b + 0.0001f;
    }
    out[i] = a;
}

// The GPU's global nanosecond timer.
static __device__ u64 gt_now()
{
    u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// The hog: every thread spins on the global timer until `duration_ns` has passed since it started, so the
// kernel holds its SMs for that long whatever else wants them.
extern "C" __global__ void gt_spin(u64 *out, u64 duration_ns)
{
    u64 start = gt_now();
    u64 spins = 0;
    while (gt_now() - start < duration_ns) {
        ++spins;
    }
    if (threadIdx.x == 0) {
        out[blockIdx.x] = spins;
    }
}

// Memory-bound copy, grid-stride, one 64-bit word per access.
extern "C" __global__ void gt_copy(const u64 *src, u64 *dst, u64 n)
{
    u64 stride = (u64)blockDim.x * (u64)gridDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        dst[i] = src[i];
    }
}

// Writes through a pointer the host chose to be invalid: an illegal memory access in this context.
extern "C" __global__ void gt_fault(unsigned int *bad)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        *((volatile unsigned int *)bad) = 0xdeadu;
    }
}

// The value word `i` holds under a pattern: mode 0 is the constant `seed` (the marker), mode 1 a
// position-dependent mix of `seed` and `i` (the victim's checksum pattern).
static __device__ u64 gt_pattern(u64 seed, u64 i, unsigned int mode)
{
    if (mode == 0u) {
        return seed;
    }
    u64 x = seed ^ (i * 0x9E3779B97F4A7C15ull);
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    return x;
}

extern "C" __global__ void gt_fill(u64 *p, u64 n, u64 seed, unsigned int mode)
{
    u64 stride = (u64)blockDim.x * (u64)gridDim.x;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        p[i] = gt_pattern(seed, i, mode);
    }
}

// Counts the words that hold the pattern; the count is added to `*matches`.
extern "C" __global__ void gt_count(const u64 *p, u64 n, u64 seed, unsigned int mode, u64 *matches)
{
    u64 stride = (u64)blockDim.x * (u64)gridDim.x;
    u64 local = 0;
    for (u64 i = (u64)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        if (p[i] == gt_pattern(seed, i, mode)) {
            ++local;
        }
    }
    if (local != 0) {
        atomicAdd(matches, local);
    }
}

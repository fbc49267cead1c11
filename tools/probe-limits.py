#!/usr/bin/env python3
"""Declared against enforced: how much device memory each of N processes can take at the same time.

    tools/probe-limits.py [--processes N] [--first K] [--device I] [--label TEXT] [--hold-secs S] > result.json

Each of N worker processes (this script again, with --worker) opens GPU I through the CUDA driver API
(libcuda.so.1 only, through ctypes: no CUDA toolkit, no Python package), reads cuMemGetInfo, then takes
device memory in chunks of 1 GiB, halving the chunk on each refusal down to 1 MiB, until nothing more is
given. It reports what it holds and keeps holding it until every worker has reported, so the figures are
what the processes held *at the same time*. Then all free their memory and exit. With --first K, K of
them take and hold their memory before the others start (two processes of one pod, then a neighbour).

What the figures answer depends on the environment the caller sets, which every worker inherits:

  * an MPS client (CUDA_MPS_PIPE_DIRECTORY naming a running control daemon) under a per-client pinned
    memory limit (`set_default_device_pinned_mem_limit`, as the device plugin's MPS daemon sets it, or
    CUDA_MPS_PINNED_DEVICE_MEM_LIMIT): whether the limit holds, and whether two processes of one
    container get one share or two;
  * a limit that only a library would enforce (HAMi-core reads CUDA_DEVICE_MEMORY_LIMIT in its preloaded
    libvgpu.so), set without the library: whether the variable alone limits anything;
  * nothing: what one process can take of the whole GPU.

The JSON on standard output records the environment variables that decide it (CUDA_*, NVIDIA_*,
LD_PRELOAD), per process the memory free before, the memory taken, the chunks and the error that stopped
it (`stoppedAt` names the call when the process was refused before its first allocation, e.g. its
context), and the sum. Every step is bounded (--hold-secs, default 30 s, for the whole run). It never changes a
GPU setting. Exit status: 0 when every worker reported, 1 when one failed (its error is in the JSON),
2 when the script could not start.
"""

import argparse
import ctypes
import json
import os
import select
import subprocess
import sys
import time

MIB = 1024 * 1024
CUDA_SUCCESS = 0
CUDA_ERROR_OUT_OF_MEMORY = 2


class CudaError(RuntimeError):
    """A driver call that failed: which call, and its CUresult."""

    def __init__(self, what, code, name):
        super().__init__(f"{what}: {name}")
        self.what = what
        self.code = code
        self.name = name


class Driver:
    """The few CUDA driver entry points a worker needs, from libcuda.so.1."""

    def __init__(self):
        try:
            self.lib = ctypes.CDLL("libcuda.so.1")
        except OSError as e:
            raise RuntimeError(f"libcuda.so.1 could not be loaded: {e}") from e
        lib = self.lib
        lib.cuInit.argtypes = [ctypes.c_uint]
        lib.cuDeviceGet.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.c_int]
        lib.cuDeviceGetName.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
        lib.cuDevicePrimaryCtxRetain.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int]
        lib.cuDevicePrimaryCtxRelease_v2.argtypes = [ctypes.c_int]
        lib.cuCtxSetCurrent.argtypes = [ctypes.c_void_p]
        lib.cuMemGetInfo_v2.argtypes = [ctypes.POINTER(ctypes.c_size_t), ctypes.POINTER(ctypes.c_size_t)]
        lib.cuMemAlloc_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t]
        lib.cuMemFree_v2.argtypes = [ctypes.c_uint64]
        lib.cuGetErrorName.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
        for name in ("cuInit", "cuDeviceGet", "cuDeviceGetName", "cuDevicePrimaryCtxRetain",
                     "cuDevicePrimaryCtxRelease_v2", "cuCtxSetCurrent", "cuMemGetInfo_v2",
                     "cuMemAlloc_v2", "cuMemFree_v2", "cuGetErrorName"):
            getattr(lib, name).restype = ctypes.c_int

    def name(self, code):
        s = ctypes.c_char_p()
        if self.lib.cuGetErrorName(code, ctypes.byref(s)) == CUDA_SUCCESS and s.value:
            return s.value.decode()
        return f"CUresult {code}"

    def check(self, code, what):
        if code != CUDA_SUCCESS:
            raise CudaError(what, code, self.name(code))


def worker(device, release_after):
    """One process: take what it can, report it on stdout, hold it until told (or the bound passes)."""
    out = {"pid": os.getpid()}
    held = []
    drv = None
    try:
        drv = Driver()
        drv.check(drv.lib.cuInit(0), "cuInit")
        dev = ctypes.c_int()
        drv.check(drv.lib.cuDeviceGet(ctypes.byref(dev), device), "cuDeviceGet")
        buf = ctypes.create_string_buffer(256)
        drv.check(drv.lib.cuDeviceGetName(buf, 256, dev.value), "cuDeviceGetName")
        out["device"] = buf.value.decode(errors="replace")
        ctx = ctypes.c_void_p()
        drv.check(drv.lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev.value), "cuDevicePrimaryCtxRetain")
        drv.check(drv.lib.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
        free, total = ctypes.c_size_t(), ctypes.c_size_t()
        drv.check(drv.lib.cuMemGetInfo_v2(ctypes.byref(free), ctypes.byref(total)), "cuMemGetInfo")
        out["freeBeforeMiB"] = free.value // MIB
        out["totalMiB"] = total.value // MIB
        chunk = 1024
        taken = 0
        refusals = 0
        stop = None
        t0 = time.monotonic()
        while chunk >= 1:
            p = ctypes.c_uint64()
            rc = drv.lib.cuMemAlloc_v2(ctypes.byref(p), chunk * MIB)
            if rc == CUDA_SUCCESS:
                held.append(p.value)
                taken += chunk
                continue
            refusals += 1
            stop = drv.name(rc)
            if rc != CUDA_ERROR_OUT_OF_MEMORY:
                break
            chunk //= 2
        out["allocatedMiB"] = taken
        out["allocations"] = len(held)
        out["refusals"] = refusals
        out["stoppedBy"] = stop
        out["allocSeconds"] = round(time.monotonic() - t0, 3)
        drv.check(drv.lib.cuMemGetInfo_v2(ctypes.byref(free), ctypes.byref(total)), "cuMemGetInfo")
        out["freeAfterMiB"] = free.value // MIB
    except CudaError as e:
        if e.code == CUDA_ERROR_OUT_OF_MEMORY and not held:
            # Refused before its first allocation (a context needs device memory too): a measurement,
            # not a failure of the run.
            out.update(allocatedMiB=0, allocations=0, stoppedBy=e.name, stoppedAt=e.what)
        else:
            out["error"] = str(e)
    except RuntimeError as e:
        out["error"] = str(e)
    print(json.dumps(out), flush=True)
    # Hold until the parent writes a line (or closes stdin), or the bound passes.
    select.select([sys.stdin], [], [], release_after)
    if drv is not None:
        for p in held:
            drv.lib.cuMemFree_v2(p)
    return 0 if "error" not in out else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--processes", type=int, default=1)
    ap.add_argument("--device", type=int, default=0)
    ap.add_argument("--label", default="")
    ap.add_argument("--hold-secs", type=float, default=30.0)
    ap.add_argument("--first", type=int, default=0,
                    help="start this many processes, wait until they hold their memory, then start the rest")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args.device, args.hold_secs)
    if not 1 <= args.processes <= 16 or args.hold_secs <= 0 or not 0 <= args.first <= args.processes:
        print("probe-limits: --processes must be 1 to 16, --first at most --processes and --hold-secs positive",
              file=sys.stderr)
        return 2

    env_keys = sorted(k for k in os.environ if k.startswith(("CUDA_", "NVIDIA_")) or k == "LD_PRELOAD")
    result = {
        "script": "tools/probe-limits.py",
        "label": args.label,
        "startedAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "device": args.device,
        "environment": {k: os.environ[k] for k in env_keys},
        "processes": [],
    }
    deadline = time.monotonic() + args.hold_secs
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--device", str(args.device),
           "--hold-secs", str(args.hold_secs)]
    def start():
        return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)

    def collect(w, wave):
        left = max(0.0, deadline - time.monotonic())
        ready, _, _ = select.select([w.stdout], [], [], left)
        line = w.stdout.readline() if ready else ""
        try:
            rep = json.loads(line) if line else {"error": "no report before the time bound"}
        except json.JSONDecodeError:
            rep = {"error": f"unreadable report: {line[:200]!r}"}
        rep["wave"] = wave
        result["processes"].append(rep)
        return "error" in rep

    # With --first K: K processes take their memory and hold it before the others start (wave 1, then
    # wave 2); without it, all start together (wave 1).
    first = args.first or args.processes
    workers = [start() for _ in range(first)]
    failed = 0
    for w in workers:
        failed |= collect(w, 1)
    if first < args.processes:
        later = [start() for _ in range(args.processes - first)]
        for w in later:
            failed |= collect(w, 2)
        workers += later
    # Every worker has reported while holding its memory: release them all.
    for w in workers:
        try:
            w.stdin.write("release\n")
            w.stdin.close()
        except (BrokenPipeError, OSError):
            pass
    for w in workers:
        try:
            w.wait(timeout=max(1.0, deadline - time.monotonic() + 5))
        except subprocess.TimeoutExpired:
            w.kill()
            w.wait()
        err = w.stderr.read().strip()
        if err:
            result.setdefault("stderr", []).append(err[:2000])
    result["sumAllocatedMiB"] = sum(p.get("allocatedMiB", 0) for p in result["processes"])
    print(json.dumps(result, indent=2))
    return failed


if __name__ == "__main__":
    sys.exit(main())

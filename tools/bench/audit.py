#!/usr/bin/env python3
"""Audit benchmark: wall time, CPU time and peak memory of `gpu-trust audit` on synthetic clusters.

Reproduces the audit figures in docs/benchmarks.md:

    python3 tools/bench/audit.py                 # everything (about 35 minutes on two cores)
    python3 tools/bench/audit.py --only pool     # one section: sizes, pool, policy, pods, tenants,
                                                 # checkov, minified
    python3 tools/bench/audit.py --quick         # smaller clusters and one run each, to try the script

Sections:
  sizes    200 nodes / 6,000 pods, 2,000 / 60,000 and 5,000 / 150,000, as a YAML List and a JSON
           List, indented and minified; each JSON beside a plain `json.load` of the same file in Python.
  pool     a time-sliced pool of 40 nodes open to 1,000 mutually distrusting tenants (one notebook
           Deployment each): every pair may meet. The audit as JSON, SARIF, table and HTML, with the
           size of each report and the SARIF's result count.
  policy   `gpu-trust policy check` of a policy of 10,000 tenants, as a table and as JSON.
  pods     growth with cluster size: 30 pods per node, the same 50 tenants at every size.
  tenants  growth with tenants per GPU: one cluster size, more and more tenants sharing its GPUs.
  checkov  the same folder of manifests (a few hundred files) through gpu-trust and through checkov,
           which this script installs from PyPI into a virtualenv under the work folder.
  minified the 60,000-pod JSON List as gen-cluster indents it and minified to one line (as an API
           response or `jq -c` gives it): positions must cost the same on one long line. Each
           beside a plain `json.load` of the same file.

Clusters come from tools/gen-cluster (deterministic: the same arguments give the same bytes) and
are written under the work folder (default target/bench). Each measurement is one child process
timed with os.wait4; its peak RSS comes from GNU time (`/usr/bin/time`, Debian package `time`) when
installed, since wait4's figure also carries this script's own peak (see `measure`). Times are medians of --runs
runs; peak RSS is the largest seen. Results are printed as Markdown tables and written as JSON.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RELEASE = ROOT / "target" / "release"
GPU_TRUST = RELEASE / "gpu-trust"
GEN = RELEASE / "gen-cluster"

# Checkov as the peer that scans the same manifests (its own version pinned for comparable figures).
CHECKOV_VERSION = "3.3.30"


# GNU time, when installed (Debian package `time`), reports the peak RSS of the command alone.
# `ru_maxrss` from wait4 does not: Linux keeps a process's high-water mark across execve, and Python
# starts children with vfork, so every child's figure is at least this script's own peak (which the
# sections that read reports raise to hundreds of MiB).
GNU_TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None


def measure(cmd, stdout=subprocess.DEVNULL, env=None):
    """Runs `cmd` once; returns wall seconds, CPU seconds (user + system), peak RSS in MiB, exit code."""
    # The load average as the run starts: on a shared machine, wall time says little without it.
    load = os.getloadavg()[0]
    rss_file = None
    if GNU_TIME:
        fd, rss_file = tempfile.mkstemp(prefix="gpu-trust-bench-rss-")
        os.close(fd)
        cmd = [GNU_TIME, "-f", "%M", "-o", rss_file, *map(str, cmd)]
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.PIPE, env=env)
    # Read stderr before waiting so that a chatty child cannot block on a full pipe.
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    rss_kib = usage.ru_maxrss
    if rss_file:
        text = Path(rss_file).read_text().strip().splitlines()
        os.unlink(rss_file)
        # GNU time exits with the command's code; its file's last line is %M in KiB.
        if text and text[-1].isdigit():
            rss_kib = int(text[-1])
    return {
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "sys_s": usage.ru_stime,
        "rss_mib": rss_kib / 1024.0,
        "rss_source": "GNU time" if rss_file else "wait4 (includes this script's own peak)",
        "code": proc.returncode,
        "load": load,
        "stderr": err.decode("utf-8", "replace")[-2000:],
    }


def repeat(cmd, runs, ok_codes=(0, 1), stdout=subprocess.DEVNULL, env=None):
    """Median wall and CPU time and the largest peak RSS over `runs` runs of `cmd`."""
    samples = []
    for _ in range(runs):
        m = measure(cmd, stdout=stdout, env=env)
        if m["code"] not in ok_codes:
            sys.exit(f"{' '.join(map(str, cmd))} exited {m['code']}:\n{m['stderr']}")
        samples.append(m)
    return {
        "wall_s": statistics.median(s["wall_s"] for s in samples),
        "cpu_s": statistics.median(s["cpu_s"] for s in samples),
        "sys_s": statistics.median(s["sys_s"] for s in samples),
        "wall_all_s": [round(s["wall_s"], 3) for s in samples],
        "rss_mib": max(s["rss_mib"] for s in samples),
        "load": max(s["load"] for s in samples),
        "runs": runs,
        "code": samples[-1]["code"],
    }


def build():
    subprocess.run(
        ["cargo", "build", "--release", "--locked", "-p", "gpu-trust", "-p", "gpu-trust-gen"],
        cwd=ROOT,
        check=True,
    )


def generate(work, nodes, pods, tenants, fmt, seed=1, shape="spread"):
    """Writes a cluster (and its policy) unless the same one is already there; returns the paths."""
    stem = f"n{nodes}-p{pods}-t{tenants}-s{seed}" + ("" if shape == "spread" else f"-{shape}")
    suffix = {"json-min": "min.json"}.get(fmt, fmt)
    out = work / (f"{stem}.{suffix}" if fmt != "dir" else stem)
    policy = work / f"{stem}-policy.yaml"
    if not out.exists() or not policy.exists():
        cmd = [GEN, "--nodes", str(nodes), "--pods", str(pods), "--tenants", str(tenants),
               "--seed", str(seed), "--format", fmt, "--shape", shape, "--out", out,
               "--policy", policy]
        subprocess.run(cmd, check=True)
    return out, policy


def audit_cmd(inputs, policy, report, fmt="json"):
    return [GPU_TRUST, "audit", inputs, "--policy", policy, "--format", fmt,
            "--output", report, "--today", "2026-12-01"]


def helper(code, *args):
    """Runs `code` in a separate Python process and returns the JSON it prints. Large reports are
    read there, never in this process: a child's peak RSS as the kernel reports it includes the
    peak of the process it was forked from, so this one must stay small."""
    out = subprocess.run([sys.executable, "-c", code, *map(str, args)], check=True,
                         capture_output=True).stdout
    return json.loads(out)


REPORT_COUNTS = """
import json, os, sys
with open(sys.argv[1], "rb") as f:
    r = json.load(f)
print(json.dumps({"findings": len(r.get("findings", [])), "groups": len(r.get("groups", [])),
                  "report_mib": os.path.getsize(sys.argv[1]) / 2**20}))
"""

# Pairs of tenants that share anything below the API server, from the report's groups: two tenants
# of a group meet unless the group is `permitted` and neither is in its `permittedTenants`.
MEETING_PAIRS = """
import itertools, json, sys
with open(sys.argv[1], "rb") as f:
    r = json.load(f)
pairs = set()
for g in r.get("groups", []):
    if g["level"] == "control-plane":
        continue
    may = set(g.get("permittedTenants", []))
    for a, b in itertools.combinations(g["tenants"], 2):
        if not g["permitted"] or a in may or b in may:
            pairs.add((a, b))
print(json.dumps(len(pairs)))
"""

SARIF_COUNTS = """
import json, os, sys
with open(sys.argv[1], "rb") as f:
    r = json.load(f)
print(json.dumps({"results": sum(len(run.get("results", [])) for run in r.get("runs", [])),
                  "rules": sum(len(run["tool"]["driver"].get("rules", [])) for run in r.get("runs", [])),
                  "report_mib": os.path.getsize(sys.argv[1]) / 2**20}))
"""

# Mean and largest number of distinct tenants on one GPU or MIG instance, as `gpu-trust inventory`
# reads the cluster (pods that may land on the device count).
TENANTS_PER_GPU = """
import json, subprocess, sys
inv = json.loads(subprocess.run(sys.argv[1:], check=True, capture_output=True).stdout)
counts = [len(t) for n in inv.get("nodes", []) for d in n.get("devices", [])
          for t in [{o.get("tenant") for o in d.get("occupants", [])}] if t]
print(json.dumps([sum(counts) / len(counts) if counts else 0.0, max(counts, default=0)]))
"""


def report_counts(report):
    return helper(REPORT_COUNTS, report)


def tenants_per_gpu(cluster, policy):
    mean, largest = helper(TENANTS_PER_GPU, GPU_TRUST, "inventory", cluster, "--policy", policy,
                           "--format", "json")
    return mean, largest


def python_json_load(path, runs):
    code = "import json, sys\nwith open(sys.argv[1], 'rb') as f:\n    json.load(f)\n"
    return repeat([sys.executable, "-c", code, path], runs, ok_codes=(0,))


def audit_row(work, nodes, pods, tenants, fmt, runs, per_gpu=False):
    """Generates one cluster, times its audit and returns the table row (and the cluster's path)."""
    cluster, policy = generate(work, nodes, pods, tenants, fmt)
    report = work / f"report-{cluster.stem}-{fmt}.json"
    m = repeat(audit_cmd(cluster, policy, report), runs)
    row = {"nodes": nodes, "pods": pods, "tenants": tenants, "format": fmt,
           "input_mib": cluster.stat().st_size / 2**20, **m, **report_counts(report)}
    if per_gpu:
        row["tenants_per_gpu_mean"], row["tenants_per_gpu_max"] = tenants_per_gpu(cluster, policy)
    return row, cluster


def section_sizes(work, runs, quick):
    shapes = [(200, 6000, 20), (2000, 60000, 200), (5000, 150000, 500)]
    if quick:
        shapes = [(20, 600, 4), (200, 6000, 20)]
    rows = []
    for nodes, pods, tenants in shapes:
        for fmt in ("yaml", "json", "json-min"):
            row, cluster = audit_row(work, nodes, pods, tenants, fmt, runs)
            if fmt != "yaml":
                row["python_json_load"] = python_json_load(cluster, runs)
            rows.append(row)
            print(f"  sizes: {nodes} nodes / {pods} pods {fmt}: {row['wall_s']:.2f} s, "
                  f"{row['rss_mib']:.0f} MiB", file=sys.stderr)
    return rows


def section_pool(work, runs, quick):
    """Every pair of 1,000 tenants may meet on one time-sliced pool: the report must stay small."""
    nodes, tenants = (40, 1000) if not quick else (10, 100)
    cluster, policy = generate(work, nodes, 0, tenants, "yaml", shape="shared-pool")
    out = {"nodes": nodes, "tenants": tenants, "pairs": tenants * (tenants - 1) // 2,
           "input_mib": cluster.stat().st_size / 2**20}
    for fmt in ("json", "sarif", "table", "html"):
        report = work / f"report-pool-{tenants}.{fmt}"
        m = repeat(audit_cmd(cluster, policy, report, fmt), runs)
        m["report_mib"] = report.stat().st_size / 2**20
        if fmt == "json":
            m.update(report_counts(report))
        if fmt == "sarif":
            m.update(helper(SARIF_COUNTS, report))
        out[fmt] = m
        print(f"  pool: {tenants} tenants, {fmt}: {m['wall_s']:.2f} s, {m['rss_mib']:.0f} MiB, "
              f"{m['report_mib']:.2f} MiB", file=sys.stderr)
    return out


def section_policy(work, runs, quick):
    """`policy check` of a policy of 10,000 tenants (the generator's, with 5,000 relations)."""
    tenants = 10000 if not quick else 1000
    _, policy = generate(work, 0, 0, tenants, "yaml")
    out = {"tenants": tenants, "policy_mib": policy.stat().st_size / 2**20}
    for fmt in ("table", "json"):
        report = work / f"policy-check-{tenants}.{fmt}"
        cmd = [GPU_TRUST, "policy", "check", policy, "--format", fmt, "--output", report,
               "--today", "2026-12-01"]
        m = repeat(cmd, runs, ok_codes=(0,))
        m["report_mib"] = report.stat().st_size / 2**20
        out[fmt] = m
        print(f"  policy: {tenants} tenants, {fmt}: {m['wall_s']:.2f} s, {m['rss_mib']:.0f} MiB",
              file=sys.stderr)
    return out


def section_pods(work, runs, quick):
    # The same tenants at every size, so the pairs of tenants that meet stay the same while pods and
    # nodes grow 100-fold: the time per pod must stay flat.
    pods_list = [1500, 3000, 6000, 15000, 30000, 60000, 150000]
    tenants = 50
    if quick:
        pods_list, tenants = [300, 600, 1500], 5
    rows = []
    for pods in pods_list:
        row, _ = audit_row(work, pods // 30, pods, tenants, "json", runs, per_gpu=True)
        rows.append(row)
        print(f"  pods: {pods}: {row['wall_s']:.2f} s", file=sys.stderr)
    return rows


def section_tenants(work, runs, quick):
    nodes, pods = (500, 15000) if not quick else (50, 1500)
    tenant_list = [1, 3, 10, 30, 100, 300, 1000] if not quick else [1, 10, 100]
    rows = []
    for tenants in tenant_list:
        row, cluster = audit_row(work, nodes, pods, tenants, "json", runs, per_gpu=True)
        row["pairs"] = helper(MEETING_PAIRS, work / f"report-{cluster.stem}-json.json")
        rows.append(row)
        print(f"  tenants: {tenants}: {row['wall_s']:.2f} s, "
              f"{row['tenants_per_gpu_mean']:.1f} tenants per GPU", file=sys.stderr)
    return rows


# Rewrites a JSON file on one line, in a child process (the parse is large).
MINIFY = """
import json, sys
with open(sys.argv[1], "rb") as f:
    doc = json.load(f)
with open(sys.argv[2], "w") as f:
    json.dump(doc, f, separators=(",", ":"))
print("null")
"""


def section_minified(work, runs, quick):
    nodes, pods, tenants = (2000, 60000, 200) if not quick else (200, 6000, 20)
    rows = []
    for layout in ("indented", "minified"):
        cluster, policy = generate(work, nodes, pods, tenants, "json")
        if layout == "minified":
            one_line = cluster.with_name(f"{cluster.stem}-minified.json")
            if not one_line.exists():
                helper(MINIFY, cluster, one_line)
            cluster = one_line
        report = work / f"report-{cluster.stem}-{layout}.json"
        m = repeat(audit_cmd(cluster, policy, report), runs)
        lines = sum(1 for _ in open(cluster, "rb"))
        rows.append({"layout": layout, "nodes": nodes, "pods": pods, "tenants": tenants,
                     "lines": lines, "input_mib": cluster.stat().st_size / 2**20, **m,
                     **report_counts(report),
                     "python_json_load": python_json_load(cluster, runs)})
        print(f"  minified: {layout}: {m['wall_s']:.2f} s", file=sys.stderr)
    return rows


def checkov_bin(work):
    venv = work / "checkov-venv"
    exe = venv / "bin" / "checkov"
    if not exe.exists():
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        subprocess.run([venv / "bin" / "pip", "install", "--quiet", f"checkov=={CHECKOV_VERSION}"],
                       check=True)
    version = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout.strip()
    return exe, version


def section_checkov(work, runs, quick):
    nodes, pods, tenants = (60, 2000, 20) if not quick else (10, 200, 4)
    folder, policy = generate(work, nodes, pods, tenants, "dir")
    files = sorted(folder.glob("*.yaml"))
    exe, version = checkov_bin(work)
    report = work / "report-checkov-folder.json"
    ours = repeat(audit_cmd(folder, policy, report), runs)
    # Offline: no download of external checks or of severities; JSON to a file as we write ours.
    env = dict(os.environ, BC_SKIP_MAPPING="TRUE")
    with open(work / "checkov.json", "wb") as out:
        theirs = repeat([exe, "-d", folder, "--framework", "kubernetes", "-o", "json",
                         "--skip-download", "--quiet"], runs, ok_codes=(0, 1), stdout=out,
                        env=env)
    objects = sum(f.read_text().count("\n---\n") + 1 for f in files)
    return {"files": len(files), "objects": objects, "nodes": nodes, "pods": pods,
            "checkov_version": version, "gpu_trust": ours, "checkov": theirs,
            "ratio": theirs["wall_s"] / ours["wall_s"] if ours["wall_s"] else None}


def fmt_mib(v):
    return f"{v:,.0f} MiB"


def ratio(audit, py):
    """The audit's wall and CPU time as fractions of `json.load`'s (issue 14's target: at most 0.5
    of the wall time for the 150,000-pod dump)."""
    if not py or not py["wall_s"] or not py["cpu_s"]:
        return "-"
    return f"{audit['wall_s'] / py['wall_s']:.2f}, {audit['cpu_s'] / py['cpu_s']:.2f}"


def load(m):
    """The load average as the run (the most loaded of its runs) started."""
    return f"{m['load']:.1f}" if "load" in m else "-"


def markdown(results):
    lines = []
    if "sizes" in results:
        lines += ["| input | size | audit wall | CPU (user+sys) | peak RSS | findings | report | "
                  "Python `json.load` of the same file (wall, CPU, peak RSS) | "
                  "audit / `json.load` (wall, CPU) | load |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        names = {"yaml": "YAML", "json": "JSON", "json-min": "JSON minified"}
        for r in results["sizes"]:
            py = r.get("python_json_load")
            py_text = (f"{py['wall_s']:.2f} s, {py['cpu_s']:.2f} s, {fmt_mib(py['rss_mib'])}"
                       if py else "-")
            lines.append(
                f"| {r['nodes']:,} nodes / {r['pods']:,} pods / {r['tenants']} tenants, "
                f"{names[r['format']]} | {r['input_mib']:,.0f} MiB | {r['wall_s']:.2f} s | "
                f"{r['cpu_s']:.2f} s | {fmt_mib(r['rss_mib'])} | {r['findings']:,} | "
                f"{r['report_mib']:,.1f} MiB | {py_text} | {ratio(r, py)} | {load(r)} |")
        lines.append("")
    if "pool" in results:
        p = results["pool"]
        lines += [f"{p['nodes']} nodes, {p['tenants']:,} tenants, {p['pairs']:,} pairs that may meet "
                  f"({p['input_mib']:.1f} MiB of YAML).", "",
                  "| format | wall | CPU | peak RSS | report | findings / results |",
                  "|---|---:|---:|---:|---:|---:|"]
        for fmt in ("json", "sarif", "table", "html"):
            m = p[fmt]
            count = (f"{m['findings']:,} findings, {m['groups']} groups" if fmt == "json" else
                     f"{m['results']:,} results, {m['rules']} rules" if fmt == "sarif" else "-")
            lines.append(f"| {fmt} | {m['wall_s']:.2f} s | {m['cpu_s']:.2f} s | "
                         f"{fmt_mib(m['rss_mib'])} | {m['report_mib']:.2f} MiB | {count} |")
        lines.append("")
    if "policy" in results:
        p = results["policy"]
        lines += [f"A policy of {p['tenants']:,} tenants ({p['policy_mib']:.1f} MiB).", "",
                  "| format | wall | CPU | peak RSS | output |", "|---|---:|---:|---:|---:|"]
        for fmt in ("table", "json"):
            m = p[fmt]
            lines.append(f"| {fmt} | {m['wall_s']:.2f} s | {m['cpu_s']:.2f} s | "
                         f"{fmt_mib(m['rss_mib'])} | {m['report_mib']:.1f} MiB |")
        lines.append("")
    # The growth tables share their first columns.
    def growth(r):
        return (f"| {r['nodes']:,} | {r['pods']:,} | {r['tenants']} | "
                f"{r['tenants_per_gpu_mean']:.1f} / {r['tenants_per_gpu_max']} | "
                f"{r['wall_s']:.2f} s | {r['cpu_s']:.2f} s | ")

    growth_head = "| nodes | pods | tenants | tenants per GPU (mean / max) | wall | CPU | "
    if "pods" in results:
        lines += [growth_head + "µs per pod (CPU) | peak RSS | findings | load |",
                  "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        lines += [growth(r) + f"{1e6 * r['cpu_s'] / r['pods']:.0f} | {fmt_mib(r['rss_mib'])} | "
                  f"{r['findings']:,} | {load(r)} |" for r in results["pods"]]
        lines.append("")
    if "tenants" in results:
        lines += [growth_head + "peak RSS | pairs that meet | groups | findings | report | load |",
                  "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        lines += [growth(r) + f"{fmt_mib(r['rss_mib'])} | {r['pairs']:,} | {r['groups']:,} | "
                  f"{r['findings']:,} | {r['report_mib']:.1f} MiB | {load(r)} |"
                  for r in results["tenants"]]
        lines.append("")
    if "minified" in results:
        lines += ["| input | lines | size | audit wall | CPU (user+sys) | peak RSS | findings | "
                  "Python `json.load` (wall, CPU, peak RSS) | audit / `json.load` (wall, CPU) | "
                  "load |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for r in results["minified"]:
            py = r.get("python_json_load")
            py_text = (f"{py['wall_s']:.2f} s, {py['cpu_s']:.2f} s, {fmt_mib(py['rss_mib'])}"
                       if py else "-")
            lines.append(
                f"| {r['nodes']:,} nodes / {r['pods']:,} pods / {r['tenants']} tenants, JSON "
                f"{r['layout']} | {r['lines']:,} | {r['input_mib']:,.0f} MiB | {r['wall_s']:.2f} s | "
                f"{r['cpu_s']:.2f} s | {fmt_mib(r['rss_mib'])} | {r['findings']:,} | {py_text} | "
                f"{ratio(r, py)} | {load(r)} |")
        lines.append("")
    if "checkov" in results:
        c = results["checkov"]
        lines += [f"{c['files']} files, {c['objects']:,} objects ({c['nodes']} nodes, {c['pods']:,} "
                  f"pods); checkov {c['checkov_version']}.", "",
                  "| tool | wall | CPU | peak RSS | load |", "|---|---:|---:|---:|---:|"]
        for name, key in (("gpu-trust audit", "gpu_trust"), ("checkov --framework kubernetes",
                                                              "checkov")):
            m = c[key]
            lines.append(f"| {name} | {m['wall_s']:.2f} s | {m['cpu_s']:.2f} s | "
                         f"{fmt_mib(m['rss_mib'])} | {load(m)} |")
        lines += ["", f"checkov takes {c['ratio']:.0f}x the wall time of gpu-trust."]
        lines.append("")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append",
                        choices=["sizes", "pool", "policy", "pods", "tenants", "checkov",
                                 "minified"],
                        help="run only this section (repeatable)")
    parser.add_argument("--runs", type=int, default=3, help="runs per measurement (median)")
    parser.add_argument("--quick", action="store_true", help="small clusters, one run each")
    parser.add_argument("--work", type=Path, default=ROOT / "target" / "bench",
                        help="folder for clusters, reports and the checkov virtualenv")
    parser.add_argument("--no-build", action="store_true", help="use the binaries as built")
    args = parser.parse_args()
    runs = 1 if args.quick else max(1, args.runs)
    args.work.mkdir(parents=True, exist_ok=True)
    if not args.no_build:
        build()
    sections = args.only or ["sizes", "pool", "policy", "pods", "tenants", "checkov", "minified"]
    results = {"machine": {"cpus": os.cpu_count(), "processor": platform.processor() or
                           platform.machine(), "python": platform.python_version()},
               "runs": runs}
    for name in sections:
        print(f"== {name}", file=sys.stderr)
        results[name] = globals()[f"section_{name}"](args.work, runs, args.quick)
        # Written after every section, so that an interrupted run keeps what it measured.
        (args.work / "results.json").write_text(json.dumps(results, indent=2, default=str) + "\n")
    print(markdown(results))


if __name__ == "__main__":
    main()

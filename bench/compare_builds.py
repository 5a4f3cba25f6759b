#!/usr/bin/python3
"""Issue 14's figures, before and after, in one run on one machine.

Runs two builds of trainmem_bench (the code before and after a change) back
to back on the same benchmarks and prints one Markdown table: instructions
per call of the named function (valgrind callgrind, lazy binding off,
inclusive instructions divided by calls: they do not depend on the load)
and CPU time (Google Benchmark, median of --repetitions runs), with the
load average before and after. Then the cost of a search against the number
of GPUs, with its fitted curves (--scaling).

    bench/compare_builds.py BEFORE/bench/trainmem_bench AFTER/bench/trainmem_bench
    bench/compare_builds.py --scaling AFTER/bench/trainmem_bench

A benchmark a build does not have is shown as "–".
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy

# (benchmark filter, function whose instructions per call are reported,
# Google Benchmark's minimum time: long enough to amortise one-time set-up
# for the per-call figures, one iteration for a search).
ROWS = [
    ("BM_AccountLayout405B$", "accountLayout", 0.2),
    ("BM_AccountLayout405B_Rescheduled$", "accountLayout", 0.2),
    ("BM_AccountLayout405B_Rescheduled$", "scheduleStagePlan", 0.2),
    ("BM_EstimateValidated405B$", "estimateValidated", 0.2),
    ("BM_Estimate405B_TP8_PP16_DP8$", "estimate", 0.2),
    ("BM_EstimateValidatedDeepSeekV3/1$", "estimateValidated", 0.2),
    ("BM_EstimateValidatedDeepSeekV3/61$", "estimateValidated", 0.2),
    ("BM_LargestMicroBatch405B$", "largestMicroBatch", 0.05),
    ("BM_SearchLayouts405B_1024Gpus$", "searchLayouts", 0.001),
    ("BM_SearchLayouts405B_1024Gpus_GlobalBatch2048$", "searchLayouts", 0.001),
    ("BM_SearchLayouts405B_Gpus/100000$", "searchLayouts", 0.001),
    ("BM_SearchLayoutsDeepSeekV3_100000Gpus$", "searchLayouts", 0.001),
    ("BM_SearchScenarioPreset/llama405b_3d$", "searchLayouts", 0.001),
    ("BM_SearchScenarioPreset/llama70b_interleaved$", "searchLayouts", 0.001),
    ("BM_SearchScenarioPreset/mixtral_tp_ep$", "searchLayouts", 0.001),
    ("BM_SearchScenarioPreset/llama70b_cp$", "searchLayouts", 0.001),
]
SCALING = [64, 256, 1024, 4096, 16384, 65536, 100000]


def benchmarks(binary):
    out = subprocess.run([binary, "--benchmark_list_tests"], capture_output=True, text=True, check=True).stdout
    return set(out.split())


def instructions(binary, bench_filter, function, min_time):
    """Inclusive instructions of `function` per call over the benchmark."""
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "cg.out")
        env = dict(os.environ, LD_BIND_NOW="1")
        subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out, binary,
                        "--benchmark_filter=" + bench_filter, f"--benchmark_min_time={min_time}"],
                       env=env, capture_output=True, check=True)
        tree = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--tree=calling", out],
                              capture_output=True, text=True, check=True).stdout
    # "  N (P%)  >   file:trainmem::function(args) (Cx) [binary]": the function as called.
    # (Its own arguments hold no parentheses; a lambda inside it, named
    # "function(args)::{lambda...}", is not it.)
    pattern = re.compile(r"^\s*([\d,]+) \([^)]*\)\s+>\s+\S*trainmem::" + re.escape(function) +
                         r"\([^()]*\) \((\d[\d,]*)x\)")
    total, calls = 0, 0
    for line in tree.splitlines():
        m = pattern.match(line)
        if m:
            total += int(m.group(1).replace(",", ""))
            calls += int(m.group(2).replace(",", ""))
    return total / calls if calls else None


def cpu_times(binary, bench_filter, repetitions):
    """Median CPU time (ns) and the counters of the benchmark's runs."""
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        subprocess.run([binary, "--benchmark_filter=" + bench_filter, f"--benchmark_repetitions={repetitions}",
                        "--benchmark_report_aggregates_only=true", "--benchmark_min_time=0.2",
                        "--benchmark_out=" + f.name, "--benchmark_out_format=json"],
                       capture_output=True, check=True)
        data = json.load(open(f.name))
    for b in data["benchmarks"]:
        if b.get("aggregate_name") == "median":
            scale = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}[b["time_unit"]]
            return b["cpu_time"] * scale, b
    return None, None


def load():
    return os.getloadavg()[0]


def fmt_instr(x):
    if x is None:
        return "–"
    return f"{x / 1e6:,.1f} M" if x >= 1e6 else f"{x:,.0f}"


def fmt_time(ns):
    if ns is None:
        return "–"
    return f"{ns / 1e6:.2f} ms" if ns >= 1e5 else (f"{ns / 1e3:.2f} µs" if ns >= 1e3 else f"{ns:.0f} ns")


def compare(before, after, repetitions):
    names = [benchmarks(before), benchmarks(after)]
    print(f"load average before: {load():.2f}")
    print()
    print("| benchmark | function | instructions before | after | CPU before | after |")
    print("|---|---|---|---|---|---|")
    for bench_filter, function, min_time in ROWS:
        name = bench_filter.rstrip("$")
        cells = []
        for binary, have in zip((before, after), names):
            if name not in have:
                cells.append((None, None))
                continue
            cells.append((instructions(binary, bench_filter, function, min_time),
                          cpu_times(binary, bench_filter, repetitions)[0]))
        print(f"| `{name}` | `{function}` | {fmt_instr(cells[0][0])} | {fmt_instr(cells[1][0])} | "
              f"{fmt_time(cells[0][1])} | {fmt_time(cells[1][1])} |", flush=True)
    print()
    print(f"load average after: {load():.2f}")


def scaling(binary, repetitions):
    rows = []
    for n in SCALING:
        f = f"BM_SearchLayouts405B_Gpus/{n}$"
        instr = instructions(binary, f, "searchLayouts", 0.001)
        cpu, run = cpu_times(binary, f, repetitions)
        rows.append((n, instr, cpu, {k: run.get(k, 0) for k in ("enumerated", "valid", "estimated", "accounted")}))
    print(f"load average: {load():.2f}")
    print()
    print("| N | " + " | ".join(f"{n:,}" for n, *_ in rows) + " |")
    print("|---|" + "---|" * len(rows))
    for key in ("enumerated", "valid", "estimated", "accounted"):
        print(f"| {key} | " + " | ".join(f"{int(c[key]):,}" for *_, c in rows) + " |")
    print("| instructions | " + " | ".join(fmt_instr(i) for _, i, _, _ in rows) + " |")
    print("| CPU | " + " | ".join(fmt_time(t) for _, _, t, _ in rows) + " |")
    # Instructions against the work the search does at each size.
    a = numpy.array([[c["accounted"], c["valid"], c["enumerated"]] for *_, c in rows], dtype=float)
    y = numpy.array([i for _, i, _, _ in rows])
    coef, *_ = numpy.linalg.lstsq(a, y, rcond=None)
    residual = numpy.abs(a @ coef - y).max()
    print()
    print(f"I ≈ {coef[0]:,.0f} × accounted + {coef[1]:,.0f} × valid + {coef[2]:,.1f} × enumerated "
          f"(largest residual {residual / 1e6:.2f} M)")
    # Over the powers of two, against log2 N.
    pow2 = [(n, i, t) for n, i, t, _ in rows if n & (n - 1) == 0]
    x = numpy.log2([n for n, _, _ in pow2])
    for label, ys, unit, scale in (("I(N)", [i for _, i, _ in pow2], "M", 1e6),
                                   ("T(N)", [t for _, _, t in pow2], "ms", 1e6)):
        slope, intercept = numpy.polyfit(x, ys, 1)
        fit = slope * x + intercept
        r2 = 1 - ((numpy.array(ys) - fit) ** 2).sum() / ((numpy.array(ys) - numpy.mean(ys)) ** 2).sum()
        print(f"{label} ≈ {slope / scale:.2f} {unit} × log2 N {'+' if intercept >= 0 else '−'} "
              f"{abs(intercept) / scale:.2f} {unit} (R² = {r2:.3f})")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("binaries", nargs="+", help="BEFORE AFTER, or one binary with --scaling")
    p.add_argument("--scaling", action="store_true", help="the search against the number of GPUs")
    p.add_argument("--repetitions", type=int, default=5)
    args = p.parse_args()
    if args.scaling:
        scaling(args.binaries[-1], args.repetitions)
    elif len(args.binaries) == 2:
        compare(args.binaries[0], args.binaries[1], args.repetitions)
    else:
        p.error("give BEFORE and AFTER, or --scaling and one binary")


if __name__ == "__main__":
    sys.exit(main())

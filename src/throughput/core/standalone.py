"""Execute one notebook with its own defaults, as a reviewer would, and measure what the host
must afford.

    python -m throughput.core.standalone NOTEBOOK WORK_DIR

papermill runs NOTEBOOK with its default parameters (cwd notebooks/), only the
output folders set to WORK_DIR/{results,figures,paper}/NAME, so nothing is
written into the checkout. Meanwhile the whole process tree (papermill, the
Jupyter kernel and every kernel, reader or worker it starts) is sampled every
0.25 s. Writes WORK_DIR/executed/NAME.ipynb, NAME.log and NAME.json (wall time,
peak memory, load average) and exits with papermill's status. It holds the
machine's measurement lock (throughput.core.measurement_lock) while it runs: its
wall time is a measurement, and the notebook measures.

The workflow runs it for every notebook (rule standalone_notebook, the paper's
method section states each one's time and memory); binder/check_fresh_env.sh runs
it after building a Binder-like environment; tests/workflow/test_tiny_study.py holds
the workflow's measurements to a Binder host's means (BINDER_BUDGET_S, BINDER_MEMORY_BYTES).

Memory is the sum over the tree of each process's PSS (proportional set size):
a page shared by several processes (ROOT's libraries, mapped by the kernel and
by each Dask worker) counts once in all, as it does against a host's memory
limit; the summed RSS, which counts it once per process, is recorded beside it.
"""
from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import psutil

from . import measurement_lock

# Every 0.1 s the sampler itself took 10.9 s of CPU during the GPU notebook's 50.9 s (2026-12-01,
# make paper on 2 cores: a fifth of a core beside the notebook it times; listing the tree reads every
# process's stat): a reader or worker lives for seconds, so a quarter of a second still sees each.
INTERVAL_S = 0.25
# A reviewer's Binder-like host (2 cores, 2 GB): each notebook's defaults should run well within a
# minute there (they are sized to about half of it on the study's 2-core machines, a margin for a
# slower day), and within its memory.
BINDER_BUDGET_S = 60
BINDER_MEMORY_BYTES = 2e9


def tree_memory(root: psutil.Process) -> tuple[int, int, list[tuple[str, int, int]]]:
    """(summed PSS, summed RSS, [(name, rss, pss)]) of `root` and all its descendants now."""
    try:
        processes = [root, *root.children(recursive=True)]
    except psutil.Error:  # root has just exited
        return 0, 0, []
    pss_sum, rss_sum, each = 0, 0, []
    for process in processes:
        try:
            info = process.memory_full_info()
            name = process.name()
        except psutil.Error:  # exited between the listing and the read
            continue
        pss = getattr(info, "pss", info.rss)  # no PSS outside Linux: RSS, an upper bound
        pss_sum, rss_sum = pss_sum + pss, rss_sum + info.rss
        each.append((name, info.rss, pss))
    return pss_sum, rss_sum, each


def measure(notebook: Path, work: Path) -> dict:
    name = notebook.stem
    executed = work / "executed"
    executed.mkdir(parents=True, exist_ok=True)
    argv = ["papermill", "--cwd", str(notebook.parent), "--no-progress-bar", str(notebook),
            str(executed / f"{name}.ipynb")]
    for folder in ("results", "figures", "paper"):
        # a reviewer's first run: nothing stored by an earlier one to reuse
        shutil.rmtree(work / folder / name, ignore_errors=True)
        argv += ["-p", f"{folder}_dir", str(work / folder / name)]
    peak_pss, peak_rss, at_peak, samples = 0, 0, [], 0
    with measurement_lock.held(f"standalone {notebook.name}"), open(executed / f"{name}.log", "w") as log:
        load_before = os.getloadavg()
        start = time.monotonic()
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        root = psutil.Process(proc.pid)
        while proc.poll() is None:
            pss, rss, each = tree_memory(root)
            samples += 1
            if pss > peak_pss:
                peak_pss, at_peak = pss, each
            peak_rss = max(peak_rss, rss)
            time.sleep(INTERVAL_S)
        wall = time.monotonic() - start
    return {"notebook": notebook.name, "returncode": proc.returncode, "wall_s": round(wall, 2),
            "peak_pss_bytes": peak_pss, "peak_rss_sum_bytes": peak_rss,
            "processes_at_peak": [{"name": n, "rss_bytes": r, "pss_bytes": p} for n, r, p in at_peak],
            "samples": samples, "interval_s": INTERVAL_S, "cores": os.cpu_count(),
            # the sampling's own cost, which the notebook shared the cores with
            "sampler_cpu_s": round(sum(resource.getrusage(resource.RUSAGE_SELF)[:2]), 2),
            "load_before": [round(x, 2) for x in load_before],
            "load_after": [round(x, 2) for x in os.getloadavg()]}


def describe(result: dict) -> str:
    """One line: the notebook, its exit status, wall time, peak memory and the load around it."""
    return (f"{result['notebook']}: exit {result['returncode']}, {result['wall_s']:.1f} s, peak memory "
            f"{result['peak_pss_bytes'] / 1e9:.2f} GB (summed RSS {result['peak_rss_sum_bytes'] / 1e9:.2f} GB), "
            f"load {result['load_before'][0]:.2f} before, {result['load_after'][0]:.2f} after")


def main() -> int:
    if len(sys.argv) != 3:
        sys.exit("usage: python -m throughput.core.standalone NOTEBOOK WORK_DIR")
    notebook, work = Path(sys.argv[1]).resolve(), Path(sys.argv[2]).resolve()
    if not notebook.is_file():
        sys.exit(f"python -m throughput.core.standalone: no notebook {notebook}")
    result = measure(notebook, work)
    (work / "executed" / f"{notebook.stem}.json").write_text(json.dumps(result, indent=1) + "\n")
    print(describe(result))
    return result["returncode"]


if __name__ == "__main__":
    sys.exit(main())

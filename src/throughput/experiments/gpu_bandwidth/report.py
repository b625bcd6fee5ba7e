"""For the paper: Table 2 beside the seed's six GPUs, the GPU detail and jagged
tables in LaTeX, the sentences its macros carry (the target, NUMA, the
seed's claim on explode and combine) and every macro (paper_macros). The notebook
draws the figures and writes these."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ...core import intervals
from ...core.intervals import Estimate
from .analysis import _pick, jagged_estimate, jagged_table, summary, targets
from .cases import (CASE_BY_NAME, CASES, CUDA_KERNEL, GPU_METHODS, JAGGED_OPS, NOT_MEASURED, SEED_ARRAY_MIB,
                    SEED_GPU_SHORT, SEED_TABLE2, TARGET_FRACTION)
from .spec import max_threads
from .data import make_jagged
from .device import GpuStatus, l2_note


def table2_rows(table: pd.DataFrame, skipped: pd.DataFrame, dtypes: list[str]) -> list[dict[str, Any]]:
    """Seed 000's Table 2 beside ours: for each case, the seed's six GPUs, our rate
    (CUDA C++ on the GPU; memcpy on the CPU) per value type (an Estimate: each process's best
    pass across the processes), and the float32 rate's fraction of nominal; or why ours is not
    measured."""
    rows = []
    for case in CASES:
        method = "C++" if not case.on_gpu else "CUDA C++"
        seed = SEED_TABLE2.get(case.seed_row) if case.seed_row else None
        row = {"case": case.name, "label": case.label, "seed": seed, "ours": {}, "fraction": None, "reason": None}
        for dtype in dtypes:
            got = _pick(table, group="table2", method=method, case=case.name, dtype=dtype)
            if got is not None:  # the best pass of each process, across the processes
                row["ours"][dtype] = Estimate(got["ghz_best"], got["ghz_low"], got["ghz_high"], int(got["processes"]))
                if dtype == dtypes[0] and case.on_gpu:
                    row["fraction"] = got["fraction"]
        if not row["ours"]:
            hit = skipped[(skipped["group"] == "table2") & (skipped["case"] == case.name)
                          & (skipped["method"] == method)] if not skipped.empty else skipped
            row["reason"] = hit["reason"].iloc[0] if len(hit) else f"{NOT_MEASURED}: not configured"
        rows.append(row)
    return rows


def table2_tex(rows: list[dict[str, Any]], dtypes: list[str]) -> str:
    """LaTeX tabular of table2_rows; a case not measured spans our columns with its reason."""
    from ...report import paper

    ours = len(dtypes) + 1
    header = ["", *SEED_GPU_SHORT, *[f"ours {d}" for d in dtypes], f"frac. ({dtypes[0]})"]
    lines = [rf"\begin{{tabular}}{{l{'r' * len(SEED_GPU_SHORT)}|{'r' * ours}}}", r"\toprule",
             " & ".join(paper.escape(h) for h in header) + r" \\", r"\midrule"]
    for row in rows:
        seed = [paper.number(v, 3) for v in row["seed"]] if row["seed"] else ["--"] * len(SEED_GPU_SHORT)
        if row["reason"]:
            mine = [rf"\multicolumn{{{ours}}}{{l}}{{{paper.escape(row['reason'])}}}"]
        else:
            mine = [paper.estimate(row["ours"][d]) if d in row["ours"] else "--" for d in dtypes]
            fraction = row["fraction"]
            mine.append(paper.number(fraction, 2) if fraction is not None and np.isfinite(fraction) else "--")
        lines.append(" & ".join([paper.escape(row["label"]), *seed, *mine]) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    return "\n".join(lines)


def gpu_detail_rows(table: pd.DataFrame) -> pd.DataFrame:
    """Every GPU Table 2 run: method, case, value type, GHz (min, max), GB/s, fraction."""
    gpu = table[(table["group"] == "table2") & table["method"].isin(list(GPU_METHODS.values()))]
    order = {c.name: i for i, c in enumerate(CASES)}
    return gpu.assign(order=gpu["case"].map(order)).sort_values(["order", "method", "dtype"]).drop(columns="order")


def _method_cell(row) -> str:
    """A row's method, after the machine's label where rows of several machines share a table."""
    from ...report import paper

    machine = getattr(row, "machine", None)
    return paper.escape(f"{machine}: {row.method}" if machine else row.method)


def gpu_detail_tex(table: pd.DataFrame, skipped: pd.DataFrame) -> str:
    """Every GPU Table 2 run (CUDA C++ and CuPy, both value types), or why there is none."""
    from ...report import paper

    header = ["case", "method", "type", "GHz (min--max)", "GB/s", "fraction of nominal", "clock"]
    lines = [r"\begin{tabular}{lllrrrl}", r"\toprule", " & ".join(header) + r" \\", r"\midrule"]
    rows = gpu_detail_rows(table)
    for row in rows.itertuples(index=False):
        fraction = paper.number(row.fraction, 2) if np.isfinite(row.fraction) else "--"
        lines.append(" & ".join([
            paper.escape(CASE_BY_NAME[row.case].label), _method_cell(row), paper.escape(row.dtype),
            f"{paper.number(row.ghz)} ({paper.number(row.ghz_min)}--{paper.number(row.ghz_max)})",
            paper.number(row.gb_s), fraction, paper.escape(row.clock.replace("_", " "))]) + r" \\")
    gone = skipped[(skipped["group"] == "table2") & skipped["gpu_method"].notna()] if not skipped.empty else skipped
    for row in gone.drop_duplicates(["method", "reason"]).itertuples(index=False):
        lines.append(rf"\multicolumn{{2}}{{l}}{{{paper.escape(row.method)}}} & "
                     rf"\multicolumn{{5}}{{l}}{{{paper.escape(row.reason)}}} \\")
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    return "\n".join(lines)


def jagged_tex(wide: pd.DataFrame, skipped: pd.DataFrame) -> str:
    from ...report import paper

    header = ["method", "threads", "type", "flat in place", "flat immutable", "explode", "combine",
              "explode/flat", "combine/flat"]
    lines = [r"\begin{tabular}{llrrrrrrr}", r"\toprule", " & ".join(paper.escape(h) for h in header) + r" \\",
             r"\midrule"]

    def cell(row, column, digits=3):  # with its interval (jagged_table)
        value = getattr(row, column)
        text = (paper.with_interval(value, getattr(row, f"{column}_low"), getattr(row, f"{column}_high"), digits)
                if value is not None and np.isfinite(value) else "--")
        return paper.flagged(text, bool(getattr(row, f"{column}_noisy")))  # a run that stayed noisy

    for row in wide.itertuples(index=False):
        lines.append(" & ".join([_method_cell(row), str(row.threads), paper.escape(row.dtype),
                                 *[cell(row, op) for op in JAGGED_OPS],
                                 cell(row, "explode_ratio", 2), cell(row, "combine_ratio", 2)]) + r" \\")
    if not skipped.empty:
        gone = skipped[skipped["group"] == "jagged"].drop_duplicates(["method", "reason"])
        for row in gone.itertuples(index=False):
            lines.append(rf"{paper.escape(row.method)} & \multicolumn{{8}}{{l}}{{{paper.escape(row.reason)}}} \\")
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    return "\n".join(lines)


def target_sentence(goal: dict[str, Any]) -> str:
    if not goal["checked"]:
        return f"It is not checked in this build: {goal['why_not']}."
    parts = [f"{CASE_BY_NAME[case].label} {dtype} reaches {fraction.value:.2f} ({fraction.interval_text()})"
             for (case, dtype), fraction in goal["fractions"].items()]
    verdict = {"met": "the target is met (every interval lies above it)",
               "missed": "the target is NOT met (an interval lies below it)",
               "inconclusive": "this run cannot tell whether the target is met (an interval contains it)"}[
        goal["verdict"].value]
    return (f"Against the nominal {goal['nominal_gb_s']:.0f} GB/s of the device, " + ", ".join(parts)
            + f": {verdict}.")


def numa_sentence(table: pd.DataFrame, skipped: pd.DataFrame) -> str:
    if not skipped.empty and (skipped["group"] == "numa").any():
        return f"Local against remote memory: {skipped[skipped['group'] == 'numa']['reason'].iloc[0]}."
    rows = table[table["group"] == "numa"]
    if rows.empty:
        return "Local against remote memory: not measured: switched off in the configuration (numa: false)."
    local = _pick(rows, case="memory_node0")
    remote = _pick(rows, case="memory_node1")
    return (f"With the {int(local['threads'])} threads of NUMA node 0, host memcpy moves "
            f"{local['gb_s']:.1f} GB/s from the node's own memory and {remote['gb_s']:.1f} GB/s from node 1's "
            f"(remote/local {remote['gb_s'] / local['gb_s']:.2f}).")


def jagged_sentence(wide: pd.DataFrame) -> str:
    """What the measured ratios say about the seed's claim: numba on one thread (the
    sequential processor) against the GPU (CUDA C++) where it was measured. The claim is
    supported when, for explode and for combine, the GPU's ratio to its flat add lies below
    the CPU's, their intervals apart; not supported when one lies above; otherwise this run
    cannot tell (the CPU and GPU sides are separate groups, so their ratios are not paired)."""
    if wide.empty:
        return "No explode/combine rates were measured."
    dtype = wide["dtype"].iloc[0]
    parts = []
    cpu = _pick(wide, method="numba", threads=1, dtype=dtype)

    def ratios(row) -> str:
        return " and ".join(f"{op} at {row[f'{op}_ratio']:.2f} ({jagged_estimate(row, f'{op}_ratio').interval_text()})"
                            for op in ("explode", "combine"))

    if cpu is not None:
        parts.append(f"With numba on one CPU thread, {ratios(cpu)} times the rate of the flat immutable add ({dtype})")
    gpu = _pick(wide, method="CUDA C++", dtype=dtype)
    if gpu is not None and cpu is not None:
        parts.append(f"on the GPU (CUDA C++) {ratios(gpu)} times its flat immutable add")
        apart = {intervals.unpaired_comparison(jagged_estimate(gpu, f"{op}_ratio"), jagged_estimate(cpu, f"{op}_ratio"))
                 for op in ("explode", "combine")}
        claim = ("supports the seed's claim that these operations suit a sequential processor better "
                 "(both GPU intervals lie below the CPU's)" if apart == {"lower"} else
                 "does not support the seed's claim that these operations suit a sequential processor better "
                 "(a GPU interval lies above the CPU's)" if "higher" in apart else
                 "leaves the seed's claim that these operations suit a sequential processor better undecided "
                 "in this run (a GPU interval overlaps the CPU's)")
        parts.append(f"which {claim}")
    elif cpu is not None:
        parts.append("the GPU side of the comparison is not measured on this host, so the seed's claim is "
                     "tested only on the CPU side")
    return "; ".join(parts) + "." if parts else "No numba explode/combine rates were measured."


def machines_tex(machines: dict[str, tuple[pd.DataFrame, GpuStatus]], dtypes: list[str]) -> str:
    """Table 2's GPU cases (CUDA C++) on every machine shown that holds GPU runs, one column
    group per machine (its GHz per value type and the first type's fraction of its own
    device's nominal bandwidth); `machines`: label -> (its summary, its GPU status).
    Where none holds GPU runs, one row says so."""
    from ...report import paper

    with_gpu = {label: (table, status.device["name"]) for label, (table, status) in machines.items()
                if status.device and not table[table["method"] == "CUDA C++"].empty}
    columns = len(dtypes) + 1
    if not with_gpu:
        names = ", ".join(machines) or "none"
        return "\n".join([r"\begin{tabular}{l}", r"\toprule", r"machines shown \\", r"\midrule",
                          paper.escape(f"{NOT_MEASURED}: no machine shown ({names}) holds GPU runs") + r" \\",
                          r"\bottomrule", r"\end{tabular}", ""])
    groups = [rf"\multicolumn{{{columns}}}{{c}}{{{paper.escape(label)}: {paper.escape(device)}}}"
              for label, (_, device) in with_gpu.items()]
    header = ["", *[paper.escape(h) for _ in with_gpu for h in [*dtypes, f"frac. ({dtypes[0]})"]]]
    lines = [rf"\begin{{tabular}}{{l{('|' + 'r' * columns) * len(with_gpu)}}}", r"\toprule",
             " & ".join(["", *groups]) + r" \\", " & ".join(header) + r" \\", r"\midrule"]
    for case in CASES:
        if not case.on_gpu:
            continue
        cells = [paper.escape(case.label)]
        for table, _ in with_gpu.values():
            picked = {d: _pick(table, group="table2", method="CUDA C++", case=case.name, dtype=d) for d in dtypes}
            cells += [paper.flagged(paper.number(p["ghz"]), bool(p["noisy"])) if p is not None else "--"
                      for p in picked.values()]
            first = picked[dtypes[0]]
            cells.append(paper.number(first["fraction"], 2) if first is not None and np.isfinite(first["fraction"])
                         else "--")
        lines.append(" & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    return "\n".join(lines)


# An archived machine's GPU results in full: what this machine's own tables and sentences give of
# it, for every archived machine whose runs had a GPU (its rows' methods after its label).

def _with_gpu(archived: dict[str, tuple[pd.DataFrame, GpuStatus]]) -> dict[str, tuple[pd.DataFrame, GpuStatus]]:
    return {label: (table, status) for label, (table, status) in archived.items() if status.device}


def _none_archived(group: str) -> pd.DataFrame:
    """The one row the archived machines' tables hold where none of them had a GPU."""
    return pd.DataFrame([{"group": group, "gpu_method": "all", "method": "archived machines",
                          "reason": f"{NOT_MEASURED}: no archived machine holds GPU runs"}])


def _labelled(archived: dict[str, tuple[pd.DataFrame, Any]], frame_of=lambda table: table) -> pd.DataFrame:
    """Each machine's frame (its summary, or `frame_of` it) with its label in a `machine` column."""
    return pd.concat([frame_of(table).assign(machine=label) for label, (table, _) in archived.items()],
                     ignore_index=True)


def archived_detail_tex(archived: dict[str, tuple[pd.DataFrame, GpuStatus]]) -> str:
    """Every GPU run of Table 2 (CUDA C++ and CuPy, both value types) on each archived machine
    with a GPU, as gpu_detail_tex gives this machine's; one row saying so where none has one."""
    gpu = _with_gpu(archived)
    if not gpu:
        return gpu_detail_tex(summary(pd.DataFrame()), _none_archived("table2"))
    return gpu_detail_tex(_labelled(gpu), pd.DataFrame())


def archived_jagged_tex(archived: dict[str, tuple[pd.DataFrame, GpuStatus]]) -> str:
    """Explode and combine beside the flat add on each archived machine with a GPU (its CPU
    and GPU methods, each ratio within its own machine), as jagged_tex gives this machine's."""
    gpu = _with_gpu(archived)
    if not gpu:
        return jagged_tex(jagged_table(pd.DataFrame(columns=["group"])), _none_archived("jagged"))
    return jagged_tex(_labelled(gpu, jagged_table), pd.DataFrame())


def archived_sentences(archived: dict[str, tuple[pd.DataFrame, GpuStatus]], dtypes: list[str]) -> str:
    """The target and the explode/combine verdict on each archived machine with a GPU, each
    from its own runs against its own device (this machine's are the paper's sentences above)."""
    gpu = _with_gpu(archived)
    if not gpu:
        return ("No archived machine holds GPU runs, so the target and the explode/combine verdict are "
                "this machine's only.")
    parts = []
    for label, (table, status) in gpu.items():
        target = target_sentence(targets(table, status, dtypes))
        parts.append(f"On {label} ({status.device['name']}): {target[0].lower()}{target[1:]} "
                     f"{jagged_sentence(jagged_table(table))}")
    return " ".join(parts)


def paper_macros(params: dict[str, Any], table: pd.DataFrame, skipped: pd.DataFrame, wide: pd.DataFrame,
                 status: GpuStatus, frame: pd.DataFrame, settings: Any, archived: list[Any],
                 archived_gpu: dict[str, tuple[pd.DataFrame, GpuStatus]]) -> dict[str, Any]:
    """Every number and sentence the paper section quotes, as macro name -> LaTeX: the sizes, the
    device (or why it was not measured), the 85% target's verdict by its interval, NUMA,
    explode/combine, and the archived machines'."""
    from ...core import harness
    from ...report import noise_sentences
    from ...report import paper
    from ...machines.tables import archived_sentence

    goal = targets(table, status, params["dtypes"])
    jagged = make_jagged(params["events"], params["mean_particles"], "float64")  # its particle and pair counts
    cuda_built = (harness.kernels_dir() / CUDA_KERNEL).is_file()
    return {
        "GpubArrayMiB": params["gpu_array_mib"], "GpubSeedArrayMiB": SEED_ARRAY_MIB,
        "GpubCpuArrayMiB": params["cpu_array_mib"],
        "GpubEvents": rf"\num{{{params['events']}}}", "GpubGpuEvents": rf"\num{{{params['gpu_events']}}}",
        "GpubMeanParticles": params["mean_particles"],
        "GpubParticles": rf"\num{{{jagged.particles}}}", "GpubPairs": rf"\num{{{jagged.pairs}}}",
        "GpubRepetitions": params["repetitions"], "GpubWarmup": params["warmup"],
        "GpubSamples": settings.samples_per_process, "GpubMinSampleS": f"{settings.min_sample_s:g}",
        "GpubMaxThreads": max_threads(params),
        "GpubDevice": paper.escape(status.summary()),
        "GpubGpuStatus": paper.escape("measured on " + status.summary() if status.available
                                      else f"{NOT_MEASURED}: {status.summary()}"),
        "GpubLTwoNote": paper.escape(l2_note(params, status)),
        "GpubCudaCompiler": paper.escape(harness.build_info(CUDA_KERNEL)["compiler"] if cuda_built
                                         else "not built here (no nvcc)"),
        "GpubTargetPercent": round(100 * TARGET_FRACTION),
        "GpubTargetSentence": paper.escape(target_sentence(goal)),
        "GpubNumaSentence": paper.escape(numa_sentence(table, skipped)),
        "GpubJaggedSentence": paper.escape(jagged_sentence(wide)),
        "GpubMachinesSentence": paper.escape(archived_sentence(archived, "gpu_bandwidth")),
        "GpubArchivedVerdicts": paper.escape(archived_sentences(archived_gpu, params["dtypes"])),
        **noise_sentences.paper_macros("Gpub", frame, settings),
    }

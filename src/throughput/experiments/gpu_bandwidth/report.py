"""For the paper: Table 2 beside the seed's six GPUs, the GPU detail and jagged
tables in LaTeX, the states and numbers of the target, NUMA and the seed's claim on
explode and combine (the section words them) and every macro (paper_macros). The notebook
draws the figures and writes these."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from ...core import harness, intervals
from ...machines.tables import THIS_MACHINE, section_macros
from ...report import noise_sentences, paper
from ...core.intervals import Estimate
from .analysis import _pick, claim_ratios, jagged_estimate, jagged_table, summary, targets
from .cases import (CASE_BY_NAME, CASES, CUDA_KERNEL, GPU_METHODS, JAGGED_LABELS, JAGGED_OPS, NOT_MEASURED,
                    SEED_ARRAY_MIB, SEED_GPU_SHORT, SEED_TABLE2, TARGET_FRACTION)
from .spec import max_threads
from .data import make_jagged
from .device import GpuStatus, l2_fit


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
                    row["fraction"] = _best(got, "fraction")
        if not row["ours"]:
            hit = skipped[(skipped["group"] == "table2") & (skipped["case"] == case.name)
                          & (skipped["method"] == method)] if not skipped.empty else skipped
            row["reason"] = hit["reason"].iloc[0] if len(hit) else f"{NOT_MEASURED}: not configured"
        rows.append(row)
    return rows


def table2_tex(rows: list[dict[str, Any]], dtypes: list[str]) -> str:
    """LaTeX tabular of table2_rows; a case not measured spans our columns with its reason."""
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
            mine.append(_fraction_cell(row["fraction"]))
        lines.append(" & ".join([paper.escape(row["label"]), *seed, *mine]) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    return "\n".join(lines)


def _best(row: Any, column: str, scale: float = 1.0) -> Estimate | None:
    """A summary row's `column` (ghz or fraction) as the tables print it: each process's best
    pass, across the processes, with its interval (analysis.summary); times `scale` (the run's
    bytes per value, for GB/s). None where it is not known (no nominal bandwidth)."""
    value = row[f"{column}_best"]
    if value is None or not np.isfinite(value):
        return None
    return Estimate(value * scale, row[f"{column}_low"] * scale, row[f"{column}_high"] * scale, int(row["processes"]))


def _fraction_cell(fraction: Estimate | None) -> str:
    return paper.estimate(fraction, 2) if fraction is not None else "--"


def gpu_detail_rows(table: pd.DataFrame) -> pd.DataFrame:
    """Every GPU Table 2 run: method, case, value type, rates, GB/s, fraction."""
    gpu = table[(table["group"] == "table2") & table["method"].isin(list(GPU_METHODS.values()))]
    order = {c.name: i for i, c in enumerate(CASES)}
    return gpu.assign(order=gpu["case"].map(order)).sort_values(["order", "method", "dtype"]).drop(columns="order")


def _method_cell(row) -> str:
    """A row's method, after the machine's label where rows of several machines share a table."""
    machine = getattr(row, "machine", None)  # a summary row (a Series) or a tuple of one
    return paper.escape(f"{machine}: {row.method}" if machine else row.method)


def gpu_detail_tex(table: pd.DataFrame, skipped: pd.DataFrame) -> str:
    """Every GPU Table 2 run (CUDA C++ and CuPy, both value types), or why there is none."""
    header = ["case", "method", "type", "GHz", "GB/s", "fraction of nominal", "clock"]
    lines = [r"\begin{tabular}{lllrrrl}", r"\toprule", " & ".join(header) + r" \\", r"\midrule"]
    rows = gpu_detail_rows(table)
    for _, row in rows.iterrows():  # each process's best pass, across the processes, with its interval
        noisy = bool(row["noisy"])
        lines.append(" & ".join([
            paper.escape(CASE_BY_NAME[row["case"]].label), _method_cell(row), paper.escape(row["dtype"]),
            paper.flagged(paper.estimate(_best(row, "ghz")), noisy),
            paper.flagged(paper.estimate(_best(row, "ghz", row["gb_s"] / row["ghz"])), noisy),
            _fraction_cell(_best(row, "fraction")), paper.escape(row["clock"].replace("_", " "))]) + r" \\")
    gone = skipped[(skipped["group"] == "table2") & skipped["gpu_method"].notna()] if not skipped.empty else skipped
    for row in gone.drop_duplicates(["method", "reason"]).itertuples(index=False):
        lines.append(rf"\multicolumn{{2}}{{l}}{{{paper.escape(row.method)}}} & "
                     rf"\multicolumn{{5}}{{l}}{{{paper.escape(row.reason)}}} \\")
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    return "\n".join(lines)


def launch_tex(launches: pd.DataFrame, skipped: pd.DataFrame,
               archived: dict[str, pd.DataFrame] | None = None) -> str:
    """What one launch costs each GPU method (analysis.launch_table), in microseconds with their
    intervals, or why it was not measured: this machine's, then each archived machine's that
    measured any (`archived`: its label's launch_table)."""
    lines = [r"\begin{tabular}{llrr}", r"\toprule",
             r"machine & method & device, $\mu$s a launch & host, $\mu$s a launch \\", r"\midrule"]

    def measured_rows(machine: str, rows: pd.DataFrame) -> None:
        for row in rows.itertuples(index=False):
            cells = [paper.with_interval(getattr(row, f"{side}_us"), getattr(row, f"{side}_us_low"),
                                         getattr(row, f"{side}_us_high"), 3) for side in ("device", "host")]
            lines.append(" & ".join([paper.escape(machine), paper.escape(row.method), *cells]) + r" \\")

    here = paper.escape(THIS_MACHINE)
    measured_rows(THIS_MACHINE, launches)
    gone = skipped[skipped["group"] == "launch"] if not skipped.empty else skipped
    for row in gone.drop_duplicates(["method", "reason"]).itertuples(index=False):
        lines.append(rf"{here} & {paper.escape(row.method)} & \multicolumn{{2}}{{l}}{{{paper.escape(row.reason)}}} \\")
    if launches.empty and gone.empty:
        lines.append(rf"{here} & \multicolumn{{3}}{{l}}{{no GPU method configured}} \\")
    for label, rows in (archived or {}).items():
        measured_rows(label, rows)
    lines += [r"\bottomrule", r"\end{tabular}", ""]
    return "\n".join(lines)


def jagged_tex(wide: pd.DataFrame, skipped: pd.DataFrame) -> str:
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


# The target, NUMA and explode/combine as states and numbers, macros Gpub<machine><Name> (<machine>:
# empty for this machine, Arch<letter> for an archived one): paper/sections/gpu_bandwidth.tex words
# each state once (\gpubtarget, \gpubnuma, \gpubjagged) for every machine.

def _macros(machine: str, values: dict[str, Any]) -> dict[str, str]:
    raw = {"TargetFractions", "TargetSeedFractions", "TargetReferenceFractions", "NumaLocalGBs", "NumaRemoteGBs",
           "NumaRatio"}  # already LaTeX, as each ...Interval
    return {f"Gpub{machine}{name}": value if name.endswith(("State", "Interval")) or name in raw else paper.escape(value)
            for name, value in values.items()}


def target_macros(goal: dict[str, Any], machine: str = "") -> dict[str, str]:
    """The target's state: TargetState met (every fraction's interval above it), missed (one
    below), inconclusive, or notchecked (TargetWhyNot says why); the device's nominal GB/s and
    each case's fraction with its interval (TargetFractions: \\gpubreaches{case}{value}{interval},
    the interval as paper.interval gives it; the section words it); the seed's kernels' beside them
    (TargetSeedState beside or none, TargetSeedFractions) and CUB's transform's (TargetReference...)."""
    if not goal["checked"]:
        return _macros(machine, {"TargetState": "notchecked", "TargetWhyNot": goal["why_not"],
                                 "TargetSeedState": "none", "TargetSeedFractions": "",
                                 "TargetReferenceState": "none", "TargetReferenceFractions": ""})

    def reaches(fractions: dict[tuple[str, str], Estimate]) -> str:
        return ", ".join(rf"\gpubreaches{{{paper.escape(f'{CASE_BY_NAME[case].label} {dtype}')}}}"
                         rf"{{{fraction.value:.2f}}}{{{paper.interval(fraction)}}}"
                         for (case, dtype), fraction in fractions.items())

    # the seed's kernels beside the tuned ones the target judges (none: a run from before the tuned
    # kernels, judged on the seed's), and CUB's transform (none: a toolkit or a run without it)
    return _macros(machine, {"TargetState": goal["verdict"].value, "TargetNominal": f"{goal['nominal_gb_s']:.0f}",
                             "TargetFractions": reaches(goal["fractions"]),
                             "TargetSeedState": "beside" if goal["seed_fractions"] else "none",
                             "TargetSeedFractions": reaches(goal["seed_fractions"]),
                             "TargetReferenceState": "beside" if goal["reference_fractions"] else "none",
                             "TargetReferenceFractions": reaches(goal["reference_fractions"])})


def numa_macros(table: pd.DataFrame, skipped: pd.DataFrame) -> dict[str, str]:
    """Local against remote memory: GpubNumaState skipped (GpubNumaReason: why), off (numa: false
    in the configuration) or measured, with node 0's threads and host memcpy's GB/s from node 0's
    own memory and from node 1's (each process's best pass, across the processes), and their
    ratio paired round by round (one group measures both), each with its interval."""
    if not skipped.empty and (skipped["group"] == "numa").any():
        reason = skipped[skipped["group"] == "numa"]["reason"].iloc[0]
        return _macros("", {"NumaState": "skipped", "NumaReason": reason})
    rows = table[table["group"] == "numa"]
    if rows.empty:
        return _macros("", {"NumaState": "off"})
    local = _pick(rows, case="memory_node0")
    remote = _pick(rows, case="memory_node1")
    def gb_s(row: pd.Series) -> str:
        return paper.estimate(_best(row, "ghz", row["gb_s"] / row["ghz"]))

    ratio = intervals.paired_by_round(remote["ghz_by_round"], local["ghz_by_round"])
    return _macros("", {"NumaState": "measured", "NumaLocalNode": "0", "NumaRemoteNode": "1",
                        "NumaThreads": str(int(local["threads"])), "NumaLocalGBs": gb_s(local),
                        "NumaRemoteGBs": gb_s(remote), "NumaRatio": paper.estimate(ratio, 2)})


def jagged_macros(wide: pd.DataFrame, machine: str = "") -> dict[str, str]:
    """What the measured ratios say about the seed's claim: numba on one thread (the
    sequential processor) against the GPU (CUDA C++) where it was measured. JaggedState:
    supports when, for explode and for combine, the GPU's ratio to its flat add lies below
    the CPU's, their intervals apart; notsupported when one lies above; undecided otherwise
    (the CPU and GPU sides are separate groups, so their ratios are not paired); cpuonly
    without the GPU side, nonumba without numba on one thread, none without any rate. With
    the value type and each side's explode and combine ratios with their intervals (paper.interval:
    the section words them)."""
    if wide.empty:
        return _macros(machine, {"JaggedState": "none"})
    dtype = wide["dtype"].iloc[0]
    cpu = _pick(wide, method="numba", threads=1, dtype=dtype)
    if cpu is None:
        return _macros(machine, {"JaggedState": "nonumba"})

    def ratios(row, side: str) -> dict[str, str]:
        return {name: value for op in ("explode", "combine")
                for name, value in ((f"Jagged{side}{op.capitalize()}", f"{row[f'{op}_ratio']:.2f}"),
                                    (f"Jagged{side}{op.capitalize()}Interval",
                                     paper.interval(jagged_estimate(row, f"{op}_ratio"))))}

    values = {"JaggedDtype": dtype, **ratios(cpu, "Cpu")}
    gpu = _pick(wide, method="CUDA C++", dtype=dtype)
    if gpu is None:
        return _macros(machine, {"JaggedState": "cpuonly", **values})
    apart = {intervals.unpaired_comparison(jagged_estimate(gpu, f"{op}_ratio"), jagged_estimate(cpu, f"{op}_ratio"))
             for op in ("explode", "combine")}
    state = "supports" if apart == {"lower"} else "notsupported" if "higher" in apart else "undecided"
    return _macros(machine, {"JaggedState": state, **values, **ratios(gpu, "Gpu")})


def machines_tex(machines: dict[str, tuple[pd.DataFrame, GpuStatus]], dtypes: list[str]) -> str:
    """Table 2's GPU cases (CUDA C++) on every machine shown that holds GPU runs, one column
    group per machine (its GHz per value type and the first type's fraction of its own
    device's nominal bandwidth); `machines`: label -> (its summary, its GPU status).
    Where none holds GPU runs, one row says so."""
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
            cells += [paper.flagged(paper.estimate(_best(p, "ghz")), bool(p["noisy"])) if p is not None else "--"
                      for p in picked.values()]
            first = picked[dtypes[0]]
            cells.append(_fraction_cell(_best(first, "fraction")) if first is not None else "--")
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


def _letters(index: int) -> str:
    """A, B, ..., Z, AA, AB, ...: an archived machine's part of its macros' names."""
    return ("" if index < 26 else _letters(index // 26 - 1)) + chr(ord("A") + index % 26)


def l2_macros(fit: dict[str, Any]) -> dict[str, str]:
    """Whether one GPU array is well beyond the device's L2 cache (device.l2_fit): GpubLTwoState
    beyond, notbeyond or unknown (the section then names why from GpubDevice), with the array
    over the L2 (GpubLTwoRatio) and the L2 in MiB (GpubLTwoMiB), n/a where unknown."""
    known = fit["state"] != "unknown"
    return {"GpubLTwoState": fit["state"], "GpubLTwoRatio": paper.number(fit["ratio"], 2) if known else "n/a",
            "GpubLTwoMiB": paper.number(fit["l2_mib"]) if known else "n/a"}


def _measured_with(table: pd.DataFrame) -> dict[str, str]:
    """What an archived machine's runs measured, read from them (its configuration may be smaller
    than this one's, e.g. a lease-sized one): Rounds (the most processes of a run), Types and Methods."""
    return {"Rounds": str(int(table["processes"].max())), "Types": ", ".join(sorted(table["dtype"].unique())),
            "Methods": ", ".join(dict.fromkeys(table["method"]))}


def claim_macros(table: pd.DataFrame, machine: str = "") -> dict[str, str]:
    """analysis.claim_ratios as Gpub<machine>Ratio<name>, each printed with its interval (a
    Printed, which the ledger of claims decides by; no section prints them)."""
    return {f"Gpub{machine}Ratio{name}": paper.estimate(ratio, 2) if np.isfinite(ratio.value) else "n/a"
            for name, ratio in claim_ratios(table).items()}


def archived_macros(archived: dict[str, tuple[pd.DataFrame, GpuStatus]], dtypes: list[str]) -> dict[str, str]:
    """The target and the explode/combine verdict on each archived machine with a GPU, each
    from its own runs against its own device (this machine's are the paper's above): per
    machine Arch<letter> its target and jagged macros, its label and device;
    GpubArchivedList calls \\gpubon{Arch<letter>} for each (the section words it), and
    GpubArchivedState says whether any machine is there (some, none)."""
    gpu = _with_gpu(archived)
    values: dict[str, str] = {"GpubArchivedState": "some" if gpu else "none", "GpubArchivedList": ""}
    for index, (label, (table, status)) in enumerate(gpu.items()):
        machine = f"Arch{_letters(index)}"
        values.update(_macros(machine, {"Label": label, "Device": status.device["name"], **_measured_with(table)}))
        values.update(target_macros(targets(table, status, dtypes), machine))
        values.update(jagged_macros(jagged_table(table), machine))
        values.update(claim_macros(table, machine))
    values["GpubArchivedList"] = " ".join(rf"\gpubon{{Arch{_letters(index)}}}" for index in range(len(gpu)))
    return values


def device_macros(status: GpuStatus, cuda_built: bool) -> dict[str, str]:
    """Which GPU measured this run's GPU rows (GpubGpuState measured, with GpubDevice) or why none did
    (notmeasured, GpubDevice the reason), and whether the CUDA kernels were built here
    (GpubCudaState built, with GpubCudaCompiler; notbuilt); the section words each state."""
    return {"GpubDevice": paper.escape(status.summary()),
            "GpubGpuState": "measured" if status.available else paper.NOT_MEASURED,
            "GpubCudaState": "built" if cuda_built else "notbuilt",
            **({"GpubCudaCompiler": paper.escape(harness.build_info(CUDA_KERNEL)["compiler"])} if cuda_built else {})}


def paper_macros(params: dict[str, Any], table: pd.DataFrame, skipped: pd.DataFrame, wide: pd.DataFrame,
                 status: GpuStatus, frame: pd.DataFrame, settings: Any, archived: list[Any],
                 archived_gpu: dict[str, tuple[pd.DataFrame, GpuStatus]]) -> dict[str, Any]:
    """Every number and sentence the paper section quotes, as macro name -> LaTeX: the sizes, the
    device (or why it was not measured), the 85% target's verdict by its interval, NUMA,
    explode/combine, and the archived machines'."""

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
        **device_macros(status, cuda_built),
        **l2_macros(l2_fit(params, status)),  # its state; the section words each
        "GpubTargetPercent": round(100 * TARGET_FRACTION),
        # states and numbers; the section words each state (target, NUMA, explode/combine, per machine)
        **target_macros(goal), **numa_macros(table, skipped), **jagged_macros(wide),
        **claim_macros(table),  # the ledger's figures for seed 000's GPU claims
        **section_macros("Gpub", archived, "gpu_bandwidth"),
        **archived_macros(archived_gpu, params["dtypes"]),
        **noise_sentences.paper_macros("Gpub", frame, settings),
    }


# --- the figures (entry.figures) -----------------------------------------------------------------------

def table2_figure(rows: list[dict[str, Any]], dtypes: list[str]):
    """Table 2 as a figure: each case's rate, the seed's four GPUs beside this run's per dtype (log
    scale); a case not measured here is starred, with why in the title."""
    import matplotlib.pyplot as plt  # here, not at the top: only a notebook draws (0.5 s to import)

    fig, ax = plt.subplots(figsize=(11, 8))
    y = np.arange(len(rows))
    for i, gpu in enumerate(SEED_GPU_SHORT):
        ax.scatter([r["seed"][i] if r["seed"] else np.nan for r in rows], y - 0.15, marker="v^<>dp"[i], s=60,
                   color=plt.cm.Greys(0.35 + 0.12 * i), label=f"seed (2017): {gpu}")
    for dtype, marker, color in zip(dtypes, "os", ["tab:blue", "tab:red"]):
        ax.scatter([r["ours"][dtype].value if dtype in r["ours"] else np.nan for r in rows], y + 0.15, marker=marker,
                   s=90, color=color, label=f"this run: {dtype}")
    ax.set_yticks(y, [r["label"] + (" *" if r["reason"] else "") for r in rows], fontsize="small")
    missing = sorted({r["reason"] for r in rows if r["reason"]})
    if missing:
        ax.set_title("* " + "; ".join(missing), fontsize="small", loc="left")
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlabel(r"rate [$10^9$ values/s] (best pass per process, across the processes)")
    ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.01, 1))
    return fig


def jagged_figure(wide: pd.DataFrame, skipped: pd.DataFrame):
    """Explode and combine: each series' rate per operation with its 95% interval (log scale); why
    the GPU did not run them, in the title, where it did not."""
    import matplotlib.pyplot as plt  # here, not at the top: only a notebook draws (0.5 s to import)

    fig, ax = plt.subplots(figsize=(11, 6))
    groups = list(wide.itertuples(index=False))
    x = np.arange(len(JAGGED_OPS))
    width = 0.8 / max(1, len(groups))
    for k, row in enumerate(groups):
        rates = np.array([getattr(row, op) for op in JAGGED_OPS])
        bounds = np.array([[getattr(row, f"{op}_low"), getattr(row, f"{op}_high")] for op in JAGGED_OPS])
        ax.bar(x + (k - len(groups) / 2 + 0.5) * width, rates, width, capsize=2,  # one round: no interval drawn
               yerr=np.nan_to_num([rates - bounds[:, 0], bounds[:, 1] - rates]),
               label=f"{row.method}, {row.threads} thread(s), {row.dtype}")
    ax.set_xticks(x, [JAGGED_LABELS[op].replace(", ", "\n") for op in JAGGED_OPS])
    ax.set_yscale("log")
    ax.set_ylabel(r"rate [$10^9$ output values/s] (best pass per process; 95% interval)")
    gpu_note = [r for r in skipped.itertuples() if r.group == "jagged"] if len(skipped) else []
    if gpu_note:
        ax.set_title(f"GPU: {gpu_note[0].reason}", fontsize="small")
    ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.01, 1))
    return fig

"""The GPU bandwidth experiment's entries, one signature in every experiment (docs/architecture.md):
measure(session) -> Measured, then figures, tables and macros of (measured, session)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from ...machines.tables import THIS_MACHINE
from ...report.paper import Table
from .analysis import archived_summary, check_agreement, jagged_table, launch_table, summary
from .configuration import check_device_fit
from .device import GpuStatus, detect_gpu
from .report import (archived_detail_tex, archived_jagged_tex, gpu_detail_tex, jagged_figure, jagged_tex, launch_tex,
                     machines_tex, paper_macros, table2_figure, table2_rows, table2_tex)
from .runs import measure_runs


@dataclass(frozen=True)
class Measured:
    status: GpuStatus  # the GPU found here, and why each GPU method cannot run
    frame: pd.DataFrame  # every pass of every run measured, with rates
    skipped: pd.DataFrame  # each run not measured here, with why
    table: pd.DataFrame  # summary: each run's best rate, across its processes
    jagged: pd.DataFrame  # jagged_table: explode and combine beside the flat add, one row per series
    archived_gpu: dict[str, tuple[pd.DataFrame, GpuStatus]]  # each archived machine's GPU runs, summarised alike
    archived_launches: dict[str, pd.DataFrame]  # what a launch costs on each archived machine that measured it


def measure(session: Any) -> Measured:
    """Is there a GPU (each GPU method says whether it can run here, and why not), do the arrays fit
    it; then every run that can run here, measured (or reused when stored) and checked: every
    method agrees with the exact result."""
    params = session.params
    status = detect_gpu(params["gpu_methods"])
    check_device_fit(params, status)
    frame, skipped = measure_runs(params, session.results_dir / "raw", status, session.noise)
    check_agreement(frame)
    table = summary(frame)
    with_gpu_runs = [a for a in session.archived if a.runs.get("gpu_bandwidth")]
    archived_gpu = {a.label: archived_summary(a.runs["gpu_bandwidth"]) for a in with_gpu_runs}
    launches = {a.label: launch_table(a.rows("gpu_bandwidth")) for a in with_gpu_runs}
    return Measured(status, frame, skipped, table, jagged_table(table), archived_gpu,
                    {label: rows for label, rows in launches.items() if not rows.empty})


def macros(measured: Measured, session: Any) -> dict[str, Any]:
    """Every number and sentence the paper section quotes (report.paper_macros)."""
    return paper_macros(session.params, measured.table, measured.skipped, measured.jagged, measured.status,
                        measured.frame, session.noise, session.archived, measured.archived_gpu)


def figures(measured: Measured, session: Any) -> dict[str, Any]:
    """Every figure the spec declares, drawn from what was measured (report): Table 2's cases
    beside the seed's GPUs, and explode/combine."""
    dtypes = session.params["dtypes"]
    return {"table2": table2_figure(table2_rows(measured.table, measured.skipped, dtypes), dtypes),
            "jagged": jagged_figure(measured.jagged, measured.skipped)}


def tables(measured: Measured, session: Any) -> dict[str, Table]:
    """Every table the spec declares, typeset from what was measured (report)."""
    dtypes, table, skipped = session.params["dtypes"], measured.table, measured.skipped
    archived_gpu = measured.archived_gpu
    return {
        "table2": Table(table2_tex(table2_rows(table, skipped, dtypes), dtypes)),
        "gpu_detail": Table(gpu_detail_tex(table, skipped)),
        # what a launch costs, apart: here and on each archived machine that measured it
        "launch_table": Table(launch_tex(launch_table(measured.frame), skipped, measured.archived_launches)),
        "jagged_table": Table(jagged_tex(measured.jagged, skipped)),
        # Table 2's GPU cases on this machine and every archived one, one column group each; each
        # fraction is of its own machine's device
        "machines_table": Table(machines_tex({THIS_MACHINE: (table, measured.status), **archived_gpu}, dtypes)),
        # and each archived GPU machine in full: every method's Table 2 runs, explode/combine, its verdicts
        "archived_detail": Table(archived_detail_tex(archived_gpu)),
        "archived_jagged": Table(archived_jagged_tex(archived_gpu)),
    }

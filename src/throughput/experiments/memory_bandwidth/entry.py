"""The memory bandwidth experiment's entries, one signature in every experiment (docs/architecture.md):
measure(session) -> Measured, then figures, tables and macros of (measured, session)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from ...machines.tables import THIS_MACHINE
from ...report.paper import Table
from .analysis import check_agreement, summary, with_rates
from .measuring import measure_runs, plan, run_label, run_name
from .report import (machine_table_frame, opt_levels_figure, opt_table_frame, paper_macros, ratio_table_frame,
                     thread_scaling_figure)


@dataclass(frozen=True)
class Measured:
    frame: pd.DataFrame  # every sample of every run, with rates
    table: pd.DataFrame  # summary: each run's rate with its interval across its processes
    run_labels: dict[str, str]  # run name -> what the paper calls it
    machine_tables: dict[str, pd.DataFrame]  # this machine's table and every archived machine's, summarised alike


def measure(session: Any) -> Measured:
    """Every run of the plan, measured (or reused when stored) and checked: each method's
    checksum is the expected one."""
    frame = measure_runs(session.params, session.results_dir / "raw", session.noise)
    check_agreement(frame)
    table = summary(frame)
    machine_tables = {THIS_MACHINE: table, **{a.label: summary(with_rates(a.rows("memory_bandwidth")))
                                              for a in session.archived if a.runs.get("memory_bandwidth")}}
    return Measured(frame, table, {run_name(run): run_label(run) for run in plan(session.params)}, machine_tables)


def macros(measured: Measured, session: Any) -> dict[str, Any]:
    """Every number and verdict the paper section quotes (report.paper_macros)."""
    return paper_macros(session.params, measured.table, measured.frame, session.fits, session.noise,
                        measured.run_labels, session.archived)


def figures(measured: Measured, session: Any) -> dict[str, Any]:
    """Every figure the spec declares, drawn from what was measured (report): the thread scaling,
    with every archived machine shown, and the -O levels."""
    return {"thread_scaling": thread_scaling_figure(measured.machine_tables),
            "opt_levels": opt_levels_figure(measured.table)}


def tables(measured: Measured, session: Any) -> dict[str, Table]:
    """Every table the spec declares, typeset from what was measured (report)."""
    return {"opt_table": Table(opt_table_frame(measured.table)),
            "ratio_table": Table(ratio_table_frame(measured.table), column_format="llrrrrrr"),
            # this machine beside every archived one; each row's ratios are within its own machine
            "machine_table": Table(machine_table_frame(measured.machine_tables),
                                   column_format="lrrrrrrrrr")}

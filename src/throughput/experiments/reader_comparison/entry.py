"""The reader comparison experiment's entries, one signature in every experiment (docs/architecture.md):
measure(session) -> Measured, then figures, tables and macros of (measured, session)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from ...core import harness
from ...machines.tables import THIS_MACHINE
from ...report.paper import Table
from . import report
from .analysis import (cannot_read, check_agreement, check_references, collection_shapes, fill_bytes, layout_targets,
                       ratios, summary)
from .inputs import prepare_inputs
from .measuring import measure_runs
from .report import paper_macros, table1_figure, time_split_figure, timeline_figure
from .spec import main_sets


@dataclass(frozen=True)
class Measured:
    inputs: dict[str, dict[str, Any]]  # set -> {role, layout, compression, root, rntuple, numpy}
    frame: pd.DataFrame  # every reader's rows of every run
    agreed: pd.DataFrame  # each (input, branch) pair's checksum, every reader agreeing
    table: pd.DataFrame  # summary with each input's bytes: rates with their intervals
    rated: pd.DataFrame  # table with each reader's ratios to the columnar one, noisy by its own interval
    unreadable: pd.DataFrame  # each reader that could not read an input, with why
    goals: dict[str, dict[str, Any]]  # seed 000's targets of each main layout (analysis.layout_targets)


def input_sets(session: Any) -> dict[str, dict[str, Any]]:
    """The input sets: the workflow's (session.inputs["inputs"]), else made (or reused) under
    results_dir/data by the functions the workflow's rules call."""
    return session.inputs.get("inputs") or prepare_inputs(session.params, session.settings["datasets"],
                                                           session.results_dir / "data")


def measure(session: Any) -> Measured:
    """The input sets (input_sets), every run measured (or reused when stored) and checked: every
    reader agrees with every other and with what each input held when it was made."""
    params = session.params
    inputs = input_sets(session)
    frame = measure_runs(params, inputs, session.results_dir / "raw", session.noise)
    agreed = check_agreement(frame)
    check_references(agreed, inputs)
    table = fill_bytes(summary(frame), inputs)
    return Measured(inputs, frame, agreed, table, ratios(table, session.noise.max_half_width), cannot_read(frame),
                    layout_targets(table, params))


def macros(measured: Measured, session: Any) -> dict[str, str]:
    """Every number and sentence the paper section quotes (report.paper_macros)."""
    return paper_macros(session.params, measured.table, measured.rated, measured.unreadable, measured.inputs,
                        harness.build_info("read_branch")["compiler"], frame=measured.frame, goals=measured.goals,
                        noise_settings=session.noise, archived=session.archived)


def figures(measured: Measured, session: Any) -> dict[str, Any]:
    """Every figure the spec declares, drawn from what was measured (report): the timeline, Table 1
    as bars, and where the columnar reader's time goes."""
    params = session.params
    return {"timeline": timeline_figure(measured.frame, params), "table1": table1_figure(measured.table, params),
            "time_split": time_split_figure(measured.goals, params)}


def tables(measured: Measured, session: Any) -> dict[str, Table]:
    """Every table the spec declares, typeset from what was measured (report)."""
    params, table, unreadable, inputs = session.params, measured.table, measured.unreadable, measured.inputs
    aod_set, nano_set = main_sets(params["compression"])
    timeline = params["timeline_collection"]
    shapes = {name: collection_shapes(inputs, measured.agreed, name) for name in (aod_set, nano_set)}
    cold = timeline if timeline in params["cold_collections"] else (params["cold_collections"] or [None])[0]
    # the split std::vector<class> file: every reader on it, and where a CMSSW-like read's time goes
    objects = report.object_frames(table, unreadable, measured.agreed, inputs, params["compression"])
    # Table 1's readers on this machine and every archived one, side by side
    machines = {THIS_MACHINE: table, **{a.label: summary(a.rows("reader_comparison")) for a in session.archived
                                        if a.runs.get("reader_comparison")}}
    return {
        "table1_aod": Table(report.table1_frame(table, unreadable, shapes[aod_set], aod_set, "aod")),
        "table1_nanoaod": Table(report.table1_frame(table, unreadable, shapes[nano_set], nano_set, "nanoaod")),
        "ratio_table": Table(report.ratio_frame(measured.rated, [aod_set, nano_set], timeline),
                             column_format="ll" + "r" * 8),
        "open_table": Table(report.open_frame(table, [aod_set, nano_set]), column_format="llrr"),
        "compression_table": Table(report.compression_frame(table, unreadable, inputs, timeline)),
        "real_table": Table(report.real_frame(table, unreadable, inputs)),
        # every reader that could not read an input, with its whole reason (the tables show a short one)
        "failures_table": Table(report.failures_frame(unreadable), column_format="llllp{0.3\\linewidth}"),
        "cold_table": Table(report.cold_frame(table, [aod_set, nano_set], cold), column_format="llrrr"),
        "table1_objects": Table(objects["table1_objects"]),
        "object_split_table": Table(objects["object_split_table"]),
        "machine_table": Table(report.machine_frame(machines, aod_set, nano_set, timeline)),
    }

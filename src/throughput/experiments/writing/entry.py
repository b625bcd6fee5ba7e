"""The writing experiment's entries, one signature in every experiment (docs/architecture.md):
measure(session) -> Measured, then figures, tables and macros of (measured, session)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from ...core import harness
from ...core.intervals import Estimate
from ...inputs import datasets
from ...machines.tables import THIS_MACHINE
from ...report.paper import Table
from ...setup import machine_fit
from . import report, spec
from .analysis import compression_share, seed003_claims, summary, uncompressed_speedup
from .measuring import KERNEL, check_agreement, measure_runs, medium_dirs, uncompressed_reference, with_rates
from .report import figure_events, figure_memory, figure_random, paper_macros


@dataclass(frozen=True)
class Measured:
    inputs: list[Path]  # the NanoAOD-like files the events workload reads
    aod_inputs: list[Path]  # the flat AOD-like file(s) the data products are built from
    dirs: dict[str, str]  # medium -> where it writes (measuring.medium_dirs)
    frame: pd.DataFrame  # every pass of every run but the uncompressed references, with rates
    table: pd.DataFrame  # summary: median per run, speed-up, efficiency
    references: pd.DataFrame  # the uncompressed reference runs' summary rows, left out of `table`
    compression_share: Estimate  # seed 001's time in compression (analysis.compression_share)
    uncompressed_speedup: Estimate  # seed 001's serialization, uncompressed (analysis.uncompressed_speedup)


def input_files(session: Any) -> tuple[list[Path], list[Path]]:
    """The events workload's NanoAOD-like files and the objects workload's AOD-like file: the
    workflow's (session.inputs "input_files" and "aod_files"), else those its spec names
    (spec.input_files) under results_dir/data, each made once with only the events this
    configuration reads."""
    params, section = session.params, session.settings["datasets"]
    nanoaod, aod = spec.input_files(params, section, session.results_dir / "data")
    workflow_nanoaod, workflow_aod = session.inputs.get("input_files"), session.inputs.get("aod_files")
    per_file = section["events_per_file"]
    for index, path in enumerate([] if workflow_nanoaod else nanoaod):
        if not Path(path).exists():
            datasets.make_nanoaod_like(path, min(per_file, params["events"] - index * per_file),
                                       section["compression"], section, index=index)
    for path in [] if workflow_aod else aod:
        if not Path(path).exists():
            datasets.make_aod_like(path, params["object_events"], section["compression"],
                                   datasets.level(section, section["compression"]), seed=section["seed"],
                                   source=datasets.source_path(section))  # the rule's source: the section's
    return [Path(p) for p in workflow_nanoaod or nanoaod], [Path(p) for p in workflow_aod or aod]


def measure(session: Any) -> Measured:
    """The inputs (input_files), every run measured (or reused when stored) and checked: every
    writer's output read back holds the source's entries."""
    params = session.params
    inputs, aod_inputs = input_files(session)
    dirs = medium_dirs(params, session.results_dir)
    frame = measure_runs(params, session.results_dir / "raw", dirs, inputs, session.noise, aod_inputs=aod_inputs)
    check_agreement(frame)
    table = summary(frame)
    # the uncompressed reference runs serve these two figures only: the seed-001 figures compare writers at
    # writing.event_compression (a row's summary depends on its own run and its 1-thread run of the
    # same compression only, so leaving the references' rows out afterwards changes no other row)
    share, speedup = compression_share(table, params), uncompressed_speedup(table, params)
    frame = frame[~frame.apply(uncompressed_reference, axis=1, params=params)].reset_index(drop=True)
    reference = table.apply(uncompressed_reference, axis=1, params=params).astype(bool)
    return Measured(inputs, aod_inputs, dirs, frame, table[~reference].reset_index(drop=True),
                    table[reference].reset_index(drop=True), share, speedup)


def macros(measured: Measured, session: Any) -> dict[str, str]:
    """Every number and state the paper section quotes (report.paper_macros)."""
    return paper_macros(measured.table, session.params, measured.frame, measured.dirs,
                        machine_fit.requested(session.fits, "writing.max_threads", None),
                        harness.build_info(KERNEL)["compiler"], session.noise, session.archived,
                        compression_share=measured.compression_share,
                        uncompressed_speedup=measured.uncompressed_speedup)


def figures(measured: Measured, session: Any) -> dict[str, Any]:
    """Every figure of the workloads the configuration measures, drawn from what was measured (report):
    the random workload's runtime, speed-up and memory, the events workload's scaling."""
    params, table = session.params, measured.table
    drawn = {}
    if params["random_methods"]:
        drawn["random_runtime"] = figure_random(table, "wall_s", "runtime [s]", params)
        drawn["random_speedup"] = figure_random(table, "speedup", "speed-up vs 1 thread", params, ideal=True)
        drawn["random_memory"] = figure_memory(table, params)
    if params["event_methods"]:
        drawn["events_scaling"] = figure_events(table, params)
    return drawn


def tables(measured: Measured, session: Any) -> dict[str, Table]:
    """Every table the spec declares, typeset from what was measured (report)."""
    params, table, frame = session.params, measured.table, measured.frame
    # each writer's speed-up on this machine and on every archived one, side by side (every run of
    # each, the uncompressed reference runs too: an archive's rows hold them)
    machines = {THIS_MACHINE: pd.concat([table, measured.references], ignore_index=True),
                **{a.label: summary(with_rates(a.rows("writing"))) for a in session.archived if a.runs.get("writing")}}
    return {
        "random_table": Table(report.random_table(table, params), column_format="lllrrrrrr"),
        "events_table": Table(report.events_table(table, params), column_format="lllrrrrrrrr"),
        "seed001_table": Table(report.seed001_table(table, params), column_format="lrrrr"),
        "seed001_size_table": Table(report.seed001_size_table(frame, params), column_format="lrrrrlr"),
        "seed001_setup_table": Table(report.seed001_setup_table(frame, params), column_format="lrrrrrrlrl"),
        "seed003_table": Table(report.seed003_table(seed003_claims(table, params)),
                               column_format="p{0.3\\textwidth}p{0.42\\textwidth}p{0.2\\textwidth}"),
        "machine_table": Table(report.machine_table(machines), text_columns=4),
    }

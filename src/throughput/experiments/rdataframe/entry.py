"""The RDataFrame experiment's entries, one signature in every experiment (docs/architecture.md):
measure(session) -> Measured, then figures, tables and macros of (measured, session)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from ...core import provenance
from ...inputs.datasets import source_path
from ...machines.tables import THIS_MACHINE
from ...report.paper import Table
from ...setup import machine_fit
from . import report
from .analysis import check_agreement, fit_amdahl, fit_usl, summary
from .distributed_rdf import measure_dask
from .inputs import preflight, resolve_inputs
from .io_rate_model import measure_rate_model, rate_summary
from .measuring import measure_cpp
from .report import archived_scan, not_measured_figure, paper_macros, rate_figure, scaling_figure

RUN_COLUMNS = ["part", "name", "compression", "method", "histograms", "threads"]  # what makes a compiled run


@dataclass(frozen=True)
class Measured:
    inputs: dict[str, Any]  # each part's input files (inputs.resolve_inputs)
    info: dict[str, Any]  # what preflight found in them: entries per file, PDF weights per event
    cpp: pd.DataFrame  # every rdf_bench pass of every compiled run
    table: pd.DataFrame  # summary of cpp, one row per run (RUN_COLUMNS)
    dask: pd.DataFrame  # distributed RDataFrame's passes (empty: not measured)
    dask_table: pd.DataFrame | None  # their summary (None: not measured)
    agreement: pd.DataFrame  # every run's histograms against its reference
    amdahl: dict[str, Any]  # Amdahl's law fitted to the thread scan
    usl: dict[str, Any] | None  # the universal scalability law fitted to it (None: too few points)
    rate_frames: dict[str, Any] | None  # the I/O rate model's passes (None: disabled)
    rates: dict[str, Any] | None  # rate_summary of them: table and fits (None: none measured)
    not_measured: dict[str, str]  # part -> why it was not measured here
    archived_scans: dict[str, pd.DataFrame]  # each archived machine's thread scan (where it has one), as this one's


def _thread_fits(table: pd.DataFrame) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """Amdahl's and the USL fitted to the thread scan's implicit-MT runs."""
    scan = table[(table["part"] == "scan") & (table["threads"] > 0)]
    threads, wall = scan["threads"].to_numpy(), scan["wall_s"].to_numpy()
    return fit_amdahl(threads, wall), fit_usl(threads, wall)


def measure(session: Any) -> Measured:
    """The inputs (session.inputs "input_files" or "input_dir", the workflow's; else made under
    results_dir/data) checked before any event loop, then the compiled runs, distributed
    RDataFrame, their histograms checked against one another, and the I/O rate model. Each of its
    readers first reads one entry of the real CMS file (not measured): what a process does once is
    not timed, as for PROOF-Lite's long-lived workers."""
    params, settings, results_dir, noise_settings = session.params, session.settings, session.results_dir, session.noise
    inputs = resolve_inputs(params, settings["datasets"], session.inputs.get("input_files"),
                            session.inputs.get("input_dir"), results_dir)
    info = preflight(params, inputs, results_dir / "work")
    cpp = measure_cpp(params, inputs, info["pdf_count"], results_dir, noise_settings)
    table = summary(cpp, RUN_COLUMNS)
    dask = measure_dask(params, inputs, info, results_dir)
    dask_table = summary(dask, ["name", "threads", "npartitions"]) if len(dask) else None
    reference = f"scan_{params['compression']}_t0"
    agreement = check_agreement(cpp, results_dir, params["rtol"],
                                {name: reference for name in dask["name"].unique()} if len(dask) else {})
    rate_frames = (measure_rate_model(params, inputs, info, results_dir, source_path(settings["datasets"]),
                                      noise_settings) if params["rate_model"]["enabled"] else None)
    rates = rate_summary(rate_frames, noise_settings) if rate_frames is not None and len(rate_frames["rate"]) else None
    not_measured = (dict(rate_frames["not_measured"]) if rate_frames is not None
                    else {"rate model": "disabled in the configuration"})
    if rate_frames is not None and rates is None:
        not_measured["rate model"] = "no cache state of rdataframe.rate_model.cache_states could be set up here"
    archived_scans = {a.label: scan for a in session.archived
                      if (scan := archived_scan(a.rows("rdataframe"))) is not None}
    return Measured(inputs, info, cpp, table, dask, dask_table, agreement, *_thread_fits(table), rate_frames, rates,
                    not_measured, archived_scans)


def macros(measured: Measured, session: Any) -> dict[str, str]:
    """Every number and sentence the paper section quotes (report.paper_macros)."""
    return paper_macros(session.params, measured.table, measured.agreement, measured.info, measured.amdahl,
                        measured.usl, measured.dask_table, measured.rates, measured.not_measured,
                        session.settings["datasets"],
                        machine_fit.requested(session.fits, "rdataframe.max_threads", None), inputs=measured.inputs,
                        cpp=measured.cpp, noise_settings=session.noise, archived=session.archived)


def figures(measured: Measured, session: Any) -> dict[str, Any]:
    """Every figure the spec declares, drawn from what was measured (report): the thread scaling
    with its fits and every archived machine's scan, and the I/O rate model (or why it was not
    measured)."""
    rate = (rate_figure(measured.rates) if measured.rates is not None
            else not_measured_figure(f"I/O rate model not measured: {measured.not_measured['rate model']}"))
    return {"scaling": scaling_figure(measured.table, measured.dask_table, measured.amdahl, measured.usl,
                                      archived=measured.archived_scans),
            "rate_model": rate}


def tables(measured: Measured, session: Any) -> dict[str, Table]:
    """Every table the spec declares, typeset from what was measured (report); a part the
    configuration left out is written as not measured (report.<part>_table says which)."""
    params, table, top = session.params, measured.table, session.params["max_threads"]
    return {
        "scaling_table": Table(report.scaling_table(table)),
        "machine_table": Table(report.machine_table({THIS_MACHINE: table,
                                                     **measured.archived_scans})),
        "storage_table": Table(report.storage_table(table, provenance.cpu_model(), top), column_format="lllrrrr"),
        "compression_table": Table(report.compression_table(table, session.settings["datasets"]["levels"],
                                                            params["compressions"], top)),
        "nhist_table": Table(report.nhist_table(table, top)),
        "pdf_table": Table(report.pdf_table(table, top), column_format="lrrrrr"),
        "dask_table": Table(report.dask_table(measured.dask_table, table)),
        "agreement_table": Table(report.agreement_table(measured.agreement), column_format="llrlr"),
        "rate_components_table": Table(report.rate_components_table(measured.rates), column_format="lrr"),
        "rate_fit_table": Table(report.rate_fit_table(measured.rates), text_columns=2),
    }

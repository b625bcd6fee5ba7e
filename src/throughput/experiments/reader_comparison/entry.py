"""The experiment's entries, the same for every experiment (docs/architecture.md):
`measure(session) -> Measured`, `figures(measured, session) -> dict` and
`macros(measured, session) -> dict`, where `session` is the
notebook's set-up (throughput.configuration.session: the checked parameters, noise settings,
output folders, input parameters, the archived machines shown).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from ...core import harness
from .analysis import cannot_read, check_agreement, check_references, fill_bytes, ratios, summary
from .inputs import prepare_inputs
from .measuring import measure_runs
from .report import paper_macros, table1_figure, time_split_figure, timeline_figure


@dataclass(frozen=True)
class Measured:
    inputs: dict[str, dict[str, Any]]  # set -> {role, layout, compression, root, rntuple, numpy}
    frame: pd.DataFrame  # every reader's rows of every run
    agreed: pd.DataFrame  # each (input, branch) pair's checksum, every reader agreeing
    table: pd.DataFrame  # summary with each input's bytes: rates with their intervals
    rated: pd.DataFrame  # table with each reader's ratios to the columnar one, noisy by its own interval
    unreadable: pd.DataFrame  # each reader that could not read an input, with why


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
    return Measured(inputs, frame, agreed, table, ratios(table, session.noise.max_half_width), cannot_read(frame))


def macros(measured: Measured, session: Any) -> dict[str, str]:
    """Every number and sentence the paper section quotes (report.paper_macros)."""
    return paper_macros(session.params, measured.table, measured.rated, measured.unreadable, measured.inputs,
                        harness.build_info("read_branch")["compiler"], frame=measured.frame,
                        noise_settings=session.noise, archived=session.archived)


def figures(measured: Measured, session: Any) -> dict[str, Any]:
    """Every figure the spec declares, drawn from what was measured (report): the timeline, Table 1
    as bars, and where the columnar reader's time goes."""
    params = session.params
    return {"timeline": timeline_figure(measured.frame, params), "table1": table1_figure(measured.table, params),
            "time_split": time_split_figure(measured.table, params)}

"""The method section's sentence on re-executing a notebook: how long each notebook ran with its
own defaults, one at a time, as a reviewer runs it on a Binder-like host, and the peak memory of its
process tree (throughput.core.standalone's records, from the workflow's rule standalone_notebook).
Numbers and states here, words in paper/sections/method.tex."""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..core.standalone import BINDER_BUDGET_S, BINDER_MEMORY_BYTES
from . import paper


def macros(records: Sequence[Mapping[str, Any]] | None) -> dict[str, str]:
    """StudyStandaloneState (measured, or off where the config left them out: `records` None) and,
    measured, StudyStandaloneList (\\standalonerun{notebook}{s}{GB} per notebook, in the records'
    order), the slowest notebook's time, the budget and the memory limit."""
    if records is None:
        return {"StudyStandaloneState": "off"}
    if not records:
        raise ValueError("standalone records: none given (the workflow runs every notebook when enabled)")
    items = [rf"\standalonerun{{{paper.escape(r['notebook'].removesuffix('.ipynb').replace('_', ' '))}}}"
             rf"{{{paper.number(r['wall_s'], 2)}}}{{{paper.number(r['peak_pss_bytes'] / 1e9, 2)}}}" for r in records]
    return {"StudyStandaloneState": "measured", "StudyStandaloneList": ", ".join(items),
            "StudyStandaloneSlowest": paper.number(max(r["wall_s"] for r in records), 2),
            "StudyStandaloneBudget": str(BINDER_BUDGET_S),
            "StudyStandaloneMemory": paper.number(BINDER_MEMORY_BYTES / 1e9, 2)}

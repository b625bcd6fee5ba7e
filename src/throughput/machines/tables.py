"""The machines one paper shows: this one, measured live, and the archived ones
(throughput.machines.archive), read beside it.

The config section `machines` names the archived machines (null: every one
under archive/). Each is validated when read (throughput.machines.archive.read); a
damaged or foreign file is named and left out whole, a wrong manifest leaves
the whole machine out, and what was left out is warned and said in the paper.
An experiment whose spec sets `shows_archived` gets the section as its
notebook's `machines` parameter; it takes each archived machine's rows from
`Archive.rows(experiment)`, makes the same summary of them as of its own runs,
and sets the machines side by side: a ratio is always taken within one
machine, never across two.

`describe` gives, for this machine and each archived one, where, when, at which
commits and with which software its runs were measured, from the provenance
each run carries; the method section's machine table is made of these rows.
"""
from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any, Mapping, Sequence

import pandas as pd

from . import archive

THIS_MACHINE = "this machine"
# How the paper names an experiment (its package's name otherwise, underscores as spaces).
_EXPERIMENT_NAMES = {"gpu_bandwidth": "GPU bandwidth", "rdataframe": "RDataFrame"}


def experiment_name(experiment: str) -> str:
    return _EXPERIMENT_NAMES.get(experiment, experiment.replace("_", " "))


def archive_dir(section: Mapping[str, Any]) -> Path:
    """Where the section's archived machines are: its archive_dir, else the repository's archive/."""
    return Path(section["archive_dir"]) if section.get("archive_dir") else archive.ARCHIVE_DIR


def check_config(section: dict[str, Any], fit) -> None:
    """Before any job: archive_dir, when set, must be a folder (else no machine would be shown, without
    a word); every label named must be an archived machine (a folder with a manifest)."""
    directory = archive_dir(section)
    if section.get("archive_dir") and not directory.is_dir():
        fit.problems.append(f"config key 'machines.archive_dir' = {section['archive_dir']!r}: "
                            f"{'not a folder' if directory.exists() else 'no such folder'} (it holds the archived "
                            f"machines, archive/<label>/; null is {archive.ARCHIVE_DIR})")
        return
    for label in section["archived"] or []:
        if not (directory / label / archive.MANIFEST).is_file():
            there = sorted(p.parent.name for p in directory.glob(f"*/{archive.MANIFEST}"))
            fit.problems.append(f"config key 'machines.archived' names {label!r}: no archived machine of that label "
                                f"under {directory} (there: {', '.join(there) or 'none'})")


def load_archived(section: Mapping[str, Any]) -> list[archive.Archive]:
    """The archived machines the section names, each validated (throughput.machines.archive.read).
    A machine whose manifest is wrong is left out whole; every problem is also warned."""
    found = archive.read_all(archive_dir(section), section.get("archived"))
    for read in found:
        for problem in read.problems:
            warnings.warn(f"archived machine {read.label}: {problem}", stacklevel=2)
    return found


def _span(dates: Sequence[str]) -> str:
    days = sorted({d[:10] for d in dates if d})
    if not days:
        return "unknown"
    return days[0] if len(days) == 1 else f"{days[0]} to {days[-1]}"


def describe(label: str, provenances: Mapping[str, Sequence[dict[str, Any]]]) -> dict[str, Any]:
    """Where, when, at which commits and with which software a machine's runs were measured,
    from the provenance every run carries (the newest run's hardware and software)."""
    runs = [p for experiment in sorted(provenances) for p in provenances[experiment]]
    if not runs:
        return {"machine": label, "CPU": "no runs", "cores": "", "memory GB": "", "GPU": "", "measured": "",
                "commits": "", "software": "", "experiments": ""}
    newest = max(runs, key=lambda p: p.get("date_utc", ""))
    packages = newest.get("packages", {})
    commits = sorted({str(p.get("git_commit", "unknown"))[:10] + ("+" if p.get("git_dirty") else "") for p in runs})
    return {
        "machine": label,
        "CPU": newest.get("cpu_model", "unknown"),
        "cores": newest.get("usable_cores", ""),
        "memory GB": round(newest["memory_bytes"] / 1e9) if newest.get("memory_bytes") else "",
        "GPU": "; ".join(newest.get("gpus") or []) or "none",
        "measured": _span([p.get("date_utc", "") for p in runs]),
        "commits": ", ".join(commits),
        # runs record the PyPI package `root` (0.1a12 holds ROOT 6.40.00), not ROOT's own version
        "software": f"Python {newest.get('python', '?')}, PyPI root {packages.get('root', '?')}, "
                    f"numpy {packages.get('numpy', '?')}, numba {packages.get('numba', '?')}",
        "experiments": ", ".join(experiment_name(e) for e in sorted(provenances) if provenances[e]),
    }


def table(live: Mapping[str, Sequence[dict[str, Any]]], archived: Sequence[archive.Archive]) -> pd.DataFrame:
    """One row per machine: this one (from its live runs' provenance), then each archived one."""
    return pd.DataFrame([describe(THIS_MACHINE, live), *(describe(a.label, a.provenances()) for a in archived)])


def archived_sentence(archived: Sequence[archive.Archive], experiment: str | None = None) -> str:
    """What the paper says of the archived machines: which are shown (those holding runs of
    `experiment`, if given), and what was left out of them when read."""
    if not archived:
        return ("No archived machine is shown: archive/ holds none (make archive NAME=<label> packs one), "
                "so every figure is this machine's.")
    if experiment is not None:
        holding = [a.label for a in archived if a.runs.get(experiment)]
        what = experiment_name(experiment)
        return (f"Archived machines with {what} runs: {', '.join(holding)}." if holding
                else f"No archived machine holds {what} runs, so this section shows this machine only.")
    shown = [a.label for a in archived if a.runs]
    text = (f"Beside this machine the paper shows {len(shown)} archived machine{'s' if len(shown) != 1 else ''}"
            f"{': ' + ', '.join(shown) if shown else ''}; each one's figures are its own, never mixed into "
            "a ratio with another machine's.")
    left_out = [f"{a.label}: {len(a.problems)} problem{'s' if len(a.problems) != 1 else ''} "
                f"({a.problems[0]})" for a in archived if a.problems]
    if left_out:
        text += " Left out when read, as damaged, foreign or unknown: " + "; ".join(left_out) + "."
    return text


def paper_table(frame: pd.DataFrame) -> pd.DataFrame:
    """`table`'s rows as the method section prints them: four columns of escaped text."""
    from ..report import paper  # here: the table helpers are not needed to read archives

    return pd.DataFrame({
        "machine": [paper.escape(m) for m in frame["machine"]],
        "hardware": [paper.escape(f"{r['CPU']}; {r['cores']} cores, {r['memory GB']} GB; GPU: {r['GPU']}")
                     for _, r in frame.iterrows()],
        "measured": [paper.escape(f"{r['measured']}, at {r['commits']}: {r['experiments']}")
                     for _, r in frame.iterrows()],
        "software": [paper.escape(s) for s in frame["software"]],
    })


def paper_macros(archived: Sequence[archive.Archive]) -> dict[str, str]:
    """The method section's macro (paper/generated/machines_macros.tex): which archived machines are shown."""
    from ..report import paper

    return {"StudyMachines": paper.escape(archived_sentence(archived))}

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

from ..report import paper
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


# The states the machines macros hold, by macro name after the prefix (<Prefix>MachinesState, a
# section's; StudyMachinesState and StudyMachinesLeftOutState, the method section's); each is worded
# by \variant{<family>}{<state>}{...} in paper/wording/machines.tex (the family: the key).
STATES: dict[str, tuple[str, ...]] = {
    "Machines": ("none", "holding", "notholding"),  # archive/ holds none; some hold the experiment's runs; none do
    "StudyMachines": ("none", "shown", "empty"),  # archive/ holds none; some are shown; none holds any run
    "MachinesLeftOut": ("none", "some"),  # files or machines left out when read
}
# The macros section_macros writes after a section's prefix (the sections use <Prefix>MachinesSentence).
SECTION_MACROS = ("MachinesSentence", "MachinesState", "MachinesList", "MachinesExperiment")


def _labels(labels: Sequence[str]) -> str:

    return ", ".join(paper.escape(label) for label in labels)


def archived_table(archived: Sequence[archive.Archive], experiment: str | None = None) -> pd.DataFrame:
    """One row per archived machine read, for a notebook's log: its runs (of `experiment`, if
    given), whether it is shown (holds any), and how many problems left files or the machine out
    when read, with the first one: what section_macros and paper_macros give the paper."""
    return pd.DataFrame([{"machine": a.label,
                          "runs": len(a.runs.get(experiment, [])) if experiment else sum(map(len, a.runs.values())),
                          "problems": len(a.problems), "first problem": a.problems[0] if a.problems else ""}
                         for a in archived], columns=["machine", "runs", "problems", "first problem"]).assign(
        shown=lambda frame: frame["runs"] > 0)


def section_macros(prefix: str, archived: Sequence[archive.Archive], experiment: str) -> dict[str, str]:
    """What a section says of the archived machines, as its macros: <prefix>MachinesState (none:
    archive/ holds none; holding: some hold runs of `experiment`, <prefix>MachinesList names them;
    notholding: none does), <prefix>MachinesExperiment (how the paper names the experiment) and
    <prefix>MachinesSentence, \\machinessentence{<prefix>} (paper/wording/machines.tex words it)."""

    holding = [a.label for a in archived if a.runs.get(experiment)]
    state = "holding" if holding else "notholding" if archived else "none"
    return {f"{prefix}MachinesSentence": rf"\machinessentence{{{prefix}}}", f"{prefix}MachinesState": state,
            f"{prefix}MachinesList": _labels(holding),
            f"{prefix}MachinesExperiment": paper.escape(experiment_name(experiment))}


def paper_table(frame: pd.DataFrame) -> pd.DataFrame:
    """`table`'s rows as the method section prints them: four columns of escaped text."""

    return pd.DataFrame({
        "machine": [paper.escape(m) for m in frame["machine"]],
        "hardware": [paper.escape(f"{r['CPU']}; {r['cores']} cores, {r['memory GB']} GB; GPU: {r['GPU']}")
                     for _, r in frame.iterrows()],
        "measured": [paper.escape(f"{r['measured']}, at {r['commits']}: {r['experiments']}")
                     for _, r in frame.iterrows()],
        "software": [paper.escape(s) for s in frame["software"]],
    })


def paper_macros(archived: Sequence[archive.Archive]) -> dict[str, str]:
    """The method section's macros (paper/generated/machines_macros.tex): StudyMachines
    (\\studymachines, worded in paper/wording/machines.tex), StudyMachinesState (none: archive/ holds
    none; shown: StudyMachinesCount machines hold runs, StudyMachinesList names them; empty: none
    holds any), and StudyMachinesLeftOutState (some: StudyMachinesLeftOut lists, per machine with
    problems, \\machinesleftout{label}{how many}{the first problem})."""

    shown = [a.label for a in archived if a.runs]
    left_out = [a for a in archived if a.problems]
    return {"StudyMachines": r"\studymachines",
            "StudyMachinesState": "shown" if shown else "empty" if archived else "none",
            "StudyMachinesCount": str(len(shown)), "StudyMachinesList": _labels(shown),
            "StudyMachinesLeftOutState": "some" if left_out else "none",
            "StudyMachinesLeftOut": "; ".join(
                rf"\machinesleftout{{{paper.escape(a.label)}}}{{{len(a.problems)}}}{{{paper.escape(a.problems[0])}}}"
                for a in left_out)}

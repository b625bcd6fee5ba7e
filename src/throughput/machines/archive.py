"""Archived machines: one machine's raw results, packed to be read beside another's.

`pack` copies the raw result files of the experiments (one Parquet file per
run, provenance and reuse key in its metadata: throughput.core.results) from a
results folder into `archive/<label>/<experiment>/`, and writes
`manifest.json`: the label, the machine's fingerprint and description, the
commits the runs were measured at, and each file's size and SHA-256. No
input data, figures or tables: a machine's archive is a few MB. `archive/` is
committed on purpose (the study's published measurements, as the seeds
published their tables); nothing else generated is.

`read` validates an archive before anything of it is used: the manifest's
form, every file listed present with its hash, every file a raw result whose
reuse key names the manifest's machine, every commit in this repository's
history, and no file the manifest does not list. A file that fails is named
in a problem and left out whole, never half-read; a manifest that fails
leaves the whole archive out.

    python -m throughput.machines.archive pack LABEL [--results DIR] [--to DIR] [--notes JSON] [--elsewhere WHY]
    python -m throughput.machines.archive check DIR...
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from .. import REPO
from ..core import provenance
from ..core.results import current_raw_files, read_metadata, read_raw, sha256

ARCHIVE_DIR = REPO / "archive"
MANIFEST = "manifest.json"
FORMAT = 1
LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
# What one machine's archive may weigh: raw timings only, never input data.
MAX_BYTES = 20 * 10**6


class ArchiveError(Exception):
    """An archive that cannot be packed or read, with the file or key at fault."""


def _raw_files(results_dir: Path, experiments: list[str] | None) -> dict[str, list[Path]]:
    found = {}
    for raw in sorted(results_dir.glob("*/raw")):
        if experiments is None or raw.parent.name in experiments:
            files = current_raw_files(raw)  # not the stored runs of another configuration
            if files:
                found[raw.parent.name] = files
    return found


def pack(label: str, results_dir: str | Path, target: str | Path | None = None,
         experiments: list[str] | None = None, notes: dict[str, Any] | None = None,
         elsewhere: str | None = None) -> Path:
    """Pack the raw results of `results_dir` (each `<experiment>/raw/*.parquet`) into
    `target` (default archive/<label>); returns the archive folder. Every run must carry
    this machine's fingerprint: an archive is one machine's. `notes` (what was not
    measured, and why) go into the manifest.

    `elsewhere` (why) packs runs brought back from a machine that could not pack them itself (a
    lease that ended before its pack step): every run must then carry one and the same other
    machine's fingerprint, which the manifest takes, with that machine's description and packages
    as its runs recorded them, and `packed_on` (this host, and why) says so."""
    if not LABEL.fullmatch(label):
        raise ArchiveError(f"archive label {label!r}: use letters, digits, '_', '.' and '-' (at most 64)")
    results_dir = Path(results_dir)
    target = Path(target) if target is not None else ARCHIVE_DIR / label
    if target.exists():
        raise ArchiveError(f"{target} exists: choose another label, or remove it to pack this machine again")
    found = _raw_files(results_dir, experiments)
    if not found:
        raise ArchiveError(f"no raw results under {results_dir}/*/raw/ to archive")
    metadata = {path: _metadata(path) for files in found.values() for path in files}  # the rows are copied, not read
    machine = provenance.fingerprint() if elsewhere is None else _runs_machine(metadata)
    entries, sources, commits, dirty = {}, {}, set(), False
    for experiment, files in found.items():
        for path in files:
            prov, key = metadata[path]
            if key.get("machine") != machine:
                raise ArchiveError(f"{path} was measured on {key.get('machine', {}).get('hostname', 'another machine')}"
                                   f", not on this one ({machine['hostname']}): an archive holds one machine's runs")
            commit = str(prov.get("git_commit", "unknown"))
            if commit.startswith("unknown"):
                raise ArchiveError(f"{path}: its run does not know its commit (measured outside a git checkout: "
                                   f"set {provenance.COMMIT_ENV} to the commit the tree is)")
            commits.add(commit)
            dirty = dirty or bool(prov.get("git_dirty"))
            relative = f"{experiment}/{path.name}"
            entries[relative], sources[relative] = {"sha256": sha256(path), "bytes": path.stat().st_size}, path
    size = sum(entry["bytes"] for entry in entries.values())
    if size > MAX_BYTES:
        raise ArchiveError(f"{results_dir}: {size / 1e6:.1f} MB of raw results, more than the {MAX_BYTES / 1e6:.0f} MB "
                           "an archived machine may hold")
    staging = target.with_name(target.name + ".packing")
    shutil.rmtree(staging, ignore_errors=True)
    for relative, source in sources.items():
        (staging / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, staging / relative)
    if elsewhere is None:
        description, packages, packed_on = provenance.machine(), provenance.package_versions(), {}
    else:  # the machine's own record, from its first run (its fingerprint agrees with every run's)
        first = next(iter(metadata.values()))[0]
        description = {k: first.get(k) for k in provenance.machine()}
        packages = first.get("packages", {})
        packed_on = {"packed_on": {**provenance.fingerprint(), "why": elsewhere}}
    manifest = {"format": FORMAT, "label": label, "packed_utc": dt.datetime.now(dt.timezone.utc).isoformat(),
                "machine": machine, "description": description, "commits": sorted(commits),
                "uncommitted_changes": dirty, **packed_on,
                "packages": packages, "notes": notes or {}, "files": entries}
    (staging / MANIFEST).write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    staging.rename(target)  # whole or not at all
    return target


@dataclass
class Archive:
    """What `read` gives: the validated runs per experiment, and why anything was left out."""

    label: str
    path: Path
    manifest: dict[str, Any]
    runs: dict[str, list[tuple[pd.DataFrame, dict[str, Any], dict[str, Any]]]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def rows(self, experiment: str) -> pd.DataFrame | None:
        """Every run's rows of `experiment`, one frame, as its measuring stored them, before the
        columns an experiment derives (None where the machine has no such run)."""
        frames = [frame for frame, _, _ in self.runs.get(experiment, [])]
        return pd.concat(frames, ignore_index=True) if frames else None

    def provenances(self) -> dict[str, list[dict[str, Any]]]:
        """Every run's provenance, per experiment."""
        return {experiment: [prov for _, prov, _ in runs] for experiment, runs in self.runs.items()}


def _metadata(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """A raw result's provenance and reuse key, or ArchiveError naming the file (it stops the pack)."""
    try:
        return read_metadata(path)
    except Exception as error:  # noqa: BLE001 - any unreadable file is named, and stops the pack
        raise ArchiveError(f"{path}: not a readable raw result ({error})") from error


def _runs_machine(metadata: dict[Path, tuple[dict[str, Any], dict[str, Any]]]) -> dict[str, Any]:
    """The one machine every run names in its reuse key (ArchiveError if several)."""
    machines = {json.dumps(key.get("machine"), sort_keys=True): path for path, (_, key) in metadata.items()}
    if len(machines) != 1:
        raise ArchiveError(f"the runs name {len(machines)} machines ({', '.join(str(p) for p in machines.values())}"
                           "): an archive holds one machine's runs")
    return json.loads(next(iter(machines)))


def _commit_known(commit: str) -> bool:
    try:
        return subprocess.run(["git", "-C", str(REPO), "cat-file", "-e", f"{commit}^{{commit}}"],
                              capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def _manifest_problems(path: Path, manifest: Any) -> list[str]:
    if not isinstance(manifest, dict):
        return [f"{path / MANIFEST}: not a JSON object"]
    missing = [k for k in ("format", "label", "machine", "commits", "files") if k not in manifest]
    if missing:
        return [f"{path / MANIFEST}: missing {', '.join(missing)}"]
    if manifest["format"] != FORMAT:
        return [f"{path / MANIFEST}: format {manifest['format']!r}, this study reads format {FORMAT}"]
    if manifest["label"] != path.name:
        return [f"{path / MANIFEST}: label {manifest['label']!r} is not its folder's name {path.name!r}"]
    unknown = [c for c in manifest["commits"] if not _commit_known(c)]
    if unknown:
        return [f"{path / MANIFEST}: commit {unknown[0]} is not in this repository's history"]
    return []


def read(path: str | Path) -> Archive:
    """An archive folder, validated (see the module's docstring). Raises ArchiveError only for
    a folder with no readable manifest; everything else is a problem in the result."""
    path = Path(path)
    try:
        manifest = json.loads((path / MANIFEST).read_text())
    except (OSError, ValueError) as error:
        raise ArchiveError(f"{path / MANIFEST}: cannot be read as an archive's manifest ({error})") from error
    archive = Archive(path.name, path, manifest if isinstance(manifest, dict) else {})
    archive.problems = _manifest_problems(path, manifest)
    if archive.problems:
        return archive  # nothing of an archive whose manifest is wrong is used
    listed = manifest["files"]
    for extra in sorted(p for p in path.rglob("*.parquet") if str(p.relative_to(path)) not in listed):
        archive.problems.append(f"{extra}: not listed in {MANIFEST} (a foreign file), left out")
    for relative, entry in sorted(listed.items()):
        file = path / relative
        if not file.is_file():
            archive.problems.append(f"{file}: listed in {MANIFEST} but missing, left out")
            continue
        if sha256(file) != entry.get("sha256"):
            archive.problems.append(f"{file}: its SHA-256 is not the manifest's (changed or damaged), left out")
            continue
        try:
            frame, prov, key = read_raw(file)
        except Exception as error:  # noqa: BLE001 - a damaged file is named and left out whole
            archive.problems.append(f"{file}: not a readable raw result ({error}), left out")
            continue
        if key.get("machine") != manifest["machine"]:
            archive.problems.append(f"{file}: measured on another machine than the manifest's, left out")
            continue
        archive.runs.setdefault(relative.split("/", 1)[0], []).append((frame, prov, key))
    return archive


def read_all(directory: str | Path = ARCHIVE_DIR, labels: list[str] | None = None) -> list[Archive]:
    """Every archived machine under `directory` (or the named `labels`), each validated."""
    directory = Path(directory)
    folders = sorted(p for p in directory.iterdir() if (p / MANIFEST).exists()) if directory.is_dir() else []
    if labels is not None:
        missing = [label for label in labels if not (directory / label / MANIFEST).exists()]
        if missing:
            raise ArchiveError(f"no archived machine {', '.join(missing)} under {directory}")
        folders = [directory / label for label in labels]
    return [read(folder) for folder in folders]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m throughput.machines.archive", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    packing = commands.add_parser("pack", help="pack this machine's raw results into archive/LABEL")
    packing.add_argument("label")
    packing.add_argument("--results", default="results", help="the results folder (default: results)")
    packing.add_argument("--to", default=None, help="the archive folder (default: archive/LABEL)")
    packing.add_argument("--notes", default=None, type=Path, metavar="JSON",
                         help="a JSON file of notes for the manifest (what was not measured, and why; the config)")
    packing.add_argument("--elsewhere", default=None, metavar="WHY",
                         help="the runs were measured on another machine, which could not pack them (say why): "
                              "the manifest takes that machine's fingerprint from the runs")
    checking = commands.add_parser("check", help="validate archive folders and list what each holds")
    checking.add_argument("folders", nargs="+")
    args = parser.parse_args(argv)
    try:
        if args.command == "pack":
            notes = json.loads(args.notes.read_text()) if args.notes else None
            target = pack(args.label, args.results, args.to, notes=notes, elsewhere=args.elsewhere)
            manifest = json.loads((target / MANIFEST).read_text())
            print(f"packed {len(manifest['files'])} runs of {manifest['machine']['hostname']} into {target}")
            return 0
        status = 0
        for folder in args.folders:
            archive = read(folder)
            counts = ", ".join(f"{e}: {len(r)} runs" for e, r in sorted(archive.runs.items())) or "no runs"
            print(f"{archive.path}: {counts}")
            for problem in archive.problems:
                print(f"  problem: {problem}")
                status = 1
        return status
    except ArchiveError as error:
        print(f"throughput.machines.archive: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

"""Archived machines: packed from a results folder, read back whole, and every damaged,
foreign or unknown part named and left out."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pandas as pd
import pytest

from throughput.machines import archive
from throughput.core import provenance, results

from conftest import REPO


def _run_file(path, value: float, machine=None, commit=None):
    """One raw result as the experiments write it: rows, provenance, reuse key."""
    frame = pd.DataFrame({"rep": [0, 1], "wall_s": [value, value * 1.01], "warmup": [False, False]})
    prov = provenance.capture({"n": 1}, "n/a (in-memory)")
    if commit is not None:
        prov["git_commit"] = commit
    key = results.reuse_key({"n": 1, "value": value})
    if machine is not None:
        key["machine"] = machine
    results.write_raw(frame, path, prov, key)
    return frame


@pytest.fixture
def measured(tmp_path):
    """A results folder with two experiments' raw runs of this machine."""
    root = tmp_path / "results"
    frames = {}
    for experiment, values in (("memory_bandwidth", (1.0, 2.0)), ("gpu_bandwidth", (3.0,))):
        (root / experiment / "raw").mkdir(parents=True)
        for value in values:
            name = f"run_{value:g}.parquet"
            frames[f"{experiment}/{name}"] = _run_file(root / experiment / "raw" / name, value)
    (root / "memory_bandwidth" / "summary.csv").write_text("not a raw result: not archived\n")
    return root, frames


def test_an_archive_round_trips_every_run_with_the_machine_and_commit(measured, tmp_path):
    root, frames = measured
    target = archive.pack("this-machine", root, tmp_path / "archive" / "this-machine",
                          notes={"not_measured": {"gpu": "no GPU on this host"}})
    manifest = json.loads((target / archive.MANIFEST).read_text())
    assert manifest["machine"] == provenance.fingerprint() and manifest["label"] == "this-machine"
    assert manifest["commits"] == [provenance.git_state()["git_commit"]]
    assert sorted(manifest["files"]) == sorted(frames) and manifest["notes"]["not_measured"]["gpu"]
    assert not list(target.rglob("*.csv")), "only raw results are archived"
    read = archive.read(target)
    assert read.problems == []
    got = {f"{experiment}/run_{frame['wall_s'].iloc[0]:g}.parquet": frame
           for experiment, runs in read.runs.items() for frame, _, _ in runs}
    assert sorted(got) == sorted(frames)
    for name, frame in frames.items():
        pd.testing.assert_frame_equal(got[name], frame)
    assert [a.label for a in archive.read_all(tmp_path / "archive")] == ["this-machine"]


def test_only_the_latest_executions_runs_are_packed(measured, tmp_path, monkeypatch):
    # A run of an earlier configuration stays in results/ (a switch back reuses it) but is
    # not this configuration's: the archive, like the paper, leaves it out.
    root, frames = measured
    monkeypatch.setattr(results, "EXECUTION", "a later configuration")
    _run_file(root / "memory_bandwidth" / "raw" / "run_2.parquet", 2.0)
    target = archive.pack("this-machine", root, tmp_path / "archive" / "this-machine")
    packed = json.loads((target / archive.MANIFEST).read_text())["files"]
    assert sorted(packed) == ["gpu_bandwidth/run_3.parquet", "memory_bandwidth/run_2.parquet"]


def test_a_damaged_or_foreign_file_is_named_and_left_out_whole(measured, tmp_path):
    root, _ = measured
    target = archive.pack("m1", root, tmp_path / "m1")
    damaged = target / "memory_bandwidth" / "run_1.parquet"
    data = bytearray(damaged.read_bytes())
    data[len(data) // 2] ^= 0xFF
    damaged.write_bytes(bytes(data))
    foreign = target / "gpu_bandwidth" / "copied_in.parquet"
    shutil.copy(root / "gpu_bandwidth" / "raw" / "run_3.parquet", foreign)
    (target / "gpu_bandwidth" / "run_3.parquet").unlink()
    read = archive.read(target)
    assert any(str(damaged) in p and "SHA-256" in p for p in read.problems), read.problems
    assert any(str(foreign) in p and "foreign" in p for p in read.problems), read.problems
    assert any("run_3.parquet" in p and "missing" in p for p in read.problems), read.problems
    assert {e: len(r) for e, r in read.runs.items()} == {"memory_bandwidth": 1}  # only the intact run
    assert subprocess.run([sys.executable, "-m", "throughput.machines.archive", "check", str(target)],
                          capture_output=True, text=True).returncode == 1


def test_a_manifest_that_is_wrong_leaves_the_whole_archive_out(measured, tmp_path):
    root, _ = measured
    target = archive.pack("m2", root, tmp_path / "m2")
    manifest = json.loads((target / archive.MANIFEST).read_text())
    manifest["commits"] = ["0" * 40]
    (target / archive.MANIFEST).write_text(json.dumps(manifest))
    read = archive.read(target)
    assert read.runs == {} and f"commit {'0' * 40} is not in this repository's history" in read.problems[0]
    manifest["format"] = 99
    (target / archive.MANIFEST).write_text(json.dumps(manifest))
    assert "format 99" in archive.read(target).problems[0]
    (target / archive.MANIFEST).write_text("{not json")
    with pytest.raises(archive.ArchiveError, match="cannot be read as an archive's manifest"):
        archive.read(target)
    with pytest.raises(archive.ArchiveError, match="no archived machine nowhere"):
        archive.read_all(tmp_path, ["nowhere"])


def test_runs_of_another_machine_are_refused_when_packed_and_when_read(measured, tmp_path):
    root, _ = measured
    target = archive.pack("m3", root, tmp_path / "m3")
    manifest = json.loads((target / archive.MANIFEST).read_text())
    manifest["machine"] = {**manifest["machine"], "hostname": "elsewhere"}
    (target / archive.MANIFEST).write_text(json.dumps(manifest))
    read = archive.read(target)
    assert read.runs == {} and all("another machine" in p for p in read.problems) and len(read.problems) == 3
    other = {**provenance.fingerprint(), "hostname": "elsewhere"}
    _run_file(root / "gpu_bandwidth" / "raw" / "copied.parquet", 9.0, machine=other)
    with pytest.raises(archive.ArchiveError, match="copied.parquet was measured on elsewhere"):
        archive.pack("m4", root, tmp_path / "m4")
    assert not (tmp_path / "m4").exists()


def test_pack_names_a_bad_label_an_existing_archive_and_a_run_without_its_commit(measured, tmp_path):
    root, _ = measured
    with pytest.raises(archive.ArchiveError, match="archive label 'a b'"):
        archive.pack("a b", root, tmp_path / "x")
    archive.pack("m5", root, tmp_path / "m5")
    with pytest.raises(archive.ArchiveError, match="m5 exists"):
        archive.pack("m5", root, tmp_path / "m5")
    _run_file(root / "gpu_bandwidth" / "raw" / "nocommit.parquet", 4.0, commit="unknown (not a git checkout)")
    with pytest.raises(archive.ArchiveError, match="nocommit.parquet: .* set THROUGHPUT_COMMIT"):
        archive.pack("m6", root, tmp_path / "m6")
    with pytest.raises(archive.ArchiveError, match="no raw results"):
        archive.pack("m7", tmp_path / "empty", tmp_path / "m7")


def test_the_archive_folder_of_the_repository_is_valid():
    """Whatever is committed under archive/ reads without a problem."""
    for read in archive.read_all(REPO / "archive"):
        assert read.problems == [], read.problems


def test_every_committed_archive_validates_and_holds_runs():
    """The study's published measurements (archive/): each folder reads without a problem (form,
    hashes, one machine, commits in this history), and holds at least one experiment's runs."""
    root = archive.ARCHIVE_DIR
    for folder in sorted(path for path in root.iterdir() if path.is_dir()) if root.is_dir() else []:
        read = archive.read(folder)
        assert read.problems == [], (folder, read.problems)
        assert any(read.runs.values()), folder


def test_runs_brought_back_from_another_machine_are_packed_as_that_machines_with_where_and_why(measured, tmp_path):
    """A lease that ended before its pack: its runs, packed here, keep their own machine (fingerprint,
    description and packages as the runs recorded them), the manifest says where and why, and the
    archive reads back whole; runs of two machines, or of this one mixed in, are refused."""
    root = tmp_path / "node"
    (root / "gpu_bandwidth" / "raw").mkdir(parents=True)
    node = {**provenance.fingerprint(), "hostname": "gpu-node", "gpus": ["NVIDIA H200, 580"]}
    for value in (1.0, 2.0):
        _run_file(root / "gpu_bandwidth" / "raw" / f"run_{value:g}.parquet", value, machine=node)
    with pytest.raises(archive.ArchiveError, match="measured on gpu-node"):
        archive.pack("node", root, tmp_path / "refused")
    target = archive.pack("node", root, tmp_path / "archived" / "node", elsewhere="its lease ended before the pack")
    manifest = json.loads((target / archive.MANIFEST).read_text())
    assert manifest["machine"] == node
    assert manifest["packed_on"] == {**provenance.fingerprint(), "why": "its lease ended before the pack"}
    first = results.read_provenance(root / "gpu_bandwidth" / "raw" / "run_1.parquet")
    assert manifest["description"] == {k: first[k] for k in provenance.machine()}
    assert manifest["packages"] == first["packages"]
    read = archive.read(target)
    assert read.problems == [] and len(read.runs["gpu_bandwidth"]) == 2
    _run_file(root / "gpu_bandwidth" / "raw" / "mine.parquet", 3.0)
    with pytest.raises(archive.ArchiveError, match="name 2 machines"):
        archive.pack("mixed", root, tmp_path / "mixed", elsewhere="why")
    assert not (tmp_path / "mixed").exists()

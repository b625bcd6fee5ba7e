"""Writing experiment: every writer reads back what it wrote, all agree, errors are named, analysis is right."""
from __future__ import annotations

import math
import re
import shutil
import struct
import subprocess
import tempfile
from pathlib import Path

import awkward as ak
import cramjam
import numpy as np
import pandas as pd
import pytest
import uproot

from conftest import aod_small_arrays, loops_follow_the_calibration_rule
from throughput import configuration
from throughput.setup import config
from throughput.inputs import datasets
from throughput.core import harness, intervals, noise
from throughput.experiments import writing as wr
from throughput.experiments.reader_comparison import SEED_TABLE1

METHODS = ("tbuffermerger", "rntuple", "root_imt", "simple")
EVENTS_IN_FILE = 60
SECTION = configuration.validate({}, check_resources=False)


KERNELS_USED = (wr.KERNEL, wr.READER, "make_aod_like")  # checked by conftest's built_kernels
AOD_EVENTS = 40
# The flat AOD-like file's columns: six counters and every value of the six classes' members
# (seed 000's attribute counts, 906 in all), a small array's (Float_t[3]) three columns.
FLAT_AOD_COLUMNS = sum(1 + attributes + 2 * len(aod_small_arrays(attributes))
                       for attributes in SEED_TABLE1["attributes"])


@pytest.fixture(scope="module")
def nanoaod(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("writing_inputs") / "part0.root"
    datasets.make_nanoaod_like(path, EVENTS_IN_FILE, "ZLIB", SECTION["datasets"], progress=False)
    return path


@pytest.fixture(scope="module")
def aod_flat(tmp_path_factory) -> Path:
    """A flat AOD-like file (the one the reader comparison reads too), from which the data products are built."""
    path = tmp_path_factory.mktemp("writing_aod") / "aod.root"
    datasets.make_aod_like(path, AOD_EVENTS, "ZLIB", 1, seed=3, progress=False)
    return path


@pytest.fixture
def tmpfs_dir():
    with tempfile.TemporaryDirectory(dir="/dev/shm") as directory:
        yield directory


def run(args: dict, **kw):
    base = {"reps": 1, "warmup": 1, "threads": 2, "medium": "memory", "compression": "LZ4", "level": 4}
    return harness.run_kernel(wr.KERNEL, {**base, **args}, **kw)


# ---- every writer, every medium: read back and agree ------------------------------------------

@pytest.mark.parametrize("medium", ["memory", "tmpfs", "disk", "slow"])
def test_random_workload_every_writer_reads_back_the_same_entries(medium, tmpfs_dir, tmp_path):
    directory = tmpfs_dir if medium == "tmpfs" else str(tmp_path)
    checksums, frames = set(), []
    for method in METHODS:
        result = run({"workload": "random", "method": method, "mb": 0.04, "random-branches": 2, "medium": medium,
                      "dir": directory, "slow-mb-s": 50})
        v, t = result.validation, result.timings
        assert v["ok"] and v["entries"] == 2500 and v["raw_bytes"] == 40000 and v["passes_checked"] == 2
        assert len(t) == 2 and list(t["warmup"]) == [True, False]
        assert set(t["method"]) == {method} and set(t["medium"]) == {medium}
        assert (t["file_bytes"] > 0).all() and (t["peak_rss_bytes"] >= t["start_rss_bytes"]).all()
        if medium == "tmpfs":
            assert set(t["fs_type"]) == {"tmpfs"}
        # each pass reports what it read back from its own output
        assert set(t["checksum"]) == {v["checksum"]} == {v["source_checksum"]}
        assert (t["read_entries"] == 2500).all() and t["column_checksums"].str.count(",").eq(1).all()
        checksums.add(v["checksum"])
        frames.append(t.rename(columns={"workload": "part"}).assign(source_checksum=v["source_checksum"]))
    assert len(checksums) == 1, "writers disagree on what they wrote"
    assert not list(Path(directory).iterdir()), "outputs were left behind"
    frame = pd.concat(frames, ignore_index=True)
    wr.check_agreement(frame)
    # One writer's read-back of one column altered: the agreement check names it.
    frame.loc[frame["method"] == "rntuple", "column_checksums"] = frame["column_checksums"].str.replace(
        r"^[0-9a-f]", lambda m: "f" if m.group(0) != "f" else "e", regex=True)
    with pytest.raises(AssertionError, match=r"method=rntuple.*first differing column #0"):
        wr.check_agreement(frame)


@pytest.mark.parametrize("medium", ["memory", "tmpfs"])
def test_samples_repeat_the_write_to_their_minimum_length_and_read_back_every_pass(medium, tmpfs_dir):
    result = run({"workload": "random", "method": "rntuple", "mb": 0.04, "random-branches": 2, "medium": medium,
                  "dir": tmpfs_dir, "reps": 3, "min-sample-s": 0.2, "read-back": "every"})
    v, t = result.validation, result.timings
    # Whether one sample repeats depends on how long the pass before it took on a busy host (CI
    # once saw a 40 kB write take over 20 ms); 0.2 s leaves room, and the rule itself is replayed.
    assert (t["loops"] > 1).any() and loops_follow_the_calibration_rule(t, 1, 0.2)
    assert v["ok"] and v["passes_checked"] == v["passes_written"] == t["loops"].sum()
    assert set(t["checksum"]) == {v["source_checksum"]} and (t["read_entries"] == 2500).all()
    assert not list(Path(tmpfs_dir).iterdir()), "outputs were left behind"
    # a row rates one pass: its sample's write time over its passes
    rated = wr.with_rates(t.assign(baseline_rss_bytes=0))
    assert (rated["pass_s"] == t["wall_s"] / t["loops"]).all()
    assert (rated["mb_s"] == t["raw_bytes"] / rated["pass_s"] / 1e6).all()


def test_by_default_a_process_reads_back_its_first_and_last_pass(nanoaod, tmpfs_dir):
    result = run({"workload": "events", "method": "root_imt", "inputs": nanoaod, "events": 30, "medium": "tmpfs",
                  "dir": tmpfs_dir, "threads": 1, "reps": 3, "min-sample-s": 0.05})
    v, t = result.validation, result.timings
    assert v["ok"] and v["passes_checked"] == 2 and v["passes_written"] == t["loops"].sum() > 2
    read = t["column_checksums"] != ""
    assert list(read) == [True, False, False, True], "the warm-up's and the last sample's rows say what they read"
    assert set(t.loc[read, "checksum"]) == {v["source_checksum"]} and (t.loc[read, "read_entries"] == 30).all()
    assert (t.loc[~read, "checksum"] == "").all() and (t.loc[~read, "read_entries"] == -1).all()
    assert (t["basket_bytes"] > 0).all(), "every pass's baskets are counted, read back or not"
    assert not list(Path(tmpfs_dir).iterdir()), "outputs were left behind"
    # the agreement check takes the rows that read back, and a round that read nothing back is named
    frame = t.rename(columns={"workload": "part"}).assign(source_checksum=v["source_checksum"], run="r", round=0)
    wr.check_agreement(frame)
    with pytest.raises(AssertionError, match=r"read no output back: \[\('r', 0\)\]"):
        wr.check_agreement(frame.assign(column_checksums=""))


def test_other_seed_other_checksum():
    a = run({"workload": "random", "method": "rntuple", "mb": 0.01, "seed": 1}).validation["checksum"]
    b = run({"workload": "random", "method": "rntuple", "mb": 0.01, "seed": 2}).validation["checksum"]
    assert a != b


@pytest.mark.parametrize("compression", wr.COMPRESSIONS)
def test_every_compression_reads_back(compression, nanoaod):
    sizes, checksums = {}, set()
    for method in ("tbuffermerger", "rntuple"):
        result = run({"workload": "events", "method": method, "inputs": nanoaod, "events": EVENTS_IN_FILE,
                      "compression": compression, "level": 1 if compression == "none" else 3,
                      "branches": "Jet_*,Muon_*,HLT_*"})
        sizes[method] = int(result.timings["file_bytes"].iloc[0])
        checksums.add(result.validation["checksum"])
        assert set(result.timings["compression"]) == {compression}
    assert len(checksums) == 1


def test_compression_makes_files_smaller(nanoaod):
    size = {c: int(run({"workload": "events", "method": "root_imt", "inputs": nanoaod, "events": 200,
                        "compression": c, "threads": 1, "branches": "Jet_*,Muon_*"}).timings["file_bytes"].iloc[0])
            for c in ("none", "LZMA")}
    assert size["LZMA"] < 0.8 * size["none"]


def _every_writer(workload: str, methods: tuple[str, ...], inputs: Path, events: int, tmpfs_dir: str) -> dict:
    """Each writer's validation record at 1 and 2 threads, writing `events` entries of `workload` to tmpfs."""
    return {(method, threads): run({"workload": workload, "method": method, "inputs": inputs, "events": events,
                                    "threads": threads, "medium": "tmpfs", "dir": tmpfs_dir})
            for method in methods for threads in (1, 2)}


def test_event_methods_agree_and_replay_the_input(nanoaod, tmpfs_dir):
    results = _every_writer("events", ("root_imt", "simple", "rntuple"), nanoaod, 100, tmpfs_dir)
    for (method, threads), result in results.items():
        v = result.validation
        assert v["entries"] == 100 and v["loaded_events"] == EVENTS_IN_FILE and v["columns"] == 947
        if method == "root_imt":
            assert set(result.timings["imt_pool"]) == ({0} if threads == 1 else {threads})
    checksums = {key: result.validation["checksum"] for key, result in results.items()}
    assert len(set(checksums.values())) == 1, checksums


def test_data_products_read_back_as_the_flat_files_values_by_every_writer(aod_flat, tmpfs_dir):
    # The flat columns written as they are: the reference.
    flat = run({"workload": "events", "method": "simple", "inputs": aod_flat, "events": 50}).validation
    assert flat["columns"] == FLAT_AOD_COLUMNS
    results = _every_writer("objects", ("root_imt", "simple_root", "simple"), aod_flat, 50, tmpfs_dir)
    for result in results.values():
        v = result.validation
        assert v["entries"] == 50 and v["loaded_events"] == AOD_EVENTS and v["source_checksum"] == flat["checksum"]
    digests = {key: result.validation["checksum"] for key, result in results.items()}  # products read back, flattened
    assert set(digests.values()) == {flat["checksum"]}, digests


def test_root_serialized_records_follow_the_documented_layout(aod_flat, tmp_path):
    result = run({"workload": "objects", "method": "simple_root", "inputs": aod_flat, "events": 12,
                  "medium": "disk", "dir": tmp_path, "keep": 1})
    serialization, columns, events = _parse_simple(Path(result.validation["kept"]))
    assert serialization == 1 and len(columns) == FLAT_AOD_COLUMNS and sorted(events) == list(range(12))
    photons = uproot.open(aod_flat)["Events"]["nPhoton"].array(library="np")
    for number, products in events.items():
        assert len(products) == 6  # one per collection, in the classes' order
        first = products[0]  # ROOT's class tag names the product's class, then its members follow
        assert b"vector<aod::Photon>" in first[:64]
        assert len(first) > photons[number % AOD_EVENTS] * 205 * 0.9  # Photon: 205 members, mostly 4 bytes


def test_products_serialized_concurrently_make_the_same_records_as_one_thread(aod_flat, tmp_path):
    # with several threads an event's products are serialized by different threads and
    # assembled by the last: each event's record must hold the same products, in order.
    # Whether an event is split depends on the scheduler: with 30 events one thread could
    # finish them all before the others started on a loaded machine (CI saw none split);
    # 300 events split dozens of times here, at least 2 a pass with every core busy.
    events = 300
    records, split = {}, {}
    for threads in (1, 3):
        result = run({"workload": "objects", "method": "simple_root", "inputs": aod_flat, "events": events,
                      "threads": threads, "medium": "disk", "dir": tmp_path, "keep": 1})
        split[threads] = result.timings["events_split"].tolist()
        kept = Path(result.validation["kept"])
        records[threads] = _parse_simple(kept)[2]
        kept.unlink()
    assert sorted(records[1]) == sorted(records[3]) == list(range(events))
    assert all(records[3][number] == records[1][number] for number in range(events))
    assert split[1] == [0, 0]  # one thread never splits an event
    assert all(0 <= n <= events for n in split[3]) and sum(split[3]) > 0  # the concurrent path was taken
    other = run({"workload": "objects", "method": "simple", "inputs": aod_flat, "events": 5}).timings
    assert set(other["events_split"]) == {-1}  # not ROOT-serialized products: not counted


def test_data_products_from_a_file_that_is_not_aod_like_are_a_named_error(nanoaod):
    # NanoAOD has nPhoton and Photon_pt, but not the AOD class's other members
    with pytest.raises(harness.KernelError, match="the input has no column Photon_a001 for aod::Photon"):
        run({"workload": "objects", "method": "simple_root", "inputs": nanoaod, "events": 5})


def _baskets_in_file(path: Path, tree: str) -> int:
    """Every basket's bytes on file (key included) over every branch and sub-branch, as uproot reads them."""
    def walk(branch):
        yield branch
        for sub in branch.branches:
            yield from walk(sub)
    with uproot.open(path) as f:
        return sum(b.compressed_bytes for top in f[tree].branches for b in walk(top))


@pytest.mark.parametrize("workload, method", [("events", "root_imt"), ("objects", "root_imt"),
                                              ("random", "tbuffermerger"), ("events", "simple")])
def test_basket_bytes_are_the_written_files_baskets(workload, method, nanoaod, aod_flat, tmp_path):
    # the disk medium, fsync-ed, keeps the last pass's file for reading it back here
    inputs = {"events": nanoaod, "objects": aod_flat}.get(workload, "")
    t = run({"workload": workload, "method": method, "inputs": inputs, "events": 30, "mb": 0.5, "medium": "disk",
             "dir": tmp_path, "keep": 1, "flush-mb": 0 if workload != "random" else 0.2}).timings.iloc[-1]
    if method == "simple":  # no baskets: the simple format's records are its file
        assert t["basket_bytes"] == -1
        return
    kept = tmp_path / f"write_bench_{method}.root"
    assert t["basket_bytes"] == _baskets_in_file(kept, "random" if workload == "random" else "Events")
    assert 0 < t["basket_bytes"] < t["file_bytes"] == kept.stat().st_size  # the rest is ROOT's metadata


def test_disturbed_samples_are_written_again_and_counted(nanoaod):
    # any wait for a CPU above a share of 1e-9 of a sample counts as disturbed: each sample is taken
    # again until it has none or its two retakes are spent; every take is written and read back
    result = run({"workload": "events", "method": "simple", "inputs": nanoaod, "events": 30, "reps": 3,
                  "warmup": 1, "max-run-delay-share": 1e-9, "max-sample-retakes": 2})
    t = result.timings
    measured = t[~t["warmup"]]
    assert measured["sample_retakes"].between(0, 2).all() and (t.loc[t["warmup"], "sample_retakes"] == 0).all()
    assert (measured["run_delay_s"] >= 0).all()
    assert not ((measured["sample_retakes"] < 2) & (measured["run_delay_s"] > 1e-9 * measured["wall_s"] * 2)).any()
    assert result.validation["passes_written"] == (t["loops"] * (1 + t["sample_retakes"])).sum()
    # the warm-up's first pass and every take's last pass of the last sample are read back
    assert result.validation["passes_checked"] == 2 + t["sample_retakes"].iloc[-1]
    # ROOT + IMT on every core: its own threads wait for each other's CPUs, which the rule cannot
    # tell from a disturbance, so no sample is taken again however long they waited
    import os
    imt = run({"workload": "events", "method": "root_imt", "inputs": nanoaod, "events": 30, "reps": 2,
               "threads": os.cpu_count(), "max-run-delay-share": 1e-9, "max-sample-retakes": 2}).timings
    assert (imt["sample_retakes"] == 0).all()
    # without the rule no sample is taken again
    plain = run({"workload": "events", "method": "simple", "inputs": nanoaod, "events": 30, "reps": 2}).timings
    assert (plain["sample_retakes"] == 0).all()


def test_size_table_and_the_speed_ups_with_and_without_roots_set_up():
    from throughput.core import intervals
    frame = _synthetic(PARAMS)  # ROOT + IMT's fixed cost 1 s, the simple format's 0.05 s, 0.1 s ROOT-serialized
    setups = wr.setup_rows(frame, PARAMS).set_index(["part", "threads"])
    one = setups.loc[("events", 1)]
    # 2 T(N) - T(2N) in each round (the rounds 1% apart): its mean, and its share of the N-entry pass
    assert one["root_setup"].value == pytest.approx(1.0 * 1.005) and one["simple_setup"].value == pytest.approx(0.05 * 1.005)
    assert one["root_share"].value == pytest.approx(1 / 3) and one["root_share"].low < 1 / 3 < one["root_share"].high
    # with the set-up: the pass times' ratio; without: the extra N entries' times, (3 - 1) / (1 - 0.05)
    assert one["faster"].value == pytest.approx(3.0) and one["faster_verdict"] == intervals.Verdict.MET
    assert one["faster_without"].value == pytest.approx(2 / 0.95)
    objects = setups.loc[("objects", 1)]  # ROOT-serialized: 2 s per pass, 0.1 s of it fixed
    assert objects["faster_without"].value == pytest.approx((3 - 1.0) / (2 - 0.1))
    assert list(setups.index) == [("events", 1), ("objects", 1)]  # set-up runs at one thread only
    sizes = wr.size_rows(frame, PARAMS).set_index(["who", "events"])
    events = sizes.loc[("this run, NanoAOD-like, simple format", 1000)]
    assert events["ratio"].value == pytest.approx(3.0) and events["verdict"] == intervals.Verdict.MET
    assert events["root_mb"] == pytest.approx(100 * 1000 / 1000 / 1e6)
    # ROOT's 20 kB of metadata: a fifth of its file at N entries, a tenth at 2N
    assert events["metadata"].value == pytest.approx(0.2)
    assert sizes.loc[("this run, NanoAOD-like, simple format", 2000), "metadata"].value == pytest.approx(0.1)
    assert sizes.loc[("this run, MiniAOD-like products, simple format, ROOT-serialized", 1000), "ratio"].value == \
        pytest.approx(2.0)
    assert sizes.loc[("seed, AOD", 100), "ratio"].value == 4.44
    table = wr.seed001_setup_table(frame, PARAMS)
    assert list(table["verdict"]) == ["met"] * 2 and len(wr.seed001_size_table(frame, PARAMS)) == 3 + 4
    values = wr.paper_macros(wr.summary(frame), PARAMS, frame, {"disk": "/tmp"}, None, "GNU 12")
    # the section words the states (paper/sections/writing.tex); the numbers are macros of their own
    assert values["WrtSizeState"] == "both" and values["WrtSizeEventsState"] == values["WrtSizeProductsState"] == "larger"
    assert values["WrtSizeEventsCount"] == r"\num{1000}" and values["WrtSizeEventsRatio"].startswith(r"\num{3}")
    # shares and fixed costs, which may lie near zero: the value, its unit and its two bounds (paper.with_bounds)
    # (the bounds as numbers, paper/paper.tex's \confidenceinterval words them)
    assert values["WrtSizeEventsMetadataPercent"] == r"\num{20}\,\% (\confidenceinterval{\num{20}}{\num{20}}{\,\%})"
    assert values["WrtSetupState"] == "both" and values["WrtSetupEventsRootMs"].startswith(r"\num{1000}~ms (\confidenceinterval{")
    assert values["WrtSetupEventsCount"] == r"\num{1000}"
    assert values["WrtSetupEventsRootPercent"].startswith(r"\num{33}\,\% (\confidenceinterval{")
    # the tables print them in the same format, the unit in the header
    assert all(r" (\confidenceinterval{" in cell for cell in table["ROOT set-up [ms]"])
    assert values["WrtSetupEventsFaster"].startswith(r"\num{3}") and values["WrtSetupEventsFasterState"] == "met"
    assert values["WrtSetupEventsFasterWithoutState"] == "met"
    assert values["WrtRandomSetupState"] == "notmeasured"
    assert values["WrtSetupEventsCostState"] == values["WrtSetupProductsCostState"] == "notnegative"
    assert not any(name.endswith("Sentence") and name != "WrtMachinesSentence" for name in values)
    # ROOT's doubled passes 20% longer than twice its passes, in both rounds: a negative set-up, said so
    slower = frame.assign(wall_s=frame["wall_s"].where(~((frame["method"] == "root_imt") & (frame["scale"] == 2)),
                                                      frame["wall_s"] * 1.2 + 2.4 * frame["loops"]))
    slower = wr.with_rates(slower)
    values = wr.paper_macros(wr.summary(slower), PARAMS, slower, {"disk": "/tmp"}, None, "GNU 12")
    assert values["WrtSetupEventsCostState"] == values["WrtSetupProductsCostState"] == "negative"
    assert values["WrtSetupEventsRootMs"].startswith(r"\num{-")
    # a round in which the simple format's doubled pass was not the slower leaves no ratio without set-up
    doubled = (frame["part"] == "events") & (frame["method"] == "simple") & (frame["scale"] == 2) & (frame["threads"] == 1)
    frame.loc[doubled & (frame["rep"] == 0), "wall_s"] /= 4
    again = wr.setup_rows(wr.with_rates(frame), PARAMS).set_index(["part", "threads"]).loc[("events", 1)]
    assert math.isnan(again["faster_without"].value) and again["faster_without_verdict"] == intervals.Verdict.INCONCLUSIVE
    # without setup_parts: no doubled runs, no set-up rows, sizes at N only
    plain = {**PARAMS, "setup_parts": []}
    assert all(r["scale"] == 1 for r in wr.plan(plain))
    assert wr.setup_rows(_synthetic(plain), plain).empty and len(wr.size_rows(_synthetic(plain), plain)) == 3 + 2


def test_seed003s_set_up_and_flush_share_of_a_pass():
    from throughput.core import intervals
    params = {**PARAMS, "setup_parts": ["random"]}
    frame = _synthetic(params)
    rows = wr.random_setup_rows(frame, params).set_index(["medium", "method", "threads"])
    # uncompressed only, every medium and writer, one thread
    assert len(rows) == 2 * 2 and not any(r["scale"] == 2 and (r["compression"] == "LZMA" or r["threads"] > 1)
                                          for r in wr.plan(params))
    frame.loc[(frame["method"] == "tbuffermerger") & (frame["scale"] == 2), "wall_s"] -= 0.1 * frame["loops"]
    rows = wr.random_setup_rows(wr.with_rates(frame), params).set_index(["medium", "method", "threads"])
    tbm = rows.loc[("tmpfs", "tbuffermerger", 1)]  # now 0.2 s of a 2 s pass
    assert tbm["share"].value == pytest.approx(0.1, rel=0.02) and tbm["verdict"] == intervals.Verdict.MISSED
    assert rows.loc[("slow", "rntuple", 1), "share"].value == pytest.approx(0.05)
    frame = wr.with_rates(frame)
    values = wr.paper_macros(wr.summary(frame), params, frame, {"disk": "/tmp"}, None, "GNU 12")
    assert values["WrtRandomSetupState"] == "measured" and values["WrtRandomSetupRuns"] == "4"
    assert (values["WrtRandomSetupMinPercent"], values["WrtRandomSetupMaxPercent"]) == (r"\num{5}", r"\num{10}")
    assert values["WrtRandomSetupOver"] == "2"  # TBufferMerger's 10% on each medium: over the limit by its whole interval


def test_branch_selection_adds_counters_and_changes_the_checksum(nanoaod):
    full = run({"workload": "events", "method": "simple", "inputs": nanoaod, "events": 20}).validation
    jets = run({"workload": "events", "method": "simple", "inputs": nanoaod, "events": 20,
                "branches": "Jet_pt,Jet_eta,MET_pt"}).validation
    assert jets["columns"] == 4  # nJet, Jet_pt, Jet_eta, MET_pt
    assert jets["checksum"] != full["checksum"]


# ---- the simple format: its reader, its documented layout --------------------------------------

def _kept(nanoaod, directory, compression="LZ4", events=80):
    result = run({"workload": "events", "method": "simple", "inputs": nanoaod, "events": events,
                  "medium": "disk", "dir": directory, "keep": 1, "compression": compression,
                  "branches": "nJet,Jet_pt,Jet_jetId,Muon_*,HLT_IsoMu27,event"})
    return result.validation, Path(result.validation["kept"])


def test_standalone_reader_verifies_the_file(nanoaod, tmp_path):
    written, path = _kept(nanoaod, tmp_path)
    assert path.is_file()
    read = harness.run_kernel(wr.READER, {"input": path}).validation
    assert read["events"] == written["entries"] == 80
    assert read["checksum"] == written["checksum"] and read["columns"] == written["columns"]


def test_standalone_reader_rejects_damaged_files(nanoaod, tmp_path):
    _, path = _kept(nanoaod, tmp_path)
    data = bytearray(path.read_bytes())
    truncated = tmp_path / "truncated.tpsimple"
    truncated.write_bytes(data[: len(data) - 100])
    with pytest.raises(harness.KernelError, match="truncated.tpsimple"):
        harness.run_kernel(wr.READER, {"input": truncated})
    damaged = tmp_path / "damaged.tpsimple"
    data[len(data) // 2] ^= 0xFF
    data[len(data) // 2 + 1] ^= 0xFF
    damaged.write_bytes(data)
    with pytest.raises(harness.KernelError, match="damaged.tpsimple"):
        harness.run_kernel(wr.READER, {"input": damaged})
    with pytest.raises(harness.KernelError, match="not a file of the simple format"):
        harness.run_kernel(wr.READER, {"input": nanoaod})


MASK = (1 << 64) - 1


def _mix64(z: int) -> int:
    z = (z + 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def _hash_bytes(data: bytes, salt: int = 0) -> int:
    """kernels/writing/schema.hpp's hash_bytes, as documented."""
    h = _mix64(salt ^ ((0x100000001B3 * (len(data) + 1)) & MASK))
    full = len(data) // 8 * 8
    for i in range(0, full, 8):
        h = _mix64(h ^ int.from_bytes(data[i:i + 8], "little"))
    if full < len(data):
        h = _mix64(h ^ int.from_bytes(data[full:].ljust(8, b"\0"), "little") ^ 0xFF00000000000000)
    return h


def _parse_simple(path: Path) -> tuple[int, list[tuple[str, str, int]], dict[int, dict[str, np.ndarray] | list[bytes]]]:
    """An independent reader of the layout documented in kernels/writing/simple_format.hpp:
    its serialization, its columns and each event (the columns' values, or for ROOT
    serialization each data product's bytes)."""
    types = {1: "?", 2: "u1", 3: "<i4", 4: "<u4", 5: "<u8", 6: "<f4", 7: "<f8"}
    data = path.read_bytes()
    assert data[:8] == b"TPSIMPLE"
    version, codec, _level, serialization, n = struct.unpack_from("<IBBBI", data, 8)
    assert version == 2 and serialization in (0, 1)
    pos, columns = 19, []
    for _ in range(n):
        kind, counter, length = struct.unpack_from("<BiH", data, pos)
        pos += 7
        columns.append((data[pos:pos + length].decode(), types[kind], counter))
        pos += length
    events = {}
    while True:
        stored, = struct.unpack_from("<I", data, pos)
        if stored == 0:
            count, = struct.unpack_from("<Q", data, pos + 4)
            assert pos + 12 == len(data) and count == len(events)
            return serialization, columns, events
        raw_size, digest = struct.unpack_from("<IQ", data, pos + 4)
        block = data[pos + 16: pos + 16 + stored]
        raw = bytes(cramjam.lz4.decompress_block(block, output_len=raw_size)) if codec == 1 else block
        assert _hash_bytes(raw) == digest
        pos += 16 + stored
        number, = struct.unpack_from("<Q", raw, 0)
        at, values = 8, {}
        if serialization == 1:
            products = []
            while at < raw_size:
                size, = struct.unpack_from("<I", raw, at)
                products.append(raw[at + 4:at + 4 + size])
                at += 4 + size
            assert at == raw_size
            events[number] = products
            continue
        for name, dtype, counter in columns:
            count = 1 if counter < 0 else int(values[columns[counter][0]][0])
            values[name] = np.frombuffer(raw, dtype=dtype, count=count, offset=at)
            at += count * np.dtype(dtype).itemsize
        assert at == raw_size
        events[number] = values


@pytest.mark.parametrize("compression", ["LZ4", "none"])
def test_documented_layout_holds_the_input_events(nanoaod, tmp_path, compression):
    _, path = _kept(nanoaod, tmp_path, compression=compression)
    serialization, columns, events = _parse_simple(path)
    assert serialization == 0
    names = [c[0] for c in columns]
    assert names[:2] == ["nJet", "nMuon"] and "Jet_pt" in names and "HLT_IsoMu27" in names
    assert sorted(events) == list(range(80))
    source = uproot.open(nanoaod)["Events"].arrays(["Jet_pt", "Jet_jetId", "Muon_pt", "HLT_IsoMu27", "event"])
    for number, values in events.items():
        k = number % EVENTS_IN_FILE  # events beyond the file's are replayed
        np.testing.assert_array_equal(values["Jet_pt"], ak.to_numpy(source["Jet_pt"][k]))
        np.testing.assert_array_equal(values["Jet_jetId"], ak.to_numpy(source["Jet_jetId"][k]))
        np.testing.assert_array_equal(values["Muon_pt"], ak.to_numpy(source["Muon_pt"][k]))
        assert values["HLT_IsoMu27"][0] == source["HLT_IsoMu27"][k] and values["event"][0] == source["event"][k]


def _name_salt(name: str) -> int:
    return _hash_bytes(name.encode(), 0x5EED)


def _column_checksum(name: str, values: np.ndarray) -> int:
    """schema.hpp's column checksum of a scalar column: the sum mod 2^64 of each entry's bytes' hash."""
    salt = _name_salt(name)
    return sum(_hash_bytes(v.tobytes(), salt) for v in values) & MASK


@pytest.mark.parametrize("method", METHODS)
def test_read_back_checksums_match_an_independent_reading_of_the_file(method, tmp_path):
    result = run({"workload": "random", "method": method, "mb": 0.016, "random-branches": 2, "medium": "disk",
                  "dir": tmp_path, "keep": 1, "seed": 7})
    v, last = result.validation, result.timings.iloc[-1]  # the kept file is the last pass's output
    path = Path(v["kept"])
    if method == "simple":
        _, _, events = _parse_simple(path)
        arrays = {c: np.array([events[i][c][0] for i in sorted(events)]) for c in ("random0", "random1")}
    else:  # a TTree or an RNTuple, read by uproot rather than ROOT
        arrays = {c: np.asarray(a) for c, a in uproot.open(path)["random"].arrays(library="np").items()}
    assert sorted(arrays) == ["random0", "random1"] and all(len(a) == 1000 for a in arrays.values())
    ours = ",".join(f"{_column_checksum(c, arrays[c].astype('<f8')):016x}" for c in ("random0", "random1"))
    assert last["column_checksums"] == ours and last["read_entries"] == 1000
    assert wr.digest(ours, 1000) == last["checksum"] == v["checksum"] == v["source_checksum"]


def test_written_tree_and_rntuple_hold_the_input_events(nanoaod, tmp_path):
    source = uproot.open(nanoaod)["Events"]["Jet_pt"].array()
    for method in ("root_imt", "tbuffermerger", "rntuple"):
        result = run({"workload": "events", "method": method, "inputs": nanoaod, "events": EVENTS_IN_FILE,
                      "medium": "disk", "dir": tmp_path, "keep": 1, "branches": "Jet_pt"})
        written = uproot.open(result.validation["kept"])["Events"]
        got = written.arrays(["Jet_pt"])["Jet_pt"]
        # TBufferMerger and the parallel writer do not keep the order of entries.
        key = lambda a: sorted(tuple(np.round(ak.to_numpy(x), 6)) for x in a)  # noqa: E731
        assert key(got) == key(source), method


# ---- failures are named, partial files removed -------------------------------------------------

def test_corrupted_write_fails_validation():
    with pytest.raises(harness.KernelError, match="validation failed|entries"):
        run({"workload": "random", "method": "tbuffermerger", "mb": 0.01, "corrupt-for-test": 1})
    with pytest.raises(harness.KernelError, match="validation failed|entries"):  # in a calibrated sample too
        run({"workload": "random", "method": "tbuffermerger", "mb": 0.01, "corrupt-for-test": 1, "warmup": 0,
             "min-sample-s": 0.01})


@pytest.mark.parametrize("method", METHODS)
def test_file_size_limit_is_a_named_error_and_leaves_no_file(method, nanoaod, tmp_path):
    with pytest.raises(harness.KernelError) as error:
        run({"workload": "events", "method": method, "inputs": nanoaod, "events": 400, "medium": "disk",
             "dir": tmp_path, "max-file-bytes": 300000, "flush-mb": 0.1})
    message = str(error.value)
    assert f"writing {tmp_path}/write_bench_{method}" in message and "failed" in message, message
    assert "File too large" in message or "file size limit" in message, message
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("method", METHODS)
def test_full_disk_is_a_named_error_and_leaves_no_file(method, nanoaod, small_tmpfs):
    with pytest.raises(harness.KernelError) as error:
        run({"workload": "events", "method": method, "inputs": nanoaod, "events": 600, "medium": "tmpfs",
             "dir": small_tmpfs, "flush-mb": 0.1, "compression": "none"})
    message = str(error.value)
    assert f"writing {small_tmpfs}/write_bench_{method}" in message, message
    assert "No space left on device" in message or "MB free" in message, message
    assert not list(small_tmpfs.iterdir())


def test_unwritable_directory_is_named(tmp_path):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    with pytest.raises(harness.KernelError, match=re.escape(f"output directory {blocker}/out (medium disk): Not a directory")):
        run({"medium": "disk", "dir": blocker / "out"})


@pytest.mark.parametrize("args, culprit", [
    ({"compression": "BROTLI"}, "unknown compression 'BROTLI'"),
    ({"method": "simple", "compression": "ZSTD"}, "compression 'ZSTD' is not available for the simple format"),
    ({"medium": "tape"}, "unknown --medium 'tape'"),
    ({"min-sample-s": "-1"}, r"--min-sample-s must lie in \[0, 60\] seconds, got '-1'"),
    ({"method": "fwrite"}, "unknown --method 'fwrite'"),
    ({"medium": "tmpfs", "dir": "/"}, "not tmpfs"),
    ({"workload": "events", "inputs": "/nonexistent/x.root"}, "cannot open input file /nonexistent/x.root"),
    ({"method": "simple_root"}, "simple_root serializes data products: it needs --workload objects"),
    ({"workload": "objects", "method": "rntuple"}, "--method rntuple cannot write data products"),
    ({"read-back": "some"}, "--read-back: 'some' is neither first-last nor every"),
])
def test_bad_options_are_named_before_any_work(args, culprit):
    with pytest.raises(harness.KernelError, match=culprit):
        run(args)


def test_python_method_lists_agree_with_the_kernels_table_of_methods():
    """write_bench --list-methods prints its one table of writers (kernels/writing/writers.cpp);
    the Python side's lists of them and the config schema's must not drift from it."""
    out = subprocess.run([str(harness.kernel_path(wr.KERNEL)), "--list-methods"], capture_output=True, text=True,
                         check=True).stdout
    table = {r["name"]: r for r in harness.json_lines(out, "write_bench --list-methods")}
    flat = {name for name, r in table.items() if r["flat"]}
    products = {name for name, r in table.items() if r["products"]}
    m = wr.measuring
    assert set(m.LABELS) == set(m.SHORT) == set(table)
    assert set(m.OBJECT_METHODS) == products and set(m.EVENT_METHODS) <= flat
    assert set(m.SETUP_METHODS["random"]) | set(m.SETUP_METHODS["events"]) <= flat
    assert set(m.SETUP_METHODS["objects"]) <= products
    schema = config.load_schema()["properties"]["writing"]["properties"]
    for key, writable in (("random_methods", flat), ("event_methods", flat), ("object_methods", products)):
        assert set(schema[key]["items"]["enum"]) <= writable, key


def test_missing_branch_pattern_is_named(nanoaod):
    with pytest.raises(harness.KernelError, match="matches --branches pattern 'NoSuch_\\*'"):
        run({"workload": "events", "inputs": nanoaod, "branches": "Jet_pt,NoSuch_*"})


# ---- configuration ------------------------------------------------------------------------------

def _problems(section: dict) -> str:
    with pytest.raises(config.ConfigError) as error:
        configuration.validate({"writing": section})
    return str(error.value)


def test_config_names_bad_values():
    assert "'writing.random_compressions[1]' = 'BROTLI'" in _problems({"random_compressions": ["LZ4", "BROTLI"]})
    assert "'writing.media[0]' = 'tape'" in _problems({"media": ["tape"]})
    assert "'writing.event_branches[0]'" in _problems({"event_branches": ["Jet_pt,Jet_eta"]})
    assert "'writing.tmpfs_dir' = '/'" in _problems({"tmpfs_dir": "/"})
    assert "'writing.tmpfs_dir' = '/nonexistent'" in _problems({"tmpfs_dir": "/nonexistent"})
    assert "'writing.disk_dir'" in _problems({"disk_dir": "/nonexistent/deeper/still"})
    assert "'writing.events'" in _problems({"events": 10**10})


def test_config_lowers_threads_to_the_cores():
    section = configuration.validate({"fit_to_machine": True, "writing": {"max_threads": 1024}})["writing"]
    assert section["max_threads"] == config.usable_cores()
    section = configuration.validate({})["writing"]
    assert section["max_threads"] is None
    assert wr.resolve_threads(section)["max_threads"] == config.usable_cores()


def test_its_inputs_are_named_once_and_shared_with_the_reader_comparison():
    """spec.input_files, the one place the writing experiment's inputs are named (the workflow's rules
    and a standalone run take them from it): enough shared NanoAOD-like files for writing.events, the
    reader comparison's first flat AOD-like file, none for a workload left out; a standalone run's
    differ only by their folder."""
    from throughput.experiments.reader_comparison import spec as rc_spec
    from throughput.experiments.writing import spec as wr_spec

    settings = configuration.validate({"writing": {"events": 45000, "object_events": 10},
                                       "datasets": {"events_per_file": 20000}}, check_resources=False)
    section, shared = settings["writing"], settings["datasets"]
    nanoaod, aod = wr_spec.input_files(section, shared)
    assert nanoaod == [f"data/nanoaod/{shared['compression']}/part{k}.root" for k in range(3)]
    read = rc_spec.input_sets({**settings["reader_comparison"], "real_files": []}, shared["events_per_file"],
                              shared["compression"], {})
    assert nanoaod[0] == read[f"nanoaod/{shared['compression']}"]["root"][0]
    assert aod == read[f"aod/{shared['compression']}"]["root"][:1]
    assert wr_spec.input_files({**section, "event_methods": [], "object_events": 0}, shared) == ([], [])
    assert wr_spec.input_files(section, shared, "/r/data") == ([p.replace("data/", "/r/data/", 1) for p in nanoaod],
                                                             [p.replace("data/", "/r/data/", 1) for p in aod])


def test_filesystem_type():
    assert wr.filesystem_type("/dev/shm") == "tmpfs"
    assert wr.filesystem_type("/dev/shm/some/deeper/path") == "tmpfs"


# ---- analysis ------------------------------------------------------------------------------------

def _read_back(part: str) -> dict:
    """A pass's read-back record as the kernel writes it: two columns over 1000 entries."""
    columns = "00000000000000a1,00000000000000b2" if part == "random" else "0000000000000c03,0000000000000d04"
    return {"column_checksums": columns, "read_entries": 1000, "checksum": wr.digest(columns, 1000),
            "source_checksum": wr.digest(columns, 1000)}


ROOT_WRITERS = ("root_imt", "tbuffermerger")


def _synthetic(params: dict, reference: bool = False) -> pd.DataFrame:
    """Samples of a made-up run: time per pass = base / threads**scaling, known file sizes; with
    `reference`, seed 001's uncompressed ROOT + IMT run too (the entry leaves it out of the table:
    test_the_compression_share_...)."""
    rows = []
    for run_ in wr.plan(params):
        if wr.measuring.uncompressed_reference(run_, params) and not reference:
            continue
        base = {"tbuffermerger": 2.0, "rntuple": 1.0, "root_imt": 3.0, "simple": 1.0, "simple_root": 2.0}[run_["method"]]
        scaling = {"root_imt": 0.1, "simple": 1.0}.get(run_["method"], 0.5)
        size = {"root_imt": 100, "simple": 300, "rntuple": 80, "simple_root": 200}.get(run_["method"], 50)
        # the generic loop's columns (throughput.core.experiment): one run stayed noisy
        noisy = run_["method"] == "simple" and run_["threads"] == 4 and run_["medium"] == "tmpfs"
        # a set-up run (scale 2): twice the entries, its pass twice as long less the fixed cost
        fixed = {"root_imt": 1.0, "simple": 0.05, "simple_root": 0.1, "tbuffermerger": 0.1}.get(run_["method"], 0.05)
        scale = run_["scale"]
        for rep in (-1, 0, 1):
            wall = (scale * base / run_["threads"] ** scaling - (scale - 1) * fixed) * (5 if rep < 0 else 1 + 0.01 * rep)
            loops = 1 if rep < 0 else 2  # a calibrated sample: wall_s and cpu_s are its two passes'
            rows.append({**run_, "rep": rep, "warmup": rep < 0, "loops": loops, "wall_s": wall * loops,
                         "cpu_s": wall * loops, "entries": 1000 * scale, "raw_bytes": 10**6 * scale,
                         "file_bytes": size * 1000 * scale, "peak_rss_bytes": 3 * 10**8,
                         # ROOT's metadata: 20 kB whatever the entries
                         "basket_bytes": size * 1000 * scale - 20000 if run_["method"] in ROOT_WRITERS else -1,
                         "baseline_rss_bytes": 2 * 10**8, **_read_back(run_["part"]), "rss_method": "x",
                         "lz4_version": "1.9.4", "columns": 947, "run": wr.run_name(run_), "attempt": 0,
                         "load_avg_1min": 0.5, "others_cores": 0.25, "steal_fraction": 0.0,
                         "cv": 0.3 if noisy else 0.01, "half_width": 0.4 if noisy else 0.01, "noisy": noisy,
                         # simple_root: 60% of the events split over threads when there are several
                         "events_split": (600 if run_["threads"] > 1 else 0) if run_["method"] == "simple_root" else -1})
    return wr.with_rates(pd.DataFrame(rows))


PARAMS = {**configuration.validate({"writing": {"media": ["tmpfs", "slow"], "random_compressions": ["none", "LZMA"]}},
                            check_resources=False)["writing"], "max_threads": 4, "repetitions": 2, "warmup": 1}


def test_summary_speedup_efficiency_and_ratios():
    from throughput.report import paper
    frame = _synthetic(PARAMS)
    wr.check_agreement(frame)
    table = wr.summary(frame)
    simple = table[(table["part"] == "events") & (table["method"] == "simple") & (table["medium"] == "tmpfs")].set_index("threads")
    assert simple.loc[4, "wall_s"] == pytest.approx(0.25 * 1.005)
    assert simple.loc[4, "speedup"] == pytest.approx(4.0) and simple.loc[4, "efficiency"] == pytest.approx(1.0)
    assert (table["passes"] == 2).all()
    # each run's time per pass across its processes, with its interval (the two rounds differ by 1%)
    assert simple.loc[4, "time_low"] < simple.loc[4, "time"] < simple.loc[4, "time_high"]
    assert simple.loc[4, "time"] == pytest.approx(0.25 * 1.01 ** 0.5)
    rows = wr.seed001_rows(table, PARAMS).set_index("who")
    assert rows.loc["seed, AOD", "faster_n"] == 58.0
    assert rows.loc["this run, NanoAOD-like, simple format", "faster_1"] == pytest.approx(3.0)
    assert rows.loc["this run, NanoAOD-like, simple format", "faster_n"] == pytest.approx(3.0 * 4 / 4 ** 0.1)
    assert rows.loc["this run, NanoAOD-like, simple format", "size_ratio"] == pytest.approx(3.0)
    # the data products: ROOT serialization and the copied columns, each against ROOT + IMT
    ser = rows.loc["this run, MiniAOD-like products, simple format, ROOT-serialized"]
    assert ser["faster_1"] == pytest.approx(1.5) and ser["faster_n"] == pytest.approx(1.5 * 4 ** 0.5 / 4 ** 0.1)
    assert ser["size_ratio"] == pytest.approx(2.0)
    assert rows.loc["this run, MiniAOD-like products, simple format", "size_ratio"] == pytest.approx(3.0)
    goal = wr.efficiency_target(table, PARAMS)
    assert goal["measured"] and goal["verdict"] == "met" and goal["efficiency"] == pytest.approx(1.0)
    # each round slowed every run alike (1% in the second): the paired ratios have no spread
    assert simple.loc[4, "speedup_low"] == pytest.approx(4.0) == simple.loc[4, "speedup_high"]
    claims = wr.seed003_claims(table, PARAMS).set_index("claim")
    # every compression's speed-up the same, without spread (synthetic): LZMA does not scale best
    assert claims.loc["Scaling", "state"] == "notholds" and claims.loc["Scaling", "numbers"]["beaten"] == ["none"]
    # a pass of 1 MB cannot queue the 66 MB the bar asks above a fast peak of 100 MB: no test of growth
    assert claims.loc["BackPressure", "state"] == "toolittle"
    for builder in (wr.random_table, wr.events_table, wr.seed001_table):
        assert len(builder(table, PARAMS)) > 0
    # the noisy run's figures, and every ratio with it on either side, carry the mark
    mark = paper.NOISY_MARK
    seed001 = wr.seed001_table(table, PARAMS).set_index("")
    assert seed001.loc["this run, NanoAOD-like, simple format", "faster, N threads"].endswith(mark)
    assert not seed001.loc["this run, NanoAOD-like, simple format", "faster, 1 thread"].endswith(mark)
    assert not seed001.loc["seed, AOD", "faster, N threads"].endswith(mark)
    events = wr.events_table(table, PARAMS).set_index(["events", "medium", "method", "threads"])
    assert events.loc[("NanoAOD-like", "tmpfs", "simple", "4"), "events/s"].endswith(mark)
    assert events.loc[("NanoAOD-like", "tmpfs", "simple", "4"), "speed-up"].endswith(mark)
    assert not events.loc[("NanoAOD-like", "tmpfs", "simple", "1"), "events/s"].endswith(mark)
    assert not events.loc[("NanoAOD-like", "tmpfs", "TTree + IMT", "4"), "events/s"].endswith(mark)
    assert events.loc[("MiniAOD-like products", "tmpfs", "simple (ROOT ser.)", "1"), "size ratio"] == r"\num{2}"
    assert r"$\pm$" in events.loc[("NanoAOD-like", "tmpfs", "simple", "1"), "events/s"]


def test_a_method_is_called_faster_or_slower_only_where_its_paired_interval_excludes_one(tmp_path):
    frame = _synthetic(PARAMS)
    events = (frame["part"] == "events") & (frame["medium"] == "tmpfs") & (frame["threads"] == 1) & ~frame["warmup"]
    # the simple format at one thread: 3 times faster in one round, 3 times slower in the other
    frame.loc[events & (frame["method"] == "simple") & (frame["rep"] == 1), "wall_s"] *= 9
    values = wr.paper_macros(wr.summary(wr.with_rates(frame)), PARAMS, frame, {"disk": str(tmp_path)}, None, "GNU 12")
    assert values["WrtSimpleThanOneState"] == "notseparated"
    # slower in both rounds, by different amounts
    frame = _synthetic(PARAMS)
    frame.loc[events & (frame["method"] == "simple") & (frame["rep"] == 0), "wall_s"] *= 10
    frame.loc[events & (frame["method"] == "simple") & (frame["rep"] == 1), "wall_s"] *= 12
    values = wr.paper_macros(wr.summary(wr.with_rates(frame)), PARAMS, frame, {"disk": str(tmp_path)}, None, "GNU 12")
    assert values["WrtSimpleThanOneState"] == "lower" and values["WrtSimpleThanNState"] == "higher"
    # the efficiency target: an interval around 85% cannot tell
    target = frame["method"].eq("simple") & frame["part"].eq("events") & frame["medium"].eq("tmpfs") & ~frame["warmup"]
    frame = _synthetic(PARAMS)
    frame.loc[target & frame["threads"].eq(2) & frame["rep"].eq(0), "wall_s"] /= 0.8
    frame.loc[target & frame["threads"].eq(2) & frame["rep"].eq(1), "wall_s"] /= 0.9
    goal = wr.efficiency_target(wr.summary(wr.with_rates(frame)), PARAMS)
    assert goal["verdict"] == "inconclusive" and goal["estimate"].low < 0.85 < goal["estimate"].high
    values = wr.paper_macros(wr.summary(wr.with_rates(frame)), PARAMS, frame, {"disk": str(tmp_path)}, None, "GNU 12")
    assert values["WrtTargetState"] == "inconclusive"  # the section words it


def test_seed003s_scaling_claim_is_judged_by_the_whole_intervals():
    frame = _synthetic(PARAMS)
    lzma = ((frame["part"] == "random") & (frame["method"] == "tbuffermerger") & (frame["compression"] == "LZMA")
            & (frame["threads"] == 4))
    frame.loc[lzma, "wall_s"] /= 2  # LZMA: twice the others' speed-up, in both rounds
    table = wr.summary(wr.with_rates(frame))
    claims = wr.seed003_claims(table, PARAMS)
    assert list(claims["claim"]) == list(wr.analysis.SEED003_CLAIMS) and claims["state"].iloc[0] == "holds"
    # the numbers it rests on: each compression's speed-up at the most threads on the fast medium, recomputed
    speedups = claims["numbers"].iloc[0]["speedups"]
    random = table[(table["part"] == "random") & (table["method"] == "tbuffermerger")]
    assert speedups == {c: wr.analysis.estimate(wr.analysis.one(random, medium="tmpfs", compression=c, threads=4), "speedup")
                        for c in PARAMS["random_compressions"]}
    assert speedups["LZMA"].value == pytest.approx(2 * speedups["none"].value) and claims["numbers"].iloc[0]["beaten"] == []
    frame.loc[lzma & (frame["rep"] == 1), "wall_s"] *= 3  # but a third of it in the second round
    assert wr.seed003_claims(wr.summary(wr.with_rates(frame)), PARAMS)["state"].iloc[0] == "cannottell"


def _setup_states(frame: pd.DataFrame, params: dict = PARAMS) -> dict[str, str]:
    frame = wr.with_rates(frame)
    values = wr.paper_macros(wr.summary(frame), params, frame, {"disk": "/tmp"}, None, "GNU 12")
    return {name: value for name, value in values.items() if name.startswith(("WrtSize", "WrtSetup"))
            and name.endswith("State")}


def test_the_size_and_set_up_states_are_the_ones_their_figures_give():
    """The section words seed 001's sizes and set-up by these states (paper/sections/writing.tex)."""
    simple = lambda frame: (frame["part"] == "events") & (frame["method"] == "simple")  # noqa: E731
    one_thread = lambda frame: simple(frame) & (frame["threads"] == 1)  # noqa: E731
    # the simple format's files half the TTree's: smaller; the simple format ten times slower: missed both ways
    frame = _synthetic(PARAMS)
    frame.loc[simple(frame), "file_bytes"] //= 6
    frame.loc[one_thread(frame), "wall_s"] *= 10
    states = _setup_states(frame)
    assert states["WrtSizeEventsState"] == "smaller" and states["WrtSizeProductsState"] == "larger"
    assert states["WrtSetupEventsFasterState"] == states["WrtSetupEventsFasterWithoutState"] == "missed"
    # three times larger in one round, a third in the other: not separated
    frame = _synthetic(PARAMS)
    frame.loc[simple(frame) & (frame["rep"] == 1), "file_bytes"] //= 9
    assert _setup_states(frame)["WrtSizeEventsState"] == "notseparated"
    # a round in which the simple format's doubled pass was not the slower: no ratio without set-up
    frame = _synthetic(PARAMS)
    frame.loc[one_thread(frame) & (frame["scale"] == 2) & (frame["rep"] == 0), "wall_s"] /= 4
    states = _setup_states(frame)
    assert (states["WrtSetupEventsFasterState"], states["WrtSetupEventsFasterWithoutState"]) == ("met", "inconclusive")
    # which workloads each covers: no data products, no set-up runs, no events
    no_objects = {**PARAMS, "object_events": 0}
    states = _setup_states(_synthetic(no_objects), no_objects)
    assert states["WrtSizeState"] == states["WrtSetupState"] == "events" and "WrtSizeProductsState" not in states
    products = {**PARAMS, "event_methods": ["root_imt"], "setup_parts": ["objects"]}
    states = _setup_states(_synthetic(products), products)
    assert states["WrtSizeState"] == states["WrtSetupState"] == "products" and "WrtSetupEventsState" not in states
    nothing = {**PARAMS, "event_methods": ["root_imt"], "object_events": 0, "setup_parts": []}
    assert _setup_states(_synthetic(nothing), nothing) == {"WrtSizeState": "notmeasured",
                                                           "WrtSetupState": "notmeasured"}


def _gigabyte_passes(frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with every random-doubles pass writing 1 GB (seed 003's), enough to queue above any bar here."""
    return wr.with_rates(frame.assign(raw_bytes=frame["raw_bytes"].where(frame["part"] != "random", 10**9)))


def _with_peaks(frame: pd.DataFrame, medium: str, peaks_mb: list[float]) -> pd.DataFrame:
    """`frame` with TBufferMerger's peak memory above the baseline on `medium` at 4 threads,
    uncompressed, `peaks_mb[i]` in round i (its first sample), and a second sample in each
    round whose peak is 50 MB lower (a process's peak is its largest sample's)."""
    frame = frame.assign(round=frame["rep"])
    where = ((frame["part"] == "random") & (frame["method"] == "tbuffermerger") & (frame["medium"] == medium)
             & (frame["compression"] == "none") & (frame["threads"] == 4) & ~frame["warmup"])
    assert where.sum() == len(peaks_mb), "one timed sample per round in the synthetic run"
    frame.loc[where, "peak_rss_bytes"] = [2 * 10**8 + mb * 10**6 for mb in peaks_mb]
    lower = frame[where].assign(peak_rss_bytes=lambda rows: rows["peak_rss_bytes"] - 50 * 10**6)
    return wr.with_rates(pd.concat([frame, lower], ignore_index=True))


def _peak_interval(peaks_mb: list[float]) -> tuple[float, float, float]:
    """The mean of the per-round peaks and its 95% t interval, recomputed with scipy.stats."""
    from scipy import stats
    mean = float(np.mean(peaks_mb))
    low, high = stats.t.interval(0.95, len(peaks_mb) - 1, loc=mean, scale=stats.sem(peaks_mb))
    return mean, low, high


@pytest.mark.parametrize("slow_mb, fast_mb, state", [
    ([500, 520, 510], [100, 104, 98], "holds"),        # the slow medium's excess over 1.5 x + 16 MB wholly above 0
    ([100, 104, 98], [100, 104, 98], "blocks"),        # wholly below: the writers block
    ([150, 420, 300], [100, 104, 98], "inconclusive"),  # a mean above the bar (a point rule: holds), an interval across it
    ([150, 172, 190], [100, 140, 60], "inconclusive"),  # the excess round by round: -16, -54 and 84 MB
    ([130, 190, 250], [60, 100, 140], "holds"),         # both media drift alike: 24 MB above the bar in every round,
])                                                      # where the two whole intervals would overlap
def test_the_back_pressure_verdict_comes_from_the_per_round_excess_over_the_bar(slow_mb, fast_mb, state):
    from throughput.report import paper
    params = {**PARAMS, "repetitions": 3}
    frame = _synthetic(params)
    # three rounds: the synthetic run's two, and a third like its second
    third = frame[frame["rep"] == 1].assign(rep=2)
    frame = _with_peaks(_with_peaks(pd.concat([frame, third], ignore_index=True), "slow", slow_mb), "tmpfs", fast_mb)
    frame = _gigabyte_passes(frame)
    pressure = wr.back_pressure(wr.summary(frame), params)
    slow, fast = _peak_interval(slow_mb), _peak_interval(fast_mb)
    assert (pressure["slow"].value, pressure["slow"].low, pressure["slow"].high) == pytest.approx(slow)
    assert (pressure["fast"].value, pressure["fast"].low, pressure["fast"].high) == pytest.approx(fast)
    # the verdict recomputed from each round's slow peak less 1.5 times the fast one's plus 16 MB
    differences = [s - (1.5 * f + 16) for s, f in zip(slow_mb, fast_mb)]
    excess = _peak_interval(differences) if len(set(differences)) > 1 else (differences[0],) * 3
    assert (pressure["excess"].value, pressure["excess"].low, pressure["excess"].high) == pytest.approx(excess)
    expected = "holds" if excess[1] > 0 else "blocks" if excess[2] < 0 else "inconclusive"
    assert pressure["state"] == expected == state
    values = wr.paper_macros(wr.summary(frame), params, frame, {"disk": "/tmp"}, None, "GNU 12")
    assert values["WrtBackPressureState"] == state
    assert values["WrtBackPressureSlowMB"] == (
        rf"{paper.number(slow[0])}~MB (\confidenceinterval{{{paper.number(slow[1])}}}{{{paper.number(slow[2])}}}{{~MB}})")
    assert (values["WrtBackPressureFactor"], values["WrtBackPressureMarginMB"]) == (r"\num{1.5}", r"\num{16}")
    claim = wr.seed003_claims(wr.summary(frame), params).iloc[3]
    assert (claim["claim"], claim["state"]) == ("BackPressure", state)
    assert (claim["numbers"]["slow"], claim["numbers"]["fast"]) == (pressure["slow"], pressure["fast"])


def test_tbuffermerger_against_rntuple_is_counted_by_the_paired_intervals():
    from throughput.report import paper
    frame = _synthetic(PARAMS)  # TBufferMerger twice RNTuple's time in every round, on 2 media x 2 compressions
    # one medium and compression where RNTuple's first round took half its time: 4 then 2 times, two rounds
    odd = (frame["method"] == "rntuple") & (frame["medium"] == "slow") & (frame["compression"] == "LZMA") \
        & (frame["threads"] == 4) & (frame["rep"] == 0)
    frame.loc[odd, ["wall_s", "cpu_s"]] *= 0.5
    frame = wr.with_rates(frame)
    table = wr.summary(frame)
    versus = wr.rntuple_versus_tbuffermerger(table, PARAMS)
    assert [r.value for r in versus["ratios"]] == pytest.approx([2.0, 2.0, 2.0, 2.0 ** 1.5])
    assert (versus["slower"], versus["faster"], versus["notseparated"]) == (3, 0, 1)
    values = wr.paper_macros(table, PARAMS, frame, {"disk": "/tmp"}, None, "GNU 12")
    assert (values["WrtRntupleVsTbmSlower"], values["WrtRntupleVsTbmNotseparated"]) == ("3", "1")
    assert values["WrtRntupleVsTbmCombinations"] == "4"
    # the smallest and the largest ratio, each with its interval: 2 in every round (no width), and
    # 4 then 2 over two rounds (wider than the value: its bounds)
    assert values["WrtRntupleVsTbmMin"] == paper.number(2.0) + r"\,$\pm$\,0\%"
    assert values["WrtRntupleVsTbmMax"].startswith(paper.number(2.0 ** 1.5) + r" (\confidenceinterval{")
    # every peak 100 MB above the baseline in each round: an interval of no width
    exact = rf"{paper.number(100)}~MB (\confidenceinterval{{{paper.number(100)}}}{{{paper.number(100)}}}{{~MB}})"
    assert values["WrtTbmPeakMB"] == values["WrtRntuplePeakMB"] == exact
    random = wr.random_table(table, PARAMS)
    assert (random["peak MB"] == paper.estimate(intervals.Estimate(100.0, 100.0, 100.0, 2))).all()


def test_the_back_pressure_state_and_seed003s_table_are_the_ones_the_peaks_give():
    from throughput.report import paper
    small = _synthetic(PARAMS)  # every run's peak 100 MB above its baseline in each round
    # a pass writes 1 MB: even queued whole it could not rise 1.5 x 100 + 16 - 100 = 66 MB, so no outcome could
    # show growth, and the table says so rather than 'blocks'
    pressure = wr.back_pressure(wr.summary(small), PARAMS)
    assert (pressure["state"], pressure["data_mb"], pressure["needed_mb"]) == ("toolittle", 1, 66)
    values = wr.paper_macros(wr.summary(small), PARAMS, small, {"disk": "/tmp"}, None, "GNU 12")
    assert (values["WrtBackPressureDataMB"], values["WrtBackPressureNeededMB"]) == (r"\num{1}", r"\num{66}")
    from throughput.report import ledger
    printed = {"WrtBackPressureState": {"tex": "toolittle"}}
    for claim in (c for c in ledger.load() if c.measured_by and c.measured_by.get("state") == "WrtBackPressureState"):
        assert ledger.decide(claim, ledger.Machine("here", 4, False), {"writing": printed}).reason == ledger.NOT_MEASURED
    frame = _gigabyte_passes(small)  # seed 003's gigabyte: the same peaks now say the writers block
    pressure = wr.back_pressure(wr.summary(frame), PARAMS)
    assert (pressure["state"], pressure["slow"].value, pressure["fast"].value) == ("blocks", 100, 100)
    slow = (frame["method"] == "tbuffermerger") & (frame["medium"] == "slow") & (frame["threads"] == 4)
    frame.loc[slow, "peak_rss_bytes"] += 4 * 10**8  # 500 MB on the slow medium: memory grows
    frame = wr.with_rates(frame)
    values = wr.paper_macros(wr.summary(frame), PARAMS, frame, {"disk": "/tmp"}, None, "GNU 12")
    exact = lambda mb: rf"{paper.number(mb)}~MB (\confidenceinterval{{{paper.number(mb)}}}{{{paper.number(mb)}}}{{~MB}})"  # noqa: E731
    assert (values["WrtBackPressureState"], values["WrtBackPressureSlowMB"]) == ("holds", exact(500))
    assert values["WrtBackPressureFastMB"] == exact(100) and values["WrtBackPressureFastMedium"] == "tmpfs"
    claims = wr.seed003_claims(wr.summary(frame), PARAMS)
    assert claims["state"].iloc[3] == "holds"
    # one round: no interval, so no verdict
    once = frame[frame["rep"] < 1]
    assert wr.back_pressure(wr.summary(once), PARAMS)["state"] == "inconclusive"
    # no pass read its peak memory: no figure to print, so not tested, as the table says
    blind = wr.with_rates(frame.assign(peak_rss_bytes=np.nan))
    assert wr.back_pressure(wr.summary(blind), PARAMS)["state"] == "nopeak"
    assert wr.seed003_claims(wr.summary(blind), PARAMS)["state"].iloc[3] == "nopeak"
    # without the slow medium: not measured, as the table says
    fast = {**PARAMS, "media": ["tmpfs"]}
    values = wr.paper_macros(wr.summary(_synthetic(fast)), fast, _synthetic(fast), {"disk": "/tmp"}, None, "GNU 12")
    assert values["WrtBackPressureState"] == "notmeasured" and values["WrtBackPressureSlowMB"] == "n/a"
    assert values["WrtSaturationShare"] == "n/a"  # nor the slow medium's saturation the ledger judges
    claims = wr.seed003_claims(wr.summary(_synthetic(fast)), fast)
    assert claims["state"].iloc[3] == "notmeasured"
    # with it: the share of the slow medium's rate the table's Saturation row gives, printed in percent
    share = wr.seed003_claims(wr.summary(frame), PARAMS).set_index("claim").loc["Saturation", "numbers"]["share"]
    values = wr.paper_macros(wr.summary(frame), PARAMS, frame, {"disk": "/tmp"}, None, "GNU 12")
    assert math.isfinite(share.value) and share.value == pytest.approx(
        wr.summary(frame).query("part == 'random' and method == 'tbuffermerger' and medium == 'slow' and "
                                "compression == 'none' and threads == 4")["file_bytes"].iloc[0] / 1e6
        / (wr.summary(frame).query("part == 'random' and method == 'tbuffermerger' and medium == 'slow' and "
                                   "compression == 'none' and threads == 4")["time"].iloc[0] * PARAMS["slow_mb_s"]))
    assert (values["WrtSaturationShare"].value, values["WrtSaturationShare"].low) == pytest.approx(
        (100 * share.value, 100 * share.low))
    # seed 003's table: each claim's state and numbers, worded by paper/sections/writing.tex, under the paper's headers
    table = wr.seed003_table(claims)
    assert list(table.columns) == ["seed 003 concluded", "this run", "today"] and len(table) == len(claims)
    assert table["seed 003 concluded"].iloc[3].startswith(r"\wrtseedrow{BackPressure}{notmeasured}{")
    assert set(table["this run"]) == {r"\wrtseedrun"} and set(table["today"]) == {r"\wrtseedtoday"}


SEED003_STATES = {"Scaling": ("holds", "notholds", "cannottell", "notmeasured"),
                  "Compression": ("holds", "notholds", "cannottell", "notmeasured"),
                  "Saturation": ("holds", "notholds", "cannottell", "notmeasured"),
                  "BackPressure": ("holds", "toolittle", "blocks", "inconclusive", "notmeasured", "nopeak")}


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="no pdflatex")
def test_every_state_of_seed003s_table_builds_with_its_numbers(tmp_path):
    """paper/sections/writing.tex words each claim's states; the table's cells are states and numbers."""
    from tex_wording import build, printed
    from throughput.report import paper
    table = wr.summary(wr.with_rates(_synthetic(PARAMS)))
    measured = wr.seed003_claims(table, PARAMS).set_index("claim")["numbers"].to_dict()
    # LZMA's time over ZLIB's and LZ4's (the synthetic run has neither)
    measured["Compression"] = {"threads": 1, "medium": "tmpfs", "over_zlib": 3.25, "over_lz4": 4.5}
    claims = pd.DataFrame([{"claim": claim, "state": state, "numbers": measured[claim]}
                           for claim, states in SEED003_STATES.items() for state in states])
    rows = wr.seed003_table(claims)
    path = paper.write_table(rows, tmp_path / "seed003.tex", column_format="p{4cm}p{6cm}p{3cm}")
    macros = {"WrtBackPressureFactor": paper.number(wr.analysis.BACK_PRESSURE_FACTOR),
              "WrtBackPressureMarginMB": paper.number(wr.analysis.BACK_PRESSURE_MARGIN_MB),
              "WrtBackPressureDataMB": paper.number(4), "WrtBackPressureNeededMB": paper.number(66)}
    # the table as the paper inputs it, then each row's three cells as a line of its own
    lines = [rf"\par {cells[0]} | {cells[1]}{{}} | {cells[2]}." for cells in rows.itertuples(index=False)]
    code, log, text = build(tmp_path, "writing", macros, "\n".join([rf"\input{{{path.name}}}", *lines]))
    assert code == 0, log[-2000:]

    def bounds(value, unit="", digits=3):  # a number with its interval, as the PDF shows it
        numbers = [printed(paper.number(v, digits)) for v in (value.value, value.low, value.high)]
        return f"{numbers[0]}{unit} (95% interval {numbers[1]} to {numbers[2]}{unit})"

    speedups = measured["Scaling"]["speedups"]
    scaling = ("scales well when not I/O bound, as with LZMA | " + ", ".join(f"{c} {bounds(v, '×')}" for c, v in
                                                                             speedups.items()) + " at 4 threads (tmpfs) | ")
    assert scaling + "holds." in text and scaling + ("this run cannot tell (LZMA's speed-up over another's, paired round by round, is not separated "
                          "from one).") in text
    assert scaling + "does not hold: none scales as well or better." in text
    assert "scales well when not I/O bound, as with LZMA | not measured here | n/a." in text
    compression = (f"ZLIB and LZ4 take much less time than LZMA | LZMA takes {printed(paper.number(3.25, 2))}× ZLIB's "
                   f"and {printed(paper.number(4.5, 2))}× LZ4's time (1 thread, tmpfs) | ")
    assert compression + "holds." in text and compression + "does not hold." in text
    share = measured["Saturation"]["share"]
    saturation = (f"saturates any medium with a few threads when not CPU bound | "
                  f"{printed(paper.number(share.value * PARAMS['slow_mb_s']))} of "
                  f"{printed(paper.number(PARAMS['slow_mb_s']))} MB/s on the slow medium at 4 threads (95% interval "
                  f"{printed(paper.number(100 * share.low, 2))} to {printed(paper.number(100 * share.high, 2))}% of it) | ")
    assert saturation + f"does not hold ({printed(paper.number(100 * share.value, 2))}% of the medium's rate)." in text
    assert saturation + "this run cannot tell (its interval contains 80% of the medium's rate)." in text
    assert "saturates any medium with a few threads when not CPU bound | not measured here (needs the slow medium " \
           "and no compression) | n/a." in text
    pressure = wr.back_pressure(table, PARAMS)
    back = (f"no back-pressure: memory grows when the medium cannot keep up | peak memory above baseline on the slow "
            f"medium {bounds(pressure['slow'], ' MB')} against {bounds(pressure['fast'], ' MB')} on tmpfs, none, "
            f"4 threads | ")
    assert back + "no longer holds: writers block instead." in text
    assert back + "this run cannot tell (the slow medium's excess over 1.5 times the fast one's plus 16 MB, " \
                  "paired round by round, holds zero)." in text
    assert "keep up | not measured here (the passes recorded no peak memory) | n/a." in text
    assert "keep up | not measured here (a pass writes 4 MB, less than the 66 MB its memory would have to grow) " \
           "| n/a." in text
    assert "  " not in text and " ." not in text and "??" not in text, text


def test_the_machines_sentence_and_the_random_branches_come_from_the_macros():
    from types import SimpleNamespace
    frame = _synthetic(PARAMS)
    values = wr.paper_macros(wr.summary(frame), PARAMS, frame, {"disk": "/tmp"}, None, "GNU 12")
    assert values["WrtMachinesState"] == "none" and values["WrtMachinesList"] == ""
    archived = [SimpleNamespace(label="lab_a", runs={"writing": ["x"]}, problems=[]),
                SimpleNamespace(label="lab_b", runs={}, problems=[])]
    several = {**PARAMS, "random_branches": 3}
    values = wr.paper_macros(wr.summary(frame), several, frame, {"disk": "/tmp"}, None, "GNU 12", archived=archived)
    assert (values["WrtMachinesState"], values["WrtMachinesList"]) == ("holding", r"lab\_a")
    assert (values["WrtRandomBranchesState"], values["WrtRandomBranchesCount"]) == ("several", "3")


def test_macros_figures_and_tables_are_written(tmp_path):
    import matplotlib
    matplotlib.use("Agg")
    from throughput.report import paper
    frame = _synthetic(PARAMS)
    table = wr.summary(frame)
    values = wr.paper_macros(table, PARAMS, frame, {"disk": str(tmp_path)}, None, "GNU 12")
    paper.write_macros(values, tmp_path / "macros.tex")
    exact = r"\,$\pm$\,0\%"  # the synthetic rounds slow every run alike: paired ratios without spread
    assert values["WrtSimpleFasterOne"] == r"\num{3}" + exact and values["WrtSimpleThanOneState"] == "higher"
    # with the rounds behind it, which the ledger's rounds_needed scales (two in the synthetic run)
    assert values["WrtSimpleFasterOne"].rounds == values["WrtObjRootSerFasterOne"].rounds == PARAMS["repetitions"]
    assert values["WrtTargetState"] == "met" and values["WrtSimpleEffTwo"] == r"\num{1}" + exact
    assert values["WrtRandomBranchesState"] == "one" and values["WrtMaxHalfWidth"] == r"\num{10}"
    # the noise sentence is worded in paper/wording/noise.tex from its numbers and states
    assert values["WrtNoise"] == r"\noisesentence{Wrt}" and values["WrtNoiseOthersMean"] == paper.number(0.25)
    assert values["WrtNoiseVerdictState"] == "noisy" and "events simple tmpfs LZ4 4t" in values["WrtNoiseNoisyList"]
    # the data products against ROOT + IMT (synthetic: ROOT-serialized 1.5x at one thread, files 2x)
    assert values["WrtObjRootSerFasterOne"] == r"\num{1.5}" + exact and values["WrtObjRootSerSizeRatio"] == r"\num{2}"
    assert values["WrtObjCopiedSizeRatio"] == r"\num{3}" and values["WrtObjSplitPercent"] == r"\num{60}"
    no_objects = {**PARAMS, "object_events": 0}
    none = wr.paper_macros(wr.summary(_synthetic(no_objects)), no_objects, _synthetic(no_objects), {"disk": str(tmp_path)},
                     None, "GNU 12")
    assert none["WrtObjRootSerFasterOne"] == none["WrtObjSplitPercent"] == "n/a"
    assert none["WrtObjRootSerThanOneState"] == "notmeasured"
    for figure in (wr.figure_random(table, "wall_s", "s", PARAMS), wr.figure_random(table, "speedup", "x", PARAMS, True),
                   wr.figure_memory(table, PARAMS), wr.figure_events(table, PARAMS)):
        assert figure.axes


def test_digest_is_the_kernels():
    # A real kernel run's columns and entries give its digest (the kernel computed it in C++).
    t = run({"workload": "random", "method": "simple", "mb": 0.01, "random-branches": 3}).timings.iloc[-1]
    assert wr.digest(t["column_checksums"], t["read_entries"]) == t["checksum"]
    assert wr.digest(t["column_checksums"], t["read_entries"] - 1) != t["checksum"]


def test_check_agreement_fails_on_a_different_checksum():
    frame = _synthetic(PARAMS)
    frame.loc[frame.index[-1], "checksum"] = "something else"
    with pytest.raises(AssertionError, match="disagree"):
        wr.check_agreement(frame)


def test_check_agreement_fails_when_one_writers_read_back_column_differs():
    # Its digest still says what the source's does: the columns read back are compared, not the label.
    frame = _synthetic(PARAMS)
    one = (frame["part"] == "random") & (frame["method"] == "rntuple") & (frame["threads"] == 2)
    frame.loc[one, "column_checksums"] = "00000000000000a1,00000000000000b3"
    with pytest.raises(AssertionError, match=r"method=rntuple, medium=tmpfs, compression=none, threads=2, rep=-1: "
                                             r"read back .* first differing column #1"):
        wr.check_agreement(frame)


def test_check_agreement_fails_on_a_lost_entry_and_on_different_sources():
    frame = _synthetic(PARAMS)
    frame.loc[frame.index[0], "read_entries"] = 999
    with pytest.raises(AssertionError, match="999 entries"):
        wr.check_agreement(frame)
    frame = _synthetic(PARAMS)
    frame.loc[frame.index[0], "source_checksum"] = "0000000000000000"
    with pytest.raises(AssertionError, match="given different entries"):
        wr.check_agreement(frame)


@pytest.mark.parametrize("change, reason", [
    ({"event_methods": ["root_imt", "rntuple"]}, "nosimple"),
    ({"event_media": ["memory"]}, "notmpfs"),
    ({"event_compression": "ZSTD"}, "compression"),
    ({"max_threads": 1}, "onethread"),
])
def test_efficiency_target_not_measured_is_said_with_the_reason(tmp_path, change, reason):
    """The section words WrtTargetReasonState (paper/sections/writing.tex)."""
    params = {**PARAMS, **change}
    frame = _synthetic(params)
    goal = wr.efficiency_target(wr.summary(frame), params)
    assert not goal["measured"] and goal["reason"] == reason
    values = wr.paper_macros(wr.summary(frame), params, frame, {"disk": str(tmp_path)}, None, "GNU 12")
    assert (values["WrtTargetState"], values["WrtTargetReasonState"]) == ("notmeasured", reason)
    assert values["WrtMaxThreads"] == str(params["max_threads"]) and "WrtTargetReason" not in values


def test_efficiency_target_measured_has_no_reason(tmp_path):
    frame = _synthetic(PARAMS)
    assert wr.efficiency_target(wr.summary(frame), PARAMS)["reason"] == "none"
    values = wr.paper_macros(wr.summary(frame), PARAMS, frame, {"disk": str(tmp_path)}, None, "GNU 12")
    assert values["WrtTargetState"] != "notmeasured" and values["WrtTargetReasonState"] == "none"


@pytest.mark.parametrize("change, state", [
    ({"media": ["disk", "tmpfs"], "fsync": True}, "fsync"),
    ({"media": ["slow", "tmpfs"], "fsync": False}, "nofsync"),
    ({"media": ["tmpfs"], "event_media": ["disk", "tmpfs"], "fsync": True}, "fsync"),  # the events' disk counts
    ({"media": ["tmpfs", "memory"], "event_media": ["tmpfs"]}, "notmeasured"),
])
def test_the_disk_state_and_its_file_system_are_the_ones_the_media_give(change, state):
    """The section words WrtDiskState (paper/sections/writing.tex); the file system is a macro."""
    from throughput.experiments.writing import report as wr_report
    params = {**PARAMS, **change}
    values = wr_report._disk_macros({"disk": "/dev/shm"}, params)
    assert values == {"WrtDiskState": state, "WrtDiskFilesystem": "tmpfs" if state != "notmeasured" else "n/a"}
    # what the notebook prints (writing.disk_fit), unescaped
    assert wr.disk_fit({"disk": "/dev/shm"}, params) == {
        "state": state, "filesystem": "tmpfs" if state != "notmeasured" else "n/a"}


# ---- measure(): stored runs, reuse, failure leaves earlier results ---------------------------------

def test_measure_stores_reuses_and_a_failure_leaves_earlier_results(nanoaod, tmp_path, tmpfs_dir):
    params = {**configuration.validate({"writing": {"media": ["memory"], "event_media": ["memory", "tmpfs"],
                                              "random_compressions": ["LZ4"], "random_mb": 0.1, "events": 30,
                                              "event_branches": ["Jet_*", "MET_*"], "object_events": 0,
                                              "max_threads": 1, "tmpfs_dir": tmpfs_dir}},
                                check_resources=False)["writing"], "repetitions": 1, "warmup": 0}
    params["max_threads"] = 1
    dirs = wr.medium_dirs(params, tmp_path)
    frame = wr.measure_runs(params, tmp_path / "raw", dirs, [nanoaod], progress=False)
    wr.check_agreement(frame)
    stored = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "raw").glob("*.parquet")}
    # random 2, events 6, and ROOT + IMT's and the simple format's set-up runs on both media
    assert len(stored) == len(wr.plan(params)) == 2 + 6 + 4
    again = wr.measure_runs(params, tmp_path / "raw", dirs, [nanoaod], progress=False)
    assert {p.name: p.stat().st_mtime_ns for p in (tmp_path / "raw").glob("*.parquet")} == stored
    assert len(again) == len(frame)
    # A run that cannot write stops with the directory named; what was stored stays.
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    broken = {**dirs, "tmpfs": str(blocker / "sub")}
    with pytest.raises(harness.KernelError, match=re.escape(str(blocker / "sub"))):
        wr.measure_runs(params, tmp_path / "raw", broken, [nanoaod], progress=False)
    assert {p.name: p.stat().st_mtime_ns for p in (tmp_path / "raw").glob("*.parquet")} == stored
    # Another event count re-measures the event runs only.
    wr.measure_runs({**params, "events": 31}, tmp_path / "raw", dirs, [nanoaod], progress=False)
    now = {p.name: p.stat().st_mtime_ns for p in (tmp_path / "raw").glob("*.parquet")}
    assert {k for k in stored if now[k] != stored[k]} == {k for k in stored if k.startswith("events_")}


def test_groups_interleave_every_writer_thread_count_compression_and_medium_of_one_workload():
    groups = wr.groups(PARAMS)
    runs = [run for group in groups for run in group.runs]
    assert sorted(run["name"] for run in runs) == sorted(wr.run_name(run) for run in wr.plan(PARAMS))
    for group in groups:
        parts = {run["part"] for run in group.runs}
        assert len(parts) == 1, f"group {group.name} mixes workloads: {parts}"
        part, = parts
        methods = PARAMS[{"random": "random_methods", "events": "event_methods", "objects": "object_methods"}[part]]
        media = PARAMS["media"] if part == "random" else PARAMS["event_media"]
        compressions = PARAMS["random_compressions"] if part == "random" else [PARAMS["event_compression"]]
        main = {(run["method"], run["threads"], run["compression"], run["medium"]) for run in group.runs
                if run["scale"] == 1 and not wr.measuring.uncompressed_reference(run, PARAMS)}
        assert main == {(m, t, c, medium) for m in methods for t in config.thread_counts(PARAMS["max_threads"])
                        for c in compressions for medium in media}
        # seed 001's compression share and uncompressed speed-up: ROOT + IMT's products also uncompressed at
        # one thread and at the most, in the same rounds
        references = [run for run in group.runs if wr.measuring.uncompressed_reference(run, PARAMS)]
        assert [(r["method"], r["compression"], r["threads"], r["scale"]) for r in references] == (
            [("root_imt", "none", 1, 1), ("root_imt", "none", PARAMS["max_threads"], 1)] if part == "objects" else [])
    assert [group.name for group in groups] == ["random", "events", "objects"]


def test_writing_re_measures_noisy_groups_only_when_asked():
    quiet = noise.Settings.for_experiment(PARAMS, {"max_half_width": 0.2, "max_remeasures": 2})
    assert (quiet.max_half_width, quiet.max_remeasures) == (0.2, 0)  # the default: flag, do not re-measure
    asked = noise.Settings.for_experiment({**PARAMS, "remeasure_noisy": True}, {"max_half_width": 0.2, "max_remeasures": 2})
    assert (asked.max_half_width, asked.max_remeasures) == (0.2, 2)
    frame = _synthetic(PARAMS)
    values = wr.paper_macros(wr.summary(frame), PARAMS, frame, {"disk": "/tmp"}, None, "GNU 12", quiet)
    assert values["WrtRemeasured"] == r"\noiseremeasured{Wrt}"  # worded in paper/wording/noise.tex
    assert (values["WrtNoiseRemeasureState"], values["WrtNoiseSection"]) == ("offsection", "writing")
    values = wr.paper_macros(wr.summary(frame), PARAMS, frame, {"disk": "/tmp"}, None, "GNU 12", asked)
    assert (values["WrtNoiseRemeasureState"], values["WrtNoiseMaxRemeasures"]) == ("again", "2")


def test_lzma_against_zlib_and_lz4_is_a_ratio_of_tbuffermergers_times_paired_by_round():
    params = {**PARAMS, "random_compressions": ["LZMA", "ZLIB", "LZ4"]}
    frame = _synthetic(params)
    lzma = (frame["part"] == "random") & (frame["compression"] == "LZMA")
    frame.loc[lzma, ["wall_s", "cpu_s"]] *= 3.0  # LZMA three times as long as the others, every round
    # and its files smaller: 0.8 of ZLIB's in one round, 0.9 in the other
    first_round = lzma & (frame["rep"] == 0)  # the rounds: its timed passes in order (no "round" column)
    frame["file_bytes"] = frame["file_bytes"].astype(float)
    frame.loc[lzma, "file_bytes"] *= 0.9
    frame.loc[first_round, "file_bytes"] *= 0.8 / 0.9
    table = wr.summary(wr.with_rates(frame))
    costs = wr.compression_costs(table, params)
    assert set(costs) == {"LzmaOverZlib", "LzmaOverLzFour", "SizeZlibOverLzma", "SizeLzFourOverLzma"}
    for name in ("LzmaOverZlib", "LzmaOverLzFour"):  # paired by round: every round's ratio is 3, no width
        ratio = costs[name]
        assert ratio.value == ratio.low == ratio.high == pytest.approx(3.0) and ratio.processes == 2
    sizes = costs["SizeZlibOverLzma"]  # the geometric mean of the rounds' 1/0.8 and 1/0.9, with its width
    assert sizes.value == pytest.approx((1 / 0.8 / 0.9) ** 0.5) and sizes.low < sizes.value < sizes.high
    values = wr.paper_macros(table, params, frame, {"disk": "/tmp"}, None, "GNU 12")
    assert values["WrtLzmaOverZlib"].value == pytest.approx(3.0)
    assert values["WrtSizeLzFourOverLzma"].value == pytest.approx(sizes.value)
    # seed 003's table judges LZMA's time at one thread paired by round too: a second round half as
    # slow again for every compression leaves each round's ratio 3 (held), where the times' own
    # intervals over two rounds would overlap and tell nothing
    drift = frame.copy()
    drift.loc[(drift["part"] == "random") & (drift["rep"] == 1), ["wall_s", "cpu_s"]] *= 1.5
    drifted = wr.summary(wr.with_rates(drift))
    claims = wr.seed003_claims(drifted, params).set_index("claim")
    assert claims.loc["Compression", "state"] == "holds"
    assert claims.loc["Compression", "numbers"]["over_zlib"] == pytest.approx(3.0)
    single = drifted.query("part == 'random' and method == 'tbuffermerger' and threads == 1 and medium == 'tmpfs'")
    lzma_time, zlib_time = (wr.analysis.estimate(single[single["compression"] == c].iloc[0], "time") for c in ("LZMA", "ZLIB"))
    assert lzma_time.low < 2 * zlib_time.high  # unpaired, the whole intervals would not have decided it
    # neither ZLIB nor LZ4 measured: no figure
    assert wr.compression_costs(wr.summary(wr.with_rates(_synthetic(PARAMS))), PARAMS) == {}


def test_seed003s_media_and_compressions_at_one_thread_and_on_the_slow_medium_pair_by_round():
    from throughput.report import ledger
    params = {**PARAMS, "random_compressions": ["none", "LZMA", "ZLIB", "LZ4"]}
    frame = _synthetic(params)
    random, times = frame["part"] == "random", ["wall_s", "cpu_s"]
    slow, lzma = random & (frame["medium"] == "slow"), random & (frame["compression"] == "LZMA")
    frame.loc[lzma, times] *= 5.0  # LZMA five times the others' time, on both media
    frame.loc[slow & (frame["compression"] == "none"), times] *= 3.0  # uncompressed: three times as long on the slow one
    frame.loc[slow & lzma, times] *= 1.1  # LZMA: a tenth longer there
    # a drift common to every run of the workload: the second round half as slow again (the media share rounds)
    frame.loc[random & (frame["rep"] == 1), times] *= 1.5
    table = wr.summary(wr.with_rates(frame))
    for compression, expected in (("none", 3.0), ("LZMA", 1.1)):
        ratio = wr.media_ratio(table, params, compression)
        assert (ratio.value, ratio.low, ratio.high) == pytest.approx((expected,) * 3) and ratio.processes == 2
    assert wr.compression_costs(table, params, threads=1)["LzmaOverLzFour"].value == pytest.approx(5.0)
    assert wr.compression_costs(table, params, medium="slow")["LzmaOverZlib"].value == pytest.approx(5.5)
    values = wr.paper_macros(table, params, frame, {"disk": "/tmp"}, None, "GNU 12")
    printed = {name: values[name].value for name in ("WrtMediaRatioNone", "WrtMediaRatioLzma", "WrtLzmaOverZlibOne",
                                                     "WrtLzmaOverLzFourOne", "WrtLzmaOverZlibSlow", "WrtLzmaOverLzFourSlow")}
    assert printed == pytest.approx({"WrtMediaRatioNone": 3.0, "WrtMediaRatioLzma": 1.1, "WrtLzmaOverZlibOne": 5.0,
                                     "WrtLzmaOverLzFourOne": 5.0, "WrtLzmaOverZlibSlow": 5.5, "WrtLzmaOverLzFourSlow": 5.5})
    # the ledger's claims on them, decided as the paper's ledger decides them
    section = {name: {"tex": str(values[name]), "value": values[name].value, "low": values[name].low,
                      "high": values[name].high, "rounds": 2} for name in printed}
    claims = {c.id: c for c in ledger.load()}
    states = {cid: ledger.decide(claims[cid], ledger.Machine("here", 4, False), {"writing": section}).state
              for cid in ("S003-performance-depends-on-media", "S003-lzma-not-io-bound", "S003-lzma-more-compression-work",
                          "S003-lzma-cpu-cost-erases-ratio-benefit")}
    assert set(states.values()) == {ledger.CONFIRMED}, states
    # one medium only: no media ratio, nothing printed
    fast = {**params, "media": ["tmpfs"]}
    values = wr.paper_macros(wr.summary(_synthetic(fast)), fast, _synthetic(fast), {"disk": "/tmp"}, None, "GNU 12")
    assert (values["WrtMediaRatioNone"], values["WrtMediaRatioLzma"], values["WrtLzmaOverZlibSlow"]) == ("n/a",) * 3


def test_seed001s_compression_share_is_root_imts_compressed_time_less_its_uncompressed_time_round_by_round():
    from throughput.report import ledger
    frame = _synthetic(PARAMS, reference=True)
    reference = frame.apply(wr.measuring.uncompressed_reference, axis=1, params=PARAMS)
    assert set(frame.loc[reference, "run"]) == {"objects_root_imt_tmpfs_none_t1", "objects_root_imt_tmpfs_none_t4"}
    # uncompressed, ROOT + IMT takes 0.9 of its compressed time in the first round, 0.8 in the second
    for rep, factor in ((0, 0.9), (1, 0.8)):
        frame.loc[reference & (frame["rep"] == rep), ["wall_s", "cpu_s"]] *= factor
    frame = wr.with_rates(frame)
    share = wr.compression_share(wr.summary(frame), PARAMS)
    assert (share.value, share.low, share.high) == pytest.approx(_peak_interval([0.1, 0.2]))
    main = frame[~reference]  # what the entry keeps for every other figure
    # the entry summarizes once and leaves the reference's rows out: the same as summarizing without it
    full = wr.summary(frame)
    kept = full[~full.apply(wr.measuring.uncompressed_reference, axis=1, params=PARAMS)].reset_index(drop=True)
    pd.testing.assert_frame_equal(kept, wr.summary(main.reset_index(drop=True)))
    values = wr.paper_macros(wr.summary(main), PARAMS, main, {"disk": "/tmp"}, None, "GNU 12", compression_share=share)
    assert values["WrtObjCompressionShare"].value == pytest.approx(15.0)
    assert values["WrtObjCompressionShareState"] == "measured"
    claim = next(c for c in ledger.load() if c.id == "S001-miniaod-compression-time-too-little")
    printed = {"WrtObjCompressionShare": {**values["WrtObjCompressionShare"].numbers(), "tex": "x"}}
    decision = ledger.decide(claim, ledger.Machine("here", 4, False), {"writing": printed})
    assert decision.value == pytest.approx(0.15) and decision.state == ledger.UNDECIDED  # two rounds: wide
    # products written uncompressed: no reference run, nothing to share
    plain = {**PARAMS, "event_compression": "none"}
    assert not any(wr.measuring.uncompressed_reference(run, plain) for run in wr.plan(plain))
    assert math.isnan(wr.compression_share(wr.summary(_synthetic(plain, reference=True)), plain).value)
    values = wr.paper_macros(wr.summary(main), PARAMS, main, {"disk": "/tmp"}, None, "GNU 12")
    assert (values["WrtObjCompressionShare"], values["WrtObjCompressionShareState"]) == ("n/a", "notmeasured")


@pytest.mark.parametrize("most_threads_factors, state", [((1.0, 0.9), "undecided"), ((0.5, 0.49), "refuted"),
                                                         ((1.005, 1.0), "confirmed")])
def test_seed001s_serialization_is_root_imts_uncompressed_speedup_round_by_round(most_threads_factors, state):
    """ROOT + IMT's products written uncompressed: one thread's time over the most threads', per round."""
    from throughput.report import ledger
    frame = _synthetic(PARAMS, reference=True)
    most = frame["run"] == "objects_root_imt_tmpfs_none_t4"
    for rep, factor in zip((0, 1), most_threads_factors):
        frame.loc[most & (frame["rep"] == rep), ["wall_s", "cpu_s"]] *= factor
    table = wr.summary(wr.with_rates(frame))
    speedup = wr.uncompressed_speedup(table, PARAMS)
    # the synthetic ROOT + IMT run takes base / threads**0.1 per pass, (1 + 0.01 rep) in round rep
    per_round = [4 ** 0.1 / factor for factor in most_threads_factors]
    assert speedup.value == pytest.approx(math.exp(np.mean(np.log(per_round)))) and speedup.processes == 2
    values = wr.paper_macros(table, PARAMS, frame, {"disk": "/tmp"}, None, "GNU 12", uncompressed_speedup=speedup)
    assert values["WrtObjUncompressedSpeedupState"] == "measured"
    claim = next(c for c in ledger.load() if c.id == "S001-root-imt-serialization-sequential")
    printed = {"WrtObjUncompressedSpeedup": {**values["WrtObjUncompressedSpeedup"].numbers(), "tex": "x"}}
    assert ledger.decide(claim, ledger.Machine("here", 4, False), {"writing": printed}).state == state
    # one thread only, or products written uncompressed at writing.event_compression: the main runs are the figure
    assert math.isnan(wr.uncompressed_speedup(table, {**PARAMS, "max_threads": 1}).value)
    plain = {**PARAMS, "event_compression": "none"}
    assert wr.uncompressed_speedup(wr.summary(_synthetic(plain)), plain).value == pytest.approx(4 ** 0.1)
    values = wr.paper_macros(table, PARAMS, frame, {"disk": "/tmp"}, None, "GNU 12")
    assert values["WrtObjUncompressedSpeedupState"] == "notmeasured"


def test_the_machine_table_shows_the_uncompressed_reference_runs_on_this_machine_as_an_archive_holds_them():
    """An archived machine's rows hold every run, the uncompressed references too; this machine's
    column must show them alike (the entry leaves them out of its other tables only)."""
    from types import SimpleNamespace
    frame = _synthetic(PARAMS, reference=True)
    full = wr.summary(frame)
    reference = full.apply(wr.measuring.uncompressed_reference, axis=1, params=PARAMS).astype(bool)
    measured = wr.Measured([], [], {"disk": "/tmp"}, frame[~frame.apply(wr.measuring.uncompressed_reference, axis=1,
                                                                         params=PARAMS)],
                           full[~reference], full[reference], intervals.UNKNOWN, intervals.UNKNOWN)
    archive = SimpleNamespace(label="earlier-run", runs={"writing": True}, rows=lambda experiment: frame)
    session = SimpleNamespace(params=PARAMS, archived=[archive])
    table = wr.entry.tables(measured, session)["machine_table"].content
    here, there = (c for c in table.columns if c.startswith(("this machine", "earlier-run")))
    assert (table[here] == table[there]).all(), table
    uncompressed = table[(table["writer"] == "TTree + IMT") & (table["compression"] == "none")
                         & (table["workload"] == "MiniAOD-like products")]
    assert len(uncompressed) == 1 and uncompressed[here].iloc[0] != "--"


def test_the_compressed_imt_speedup_the_ledger_judges_is_printed_only_for_a_compressed_run_on_several_threads():
    # seed 001's "ROOT compresses data products concurrently" (S001-root-imt-compresses-concurrently):
    # ROOT + IMT's paired speed-up at the most threads, not measured where its events were not compressed
    frame = _synthetic(PARAMS)
    values = wr.paper_macros(wr.summary(frame), PARAMS, frame, {"disk": "/tmp"}, None, "GNU 12")
    table = wr.summary(frame)
    row = table[(table["part"] == "events") & (table["method"] == "root_imt") & (table["threads"] == 4)
                & (table["medium"] == PARAMS["event_media"][0])].iloc[0]
    assert PARAMS["event_compression"] == "LZ4" and values["WrtImtCompressedSpeedup"] is values["WrtImtSpeedup"]
    assert values["WrtImtCompressedSpeedup"].value == pytest.approx(row["speedup"]) and row["speedup"] > 1
    uncompressed = {**PARAMS, "event_compression": "none"}
    frame = _synthetic(uncompressed)
    values = wr.paper_macros(wr.summary(frame), uncompressed, frame, {"disk": "/tmp"}, None, "GNU 12")
    assert values["WrtImtSpeedup"] != "n/a" and values["WrtImtCompressedSpeedup"] == "n/a"
    one_thread = {**PARAMS, "max_threads": 1}
    frame = _synthetic(one_thread)
    values = wr.paper_macros(wr.summary(frame), one_thread, frame, {"disk": "/tmp"}, None, "GNU 12")
    assert values["WrtImtCompressedSpeedup"] == "n/a"

"""Reader comparison: every reader gives the same exact checksum, a wrong reader is
caught, damaged inputs stop each reader with a message naming file and branch,
and the analysis turns raw runs into the paper's tables."""
from __future__ import annotations

import math
import os
import re
import shutil
import signal
import subprocess
import sys
import zipfile
from pathlib import Path

import awkward as ak
import numpy as np
import pandas as pd
import pytest
import uproot
from conftest import aod_small_arrays, flip_basket_bytes, printed_with_interval, t_interval

from throughput import configuration
from throughput.setup import config
from throughput.inputs import datasets, references
from throughput.core import harness, intervals, noise
from throughput.report import noise_sentences
from throughput.report import paper
from throughput import repeatability
from throughput.experiments import reader_comparison as rc
from throughput.inputs import checksums
from throughput.experiments.reader_comparison import analysis
from throughput.experiments.reader_comparison import processes as rc_processes
from throughput.experiments.reader_comparison.vocabulary import COMPRESSIONS
from throughput.experiments.reader_comparison.analysis import summary_row
from throughput.core.intervals import Estimate, Verdict

SECTION = configuration.validate({}, check_resources=False)["datasets"]
CPP = list(rc.CPP_METHODS)
BRANCHES = ["Jet_pt", "Muon_pt"]


KERNELS_USED = ("read_branch", "make_aod_like", "page_cache", "make_nanoaod_like", "tree_to_rntuple")  # checked by conftest's built_kernels


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A small NanoAOD-like and MiniAOD-like file, each with its RNTuple and Numpy copies."""
    root = tmp_path_factory.mktemp("readers")
    made = {}
    nano = root / "nano.root"
    datasets.make_nanoaod_like(nano, 300, "ZLIB", SECTION, progress=False)
    aod = root / "aod.root"
    rc.make_aod_like(aod, 150, "ZLIB", 1, 7, progress=False)
    for layout, path in (("nanoaod", nano), ("aod", aod)):
        rntuple, npz = path.with_suffix(".ntuple.root"), path.with_suffix(".npz")
        rc.make_rntuple_copy(path, rntuple, "ZLIB", 1)
        rc.make_numpy_copy(path, npz, "Events", [rc.branch_name(layout, c) for c in rc.COLLECTIONS])
        made[layout] = {"root": str(path), "rntuple": str(rntuple), "numpy": str(npz)}
    return made


@pytest.fixture(scope="module")
def jar():
    reason = rc.java_available()
    if reason:
        pytest.skip(reason)
    return rc.build_java_reader()


def _expected(path: str, branch: str) -> tuple[int, str]:
    """Items and checksum computed here, independently of every reader."""
    values = np.asarray(ak.flatten(uproot.open(path)["Events"][branch].array(), axis=None), dtype=np.float32)
    return len(values), rc.hex_checksum(rc.checksum(values))


def _argv(reader: str, inputs: dict, branches: list[str], jar=None, **extra) -> list[str]:
    args = {"files": inputs["root"], "tree": "Events", "branches": ",".join(branches), "reps": 1, "warmup": 0,
            "cache": "warm", "sample-every": 500, **extra}
    if reader in CPP:
        args["methods"] = reader
        args["rntuple-files"] = inputs.get("rntuple", inputs["root"])
        argv = [str(harness.kernel_path("read_branch"))]
    elif reader in rc.PYTHON_READERS:
        args.update(reader=reader, files=inputs["numpy"] if reader == "numpy" else inputs["root"])
        argv = [sys.executable, "-m", "throughput.experiments.reader_comparison", "read"]
    else:
        argv = ["java", "-jar", str(jar)]
    if reader not in CPP:
        args["page-cache-tool"] = str(harness.kernel_path("page_cache"))
    return argv + [x for k, v in args.items() for x in (f"--{k}", str(v))]


def _run_python(argv: list[str], capsys) -> tuple[int, str, str]:
    """A Python reader run in this process (rc.main, what `python -m` runs): exit code, stdout, stderr."""
    capsys.readouterr()
    code = rc.main(argv[argv.index("read"):])
    out = capsys.readouterr()
    return code, out.out, out.err


def _records(stdout: str) -> dict:
    records = {}
    for line in stdout.splitlines():
        record = __import__("json").loads(line)
        records.setdefault(record["record"], []).append(record)
    return records


def _results(records: dict) -> dict[str, tuple[int, str]]:
    return {r["branch"]: (r["items"], r["checksum"]) for r in records["result"]}


# --- the checksum --------------------------------------------------------------------------------

def test_checksum_is_the_documented_mix_and_order_independent():
    values = np.array([0.0, 1.5, -2.25, 3e30, np.float32(np.pi)], dtype=np.float32)
    expected = 0
    for bits in values.view(np.uint32).tolist():
        h = ((bits + 1) * rc.GOLDEN) % 2**64
        expected = (expected + (h ^ (h >> 32))) % 2**64
    assert rc.checksum(values) == expected == checksums._mix_sum_numpy(values.view(np.uint32))
    assert rc.checksum(values[::-1]) == expected
    changed = values.copy()
    changed[2] = np.nextafter(changed[2], np.float32(0))
    assert rc.checksum(changed) != expected
    # the bit pattern in the value's own type: the same numbers as float64 are other bits
    assert rc.checksum(values.astype(np.float64)) != expected
    with pytest.raises(TypeError, match="numeric values"):
        rc.checksum(np.array(["a", "b"]))


# --- every reader agrees -------------------------------------------------------------------------

@pytest.mark.parametrize("layout", ["nanoaod", "aod"])
def test_every_cpp_method_agrees_with_an_independent_checksum(files, layout):
    inputs = files[layout]
    argv = _argv("columnar", inputs, BRANCHES)
    argv[argv.index("--methods") + 1] = ",".join(CPP)
    argv[argv.index("--reps") + 1] = "2"
    records = rc.run_json_process(argv, "read_branch")
    for branch in BRANCHES:
        assert _results(records)[branch] == _expected(inputs["root"], branch)
    timing = pd.DataFrame(records["timing"])
    assert set(timing["method"]) == set(CPP) and len(timing) == 2 * len(CPP) * len(BRANCHES)
    assert timing["checksum"].nunique() == len(BRANCHES)
    # rotation: the second repetition starts with the second method
    first = timing.groupby("rep")["method"].first()
    assert list(first) == [CPP[0], CPP[1]]
    # and a process of a later round of the interleaving starts further on
    argv += ["--rotation", "3"]
    rotated = pd.DataFrame(rc.run_json_process(argv, "read_branch")["timing"])
    assert list(rotated.groupby("rep")["method"].first()) == [CPP[3 % len(CPP)], CPP[4 % len(CPP)]]
    assert (timing["residency"] == 1).all() and (timing["cache"] == "warm").all()
    samples = pd.DataFrame(records["sample"])
    assert (samples.groupby(["method", "branch", "rep"])["items"].max().values > 0).all()


def test_every_cpp_method_leaves_every_files_opening_out_of_its_reading_time(files):
    """RDataFrame opens the files itself: its later files' opening, like every other method's,
    is timed apart (the kernel counts the files each method timed the opening of)."""
    inputs = files["aod"]
    twice = {"root": f"{inputs['root']},{inputs['root']}", "rntuple": f"{inputs['rntuple']},{inputs['rntuple']}"}
    argv = _argv("columnar", twice, BRANCHES[:1])
    argv[argv.index("--methods") + 1] = ",".join(CPP)
    timing = pd.DataFrame(rc.run_json_process(argv, "read_branch")["timing"])
    items, _ = _expected(inputs["root"], BRANCHES[0])
    assert set(timing["method"]) == set(CPP)
    assert (timing["items"] == 2 * items).all()
    # the memory method passes over the values it read before any timing: it opens no file
    readers, memory = timing[timing["method"] != "memory"], timing[timing["method"] == "memory"]
    assert (readers["files_opened"] == 2).all(), readers[["method", "files_opened"]]
    assert (readers["open_s"] > 0).all() and (readers["open_s"] < readers["wall_s"]).all()
    assert (memory["files_opened"] == 0).all() and (memory["open_s"] == 0).all() and (memory["wall_s"] > 0).all()
    assert (memory[["bytes_compressed", "bytes_uncompressed"]] == 0).all(axis=None)


@pytest.mark.parametrize("reader", ["uproot", "numpy", "laurelin"])
def test_python_and_java_readers_agree(files, reader, request, capsys):
    jar = request.getfixturevalue("jar") if reader == "laurelin" else None
    for layout in ("nanoaod", "aod"):
        inputs = files[layout]
        if reader == "laurelin":
            records = rc.run_json_process(_argv(reader, inputs, BRANCHES, jar), reader)
        else:
            code, out, err = _run_python(_argv(reader, inputs, BRANCHES), capsys)
            assert code == 0, err
            records = _records(out)
        for branch in BRANCHES:
            assert _results(records)[branch] == _expected(inputs["root"], branch), (layout, branch)
        assert {r["method"] for r in records["timing"]} == {reader}


@pytest.mark.parametrize("reader", ["columnar", "uproot", "laurelin"])
def test_a_readers_sample_repeats_its_pass_until_its_reading_time_reaches_the_minimum(files, reader, request,
                                                                                       capsys):
    """After one warm-up pass, the measured sample repeats the pass as often as that pass's
    reading time (opening left out) says reach --min-sample-s, with a tenth to spare; its record
    gives the means per pass, the passes, the sample's reading time and the thread's run delay,
    and every pass agreed with the first (the exit code says so)."""
    jar = request.getfixturevalue("jar") if reader == "laurelin" else None
    minimum = 0.05
    argv = _argv(reader, files["nanoaod"], ["Jet_pt"], jar, warmup=1, **{"min-sample-s": minimum})
    if reader == "uproot":
        code, out, err = _run_python(argv, capsys)
        assert code == 0, err
        records = _records(out)
    else:
        records = rc.run_json_process(argv, reader)
    warm, sample = records["timing"]
    assert warm["warmup"] and not sample["warmup"] and warm["loops"] == 1
    # the rule every reader shares (bench::Calibration), replayed by its Python twin: a warm-up that
    # already reached the minimum (50.4 ms against 50 ms once) is one pass, not a formula's two
    rule = harness.Calibration(warmup=1, min_sample_s=minimum)
    rule.update(0, 1, warm["sample_s"], warm["wall_s"])
    assert sample["loops"] == rule.loops(1)
    assert sample["sample_s"] == pytest.approx((sample["wall_s"] - sample["open_s"]) * sample["loops"], rel=1e-6)
    assert sample["run_delay_s"] >= 0
    assert _results(records)["Jet_pt"] == _expected(files["nanoaod"]["root"], "Jet_pt")
    # a sample planned to cost at most a microsecond in all repeats nothing, and falls short
    argv += ["--max-sample-s", "1e-6"]
    if reader == "uproot":
        timing = _records(_run_python(argv, capsys)[1])["timing"]
    else:
        timing = rc.run_json_process(argv, reader)["timing"]
    assert [r["loops"] for r in timing] == [1, 1] and timing[1]["sample_s"] < minimum


def _dies(argv: list[str]) -> tuple[int, str, str]:
    os.kill(os.getpid(), signal.SIGKILL)  # as a reader's crash would end its process


def test_a_python_readers_round_is_a_forked_process_that_prints_what_its_command_prints(files):
    # measuring.py runs each round of a Python reader through the fork server (a fresh process with
    # numba set up, processes.run_python_reader), not `python -m ... read`: the same records, and a
    # reader that fails, or whose process dies, a ReaderFailed saying why (a row, not a stop)
    from throughput.experiments.reader_comparison.command_line import read_captured

    for reader in rc.PYTHON_READERS:
        argv = _argv(reader, files["nanoaod"], ["Jet_pt", "Muon_pt"], reps=2, warmup=1)
        by_command = rc.run_json_process(argv, reader)
        forked = rc_processes.run_python_reader(read_captured, argv[argv.index("read") + 1:], reader)
        assert _results(forked) == _results(by_command)
        assert _results(forked)["Jet_pt"] == _expected(files["nanoaod"]["root"], "Jet_pt")
        assert [(r["branch"], r["rep"]) for r in forked["timing"]] == [(r["branch"], r["rep"]) for r in by_command["timing"]]
        assert forked["validation"] == by_command["validation"] and forked["validation"][0]["ok"]
    missing = _argv("numpy", {**files["nanoaod"], "numpy": "/no/such/file.npz"}, ["Jet_pt"])
    with pytest.raises(rc.ReaderFailed, match="no such file"):
        rc_processes.run_python_reader(read_captured, missing[missing.index("read") + 1:], "numpy")
    with pytest.raises(rc.ReaderFailed, match="its process died"):
        rc_processes.run_python_reader(_dies, [], "a dying reader")


@pytest.mark.parametrize("reader", ["columnar", "uproot"])
def test_a_reader_sample_that_waited_for_a_cpu_is_taken_again(files, reader, contended_core):
    """With a busy process on its core, a reader's sample waits about half its time: it is
    taken again as often as allowed (unless it happened to run alone), and every take agrees."""
    # max-sample-s: uproot's pass is mostly its opening, which a sample calibrated on reading time alone
    # would repeat for a minute
    argv = _argv(reader, files["nanoaod"], ["Jet_pt"], reps=2, warmup=1, **{
        "min-sample-s": 0.2, "max-sample-s": 2.0, "max-run-delay-share": 0.02, "max-sample-retakes": 1})
    records = rc.run_json_process(argv, reader, core=contended_core)
    timed = [r for r in records["timing"] if not r["warmup"]]
    delayed = [r["run_delay_s"] > 0.02 * r["loops"] * (r["wall_s"] + r["prep_s"]) for r in timed]
    assert all(r["sample_retakes"] == 1 for r, late in zip(timed, delayed) if late), timed
    assert any(r["sample_retakes"] == 1 for r in timed), timed
    assert _results(records)["Jet_pt"] == _expected(files["nanoaod"]["root"], "Jet_pt")
    with pytest.raises(harness.KernelError, match="max-run-delay-share"):
        rc.run_json_process(_argv(reader, files["nanoaod"], ["Jet_pt"], **{"max-run-delay-share": 1}), reader)


def test_the_method_section_gives_short_samples_their_cause_and_the_run_delay():
    """A sample is short because reaching the minimum would have cost more than max_sample_s
    (an opening that dwarfs the reading) or because its pass ran faster than the warm-up that
    calibrated it; each is counted, and the measuring thread's wait for a CPU is given."""
    settings = noise.Settings(min_sample_s=0.1, max_sample_s=1.0)
    rows = pd.DataFrame({"record": "timing", "warmup": False, "loops": [2, 50, 40], "run": ["u", "c", "n"],
                         "wall_s": [0.6, 0.003, 0.003], "open_s": [0.59, 0.001, 0.0005],
                         "prep_s": 0.0, "sample_s": [0.02, 0.1, 0.09], "run_delay_s": [0.0, 0.0015, 0.0]})
    facts = noise_sentences.samples(rows, settings)
    assert (facts["Short"], facts["Samples"], facts["Shortest"], facts["ShortCauseState"]) == (2, 3, 0.02, "both")
    # u: reaching 0.1 s would cost (0.6 s a pass) * 2 passes * 0.1 / 0.02 = 6 s > 1 s; n ran faster
    assert (facts["Capped"], facts["Faster"], facts["MaxSample"]) == (1, 1, 1.0)
    # the run delay over the whole sample (each pass's wall time times its loops)
    shares = [0.0, 0.0015 / (0.003 * 50), 0.0]
    assert facts["DelayMedian"] == 0 and facts["DelayMax"] == pytest.approx(100 * max(shares))
    assert facts["DelayWorst"] == "c"


def test_cold_cache_evicts_and_still_agrees(files):
    inputs = files["nanoaod"]
    records = rc.run_json_process(_argv("columnar", inputs, ["Jet_pt"], cache="cold"), "cold")
    timing = records["timing"][0]
    assert timing["cache"] == "cold" and timing["residency"] == 0
    assert _results(records)["Jet_pt"] == _expected(inputs["root"], "Jet_pt")


def test_page_cache_tool_evicts_warms_and_names_a_missing_file(files, tmp_path):
    path = files["aod"]["root"]
    assert rc.page_cache([path], "cold")["highest_fraction"] == 0
    assert rc.page_cache([path], "status")["highest_fraction"] == 0
    assert rc.page_cache([path], "warm")["lowest_fraction"] == 1
    with pytest.raises(harness.KernelError, match="absent.root"):
        rc.page_cache([str(tmp_path / "absent.root")], "cold")


def test_the_python_readers_tell_a_resident_file_as_the_page_cache_tool_does(files, tmp_path):
    # their warm check skips starting the tool for a file whose every page is resident
    from throughput.experiments.reader_comparison.readers import fully_resident

    path = files["aod"]["root"]
    rc.page_cache([path], "cold")
    assert rc.page_cache([path], "status")["highest_fraction"] == 0 and not fully_resident(path)
    rc.page_cache([path], "warm")
    resident = rc.page_cache([path], "status")["lowest_fraction"] == 1
    assert fully_resident(path) == resident
    assert not fully_resident(str(tmp_path / "absent.root"))
    (tmp_path / "empty.root").write_bytes(b"")
    assert not fully_resident(str(tmp_path / "empty.root"))


# --- a deliberately wrong reader fails the job ---------------------------------------------------

def test_kernel_fails_when_one_method_disagrees(files):
    argv = _argv("columnar", files["nanoaod"], ["Jet_pt"], **{"corrupt-for-test": "bulk"})
    argv[argv.index("--methods") + 1] = "columnar,bulk"
    with pytest.raises(harness.KernelError, match="bulk disagrees with columnar on branch Jet_pt"):
        rc.run_json_process(argv, "read_branch")


def test_check_agreement_catches_a_wrong_reader_across_processes(files):
    inputs = files["nanoaod"]
    frames = []
    for reader, extra in (("columnar", {}), ("numpy", {}), ("uproot", {"corrupt-for-test": 1})):
        records = rc.run_json_process(_argv(reader, inputs, ["Jet_pt"], **extra), reader)
        frames.append(pd.DataFrame(records["timing"]).assign(record="timing", set="nano", reader=reader))
    good = pd.concat(frames[:2], ignore_index=True)
    agreed = rc.check_agreement(good)
    assert agreed["readers"].tolist() == [2]
    with pytest.raises(AssertionError, match="uproot"):
        rc.check_agreement(pd.concat(frames, ignore_index=True))


# --- damaged inputs: non-zero exit, message naming file and branch -------------------------------

def _flip_numpy_member(source: str, target, member: str) -> None:
    shutil.copyfile(source, target)
    with zipfile.ZipFile(source) as archive:
        info = archive.getinfo(member)
    data = bytearray(target.read_bytes())
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    for i in range(start + 8, start + min(info.compress_size, 64), 3):
        data[i] ^= 0xFF
    target.write_bytes(bytes(data))


def _damaged(files, kind: str, reader: str, tmp_path) -> tuple[dict, str]:
    """Inputs for `reader` with one problem of `kind`; returns them and the culprit file."""
    inputs = dict(files["nanoaod"])
    key = "numpy" if reader == "numpy" else "rntuple" if reader == "rntuple" else "root"
    source = inputs[key]
    target = tmp_path / f"damaged{source[source.index('.'):]}"
    if kind == "missing file":
        target = tmp_path / f"absent{source[source.index('.'):]}"
    elif kind == "truncated":
        target.write_bytes(open(source, "rb").read()[: int(0.6 * len(open(source, 'rb').read()))])
    elif kind == "flipped bytes":
        if key == "root":
            flip_basket_bytes(source, target, "Jet_pt")
        elif key == "numpy":
            _flip_numpy_member(source, target, "Jet_pt.npy")
        else:  # RNTuple: bytes flipped all over the pages and metadata
            data = bytearray(open(source, "rb").read())
            for i in range(512, len(data) - 512, 257):
                data[i] ^= 0xFF
            target.write_bytes(bytes(data))
    if kind != "missing branch":
        inputs[key] = str(target)
    elif key == "rntuple":  # read_branch takes the leaf's type from the TTree the copy was made of
        return inputs, inputs["root"]
    return inputs, inputs[key]


READERS_UNDER_TEST = CPP + ["uproot", "numpy", "laurelin"]


@pytest.mark.parametrize("kind", ["missing file", "missing branch", "truncated", "flipped bytes"])
@pytest.mark.parametrize("reader", READERS_UNDER_TEST)
def test_damaged_input_stops_the_reader_naming_file_and_branch(files, tmp_path, reader, kind, request, capsys):
    jar = request.getfixturevalue("jar") if reader == "laurelin" else None
    inputs, culprit = _damaged(files, kind, reader, tmp_path)
    branch = "Jet_nosuch" if kind == "missing branch" else "Jet_pt"
    argv = _argv(reader, inputs, [branch], jar)
    if reader in rc.PYTHON_READERS:
        code, out, err = _run_python(argv, capsys)
    else:
        proc = subprocess.run(argv, capture_output=True, text=True, env=harness.pinned_env())
        code, out, err = proc.returncode, proc.stdout, proc.stderr
    assert code != 0, f"{reader} read a {kind} input without failing:\n{out[-500:]}"
    assert culprit in err and branch in err, err[-1500:]
    assert '"record": "validation"' not in out
    if reader in CPP:  # its own error line names them (ROOT's lines do too), and no signal stopped it
        assert code == 2, f"{reader} on a {kind} input: exit {code}\n{err[-1500:]}"
        assert any(culprit in line and branch in line for line in err.splitlines() if "read_branch: error:" in line), \
            err[-1500:]


def test_laurelin_cannot_read_is_classified_from_its_own_error(jar, files, tmp_path):
    """ZSTD and uncompressed files: laurelin's exception, not an exit code, says "cannot read"."""
    for compression, reason in (("ZSTD", "no ZSTD codec"), ("none", "uncompressed baskets")):
        path = tmp_path / f"nano_{compression}.root"
        datasets.make_nanoaod_like(path, 50, compression, SECTION, progress=False)
        with pytest.raises(rc.ReaderFailed, match=f"{compression} compression") as failure:
            rc.run_json_process(_argv("laurelin", {"root": str(path)}, ["Jet_pt"], jar), "laurelin")
        kind, message = rc.classify_failure("laurelin", compression, failure.value.error)
        assert (kind, reason in message) == ("cannot_read", True), failure.value.error
    assert rc.file_compression(path) == "none"


def test_classify_failure_keeps_an_unknown_error_as_failed_with_its_first_line():
    error = "file x.root (ZLIB compression), branch Jet_pt: laurelin failed: java.lang.ArrayIndexOutOfBoundsException: " \
            "Index -1 out of bounds for length 0\n\tat somewhere"
    kind, message = rc.classify_failure("laurelin", "ZLIB", error)
    assert kind == "failed" and message == error.splitlines()[0]
    assert rc.failure_summary(message) == "ArrayIndexOutOfBoundsException"
    # the same words from another reader are not laurelin's capability limit
    assert rc.classify_failure("uproot", "ZSTD", "Unable to determine compression algorithm")[0] == "failed"


def test_a_reader_that_fails_is_a_row_with_its_error_not_a_crash(jar, files, tmp_path):
    """laurelin on the real CMS NanoAOD file throws; the run is stored as a failure
    row, the tables say so with the exception, and the other readers still count."""
    real = str(datasets.real_file(datasets.NANOAOD_SOURCE, SECTION))
    params = _params(readers=["columnar", "laurelin"], rootreadspeed=False, cold_collections=[])
    inputs = {"real/nano": {"role": "real", "layout": "nanoaod", "compression": rc.file_compression(real),
                            "root": [real], "rntuple": [], "numpy": []}}
    frame = rc.measure_runs(params, inputs, tmp_path / "raw", progress=False)
    unreadable = rc.cannot_read(frame)
    failed = unreadable[unreadable["reader"] == "laurelin"]
    assert set(failed["record"]) == {"failed"}, unreadable
    assert "ArrayIndexOutOfBoundsException" in failed["message"].iloc[0]
    rc.check_agreement(frame)  # the columnar reader's values still stand on their own
    table = rc.summary(frame)
    cells = rc.real_frame(table, unreadable, inputs)
    laurelin = cells[cells["reader"] == rc.LABELS["laurelin"]].iloc[0].tolist()
    assert laurelin[1] == "failed: ArrayIndexOutOfBoundsException", cells
    listed = rc.failures_frame(unreadable)
    assert listed["outcome"].tolist() == ["failed"] and "Index -1" in listed["reason"].iloc[0]
    assert listed["reason"].iloc[0].startswith("laurelin failed: java.lang.ArrayIndexOutOfBoundsException")
    # stored: a second run reuses the failure instead of measuring again
    assert not rc.measure_runs(params, inputs, tmp_path / "raw", progress=False).empty


def test_failures_table_is_never_empty():
    assert rc.failures_frame(rc.cannot_read(pd.DataFrame({"record": ["timing"]}))).shape == (1, 5)


def test_warm_threshold_is_checked_and_the_fraction_recorded(files, monkeypatch):
    path = files["nanoaod"]["root"]
    for bad in ("1.5", "0", "half"):
        monkeypatch.setenv("THROUGHPUT_WARM_MIN_RESIDENT", bad)
        with pytest.raises(harness.KernelError, match="warm_min_resident"):
            rc.page_cache([path], "warm")
    monkeypatch.setenv("THROUGHPUT_WARM_MIN_RESIDENT", "0.9")
    got = rc.page_cache([path], "warm")
    assert 0.9 <= got["lowest_fraction"] <= 1.0
    proc = subprocess.run(_argv("uproot", files["nanoaod"], ["Jet_pt"]), capture_output=True, text=True,
                          env={**harness.pinned_env(), "THROUGHPUT_WARM_MIN_RESIDENT": "0.9"})
    assert proc.returncode == 0, proc.stderr
    timing = _records(proc.stdout)["timing"]
    assert all(0.9 <= t["residency"] <= 1.0 for t in timing)


def test_no_result_is_stored_for_a_failing_reader(files, tmp_path):
    params = _params(readers=["columnar"], rootreadspeed=False, cold_collections=[])
    inputs = {"nanoaod/ZLIB": {"role": "main", "layout": "nanoaod", "compression": "ZLIB",
                               "root": [str(tmp_path / "absent.root")], "rntuple": [], "numpy": []}}
    with pytest.raises(harness.KernelError, match="absent.root"):
        rc.measure_runs(params, inputs, tmp_path / "raw", progress=False)
    assert not list(tmp_path.rglob("*.parquet"))


# --- inputs --------------------------------------------------------------------------------------

def test_aod_like_has_the_seeds_particle_types_and_attributes(files):
    with uproot.open(files["aod"]["root"]) as f:
        tree = f["Events"]
        assert tree.num_entries == 150
        attributes = rc.collection_attributes(files["aod"]["root"], "Events",
                                              [f"{c}_pt" for c in rc.SEED_TABLE1.index])
        for collection, seed in rc.SEED_TABLE1.iterrows():
            branch = f"{collection}_pt"
            arrays = aod_small_arrays(seed["attributes"])  # one branch per element in the flat layout
            assert arrays and attributes[branch] == seed["attributes"] + 2 * len(arrays)
            assert f"{collection}_a{arrays[0]:03d}_2" in tree and f"{collection}_a{arrays[0]:03d}" not in tree
            counts = tree[f"n{collection}"].array(library="np")
            assert abs(counts.mean() - seed["per_event"]) < 0.3 * seed["per_event"] + 0.3
            pt = tree[branch].array()
            assert ak.all(ak.num(pt) == counts) and ak.all(pt[:, 1:] <= pt[:, :-1])  # sorted by pT


# Members of the PAT-like classes (kernels/common/aod_classes.cmake) and the flat layout's
# attribute each holds.
PAT_MEMBERS = {"p4.pt": "pt", "p4.eta": "a008", "p4.phi": "a001", "p4.mass": "a002", "charge": "a004",
               "pdgId": "a012", "original.product": "a015", "original.key": "a007", "a003": "a003", "a005": "a005"}


def test_miniaod_like_values_are_whole_real_particles(tmp_path):
    """Every generated value is its real branch's (the kernel's "sources"), each generated particle
    is one real particle (its pt, eta, phi and mass together), and the compression factor the
    kernel reads back is the tree's, as uproot sums it over the baskets."""
    path = tmp_path / "miniaod.root"
    real_path = datasets.source_path(SECTION)
    validation = rc.make_aod_like(path, 400, "ZLIB", 1, 11, progress=False, source=real_path)
    sources = rc.aod_sources(validation)
    with uproot.open(path) as made, uproot.open(real_path) as real_file:
        tree, real = made["Events"], real_file["Events"]
        assert set(sources) == {b for b in tree.keys() if not b.startswith("n")}
        for collection in rc.SEED_TABLE1.index:
            real_values = {}
            for branch, source in sources.items():
                if not branch.startswith(collection + "_"):
                    continue
                name = source.removesuffix("!=0")
                if name not in real_values:
                    real_values[name] = ak.flatten(real[f"{collection}_{name}"].array()).to_numpy()
                expected = real_values[name] != 0 if source.endswith("!=0") else real_values[name]
                values = ak.flatten(tree[branch].array()).to_numpy()
                assert len(values) and np.isin(values, expected).all(), (branch, source)
            # the PAT-like base's members take the real particle's own branch where it has one
            for member, flat in PAT_MEMBERS.items():
                real_name = member.split(".")[-1]
                if flat != "pt" and f"{collection}_{real_name}" in real:
                    assert sources[f"{collection}_{flat}"] == real_name, (collection, member)
            kinematics: dict[str, str] = {}  # each real column's first branch: the particle's own value
            for branch, source in sources.items():
                if branch.startswith(collection + "_"):
                    kinematics.setdefault(source, branch)
            columns = [kinematics[k] for k in ("pt", "eta", "phi", "mass")]
            made_particles = set(zip(*(ak.flatten(tree[c].array()).to_numpy().tolist() for c in columns)))
            real_particles = set(zip(*(real_values[k].tolist() for k in ("pt", "eta", "phi", "mass"))))
            assert made_particles <= real_particles, collection
            assert len(made_particles) > 0.3 * len(real_particles) or len(made_particles) > 100
        uncompressed = sum(b.uncompressed_bytes for b in tree.branches)
        compressed = sum(b.compressed_bytes for b in tree.branches)
    assert (validation["tot_bytes"], validation["zip_bytes"]) == (uncompressed, compressed)
    print(f"MiniAOD-like tree compression factor (ZLIB-1, 400 events): {uncompressed / compressed:.2f}")


def test_a_real_column_taken_again_in_one_object_takes_another_particles_value(tmp_path):
    """The seed's attribute counts exceed the real collections' columns, so a real column is taken
    again within one object: from another real particle (make_aod_like.cpp), so that no object
    repeats a value the real particle holds once (repeats compress as real data does not). Two
    branches of one object sharing a real column then agree about as often as two particles do."""
    path = tmp_path / "miniaod.root"
    validation = rc.make_aod_like(path, 200, "ZLIB", 1, 5, progress=False, source=datasets.source_path(SECTION))
    assert validation["repeated_columns"] > 100
    sources = rc.aod_sources(validation)
    compared = 0
    with uproot.open(path) as made:
        tree = made["Events"]
        for collection in rc.SEED_TABLE1.index:
            by_source: dict[str, list[str]] = {}
            for branch, source in sources.items():
                if branch.startswith(collection + "_"):
                    by_source.setdefault(source, []).append(branch)
            for source, branches in by_source.items():
                if len(branches) < 2:
                    continue
                first, again = (ak.flatten(tree[b].array()).to_numpy() for b in branches[:2])
                if len(np.unique(first)) < 20:  # a flag or a count: equal by chance often
                    continue
                compared += 1
                # how often two particles drawn at random agree (a column mostly zero: often)
                _, counts = np.unique(first, return_counts=True)
                chance = float(np.sum((counts / len(first)) ** 2))
                assert np.mean(first == again) < max(0.5, chance + 0.1), (collection, source, branches[:2], chance)
    assert compared > 10


def test_numpy_copy_matches_the_root_file(files):
    with np.load(files["nanoaod"]["numpy"]) as archive:
        assert int(archive["__events__"][0]) == 300
        assert rc.hex_checksum(rc.checksum(archive["Jet_pt"])) == _expected(files["nanoaod"]["root"], "Jet_pt")[1]
    assert rc.file_compression(files["nanoaod"]["root"]) == "ZLIB"
    assert rc.compression_name(100) == "none" and rc.compression_name(1) == "ZLIB"
    assert rc.compression_name(505) == "ZSTD" and rc.compression_name(404) == "LZ4"


# --- the split-object file (std::vector<aod::Type>, one sub-branch per member) ----------------------

@pytest.fixture(scope="module")
def objects(files, tmp_path_factory):
    """The MiniAOD-like fixture's events again (same seed), as split std::vector of the generated classes."""
    path = tmp_path_factory.mktemp("objects") / "objects.root"
    rc.make_aod_like(path, 150, "ZLIB", 1, 7, progress=False, objects=True)
    rntuple, npz = path.with_suffix(".ntuple.root"), path.with_suffix(".npz")
    rc.make_rntuple_copy(path, rntuple, "ZLIB", 1)  # the importer keeps the classes (their dictionary)
    rc.make_numpy_copy(path, npz, "Events", [rc.branch_name("aod_objects", c) for c in rc.COLLECTIONS])
    return {"root": str(path), "rntuple": str(rntuple), "numpy": str(npz)}


def test_object_file_holds_the_flat_files_values_as_split_classes(files, objects):
    with uproot.open(objects["root"]) as o, uproot.open(files["aod"]["root"]) as flat:
        tree, flat_tree = o["Events"], flat["Events"]
        assert tree.num_entries == 150 and set(tree.keys(recursive=False)) == {*rc.COLLECTIONS, "Empty"}
        # the empty product: a split vector of its class in every event, never an object in it
        assert tree["Empty"].member("fClassName") == "vector<aod::Empty>"
        assert ak.all(ak.num(tree["Empty.pt"].array()) == 0)
        for collection, seed in rc.SEED_TABLE1.iterrows():
            top = tree[collection]
            assert top.member("fClassName") == f"vector<aod::{collection}>"
            assert len(top.branches) == seed["attributes"]  # one sub-branch per member
            assert ak.all(ak.num(tree[f"{collection}.p4.pt"].array()) == flat_tree[f"n{collection}"].array())
            # the PAT-like base (Lorentz vector, charge, pdgId, reference) and the type's own members:
            # float, int and bool, each the flat file's attribute of that number
            for member, flat_member in PAT_MEMBERS.items():
                values = tree[f"{collection}.{member}"].array()
                expected = flat_tree[f"{collection}_{flat_member}"].array()
                assert ak.all(values == (expected != 0 if member == "a005" else expected)), (collection, member)
            assert str(tree[f"{collection}.charge"].interpretation.content.from_dtype) == ">i4"
            inner, *arrays = aod_small_arrays(seed["attributes"])
            vectors = tree[f"{collection}.userFloats"].array()  # the inner std::vector<Float_t>
            assert ak.all(ak.num(vectors, axis=2) == 3)
            for k in range(3):
                assert ak.all(vectors[:, :, k] == flat_tree[f"{collection}_a{inner:03d}_{k}"].array()), (collection, k)
            for a in arrays:  # Float_t[3]: the flat file's three element branches
                values = tree[f"{collection}.a{a:03d}[3]"].array()
                for k in range(3):
                    assert ak.all(values[:, :, k] == flat_tree[f"{collection}_a{a:03d}_{k}"].array()), (collection, a, k)
        attributes = rc.collection_attributes(objects["root"], "Events", [f"{c}.p4.pt" for c in rc.SEED_TABLE1.index])
        assert attributes == {f"{c}.p4.pt": int(seed["attributes"]) for c, seed in rc.SEED_TABLE1.iterrows()}
    assert rc.branch_name("aod_objects", "Jet") == "Jet.p4.pt" and "Jet.p4.pt" in datasets.OBJECT_VALUE_BRANCHES
    assert references.expected([objects["root"]], "Jet.p4.pt")["checksum"] == _expected(files["aod"]["root"], "Jet_pt")[1]
    with np.load(objects["numpy"]) as archive:
        assert rc.hex_checksum(rc.checksum(archive["Jet.p4.pt"])) == _expected(files["aod"]["root"], "Jet_pt")[1]


def test_object_methods_agree_on_the_split_member_and_bulk_io_is_refused(files, objects):
    argv = _argv("columnar", objects, ["Jet.p4.pt", "Muon.p4.pt"])
    argv[argv.index("--methods") + 1] = ",".join(rc.OBJECT_METHODS)
    records = rc.run_json_process(argv, "read_branch")
    for branch in ("Jet", "Muon"):  # the same values as the flat file's branch
        assert _results(records)[f"{branch}.p4.pt"] == _expected(files["aod"]["root"], f"{branch}_pt")
    timing = pd.DataFrame(records["timing"])
    assert set(timing["method"]) == set(rc.OBJECT_METHODS) - {"bulk"}
    refused = pd.DataFrame(records["cannot_read"])
    assert set(refused["branch"]) == {"Jet.p4.pt", "Muon.p4.pt"} and (refused["method"] == "bulk").all()
    assert refused["message"].str.contains("SupportsBulkRead").all()
    # the whole collection: every member's bytes, for members and objects alike
    first = timing.groupby("method")["bytes_uncompressed"].max()
    assert first["members"] == first["cmssw"] > 20 * first["columnar"]


def test_object_set_is_planned_measured_and_tabled(files, objects, tmp_path):
    params = _params(readers=["columnar", "uproot"], collections=["Jet"], cold_collections=["Jet"],
                     timeline_collection="Jet", sample_every=200)
    params["repetitions"] = 2
    inputs = {"aod_objects/ZLIB": {"role": "objects", "layout": "aod_objects", "compression": "ZLIB",
                                   **{k: [v] for k, v in objects.items()}}}
    runs = rc.plan(params, inputs)
    assert {(r["group"], r["cache"]) for r in runs} == {("cpp", "warm"), ("uproot", "warm")}  # no cold
    # the C++ process reads the empty product too (the per-event floor); uproot only the collection
    assert runs[0]["methods"] == list(rc.OBJECT_METHODS) and runs[0]["branches"] == ["Jet.p4.pt", "Empty.pt"]
    assert runs[1]["branches"] == ["Jet.p4.pt"]
    frame = rc.measure_runs(params, inputs, tmp_path / "raw", progress=False)
    agreed = rc.check_agreement(frame)
    # Jet.pt: the C++ methods but bulk, and uproot; the empty product: the C++ methods but bulk
    assert dict(zip(agreed["branch"], agreed["readers"])) == {"Jet.p4.pt": len(rc.OBJECT_METHODS),
                                                              "Empty.pt": len(rc.OBJECT_METHODS) - 1}
    assert (agreed.set_index("branch").loc["Empty.pt", ["items", "checksum"]] == [0, "0" * 16]).all()
    rc.check_references(agreed, inputs)
    table = rc.summary(frame)
    unreadable = rc.cannot_read(frame)
    tables = rc.object_frames(table, unreadable, agreed, inputs, "ZLIB")
    readers = dict(zip(tables["table1_objects"][""], tables["table1_objects"]["jet"]))
    assert readers["C++ bulk I/O"].startswith("cannot read") and readers["uproot"].startswith(r"\num{")
    split = tables["object_split_table"].set_index("")
    assert list(split.index) == ["jet", "empty product"] and split.loc["jet", "seed"] == r"\num{158}"
    # the per-event floor: the CMSSW-like read of the empty product, over its read of the jets
    rounds = {b: table[(table["reader"] == "cmssw") & (table["branch"] == b)]["read_by_round"].iloc[0]
              for b in ("Empty.pt", "Jet.p4.pt")}
    share = intervals.paired_by_round(rounds["Empty.pt"], rounds["Jet.p4.pt"])
    assert 0 < share.value < 1 and split.loc["jet", "floor share"] == paper.estimate(share)
    assert split.loc["empty product", "objects"].startswith(r"\num{") and split.loc["empty product", "seed"] == "--"
    assert split.loc["jet", "baskets only"].startswith(r"\num{")  # the member's baskets decompressed alone
    params = {**params, "compression": "ZLIB"}
    numbers = rc.paper_macros(params, table, rc.ratios(table), unreadable, inputs, "test compiler", frame=frame,
                              goals=rc.layout_targets(table, params), noise_settings=noise.Settings(), archived=[])
    assert numbers["RcObjectEvents"] == r"\num{150}" and numbers["RcObjectBulkState"] == "refused"
    assert numbers["RcObjectState"] == "measured"
    floor_us = intervals.across_timed(rounds["Empty.pt"].values()).scaled(1e6 / 150)
    assert numbers["RcObjectFloorUs"].startswith(paper.estimate(floor_us)) and floor_us.value > 0
    assert numbers["RcObjectFloorShare"].startswith(paper.estimate(share))
    # reading every member's share of the CMSSW-like reader's time above the columnar one: the
    # mean over rounds of the differenced times (the ledger's S000-cmssw-cost-mostly-attributes)
    times = {r: table[(table["reader"] == r) & (table["branch"] == "Jet.p4.pt")]["read_by_round"].iloc[0]
             for r in ("columnar", "members", "cmssw")}
    shares = [(times["members"][k] - times["columnar"][k]) / (times["cmssw"][k] - times["columnar"][k])
              for k in sorted(times["columnar"])]
    assert len(shares) >= 2 and numbers["RcObjectMembersShare"] == paper.with_bounds(intervals.mean_across(shares),
                                                                                    2, 100, r"\%")
    assert numbers["RcObjectMembersShare"].value == pytest.approx(100 * sum(shares) / len(shares))
    with uproot.open(objects["root"]) as f:
        expected = f["Events"].member("fTotBytes") / f["Events"].member("fZipBytes")
    assert numbers["RcObjectTreeCompression"] == paper.number(expected, 3)
    # with its interval (paired round by round), marked when a rate behind it stayed noisy
    cmssw_ratio = re.fullmatch(r"\\num\{([0-9.]+)\}(\\,\$\\pm\$\\,[0-9.]+\\%| \(\\confidenceinterval\{.*\}\))?"
                               r"(\\textsuperscript\{\\dag\})?",
                               numbers["RcObjectCmsswVsColumnar"])
    assert cmssw_ratio and float(cmssw_ratio.group(1)) > 1  # (marked when a rate behind it stayed noisy)
    none = rc.object_frames(table, unreadable, agreed, {}, "ZLIB")
    assert none["table1_objects"].iloc[0, 0].startswith("not measured")


def test_numpy_verdict_splits_the_gap_by_the_baskets_limit():
    goal = {"numpy_ratio": 0.5, "numpy_verdict": Verdict.MISSED, "per_event": 16.0}
    # the baskets reach 0.9 of Numpy, the per-entry calls take 45% of the columnar reader's time
    # the baskets' rate over Numpy's, paired round by round: from one round, no interval
    paired = lambda value: {"baskets_numpy_ratio": value, "baskets_numpy": Estimate(value, math.nan, math.nan, 1)}  # noqa: E731
    # the per-entry calls' share: its whole interval above one half, below it, or holding it
    calls = rc.report._numpy_macros({**goal, **paired(0.9), "per_entry": Estimate(0.6, 0.55, 0.65, 3)}, "Aod")
    assert calls["RcNumpyAodState"] == "missed" and calls["RcNumpyAodGapState"] == "perentry"
    baskets = rc.report._numpy_macros({**goal, **paired(0.55), "per_entry": Estimate(0.1, 0.05, 0.15, 3)}, "Nano")
    assert baskets["RcNumpyNanoState"] == "missed" and baskets["RcNumpyNanoGapState"] == "baskets"
    assert baskets["RcNumpyNanoBaskets"] == r"\num{0.55}" + paper.NO_INTERVAL_MARK
    assert baskets["RcNumpyNanoPerEvent"] == r"\num{16.0}"
    assert rc.report._busy_macros(2.0) == {"RcNumpyBusyState": "busy", "RcNumpyMeanLoad": r"\num{2.0}"}
    assert rc.report._busy_macros(0.2)["RcNumpyBusyState"] == "quiet"
    open_share = rc.report._numpy_macros({**goal, **paired(0.9), "per_entry": Estimate(0.6, 0.4, 0.8, 3)}, "Aod")
    assert open_share["RcNumpyAodGapState"] == "notseparated"
    one_round = rc.report._numpy_macros({**goal, **paired(0.9), "per_entry": Estimate(0.9, math.nan, math.nan, 1)}, "Aod")
    assert one_round["RcNumpyAodGapState"] == "notseparated"  # no interval: not decided on the value alone
    unsplit = rc.report._numpy_macros({**goal, "baskets_numpy_ratio": float("nan"), "baskets_numpy": intervals.UNKNOWN,
                                       "per_entry": intervals.UNKNOWN}, "Aod")
    assert unsplit["RcNumpyAodState"] == "missednosplit"
    met = {**goal, "numpy_ratio": 0.97, "numpy": Estimate(0.97, 0.96, 0.98, 5), "numpy_verdict": Verdict.MET,
           **paired(0.99), "per_entry": Estimate(0.1, 0.05, 0.15, 5)}
    assert rc.report._numpy_macros(met, "Aod")["RcNumpyAodState"] == "met"
    assert rc.report._numpy_macros(met, "Aod")["RcNumpyAodInterval"] == \
        rf"\confidenceinterval{{{paper.number(met['numpy'].low, 2)}}}{{{paper.number(met['numpy'].high, 2)}}}{{}}"
    # an interval that holds the target: neither reached nor missed, whatever the ratio's value
    open_ = {**met, "numpy": Estimate(0.97, 0.9, 1.05, 5), "numpy_verdict": Verdict.INCONCLUSIVE}
    assert rc.report._numpy_macros(open_, "Nano")["RcNumpyNanoState"] == "inconclusive"
    assert rc.report._numpy_macros({**met, "numpy_ratio": float("nan")}, "Aod")["RcNumpyAodState"] == "notmeasured"


def test_a_run_without_the_split_object_file_says_so_by_state():
    table = _synthetic_summary({("aod/ZLIB", "draw", rc.branch_name("aod", "Jet")): [1.0]})
    numbers = rc.report._object_macros({"compression": "ZLIB", "timeline_collection": "Jet"}, table, {})
    assert numbers["RcObjectState"] == numbers["RcObjectBulkState"] == paper.NOT_MEASURED


def _synthetic_summary(reads: dict[tuple[str, str, str], list[float]], items: int = 1000, events: int = 400,
                       opening: float = 0.25, passes: tuple[float, ...] = (1.0,)) -> pd.DataFrame:
    """rc.summary of timed passes per round for each (set, reader, branch), with the given reading
    times (s; each round's passes those times `passes`), `opening` (s, scaled by each pass's reading
    time) to open its files; the baskets limit times a checksum and takes 10 rate samples, every
    other reader 400, at 0.1 ms a clock read."""
    rows = []
    for (set_name, reader, branch), times in reads.items():
        layout = set_name.split("/")[0]
        for round_index, read in ((r, t * f) for r, t in enumerate(times) for f in passes):
            open_s = opening * read
            rows.append({"record": "timing", "warmup": False, "set": set_name, "role": "main", "layout": layout,
                         "compression": "ZLIB", "cache": "warm", "reader": reader,
                         "collection": branch.split(".")[0].split("_")[0], "branch": branch, "round": round_index,
                         "wall_s": read + open_s, "cpu_s": read, "open_s": open_s, "events": events, "items": items,
                         "bytes_compressed": 1e5, "bytes_uncompressed": 2e5, "files": 1, "load_avg_1min": 0.1,
                         "others_cores": 0.0, "cv": 0.01, "noisy": False,
                         "checksum_s": 0.01 * read if reader == "baskets" else -1.0,
                         "samples": 10 if reader == "baskets" else 400, "clock_read_s": 1e-4})
    return rc.summary(pd.DataFrame(rows))


READS = {"columnar": [2.0, 2.3, 1.9], "baskets": [1.6, 1.95, 1.5], "numpy": [1.0, 1.1, 0.97]}


@pytest.mark.parametrize("rounds", [3, 1])
def test_the_limits_figures_pair_their_readers_round_by_round(rounds):
    """The baskets' rate over Numpy's, the per-entry calls' share of the columnar reader's time, the ns per
    value and the Numpy ratio with the opening, each recomputed here from the per-round times; from one
    round, the value alone."""
    reads = {r: times[:rounds] for r, times in READS.items()}
    table = _synthetic_summary({("nanoaod/ZLIB", r, "Jet_pt"): t for r, t in reads.items()})
    goal = rc.targets(table, "nanoaod/ZLIB", "Jet_pt")
    # the baskets' rate per value over Numpy's: Numpy's time over the baskets', round by round
    baskets = t_interval([math.log(n / b) for n, b in zip(reads["numpy"], reads["baskets"])])
    assert (goal["baskets_numpy"].value, goal["baskets_numpy"].low, goal["baskets_numpy"].high) == pytest.approx(
        baskets, nan_ok=True)
    # one less the limit's time (with the 390 rate samples of 0.1 ms it takes fewer per pass) over the columnar's
    extra = (400 - 10) * 1e-4
    kept = t_interval([math.log((b + extra) / c) for b, c in zip(reads["baskets"], reads["columnar"])])
    share = goal["per_entry"]
    assert (share.value, share.high, share.low) == pytest.approx(tuple(1 - k for k in kept), nan_ok=True)
    for reader in READS:  # ns per value: the geometric mean of the rounds' times over the values read
        ns = t_interval([math.log(t / 1000 * 1e9) for t in reads[reader]])
        assert (goal[f"{reader}_ns"].value, goal[f"{reader}_ns"].low, goal[f"{reader}_ns"].high) == pytest.approx(
            ns, nan_ok=True)
    # whole passes (opening included) paired the same way: each pass opened for a quarter of its reading time
    with_open = t_interval([math.log(n / c) for n, c in zip(reads["numpy"], reads["columnar"])])
    assert goal["numpy_ratio_with_open"] == pytest.approx(with_open[0])
    macros = rc.report._numpy_macros(goal, "Nano")
    assert macros["RcNumpyNanoBaskets"] == paper.with_interval(*baskets, 2)
    if rounds == 1:  # no interval from one round: the value, marked as such
        assert macros["RcNumpyNanoBaskets"] == paper.number(baskets[0], 2) + paper.NO_INTERVAL_MARK
        assert paper.estimate(share, 2) == paper.number(1 - kept[0], 2) + paper.NO_INTERVAL_MARK
    else:
        assert r"$\pm$" in paper.estimate(share, 2) and r"$\pm$" in paper.estimate(goal["columnar_ns"])


# per-round reading times (s) of the columnar reader, the baskets limit and Numpy
GAP_CASES = {
    "perentry": ([2.0, 2.1, 1.95], [0.6, 0.65, 0.58], [0.5, 0.52, 0.49]),
    "baskets": ([2.0, 2.1, 1.95], [1.6, 1.7, 1.55], [0.5, 0.52, 0.49]),
    "notseparated": ([2.0, 2.1, 1.95], [0.6, 1.6, 1.0], [0.5, 0.52, 0.49]),
}


@pytest.mark.parametrize("state", list(GAP_CASES) + ["oneround"])
def test_the_gap_to_numpy_is_split_by_the_interval_of_the_per_entry_share(state):
    """Most of the columnar reader's time is its per-entry calls where their share's whole interval (paired
    round by round, recomputed here) lies above one half, the baskets where below, not separated where it
    holds one half; each state built from per-round times (from one round the target is not decided)."""
    columnar, baskets, numpy = GAP_CASES["perentry" if state == "oneround" else state]
    rounds = 1 if state == "oneround" else 3
    reads = {"columnar": columnar[:rounds], "baskets": baskets[:rounds], "numpy": numpy[:rounds]}
    table = _synthetic_summary({("nanoaod/ZLIB", r, "Jet_pt"): t for r, t in reads.items()})
    goal = rc.targets(table, "nanoaod/ZLIB", "Jet_pt")
    macros = rc.report._numpy_macros(goal, "Nano")
    if rounds == 1:  # no interval: the target itself is not decided, nor the gap split
        assert (macros["RcNumpyNanoState"], macros["RcNumpyNanoGapState"]) == ("inconclusive", "notmeasured")
        return
    assert macros["RcNumpyNanoState"] == "missed"  # Numpy about four times faster
    extra = (400 - 10) * 1e-4  # the rate samples the columnar reader takes beyond the limit's
    kept = t_interval([math.log((b + extra) / c) for b, c in zip(reads["baskets"], reads["columnar"])])
    low, high = 1 - kept[2], 1 - kept[1]
    expected = "perentry" if low >= 0.5 else "baskets" if high < 0.5 else "notseparated"
    assert expected == state
    assert macros["RcNumpyNanoGapState"] == expected


# per-round reading times of the columnar reader and Numpy, against an own work of about 2.8% (the
# synthetic limit's checksum, 1% of its time, and 400 rate samples of 0.1 ms)
OWN_CASES = {
    "less": [1.0, 1.08, 0.97],  # Numpy twice as fast: a gap of about half the columnar reader's time
    "atleast": [1.96, 2.07, 1.92],  # about 1.5%, all of its interval below the own work's
    "notseparated": [1.94, 2.09, 1.85],  # an interval from below to above the own work's
    "nogap": [2.2, 2.3, 2.2],  # Numpy slower in every round
}


@pytest.mark.parametrize("state", list(OWN_CASES) + ["oneround"])
def test_own_work_weighs_the_checksum_and_samples_against_the_gap_to_numpy(state):
    """The own work (the limit's checksum plus the columnar reader's rate samples, over its reading time,
    round by round) and the gap (one less Numpy's time over the columnar reader's, paired round by round),
    each with its interval, recomputed here; the own work less than the gap, at least it or not separated
    from it by their whole intervals; each state built from per-round times."""
    from scipy import stats

    columnar, baskets = [2.0, 2.1, 1.95], [1.6, 1.7, 1.55]
    numpy = OWN_CASES["less" if state == "oneround" else state]
    rounds = 1 if state == "oneround" else 3
    reads = {"columnar": columnar[:rounds], "baskets": baskets[:rounds], "numpy": numpy[:rounds]}
    table = _synthetic_summary({("aod/ZLIB", r, "Jet_pt"): t for r, t in reads.items()})
    goal = rc.targets(table, "aod/ZLIB", "Jet_pt")
    macros = rc.report._own_work_macros(goal, "Aod")
    # per round: the checksum (1% of the limit's time) and 400 samples of 0.1 ms, over the columnar time
    shares = np.array([(0.01 * b + 400 * 1e-4) / c for b, c in zip(reads["baskets"], reads["columnar"])])
    own = goal["own_work"]
    assert own.value == pytest.approx(shares.mean()) and 0.02 < own.value < 0.035
    kept = t_interval([math.log(n / c) for n, c in zip(reads["numpy"], reads["columnar"])])
    gap, low, high = 1 - kept[0], 1 - kept[2], 1 - kept[1]
    if rounds == 1:
        assert not own.known
        assert macros["RcOwnWorkAodPercent"] == paper.number(100 * own.value, 2) + r"\%" + paper.NO_INTERVAL_MARK
        assert macros["RcOwnWorkAodState"] == "notseparated"  # no interval: not decided on the value alone
        return
    half = stats.t.ppf(0.975, rounds - 1) * shares.std(ddof=1) / math.sqrt(rounds)
    assert (own.low, own.high) == pytest.approx((shares.mean() - half, shares.mean() + half))
    assert macros["RcOwnWorkAodPercent"] == rc.report._percent_with_bounds(own)
    assert macros["RcOwnWorkAodGapPercent"] == rc.report._percent_with_bounds(goal["numpy"].one_less())
    assert rc.report._percent_with_bounds(goal["numpy"].one_less()).startswith(paper.number(100 * gap, 2))
    expected = ("nogap" if high <= 0 else "less" if own.high < low else "atleast" if own.low >= high
                else "notseparated")
    assert expected == state and macros["RcOwnWorkAodState"] == state
    unsplit = rc.report._own_work_macros({**goal, "own_work": intervals.UNKNOWN}, "Aod")
    assert unsplit["RcOwnWorkAodState"] == "notsplit" and unsplit["RcOwnWorkAodPercent"] == "--"


def test_own_work_sets_medians_against_medians():
    """With several passes a round, the own work's share sets each process's median own work against
    its median reading time, not against its best pass (which would inflate the share)."""
    reads = {"columnar": [2.0, 2.1, 1.95], "baskets": [1.6, 1.7, 1.55], "numpy": [1.0, 1.08, 0.97]}
    table = _synthetic_summary({("aod/ZLIB", r, "Jet_pt"): t for r, t in reads.items()}, passes=(0.5, 1.0, 1.0))
    own = rc.targets(table, "aod/ZLIB", "Jet_pt")["own_work"]
    # the medians are the given times (the passes' middle factor is 1)
    shares = [(0.01 * b + 400 * 1e-4) / c for b, c in zip(reads["baskets"], reads["columnar"])]
    assert own.value == pytest.approx(np.mean(shares))


@pytest.mark.parametrize("rounds", [3, 1])
def test_draw_on_muons_against_the_other_particle_types_is_paired_round_by_round(rounds):
    """TTree::Draw's muon rate over that round's median of the other types' rates, across the rounds with
    its interval (recomputed here); from one round, the value alone; nothing without the muons."""
    times = {"Muon": [4.0, 4.6, 3.9], "Jet": [1.0, 1.2, 0.95], "Electron": [2.0, 2.1, 1.9], "Photon": [1.5, 1.4, 1.6]}
    table = _synthetic_summary({("aod/ZLIB", "draw", rc.branch_name("aod", c)): t[:rounds] for c, t in times.items()})
    ratio = analysis.draw_muon_ratio(table, "aod/ZLIB", "aod")
    # rates are events over time: the muons' rate over the others' median is that median time over the muons'
    expected = t_interval([math.log(float(np.median([times[c][r] for c in ("Jet", "Electron", "Photon")]))
                                     / times["Muon"][r]) for r in range(rounds)])
    assert (ratio.value, ratio.low, ratio.high) == pytest.approx(expected, nan_ok=True)
    assert ratio.processes == rounds
    assert paper.estimate(ratio, 2) == paper.with_interval(*expected, 2)
    no_muon = _synthetic_summary({("aod/ZLIB", "draw", rc.branch_name("aod", "Jet")): [1.0]})
    assert not math.isfinite(analysis.draw_muon_ratio(no_muon, "aod/ZLIB", "aod").value)


@pytest.mark.parametrize("rounds", [3, 1])
def test_a_warm_up_factor_is_the_first_pass_over_the_timed_ones_within_each_process(rounds):
    """In each process (round) the warm-up pass's reading time over the median of its two timed passes', then
    across the processes with its interval (recomputed here); the value alone from one process; nothing
    where no warm-up pass was timed."""
    first = [3.0, 2.5, 3.4]
    timed = [(1.0, 1.1), (0.9, 1.0), (1.2, 1.0)]
    rows = []
    for r in range(rounds):
        for rep, read in [(-1, first[r]), (0, timed[r][0]), (1, timed[r][1])]:
            rows.append({"record": "timing", "set": "aod/ZLIB", "branch": "Jet_pt", "cache": "warm",
                         "reader": "laurelin", "round": r, "rep": rep, "warmup": rep < 0,
                         "wall_s": 1.25 * read, "open_s": 0.25 * read})
    frame = pd.DataFrame(rows)
    factor = analysis.warmup_factor(frame, "aod/ZLIB", "Jet_pt", "laurelin")
    expected = t_interval([math.log(first[r] / float(np.median(timed[r]))) for r in range(rounds)])
    assert (factor.value, factor.low, factor.high) == pytest.approx(expected, nan_ok=True)
    assert factor.processes == rounds
    no_warm_up = frame[~frame["warmup"]]
    assert not math.isfinite(analysis.warmup_factor(no_warm_up, "aod/ZLIB", "Jet_pt", "laurelin").value)
    assert not math.isfinite(analysis.warmup_factor(frame, "aod/ZLIB", "Jet_pt", "root4j").value)


@pytest.mark.parametrize("rounds", [3, 1])
def test_a_start_spike_is_the_first_sample_over_the_same_sample_of_later_passes(rounds):
    """In each process (round) the first sample's ns per value over the median of the first samples of its later
    passes (not over their tails, which hold other values), then across the processes with its interval
    (recomputed here); the value alone from one process; nothing where no process sampled two passes."""
    first = [4.0, 3.0, 3.6]  # ns per value of the first sample of each process
    later = [(1.0, 1.2), (1.1, 0.9), (1.3, 1.0)]  # the same sample in the two timed passes
    rows = []
    for r in range(rounds):
        for rep, ns in [(-1, first[r]), (0, later[r][0]), (1, later[r][1])]:
            # a sample after 100 values, and a pass's end after 10 more at a tenth of the time per value
            for items, wall in [(100, 100 * ns * 1e-9), (110, 100 * ns * 1e-9 + 10 * 0.1 * ns * 1e-9)]:
                rows.append({"record": "sample", "set": "nanoaod/ZLIB", "branch": "Jet_pt", "cache": "warm",
                             "reader": "root4j", "round": r, "rep": rep, "items": items, "wall_s": wall})
    frame = pd.DataFrame(rows)
    spike = analysis.start_spike(frame, "nanoaod/ZLIB", "Jet_pt", "root4j")
    expected = t_interval([math.log(first[r] / float(np.median(later[r]))) for r in range(rounds)])
    assert (spike.value, spike.low, spike.high) == pytest.approx(expected, nan_ok=True)
    assert spike.processes == rounds
    one_pass = frame[frame["rep"] < 0]
    assert not math.isfinite(analysis.start_spike(one_pass, "nanoaod/ZLIB", "Jet_pt", "root4j").value)
    assert not math.isfinite(analysis.start_spike(frame, "nanoaod/ZLIB", "Jet_pt", "columnar").value)
    assert not math.isfinite(analysis.start_spike(frame, "aod/ZLIB", "Jet_pt", "root4j").value)  # no such set


def test_the_machine_and_object_split_tables_print_each_rate_with_its_interval():
    """kHz per process across the rounds of each machine (recomputed here from the per-round times), the
    value and the one-process mark where a machine ran one round; the same in the split-object table."""
    here = _synthetic_summary({(s, r, "Jet_pt"): READS[r] for s in ("aod/ZLIB", "nanoaod/ZLIB") for r in READS})
    other = _synthetic_summary({("aod/ZLIB", "columnar", "Jet_pt"): [1.5]})  # one round, no NanoAOD-like run
    machines = rc.machine_frame({"this machine": here, "other": other}, "aod/ZLIB", "nanoaod/ZLIB", "Jet").set_index(
        "reader")
    mean, low, high = t_interval([math.log(t) for t in READS["columnar"]])
    khz = paper.with_interval(0.4 / mean, 0.4 / high, 0.4 / low)  # 400 events, kHz
    assert r"$\pm$" in khz and machines.loc["C++ columnar", "this machine: MiniAOD-like"] == khz
    assert machines.loc["C++ columnar", "other: MiniAOD-like"] == paper.number(0.4 / 1.5) + paper.NO_INTERVAL_MARK
    assert machines.loc["C++ columnar", "other: NanoAOD-like"] == "--"
    objects = _synthetic_summary({("aod_objects/ZLIB", r, b): READS["baskets"] if r == "baskets" else
                                  [3 * t for t in READS["columnar"]] if r == "cmssw" else READS["columnar"]
                                  for r in ("baskets", "columnar", "members", "cmssw") for b in ("Jet.p4.pt", "Empty.pt")})
    split = rc.object_split_frame(objects, "aod/ZLIB", "aod_objects/ZLIB").set_index("")
    mean, low, high = t_interval([math.log(t) for t in READS["baskets"]])
    assert split.loc["jet", "baskets only"] == paper.with_interval(0.4 / mean, 0.4 / high, 0.4 / low)
    assert split.loc["jet", "member alone"] == khz and split.loc["empty product", "member alone"] == khz
    # the objects' ratio to the member alone: three times its time in every round, no spread
    assert split.loc["jet", "objects / one"].startswith(paper.number(3.0))
    one = _synthetic_summary({("aod_objects/ZLIB", r, b): [1.5] for r in ("columnar", "cmssw")
                              for b in ("Jet.p4.pt", "Empty.pt")})
    assert rc.object_split_frame(one, "aod/ZLIB", "aod_objects/ZLIB").set_index("").loc[
        "jet", "member alone"] == paper.number(0.4 / 1.5) + paper.NO_INTERVAL_MARK


def test_the_columnar_and_attributes_states_are_the_ones_their_figures_give():
    """The section words the columnar reader against the CMSSW-like one and the gap against the
    attributes read by these states (paper/sections/reader_comparison.tex)."""
    def state(ratio):
        return rc.report._columnar_macros(ratio)["RcColumnarState"]

    assert state(intervals.Estimate(2.0, 1.8, 2.2, 3)) == "higher"
    assert state(intervals.Estimate(0.5, 0.4, 0.6, 3)) == "lower"
    assert state(intervals.Estimate(1.0, 0.8, 1.2, 3)) == "notseparated"
    assert state(intervals.UNKNOWN) == "notcompared"
    attributes = rc.report._attributes_macros
    assert attributes([2.0, 3.0], None) == {"RcAttributesState": "toofew"}
    assert attributes([2.0, 3.0, 4.0], [5, 5, 5]) == {"RcAttributesState": "same"}
    # five types in the order of their attributes: the one ordering of 120 that correlates fully
    grows = attributes([1.0, 2.0, 3.0, 4.0, 5.0], [10, 20, 30, 40, 50])
    assert grows == {"RcAttributesState": "grows", "RcAttributesTypes": "5", "RcAttributesRho": "1.00",
                     "RcAttributesPGrows": "0.0083", "RcAttributesPSmallest": "0.0083"}
    assert attributes([5.0, 4.0, 3.0, 2.0, 1.0], [10, 20, 30, 40, 50])["RcAttributesState"] == "shrinks"
    # three types cannot reach 5% whatever they show (1/3! = 0.17): no finding, the types it needs
    assert attributes([1.0, 2.0, 3.0], [10, 20, 30]) == {"RcAttributesState": "cannotreach", "RcAttributesTypes": "3",
                                                         "RcAttributesPSmallest": "0.17", "RcAttributesNeeded": "4"}
    assert attributes([1.0, 3.0, 2.0, 4.0], [10, 20, 30, 40])["RcAttributesState"] == "notshown"


def test_rootreadspeed_verdict_names_the_files_it_cannot_separate():
    goal = lambda verdict: {"rootreadspeed_ratio": 1.0, "rootreadspeed_verdict": verdict}  # noqa: E731
    both = rc.report._rootreadspeed_macros({"MiniAOD-like": goal(Verdict.MET), "NanoAOD-like": goal(Verdict.INCONCLUSIVE)})
    assert both == {"RcRrsState": "metopen", "RcRrsMissed": "--", "RcRrsMet": "MiniAOD-like", "RcRrsOpen": "NanoAOD-like"}
    alone = rc.report._rootreadspeed_macros({"MiniAOD-like": goal(Verdict.INCONCLUSIVE)})
    assert alone["RcRrsState"] == "open"  # the paper reads "so it <its wording>"
    slower = rc.report._rootreadspeed_macros({"MiniAOD-like": goal(Verdict.MISSED), "NanoAOD-like": goal(Verdict.MET)})
    assert slower["RcRrsState"] == "slowermet" and slower["RcRrsMissed"] == "MiniAOD-like"
    two = rc.report._rootreadspeed_macros({"MiniAOD-like": goal(Verdict.MISSED), "NanoAOD-like": goal(Verdict.MISSED)})
    assert two["RcRrsState"] == "slower" and two["RcRrsMissed"] == "MiniAOD-like and NanoAOD-like"
    never = rc.report._rootreadspeed_macros({"MiniAOD-like": {**goal(Verdict.INCONCLUSIVE), "rootreadspeed_ratio": float("nan")}})
    assert never["RcRrsState"] == "notmeasured"


def _outcome_cases() -> dict[str, tuple[pd.DataFrame, pd.DataFrame]]:
    """root4j's rows (summary `table`, unread `unreadable`) for each state of its outcome: not run,
    every set read (one, or several), some read and some not, none read."""
    def table(*sets):
        return pd.DataFrame({"reader": ["columnar"] + ["root4j"] * len(sets), "set": ["nanoaod/ZLIB", *sets]})

    failed = ("aod_objects/ZLIB", "failed", "root4j failed: java.lang.ArrayIndexOutOfBoundsException: Index 5")
    cannot = ("nanoaod/LZMA", "cannot_read", "file f.root, branch Jet_pt: cannot read LZMA baskets")
    # one row per branch and cache: an unread set is named once
    unread = pd.DataFrame([{"reader": "root4j", "set": s, "record": r, "message": m, "branch": b, "cache": c}
                           for s, r, m in (failed, cannot) for b in ("Jet_pt", "Muon_pt") for c in ("warm", "cold")]
                          + [{"reader": "laurelin", "set": "nanoaod/ZLIB", "record": "failed", "message": "other",
                              "branch": "Jet_pt", "cache": "warm"}])
    laurelin = unread[unread["reader"] == "laurelin"]
    return {"notrun": (table(), laurelin), "one": (table("nanoaod/ZLIB", "nanoaod/ZLIB"), laurelin),
            "several": (table("nanoaod/ZLIB", "aod/ZLIB"), laurelin),
            "some": (table("nanoaod/ZLIB", "aod/ZLIB"), unread), "none": (table(), unread)}


def test_which_sets_root4j_read_is_a_state_its_count_and_the_unread_sets():
    """paper/sections/reader_comparison.tex words RcRootFourJOutcomeState and RcRootFourJReadSetsState."""
    states = set()
    for name, (table, unreadable) in _outcome_cases().items():
        macros = rc.report._outcome_macros("RootFourJ", "root4j", table, unreadable)
        read = set(table[table["reader"] == "root4j"]["set"])
        mine = unreadable[unreadable["reader"] == "root4j"]
        unread = list(dict.fromkeys(zip(mine["set"], mine["record"], mine["message"])))  # in order, once
        assert macros["RcRootFourJOutcomeState"] == ("readsome" if unread else "read" if read else "notrun"), name
        assert macros["RcRootFourJReadSets"] == str(len(read))
        assert macros["RcRootFourJReadSetsState"] == ("none" if not read else "one" if len(read) == 1 else "several")
        assert macros["RcRootFourJUnread"] == ("; ".join(
            r"\rcunread" + "".join(f"{{{paper.escape(part)}}}" for part in (analysis.UNREAD_RECORDS[r], s,
                                                                              rc.failure_summary(m)))
            for s, r, m in unread) or "--")
        states.add((macros["RcRootFourJOutcomeState"], macros["RcRootFourJReadSetsState"]))
    assert {outcome for outcome, _ in states} == {"notrun", "read", "readsome"}
    assert {count for _, count in states} == {"none", "one", "several"}
    assert ("readsome", "none") in states  # every set it tried failed


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="no pdflatex")
def test_every_root4j_outcome_builds_with_its_numbers(tmp_path):
    from tex_wording import build

    cases = {name: rc.report._outcome_macros("RootFourJ", "root4j", *frames)
             for name, frames in _outcome_cases().items()}
    body = "\n\n".join(f"{name}: " + "".join(rf"\def\{k}{{{v}}}" for k, v in macros.items())
                         + r"\wording{RcRootFourJOutcome}." for name, macros in cases.items())
    code, log, text = build(tmp_path, "reader_comparison", {}, body)
    assert code == 0, log[-2000:]
    _, unreadable = _outcome_cases()["some"]
    reasons = {s: rc.failure_summary(m) for s, m in zip(unreadable["set"], unreadable["message"])}
    assert reasons["aod_objects/ZLIB"] == "ArrayIndexOutOfBoundsException"  # the exception's name alone
    unread = f"failed aod_objects/ZLIB: {reasons['aod_objects/ZLIB']}; cannot read nanoaod/LZMA: {reasons['nanoaod/LZMA']}"
    assert "notrun: it was not run (not among the configured readers)." in text
    assert f"one: it read {cases['one']['RcRootFourJReadSets']} input set." in text
    assert f"several: it read {cases['several']['RcRootFourJReadSets']} input sets." in text
    assert f"some: it read {cases['some']['RcRootFourJReadSets']} input sets; {unread}." in text
    assert f"none: it read no input set; {unread}." in text


def _cannot_cases() -> dict[str, pd.DataFrame]:
    """Unread rows for each state of the compressions laurelin cannot read: none (its failures and
    another reader's refusals only), one compression, several (one row per branch: a compression
    is named once; a name outside the configured compressions, with TeX's special character, last)."""
    def rows(reader, record, *compressions):
        return [{"reader": reader, "record": record, "compression": c, "set": f"nanoaod/{c}", "branch": b}
                for c in compressions for b in ("Jet_pt", "Muon_pt")]

    others = rows("laurelin", "failed", "ZSTD") + rows("root4j", "cannot_read", "LZMA", "none")
    return {"none": pd.DataFrame(others), "one": pd.DataFrame(others + rows("laurelin", "cannot_read", "LZ4")),
            "several": pd.DataFrame(others + rows("laurelin", "cannot_read", "ZSTD_5", "LZ4", "none"))}


def _cannot_compressions(unreadable: pd.DataFrame) -> list[str]:
    """The compressions laurelin cannot read in `unreadable`, once each, in the configured
    compressions' order (any other last)."""
    mine = unreadable[(unreadable["reader"] == "laurelin") & (unreadable["record"] == "cannot_read")]
    names = list(dict.fromkeys(mine["compression"]))
    return [c for c in COMPRESSIONS if c in names] + [c for c in names if c not in COMPRESSIONS]


def test_which_compressions_laurelin_cannot_read_is_a_state_and_their_list():
    """paper/sections/reader_comparison.tex words RcLaurelinCannotState (as RcLaurelinCannot and
    RcLaurelinExcept); the list's items are the compressions, none as \rcuncompressed."""
    for name, unreadable in _cannot_cases().items():
        macros = rc.report._cannot_macros("Laurelin", "laurelin", unreadable)
        ordered = _cannot_compressions(unreadable)
        assert macros["RcLaurelinCannotState"] == ("some" if ordered else "none"), name
        assert macros["RcLaurelinCannot"] == (r"\rcand ".join(
            r"\rcuncompressed" if c == "none" else rf"\rccompressed{{{paper.escape(c)}}}" for c in ordered) or "--")
    several = rc.report._cannot_macros("Laurelin", "laurelin", _cannot_cases()["several"])["RcLaurelinCannot"]
    assert several == r"\rcuncompressed\rcand \rccompressed{LZ4}\rcand \rccompressed{ZSTD\_5}"


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="no pdflatex")
def test_every_laurelin_cannot_state_builds_as_the_sentences_read_before(tmp_path):
    from tex_wording import build

    cases = {name: rc.report._cannot_macros("Laurelin", "laurelin", unreadable)
             for name, unreadable in _cannot_cases().items()}
    body = "\n\n".join(f"{name}: " + "".join(rf"\def\{k}{{{v}}}" for k, v in macros.items())
                       + r"(\wording{RcLaurelinCannot}) laurelin reads them \wording[RcLaurelinExcept]{RcLaurelinCannot}."
                       for name, macros in cases.items())
    code, log, text = build(tmp_path, "reader_comparison", {}, body)
    assert code == 0, log[-2000:]
    for name, unreadable in _cannot_cases().items():
        # the sentences as the report composed them before issue 30 item 5
        words = ["uncompressed" if c == "none" else f"{c}-compressed" for c in _cannot_compressions(unreadable)]
        here = f"here {' and '.join(words)} files" if words else "none in this run"
        except_ = f" except for {' and '.join(words)} files" if words else " in every compression of this run"
        assert f"{name}: ({here}) laurelin reads them{except_}." in text, text
    assert "several: (here uncompressed and LZ4-compressed and ZSTD_5-compressed files)" in text


def test_time_split_figure_stacks_the_columnar_readers_time(tmp_path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shares = {"baskets_share": 0.7, "checksum_share": 0.03, "sampling_share": 0.001, "per_entry_share": 0.269}
    goals = {"MiniAOD-like": {**shares, "columnar_ns_per_item": 20.0, "numpy_ns_per_item": 16.0},
             "NanoAOD-like": {**shares, "columnar_ns_per_item": 50.0, "numpy_ns_per_item": 20.0}}
    fig, ax = plt.subplots()
    rc.plot_time_split(ax, goals)
    bars = [(p.get_y(), p.get_x() + p.get_width()) for p in ax.patches]
    # each layout's stack ends at the columnar reader's time, Numpy's bar at its own
    for row, (columnar, numpy) in enumerate(((20.0, 16.0), (50.0, 20.0))):
        stack = [end for y, end in bars if abs(y + 0.4 - 2 * row) < 1e-9]
        assert len(stack) == 4 and max(stack) == pytest.approx(columnar)
        assert [end for y, end in bars if abs(y + 0.4 - (2 * row + 0.8)) < 1e-9] == [pytest.approx(numpy)]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [text for _, text, _ in rc.report.TIME_SPLIT] + [
        "Numpy baseline"]
    plt.close(fig)
    # without the baskets limit the columnar reader's time is one bar, not split
    fig, ax = plt.subplots()
    rc.plot_time_split(ax, {"MiniAOD-like": {**goals["MiniAOD-like"], **dict.fromkeys(shares, float("nan"))}})
    assert [p.get_width() for p in ax.patches] == [20.0, 16.0]
    assert "not split" in ax.get_legend().get_texts()[0].get_text()
    plt.close(fig)


# --- planning, configuration, parsing ------------------------------------------------------------

def _params(**changes):
    changes = {"decide_budget_s": 0, **changes}  # the claims' extra rounds only where a test asks for them
    section = configuration.validate({"reader_comparison": changes}, check_resources=False)["reader_comparison"]
    return {**section, "repetitions": 1, "warmup": 0, "compression": "ZLIB"}


def test_plan_covers_every_reader_set_and_cache_state():
    inputs = {
        "nanoaod/ZLIB": {"role": "main", "layout": "nanoaod", "compression": "ZLIB", "root": ["a"],
                         "rntuple": ["a.n"], "numpy": ["a.npz"]},
        "nanoaod/LZ4": {"role": "scan", "layout": "nanoaod", "compression": "LZ4", "root": ["b"],
                        "rntuple": [], "numpy": ["b.npz"]},
        "real/uproot-HZZ": {"role": "real", "layout": "hzz", "compression": "ZLIB", "root": ["c"],
                            "rntuple": ["c.n"], "numpy": ["c.npz"]},
    }
    runs = rc.plan(_params(cold_collections=["Jet"]), inputs)
    by = {(r["set"], r["cache"], r["group"]): r for r in runs}
    main = by[("nanoaod/ZLIB", "warm", "cpp")]
    assert main["methods"] == [m for m in CPP if m in _params()["readers"]] and main["branches"][0] == "Jet_pt" and len(main["branches"]) == 6
    assert by[("nanoaod/ZLIB", "cold", "cpp")]["branches"] == ["Jet_pt"]
    assert "rntuple" not in by[("nanoaod/LZ4", "warm", "cpp")]["methods"]  # no RNTuple copy given
    assert by[("real/uproot-HZZ", "warm", "cpp")]["branches"] == ["Jet_Px", "Photon_Px", "Electron_Px", "Muon_Px"]
    assert ("nanoaod/ZLIB", "warm", "rootreadspeed") in by and ("nanoaod/LZ4", "warm", "rootreadspeed") in by
    assert not any(r["group"] == "rootreadspeed" and (r["cache"] == "cold" or r["role"] == "real") for r in runs)
    assert {r["group"] for r in runs} == {"cpp", "uproot", "numpy", "laurelin", "root4j", "rootreadspeed"}
    assert len({rc.run_name(r) for r in runs}) == len(runs)


@pytest.mark.parametrize("bad, key", [
    ({"cold_collections": ["Jet"], "collections": ["Muon"]}, "reader_comparison.cold_collections"),
    ({"timeline_collection": "Tau", "collections": ["Jet"]}, "reader_comparison.timeline_collection"),
    ({"real_files": ["no-such-file.root"]}, "reader_comparison.real_files"),
    ({"readers": ["columnar", "root5j"]}, "reader_comparison.readers[1]"),
    ({"sample_every": 0}, "reader_comparison.sample_every"),
])
def test_config_errors_name_the_key(tmp_path, bad, key):
    with pytest.raises(config.ConfigError) as error:
        configuration.validate({"reader_comparison": bad}, workdir=tmp_path)
    assert f"'{key}'" in str(error.value)


def test_rootreadspeeds_pass_is_the_slope_over_every_copy_count_the_last_calibrated(monkeypatch):
    """One pass is the least-squares slope of the times against the copies, the start-up the
    intercept: exact on a line, every run entering (a slower run of two copies moves the slope,
    which the difference of the first and last would miss), a negative slope kept."""
    copies = list(rc_processes.ROOTREADSPEED_COPIES)
    assert copies == [1, 2, 5]
    assert rc_processes.per_copy(copies, [0.3, 0.5, 1.1]) == pytest.approx((0.2, 0.1))
    slower = rc_processes.per_copy(copies, [0.3, 0.6, 1.1])[0]
    assert slower != pytest.approx((1.1 - 0.3) / 4) and slower == pytest.approx(np.polyfit(copies, [0.3, 0.6, 1.1], 1)[0])
    assert rc_processes.per_copy(copies, [0.5, 0.475, 0.4])[0] == pytest.approx(-0.025)
    # each round runs every copy count and keeps their times beside the slope
    listed = []

    def fake_run(argv, **_):
        copies = argv.index("--trees") - argv.index("--files") - 1
        listed.append(copies)
        report = f"Real time: {0.2 + 0.1 * copies} s\nCPU time: {0.1 + 0.1 * copies} s\n" \
                 f"Uncompressed data read: {100 * copies} bytes\nCompressed data read: {50 * copies} bytes\n"
        return subprocess.CompletedProcess(argv, 0, report, "")

    monkeypatch.setattr(rc_processes, "page_cache", lambda files, cache: None)
    monkeypatch.setattr(rc_processes, "rootreadspeed_path", lambda: Path("rootreadspeed"))
    monkeypatch.setattr(rc_processes.subprocess, "run", fake_run)
    rows = rc_processes.run_rootreadspeed(["a.root"], "Events", "x", None, "warm", passes=2, warmup=1)
    assert listed == list(rc_processes.ROOTREADSPEED_COPIES) * 3
    assert rows["wall_s"].tolist() == pytest.approx([0.1] * 3) and rows["startup_s"].tolist() == pytest.approx([0.2] * 3)
    assert rows["bytes_uncompressed"].tolist() == pytest.approx([100.0] * 3)
    assert rows["wall_last_copies_s"].tolist() == pytest.approx([0.7] * 3)
    # calibrated after the warm-up: the last listing reads for the minimum sample (0.1 s a pass,
    # 1.5 s asked: ceil(1.1 x 15) = 17 copies), the slope unchanged
    listed.clear()
    rows = rc_processes.run_rootreadspeed(["a.root"], "Events", "x", None, "warm", passes=2, warmup=1,
                                          min_sample_s=1.5)
    assert listed == [1, 2, 5, 1, 2, 17, 1, 2, 17] and rows["copies_max"].tolist() == [5, 17, 17]
    assert rows["wall_s"].tolist() == pytest.approx([0.1] * 3)
    assert rc_processes.rootreadspeed_copies(0.001, 1.0) == (1, 2, rc_processes.ROOTREADSPEED_MAX_COPIES)
    assert rc_processes.rootreadspeed_copies(-0.01, 1.0) == rc_processes.rootreadspeed_copies(0.1, 0.0) == (1, 2, 5)


def test_rootreadspeed_report_is_parsed_and_a_bad_one_refused():
    text = ("Real time:\t\t\t0.25 s\nCPU time:\t\t\t0.23 s\nUncompressed data read:\t\t29420 bytes\n"
            "Compressed data read:\t\t24384 bytes\n")
    assert rc.parse_rootreadspeed(text) == {"wall_s": 0.25, "cpu_s": 0.23, "bytes_uncompressed": 29420.0,
                                            "bytes_compressed": 24384.0}
    with pytest.raises(harness.KernelError, match="rootreadspeed"):
        rc.parse_rootreadspeed("Real time: 0.25 s\n")


# --- from raw runs to the paper's tables ---------------------------------------------------------

def test_measure_summarize_and_tables(files, tmp_path):
    params = _params(readers=["columnar", "bulk", "cmssw", "baskets", "numpy"], collections=["Jet"],
                     cold_collections=["Jet"], timeline_collection="Jet", sample_every=200)
    inputs = {f"{layout}/ZLIB": {"role": "main", "layout": layout, "compression": "ZLIB",
                                 "root": [files[layout]["root"]], "rntuple": [files[layout]["rntuple"]],
                                 "numpy": [files[layout]["numpy"]]} for layout in ("aod", "nanoaod")}
    params["repetitions"] = 2  # two rounds of the interleaving (no more: no re-measure of a noisy group)
    settings = noise.Settings(max_remeasures=0)
    frame = rc.measure_runs(params, inputs, tmp_path / "raw", settings, progress=False)
    stored = sorted(p.name for p in (tmp_path / "raw").glob("*.parquet"))
    assert len(stored) == len(rc.plan(params, inputs))
    # one group per input set and cache state; every process ran once per round, the C++
    # methods in each round's random order; every pass recorded the load, every reader its spread
    groups = rc.groups(params, inputs)
    assert sorted(g.name for g in groups) == ["aod/ZLIB (cold)", "aod/ZLIB (warm)", "nanoaod/ZLIB (cold)",
                                              "nanoaod/ZLIB (warm)"]
    timing = frame[frame["record"] == "timing"]
    assert timing.groupby(["set", "cache", "reader", "branch"])["round"].apply(lambda r: sorted(r) == [0, 1]).all()
    cpp = timing[(timing["group"] == "cpp") & (timing["set"] == "aod/ZLIB") & (timing["cache"] == "warm")]
    methods = next(run["methods"] for run in rc.plan(params, inputs) if run["group"] == "cpp")
    assert cpp.sort_values("order").groupby("round")["reader"].first().tolist() == [
        noise.round_order(methods, r, settings.order_seed)[0] for r in (0, 1)]
    assert timing["others_cores"].notna().all()
    # (rootreadspeed's pass may be too short to time on files this small: no spread then)
    assert timing[timing["reader"] != "rootreadspeed"].groupby("run")["cv"].first().notna().all()
    again = rc.measure_runs(params, inputs, tmp_path / "raw", settings, progress=False)  # reused, not measured again
    pd.testing.assert_frame_equal(frame, again, check_dtype=False)
    agreed = rc.check_agreement(frame)
    assert (agreed["readers"] == 5).all() and len(agreed) == 2
    table = rc.fill_bytes(rc.summary(frame), inputs)
    rated = rc.ratios(table)
    assert np.allclose(rated[rated["reader"] == "columnar"]["vs_columnar"], 1.0)
    # each ratio paired round by round, with its interval around it
    paired = rated[rated["reader"].isin(["bulk", "cmssw"])]
    assert (paired["vs_columnar_low"] <= paired["vs_columnar"]).all()
    assert (paired["vs_columnar"] <= paired["vs_columnar_high"]).all()
    # the repeatability benchmark reads a reader-comparison run too: a run never differs from itself
    # (whether it agrees depends on how narrow its intervals are: too wide to judge otherwise)
    run = repeatability.read_run(tmp_path / "raw")
    cells = repeatability.cells(run)
    assert set(cells["table"]) == {"M values/s", "/ columnar"} and (cells["value"] > 0).all()
    assert (repeatability.compare(run, run)["verdict"] != "DIFFERS").all()
    rrs = table[table["reader"] == "rootreadspeed"]
    assert len(rrs) == 2 and (rrs["events"] > 0).all()
    assert (table["bytes_compressed"] > 0).all()
    # rootreadspeed's pass time is a difference of two runs: on inputs this small it may be NaN (no rate)
    readers = table[table["reader"] != "rootreadspeed"]
    assert (readers["mb_s_uncompressed"] > 0).all() and (readers["khz_read"] > 0).all()
    cmssw = table[(table["reader"] == "cmssw") & (table["cache"] == "warm")].set_index("set")
    columnar = table[(table["reader"] == "columnar") & (table["cache"] == "warm")].set_index("set")
    assert (cmssw["bytes_uncompressed"] > 10 * columnar["bytes_uncompressed"]).all()

    unreadable = rc.cannot_read(frame)
    shapes = rc.collection_shapes(inputs, agreed, "aod/ZLIB")
    t1 = rc.table1_frame(table, unreadable, shapes, "aod/ZLIB", "aod")
    assert list(t1.columns) == ["", "jet"]
    assert t1.iloc[2].tolist() == ["attributes (branches), seed", "95"]
    # each reader's rate across its two processes, with its interval (rootreadspeed's pass may be
    # too short for the tool to time in a round, which leaves one value and no interval)
    readers = t1.iloc[7:]
    timed = readers[~readers[""].str.contains("with opening") & readers["jet"].str.startswith(r"\num{")]
    assert len(timed) and all(printed_with_interval(cell) for cell in timed["jet"])
    assert t1.iloc[3].tolist() == ["branches, here", str(95 + 2 * len(aod_small_arrays(95)))]
    assert ["CMSSW EDAnalyzer (seed)", r"\num{1.15}"] in t1.values.tolist()
    assert len(rc.ratio_frame(rated, ["aod/ZLIB", "nanoaod/ZLIB"], "Jet")) == 12
    assert "cold kHz" in rc.cold_frame(table, ["aod/ZLIB"], "Jet").columns
    line = rc.timeline(frame, "aod/ZLIB", "Jet_pt")
    assert set(line["reader"]) == {"columnar"} and (line["ns_per_item"] > 0).all()
    goals = rc.layout_targets(table, params)
    numbers = rc.paper_macros(params, table, rated, unreadable, inputs, "test compiler",
                              frame=frame, goals=goals, noise_settings=settings, archived=[])
    assert numbers["RcAodEvents"] == r"\num{150}" and numbers["RcNanoEvents"] == r"\num{300}"
    # the events the files hold, counted in them, even where every sample stopped halfway (max_sample_s)
    halved = rc.paper_macros(params, table.assign(events=table["events"] // 2), rated, unreadable, inputs,
                             "test compiler", frame=frame, goals=goals, noise_settings=settings, archived=[])
    assert halved["RcAodEvents"] == r"\num{150}" and halved["RcNanoEvents"] == r"\num{300}"
    # seed 000's Table 1 per particle type: the CMSSW-like reader's slowdown, rate and bytes (Jet read, Photon not)
    cmssw_row, columnar_row = (summary_row(table, "aod/ZLIB", "warm", r, "Jet_pt") for r in ("cmssw", "columnar"))
    assert numbers["RcCmsswSlowdownJet"] == paper.estimate(analysis.slowdown(table, "aod/ZLIB", "Jet_pt", "cmssw"), 3)
    assert numbers["RcCmsswBytesJet"] == paper.exact(cmssw_row["bytes_uncompressed"] / columnar_row["bytes_uncompressed"], 3)
    assert numbers["RcCmsswBytesJet"].value > 10 and numbers["RcCmsswKhzJet"].value > 0
    assert numbers["RcCmsswSlowdownPhoton"] == numbers["RcCmsswKhzPhoton"] == numbers["RcCmsswBytesPhoton"] == "--"
    # TTree::Draw was not run here: its figures are not measured, said as "--" (the ledger: notmeasured)
    assert numbers["RcDrawSlowdownMuon"] == numbers["RcDrawWarmup"] == numbers["RcDrawOverNumpyAod"] == "--"
    # the whole of macros.tex from the package: the noise control and the warm passes' residency
    # from the measured rows, and the archived machines shown (none here)
    noise_macros = noise_sentences.paper_macros("Rc", frame, settings, section="reader_comparison")
    assert {"Rc" + name for name in noise_sentences.PAPER_MACROS} <= set(noise_macros)
    assert {k: numbers[k] for k in noise_macros} == noise_macros
    warm = frame[(frame["record"] == "timing") & (frame["cache"] == "warm")]
    assert numbers["RcWarmResidencyLowest"] == paper.number(100 * warm["residency"].min(), 4)
    assert numbers["RcWarmMinResident"].startswith(r"\num{")
    assert numbers["RcMachinesSentence"] == r"\machinessentence{Rc}" and numbers["RcMachinesState"] == "none"
    # the tree compression factor from the baskets, against the TTree's own totals (ROOT's TTree::Print)
    with uproot.open(inputs["aod/ZLIB"]["root"][0]) as f:
        expected = f["Events"].member("fTotBytes") / f["Events"].member("fZipBytes")
    assert len(inputs["aod/ZLIB"]["root"]) == 1 and numbers["RcAodTreeCompression"] == paper.number(expected, 3)
    assert all(name.isalpha() and name.startswith("Rc") for name in numbers)
    assert numbers["RcColumnarState"] in {"higher", "lower", "notseparated", "notcompared"}  # the section words each
    assert numbers["RcAttributesState"] in {"toofew", "same", "cannotreach", "grows", "shrinks", "notshown"}
    assert "RcColumnarVerdict" not in numbers and "RcAttributesVerdict" not in numbers
    for layout, name in (("aod", "Aod"), ("nanoaod", "Nano")):  # each layout's state, from its own verdict
        verdict = rc.targets(table, f"{layout}/ZLIB", "Jet_pt")["numpy_verdict"]
        assert numbers[f"RcNumpy{name}State"].startswith(verdict.value)  # missed: missed or missednosplit
    # the target's ratio paired round by round, printed with its interval, the verdict from it
    for layout in ("aod", "nanoaod"):
        goal = rc.targets(table, f"{layout}/ZLIB", "Jet_pt")
        assert goal["numpy"].processes == params["repetitions"] and goal["numpy"].low <= goal["numpy"].high
        assert goal["numpy_verdict"] is intervals.at_least(goal["numpy"], rc.NUMPY_TARGET)
    assert printed_with_interval(numbers["RcNumpyRatioAod"])
    # rootreadspeed times a pass as the difference of two runs of itself, often none at all on files this
    # small: its ratio pairs only the rounds it timed, and is "--" without one
    for layout, name in (("aod", "Aod"), ("nanoaod", "Nano")):
        rrs = rc.targets(table, f"{layout}/ZLIB", "Jet_pt")["rootreadspeed"]
        assert (numbers[f"RcRrsRatio{name}"] == "--") == (rrs.processes == 0)
    timed = [rc.targets(table, f"{layout}/ZLIB", "Jet_pt")["rootreadspeed"].processes > 0 for layout in ("aod", "nanoaod")]
    assert (numbers["RcRrsState"] == "notmeasured") == (not any(timed))  # else the verdicts the timed layouts had
    # the limit: the share of the columnar reader's time above the baskets alone, less the rate samples it
    # takes beyond the limit's, recomputed from the same table (near zero on these small files, so the
    # printed two significant digits are compared with their own rounding)
    for layout, name in (("aod", "Aod"), ("nanoaod", "Nano")):
        row = lambda reader: summary_row(table, f"{layout}/ZLIB", "warm", reader, "Jet_pt")  # noqa: E731
        columnar, baskets = row("columnar"), row("baskets")
        extra = columnar["sampling_ns_per_item"] - baskets["sampling_ns_per_item"]
        share = 100 * (columnar["ns_per_item_read"] - baskets["ns_per_item_read"] - (0 if math.isnan(extra) else extra)
                       ) / columnar["ns_per_item_read"]
        assert numbers[f"RcPerEntryPercent{name}"] == paper.number(share, 2)
        # the split of the columnar reader's time adds up, the checksum timed inside the limit
        goal = rc.targets(table, f"{layout}/ZLIB", "Jet_pt")
        parts = [goal[k] for k in ("baskets_share", "checksum_share", "sampling_share", "per_entry_share")]
        assert sum(parts) == pytest.approx(1.0) and min(parts[:2]) > 0 and parts[2] >= 0
        assert numbers[f"RcChecksumPercent{name}"] == paper.number(100 * goal["checksum_share"], 2)
        # the figures of the limit's sentence, each with its interval from the two rounds (recomputed from
        # synthetic rounds in test_the_limits_figures_pair_their_readers_round_by_round)
        for macro, figure, digits in (("ColumnarNs", "columnar_ns", 3), ("BasketsNs", "baskets_ns", 3),
                                      ("BasketsVsNumpy", "baskets_numpy", 2)):
            assert numbers[f"Rc{macro}{name}"] == paper.estimate(goal[figure], digits)
            assert goal[figure].processes == 2 and printed_with_interval(numbers[f"Rc{macro}{name}"])
        # the per-entry share may lie near zero: printed in percent with its two bounds
        share = goal["per_entry"]
        assert share.processes == 2 and numbers[f"RcPerEntryShare{name}"] == (
            rf"{paper.number(100 * share.value, 2)}\% (\confidenceinterval{{{paper.number(100 * share.low, 2)}}}"
            rf"{{{paper.number(100 * share.high, 2)}}}{{\%}})")
        assert numbers[f"RcNumpy{name}Baskets"] == numbers[f"RcBasketsVsNumpy{name}"]
    aod_goal = rc.targets(table, "aod/ZLIB", "Jet_pt")
    assert numbers["RcNumpyRatioWithOpenAod"] == paper.estimate(aod_goal["numpy_with_open"], 2)
    assert numbers["RcNumpyNsAod"] == paper.estimate(aod_goal["numpy_ns"])
    # each layout's own work against its gap (the section explains the MiniAOD-like one's)
    assert {numbers["RcOwnWorkAodState"], numbers["RcOwnWorkNanoState"]} <= {"nogap", "less", "atleast",
                                                                              "notseparated"}
    own = goal["own_work"]  # the NanoAOD-like goal, the loop's last: round by round, with its two bounds
    assert own.processes == 2 and numbers["RcOwnWorkNanoPercent"] == rc.report._percent_with_bounds(own)
    # the same work as the figure's split (checksum and rate samples over the reading time), taken round by
    # round: its mean recomputed from the rows' per-round times. (The figure's split, from the medians of
    # all passes, differs from it by noise alone, which a test must not weigh: on these small files both
    # are fractions of a percent, and a loaded host moved one threefold.)
    columnar, limit = (summary_row(table, "nanoaod/ZLIB", "warm", r, "Jet_pt") for r in ("columnar", "baskets"))
    per_round = [(limit["checksum_by_round"][r] / limit["items"] + columnar["sampling_by_round"][r] / columnar["items"])
                 / (t / columnar["items"]) for r, t in columnar["read_median_by_round"].items()]
    assert len(per_round) == 2 and own.value == pytest.approx(np.mean(per_round)) and 0 < own.value < 1
    assert 0 < goal["checksum_share"] + goal["sampling_share"] < 1
    # the baskets limit alone times its checksum, inside its reading time; every C++ pass
    # counts the samples it took (its sample records, less the one closing the pass)
    passes = timing[timing["group"] == "cpp"]
    limit = passes[passes["reader"] == "baskets"]
    assert ((limit["checksum_s"] > 0) & (limit["checksum_s"] < limit["wall_s"] - limit["open_s"])).all()
    assert (passes[passes["reader"] != "baskets"]["checksum_s"] == -1).all()
    assert (passes["clock_read_s"] > 0).all() and (passes["clock_read_s"] < 1e-5).all()
    samples = frame[frame["record"] == "sample"].groupby(["set", "cache", "reader", "round", "rep"]).size()
    taken = passes.set_index(["set", "cache", "reader", "round", "rep"])["samples"]
    recorded = samples.reindex(taken.index).fillna(0)
    assert ((taken >= recorded - 1) & (taken <= recorded)).all() and (taken > 0).any()


# --- reference values kept outside the files -------------------------------------------------------

def test_readers_that_agree_on_damaged_bytes_are_caught_by_the_reference(tmp_path):
    """4 flipped bytes inside an uncompressed basket are read as values by every
    reader alike; their agreement passes, the file's reference does not."""
    good = tmp_path / "nano_none.root"
    datasets.make_nanoaod_like(good, 300, "none", SECTION, progress=False)
    assert references.load(good)["branches"]["Jet_pt"]["items"] > 0  # taken by the generator
    bad = tmp_path / "bad" / "nano_none.root"
    bad.parent.mkdir()
    shutil.copyfile(good, bad)
    shutil.copyfile(references.reference_path(good), references.reference_path(bad))
    with uproot.open(good) as f:
        b = f["Events"]["Jet_pt"]
        start = int(b.member("fBasketSeek")[0]) + b.basket_key(0).fKeylen + 40  # inside the values, no header
    data = bytearray(bad.read_bytes())
    for i in range(start, start + 4):
        data[i] ^= 0x5A
    bad.write_bytes(bytes(data))

    params = _params(readers=["columnar", "uproot"], rootreadspeed=False, collections=["Jet"],
                     timeline_collection="Jet", cold_collections=[])
    inputs = {"nanoaod/none": {"role": "main", "layout": "nanoaod", "compression": "none", "root": [str(bad)],
                               "rntuple": [], "numpy": []}}
    frame = rc.measure_runs(params, inputs, tmp_path / "raw", progress=False)
    agreed = rc.check_agreement(frame)  # both readers read the same wrong values
    with pytest.raises(AssertionError, match=r"nanoaod/none branch Jet_pt .*damaged input"):
        rc.check_references(agreed, inputs)
    inputs["nanoaod/none"]["root"] = [str(good)]
    checked = rc.check_references(rc.check_agreement(rc.measure_runs(params, inputs, tmp_path / "raw2", progress=False)),
                                  inputs)
    assert checked["matches"].all()


def test_a_real_file_is_registered_once_and_a_changed_file_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(references, "REGISTERED", tmp_path / "refs")
    real = datasets.real_file("uproot-HZZ-lz4.root", SECTION)
    stored = references.register(real, "events", ["Jet_Px"])
    assert references.reference_path(real) == tmp_path / "refs" / "uproot-HZZ-lz4.root.reference.json"
    assert stored["branches"]["Jet_Px"]["entries"] == uproot.open(real)["events"].num_entries
    copy = tmp_path / "copy.root"
    copy.write_bytes(real.read_bytes()[:-10])
    references.reference_path(copy).write_text(references.reference_path(real).read_text())
    with pytest.raises(references.ReferenceError, match="re-make it"):
        references.load(copy)
    with pytest.raises(references.ReferenceError, match="no reference"):
        references.load(tmp_path / "refs" / "nothing.root")


def test_the_kernels_methods_are_the_registrys_cpp_readers(files):
    argv = _argv("columnar", files["nanoaod"], ["Jet_pt"])
    argv[argv.index("--methods") + 1] = "no_such_reader"
    with pytest.raises(harness.KernelError, match=r"unknown method 'no_such_reader' in --methods \((.*)\)") as caught:
        rc.run_json_process(argv, "read_branch")
    listed = str(caught.value).split("--methods (", 1)[1].split(")", 1)[0].split(", ")
    assert sorted(listed) == sorted(rc.CPP_METHODS)


def test_the_gap_is_said_to_grow_with_the_attributes_only_where_an_exact_test_says_so():
    from throughput.experiments.reader_comparison.analysis import rank_correlation
    # three particle types in order: the best three can give, 1 ordering in 3! = 6, not significant
    rho, grows, shrinks = rank_correlation([1.0, 2.0, 3.0], [10, 20, 30])
    assert rho == pytest.approx(1.0) and grows == pytest.approx(1 / 6) and shrinks == 1.0
    # six in order: 1 in 720
    rho, grows, _ = rank_correlation([1, 2, 3, 4, 5, 6], [5, 9, 14, 30, 31, 60])
    assert grows == pytest.approx(1 / 720)
    rho, grows, shrinks = rank_correlation([6, 5, 4, 3, 2, 1], [5, 9, 14, 30, 31, 60])
    assert rho == pytest.approx(-1.0) and shrinks == pytest.approx(1 / 720) and grows == 1.0


def _summary_rows(walls: dict[str, list[float]], items: int = 1000) -> pd.DataFrame:
    """Warm summary rows of one set and branch: each reader's whole-pass time in rounds 0, 1, ..."""
    return pd.DataFrame([{"set": "s", "cache": "warm", "reader": reader, "branch": "b", "items": items,
                          "wall_by_round": dict(enumerate(times))} for reader, times in walls.items()])


def test_the_fastest_cpp_reader_is_tested_against_rootreadspeed_with_every_other_at_once():
    # columnar's 95% interval alone clears unity (it would have been picked by point value and
    # passed); tested with its three rivals at the simultaneous level, it no longer does
    rrs = [1.0, 1.0, 1.0, 1.0, 1.0]
    walls = {"rootreadspeed": rrs, "columnar": [0.96, 0.99, 0.95, 0.985, 0.97],
             "bulk": [1.02, 0.99, 1.03, 1.0, 1.01], "ttreereader": [1.3, 1.25, 1.35, 1.3, 1.28],
             "draw": [2.0, 2.1, 1.9, 2.0, 2.05]}
    table = _summary_rows(walls)
    alone = analysis.warm_paired_ratio(table, "s", "b", "columnar", "rootreadspeed", "wall")
    assert alone.low > 1  # met at 95% on its own
    best, ratio, verdict = analysis.fastest_against(table, "s", "b", ["columnar", "bulk", "ttreereader", "draw"],
                                              "rootreadspeed")
    assert best == "columnar" and ratio.low < alone.low and ratio.high > alone.high
    assert verdict.value in ("met", "inconclusive")
    assert (verdict.value == "met") == (ratio.low >= 1)
    # every candidate clearly slower: missed; none measured: no verdict
    slow = _summary_rows({"rootreadspeed": rrs, "columnar": [1.5, 1.52, 1.49, 1.5, 1.51], "bulk": [2.0] * 4 + [2.02]})
    assert analysis.fastest_against(slow, "s", "b", ["columnar", "bulk"], "rootreadspeed")[2].value == "missed"
    assert analysis.fastest_against(slow, "s", "b", ["draw"], "rootreadspeed")[0] is None
    # a noisy fast reader's interval is wide, a slow steady one's narrow: the reader named is the
    # faster (the largest lower bound would name the slow one)
    noisy = _summary_rows({"rootreadspeed": rrs, "columnar": [1.0, 0.3, 3.0, 0.4, 2.5], "cmssw": [3.0] * 5})
    best, ratio, verdict = analysis.fastest_against(noisy, "s", "b", ["columnar", "cmssw"], "rootreadspeed")
    level = 1 - (1 - intervals.CONFIDENCE) / 2  # two candidates
    slow = analysis.warm_paired_ratio(noisy, "s", "b", "cmssw", "rootreadspeed", "wall", level)
    assert slow.low > ratio.low and best == "columnar" and verdict.value == "inconclusive"


def test_a_ratio_is_marked_noisy_by_its_own_printed_interval():
    # both sides' runs stayed noisy, but moved together round by round: their paired ratio is tight;
    # two quiet runs whose ratio swings from round to round: its interval is wide, and marked
    drift = [1.0, 1.6, 0.7, 1.3, 0.9]
    rows = []
    for reader, times, noisy in (("columnar", drift, True), ("bulk", [1.1 * t for t in drift], True),
                                 ("uproot", [2.0, 3.1, 1.9, 2.9, 2.2], False)):
        rows.append({"set": "s", "cache": "warm", "reader": reader, "branch": "b", "items": 1000, "noisy": noisy,
                     "read_by_round": dict(enumerate(times)), "wall_by_round": dict(enumerate(times))})
    rated = rc.ratios(pd.DataFrame(rows), max_half_width=0.10).set_index("reader")
    assert rated.loc["bulk", "vs_columnar"] == pytest.approx(1 / 1.1) and not rated.loc["bulk", "vs_columnar_noisy"]
    assert rated.loc["uproot", "vs_columnar_noisy"] and not rated.loc["uproot", "noisy"]


def test_rootreadspeeds_passes_below_its_noise_are_kept_not_dropped():
    # rootreadspeed's pass is a difference of two times: zero or negative where the pass is shorter
    # than the tool's noise. Dropping those rounds keeps the rounds where it was slower; here the
    # columnar reader would then look faster than it is (1.0 s against rootreadspeed's 1.5 s).
    rrs = [1.5, -0.5, 1.5, 0.0, 1.5]
    table = _summary_rows({"rootreadspeed": rrs, "columnar": [1.0] * 5})
    ratio = analysis.warm_paired_ratio(table, "s", "b", "columnar", "rootreadspeed", "wall")
    # the mean of the per-round ratios t_rrs / t_columnar, every round kept: 0.8, not 1.5
    assert ratio.value == pytest.approx(np.mean(rrs)) and ratio.processes == 5
    assert ratio.low < 0.8 < ratio.high
    truncated = analysis.warm_paired_ratio(
        _summary_rows({"rootreadspeed": [1.5, 1.5, 1.5], "columnar": [1.0] * 3}), "s", "b", "columnar",
        "rootreadspeed", "wall")
    assert truncated.value == pytest.approx(1.5)  # what dropping the rounds would have said
    # every round timed: the usual geometric mean of the paired ratios
    timed = analysis.warm_paired_ratio(_summary_rows({"rootreadspeed": [1.5, 1.4, 1.6, 1.5, 1.5],
                                                      "columnar": [1.0] * 5}), "s", "b", "columnar",
                                       "rootreadspeed", "wall")
    assert timed.value == pytest.approx(np.exp(np.mean(np.log([1.5, 1.4, 1.6, 1.5, 1.5]))))


# --- the claims whose figures get rounds where they decide (measuring.deciding_claims) -------------

def test_a_java_readers_claims_extra_rounds_measure_it_beside_the_columnar_reader_alone():
    from throughput.experiments.reader_comparison import measuring
    from throughput.report import ledger

    params = _params(readers=["columnar", "bulk", "draw", "root4j", "uproot"], collections=["Jet", "Muon"],
                     cold_collections=[], timeline_collection="Jet", rootreadspeed=False)
    inputs = {"aod/ZLIB": {"role": "main", "layout": "aod", "compression": "ZLIB", "root": ["a.root"],
                           "rntuple": [], "numpy": []}}
    deciding = {d.claim: d for d in measuring.deciding_claims(params, rc.groups(params, inputs))}
    root4j = {c.id for c in ledger.load() if (c.measured_by or {}).get("macro") == "RcRootFourJVsCpp"}
    assert root4j and root4j <= set(deciding)
    for claim in root4j:
        cpp, java = sorted(deciding[claim].runs, key=lambda run: run["group"])
        assert (cpp["group"], cpp["methods"], cpp["branches"]) == ("cpp", ["columnar"], ["Jet_pt"])
        assert (java["group"], java["branches"]) == ("root4j", ["Jet_pt"])
        assert deciding[claim].group == "aod/ZLIB (warm)"
    # a claim whose reader did not run on the set has nothing to decide it (the CMSSW-like reader here)
    assert not any(c.measured_by["macro"] == "RcCmsswVsColumnar" for c in ledger.load()
                   if c.id in deciding and c.measured_by)


def test_the_claims_slowdowns_decide_get_extra_rounds_of_their_own_readers_and_branch(files, tmp_path, monkeypatch):
    from throughput.experiments.reader_comparison import measuring
    from throughput.report import ledger

    params = _params(readers=["columnar", "bulk", "draw", "cmssw"], collections=["Jet", "Muon"],
                     cold_collections=[], timeline_collection="Jet", sample_every=200, rootreadspeed=False,
                     decide_budget_s=60, max_looks=2)
    params["repetitions"] = 2
    inputs = {"aod/ZLIB": {"role": "main", "layout": "aod", "compression": "ZLIB", "root": [files["aod"]["root"]],
                           "rntuple": [], "numpy": []}}
    # only the wired claims whose reader ran: TTree::Draw's two and the CMSSW-like reader's (root4j's did not run)
    deciding = measuring.deciding_claims(params, rc.groups(params, inputs))
    wired = {c.id for c in ledger.load() if (c.measured_by or {}).get("macro") in ("RcDrawVsColumnar", "RcCmsswVsColumnar")}
    assert {d.claim for d in deciding} == wired and len(wired) == 3
    for claim in deciding:
        (run,) = claim.runs
        assert run["branches"] == ["Jet_pt"] and run["methods"][0] == "columnar" and len(run["methods"]) == 2
    # the judge judges the figure the section prints, at the level it is given, by the claim's rule
    real_judges = {d.claim: d.judge for d in deciding}
    seen = {}

    def always_undecided(claim, macro, machine, set_name, branch, reader):
        real = real_judges[claim.id]

        def judge(rows, confidence):
            seen[claim.id] = (real(rows, confidence), confidence, rows)
            return False, int(rows["round"].nunique()) + 2
        return judge

    monkeypatch.setattr(measuring, "_judge", always_undecided)
    frame = rc.measure_runs(params, inputs, tmp_path / "raw", noise.Settings(max_remeasures=0), progress=False)
    timing = frame[(frame["record"] == "timing") & ~frame["warmup"].astype(bool)]
    extra = timing[timing["look"] > 0]
    assert len(extra) and set(extra["branch"]) == {"Jet_pt"} and set(extra["look"]) <= {1, 2}
    assert set(extra["reader"]) <= {"columnar", "draw", "cmssw"} and "bulk" not in set(extra["reader"])
    assert timing[timing["branch"] == "Muon_pt"]["round"].nunique() == 2  # descriptive cells: the base rounds
    # two looks each: every claim judged on the base rounds got one more look, its rounds in the stored file
    stored = pd.read_parquet(tmp_path / "raw" / "aod_ZLIB_warm_cpp.parquet")
    assert stored["look"].max() == extra["look"].max() and set(stored["extended_for"]) - {""} == set(extra["extended_for"])
    for claim_id, ((settled, needed), confidence, rows) in seen.items():
        assert confidence == intervals.bonferroni(2)
        reader = "draw" if "draw" in claim_id else "cmssw"
        figure = analysis.slowdown(rc.summary(rows), "aod/ZLIB", "Jet_pt", reader, confidence)
        claim = next(c for c in ledger.load() if c.id == claim_id)
        state = ledger.judge(claim, figure.value, figure.low, figure.high)
        assert settled == (state != ledger.UNDECIDED)
        assert needed is None if settled else needed is None or needed > figure.processes
    # the section's slowdowns are printed at the split level, and say what the rule did
    table = rc.summary(frame)
    numbers = rc.paper_macros(params, table, rc.ratios(table), rc.cannot_read(frame), inputs, "test compiler",
                              frame=frame, goals=rc.layout_targets(table, params), noise_settings=noise.Settings(),
                              archived=[])
    split = analysis.slowdown(table, "aod/ZLIB", "Jet_pt", "draw", intervals.bonferroni(2))
    assert numbers["RcDrawVsColumnar"] == paper.estimate(split, 2)
    assert numbers["RcLooksState"] == "some" and numbers["RcMaxLooks"] == "2"
    assert int(numbers["RcExtraRounds"]) == len(extra.drop_duplicates(["extended_for", "round"]))


def test_the_workflow_and_a_standalone_run_name_the_same_input_sets(tmp_path):
    """spec.input_sets, the one place the sets are declared: the workflow's (under data/) and a
    standalone run's (under its own folder) differ only by that folder; each set's RNTuple and
    Numpy copies stand file for file beside its ROOT files; a real file is read where it is."""
    from throughput.experiments.reader_comparison import spec as rc_spec

    section = {**config.fill_defaults({}, config.load_schema())["reader_comparison"],
               "nanoaod_events": 25000, "aod_events": 700, "aod_events_per_file": 300, "object_events": 10,
               "compression_scan": ["LZ4", "ZLIB"], "scan_events": 5000, "real_files": ["hzz.root"]}
    real = tmp_path / "hzz.root"
    with uproot.recreate(real, compression=uproot.ZLIB(1)) as f:
        f["events"] = {"x": np.arange(3.0)}
    workflow = rc_spec.input_sets(section, 10000, "ZLIB", {"hzz": real})
    standalone = rc_spec.input_sets(section, 10000, "ZLIB", {"hzz": real}, tmp_path / "data")
    assert list(workflow) == ["nanoaod/ZLIB", "aod/ZLIB", "aod_objects/ZLIB", "nanoaod/LZ4", "real/hzz"]
    assert [len(s["root"]) for s in workflow.values()] == [3, 3, 1, 1, 1]
    assert workflow["nanoaod/ZLIB"]["root"][2] == "data/nanoaod/ZLIB/part2.root"
    assert workflow["aod/ZLIB"]["numpy"][0] == "data/reader_comparison/numpy/aod/ZLIB/part0.npz"
    assert [s["role"] for s in workflow.values()] == ["main", "main", "objects", "scan", "real"]
    assert workflow["real/hzz"]["root"] == [str(real)] and workflow["real/hzz"]["compression"] == "ZLIB"
    for name, spec in workflow.items():
        assert len(spec["rntuple"]) == len(spec["numpy"]) == len(spec["root"]), name
        for kind in ("rntuple", "numpy") + (("root",) if spec["role"] != "real" else ()):
            assert [p.replace("data/", f"{tmp_path}/data/", 1) for p in spec[kind]] == standalone[name][kind], name

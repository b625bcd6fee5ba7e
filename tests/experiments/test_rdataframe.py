"""RDataFrame experiment: kernels agree across threads and methods, Dask agrees with C++, the rate
model's readers add up, fits recover known parameters, and bad inputs stop before any event loop."""
from __future__ import annotations

import collections
import math
import re
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import uproot
from conftest import (Daemons, command_env, flip_basket_bytes, loops_follow_the_calibration_rule, printed_with_interval,
                      t_interval)
from tex_wording import worded

from throughput import configuration
from throughput.setup import config
from throughput.inputs import datasets
from throughput.core import harness, intervals, io_throttle, noise, results
from throughput.report import noise_sentences, paper, seeds
from throughput.experiments import rdataframe as rdf

EVENTS = 200
TINY = {"files": 2, "events_per_file": EVENTS, "compressions": ["LZMA"], "compression_files": 1,
        "histogram_counts": [1, 3], "rate_model": {"files": 2}}


KERNELS_USED = rdf.KERNELS  # checked by conftest's built_kernels


@pytest.fixture(scope="module")
def settings():
    return configuration.validate({"repetitions": 1, "warmup": 0, "rdataframe": TINY}, check_resources=False)


@pytest.fixture(scope="module")
def section(settings):
    s = settings["rdataframe"]
    s.update(max_threads=2, repetitions=1, warmup=0)
    s["rate_model"]["max_processes"] = 2
    s["dask"]["max_workers"] = 1
    return s


@pytest.fixture(scope="module")
def inputs(tmp_path_factory, settings, section):
    root = tmp_path_factory.mktemp("rdf")
    files = rdf.make_inputs(section, settings["datasets"], root / "data", progress=False)
    chosen = rdf.select_inputs(section, files)
    info = rdf.preflight(section, chosen, root / "work")
    return root, chosen, info


def _bench(files, tmp_path, name, core=None, **args):
    listing = tmp_path / f"{name}.txt"
    listing.write_text("\n".join(files) + "\n")
    output = tmp_path / f"{name}.root"
    defaults = {"file-list": listing, "reps": 2, "warmup": 0, "pdf-count": 102, "collection": "Jet",
                "output": output}
    run = harness.run_kernel("rdf_bench", {**defaults, **args}, core=core)
    return run, rdf.load_histograms(output)


# --- the compiled RDataFrame kernel -------------------------------------------------------------

def test_preflight_reads_entries_and_the_102_pdf_weights(inputs):
    _, chosen, info = inputs
    assert info["pdf_count"] == 102  # the real CMS file's LHEPdfWeight length, kept by the generator
    assert all(info["entries"][f] == EVENTS for f in chosen["main"])


def test_analysis_is_the_same_for_every_thread_count(inputs, tmp_path):
    _, chosen, _ = inputs
    reference_run, reference = _bench(chosen["main"], tmp_path, "t0", workload="analysis", threads=0)
    assert reference_run.validation["events"] == 2 * EVENTS and reference_run.validation["reps_agree"]
    assert set(reference) == {"met", "njet", "jet_pt", "jet_eta_pt", "npv", "lead_pt_eta", "pdf3d"}
    assert reference["met"][0].sum() == 2 * EVENTS  # one MET per event, flow bins included
    for threads in (1, 2):
        run, hists = _bench(chosen["main"], tmp_path, f"t{threads}", workload="analysis", threads=threads)
        assert run.timings["threads"].eq(threads).all() and run.timings["slots"].eq(threads).all()
        assert rdf.compare_histograms(reference, hists, 1e-9, f"{threads} threads")["identical"]
        assert run.validation["content_hash"] == reference_run.validation["content_hash"]


def test_a_sample_repeats_event_loops_to_the_minimum_length_and_checks_every_loop(inputs, tmp_path):
    """An event loop of the tiny inputs lasts some ms: a sample is as many loops as the warm-up
    says reach min-sample-s (bench::Calibration), each loop's histograms compared with the
    first's; the summary's times are one loop's."""
    _, chosen, _ = inputs
    once, reference = _bench(chosen["main"], tmp_path, "once", workload="analysis", threads=0, reps=1)
    run, hists = _bench(chosen["main"], tmp_path, "calibrated", workload="analysis", threads=0, reps=2, warmup=1,
                        **{"min-sample-s": 0.3})
    t = run.timings
    timed = t[~t["warmup"].astype(bool)]
    # each sample's loops are what the samples before it decided (not "more than one": on a loaded
    # host a slow warm-up loop rightly decides one, a timing no test may assert)
    assert loops_follow_the_calibration_rule(t, 1, 0.3), t[["loops", "wall_s"]].to_dict("list")
    assert run.validation["loops_compared"] == int(t["loops"].sum()) - 1 and run.validation["reps_agree"]
    assert t["events"].eq(2 * EVENTS).all() and run.validation["content_hash"] == once.validation["content_hash"]
    assert rdf.compare_histograms(reference, hists, 1e-9, "calibrated")["identical"]
    table = rdf.summary(t.assign(warmup=t["warmup"].astype(bool), part="scan"), ["part", "threads"])
    assert table["wall_s"].iloc[0] == pytest.approx((timed["wall_s"] / timed["loops"]).median())
    assert table["cpu_s"].iloc[0] == pytest.approx((timed["cpu_s"] / timed["loops"]).median())


def test_every_pdf_method_gives_the_same_103_histograms(inputs, tmp_path):
    _, chosen, _ = inputs
    ref_run, reference = _bench(chosen["main"], tmp_path, "defines", workload="pdf", method="defines", threads=0)
    assert sorted(reference) == [f"pdf_{k:03d}" for k in range(103)]
    # Weight 0 is the nominal 1 put in front: its sum is the number of selected events.
    assert reference["pdf_000"][0].sum() == ref_run.validation["selected"] > 0
    for method in ("histo3d", "histond", "vary"):
        run, hists = _bench(chosen["main"], tmp_path, method, workload="pdf", method=method, threads=2)
        result = rdf.compare_histograms(reference, hists, 1e-9, method)
        assert result["histograms"] == 103 and result["identical"], method


def test_nhist_fills_one_histogram_per_define(inputs, tmp_path):
    _, chosen, _ = inputs
    run, hists = _bench(chosen["main"], tmp_path, "nhist", workload="nhist", histograms=3, threads=2)
    assert sorted(hists) == ["nhist_000", "nhist_001", "nhist_002"]
    assert run.validation["checksum"] == 3 * 2 * EVENTS
    # A higher threshold never counts more jets: the mean falls with the histogram index.
    centers = np.arange(-1, 17)
    means = [np.dot(centers, hists[name][0]) for name in sorted(hists)]
    assert means[0] >= means[1] >= means[2]


def test_every_event_loop_can_start_from_a_cold_cache_and_counts_what_it_took_from_the_device(inputs, tmp_path):
    """rdf_bench --cache cold: each loop of a calibrated sample (as many as half a second holds) from
    evicted files, every one reading from the device (/proc/self/io), the same histograms as from
    the page cache."""
    _, chosen, _ = inputs
    cold, cold_hists = _bench(chosen["main"], tmp_path, "cold", workload="nhist", threads=1, cache="cold",
                              warmup=1, **{"min-sample-s": 60, "max-sample-s": 0.5})
    warm, warm_hists = _bench(chosen["main"], tmp_path, "warm", workload="nhist", threads=1, cache="warm")
    timed = cold.timings
    assert (timed["loop_cache"] == "cold").all() and (timed["loop_resident"] == 0).all()
    if (timed["device_bytes"] >= 0).all():  # the kernel says what came from the device
        # every loop read its branches' baskets again (their compressed bytes at least, readahead aside)
        assert (timed["device_bytes"] >= timed["loops"] * cold.validation["read_zip_bytes"]).all()
    assert (warm.timings["loop_resident"] == 1).all() and (warm.timings["device_bytes"] == 0).all()
    assert cold.validation["content_hash"] == warm.validation["content_hash"]
    assert all(np.array_equal(cold_hists[k][0], warm_hists[k][0]) for k in warm_hists)


def test_missing_file_and_branch_are_named_before_any_event_loop(inputs, tmp_path):
    _, chosen, _ = inputs
    missing = str(tmp_path / "absent.root")
    with pytest.raises(harness.KernelError, match="absent.root"):
        _bench([chosen["main"][0], missing], tmp_path, "missing", workload="analysis")
    with pytest.raises(harness.KernelError, match="no branch 'nMuonn'"):
        _bench(chosen["main"], tmp_path, "branch", workload="pdf", collection="Muonn")
    with pytest.raises(harness.KernelError, match="--method"):
        _bench(chosen["main"], tmp_path, "method", workload="pdf", method="histo4d")
    with pytest.raises(harness.KernelError, match="--cache must be none, cold or warm, got 'tepid'"):
        _bench(chosen["main"], tmp_path, "cache", workload="nhist", cache="tepid")
    assert not list(tmp_path.glob("*.root*")), "a failed run left an output behind"


@pytest.mark.parametrize("position", ["first", "second"])
def test_a_basket_that_does_not_decompress_is_an_error_naming_file_and_branch(inputs, tmp_path, position):
    """ROOT prints "R__unzip: error -3 in inflate" and goes on; the event loop then read garbage and
    crashed (exit 139). Every workload and thread count must stop with exit 2 and a message."""
    _, chosen, _ = inputs
    bad = tmp_path / "damaged.root"
    flip_basket_bytes(chosen["rate"][0], bad, "Jet_pt")  # a ZLIB file: inflate fails
    files = [str(bad), chosen["main"][0]] if position == "first" else [chosen["main"][0], str(bad)]
    listing = tmp_path / "files.txt"
    listing.write_text("\n".join(files) + "\n")
    output = tmp_path / "out.root"
    for workload, extra in (("analysis", []), ("nhist", ["--histograms", "2"]), ("pdf", ["--method", "defines"])):
        for threads in (0, 2):
            argv = [str(harness.kernel_path("rdf_bench")), "--file-list", str(listing), "--workload", workload,
                    "--threads", str(threads), "--reps", "1", "--warmup", "0", "--output", str(output), *extra]
            proc = subprocess.run(argv, capture_output=True, text=True, env=harness.pinned_env())
            what = f"{workload}, {threads} threads, damaged file {position}"
            assert proc.returncode == 2, f"{what}: exit {proc.returncode}\n{proc.stderr[-1500:]}"
            error = proc.stderr.strip().splitlines()[-1]
            assert error.startswith("rdf_bench: error: input file " + str(bad)), f"{what}: {error}"
            assert "branch 'Jet_pt'" in error, f"{what}: {error}"
            assert '"record": "validation"' not in proc.stdout
            assert not list(tmp_path.glob("out.root*")), f"{what}: a failed run left an output behind"


def test_preflight_names_the_missing_file_and_the_config_key(inputs, section, tmp_path):
    _, chosen, _ = inputs
    absent = str(tmp_path / "part9.root")
    with pytest.raises(rdf.InputError, match="part9.root does not exist"):
        rdf.preflight(section, {**chosen, "main": chosen["main"] + [absent]}, tmp_path)
    with pytest.raises(rdf.InputError, match="'rdataframe.collection' = 'Muonn'.*no branch 'nMuonn'"):
        rdf.preflight({**section, "collection": "Muonn"}, chosen, tmp_path)
    with pytest.raises(rdf.InputError, match="'rdataframe.pdf_weights_branch' = 'LHEPdfWeights'"):
        rdf.preflight({**section, "pdf_weights_branch": "LHEPdfWeights"}, chosen, tmp_path)


# --- distributed RDataFrame ---------------------------------------------------------------------

def _check_dask_run_agrees_with_the_sequential_run(params, chosen, info, tmp_path, label):
    """One Dask worker's run: every event seen, and its 7 histograms bin by bin those of the
    compiled sequential run."""
    frame = rdf.measure_dask(params, chosen, info, tmp_path, progress=False)
    assert list(frame["name"].unique()) == ["dask_w1"] and frame["events"].eq(2 * EVENTS).all()
    _, reference = _bench(chosen["main"], tmp_path, "cpp", workload="analysis", threads=0)
    result = rdf.compare_histograms(reference, rdf.load_histograms(tmp_path / "histograms" / "dask_w1.root"),
                                    1e-9, label)
    assert result["histograms"] == 7


def test_dask_histograms_agree_with_the_compiled_sequential_run(inputs, section, tmp_path):
    root, chosen, info = inputs
    params = {**section, "dask": {**section["dask"], "max_workers": 1}}
    _check_dask_run_agrees_with_the_sequential_run(params, chosen, info, tmp_path, "dask")
    # The page-cache state the workers read in, set and checked by the page_cache tool, is in the raw result.
    stored, provenance, _ = results.read_raw(tmp_path / "raw" / "dask_w1.parquet")
    pages = sum(math.ceil(Path(f).stat().st_size / os.sysconf("SC_PAGESIZE")) for f in chosen["main"])
    assert stored["cache"].eq("warm").all() and stored["cache_hosts"].eq(1).all()
    assert stored["pages"].eq(pages).all()
    assert (stored["resident_pages"] <= stored["pages"]).all()
    fraction = stored["resident_fraction"].iloc[0]
    assert provenance["warm_min_resident"] <= fraction <= 1
    assert fraction == stored["resident_pages"].iloc[0] / pages
    assert provenance["cache_state"].startswith("warm") and f"{fraction:.4f}" in provenance["cache_state"]


@pytest.fixture
def dask_daemons(tmp_path):
    """A real Dask cluster of daemons, as on a cluster's nodes: `dask scheduler` and one
    `dask worker` (one thread) started here, stopped after the test. Yields the address."""
    import json
    import sys

    dask = Path(sys.executable).parent / "dask"
    if not dask.exists():
        pytest.skip(f"no dask command beside {sys.executable}")
    scheduler_file = tmp_path / "scheduler.json"
    daemons = Daemons(tmp_path / "daemon-logs")

    def start(name, *argv):
        daemons.start(name, [str(dask), *argv], env=command_env(), cwd=tmp_path)

    try:
        start("scheduler", "scheduler", "--host", "127.0.0.1", "--port", "0", "--dashboard-address", ":0",
              "--scheduler-file", str(scheduler_file))
        daemons.wait_until(lambda: scheduler_file.exists() and scheduler_file.read_text().strip(),
                           "the scheduler's address", timeout=60)
        address = json.loads(scheduler_file.read_text())["address"]
        start("worker", "worker", address, "--nworkers", "1", "--nthreads", "1", "--no-dashboard",
              "--local-directory", str(tmp_path / "worker-space"))
        from dask.distributed import Client

        with Client(address, timeout=30) as client:
            client.wait_for_workers(1, timeout=60)
        yield address
    finally:
        daemons.stop()


def test_dask_on_real_scheduler_and_worker_daemons_agrees_with_the_sequential_run(inputs, section, tmp_path,
                                                                                 dask_daemons):
    """Distributed RDataFrame by the scheduler address in the config, on daemons started as
    on a cluster (not LocalCluster): the same histograms, bin by bin, as the sequential C++ run."""
    root, chosen, _ = inputs
    params = {**section, "dask": {**section["dask"], "scheduler": dask_daemons, "connect_timeout_s": 10}}
    assert rdf.scheduler_problem(dask_daemons, 10) is None
    info = rdf.preflight(params, chosen, tmp_path / "work")
    assert info["dask_workers"] == 1
    _check_dask_run_agrees_with_the_sequential_run(params, chosen, info, tmp_path, "dask on daemons")


def test_bad_scheduler_fails_fast_naming_key_and_address(inputs, section, tmp_path):
    _, chosen, _ = inputs
    address = "tcp://127.0.0.1:9"  # nothing listens on the discard port here
    problem = rdf.scheduler_problem(address, 2)
    assert "'rdataframe.dask.scheduler'" in problem and address in problem
    with pytest.raises(rdf.SchedulerError, match="rdataframe.dask.scheduler.*127.0.0.1:9"):
        rdf.preflight({**section, "dask": {**section["dask"], "scheduler": address, "connect_timeout_s": 2}},
                      chosen, tmp_path)
    assert "not a scheduler address" in rdf.scheduler_problem("no-port-here", 2)
    with pytest.raises(config.ConfigError, match="'rdataframe.dask.scheduler' = 'tcp://127.0.0.1:9'"):
        configuration.validate({"rdataframe": {"dask": {"scheduler": address, "connect_timeout_s": 2}}})
    assert not (tmp_path / "raw").exists()


def test_config_checks_threads_against_the_cores():
    cores = config.usable_cores()
    with pytest.raises(config.ConfigError, match=f"'rdataframe.max_threads' = {cores + 1}"):
        configuration.validate({"rdataframe": {"max_threads": cores + 1}})
    asked = configuration.validate({"fit_to_machine": True, "rdataframe": {"max_threads": 256}})["rdataframe"]
    fitted = rdf.resolve_counts(asked)
    assert fitted["max_threads"] == cores and fitted["rate_model"]["max_processes"] == 3 * cores
    assert rdf.resolve_counts(configuration.validate({})["rdataframe"])["dask"]["max_workers"] == cores
    with pytest.raises(config.ConfigError, match="'rdataframe.pdf_methods'"):
        configuration.validate({"rdataframe": {"pdf_methods": ["histo3d"]}})


# --- the I/O rate model -------------------------------------------------------------------------

def test_page_cache_states_are_set_and_checked(inputs, tmp_path):
    _, chosen, _ = inputs
    cold = rdf.set_cache(chosen["rate"], "cold", tmp_path)
    assert cold["resident"] == 0 and cold["pages"] > 0
    warm = rdf.set_cache(chosen["rate"], "warm", tmp_path)
    assert warm["resident"] == warm["pages"]


def test_raw_read_reads_every_byte(inputs, tmp_path):
    _, chosen, _ = inputs
    listing = tmp_path / "files.txt"
    listing.write_text("\n".join(chosen["rate"]) + "\n")
    run = harness.run_kernel("rdf_raw_read", {"file-list": listing, "cache": "cold", "reps": 2, "warmup": 0})
    size = sum(Path(f).stat().st_size for f in chosen["rate"])
    assert run.validation["bytes"] == size and run.timings["bytes"].eq(size).all()
    assert run.timings["resident_before"].eq(0).all()
    rdf.check_raw_bytes(run.timings.assign(name="raw_cold"), size)


def test_a_raw_read_sample_reads_to_the_minimum_length_each_pass_from_its_cache_state(inputs, tmp_path):
    """A warm raw read of the tiny inputs lasts well under a ms: a sample reads them as many
    times as reach min-sample-s, every pass checked; its `bytes` is one pass's, and a cold
    sample evicts the files again before each pass."""
    _, chosen, _ = inputs
    listing = tmp_path / "files.txt"
    listing.write_text("\n".join(chosen["rate"]) + "\n")
    size = sum(Path(f).stat().st_size for f in chosen["rate"])
    for cache in ("warm", "cold"):
        run = harness.run_kernel("rdf_raw_read", {"file-list": listing, "cache": cache, "reps": 2, "warmup": 1,
                                                  "min-sample-s": 0.05})
        t = run.timings
        assert loops_follow_the_calibration_rule(t, 1, 0.05), (cache, t[["loops", "wall_s"]].to_dict("list"))
        assert run.validation["ok"] and t["bytes"].eq(size).all(), cache
        assert t["resident_before"].eq(0 if cache == "cold" else 1).all(), cache
        # a warm pass of these files is far below the minimum: a sample that fell short raises the next's loops
        assert cache == "cold" or (t.loc[~t["warmup"].astype(bool), "loops"] > 1).any()


def _supports_o_direct(path: Path) -> bool:
    try:
        os.close(os.open(path, os.O_RDONLY | os.O_DIRECT))
    except OSError:
        return False
    return True


def test_direct_raw_read_reads_the_same_bytes_past_the_page_cache(inputs, tmp_path):
    _, chosen, _ = inputs
    listing = tmp_path / "files.txt"
    listing.write_text("\n".join(chosen["rate"]) + "\n")
    arguments = {"file-list": listing, "reps": 1, "warmup": 0, "block-bytes": 1 << 20}
    if not _supports_o_direct(Path(chosen["rate"][0])):
        with pytest.raises(harness.KernelError, match=f"cannot open {chosen['rate'][0]} with O_DIRECT"):
            harness.run_kernel("rdf_raw_read", {**arguments, "cache": "direct"})
        pytest.skip(f"the file system of {chosen['rate'][0]} has no O_DIRECT (its error was checked)")
    direct = harness.run_kernel("rdf_raw_read", {**arguments, "cache": "direct"})
    cold = harness.run_kernel("rdf_raw_read", {**arguments, "cache": "cold"})
    size = sum(Path(f).stat().st_size for f in chosen["rate"])
    assert direct.validation["bytes"] == size and direct.validation["checksum"] == cold.validation["checksum"]
    assert direct.timings["cache"].eq("direct").all() and direct.timings["resident_before"].eq(0).all()


def test_raw_read_fails_naming_a_file_whose_bytes_are_not_its_size(inputs, tmp_path):
    """/proc/cpuinfo has size 0 but reads as text: the bytes read are not what R_IO would divide by."""
    _, chosen, _ = inputs
    listing = tmp_path / "files.txt"
    listing.write_text(f"{chosen['rate'][0]}\n/proc/cpuinfo\n")
    with pytest.raises(harness.KernelError, match=r"bytes from /proc/cpuinfo, its size is 0 bytes"):
        harness.run_kernel("rdf_raw_read", {"file-list": listing, "cache": "warm", "reps": 1, "warmup": 0})
    # The Python check, on what the kernel reported against the sizes it divides by.
    frame = pd.DataFrame({"name": "raw_warm", "rep": [0, 1], "cache": "warm", "bytes": [100, 99]})
    with pytest.raises(AssertionError, match="raw_warm pass 1 .* read 99 bytes.* add up to 100"):
        rdf.check_raw_bytes(frame, 100)


def test_split_ranges_are_disjoint_and_cover_every_entry():
    entries = {"a": 5, "b": 3, "c": 4}
    for processes in (1, 2, 3, 5):
        parts = rdf.split_ranges(entries, ["a", "b", "c"], processes)
        assert len(parts) == processes
        covered = [(f, i) for part in parts for lo, hi, f in part for i in range(lo, hi)]
        assert sorted(covered) == sorted((f, i) for f, n in entries.items() for i in range(n))


def test_concurrent_readers_add_up_to_one_reader(inputs):
    _, chosen, info = inputs
    entries = {f: info["entries"][f] for f in chosen["rate"]}
    primer = str(datasets.source_path(configuration.validate({}, check_resources=False)["datasets"]))
    one = rdf.run_processes(rdf.split_ranges(entries, chosen["rate"], 1), 1 << 20, primer)
    two = rdf.run_processes(rdf.split_ranges(entries, chosen["rate"], 2), 0)
    assert one["entries"] == two["entries"] == sum(entries.values())
    assert one["counter_sum"] == two["counter_sum"] > 0
    assert two["read_calls"] > one["read_calls"]  # TTreeCache off: many small reads
    assert two["wall_s"] >= two["fastest_s"] > 0


def test_a_failing_reader_is_reported(tmp_path):
    with pytest.raises(harness.KernelError, match="absent.root"):
        rdf.run_processes([[(0, 10, str(tmp_path / "absent.root"))]], 0)


# --- what delayed each timed pass, and which pass is taken again ---------------------------------

TINY_SHARE = harness.Retakes(1e-9, 2)  # any wait for a CPU at all counts as a disturbance


def _kept_unless_spent(timings: pd.DataFrame, rule: harness.Retakes, threads: int = 1) -> bool:
    """Every kept take waited at most the rule's share of its threads' time, unless its retakes
    were spent; none more than the rule allows; a warm-up never taken again."""
    timed, warm = timings[~timings["warmup"]], timings[timings["warmup"]]
    delayed = timed["run_delay_s"] > rule.max_share * timed["wall_s"] * threads
    return bool((~delayed | timed["sample_retakes"].eq(rule.max_retakes)).all()
                and timed["sample_retakes"].between(0, rule.max_retakes).all() and warm["sample_retakes"].eq(0).all())


def test_a_sequential_event_loop_that_waited_for_a_cpu_runs_again(inputs, tmp_path, contended_core):
    """With a busy process on its core, the loop waits: run again as often as the rule allows,
    every loop still seeing every entry and filling the same histograms. Max share 0: none again."""
    _, chosen, _ = inputs
    run, _ = _bench(chosen["main"], tmp_path, "delayed", workload="analysis", threads=0, reps=2, warmup=1,
                    core=contended_core, **TINY_SHARE.kernel_args())
    assert run.timings["run_delay_s"].ge(0).all() and _kept_unless_spent(run.timings, TINY_SHARE)
    assert run.timings[~run.timings["warmup"]]["sample_retakes"].eq(2).any(), run.timings.to_dict("list")
    assert run.validation["entries_match"] and run.validation["reps_agree"]
    off = harness.Retakes(0, 3)
    run, _ = _bench(chosen["main"], tmp_path, "kept", workload="analysis", threads=0, reps=2, warmup=1,
                    core=contended_core, **off.kernel_args())
    assert run.timings["sample_retakes"].eq(0).all() and run.timings["run_delay_s"].gt(0).any()


def test_a_threaded_event_loop_judges_the_whole_pool_delay_over_its_threads(inputs, tmp_path):
    _, chosen, _ = inputs
    run, _ = _bench(chosen["main"], tmp_path, "pool", workload="analysis", threads=2, reps=2, warmup=1,
                    **TINY_SHARE.kernel_args())
    assert run.timings["run_delay_s"].ge(0).all() and _kept_unless_spent(run.timings, TINY_SHARE, threads=2)
    with pytest.raises(harness.KernelError, match="--max-run-delay-share"):
        _bench(chosen["main"], tmp_path, "bad", workload="analysis", **{"max-run-delay-share": 1})


def test_a_raw_read_is_taken_again_from_its_cache_state_set_afresh(inputs, tmp_path, contended_core):
    """A disturbed raw pass is read again after its cache state is set again (cold: evicted and
    checked), so every take reads what the first read, from where it read it."""
    _, chosen, _ = inputs
    listing = tmp_path / "files.txt"
    listing.write_text("\n".join(chosen["rate"]) + "\n")
    for cache in ("cold", "warm"):
        run = harness.run_kernel("rdf_raw_read", {"file-list": listing, "cache": cache, "reps": 2, "warmup": 1,
                                                  **TINY_SHARE.kernel_args()}, core=contended_core)
        assert run.timings["run_delay_s"].ge(0).all() and _kept_unless_spent(run.timings, TINY_SHARE), cache
        assert run.timings["resident_before"].eq(0 if cache == "cold" else 1).all(), cache


def test_a_reader_alone_retakes_its_pass_and_readers_together_only_record_theirs(inputs, tmp_path):
    _, chosen, info = inputs
    entries = {f: info["entries"][f] for f in chosen["rate"]}
    ranges = tmp_path / "ranges.txt"
    ranges.write_text("".join(f"{a} {b} {f}\n" for a, b, f in rdf.split_ranges(entries, chosen["rate"], 1)[0]))
    run = harness.run_kernel("rdf_rate_reader", {"ranges": ranges, "cache": "warm", "phase-timing": 1, "reps": 2,
                                                 "warmup": 1, **TINY_SHARE.kernel_args()})
    assert run.timings["run_delay_s"].ge(0).all() and _kept_unless_spent(run.timings, TINY_SHARE)
    # a reader started with others is timed with them: it cannot take its pass again alone
    with pytest.raises(harness.KernelError, match="--max-run-delay-share: a reader started with others"):
        harness.run_kernel("rdf_rate_reader", {"ranges": ranges, "barrier": 1, **TINY_SHARE.kernel_args()})
    together = rdf.run_processes(rdf.split_ranges(entries, chosen["rate"], 2), 0)
    assert together["threads"] == 2 and together["run_delay_s"] >= 0 and "sample_retakes" not in together


def test_the_method_facts_give_the_run_delay_of_uncalibrated_passes_and_who_takes_none_again():
    """Passes without `loops` (results stored before rdf_bench and the raw reads calibrated, and
    the rate model's readers, which never do): their run delay is still given; the rate model's
    concurrent readers are said to take none again."""
    settings = noise.Settings(min_sample_s=0.1, max_run_delay_share=0.02, max_sample_retakes=3)
    loops = pd.DataFrame({"warmup": False, "run": ["scan_t0", "scan_t2"], "threads": [0, 2], "wall_s": 1.0,
                          "run_delay_s": [0.001, 0.08], "sample_retakes": [0, 3]})
    facts = noise_sentences.samples(loops, settings)
    assert facts["SamplesState"] == "uncalibrated"  # not calibrated, and not said to be
    shares = [0.001 / 1.0, 0.08 / (1.0 * 2)]  # the run delay over the wall time times the threads (0: one)
    assert facts["DelayMedian"] == pytest.approx(100 * np.median(shares)) and facts["DelayWorst"] == "scan_t2"
    assert facts["DelayMax"] == pytest.approx(100 * max(shares))
    assert (facts["DelayState"], facts["SamplesRetaken"], facts["Retaking"]) == ("retaken", 1, 2)
    frames = {"raw": pd.DataFrame({"warmup": False, "run": ["raw_cold", "raw_warm"], "wall_s": 0.1,
                                   "run_delay_s": [0.0, 0.01], "sample_retakes": [0, 3]}),
              "components": pd.DataFrame({"warmup": [True, False], "run": "components", "wall_s": 0.2,
                                          "run_delay_s": [0.05, 0.0], "sample_retakes": 0}),
              "rate": pd.DataFrame({"warmup": False, "run": "rate_warm_on_np2", "wall_s": 0.1, "threads": 2,
                                    "run_delay_s": [0.001, 0.02]})}
    facts = rdf.io_rate_model.samples(frames, settings)
    # shares 0% and 10% (raw), 0% (one reader; its warm-up left out), 0.5% and 10% of two readers' time
    shares = [0.0, 0.01 / 0.1, 0.0, 0.001 / 0.2, 0.02 / 0.2]
    assert facts["DelayMedian"] == pytest.approx(100 * np.median(shares)) and facts["DelayWorst"] == "raw_warm"
    assert (facts["Retaking"], facts["SamplesRetaken"], facts["SampleTakes"], facts["DelayAbove"]) == (3, 1, 3, 1)
    assert (facts["NonRetaking"], facts["NonRetakingAbove"]) == (2, 1)
    assert facts["TogetherState"] == "together"
    # results stored before the passes took their run delay: nothing to say, and nothing said
    assert rdf.io_rate_model.samples({k: f.drop(columns="run_delay_s") for k, f in frames.items()}, settings) == \
        {"SamplesState": "uncalibrated", "TogetherState": "alone", "DelayState": "none"}


# --- fits and comparisons -----------------------------------------------------------------------

def test_rate_model_fit_recovers_known_rates():
    processes = np.arange(1, 9)
    rates = rdf.rate_model(processes, 40.0, 200.0)
    fit = rdf.fit_rate_model(processes, rates)
    assert fit["r1"] == pytest.approx(40.0) and fit["r_io"] == pytest.approx(200.0) and fit["dof"] == 6
    linear = rdf.fit_rate_model(processes, 40.0 * processes)  # no saturation: R_IO unbounded
    assert linear["r1"] == pytest.approx(40.0) and linear["r_io"] == float("inf")


def test_rate_model_fit_uncertainties_follow_the_scatter():
    processes = np.repeat([1, 2, 3, 4, 6], 5)
    exact = rdf.rate_model(processes, 40.0, 200.0)
    scatter = np.random.default_rng(3).normal(0, 0.02, len(processes))
    fit = rdf.fit_rate_model(processes, exact * (1 + scatter))
    assert fit["passes"] == 25 and fit["points"] == 5 and fit["dof"] == 3
    assert abs(fit["r1"] - 40.0) < 3 * fit["r1_sigma"] and 0 < fit["r1_sigma"] < 2.0
    assert abs(fit["r_io"] - 200.0) < 3 * fit["r_io_sigma"] and 0 < fit["r_io_sigma"] < 100.0
    wider = rdf.fit_rate_model(processes, exact * (1 + 5 * scatter))
    assert wider["r1_sigma"] > 3 * fit["r1_sigma"]
    exact_fit = rdf.fit_rate_model(processes, exact)
    assert exact_fit["r1_sigma"] == pytest.approx(0, abs=1e-9)
    # no bend: R_IO unbounded, a one-sigma lower bound instead of an uncertainty
    linear = rdf.fit_rate_model(processes, 40.0 * processes * (1 + scatter))
    assert linear["r_io"] == float("inf") and math.isnan(linear["r_io_sigma"]) and linear["r_io_lower"] > 200.0


def _per_round(*values):
    return pd.Series(values, index=range(len(values)), dtype=float)


def test_cold_reads_are_judged_against_the_devices_own_rate_round_by_round():
    assert rdf.cold_reads_verdict({"warm": _per_round(3000.0, 3100.0)}) is None

    def ratios(rates):  # the cold rate over the O_DIRECT and the warm one, recomputed round by round
        return tuple(intervals.paired_by_round(rates["cold"].to_dict(), rates[other].to_dict())
                     for other in ("direct", "warm"))

    # read-ahead may let a cold buffered read beat one O_DIRECT stream: still nearer the device
    rates = {"cold": _per_round(1700, 1650, 1750), "direct": _per_round(1000, 980, 1010),
             "warm": _per_round(13000, 12500, 13500)}
    device = rdf.cold_reads_verdict(rates)
    assert device == {"state": "reached", "cold_over_warm": ratios(rates)[1]}
    over_direct = rdf.io_rate_model.cold_over_direct(rates)
    assert over_direct == ratios(rates)[0] and over_direct.low < 1.7 < over_direct.high
    # at a higher level (the looks') its interval is wider
    wider = rdf.io_rate_model.cold_over_direct(rates, 0.99)
    assert wider.value == over_direct.value and wider.low < over_direct.low and wider.high > over_direct.high
    rates = {"cold": _per_round(9000, 9100, 8900), "direct": _per_round(1000, 1000, 1000),
             "warm": _per_round(13000, 13000, 13000)}
    cached = rdf.cold_reads_verdict(rates)
    assert cached["state"] == "cache" and (rdf.io_rate_model.cold_over_direct(rates), cached["cold_over_warm"]) == \
        ratios(rates)
    assert rdf.io_rate_model.cold_over_direct(rates).value == pytest.approx(9.0, rel=0.01)
    assert not math.isfinite(rdf.io_rate_model.cold_over_direct({"cold": rates["cold"]}).value)
    assert cached["cold_over_warm"].value == pytest.approx(9 / 13, rel=0.01)
    # halfway (by ratio) in some rounds, nearer each end in others: not decided by the mean
    halfway = rdf.cold_reads_verdict({"cold": _per_round(3000, 1500, 6000), "direct": _per_round(1000, 1000, 1000),
                                      "warm": _per_round(9000, 9000, 9000)})
    assert halfway["state"] == "notseparated"


def _cold_reads_summary(rates: dict) -> dict:
    """What cold_reads_macros reads of the rate model's summary: its rates per round and the verdict."""
    return {"r_io": rates, "cold_reads": rdf.cold_reads_verdict(rates), "by_round": {"r_io": rates}}


def test_the_cold_reads_macros_are_the_verdicts_state_and_its_ratios():
    """paper/sections/rdataframe.tex words RdfColdReadsState; the ratio over the O_DIRECT rate, which decides a
    claim, is printed plus or minus its interval at the level asked (the claim's looks'), the one over the warm
    rate with its 95% interval's bounds."""
    rates = {"cold": _per_round(1700, 1650, 1750), "direct": _per_round(1000, 980, 1010),
             "warm": _per_round(13000, 12500, 13500)}
    over_warm = intervals.paired_by_round(rates["cold"].to_dict(), rates["warm"].to_dict())
    for confidence in (intervals.CONFIDENCE, 0.99):
        macros = rdf.cold_reads_macros(_cold_reads_summary(rates), confidence)
        over_direct = intervals.paired_by_round(rates["cold"].to_dict(), rates["direct"].to_dict(), confidence)
        assert macros == {"RdfColdReadsState": "reached", "RdfColdOverDirect": paper.estimate(over_direct, 3),
                          "RdfColdOverWarm": paper.with_bounds(over_warm, 3)}
        assert (macros["RdfColdOverDirect"].low, macros["RdfColdOverDirect"].high) == (over_direct.low,
                                                                                      over_direct.high)
    # which read was missing, or no rate model at all
    no_direct = {"cold": rates["cold"], "warm": rates["warm"]}
    assert rdf.cold_reads_macros({"r_io": no_direct, "cold_reads": rdf.cold_reads_verdict(no_direct)}) == \
        {"RdfColdReadsState": "nodirect", "RdfColdOverDirect": "--", "RdfColdOverWarm": "--"}
    no_cold = {"warm": rates["warm"], "direct": rates["direct"]}
    assert rdf.cold_reads_macros({"r_io": no_cold, "cold_reads": rdf.cold_reads_verdict(no_cold)})[
        "RdfColdReadsState"] == "nocold"
    assert rdf.cold_reads_macros(None)["RdfColdReadsState"] == paper.NOT_MEASURED


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="no pdflatex")
def test_every_cold_reads_state_builds_with_its_numbers(tmp_path):
    from tex_wording import build, printed
    rates = {"cold": _per_round(1700, 1650, 1750), "direct": _per_round(1000, 980, 1010),
             "warm": _per_round(13000, 12500, 13500)}
    macros = {**rdf.cold_reads_macros(_cold_reads_summary(rates), 0.99), "RdfRateLooksLevel": paper.number(99)}
    states = ("reached", "cache", "notseparated", "nocold", "nodirect", "notmeasured")
    body = "\n\n".join(rf"{state}: \def\RdfColdReadsState{{{state}}}\wording{{RdfColdReads}}." for state in states)
    code, log, text = build(tmp_path, "rdataframe", macros, body)
    assert code == 0, log[-2000:]
    over_direct = intervals.paired_by_round(rates["cold"].to_dict(), rates["direct"].to_dict(), 0.99)
    over_warm = intervals.paired_by_round(rates["cold"].to_dict(), rates["warm"].to_dict())
    half_width = re.search(r"pm\$\\,(.*)\\%", paper.estimate(over_direct, 3)).group(1)
    ratios = ("the cold rate is {} ± {}% times the O_DIRECT rate (± its interval at the 99% level of the claim it "
              "decides) and {} (95% interval {} to {}) times the warm rate").format(
        printed(paper.number(over_direct.value)), half_width,
        *(printed(paper.number(v)) for v in (over_warm.value, over_warm.low, over_warm.high)))
    assert f"reached: came from below this system's page cache: {ratios}, nearer the O_DIRECT rate" in text
    assert f"cache: did not come from the device: {ratios}, nearer the page cache's" in text
    assert f"notseparated: cannot be told from the device's reads or the page cache's: {ratios}, and" in text
    assert "nodirect: cannot be judged here: the O_DIRECT rate was not measured." in text
    assert "notmeasured: were not measured: the rate model did not run." in text


def _rate_frames(cores: int) -> dict:
    """Three rounds of the rate model's passes at 1 to 4 processes on a machine of `cores` cores."""
    size = 10_000_000
    raw = pd.DataFrame([{"cache": c, "wall_s": w * f, "warmup": False, "noisy": False, "bytes": size, "round": r}
                        for r, f in enumerate((1.0, 1.05, 0.95)) for c, w in (("cold", 0.1), ("warm", 0.01))])
    components = pd.DataFrame([{"process_s": 0.02, "getentry_s": 0.2, "wall_s": 0.25, "warmup": False, "round": r}
                               for r in range(3)])
    rate = pd.DataFrame([{"cache": "cold", "ttree_cache": "on", "processes": n, "wall_s": w * (1 + 0.01 * r),
                          "warmup": False, "round": r, "cpu_s": w, "read_calls": 1}
                         for r in range(3) for n, w in {1: 0.30, 2: 0.18, 3: 0.15, 4: 0.14}.items()])
    return {"bytes": size, "raw": raw, "components": components, "rate": rate, "events": 1000, "cores": cores}


def _oversubscribed_cases() -> dict[int, tuple[dict, dict[str, str]]]:
    """By cores (2, 3 and 4 against 1 to 4 processes): the rate model's frames and their macros."""
    return {cores: (frames, rdf.oversubscribed_macros(rdf.rate_summary(frames)))
            for cores, frames in ((c, _rate_frames(c)) for c in (2, 3, 4))}


def test_the_process_counts_beyond_the_cores_are_a_state_and_their_list():
    """paper/sections/rdataframe.tex words RdfRateOversubscribedState with the counts and the cores."""
    for cores, (frames, macros) in _oversubscribed_cases().items():
        over = sorted(n for n in frames["rate"]["processes"].unique() if n > frames["cores"])
        state = "none" if not over else "one" if len(over) == 1 else "several"
        assert macros == {"RdfRateOversubscribedState": state,
                          "RdfRateOversubscribedCounts": ", ".join(map(str, over)) if over else "--"}, cores
    assert {m["RdfRateOversubscribedState"] for _, m in _oversubscribed_cases().values()} == {"none", "one", "several"}
    assert rdf.oversubscribed_macros(None) == {"RdfRateOversubscribedState": paper.NOT_MEASURED,
                                               "RdfRateOversubscribedCounts": "--"}


def _dask_cases() -> dict[str, tuple[dict, pd.DataFrame | None, dict[str, str]]]:
    """Dask clusters of 1 and 2 workers on a configured scheduler, one of 1 worker on a local
    cluster, none run: each with its params, its summary and its macros."""
    rows = [{"name": f"dask_w{w}", "threads": w, "npartitions": 2 * w, "wall_s": t, "cpu_s": t * w, "warmup": False,
             "events": 1000, "files": 2} for w, times in ((1, (2.0, 2.1, 1.9)), (2, (1.0, 1.1, 0.9))) for t in times]
    scan = pd.DataFrame([{"part": "scan", "threads": t, "wall_s": w, "wall_by_round": {0: w, 1: w * 1.1, 2: w * 0.9}}
                         for t, w in ((0, 1.5), (1, 1.6), (2, 0.8))]).set_index("threads")
    cases = {"scheduler": ({"dask": {"scheduler": "tcp://host:8786"}}, rows),
             "local": ({"dask": {"scheduler": None}}, rows[:3]), "notrun": ({"dask": {"scheduler": None}}, None)}
    out = {}
    for name, (params, dask_rows) in cases.items():
        dask = rdf.summary(pd.DataFrame(dask_rows), ["name", "threads", "npartitions"]) if dask_rows else None
        out[name] = (params, dask, rdf.dask_macros(params, dask, scan))
    return out


def test_how_distributed_rdataframe_ran_is_a_state_with_its_workers():
    """paper/sections/rdataframe.tex words RdfDaskModeState and RdfDaskWorkersState."""
    cases = _dask_cases()
    for name, (params, dask, macros) in cases.items():
        workers = int(dask["threads"].max()) if dask is not None else 0
        assert macros["RdfDaskModeState"] == name  # each case is named after the state it should give
        assert macros["RdfDaskModeState"] == ("notrun" if dask is None else
                                              "scheduler" if params["dask"]["scheduler"] else "local")
        assert macros["RdfDaskWorkers"] == str(workers)
        assert macros["RdfDaskWorkersState"] == ("none" if workers == 0 else "one" if workers == 1 else "several")
    _, dask, macros = cases["scheduler"]
    ordered = dask.sort_values("threads")
    ratio = intervals.unpaired_ratio(ordered["wall_passes"].iloc[0], ordered["wall_passes"].iloc[-1])
    assert macros["RdfDaskSpeedup"] == paper.estimate(ratio, 2) and ratio.value == pytest.approx(2, rel=0.01)
    assert cases["notrun"][2]["RdfDaskSpeedup"] == cases["notrun"][2]["RdfDaskOverCpp"] == "--"


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="no pdflatex")
def test_every_oversubscribed_and_dask_state_builds_with_its_numbers(tmp_path):
    from tex_wording import build

    oversubscribed = [(frames["cores"], macros) for frames, macros in _oversubscribed_cases().values()]
    dask = _dask_cases()
    body = "\n\n".join(
        ["cores: " + worded("RdfRateOversubscribed", {**m, "RdfRateFitCores": str(c)}) for c, m in oversubscribed]
        + ["notmeasured: " + worded("RdfRateOversubscribed", rdf.oversubscribed_macros(None))]
        + [f"{name}: " + worded("RdfDaskMode", m) + " With " + worded("RdfDaskWorkers", m) for name, (_, _, m) in dask.items()])
    code, log, text = build(tmp_path, "rdataframe", {}, body)
    assert code == 0, log[-2000:]
    for cores, macros in oversubscribed:
        counts = macros["RdfRateOversubscribedCounts"]
        # (no claim that readers waiting on the device leave their core: the unthrottled runs do not show it)
        assert {"none": "cores: none of them outnumbers the cores.",
                "one": f"cores: {counts} outnumbers the {cores} cores.",
                "several": f"cores: {counts} outnumber the {cores} cores."}[macros["RdfRateOversubscribedState"]] in text
    assert "notmeasured: \u2013." in text  # TeX's en dash
    workers = {name: m["RdfDaskWorkers"] for name, (_, _, m) in dask.items()}
    assert f"scheduler: on the configured scheduler. With {workers['scheduler']} workers." in text
    assert (f"local: on a local cluster of single-threaded worker processes. With {workers['local']} worker."
            in text)
    assert "notrun: not run (rdataframe.dask.enabled is false). With no workers." in text


def _pdf_cases() -> dict[tuple[bool, int], dict[str, str]]:
    """By whether the nominal weight is put in front and the branch's values per event (one fewer
    than the seed's weights, or as many): the PDF weights' macros."""
    seed = seeds.RDF_PDF_WEIGHTS
    return {(nominal, count): rdf.pdf_weights_macros({"pdf_nominal": nominal}, count)
            for nominal in (True, False) for count in (seed - 1, seed)}


def test_the_pdf_weights_are_states_with_their_count():
    """paper/sections/rdataframe.tex words RdfPdfNominalState and RdfPdfVsSeedState."""
    for (nominal, count), macros in _pdf_cases().items():
        weights = count + int(nominal)
        assert macros == {"RdfPdfCount": str(count), "RdfPdfWeights": str(weights),
                          "RdfPdfNominalState": "added" if nominal else "notadded",
                          "RdfPdfVsSeedState": "same" if weights == seeds.RDF_PDF_WEIGHTS else "different"}
    assert {(m["RdfPdfNominalState"], m["RdfPdfVsSeedState"]) for m in _pdf_cases().values()} == \
        {(n, v) for n in ("added", "notadded") for v in ("same", "different")}


# Amdahl's and the USL's parameters of the synthetic thread scans, and the sequential run's time
_T1, _SERIAL, _SIGMA, _KAPPA, _SEQUENTIAL = 10.0, 0.1, 0.05, 0.001, 9.5


def _amdahl_cases() -> dict[str, tuple[np.ndarray, dict[str, str]]]:
    """Amdahl's law through three thread counts (a degree of freedom left) and through two (none),
    and the USL through four (fitted) and three (too few): by the state each should give, the
    thread counts and their macros."""
    def amdahl(threads):
        return rdf.amdahl_macros(rdf.fit_amdahl(threads, _T1 * (_SERIAL + (1 - _SERIAL) / threads)), _SEQUENTIAL)

    def usl(threads):
        wall = _T1 * (1 + _SIGMA * (threads - 1) + _KAPPA * threads * (threads - 1)) / threads
        return rdf.usl_macros(rdf.fit_usl(threads, wall))

    return {"extrapolated": (np.array([1, 2, 4]), amdahl(np.array([1, 2, 4]))),
            "notextrapolated": (np.array([1, 2]), amdahl(np.array([1, 2]))),
            "fitted": (np.array([1, 2, 4, 8]), usl(np.array([1, 2, 4, 8]))),
            "notfitted": (np.array([1, 2, 4]), usl(np.array([1, 2, 4])))}


def test_amdahls_extrapolation_and_the_usl_are_states_with_their_numbers():
    """paper/sections/rdataframe.tex words RdfAmdahlExtrapolationState (the speed-ups at the seed's
    fewest and most threads, only with a degree of freedom left) and RdfUslState."""
    cases = _amdahl_cases()
    seed_threads = sorted(set(seeds.RDF_STORAGE["threads"]))
    for name in ("extrapolated", "notextrapolated"):
        threads, macros = cases[name]
        dof = len(threads) - 2
        speedups = [paper.number(_SEQUENTIAL / (_T1 * (_SERIAL + (1 - _SERIAL) / n)), 2) if dof >= 1 else "--"
                    for n in (seed_threads[0], seed_threads[-1])]
        assert macros == {"RdfSerialFraction": paper.number(_SERIAL, 2), "RdfAmdahlDof": str(dof),
                          "RdfAmdahlPoints": str(len(threads)), "RdfAmdahlExtrapolationState": name,
                          "RdfAmdahlSpeedupSmall": speedups[0], "RdfAmdahlSpeedupLarge": speedups[1]}
    assert cases["fitted"][1] == {"RdfUslState": "fitted", "RdfUslSigma": paper.number(_SIGMA),
                                  "RdfUslKappa": paper.number(_KAPPA), "RdfUslDof": str(len(cases["fitted"][0]) - 3)}
    assert cases["notfitted"][1] == {"RdfUslState": "notfitted", "RdfUslSigma": "--", "RdfUslKappa": "--",
                                     "RdfUslDof": "--"}


def _agreement_cases() -> dict[str, tuple[pd.DataFrame, dict[str, str]]]:
    """Every comparison bit-identical, and one of three (the others within the tolerance): by the
    state each should give, the comparisons and their macros."""
    frames = {"identical": pd.DataFrame({"identical": [True, True], "max_rel_diff": [0.0, 0.0]}),
              "withintolerance": pd.DataFrame({"identical": [True, False, False],
                                               "max_rel_diff": [0.0, 0.0004, 0.0012]})}
    return {name: (frame, rdf.agreement_macros(frame)) for name, frame in frames.items()}


def test_the_histograms_agreement_is_a_state_with_its_counts():
    """paper/sections/rdataframe.tex words RdfAgreementState."""
    for name, (frame, macros) in _agreement_cases().items():
        identical, largest = int(frame["identical"].sum()), frame["max_rel_diff"].max()
        assert macros == {"RdfComparisons": str(len(frame)), "RdfIdentical": str(identical),
                          "RdfMaxRelDiff": paper.number(largest, 2) if largest > 0 else "0",
                          "RdfAgreementState": name}
        assert name == ("identical" if identical == len(frame) else "withintolerance")


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="no pdflatex")
def test_every_pdf_weights_and_agreement_state_builds_with_its_numbers(tmp_path):
    from tex_wording import build, printed

    seed = {"SeedRdfPdfWeights": seeds.macros()["SeedRdfPdfWeights"]}
    pdf, agreement = _pdf_cases(), _agreement_cases()
    body = "\n\n".join(
        [f"pdf {n} {c}: " + worded("RdfPdfNominal", m)[:-1] + ", " + worded("RdfPdfVsSeed", m)
         for (n, c), m in pdf.items()]
        + [f"{name}: " + worded("RdfAgreement", m) for name, (_, m) in agreement.items()])
    code, log, text = build(tmp_path, "rdataframe", seed, body)
    assert code == 0, log[-2000:]
    for (nominal, count), macros in pdf.items():
        front = "with the nominal weight of one put in front" if nominal else "as they are (no nominal weight added)"
        against = ("as many as the seed's" if count + int(nominal) == seeds.RDF_PDF_WEIGHTS
                   else f"against the seed's {printed(seed['SeedRdfPdfWeights'])}")
        assert f"pdf {nominal} {count}: {front}, {against}." in text
    frame = agreement["identical"][0]
    assert f"identical: Here all {len(frame)} comparisons are bit-identical." in text
    frame, macros = agreement["withintolerance"]
    assert (f"withintolerance: Here {int(frame['identical'].sum())} of {len(frame)} comparisons are bit-identical; "
            f"in the others sums of weights differ by at most {printed(macros['RdfMaxRelDiff'])} (relative), within "
            "the tolerance.") in text


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="no pdflatex")
def test_every_amdahl_extrapolation_and_usl_state_builds_with_its_numbers(tmp_path):
    from tex_wording import build, printed

    seed = {k: seeds.macros()[k] for k in ("SeedRdfThreadsSmall", "SeedRdfThreadsLarge")}
    amdahl = _amdahl_cases()
    body = "\n\n".join(
        [f"{name}: " + worded("RdfAmdahlExtrapolation", amdahl[name][1])[:-1]
         for name in ("extrapolated", "notextrapolated")]
        + [f"{name}: " + worded("RdfUsl", {**amdahl["extrapolated"][1], **amdahl[name][1]})[:-1]
           for name in ("fitted", "notfitted")])
    code, log, text = build(tmp_path, "rdataframe", seed, body)
    assert code == 0, log[-2000:]
    small, large = (printed(amdahl["extrapolated"][1][k]) for k in ("RdfAmdahlSpeedupSmall", "RdfAmdahlSpeedupLarge"))
    assert (f"extrapolated: taken at its word it would give a speed-up of {small} at "
            f"{printed(seed['SeedRdfThreadsSmall'])} threads and {large} at {printed(seed['SeedRdfThreadsLarge'])}. "
            "That is a statement of the model, not a measurement.") in text
    assert ("notextrapolated: a fit through every point it rests on, which does not test the law's form, so no "
            "speed-up is extrapolated from it to the seed's thread counts.") in text
    usl = amdahl["fitted"][1]
    assert (f"fitted: The Universal Scalability Law, fitted too, gives contention \u03c3 = "
            f"{printed(usl['RdfUslSigma'])} and coherency \u03ba = {printed(usl['RdfUslKappa'])} "
            f"({usl['RdfUslDof']} degrees of freedom).") in text
    assert ("notfitted: The Universal Scalability Law has three parameters and needs at least four thread counts; "
            f"this machine gives {amdahl['extrapolated'][1]['RdfAmdahlPoints']}, so it is not fitted here.") in text


def test_amdahl_and_usl_fits_recover_known_parameters():
    threads = np.array([1, 2, 4, 8, 16])
    wall = 10.0 * (0.1 + 0.9 / threads)
    fit = rdf.fit_amdahl(threads, wall)
    assert fit["serial_fraction"] == pytest.approx(0.1) and fit["t1_s"] == pytest.approx(10.0)
    usl_wall = 10.0 * (1 + 0.05 * (threads - 1) + 0.001 * threads * (threads - 1)) / threads
    usl = rdf.fit_usl(threads, usl_wall)
    assert usl["sigma"] == pytest.approx(0.05) and usl["kappa"] == pytest.approx(0.001)
    assert rdf.fit_usl(threads[:2], wall[:2]) is None


def test_histogram_comparison_counts_exact_weights_within_tolerance():
    counts = (np.array([1.0, 2.0, 3.0]), np.array([1.0, 2.0, 3.0]))
    weights = (np.array([0.5, 1.25, 2.0]), np.array([0.1, 0.2, 0.3]))
    reference = {"met": counts, "pdf_000": weights}
    assert rdf.compare_histograms(reference, dict(reference), 1e-9, "same")["identical"]
    with pytest.raises(rdf.HistogramMismatch, match="counts of histogram met"):
        rdf.compare_histograms(reference, {**reference, "met": (counts[0] + [0, 0, 1], counts[1])}, 1e-9, "run x")
    nudged = {**reference, "pdf_000": (weights[0] * (1 + np.array([0, 1e-15, 0])), weights[1])}
    result = rdf.compare_histograms(reference, nudged, 1e-9, "order")
    assert not result["identical"] and 0 < result["max_rel_diff"] < 1e-9
    with pytest.raises(rdf.HistogramMismatch, match="pdf_000"):
        rdf.compare_histograms(reference, {**reference, "pdf_000": (weights[0] * 1.01, weights[1])}, 1e-9, "run y")
    with pytest.raises(rdf.HistogramMismatch, match=r"run z: histograms \['other'\] are not in the reference"):
        rdf.compare_histograms(reference, {**reference, "other": counts}, 1e-9, "run z")


def test_histogram_comparison_fails_on_a_lost_histogram():
    counts = (np.array([1.0, 2.0]), np.array([1.0, 2.0]))
    reference = {"met": counts, "npv": counts, "pdf_000": counts}
    with pytest.raises(rdf.HistogramMismatch, match=r"run w: histograms \['npv'\] of the reference run are missing"):
        rdf.compare_histograms(reference, {"met": counts, "pdf_000": counts}, 1e-9, "run w")
    with pytest.raises(rdf.HistogramMismatch, match="missing"):
        rdf.compare_histograms(reference, {}, 1e-9, "run v")
    # A run asked for fewer histograms (nhist) must produce exactly those.
    assert rdf.compare_histograms(reference, {"met": counts}, 1e-9, "run u", expected=["met"])["histograms"] == 1
    with pytest.raises(rdf.HistogramMismatch, match=r"\['npv'\] are not in the reference"):
        rdf.compare_histograms(reference, {"met": counts, "npv": counts}, 1e-9, "run t", expected=["met"])


def _drop_histogram(source: Path, target: Path, name: str) -> None:
    with uproot.open(source) as handle, uproot.recreate(target) as out:
        for key in {k.split(";")[0] for k in handle.keys()} - {name}:
            out[key] = handle[key]


def test_agreement_check_compares_the_set_of_histograms_produced(inputs, tmp_path):
    _, chosen, _ = inputs
    hists = tmp_path / "histograms"
    hists.mkdir()
    _bench(chosen["main"], hists, "scan_t0", workload="analysis", threads=0, reps=1)
    _bench(chosen["main"], hists, "scan_t2", workload="analysis", threads=2, reps=1)
    _bench(chosen["main"], hists, "nhist_3_t0", workload="nhist", histograms=3, threads=0, reps=1)
    _bench(chosen["main"], hists, "nhist_1_t2", workload="nhist", histograms=1, threads=2, reps=1)
    _drop_histogram(hists / "scan_t2.root", hists / "scan_lost.root", "npv")
    rows = [("scan_t0", "scan_t0", "scan", 0), ("scan_t2", "scan_t0", "scan", 0),
            ("nhist_3_t0", "nhist_3_t0", "nhist", 3), ("nhist_1_t2", "nhist_3_t0", "nhist", 1)]
    frame = pd.DataFrame(rows, columns=["name", "reference", "part", "histograms_asked"])
    agreement = rdf.check_agreement(frame, tmp_path, 1e-9).set_index("run")
    assert agreement.loc["scan_t2", "histograms"] == 7 and agreement.loc["nhist_1_t2", "histograms"] == 1
    with pytest.raises(rdf.HistogramMismatch, match=r"run scan_lost vs scan_t0: histograms \['npv'\] .* missing"):
        rdf.check_agreement(frame, tmp_path, 1e-9, {"scan_lost": "scan_t0"})
    # The nhist run compared with what it was asked for: 2 histograms asked, 1 produced.
    frame.loc[frame["name"] == "nhist_1_t2", "histograms_asked"] = 2
    with pytest.raises(rdf.HistogramMismatch, match=r"run nhist_1_t2 .* \['nhist_001'\] .* missing"):
        rdf.check_agreement(frame, tmp_path, 1e-9)


def test_compiled_runs_are_measured_interleaved_checked_and_reused(inputs, settings, section, tmp_path):
    _, chosen, info = inputs
    params = {**section, "repetitions": 2, "warmup": 0, "pdf_methods": ["defines"], "compressions": []}
    frame = rdf.measure_cpp(params, chosen, info["pdf_count"], tmp_path, progress=False)
    plan = rdf.cpp_plan(params)
    groups = rdf.cpp_groups(params)
    assert [g.name for g in groups] == ["scan", "nhist", "pdf"]
    assert sorted(r["name"] for g in groups for r in g.runs) == sorted(r["name"] for r in plan)
    measured = frame[~frame["warmup"]]
    # every run once per round, one rdf_bench process each; load and spread recorded with it
    # (a group whose interval stayed wide got two more rounds, the earlier kept: noise.Settings)
    rounds = measured.groupby("run")["round"].apply(sorted)
    assert all(r == list(range(len(r))) and len(r) % 2 == 0 for r in rounds)
    assert measured["others_cores"].notna().all() and "noisy" in measured
    # each event loop's run delay, and its retakes under the default rule (noise.Settings: at most 3)
    assert measured["run_delay_s"].ge(0).all() and measured["sample_retakes"].between(0, 3).all()
    assert sorted(p.stem for p in (tmp_path / "histograms").glob("*.root")) == sorted(r["name"] for r in plan)
    # every run's histograms agree with its sequential reference, bin by bin
    agreement = rdf.check_agreement(frame, tmp_path, params["rtol"])
    assert set(agreement["run"]) == {r["name"] for r in plan if r["name"] != r["reference"]}
    table = rdf.summary(frame, ["part", "name", "compression", "method", "histograms", "threads"])
    scaling = rdf.scaling_table(table)
    assert scaling["speed-up"].str.startswith(r"\num{").all()
    # times, rates and speed-ups across the processes, each with its interval
    assert all(printed_with_interval(cell) for column in ("wall [s]", "rate [kHz]", "speed-up") for cell in scaling[column])
    # the parts this configuration leaves out are tabled as not measured by the package
    for left_out in (rdf.compression_table(table, settings["datasets"]["levels"], [], 2), rdf.dask_table(None, table),
                     rdf.rate_components_table(None), rdf.rate_fit_table(None)):
        assert left_out.values.tolist() == [["not measured (disabled in the configuration)"]]
    assert rdf.pdf_table(table, 2)["method"].tolist() == ["Define + Histo2D per weight"]
    # the package builds the whole of macros.tex: the runs' numbers, their noise control, the
    # inputs' floats against the real file's and the archived machines shown (none here)
    imt = table[(table["part"] == "scan") & (table["threads"] > 0)]
    amdahl = rdf.fit_amdahl(imt["threads"].to_numpy(), imt["wall_s"].to_numpy())
    usl = rdf.fit_usl(imt["threads"].to_numpy(), imt["wall_s"].to_numpy())
    noise_settings = noise.Settings()
    macros = rdf.paper_macros(params, table, agreement, info, amdahl, usl, None, None, {"rate model": "off"},
                              settings["datasets"], None, inputs=chosen, cpp=frame, noise_settings=noise_settings,
                              archived=[])
    noise_macros = noise_sentences.paper_macros("Rdf", frame, noise_settings, section="rdataframe")
    assert {"Rdf" + name for name in noise_sentences.PAPER_MACROS} <= set(noise_macros)
    assert {k: macros[k] for k in noise_macros} == noise_macros
    assert int(macros["RdfFloatBranches"]) > 0 and macros["RdfJitterPercent"].startswith(r"\num{")
    assert macros["RdfMachinesSentence"] == r"\machinessentence{Rdf}" and macros["RdfMachinesState"] == "none"
    assert macros["RdfMaxThreads"] == "2" and macros["RdfDaskWorkers"] == "0" and macros["RdfRateFiles"] == "--"
    sequential = float(table[(table["part"] == "scan") & (table["threads"] == 0)]["wall_s"].iloc[0])
    for family in (rdf.amdahl_macros(amdahl, sequential), rdf.usl_macros(usl), rdf.agreement_macros(agreement),
                   rdf.pdf_weights_macros(params, info["pdf_count"])):
        assert {k: macros[k] for k in family} == family
    assert all(name.isalpha() and name.startswith("Rdf") for name in macros)
    # stored: a second call reuses every group; a run whose histograms are gone is measured again
    again = rdf.measure_cpp(params, chosen, info["pdf_count"], tmp_path, progress=False)
    pd.testing.assert_frame_equal(frame, again, check_dtype=False)
    (tmp_path / "histograms" / "nhist_1_t2.root").unlink()
    rdf.measure_cpp(params, chosen, info["pdf_count"], tmp_path, progress=False)
    assert (tmp_path / "histograms" / "nhist_1_t2.root").exists()


def test_rate_model_runs_are_measured_interleaved_checked_and_reused(inputs, section, tmp_path):
    _, chosen, info = inputs
    # the base rounds only (Eq. (1)'s extra rounds: test_eq1_claim_gets_rounds_of_its_own_runs...)
    rate = {**section["rate_model"], "cache_states": ["cold", "warm"], "ttree_cache": [True], "max_processes": 2,
            "decide_budget_s": 0}
    params = {**section, "repetitions": 2, "warmup": 1, "rate_model": rate}
    primer = chosen["main"][0]  # the same tree, not one of the files measured
    frames = rdf.measure_rate_model(params, chosen, info, tmp_path, primer, progress=False)
    measured = frames["rate"][~frames["rate"]["warmup"]]
    names = {f"rate_{c}_on_np{n}" for c in ("cold", "warm") for n in (1, 2)}
    assert set(measured["run"]) == names and measured["processes"].dtype == "int64"
    # the raw reads and one reader's phases (R1 predicted) are runs of the same group as R(Np):
    # every run once per round, in each round's random order; load and spread recorded with each pass
    every = pd.concat([frames[part] for part in ("raw", "components", "rate")], ignore_index=True)
    direct = set() if "direct" in frames["not_measured"] else {"raw_direct"}  # O_DIRECT where supported
    assert set(frames["raw"]["run"]) == {"raw_cold", "raw_warm"} | direct
    assert set(frames["components"]["run"]) == {"components"}
    timed = every[~every["warmup"].astype(bool)]
    rounds = timed.groupby("run")["round"].apply(sorted)
    assert all(r == list(range(len(r))) and len(r) % 2 == 0 for r in rounds)
    # the readers' warm-up passes (rates, phases) in the first round only
    warmups = every[every["warmup"].astype(bool) & every["run"].isin(names | {"components"})]
    assert set(warmups["run"]) == names | {"components"} and (warmups["round"] == 0).all()
    assert timed["others_cores"].notna().all() and timed["cv"].notna().all()
    # the readers of every pass, cold or warm, summed the counters to one reader's
    assert (frames["rate"]["counter_sum"] == frames["components"]["counter_sum"].iloc[0]).all()
    # one reader's phases are its own (the measuring loop adds columns of its own beside them, never over
    # them: its processing time is within its pass, which the loop's pass_cost_s, with the process start, is not)
    phases = frames["components"][~frames["components"]["warmup"].astype(bool)]
    assert (phases["process_s"] < phases["wall_s"]).all() and (phases["pass_cost_s"] > phases["wall_s"]).all()
    cold = measured[measured["cache"] == "cold"]
    assert (cold["resident_pages"] == 0).all()
    # every pass's run delay; the raw reads and the one reader retake under the default rule, the
    # readers of R(Np), timed together, only record theirs (summed over them), and the text says so
    assert all(frames[part]["run_delay_s"].ge(0).all() for part in ("raw", "components", "rate"))
    assert all(frames[part]["sample_retakes"].between(0, 3).all() for part in ("raw", "components"))
    assert "sample_retakes" not in frames["rate"] and (frames["rate"]["threads"] == frames["rate"]["processes"]).all()
    assert rdf.rate_summary(frames)["samples"]["TogetherState"] == "together"
    table = rdf.rate_summary(frames)["table"]
    assert len(table) == len(names) and (table["rate"] > 0).all()
    # what the passes read is compared after the group ran: a pass whose readers missed entries fails
    wrong = {**frames, "rate": frames["rate"].assign(counter_sum=frames["rate"]["counter_sum"] - 1)}
    with pytest.raises(AssertionError, match=r"readers \((cold|warm), TTreeCache on\) summed the collection"):
        rdf.check_model_passes(wrong, chosen["rate"])
    # stored: a second call reuses the whole group
    again = rdf.measure_rate_model(params, chosen, info, tmp_path, primer, progress=False)
    for part in ("raw", "components", "rate"):
        pd.testing.assert_frame_equal(frames[part], again[part], check_dtype=False)


def _model_frames(rounds: int, ratio_noise: list[float], size: int = 10_000_000,
                  direct: list[float] | None = None) -> dict:
    """The rate model's frames over `rounds` rounds, one reader's measured time in round r scaled by
    ratio_noise[r] (Eq. (1)'s prediction over it, cold and warm alike: 40 MB/s over 10 MB in 0.25 s, times that);
    with `direct`, an O_DIRECT raw read whose rate in round r is the cold one's over direct[r]."""
    raw = pd.DataFrame([{"run": f"raw_{c}", "cache": c, "wall_s": w, "warmup": False, "noisy": False, "bytes": size,
                         "round": r, "look": 0} for r in range(rounds)
                        for c, w in (("cold", 0.01), ("warm", 0.01), *((("direct", 0.01 * direct[r]),) if direct else ()))])
    components = pd.DataFrame([{"run": "components", "process_s": 0.02, "getentry_s": 0.2, "wall_s": 0.25,
                                "warmup": False, "round": r, "look": 0} for r in range(rounds)])
    rate = pd.DataFrame([{"run": f"rate_{c}_on_np{n}", "cache": c, "ttree_cache": "on", "processes": n,
                          "wall_s": (0.25 * ratio_noise[r] if n == 1 else 0.15), "warmup": False, "round": r,
                          "cpu_s": 0.1, "read_calls": 1, "look": 0}
                         for r in range(rounds) for c in ("cold", "warm") for n in (1, 2)])
    return {"bytes": size, "raw": raw, "components": components, "rate": rate, "events": 1000, "cores": 2,
            "throttle": None, "not_measured": {}}


def test_eq1_claim_gets_rounds_of_its_own_runs_and_is_judged_at_the_looks_level():
    # the runs an extra round measures: what Eq. (1)'s figures are built from, no other process count
    rate = {"max_processes": 2, "process_spacing": "every", "ttree_cache": [True]}
    group = rdf.io_rate_model.experiment.Group("I/O rate model",
                                               rdf.io_rate_model.model_runs(["cold", "warm"], ["cold", "warm", "direct"],
                                                                            rate))
    frames = {}
    claims = rdf.io_rate_model.deciding_claims(group, lambda rows: frames["now"])
    assert [c.claim for c in claims] == ["S004-r1-harmonic-sum", "S004-tio-bandwidth-limited"]
    assert set(claims[0].run_names) == {"raw_cold", "raw_warm", "components", "rate_cold_on_np1", "rate_warm_on_np1"}
    judge = claims[0].judge
    # 1.0 +-10% is the rule: a prediction 1.2 times the measured rate in every round is refuted, settled
    frames["now"] = _model_frames(3, [1.2, 1.2, 1.2])
    assert judge(None, 0.95) == (True, None)
    # 1.05 with a spread across rounds that holds 1.1: undecided, and the rounds that would decide it
    frames["now"] = _model_frames(3, [1.0, 1.05, 1.10])
    settled, needed = judge(None, 0.95)
    summary = rdf.rate_summary(frames["now"])
    figure = rdf.io_rate_model.predicted_over_measured(summary, "warm", 0.95)
    assert figure.low < 1.1 < figure.high and not settled and needed > 3
    # at a higher level (more looks) the interval is wider: it needs more rounds
    assert judge(None, 0.99)[1] > needed
    assert rdf.io_rate_model.predicted_over_measured(summary, "warm", 0.99).high > figure.high
    # a group without one reader of any cache state gets no claim of Eq. (1), without an O_DIRECT read none of it
    bare = rdf.io_rate_model.experiment.Group("I/O rate model",
                                              [r for r in group.runs if not r["name"].endswith("_np1")])
    assert [c.claim for c in rdf.io_rate_model.deciding_claims(bare, lambda rows: frames["now"])] == \
        ["S004-tio-bandwidth-limited"]
    no_direct = rdf.io_rate_model.experiment.Group("I/O rate model",
                                                   [r for r in bare.runs if r["name"] != "raw_direct"])
    assert rdf.io_rate_model.deciding_claims(no_direct, lambda rows: frames["now"]) == []


def test_the_cold_read_claim_gets_rounds_of_the_two_raw_reads_and_is_judged_at_the_looks_level():
    """S004-tio-bandwidth-limited (the cold raw read over the O_DIRECT one within 25% of 1): an extra round of it
    reads the cold and the O_DIRECT raw reads only; judged by the figure at the level asked."""
    rate = {"max_processes": 2, "process_spacing": "every", "ttree_cache": [True]}
    group = rdf.io_rate_model.experiment.Group("I/O rate model",
                                               rdf.io_rate_model.model_runs(["cold", "warm"], ["cold", "warm", "direct"],
                                                                            rate))
    frames = {}
    claim = {c.claim: c for c in rdf.io_rate_model.deciding_claims(group, lambda rows: frames["now"])}[
        "S004-tio-bandwidth-limited"]
    assert set(claim.run_names) == {"raw_cold", "raw_direct"}
    # the cold read at 0.9 of the O_DIRECT rate in every round: within 25% of 1, settled
    frames["now"] = _model_frames(3, [1.0] * 3, direct=[0.9] * 3)
    assert claim.judge(None, 0.95) == (True, None)
    # spread around 0.85 that holds 0.8: undecided, and more rounds at a higher level
    frames["now"] = _model_frames(3, [1.0] * 3, direct=[0.78, 0.85, 0.92])
    figure = rdf.io_rate_model.cold_over_direct(rdf.rate_summary(frames["now"])["by_round"]["r_io"], 0.95)
    settled, needed = claim.judge(None, 0.95)
    assert figure.low < 0.8 < figure.high and not settled and needed > 3
    assert claim.judge(None, 0.99)[1] > needed


def test_eq1_extra_rounds_measure_only_its_runs_and_are_stored(inputs, section, tmp_path, monkeypatch):
    # a judge that wants two rounds more than the base ones (2, or more where a noisy group was measured
    # again): the claim's runs (warm raw read, the phases' reader, one warm reader) get them as one look;
    # the other process counts keep the base rounds; stored and reused
    _, chosen, info = inputs
    rate = {**section["rate_model"], "cache_states": ["warm"], "ttree_cache": [True], "max_processes": 2,
            "max_looks": 2, "decide_budget_s": 600}
    params = {**section, "repetitions": 2, "warmup": 0, "rate_model": rate}
    judged = []

    def wants_two_more(claim, machine, figures):
        def judge(rows, confidence):
            judged.append((confidence, figures(rows, confidence)))
            return False, judged[0][1]["RdfROnePredOverMeasuredWarm"].processes + 2
        return judge
    monkeypatch.setattr(rdf.io_rate_model.ledger, "looks_judge", wants_two_more)
    frames = rdf.measure_rate_model(params, chosen, info, tmp_path, chosen["main"][0], progress=False)
    every = pd.concat([frames[part] for part in ("raw", "components", "rate")], ignore_index=True)
    timed = every[~every["warmup"].astype(bool)]
    base = set(timed[timed["run"] == "rate_warm_on_np2"]["round"])  # (a noisy group measured again: more)
    extra = timed[timed["look"] > 0]
    assert set(extra["run"]) == {"raw_warm", "components", "rate_warm_on_np1"}
    assert set(extra["round"]) == {max(base) + 1, max(base) + 2} and set(extra["extended_for"]) == {"S004-r1-harmonic-sum"}
    # judged at the looks' level, on the figure the section prints (Eq. (1)'s warm ratio; no cold reads here)
    level, figures = judged[0]
    assert level == pytest.approx(intervals.bonferroni(2)) and figures["RdfROnePredOverMeasuredWarm"].processes == len(base)
    assert math.isnan(figures["RdfROnePredOverMeasuredCold"].value)
    summary = rdf.rate_summary(frames)
    assert rdf.io_rate_model.predicted_over_measured(summary, "warm").processes == len(base) + 2
    macros = rdf.io_rate_model.ledger.looks_macros("RdfRate", rdf.io_rate_model.experiment.Looks.of(rate),
                                                   summary["looks"], [])
    assert (macros["RdfRateLooksState"], macros["RdfRateExtraRounds"]) == ("some", "2")
    # stored with its looks: measured again, nothing runs (the looks spent, every run reused)
    monkeypatch.setattr(rdf.io_rate_model.harness, "run_kernel", lambda *a, **k: pytest.fail("measured again"))
    again = rdf.measure_rate_model(params, chosen, info, tmp_path, chosen["main"][0], progress=False)
    ordered = [frame.sort_values(["run", "round"]).reset_index(drop=True) for frame in (frames["rate"], again["rate"])]
    pd.testing.assert_frame_equal(*ordered, check_dtype=False)


def test_rate_model_fits_keep_the_base_rounds():
    # one reader's extra rounds for Eq. (1)'s claim change its rate, never the fits
    frames = _model_frames(3, [1.0, 1.05, 1.10])
    extra = frames["rate"][frames["rate"]["processes"] == 1].assign(round=lambda f: f["round"] + 3, look=1,
                                                                     wall_s=0.5, extended_for="S004-r1-harmonic-sum")
    extended = {**frames, "rate": pd.concat([frames["rate"], extra], ignore_index=True)}
    base, more = rdf.rate_summary(frames), rdf.rate_summary(extended)
    fitted = [c for c in base["fits"] if not c.startswith("r_np1")]  # R(1) beside the fit: the cell, every round
    pd.testing.assert_frame_equal(base["fits"][fitted], more["fits"][fitted])
    assert more["table"].set_index(["cache", "processes"]).loc[("warm", 1), "rate"] < \
        base["table"].set_index(["cache", "processes"]).loc[("warm", 1), "rate"]
    assert sorted(more["looks"].query("look > 0")["round"].unique()) == [3, 4, 5]


def test_rate_model_rates_are_computed_per_round_and_carry_their_interval():
    # three rounds: every phase time scales by the round's factor, so each rate is the model's
    # over the geometric mean of the factors, with an interval from their spread; then one
    # round's raw warm read slows alone
    size, factors = 10_000_000, (1.0, 1.2, 0.9)
    raw = pd.DataFrame([{"cache": c, "wall_s": w * f, "warmup": False, "noisy": False, "bytes": size, "round": r}
                        for r, f in enumerate(factors) for c, w in (("cold", 0.1), ("warm", 0.01))])
    components = pd.DataFrame([{"process_s": 0.02 * f, "getentry_s": 0.2 * f, "wall_s": 0.25 * f, "warmup": False,
                                "round": r} for r, f in enumerate(factors)])
    rate = pd.DataFrame([{"cache": c, "ttree_cache": "on", "processes": n, "wall_s": 0.3 / n * f, "warmup": False,
                          "round": r, "cpu_s": 0.1, "read_calls": 1}
                         for r, f in enumerate(factors) for c in ("cold", "warm") for n in (1, 2)])
    frames = {"bytes": size, "raw": raw, "components": components, "rate": rate, "events": 1000, "cores": 2}
    rs = rdf.rate_summary(frames)
    est = rs["estimates"]
    geometric = math.prod(factors) ** (1 / 3)
    assert est["r_io"]["warm"].value == pytest.approx(10 / 0.01 / geometric)
    assert est["r_dec"].value == pytest.approx(10 / (0.25 - 0.02 - 0.01) / geometric)
    assert rs["r_proc"] == est["r_proc"].value == pytest.approx(10 / 0.02 / geometric)
    assert est["r_proc"].low < est["r_proc"].value < est["r_proc"].high
    # Eq. (1)'s R1 (1 / (1/1000 + 1/45.5 + 1/500) = 40 MB/s) over one reader's measured 33.3, paired by round
    predicted = rdf.io_rate_model.predicted_over_measured(rs, "warm")
    assert predicted.value == pytest.approx(40 / (10 / 0.3)) and predicted.low == pytest.approx(predicted.value)
    assert not math.isfinite(rdf.io_rate_model.predicted_over_measured(rs, "direct").value)  # no reader there
    # a calibrated raw sample of 7 passes: its rate is one pass's
    calibrated = rdf.rate_summary({**frames, "raw": raw.assign(wall_s=7 * raw["wall_s"], loops=7)})
    assert calibrated["estimates"]["r_io"]["warm"].value == pytest.approx(est["r_io"]["warm"].value)
    assert calibrated["estimates"]["r_dec"].value == pytest.approx(est["r_dec"].value)
    # opening the trees as a share of T_dec, the same in every round: an interval of no width
    assert rs["setup_share"].value == pytest.approx((0.25 - 0.2 - 0.02) / (0.25 - 0.02 - 0.01))
    assert rs["setup_share"].low == pytest.approx(rs["setup_share"].high)
    # Eq. (1) puts one reader (33 MB/s) below the raw read (100, 1000), R_dec (45) and R_proc (500)
    assert rdf.model_check(rs, "cold")["state"] == rdf.model_check(rs, "warm")["state"] == "holds"
    faster = rate.assign(wall_s=rate["wall_s"] / 2)  # 67 MB/s: above R_dec, which Eq. (1) forbids
    failed = rdf.model_check(rdf.rate_summary({**frames, "rate": faster}), "cold")
    assert failed["state"] == "fails" and failed["above"] == ["r_dec"]
    # the states the section words the check by (paper/sections/rdataframe.tex)
    assert rdf.model_check_macros(rs) == {"RdfModelCheckState": "coldwarm", "RdfModelCheckColdState": "holds",
                                          "RdfModelCheckWarmState": "holds"}
    checked = rdf.model_check_macros(rdf.rate_summary({**frames, "rate": faster}))
    assert checked["RdfModelCheckColdState"] == "fails" and checked["RdfModelCheckColdRatesState"] == "dec"
    assert rdf.model_check_macros(None) == {"RdfModelCheckState": "notmeasured"}
    cold_only = rdf.rate_summary({**frames, "rate": rate[rate["cache"] == "cold"]})
    assert rdf.model_check_macros(cold_only)["RdfModelCheckState"] == "cold"
    # Eq. (1) saturates at R_IO / R_1 = 100 / 29 MB/s, more than the 2 processes run, in every round alike
    saturation = rdf.report.saturation_macros(rs)
    assert saturation["RdfSaturationState"] == "met" and saturation["RdfSaturationCache"] == "cold"
    assert rdf.report.saturation_macros(None)["RdfSaturationState"] == "notmeasured"
    one = rs["table"].set_index(["cache", "processes"]).loc[("warm", 1)]
    assert one["rate"] == pytest.approx(10 / 0.3 / geometric) and one["rate_low"] < one["rate"] < one["rate_high"]
    table = rdf.rate_components_table(rs, rs["table"]).set_index("rate")
    assert r"$\pm$" in table.loc[paper.escape("R_IO, warm cache (raw bytes)"), "this run [MB/s]"]
    assert r"$\pm$" in rdf.rate_fit_table(rs).set_index("cache").loc["warm", "R(1) [MB/s]"]
    slow = raw["cache"].eq("warm") & raw["round"].eq(2)
    rs = rdf.rate_summary({**frames, "raw": raw.assign(wall_s=raw["wall_s"].where(~slow, raw["wall_s"] * 3))})
    warm = rs["estimates"]["r_io"]["warm"]
    # one round gives no interval (and its mean may differ from its one value in the last digit):
    # the figure's error bars are then the passes' min-max, never negative
    import matplotlib
    matplotlib.use("Agg")
    first = {**frames, **{part: frames[part][frames[part]["round"] == 0] for part in ("raw", "components", "rate")}}
    rdf.rate_figure(rdf.rate_summary(first))
    rdf.rate_figure(rs)
    slowed = rs["estimates"]["r_io"]["cold"]  # the cold reads did not slow: the same as before
    assert warm.relative_half_width > est["r_io"]["warm"].relative_half_width
    assert slowed.relative_half_width == pytest.approx(est["r_io"]["cold"].relative_half_width)


def _rates_by_round(r_dec, r_proc, r_io_cold, r1_cold=None):
    """A rate summary's per-round rates, each a list over the same rounds."""
    series = lambda values: pd.Series(values, index=range(len(values)))  # noqa: E731
    r1 = r1_cold or [1 / (1 / a + 1 / b + 1 / c) for a, b, c in zip(r_dec, r_proc, r_io_cold)]
    return {"by_round": {"r_dec": series(r_dec), "r_proc": series(r_proc),
                         "r_io": {"cold": series(r_io_cold), "warm": series([x * 10 for x in r_io_cold])},
                         "r1_predicted": {"cold": series(r1), "warm": series(r1)}},
            "r_io": {"cold": 1.0, "warm": 1.0}, "r1_predicted": {"cold": 1.0, "warm": 1.0}}


def test_the_slowest_limit_is_named_only_where_its_paired_intervals_say_so():
    # decompression is a tenth of the others in every round: named
    clear = _rates_by_round([20, 22, 19], [250, 260, 240], [700, 800, 750])
    assert rdf.slowest_limit(clear) == "decompression and deserialisation"
    # decompression and processing swap places from round to round: neither is named alone, and
    # the raw read, shown above both, is not a candidate
    tied = _rates_by_round([20, 26, 19], [24, 20, 23], [700, 800, 750])
    assert rdf.slowest_limit(tied) == "not separated between decompression and deserialisation and processing"


def test_the_saturation_point_is_judged_against_the_processes_by_its_interval():
    rs = _rates_by_round([20, 22, 19], [250, 260, 240], [700, 800, 750], r1_cold=[10, 11, 9.5])
    estimate, cache = rdf.saturation(rs)
    assert cache == "cold" and estimate.low < 75 < estimate.high  # 700/10, 800/11, 750/9.5 paired
    assert intervals.at_least(estimate, 12).value == "met"
    assert intervals.at_least(estimate, 75).value == "inconclusive"


def test_dask_figures_carry_the_spread_of_their_cluster_and_unpaired_ratios():
    # Dask clusters of 1 and 2 workers, three timed loops each; the compiled scan in three rounds
    dask_rows = [{"name": f"dask_w{w}", "threads": w, "npartitions": 2 * w, "wall_s": t, "cpu_s": t * w,
                  "warmup": False, "events": 1000, "files": 2}
                 for w, times in ((1, (2.0, 2.1, 1.9)), (2, (1.0, 1.1, 0.9))) for t in times]
    dask = rdf.summary(pd.DataFrame(dask_rows), ["name", "threads", "npartitions"])
    assert dask["wall_passes"].tolist() == [[2.0, 2.1, 1.9], [1.0, 1.1, 0.9]]
    scan = pd.DataFrame([{"part": "scan", "threads": t, "wall_s": w, "wall_by_round": {0: w, 1: w * 1.1, 2: w * 0.9}}
                         for t, w in ((0, 1.5), (1, 1.6), (2, 0.8))])
    table = rdf.dask_table(dask, scan).set_index("workers")
    assert r"$\pm$" in table.loc["2", "speed-up"] and table.loc["2", "speed-up"].startswith(r"\num{2}")
    assert r"$\pm$" in table.loc["1", "wall [s]"] and r"$\pm$" in table.loc["2", "C++ IMT wall [s]"]
    # a cluster with one timed loop has no interval: its cells say the value alone
    single = rdf.summary(pd.DataFrame(dask_rows[:1] + dask_rows[3:4]), ["name", "threads", "npartitions"])
    assert r"$\pm$" not in rdf.dask_table(single, scan).set_index("workers").loc["2", "speed-up"]


def test_rate_model_rates_carry_the_spread_of_their_passes():
    """A measured R(Np) whose interval across rounds is wider than the noise limit is marked in both
    rate tables."""
    size = 10_000_000
    raw = pd.DataFrame([{"cache": c, "wall_s": w, "warmup": False, "noisy": False, "bytes": size, "rep": 0}
                        for c, w in (("cold", 0.1), ("warm", 0.01))])
    components = pd.DataFrame([{"process_s": 0.02, "getentry_s": 0.2, "wall_s": 0.25, "warmup": False}])
    passes = {("cold", 1): [0.30, 0.31, 0.30], ("warm", 1): [0.20, 0.30, 0.40],  # warm, one reader: noisy
              ("cold", 2): [0.18, 0.18, 0.19], ("warm", 2): [0.16, 0.16, 0.17],
              ("cold", 3): [0.15, 0.15, 0.15], ("warm", 3): [0.13, 0.13, 0.135]}
    rate = pd.DataFrame([{"cache": c, "ttree_cache": "on", "processes": n, "wall_s": w, "warmup": False, "round": i,
                          "cpu_s": w, "read_calls": 1} for (c, n), walls in passes.items() for i, w in enumerate(walls)])
    rs = rdf.rate_summary({"bytes": size, "raw": raw, "components": components, "rate": rate, "events": 1000,
                           "cores": 2})
    noisy = rs["table"].set_index(["cache", "processes"])["noisy"]
    assert noisy[("warm", 1)] and not noisy[("cold", 1)] and not noisy[("warm", 3)]
    fits = rdf.rate_fit_table(rs).set_index("cache")
    assert fits.loc["warm", "R(1) [MB/s]"].endswith(paper.NOISY_MARK)
    assert not fits.loc["cold", "R(1) [MB/s]"].endswith(paper.NOISY_MARK)
    components_table = rdf.rate_components_table(rs, rs["table"]).set_index("rate")
    assert components_table.loc["R1 measured, warm, one reader", "this run [MB/s]"].endswith(paper.NOISY_MARK)
    assert not components_table.loc["R1 measured, cold, one reader", "this run [MB/s]"].endswith(paper.NOISY_MARK)


def test_the_rate_fit_stays_within_the_cores_and_names_a_ceiling_below_the_raw_read():
    """Eq. (1) is fitted on the process counts up to the cores only, and its asymptote is called a
    ceiling (not R_IO) where its interval lies below the raw read's."""
    size = 10_000_000
    raw = pd.DataFrame([{"cache": c, "wall_s": w * f, "warmup": False, "noisy": False, "bytes": size, "round": r}
                        for r, f in enumerate((1.0, 1.05, 0.95)) for c, w in (("cold", 0.1), ("warm", 0.01))])
    components = pd.DataFrame([{"process_s": 0.02, "getentry_s": 0.2, "wall_s": 0.25, "warmup": False, "round": r}
                               for r in range(3)])
    # 2 cores: R(1) 33, R(2) 56 MB/s; 3 and 4 processes share the cores and would pull the fit down
    walls = {1: 0.30, 2: 0.18, 3: 0.6, 4: 0.9}
    rate = pd.DataFrame([{"cache": "cold", "ttree_cache": "on", "processes": n, "wall_s": w * (1 + 0.01 * r),
                          "warmup": False, "round": r, "cpu_s": w, "read_calls": 1}
                         for r in range(3) for n, w in walls.items()])
    rs = rdf.rate_summary({"bytes": size, "raw": raw, "components": components, "rate": rate, "events": 1000,
                           "cores": 2})
    fit = rs["fits"].iloc[0]
    assert fit["points"] == 2 and fit["dof"] == 0
    assert fit["r_io"] == pytest.approx(1 / (2 * (1 / (10 / 0.18)) - 1 / (10 / 0.3)), rel=0.05)
    table = rdf.rate_fit_table(rs).set_index("cache")
    assert table.loc["cold", "Np fitted"] == "2" and "fit asymptote [MB/s]" in table.columns
    # two points, two parameters: the curve goes through them, and no uncertainty is printed (issue 45)
    for column in ("fit R1 [MB/s]", "fit asymptote [MB/s]"):
        assert r"\pm" not in table.loc["cold", column] and "(through its points)" in table.loc["cold", column]
    Fit = collections.namedtuple("Fit", "r_io r_io_sigma")
    raw_read = intervals.Estimate(100.0, 90.0, 110.0, 3)
    assert rdf.asymptote_against_raw_read(Fit(50.0, 2.0), raw_read) == "below the raw read"
    assert rdf.asymptote_against_raw_read(Fit(105.0, 10.0), raw_read) == "not below the raw read"
    assert rdf.asymptote_against_raw_read(Fit(math.inf, math.nan), raw_read) == "unbounded"


def _throttled_frames(limit_mb_s: float, scatter: float) -> dict:
    """Three rounds of a machine whose reads are throttled to 50 MB/s: one reader 33 MB/s, R(Np)
    bending to 50 by Eq. (1) over Np = 1..4 (beyond 2 cores: throttled readers wait, not compute),
    each pass off the curve by +-`scatter`; the throttled raw read measured `limit_mb_s`."""
    size = 10_000_000
    raw = pd.DataFrame([{"cache": c, "wall_s": w * f, "warmup": False, "noisy": False, "bytes": size, "round": r,
                         **({"throttle_bps": 50e6} if c == rdf.THROTTLED else {})}
                        for r, f in enumerate((1.0, 1.01, 0.99))
                        for c, w in (("cold", 0.01), ("warm", 0.005), (rdf.THROTTLED, 10 / limit_mb_s))])
    components = pd.DataFrame([{"process_s": 0.02, "getentry_s": 0.2, "wall_s": 0.25, "warmup": False, "round": r}
                               for r in range(3)])
    rate = pd.DataFrame([{"cache": rdf.THROTTLED, "ttree_cache": "on", "processes": n, "round": r, "warmup": False,
                          "cpu_s": 0.1, "read_calls": 1,
                          "wall_s": 10 / float(rdf.rate_model(n, 33.0, 50.0)) * (1 + scatter * (-1) ** (n + r))}
                         for r in range(3) for n in (1, 2, 3, 4)])
    return {"bytes": size, "raw": raw, "components": components, "rate": rate, "events": 1000, "cores": 2,
            "throttle": {"factor": 1.5, "bytes_per_s": 50_000_000, "one_reader_bytes_per_s": 33e6}}


def test_the_throttled_fit_uses_every_process_count_and_is_judged_against_the_throttled_raw_read():
    rs = rdf.rate_summary(_throttled_frames(50.0, 0.002))
    fit = rs["fits"].set_index("cache").loc[rdf.THROTTLED]
    assert fit["points"] == 4 and fit["dof"] == 2  # beyond the 2 cores too
    assert fit["r_io"] == pytest.approx(50.0, rel=0.02)
    check = rs["throttled_check"]
    assert check["verdict"] is intervals.Verdict.MET and check["limit_mb_s"] == 50.0
    # each round's asymptote over its round's raw read (the raw reads scatter by 1%)
    assert check["ratio"].processes == 3 and check["ratio"].low < 1 < check["ratio"].high
    assert check["ratio"].value == pytest.approx(1.0, rel=0.02)
    macros = rdf.throttle_macros(rs)
    assert macros["RdfThrottleState"] == "met" and macros["RdfThrottleDof"] == "2"
    # a device that read at 80 MB/s is not what the readers saturated at
    missed = rdf.rate_summary(_throttled_frames(80.0, 0.002))
    assert missed["throttled_check"]["verdict"] is intervals.Verdict.MISSED
    assert rdf.throttle_macros(missed)["RdfThrottleState"] == "missed"  # the section words it
    # passes scattered so far that the asymptote's interval is wider than the noise limit
    loose = rdf.rate_summary(_throttled_frames(50.0, 0.15))["throttled_check"]
    assert loose["verdict"] is intervals.Verdict.INCONCLUSIVE
    # the cold and warm fits still stop at the cores; no throttled runs: nothing to judge
    assert rdf.fitted_up_to("cold", 2, 6) == 2 and rdf.fitted_up_to(rdf.THROTTLED, 2, 6) == 6
    plain = _throttled_frames(50.0, 0.002)
    plain["raw"] = plain["raw"][plain["raw"]["cache"] != rdf.THROTTLED].drop(columns="throttle_bps")
    plain["rate"] = plain["rate"].assign(cache="cold")
    assert rdf.rate_summary(plain)["throttled_check"] is None
    assert rdf.throttle_macros(None)["RdfThrottleState"] == "notmeasured"
    # a round whose rate did not bend gives no asymptote: nothing to pair, inconclusive
    flat = _throttled_frames(50.0, 0.002)
    flat["rate"].loc[flat["rate"]["round"] == 0, "wall_s"] = 10 / 33.0 / flat["rate"]["processes"]
    assert rdf.rate_summary(flat)["throttled_check"]["verdict"] is intervals.Verdict.INCONCLUSIVE


def test_the_throttled_curve_is_judged_by_each_rounds_largest_distance_from_its_own_fit():
    # each round's passes lie 0.2% or 15% off Eq. (1), alternately above and below it: every
    # round's largest relative residual from its own fit, recomputed here, then their t interval
    for scatter in (0.002, 0.15):
        frames = _throttled_frames(50.0, scatter)
        rs = rdf.rate_summary(frames)
        rate = frames["rate"]
        expected = []
        for _, passes in rate.groupby("round"):
            n, r = passes["processes"].to_numpy(), 10 / passes["wall_s"].to_numpy()
            fit = rdf.fit_rate_model(n, r)
            expected.append(np.max(np.abs(rdf.rate_model(n, fit["r1"], fit["r_io"]) / r - 1)))
        residual = rs["throttled_check"]["residual"]
        assert residual.value == pytest.approx(np.mean(expected)) and residual.processes == 3
        assert residual.low <= residual.value <= residual.high
        assert residual.value < 0.01 if scatter == 0.002 else residual.value > 0.05
    # the macro prints it in percent with its bounds, what the ledger scales back (S004-saturation-model)
    printed = rdf.throttle_macros(rdf.rate_summary(_throttled_frames(50.0, 0.15)))["RdfThrottleResidual"]
    loose = rdf.rate_summary(_throttled_frames(50.0, 0.15))["throttled_check"]["residual"]
    assert printed.value == pytest.approx(100 * loose.value)
    # two process counts fit exactly: no residual to judge, and nothing printed
    n, r = np.array([1, 2]), np.array([33.0, 40.0])
    assert math.isnan(rdf.largest_residual(n, r, rdf.fit_rate_model(n, r)))
    two = _throttled_frames(50.0, 0.15)
    two["rate"] = two["rate"][two["rate"]["processes"] <= 2]
    assert not rdf.rate_summary(two)["throttled_check"]["residual"].known
    assert rdf.throttle_macros(rdf.rate_summary(two))["RdfThrottleResidual"] == "--"


def test_loading_over_processing_and_the_time_off_a_cpu_come_from_the_warm_readers_rounds():
    # GetEntry 0.2 s and processing 0.02 s in every round, times the round's factor: loading takes
    # 10 times as long; CPU time 0.24 s of a 0.25 s pass (4% off a CPU) but 0.2 s in round 1 (20%)
    frames = _model_frames(3, [1.0, 1.0, 1.0])
    frames["components"] = frames["components"].assign(
        getentry_s=[0.2, 0.22, 0.18], process_s=[0.02, 0.022, 0.018], cpu_s=[0.24, 0.2, 0.24])
    rs = rdf.rate_summary(frames)
    assert rs["load_over_process"].value == pytest.approx(10.0) and rs["load_over_process"].processes == 3
    off = rs["off_cpu_share"]
    assert off.value == pytest.approx((0.04 + 0.2 + 0.04) / 3) and off.low < off.value < off.high
    expected = intervals.mean_across([0.04, 0.2, 0.04])
    assert (off.low, off.high) == pytest.approx((expected.low, expected.high))
    one = rdf.rate_summary({**frames, "components": frames["components"].iloc[:1]})["off_cpu_share"]
    assert one.value == pytest.approx(0.04) and not one.known  # one round: no interval
    # where the readers recorded no CPU time, it is not measured (not a share of 1)
    assert not math.isfinite(rdf.rate_summary(_model_frames(3, [1.0, 1.0, 1.0]))["off_cpu_share"].value)
    # one reader's processing rate over the warm raw read (10 MB in 0.01 s), paired by round
    ratios = [10 / t / 1000 for t in (0.02, 0.022, 0.018)]
    assert rs["proc_over_io_warm"].value == pytest.approx(math.prod(ratios) ** (1 / 3))


def test_ttreecache_sharing_pairs_the_most_cold_readers_the_cores_hold_with_and_without_it():
    keys = ["cache", "ttree_cache", "processes", "round"]
    times = {("cold", t, n, r): (0.3 if t == "on" else 0.4 + 0.01 * r) / n
             for t in ("on", "off") for n in (1, 2, 4) for r in range(3)}
    per_round = pd.Series(times).rename_axis(keys)
    processes, ratio = rdf.ttree_cache_sharing(per_round, cores=2)
    assert processes == 2  # 4 outnumber the cores
    expected = intervals.paired_ratio([(0.4 + 0.01 * r) / 2 for r in range(3)], [0.15] * 3)
    assert ratio.value == pytest.approx(expected.value) and ratio.low == pytest.approx(expected.low)
    # without the off runs (the default configuration) nothing is measured, and the section says so
    on_only = per_round[per_round.index.get_level_values("ttree_cache") == "on"]
    assert rdf.ttree_cache_sharing(on_only, cores=2) == (0, intervals.UNKNOWN)
    assert rdf.sharing_macros({"ttree_cache_sharing": (0, intervals.UNKNOWN)})["RdfSharingState"] == "notmeasured"
    measured = rdf.sharing_macros({"ttree_cache_sharing": (processes, ratio)})
    assert measured["RdfSharingState"] == "measured" and measured["RdfSharingProcesses"] == "2"


@pytest.mark.parametrize("raw_mb_s", [50.0, 52.5, 80.0])
def test_the_throttle_burst_is_judged_by_the_raw_read_over_the_limit(raw_mb_s):
    """The throttled raw read's rate over its 50 MB/s limit, across the three rounds (rates
    raw_mb_s / (1, 1.01, 0.99)), against 1 + BURST_SHARE: recomputed here on the logarithms."""
    from scipy import stats

    check = rdf.rate_summary(_throttled_frames(raw_mb_s, 0.002))["throttled_check"]
    logs = np.log([raw_mb_s / f / 50.0 for f in (1.0, 1.01, 0.99)])
    half = stats.t.ppf(0.975, len(logs) - 1) * logs.std(ddof=1) / math.sqrt(len(logs))
    low, high = math.exp(logs.mean() - half), math.exp(logs.mean() + half)
    assert (check["over_limit"].low, check["over_limit"].high) == pytest.approx((low, high), rel=1e-9)
    target = 1 + rdf.BURST_SHARE
    expected = "met" if high <= target else "missed" if low > target else "inconclusive"
    assert {50.0: "met", 52.5: "inconclusive", 80.0: "missed"}[raw_mb_s] == expected  # the cases cover all three
    assert check["burst"].value == expected
    macros = rdf.throttle_macros(rdf.rate_summary(_throttled_frames(raw_mb_s, 0.002)))
    assert macros["RdfThrottleBurstState"] == expected and macros["RdfThrottleSize"] == r"\num{10}"
    assert rdf.throttle_macros(None)["RdfThrottleBurstState"] == "notmeasured"


def test_throttled_rate_model_runs_read_cold_under_the_limit(inputs, section, tmp_path, monkeypatch):
    """The throttled state on real files: every reader and the raw read ran in the throttle's
    group and read from the device (the group's device reads hold every throttled raw read's
    bytes; the test files are smaller than the burst the kernel lets through in one throttle
    slice, so their rate is not the limit's), from evicted files, and the limit is recorded with
    each pass. Skipped where reads cannot be throttled (no root, no cgroup v1)."""
    _, chosen, info = inputs
    why = io_throttle.problem(chosen["rate"][0])
    if why:
        pytest.skip(f"reads cannot be throttled here: {why}")
    rate = {**section["rate_model"], "cache_states": ["warm", rdf.THROTTLED], "ttree_cache": [True],
            "max_processes": 2, "throttle_factor": 1.5, "decide_budget_s": 0}
    params = {**section, "repetitions": 2, "warmup": 0, "rate_model": rate}
    frames = rdf.measure_rate_model(params, chosen, info, tmp_path, chosen["main"][0], progress=False)
    limit = frames["throttle"]["bytes_per_s"]
    assert limit == int(1.5 * frames["throttle"]["one_reader_bytes_per_s"])
    throttled_raw = frames["raw"][frames["raw"]["cache"] == rdf.THROTTLED]
    assert len(throttled_raw) and (throttled_raw["throttle_bps"] == limit).all()
    assert frames["throttle"]["device_bytes_read"] >= len(throttled_raw) * frames["bytes"]
    throttled = frames["rate"][frames["rate"]["cache"] == rdf.THROTTLED]
    assert set(throttled["processes"]) == {1, 2} and (throttled["resident_pages"] == 0).all()
    assert (throttled["throttle_bps"] == limit).all()
    # measured again with every run stored: reused, and nothing calibrated or throttled
    monkeypatch.setattr(rdf.io_rate_model, "throttle_rate", lambda *a: pytest.fail("calibrated for reused runs"))
    again = rdf.measure_rate_model(params, chosen, info, tmp_path, chosen["main"][0], progress=False)
    assert again["throttle"] == {"factor": 1.5}
    assert again["raw"]["wall_s"].tolist() == frames["raw"]["wall_s"].tolist()
    assert rdf.rate_summary(frames)["throttled_check"] is not None
    # seed 002's RDataFrame workflow: every throttled loop from evicted files, in the group, reading
    # from the device; the same histograms from the page cache
    workflow = frames["workflow"]
    assert set(workflow["run"]) == {"workflow_throttled", "workflow_warm"}
    assert (workflow["threads"] == rdf.io_rate_model.usable_cores()).all() and workflow["content_hash"].nunique() == 1
    from_device = workflow[workflow["cache"] == rdf.THROTTLED]
    assert (from_device["loop_cache"] == "cold").all() and (from_device["loop_resident"] == 0).all()
    assert (from_device["throttle_bps"] == limit).all() and (from_device["device_bytes"] > 0).all()
    assert (workflow[workflow["cache"] == "warm"]["loop_cache"] == "warm").all()
    assert rdf.io_rate_model.workflow_against_raw_read(rdf.rate_summary(frames)).known
    # the groups this process made are gone (only its own: another run's, or one a killed run left, may be there)
    assert not list(io_throttle.BLKIO.glob(f"throughput-read-{os.getpid()}-*"))


def _workflow_frame(device_walls: list[float], warm_walls: list[float], device_bytes: float = 20e6) -> pd.DataFrame:
    """The RDataFrame workflow's passes of three rounds: `device_bytes` from the throttled device per
    loop (two loops a sample) in device_walls seconds a sample, one loop from the page cache in warm_walls."""
    return pd.DataFrame(
        [{"cache": rdf.THROTTLED, "round": r, "wall_s": w, "loops": 2, "device_bytes": 2 * device_bytes,
          "read_zip_bytes": 4e6, "threads": 2, "warmup": False} for r, w in enumerate(device_walls)]
        + [{"cache": "warm", "round": r, "wall_s": w, "loops": 1, "device_bytes": 0, "read_zip_bytes": 4e6,
            "threads": 2, "warmup": False} for r, w in enumerate(warm_walls)]
        + [{"cache": rdf.THROTTLED, "round": 0, "wall_s": 99.0, "loops": 1, "device_bytes": device_bytes,
            "read_zip_bytes": 4e6, "threads": 2, "warmup": True}])  # a warm-up sample: left out


def test_the_rdataframe_workflow_is_set_against_the_throttled_raw_read_of_its_round():
    """Seed 002's "approaching limits of disk array" (S002-io-local-ssd-near-array-limit): the workflow's
    device rate over the throttled raw read (10 MB in 0.2, 0.202, 0.198 s: 50 MB/s), and the same bytes
    from the page cache, each paired round by round, recomputed here."""
    device_walls, warm_walls = [1.0, 1.1, 0.95], [0.1, 0.12, 0.1]
    frames = {**_throttled_frames(50.0, 0.002), "workflow": _workflow_frame(device_walls, warm_walls)}
    summary = rdf.rate_summary(frames)
    raw = [50.0 / f for f in (1.0, 1.01, 0.99)]
    expected = intervals.paired_ratio([40.0 / w for w in device_walls], raw)
    got = rdf.io_rate_model.workflow_against_raw_read(summary)
    assert (got.value, got.low, got.high) == pytest.approx((expected.value, expected.low, expected.high))
    from_cache = rdf.io_rate_model.workflow_against_raw_read(summary, "from_cache")
    assert from_cache.value == pytest.approx(intervals.paired_ratio([20.0 / w for w in warm_walls], raw).value)
    macros = rdf.report.workflow_macros(summary)
    assert macros["RdfWorkflowState"] == "measured" and macros["RdfWorkflowThreads"] == "2"
    assert macros["RdfWorkflowOverRawThrottled"].value == pytest.approx(expected.value)
    assert macros["RdfWorkflowDeviceOverRead"] == paper.number(5.0, 2)  # 20 MB a loop for 4 MB of branches
    # 20 MB a loop in 0.1 to 0.12 s from the page cache, about 4 times the 50 MB/s raw read, every round
    assert macros["RdfWorkflowCoresState"] == "higher" and rdf.report.workflow_macros(None)["RdfWorkflowCoresState"] \
        == paper.NOT_MEASURED
    slow = rdf.report.workflow_macros(rdf.rate_summary({**frames, "workflow": _workflow_frame(device_walls, [1.0, 1.1, 0.9])}))
    assert slow["RdfWorkflowCoresState"] == "lower"  # 20 MB a second: the cores, not the device, held it back
    # a kernel that could not count the device's bytes: no figure, not a zero rate
    blind = {**frames, "workflow": _workflow_frame(device_walls, warm_walls, device_bytes=-1)}
    assert not rdf.io_rate_model.workflow_against_raw_read(rdf.rate_summary(blind)).known
    # no workflow (no throttled state): nothing measured, and the section says so
    assert not rdf.io_rate_model.workflow_against_raw_read(rdf.rate_summary(_throttled_frames(50.0, 0.002))).known
    assert rdf.report.workflow_macros(None)["RdfWorkflowState"] == paper.NOT_MEASURED
    assert rdf.io_rate_model.workflow_runs(["warm"], 2) == []
    # different histograms from the device and from the page cache fail the run
    wrong = frames["workflow"].assign(content_hash=["a"] * 3 + ["b"] * 4)
    with pytest.raises(AssertionError, match="different histograms by cache state"):
        rdf.io_rate_model.check_model_passes({**_checkable(frames), "workflow": wrong}, ["f.root"])


def _checkable(frames: dict) -> dict:
    """Frames whose raw reads and readers pass check_model_passes (one checksum, one counter sum)."""
    return {**frames, "raw": frames["raw"].assign(checksum=1), "components": frames["components"].assign(counter_sum=7),
            "rate": frames["rate"].assign(counter_sum=7)}


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="no pdflatex")
def test_every_workflow_state_builds_with_its_numbers(tmp_path):
    from tex_wording import build
    frames = {**_throttled_frames(50.0, 0.002), "workflow": _workflow_frame([1.0, 1.1, 0.95], [0.1, 0.12, 0.1])}
    macros = {**rdf.report.workflow_macros(rdf.rate_summary(frames)), "RdfWorkflowState": "measured"}
    body = "\n\n".join(rf"{state}: \def\RdfWorkflowState{{{state}}}\wording{{RdfWorkflow}}."
                        for state in ("measured", "notmeasured"))
    code, log, text = build(tmp_path, "rdataframe", macros, body)
    assert code == 0, log[-2000:]
    text = " ".join(text.split())
    assert "measured: Seed 002's RDataFrame workflow meets it too: one RDataFrame with implicit multithreading on 2" \
        in text, text
    shown = re.match(r"\\num\{([^}]*)\}", str(macros["RdfWorkflowOverRawThrottled"])).group(1)
    assert f"give {shown}" in text, text
    assert "notmeasured: Seed 002's RDataFrame workflow was not read from the throttled device here" in text
    cores = "\n\n".join(rf"{state}: \def\RdfWorkflowCoresState{{{state}}}\wording{{RdfWorkflowCores}}."
                         for state in ("higher", "lower", "notseparated"))
    code, log, text = build(tmp_path, "rdataframe", macros, cores)
    assert code == 0, log[-2000:]
    text = " ".join(text.split())
    assert "higher: . From the page cache its cores take those bytes at" in text and "above unity by its interval" in text
    assert "the cores, not the device, held the workflow back" in text and "is not separated" in text


def test_the_compression_pair_is_read_from_the_page_cache_and_the_throttled_device(inputs, section, settings,
                                                                                    tmp_path):
    """Seed 002's LZ4 and LZMA files (the same events) read by as many readers as the cores, warm and throttled,
    in the model's group: their passes sum the same counters, the throttled ones ran under the limit from evicted
    files, and the figures come from them. Skipped where reads cannot be throttled (no root, no cgroup v1)."""
    root, chosen, _ = inputs
    why = io_throttle.problem(chosen["rate"][0])
    if why:
        pytest.skip(f"reads cannot be throttled here: {why}")
    both = {**section, "compressions": ["LZ4", "LZMA"]}
    files = rdf.make_inputs(both, settings["datasets"], root / "data", progress=False)
    paired = rdf.select_inputs(both, files)
    info = rdf.preflight(both, paired, tmp_path / "work")
    rate = {**section["rate_model"], "cache_states": ["warm", rdf.THROTTLED], "ttree_cache": [True],
            "max_processes": 1, "throttle_factor": 1.5, "decide_budget_s": 0}
    params = {**both, "repetitions": 2, "warmup": 0, "rate_model": rate}
    frames = rdf.measure_rate_model(params, paired, info, tmp_path, paired["main"][0], progress=False)
    passes = frames["compression_storage"]
    cores = rdf.io_rate_model.usable_cores()
    assert set(passes["run"]) == {f"comp_{c}_{s}" for c in ("LZ4", "LZMA") for s in ("warm", rdf.THROTTLED)}
    assert (passes["processes"] == cores).all() and passes["counter_sum"].nunique() == 1
    throttled = passes[passes["cache"] == rdf.THROTTLED]
    assert (throttled["throttle_bps"] == frames["throttle"]["bytes_per_s"]).all()
    assert (throttled["resident_pages"] == 0).all()
    figures = rdf.rate_summary(frames)["compression_storage"]
    assert figures["processes"] == cores and math.isfinite(figures["throttled_over_warm"].value)
    # without the throttled state, or without one of the pair, no such runs
    assert rdf.io_rate_model.compression_runs(["warm"], ["LZ4", "LZMA"], 2) == []
    assert rdf.io_rate_model.compression_runs(["warm", rdf.THROTTLED], ["LZMA"], 2) == []


def test_the_compression_pair_figures_are_paired_round_by_round():
    """LZ4's time over LZMA's in each cache state, the throttled over the warm ratio and the CPU efficiencies,
    recomputed here from three rounds; its macros, and 'notmeasured' without the pair."""
    walls = {("LZ4", "warm"): [0.10, 0.11, 0.09], ("LZMA", "warm"): [0.30, 0.31, 0.29],
             ("LZ4", rdf.THROTTLED): [1.00, 1.10, 0.95], ("LZMA", rdf.THROTTLED): [0.60, 0.62, 0.58]}
    cpus = {("LZ4", "warm"): 0.19, ("LZMA", "warm"): 0.58, ("LZ4", rdf.THROTTLED): 0.4, ("LZMA", rdf.THROTTLED): 1.1}
    passes = pd.DataFrame([{"compression": c, "cache": s, "round": r, "wall_s": w, "cpu_s": cpus[(c, s)],
                            "processes": 2, "warmup": False}
                           for (c, s), ws in walls.items() for r, w in enumerate(ws)])
    pair = rdf.io_rate_model.compression_storage(passes)
    lz4_over_lzma = {s: [walls[("LZ4", s)][r] / walls[("LZMA", s)][r] for r in range(3)]
                     for s in ("warm", rdf.THROTTLED)}
    expected = t_interval([math.log(lz4_over_lzma[rdf.THROTTLED][r] / lz4_over_lzma["warm"][r]) for r in range(3)])
    got = pair["throttled_over_warm"]
    assert (got.value, got.low, got.high) == pytest.approx(expected)
    warm = pair["lz4_over_lzma"]["warm"]
    assert warm.value == pytest.approx(math.exp(np.mean(np.log(lz4_over_lzma["warm"]))))
    efficiency = {s: [cpus[(c, s)] / (walls[(c, s)][r] * 2) for r in range(3)] for c, s in [("LZMA", rdf.THROTTLED)]}
    lz4_efficiency = [cpus[("LZ4", rdf.THROTTLED)] / (w * 2) for w in walls[("LZ4", rdf.THROTTLED)]]
    expected = t_interval([math.log(e / f) for e, f in zip(efficiency[rdf.THROTTLED], lz4_efficiency)])
    got = pair["lzma_over_lz4_efficiency"]
    assert (got.value, got.low, got.high) == pytest.approx(expected)
    macros = rdf.report.compression_storage_macros({"compression_storage": pair})
    assert macros["RdfCompStorageState"] == "measured" and macros["RdfCompStorageProcesses"] == "2"
    assert macros["RdfCompThrottledOverWarm"].value == pytest.approx(pair["throttled_over_warm"].value)
    assert macros["RdfCompEffLzmaOverLzFour"].low == pytest.approx(got.low)
    assert rdf.report.compression_storage_macros({"compression_storage": None})["RdfCompStorageState"] == \
        paper.NOT_MEASURED
    assert rdf.io_rate_model.compression_storage(passes.iloc[:0]) is None


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="no pdflatex")
def test_every_compression_storage_state_builds_with_its_numbers(tmp_path):
    from tex_wording import build, printed
    pair = {"processes": 2, "lz4_over_lzma": {"warm": intervals.Estimate(0.44, 0.42, 0.46, 3),
                                              rdf.THROTTLED: intervals.Estimate(0.97, 0.95, 0.99, 3)},
            "throttled_over_warm": intervals.Estimate(2.2, 2.1, 2.3, 3),
            "efficiency": {("LZ4", rdf.THROTTLED): intervals.Estimate(0.3, 0.29, 0.31, 3),
                           ("LZMA", rdf.THROTTLED): intervals.Estimate(0.66, 0.65, 0.67, 3)},
            "lzma_over_lz4_efficiency": intervals.Estimate(2.2, 2.1, 2.3, 3)}
    macros = rdf.report.compression_storage_macros({"compression_storage": pair})
    body = "\n\n".join(rf"{state}: \def\RdfCompStorageState{{{state}}}\wording{{RdfCompStorage}}."
                        for state in ("measured", "notmeasured"))
    code, log, text = build(tmp_path, "rdataframe", macros, body)
    assert code == 0, log[-2000:]
    text = " ".join(text.split())
    assert ("measured: Seed 002's compressions meet the same device: 2 readers" in text
            and f"LZ4 takes {printed(paper.number(0.44))}" in text
            and f"LZMA's {printed(paper.number(2.2))}" in text), text
    assert "notmeasured: Seed 002's compressions were not read from the throttled device here" in text


def test_several_readers_against_one_are_paired_round_by_round_up_to_the_cores():
    # seed 004's "several processes raise the aggregate rate" (S004-multicore-effective) and its
    # linearity where R_1 << R_IO (S004-linear-when-io-fast): warm, the most readers the cores hold
    frames = _model_frames(3, [1.0, 1.1, 0.9])  # one reader 0.25 s x that per round, two readers 0.15 s
    summary = rdf.rate_summary(frames)
    processes, speedup = summary["cores_speedup"]
    expected = intervals.paired_ratio([0.25 * f for f in (1.0, 1.1, 0.9)], [0.15] * 3)
    assert processes == 2 and (speedup.value, speedup.low, speedup.high) == pytest.approx(
        (expected.value, expected.low, expected.high))
    macros = rdf.report.saturation_macros(summary)
    assert macros["RdfRateCoresProcesses"] == "2" and macros["RdfRateCoresSpeedup"].value == pytest.approx(expected.value)
    assert macros["RdfRateCoresEfficiency"].value == pytest.approx(expected.value / 2)
    # one core: no count from 2 to the cores, nothing to compare
    alone = rdf.rate_summary({**frames, "cores": 1})
    assert math.isnan(alone["cores_speedup"][1].value)
    assert (rdf.report.saturation_macros(alone)["RdfRateCoresProcesses"],
            rdf.report.saturation_macros(alone)["RdfRateCoresSpeedup"]) == ("--", "--")
    assert rdf.report.saturation_macros(None)["RdfRateCoresSpeedup"] == "--"


def test_ttreecaches_read_calls_are_one_readers_with_it_over_without_it_paired_by_round():
    # seed 004's "TTreeCache reduces the accesses to disks" (S004-ttreecache-fewer-accesses)
    frames = _model_frames(3, [1.0, 1.0, 1.0])
    assert math.isnan(rdf.rate_summary(frames)["read_calls_ratio"].value)  # TTreeCache on only: not measured
    assert rdf.report.saturation_macros(rdf.rate_summary(frames))["RdfReadCallsState"] == "notmeasured"
    without = [400, 500, 320]  # read calls of one reader without TTreeCache, per round
    off = pd.DataFrame([{"run": f"rate_{c}_off_np{n}", "cache": c, "ttree_cache": "off", "processes": n,
                         "wall_s": 0.3, "warmup": False, "round": r, "cpu_s": 0.1, "read_calls": without[r] * n,
                         "look": 0} for r in range(3) for c in ("cold", "warm") for n in (1, 2)])
    on = frames["rate"].assign(read_calls=[10, 20] * 6)  # 10 with it, for one reader
    summary = rdf.rate_summary({**frames, "rate": pd.concat([on, off], ignore_index=True)})
    ratio, expected = summary["read_calls_ratio"], intervals.paired_ratio([10] * 3, without)
    assert (ratio.value, ratio.low, ratio.high) == pytest.approx((expected.value, expected.low, expected.high))
    macros = rdf.report.saturation_macros(summary)
    assert macros["RdfReadCallsState"] == "measured" and macros["RdfReadCallsOnOverOff"].value == pytest.approx(ratio.value)
    assert rdf.report.saturation_macros(None)["RdfReadCallsState"] == "notmeasured"


def test_seed002s_compression_trade_off_is_sizes_from_the_files_and_times_paired_by_round():
    # S002-compression-tradeoff: LZMA's files the smallest and its analysis the slowest, ZSTD between,
    # LZ4 the largest and fastest; each time ratio paired round by round (the compressions are one group)
    sizes, times = {"LZMA": 100, "ZSTD": 130, "LZ4": 190}, {"LZMA": 3.0, "ZSTD": 1.2, "LZ4": 1.0}
    drift = [1.0, 1.5, 0.8]  # every compression slower or faster alike in a round
    rows = [{"part": "compression", "compression": c, "threads": 2, "wall_s": times[c] * drift[r], "cpu_s": 1.0,
             "warmup": False, "round": r, "events": 1000, "file_bytes": sizes[c], "read_zip_bytes": sizes[c] / 5}
            for r in range(3) for c in sizes]
    rows += [{**row, "part": "scan", "compression": "LZMA", "threads": 0} for row in rows[:1]]
    table = rdf.summary(pd.DataFrame(rows), ["part", "compression", "threads"])
    macros = rdf.report.compression_macros(table, ["LZMA", "ZSTD", "LZ4"], 2)
    assert (macros["RdfSizeZstdOverLzma"].value, macros["RdfSizeLzFourOverZstd"].value) == pytest.approx((1.3, 190 / 130))
    for name, expected in (("RdfTimeLzmaOverZstd", 2.5), ("RdfTimeZstdOverLzFour", 1.2)):
        figure = macros[name]  # the drift cancels: every round's ratio the same, an interval of no width
        assert (figure.value, figure.low, figure.high, figure.rounds) == pytest.approx((expected, expected, expected, 3))
    left_out = rdf.report.compression_macros(table, ["LZMA", "LZ4"], 2)
    assert left_out["RdfTimeLzmaOverZstd"] == left_out["RdfSizeLzFourOverZstd"] == "--"
    assert left_out["RdfSizeLzFourOverLzma"].value == pytest.approx(1.9)

"""RDataFrame experiment: kernels agree across threads and methods, Dask agrees with C++, the rate
model's readers add up, fits recover known parameters, and bad inputs stop before any event loop."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from throughput import config, datasets, harness
from throughput.experiments import rdataframe as rdf

EVENTS = 200
TINY = {"files": 2, "events_per_file": EVENTS, "compressions": ["LZMA"], "compression_files": 1,
        "histogram_counts": [1, 3], "rate_model": {"files": 2}}


@pytest.fixture(scope="module", autouse=True)
def kernels_built():
    missing = [k for k in rdf.KERNELS if not (harness.kernels_dir() / k).is_file()]
    if missing:
        pytest.fail(f"kernels not built in {harness.kernels_dir()}: {missing} (run kernels/build.sh)")


@pytest.fixture(scope="module")
def settings():
    return config.validate({"repetitions": 1, "warmup": 0, "rdataframe": TINY}, check_resources=False)


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


def _bench(files, tmp_path, name, **args):
    listing = tmp_path / f"{name}.txt"
    listing.write_text("\n".join(files) + "\n")
    output = tmp_path / f"{name}.root"
    defaults = {"file-list": listing, "reps": 2, "warmup": 0, "pdf-count": 102, "collection": "Jet",
                "output": output}
    run = harness.run_kernel("rdf_bench", {**defaults, **args})
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


def test_missing_file_and_branch_are_named_before_any_event_loop(inputs, tmp_path):
    _, chosen, _ = inputs
    missing = str(tmp_path / "absent.root")
    with pytest.raises(harness.KernelError, match="absent.root"):
        _bench([chosen["main"][0], missing], tmp_path, "missing", workload="analysis")
    with pytest.raises(harness.KernelError, match="no branch 'nMuonn'"):
        _bench(chosen["main"], tmp_path, "branch", workload="pdf", collection="Muonn")
    with pytest.raises(harness.KernelError, match="--method"):
        _bench(chosen["main"], tmp_path, "method", workload="pdf", method="histo4d")
    assert not list(tmp_path.glob("*.root*")), "a failed run left an output behind"


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

def test_dask_histograms_agree_with_the_compiled_sequential_run(inputs, section, tmp_path):
    root, chosen, info = inputs
    params = {**section, "dask": {**section["dask"], "max_workers": 1}}
    frame = rdf.measure_dask(params, chosen, info, tmp_path, progress=False)
    assert list(frame["name"].unique()) == ["dask_w1"] and frame["events"].eq(2 * EVENTS).all()
    _, reference = _bench(chosen["main"], tmp_path, "cpp", workload="analysis", threads=0)
    result = rdf.compare_histograms(reference, rdf.load_histograms(tmp_path / "histograms" / "dask_w1.root"),
                                    1e-9, "dask")
    assert result["histograms"] == 7


def test_bad_scheduler_fails_fast_naming_key_and_address(inputs, section, tmp_path):
    _, chosen, _ = inputs
    address = "tcp://127.0.0.1:9"  # nothing listens on the discard port here
    start = time.monotonic()
    problem = rdf.scheduler_problem(address, 2)
    assert "'rdataframe.dask.scheduler'" in problem and address in problem
    with pytest.raises(rdf.SchedulerError, match="rdataframe.dask.scheduler.*127.0.0.1:9"):
        rdf.preflight({**section, "dask": {**section["dask"], "scheduler": address, "connect_timeout_s": 2}},
                      chosen, tmp_path)
    assert time.monotonic() - start < 15
    assert "not a scheduler address" in rdf.scheduler_problem("no-port-here", 2)
    with pytest.raises(config.ConfigError, match="'rdataframe.dask.scheduler' = 'tcp://127.0.0.1:9'"):
        config.validate({"rdataframe": {"dask": {"scheduler": address, "connect_timeout_s": 2}}})
    assert not (tmp_path / "raw").exists()


def test_config_checks_threads_against_the_cores():
    cores = config.usable_cores()
    with pytest.raises(config.ConfigError, match=f"'rdataframe.max_threads' = {cores + 1}"):
        config.validate({"rdataframe": {"max_threads": cores + 1}})
    asked = config.validate({"rdataframe": {"max_threads": 256, "fit_to_cores": True}})["rdataframe"]
    fitted = rdf.resolve_counts(asked)
    assert fitted["max_threads"] == cores and fitted["rate_model"]["max_processes"] == cores
    assert rdf.resolve_counts(config.validate({})["rdataframe"])["dask"]["max_workers"] == cores
    with pytest.raises(config.ConfigError, match="'rdataframe.pdf_methods'"):
        config.validate({"rdataframe": {"pdf_methods": ["histo3d"]}})


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
    assert run.validation["bytes"] == sum(Path(f).stat().st_size for f in chosen["rate"])
    assert run.timings["resident_before"].eq(0).all()


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
    primer = str(datasets.source_path(config.validate({}, check_resources=False)["datasets"]))
    one = rdf.run_processes(rdf.split_ranges(entries, chosen["rate"], 1), 1 << 20, primer)
    two = rdf.run_processes(rdf.split_ranges(entries, chosen["rate"], 2), 0)
    assert one["entries"] == two["entries"] == sum(entries.values())
    assert one["counter_sum"] == two["counter_sum"] > 0
    assert two["read_calls"] > one["read_calls"]  # TTreeCache off: many small reads
    assert two["wall_s"] >= two["fastest_s"] > 0


def test_a_failing_reader_is_reported(tmp_path):
    with pytest.raises(harness.KernelError, match="absent.root"):
        rdf.run_processes([[(0, 10, str(tmp_path / "absent.root"))]], 0)


# --- fits and comparisons -----------------------------------------------------------------------

def test_rate_model_fit_recovers_known_rates():
    processes = np.arange(1, 9)
    rates = rdf.rate_model(processes, 40.0, 200.0)
    fit = rdf.fit_rate_model(processes, rates)
    assert fit["r1"] == pytest.approx(40.0) and fit["r_io"] == pytest.approx(200.0) and fit["dof"] == 6
    linear = rdf.fit_rate_model(processes, 40.0 * processes)  # no saturation: R_IO unbounded
    assert linear["r1"] == pytest.approx(40.0) and linear["r_io"] == float("inf")


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
        rdf.compare_histograms(reference, {"met": (counts[0] + [0, 0, 1], counts[1])}, 1e-9, "run x")
    nudged = {"pdf_000": (weights[0] * (1 + np.array([0, 1e-15, 0])), weights[1])}
    result = rdf.compare_histograms(reference, nudged, 1e-9, "order")
    assert not result["identical"] and 0 < result["max_rel_diff"] < 1e-9
    with pytest.raises(rdf.HistogramMismatch, match="pdf_000"):
        rdf.compare_histograms(reference, {"pdf_000": (weights[0] * 1.01, weights[1])}, 1e-9, "run y")
    with pytest.raises(rdf.HistogramMismatch, match="not in the reference"):
        rdf.compare_histograms(reference, {"other": counts}, 1e-9, "run z")

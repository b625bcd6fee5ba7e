"""Memory-bandwidth kernels: every build validates, and every method gives the same checksum."""
from __future__ import annotations

import math
import time
from pathlib import Path

import pandas as pd
import pytest

from conftest import loops_follow_the_calibration_rule, printed_with_interval
from throughput.core import harness, intervals, noise
from throughput.report import paper
from throughput.experiments import memory_bandwidth as mb
from throughput.experiments.memory_bandwidth import analysis as mb_analysis, measuring as mb_measuring
from throughput.experiments.memory_bandwidth import methods as mb_methods, report as mb_report
from throughput.experiments.memory_bandwidth.vocabulary import FROM_FILE, IN_CACHE, IN_CACHE_VALUES

N = 10001  # not a multiple of the init period nor of the thread count
REPS, WARMUP = 2, 1
OPTS = ("O0", "O1", "O2", "O3")
MODES = ("inplace", "immutable")


def _passes(mode: str) -> int:
    return WARMUP + REPS if mode == "inplace" else 1


# checked by conftest's built_kernels; rdf_raw_read and page_cache: the hierarchy's cold file read
KERNELS_USED = [f"add_constant_{o}" for o in OPTS] + ["stream_O3", "rdf_raw_read", "page_cache"]



# --- expected_checksum itself -----------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2, 999, 1000, 1001, 2500, N])
@pytest.mark.parametrize("mode, passes", [("inplace", 1), ("inplace", 3), ("immutable", 1), ("immutable", 5)])
def test_expected_checksum_matches_direct_sum(n, mode, passes):
    initial = sum(i % 1000 for i in range(n))
    added = n * mb.CONSTANT * (passes if mode == "inplace" else 1)
    assert mb.expected_checksum(n, mode, passes) == float(initial + added)


# --- C++ kernels ------------------------------------------------------------------------------

@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("opt", OPTS)
def test_add_constant_checksum(opt, mode, threads):
    run = harness.run_kernel(f"add_constant_{opt}", {"n": N, "reps": REPS, "warmup": WARMUP,
                                                     "threads": threads, "mode": mode,
                                                     "constant": int(mb.CONSTANT)})
    assert run.validation["ok"] is True
    assert run.validation["wrong_values"] == 0
    assert run.validation["checksum"] == mb.expected_checksum(N, mode, _passes(mode))
    assert run.build_info["opt"] == opt
    assert f"-{opt}" in run.build_info["cxx_flags"]
    t = run.timings
    assert len(t) == WARMUP + REPS
    assert int(t["warmup"].sum()) == WARMUP
    assert set(t["opt"]) == {opt} and set(t["mode"]) == {mode}
    assert set(t["threads"]) == {threads} and set(t["n"]) == {N}


@pytest.mark.parametrize("mode", MODES)
def test_add_constant_samples_repeat_the_pass_to_their_minimum_length(mode):
    # the warm-up pass is timed alone; each sample then repeats the pass as often as the samples
    # before it say reach 20 ms (a sample that fell short raises the loops of the next), and the
    # exact check counts every pass made
    run = harness.run_kernel("add_constant_O3", {"n": N, "reps": 3, "warmup": 1, "mode": mode,
                                                 "min-sample-s": 0.02})
    t = run.timings
    warm, timed = t[t["warmup"]], t[~t["warmup"]]
    assert list(warm["loops"]) == [1] and (timed["loops"] > 1).any()
    assert loops_follow_the_calibration_rule(t, 1, 0.02), t[["loops", "wall_s"]].to_dict("list")
    assert (t["bytes_moved"] == 16 * N * t["loops"]).all()
    passes = int(t["loops"].sum()) if mode == "inplace" else 1
    assert run.validation["checksum"] == mb.expected_checksum(N, mode, passes)


def test_stream_samples_repeat_each_operation_and_still_validate():
    run = harness.run_kernel("stream_O3", {"n": N, "reps": 2, "warmup": 1, "min-sample-s": 0.01})
    timed = run.timings[~run.timings["warmup"]]
    assert run.validation["ok"] is True and (timed["loops"] > 1).any()
    # each operation calibrated on its own, its loops never lowered
    assert all(loops.is_monotonic_increasing for _, loops in timed.groupby("mode")["loops"])


def test_a_sample_that_waited_for_a_cpu_is_taken_again_and_every_take_is_checked(contended_core):
    args = {"n": N, "reps": 3, "warmup": 1, "mode": "inplace", "min-sample-s": 0.2}  # many time slices
    rule = harness.Retakes(max_share=0.02, max_retakes=2)
    run = harness.run_kernel("add_constant_O3", {**args, **rule.kernel_args()}, core=contended_core)
    t = run.timings
    timed = t[~t["warmup"]]
    columns = timed[["loops", "wall_s", "run_delay_s", "sample_retakes"]].to_dict("list")
    # a kept take waited at most 2% of it, unless the retakes were spent; with the hog beside it a
    # sample waits about half its time (one whose warm-up was delayed, calibrated too short, may not)
    delayed = timed["run_delay_s"] > rule.max_share * timed["wall_s"]
    assert (~delayed | (timed["sample_retakes"] == 2)).all() and timed["sample_retakes"].le(2).all(), columns
    assert (delayed & (timed["sample_retakes"] == 2)).any(), columns
    assert list(t[t["warmup"]]["sample_retakes"]) == [0]
    # the in-place check counts the passes of every take, kept or not
    assert run.validation["checksum"] == mb.expected_checksum(N, "inplace", harness.passes_made(t))
    assert harness.passes_made(t) > int(t["loops"].sum())
    # without the rule, the same disturbance is kept and recorded
    run = harness.run_kernel("add_constant_O3", args, core=contended_core)
    assert (run.timings["sample_retakes"] == 0).all() and (run.timings["run_delay_s"] > 0).any()


@pytest.mark.parametrize("kernel", ["add_constant_O3", "stream_O3"])
@pytest.mark.parametrize("option, value", [("max-run-delay-share", "1"), ("max-run-delay-share", "-0.1"),
                                           ("max-sample-retakes", "-1")])
def test_a_bad_retake_option_is_named(kernel, option, value):
    with pytest.raises(harness.KernelError, match=f"--{option}"):
        harness.run_kernel(kernel, {"n": N, "reps": 1, option: value})


def test_python_samples_repeat_the_call_to_their_minimum_length():
    frame, outputs = harness.time_python(lambda: time.sleep(0.002), repetitions=3, warmup=1, min_sample_s=0.02)
    # calibrated on the warm-up call as it lasted here (a 2 ms sleep lasts longer on a busy host)
    assert frame["loops"].tolist()[:2] == [1, math.ceil(1.1 * 0.02 / frame["wall_s"][0])]
    assert (frame["loops"][1:] > 1).all() and frame["loops"].is_monotonic_increasing
    assert len(outputs) == frame["loops"].sum() and loops_follow_the_calibration_rule(frame, 1, 0.02)
    with pytest.raises(ValueError, match="min_sample_s"):
        harness.time_python(lambda: None, 1, 0, min_sample_s=-1)


@pytest.mark.parametrize("method", ["numpy", "numba"])
def test_python_methods_check_every_pass_of_their_samples(method):
    # 0.05 s: a pass of N values takes microseconds, so even a warm-up delayed by a busy host
    # calibrates the samples to several passes
    if method == "numpy":
        frame, checksum = mb_methods._numpy_method("inplace", N, 2, 1, min_sample_s=0.05)
    else:
        frame, checksum = mb_methods._numba_method("inplace", N, 1, 2, 1, min_sample_s=0.05)
    assert (frame["loops"][1:] > 1).all()
    assert checksum == mb.expected_checksum(N, "inplace", int(frame["loops"].sum()))


def test_add_constant_other_constant():
    run = harness.run_kernel("add_constant_O2", {"n": N, "reps": 1, "warmup": 0, "mode": "inplace",
                                                 "constant": 3})
    base = mb.expected_checksum(N, "inplace", 0)
    assert run.validation["checksum"] == base + 3 * N


def test_add_constant_rejects_fractional_constant():
    with pytest.raises(harness.KernelError, match="--constant"):
        harness.run_kernel("add_constant_O3", {"n": 100, "constant": 0.5})


@pytest.mark.parametrize("opt", OPTS)
def test_add_constant_corrupt_fails_every_build(opt):
    with pytest.raises(harness.KernelError, match="validation failed"):
        harness.run_kernel(f"add_constant_{opt}", {"n": N, "reps": 1, "warmup": 0, "corrupt-for-test": 1})


@pytest.mark.parametrize("threads", [1, 2])
def test_stream_validates(threads):
    run = harness.run_kernel("stream_O3", {"n": N, "reps": REPS, "warmup": WARMUP, "threads": threads})
    assert run.validation["ok"] is True
    assert run.validation["wrong_values"] == 0
    assert run.build_info["opt"] == "O3"
    assert run.build_info["kernel"] == "stream"
    t = run.timings
    assert len(t) == 4 * (WARMUP + REPS)
    assert sorted(set(t["mode"])) == sorted(mb.STREAM_OPS)
    assert int(t["warmup"].sum()) == 4 * WARMUP
    per_op = t.groupby("mode")["bytes_moved"].first()
    assert per_op["copy"] == per_op["scale"] == 16 * N
    assert per_op["add"] == per_op["triad"] == 24 * N
    # STREAM's replay: a = b + 3c each pass, starting from a=1, b=2, c=0
    a, b, c = 1.0, 2.0, 0.0
    for _ in range(WARMUP + REPS):
        c = a
        b = 3.0 * c
        c = a + b
        a = b + 3.0 * c
    assert run.validation["checksum"] == pytest.approx(N * a, rel=1e-12)


# --- Python methods ---------------------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
def test_numpy_method_matches_kernel(mode):
    frame, checksum = mb_methods._numpy_method(mode, N, REPS, WARMUP)
    kernel = harness.run_kernel("add_constant_O3", {"n": N, "reps": REPS, "warmup": WARMUP, "mode": mode})
    assert checksum == kernel.validation["checksum"] == mb.expected_checksum(N, mode, _passes(mode))
    assert len(frame) == WARMUP + REPS and int(frame["warmup"].sum()) == WARMUP


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("mode", MODES)
def test_numba_method_matches_kernel(mode, threads):
    frame, checksum = mb_methods._numba_method(mode, N, threads, REPS, WARMUP)
    kernel = harness.run_kernel("add_constant_O3", {"n": N, "reps": REPS, "warmup": WARMUP, "mode": mode,
                                                    "threads": threads})
    assert checksum == kernel.validation["checksum"] == mb.expected_checksum(N, mode, _passes(mode))
    assert len(frame) == WARMUP + REPS and int(frame["warmup"].sum()) == WARMUP


def test_python_check_rejects_wrong_output():
    import numpy as np
    out = mb_methods._initial(N) + 1.0
    assert mb_methods._check(out, N, "immutable", 1, "test") == mb.expected_checksum(N, "immutable", 1)
    out[5] += 1.0
    with pytest.raises(AssertionError, match="1 of 10001 values wrong, the first at index 5: 7.0 != 6.0"):
        mb_methods._check(out, N, "immutable", 1, "test")
    assert np.array_equal(mb_methods._initial(2500, chunk=7), np.arange(2500) % 1000)


@pytest.mark.parametrize("index", [0, 4242, N - 1])
def test_python_check_catches_one_wrong_element_that_keeps_the_sum(index):
    # Two compensating errors leave out.sum() right: only an element-wise check sees them.
    out = mb_methods._initial(N) + 3 * mb.CONSTANT
    mb_methods._check(out, N, "inplace", 3, "test", chunk=1000)
    other = (index + 1) % N
    out[index] += 2.0
    out[other] -= 2.0
    assert out.sum() == mb.expected_checksum(N, "inplace", 3)
    with pytest.raises(AssertionError, match=f"2 of {N} values wrong, the first at index {min(index, other)}"):
        mb_methods._check(out, N, "inplace", 3, "test", chunk=1000)


def test_python_check_catches_a_changed_input_and_a_wrong_shape():
    a = mb_methods._initial(N)
    out = a + mb.CONSTANT
    assert mb_methods._check_outputs(a, out, N, "immutable", 1, "test") == mb.expected_checksum(N, "immutable", 1)
    a[7] = 0.5
    with pytest.raises(AssertionError, match="test \\(its input\\).*first at index 7: 0.5 != 7.0"):
        mb_methods._check_outputs(a, out, N, "immutable", 1, "test")
    with pytest.raises(AssertionError, match="shape"):
        mb_methods._check(out[:-1], N, "immutable", 1, "test")


# --- check_agreement --------------------------------------------------------------------------

def _agreement_frame(numba_inplace: float | None = None) -> pd.DataFrame:
    good = {m: mb.expected_checksum(N, m, _passes(m)) for m in MODES}
    rows = []
    for method in ("C++", "numpy", "numba"):
        for mode in MODES:
            value = good[mode]
            if method == "numba" and mode == "inplace" and numba_inplace is not None:
                value = numba_inplace
            rows += [{"method": method, "mode": mode, "checksum": value}] * 2
    # STREAM has its own checksum and is left out of the comparison
    rows += [{"method": "STREAM", "mode": op, "checksum": 123.0} for op in mb.STREAM_OPS]
    return pd.DataFrame(rows)


def test_check_agreement_passes_when_equal():
    mb.check_agreement(_agreement_frame())


def test_check_agreement_counts_each_processs_own_passes():
    # calibrated samples: each process made its own number of in-place passes
    rows = [{"method": m, "mode": mode, "n": N, "passes_made": p, "checksum": mb.expected_checksum(N, mode, p)}
            for m, p in (("C++", 7), ("numpy", 12), ("numba", 3)) for mode in MODES]
    mb.check_agreement(pd.DataFrame(rows))
    rows[0]["checksum"] += 1.0
    with pytest.raises(AssertionError, match="methods disagree for inplace"):
        mb.check_agreement(pd.DataFrame(rows))


def test_check_agreement_raises_on_disagreement():
    with pytest.raises(AssertionError, match="inplace"):
        mb.check_agreement(_agreement_frame(numba_inplace=mb.expected_checksum(N, "inplace", 3) + 1))


def test_check_agreement_ignores_stream_in_same_mode_name():
    frame = pd.DataFrame({"method": ["C++", "numpy", "STREAM"], "mode": ["inplace"] * 3,
                          "checksum": [10.0, 10.0, 99.0]})
    mb.check_agreement(frame)
    frame.loc[1, "checksum"] = 11.0
    with pytest.raises(AssertionError):
        mb.check_agreement(frame)


# --- the experiment: interleaved groups, flags, the repeatability benchmark -----------------------

PARAMS = {"n_values": N, "opt_levels": ["O0", "O3"], "max_threads": 2,
          "python_methods": ["numpy"], "repetitions": 3, "warmup": WARMUP}


def test_the_runs_a_ratio_compares_are_one_interleaved_group_per_thread_count(tmp_path):
    groups = mb.groups(PARAMS)
    assert [g.name for g in groups] == ["1 thread", "2 threads"]
    assert {r["name"] for r in groups[0].runs} == {
        "Cpp_inplace_O0_t1", "Cpp_inplace_O3_t1", "Cpp_immutable_O0_t1", "Cpp_immutable_O3_t1",
        "STREAM_all_O3_t1", "numpy_inplace_na_t1", "numpy_immutable_na_t1"}
    settings = noise.Settings(samples_per_process=2, min_sample_s=0.005, max_remeasures=0)
    frame = mb.measure_runs(PARAMS, tmp_path, settings, progress=False)
    mb.check_agreement(frame)
    measured = frame[~frame["warmup"]]
    # every run has two calibrated samples per round, and every pass its load
    assert all(rounds == [0, 0, 1, 1, 2, 2] for rounds in measured.groupby(["run", "mode"])["round"].apply(sorted))
    assert (measured["loops"] >= 1).all() and (measured.groupby("run")["loops"].max() > 1).all()
    # every C++ array of 2 MiB or more asked for transparent huge pages; what it got is recorded
    assert (measured["huge_page_bytes"] >= -1).all()
    assert measured[["load_avg_1min", "others_cores", "steal_fraction"]].notna().all().all()
    table = mb.summary(frame)
    assert table["noisy"].dtype == bool and table["cv"].notna().all()
    # a noisy STREAM scale run flags every ratio taken against it, and only those
    table["noisy"] = (table["method"] == "STREAM") & (table["threads"] == 2)
    ratios = mb.ratio_table(table)
    assert (ratios["noisy"] == (ratios["threads"] == 2)).all()


def test_repeatability_judges_every_cell_by_its_intervals(tmp_path, monkeypatch):
    from throughput import repeatability

    # samples of 5 ms and no re-measure keep this check of the comparison short
    mb.measure_runs(PARAMS, tmp_path / "a", noise.Settings(min_sample_s=0.005, max_remeasures=0), progress=False)
    table = repeatability.read_run(tmp_path / "a")
    same = repeatability.compare(table, table)
    # a run against itself: ratio 1, never a difference; agreeing where its intervals are narrow enough
    assert (same["ratio"] == 1).all() and (same["verdict"] != "DIFFERS").all()
    # half the rate everywhere, every interval narrowed to its value; one noisy run is judged all the same
    slower = table.copy()
    for rate in ("ghz", "gb_s"):
        slower[rate] *= 0.5
        slower[f"{rate}_low"] = slower[f"{rate}_high"] = slower[rate]
    slower["gb_s_by_round"] = [{r: 0.5 * v for r, v in rounds.items()} for rounds in slower["gb_s_by_round"]]
    slower.loc[slower["method"] == "numpy", "noisy"] = True
    narrowed = table.copy()
    for rate in ("ghz", "gb_s"):
        narrowed[f"{rate}_low"] = narrowed[f"{rate}_high"] = narrowed[rate]
    assert (repeatability.compare(narrowed, narrowed)["verdict"].isin(["agrees", "too wide"])).all()
    verdicts = repeatability.compare(narrowed, slower).set_index("cell")["verdict"]
    # every -O cell differs; the ratios are unchanged by halving both sides (their intervals, from
    # the rounds, are still there: agreeing or too wide, never differing)
    assert (verdicts[verdicts.index.str.startswith(("inplace -", "immutable -"))] == "DIFFERS").all()
    assert verdicts["numpy inplace t1"] != "DIFFERS"
    # under 90% of the judged cells agreeing fails, whatever was flagged
    monkeypatch.setattr(repeatability, "read_run", lambda raw: {"a": narrowed, "b": slower}[Path(raw).name])
    assert repeatability.main([str(tmp_path / "a"), str(tmp_path / "b")]) == 1
    # a run whose every figure is exactly known (the same rate in every round) agrees with itself
    exact = narrowed.copy()
    exact["gb_s_by_round"] = [dict.fromkeys(rounds, rate) for rounds, rate in zip(exact["gb_s_by_round"], exact["gb_s"])]
    monkeypatch.setattr(repeatability, "read_run", lambda raw: exact)
    assert repeatability.main([str(tmp_path / "a"), str(tmp_path / "a")]) == 0


def _single_thread(rates: dict[tuple[str, str], list[float]]) -> pd.DataFrame:
    """Summary rows of one-thread C++ runs from each run's GB/s in rounds 0, 1, 2, ... (rates as
    GB/s and GHz alike: the verdict reads only their ratios)."""
    rows = []
    for (mode, opt), by_round in rates.items():
        estimate = intervals.across_processes(by_round)
        rows.append({"method": "C++", "threads": 1, "mode": mode, "opt": opt, "gb_s_by_round": dict(enumerate(by_round)),
                     **{f"{rate}{end}": value for rate in ("ghz", "gb_s")
                        for end, value in (("", estimate.value), ("_low", estimate.low), ("_high", estimate.high))}})
    return pd.DataFrame(rows)


def test_opt_verdict_ranks_levels_only_where_their_paired_interval_excludes_one():
    # -O1..-O3 a few percent apart, each round's disturbance shared by all three (they ran in the same
    # rounds) and larger than their differences: their paired ratios still separate them
    rounds = [1.0, 0.7, 1.2, 0.9, 1.1]
    shared = {(mode, opt): [r * (1 + 0.03 * k) for r in rounds] for mode in mb.MODES
              for k, opt in enumerate(("O1", "O2", "O3"))}
    verdict = mb.opt_verdict(_single_thread(shared))
    assert verdict["inplace"]["state"] == "ranked" and verdict["inplace"]["fastest"] == "O3"
    assert verdict["inplace"]["behind"] == ["O1", "O2"] and verdict["inplace"]["apart"] == pytest.approx(0.06)
    # the same levels with noise of their own in every round: not ranked
    noise = {"O1": [1.0, 1.1, 0.9, 1.05, 0.95], "O2": [0.95, 1.1, 1.0, 0.9, 1.1], "O3": [1.1, 0.9, 1.05, 1.0, 0.96]}
    unranked = mb.opt_verdict(_single_thread({(mode, opt): noise[opt] for mode in mb.MODES for opt in noise}))
    assert [unranked[mode]["state"] for mode in mb.MODES] == ["unranked", "unranked"], unranked


def test_opt_verdict_tests_every_pair_at_once():
    # -O3 ahead of -O2 by about 2%: its paired interval clears unity at 95% alone, not at the level
    # of three pairs tested at once (a level picked by its point value and then tested on the same
    # rounds was the winner's curse); -O1 is clearly behind both
    base = [1.0, 0.8, 1.1, 0.9, 1.05]
    ahead = [0.02, 0.005, 0.03, 0.01, 0.025]
    rates = {"O1": [0.8 * b for b in base], "O2": base, "O3": [b * math.exp(a) for b, a in zip(base, ahead)]}
    table = _single_thread({(mode, opt): r for mode in mb.MODES for opt, r in rates.items()})
    o3, o2 = (table[(table["mode"] == "inplace") & (table["opt"] == o)].iloc[0] for o in ("O3", "O2"))
    assert mb.paired_ratio(o3, o2).low > 1  # ahead at 95% on its own
    verdict = mb.opt_verdict(table)["inplace"]
    assert verdict["level"] == pytest.approx(1 - 0.05 / 3)
    assert (verdict["state"], verdict["fastest"], verdict["behind"]) == ("ranked", "O3", ["O1"])
    assert verdict["apart_low"] < verdict["apart"] < verdict["apart_high"]


@pytest.mark.parametrize("plateau, immutable, state, immutable_state", [
    ((0.97, 0.95, 0.99), (0.97, 0.95, 0.99), "met", "met"),
    ((0.80, 0.78, 0.82), (0.97, 0.95, 0.99), "missed", "met"),  # the in-place kernel's own access pattern
    ((0.80, 0.78, 0.82), (0.80, 0.70, 0.95), "missed", "inconclusive"),
    ((0.92, 0.85, 0.99), (0.80, 0.78, 0.82), "inconclusive", "missed"),
])
def test_the_plateau_verdict_is_the_state_its_interval_gives(plateau, immutable, state, immutable_state):
    """The paper words the plateau target by these states (paper/sections/memory_bandwidth.tex)."""
    band = (1 - mb.PLATEAU_BAND, 1 + mb.PLATEAU_BAND)
    ratio, immutable_ratio = intervals.Estimate(*plateau, 5), intervals.Estimate(*immutable, 5)
    verdict = mb.plateau_verdict({"plateau": ratio, "plateau_verdict": intervals.within(ratio, *band),
                                  "plateau_bus_ratio": 0.75, "plateau_immutable": immutable_ratio,
                                  "plateau_immutable_verdict": intervals.within(immutable_ratio, *band)})
    assert (verdict["state"], verdict["immutable_state"]) == (state, immutable_state)
    assert verdict["band_percent"] == pytest.approx(100 * mb.PLATEAU_BAND)
    assert verdict["ratio"] == ratio and verdict["immutable"] == immutable_ratio
    # the macros: each interval as its two bounds (paper/paper.tex words them), recomputed from the ratios
    macros = mb.report._plateau_macros(verdict)
    assert macros["MbwPlateauInterval"] == rf"\confidenceinterval{{{paper.number(plateau[1], 2)}}}{{{paper.number(plateau[2], 2)}}}{{}}"
    assert macros["MbwPlateauImmutable"] == rf"\num{{{immutable[0]:.2f}}}"
    assert macros["MbwPlateauImmutableInterval"] == \
        rf"\confidenceinterval{{{paper.number(immutable[1], 2)}}}{{{paper.number(immutable[2], 2)}}}{{}}"


@pytest.mark.parametrize("single, state", [
    ((0.95, 0.92, 0.98), "met"), ((0.80, 0.78, 0.82), "missed"), ((0.90, 0.85, 0.95), "inconclusive"),
])
def test_the_single_thread_state_is_the_one_its_interval_gives(single, state):
    """The paper words the single-thread target by MbwSingleState (paper/sections/memory_bandwidth.tex)."""
    assert paper.state(intervals.at_least(intervals.Estimate(*single, 5), mb.SINGLE_TARGET)) == state


def test_the_paper_tables_and_numbers_come_from_the_package(tmp_path):
    """What the notebook writes for the paper is built in the package (report): every table has a
    row per cell it shows, the -O table this run's seconds with their interval, and every macro
    the section quotes, the verdicts among their worded states."""
    settings = noise.Settings(samples_per_process=2, min_sample_s=0.005, max_remeasures=0)
    params = {**PARAMS, "opt_levels": ["O0", "O1", "O2", "O3"], "python_methods": ["numpy", "numba"],
              "max_threads": 1}
    frame = mb.measure_runs(params, tmp_path, settings, progress=False)
    table = mb.summary(frame)
    opt = mb.opt_table_frame(table)
    assert list(opt.columns) == ["", "-O0", "-O1", "-O2", "-O3"] and len(opt) == 4
    # this run's, with its interval (as plus-or-minus, or as its bounds where wider than the value)
    assert all(printed_with_interval(cell) or "[" in cell for cell in opt.iloc[1, 1:])
    ratios = mb.ratio_table_frame(table)
    assert len(ratios) == len(mb.ratio_table(table)) and ratios["ratio"].str.len().gt(0).all()
    machines = mb.machine_table_frame({"this machine": table})
    assert machines["machine"].tolist() == ["this machine"]
    labels = {mb.run_name(run): mb.run_label(run) for run in mb.plan(params)}
    macros = mb.paper_macros(params, table, frame, None, settings, labels, [])
    assert macros["MbwN"] == rf"\num{{{N}}}" and macros["MbwMaxThreads"] == 1  # a count: every digit
    assert macros["MbwSingleState"] == paper.state(mb.targets(table, 1)["single_verdict"]) \
        and "MbwSingleVerdict" not in macros
    assert macros["MbwPlateauState"] in {"met", "missed", "inconclusive"} and "MbwPlateauVerdict" not in macros
    assert {macros["MbwOptInplaceState"], macros["MbwOptImmutableState"]} <= {"ranked", "unranked"}
    assert macros["MbwOptInplaceFastest"] in {"-O1", "-O2", "-O3"} and "MbwOptVerdict" not in macros
    assert macros["MbwCompiler"]


def test_seed000s_figures_on_the_levels_are_paired_ratios_of_one_threads_rounds():
    # per round r: rate of -Ox in mode m = base[r] * speed[m][x]; in-place -O3 gains 3.4 from -O0,
    # immutable 2.3 (the seed's), -O1 and -O2 at 0.95 of -O3
    base = [1.0, 0.8, 1.1, 0.9, 1.05]
    speed = {"inplace": {"O0": 1.0, "O1": 3.4 * 0.95, "O2": 3.4 * 0.95, "O3": 3.4},
             "immutable": {"O0": 0.96, "O1": 0.96 * 2.3 * 0.95, "O2": 0.96 * 2.3 * 0.95, "O3": 0.96 * 2.3}}
    table = _single_thread({(mode, opt): [b * s for b in base] for mode, levels in speed.items()
                            for opt, s in levels.items()})
    ratios = mb.opt_ratios(table)
    expected = {"InplaceOZeroOverOThree": 3.4, "ImmutableOZeroOverOThree": 2.3, "InplaceOTwoOverOThree": 1 / 0.95,
                "ImmutableOOneOverOThree": 1 / 0.95, "OZeroImmutableOverInplace": 1 / 0.96,
                "OThreeInplaceOverImmutable": 3.4 / (0.96 * 2.3), "InplaceGainOverImmutable": 3.4 / 2.3}
    for name, value in expected.items():
        assert ratios[name].value == pytest.approx(value), name
        assert ratios[name].low == pytest.approx(value)  # every round's disturbance shared: paired away
    # a level not measured gives no figure
    assert "InplaceOZeroOverOThree" not in mb.opt_ratios(table[table["opt"] != "O0"])


def test_the_experiments_entries_take_a_session_and_a_stored_run_gives_the_same_macros(tmp_path):
    """mb.measure(session) and mb.macros(measured, session), the notebook's two calls: the runs of the
    session's parameters, checked, and the section's macros from them; measured again, the runs are
    read back from results_dir/raw and give the same macros, character for character."""
    from throughput import configuration

    folders = {"results_dir": tmp_path / "results", "figures_dir": tmp_path / "f", "paper_dir": tmp_path / "p"}
    given = {"repetitions": 2, "warmup": 0, "machines": {"archived": []},
             "noise": {"samples_per_process": 1, "min_sample_s": 0.005, "max_remeasures": 0},
             "memory_bandwidth": {"n_values": N, "max_threads": 1, "opt_levels": ["O3"], "python_methods": ["numpy"]}}
    session = configuration.session("memory_bandwidth", given, fitted_to_machine=None, **folders)
    measured = mb.measure(session)
    assert sorted(measured.frame["run"].unique()) == sorted(mb.run_name(run) for run in mb.plan(session.params))
    assert set(measured.run_labels) == set(measured.frame["run"])
    macros = mb.macros(measured, session)
    assert macros["MbwN"] == rf"\num{{{N}}}" and macros["MbwRepetitions"] == 2
    again = mb.measure(configuration.session("memory_bandwidth", given, fitted_to_machine=None, **folders))
    pd.testing.assert_frame_equal(again.frame, measured.frame)
    assert mb.macros(again, session) == macros
    assert list(measured.machine_tables) == ["this machine"]


# --- seed 000's hierarchy: disk << memory << processing (config key hierarchy) ---------------------

HIERARCHY = {**PARAMS, "opt_levels": ["O3"], "max_threads": 1, "python_methods": [], "hierarchy": True}
ONE_SHORT_SAMPLE = noise.Settings(samples_per_process=1, min_sample_s=0.005, max_remeasures=0)


def test_the_hierarchy_adds_in_cache_and_reads_the_same_values_cold_from_a_file(tmp_path):
    """In the one-thread rounds: the -O3 add on IN_CACHE_VALUES doubles, and rdf_raw_read's passes
    over a file of the n values, each from a cold page cache, every pass's bytes and word sum
    those of the values; the figures are the rounds' paired values per second; the file is removed."""
    frame = mb.measure_runs(HIERARCHY, tmp_path, ONE_SHORT_SAMPLE, progress=False)
    mb.check_agreement(frame)
    measured = frame[~frame["warmup"]]
    cache, disk = (measured[measured["method"] == m] for m in (IN_CACHE, FROM_FILE))
    assert (cache["n"] == IN_CACHE_VALUES).all() and sorted(cache["round"]) == [0, 1, 2]
    assert sorted(disk["round"]) == [0, 1, 2] and (disk["bytes"] == 8 * N).all()
    assert (disk["checksum"] == mb_measuring.values_checksum(N)).all() and (disk["resident_before"] == 0).all()
    assert not mb_measuring.values_file(tmp_path).parent.exists()
    table = mb.summary(frame)
    figures = mb_analysis.hierarchy(table)
    best = measured.groupby(["method", "mode", "opt", "round"])["ghz"].max()
    memory = ("C++", "inplace", "O3")
    for name, (fast, slow) in {"CacheOverMemory": ((IN_CACHE, "inplace", "O3"), memory),
                               "MemoryOverDisk": (memory, (FROM_FILE, "read", "n/a"))}.items():
        per_round = best[fast] / best[slow]
        assert figures[name].processes == 3
        assert figures[name].value == pytest.approx(math.exp(per_round.map(math.log).mean())), name
    macros = mb_report._hierarchy_macros(HIERARCHY, table)
    assert macros["MbwHierarchyState"] == "measured" and macros["MbwInCacheKiB"] == r"\num{128}"
    assert "n/a" not in (macros["MbwCacheOverMemory"], macros["MbwMemoryOverDisk"], macros["MbwColdReadGBs"])
    # not in the thread scan's figure, in the ratio table as one-thread rows
    assert {IN_CACHE, FROM_FILE} <= set(mb.ratio_table(table)["method"])


def test_without_a_page_cache_to_empty_the_cold_read_is_left_out_and_said(tmp_path, monkeypatch):
    monkeypatch.setattr(mb_measuring, "cold_read_problem", lambda path: f"the page cache cannot be emptied for {path}")
    table = mb.summary(mb.measure_runs(HIERARCHY, tmp_path, ONE_SHORT_SAMPLE, progress=False))
    assert FROM_FILE not in set(table["method"]) and IN_CACHE in set(table["method"])
    macros = mb_report._hierarchy_macros(HIERARCHY, table)
    assert (macros["MbwHierarchyState"], macros["MbwMemoryOverDisk"], macros["MbwColdReadGBs"]) == ("nocold", "n/a", "n/a")
    assert macros["MbwCacheOverMemory"] != "n/a"
    off = {**HIERARCHY, "hierarchy": False}
    assert not {IN_CACHE, FROM_FILE} & {run["method"] for run in mb.plan(off)}
    assert mb_report._hierarchy_macros(off, table)["MbwHierarchyState"] == "off"


def test_a_file_read_that_is_not_the_values_fails_naming_the_file(tmp_path, monkeypatch):
    monkeypatch.setattr(mb_measuring, "values_checksum", lambda n: 1.0)
    with pytest.raises(AssertionError, match="values.f64"):
        mb.measure_runs(HIERARCHY, tmp_path, ONE_SHORT_SAMPLE, progress=False)
    assert not mb_measuring.values_file(tmp_path).parent.exists()

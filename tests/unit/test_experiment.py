"""The generic measuring loop: interleaving, load records, re-measuring noisy groups, flags, reuse."""
from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

from scipy.special import stdtrit

from throughput.core import experiment, harness, intervals, noise, provenance, results
from throughput.report import noise_sentences, paper


class FakeMethods:
    """measure_pass for runs whose timings come from a script: {run name: [wall_s of each call]}."""

    def __init__(self, timings: dict[str, list[float]]):
        self.timings = {name: list(values) for name, values in timings.items()}
        self.calls: list[str] = []
        self.rounds: list[int] = []

    def __call__(self, run, repetition):
        self.calls.append(run["name"])
        self.rounds.append(repetition)
        wall = self.timings[run["name"]].pop(0)
        frame = pd.DataFrame({"rep": [-1, 0], "warmup": [True, False], "wall_s": [9.0, wall],
                              "mode": ["all", "all"]})
        return frame, {"run": run["name"]}


REAL_CPU_STALL_SECONDS = noise._cpu_stall_seconds


@pytest.fixture(autouse=True)
def quiet_cpu(monkeypatch):
    """No task waits for a CPU during the fake passes here (the machine's own pressure would
    retake them at random); the tests of retakes fake their stalls themselves."""
    monkeypatch.setattr(noise, "_cpu_stall_seconds", lambda: 0.0)


def _group(*names):
    return experiment.Group("g", [{"name": name} for name in names])


def _measure(tmp_path, methods, settings, repetitions=3, groups=None):
    return experiment.measure_interleaved(groups or [_group("A", "B", "C")], tmp_path, lambda run: dict(run),
                                          methods, repetitions, settings, progress=False)


def test_passes_are_interleaved_each_round_in_its_random_order(tmp_path):
    methods = FakeMethods({name: [1.0] * 3 for name in "ABC"})
    frame = _measure(tmp_path, methods, noise.Settings(order_seed=7))
    rounds = [methods.calls[3 * r:3 * r + 3] for r in range(3)]
    assert rounds == [noise.round_order(list("ABC"), r, 7) for r in range(3)]
    assert all(sorted(order) == list("ABC") for order in rounds)
    assert methods.rounds == [0] * 3 + [1] * 3 + [2] * 3  # a process can order its own methods by it
    measured = frame[~frame["warmup"]]
    assert sorted(measured[measured["run"] == "B"]["rep"]) == [0, 1, 2]
    assert (frame[frame["warmup"]]["rep"] == -1).all()  # warm-up rows keep their own numbering


def _stalling(methods, stalls: dict[str, list[float]], monkeypatch):
    """measure_pass calling `methods`, during whose calls of a run some task waited for a CPU for
    the next of `stalls[run]` seconds (the pressure total read by noise.LoadMonitor, faked)."""
    waited = {"total": 0.0}
    monkeypatch.setattr(noise, "_cpu_stall_seconds", lambda: waited["total"])

    def measure(run, repetition):
        pending = stalls.get(run["name"], [])
        waited["total"] += pending.pop(0) if pending else 0.0
        return methods(run, repetition)
    return measure


def test_a_pass_a_waiting_task_delayed_is_taken_again_and_counted(tmp_path, monkeypatch):
    methods = FakeMethods({name: [1.0] * 4 for name in "ABC"})
    frame = _measure(tmp_path, _stalling(methods, {"B": [1.0]}, monkeypatch), noise.Settings(max_retakes=1))
    assert [methods.calls.count(name) for name in "ABC"] == [3, 4, 3]  # B's first pass twice
    measured = frame[~frame["warmup"]]
    assert measured.groupby("run")["retakes"].sum().to_dict() == {"A": 0, "B": 1, "C": 0}
    assert (measured["cpu_stall_share"] == 0).all()  # the passes kept were not delayed
    assert results.read_raw(tmp_path / "B.parquet")[1]["noise"]["retakes"] == 1
    facts = noise_sentences.describe(frame, noise.Settings(max_retakes=1))
    assert (facts["RetakesState"], facts["Passes"], facts["PassRetakes"], facts["StallStill"]) == ("retaken", 9, 1, 0)
    assert facts["StallLimit"] == 100 * noise.Settings().max_stall_share and facts["StallMax"] == 0


def test_a_pass_still_delayed_after_its_retakes_is_kept_and_said(tmp_path, monkeypatch):
    methods = FakeMethods({name: [1.0] * 3 for name in "ABC"})
    frame = _measure(tmp_path, _stalling(methods, {"C": [1.0, 1.0]}, monkeypatch), noise.Settings(max_retakes=1),
                     repetitions=2)
    measured = frame[~frame["warmup"]]
    assert measured.groupby("run")["retakes"].sum().to_dict() == {"A": 0, "B": 0, "C": 1}
    assert (measured.set_index("run")["cpu_stall_share"] > 0.02).groupby("run").sum().to_dict() == \
        {"A": 0, "B": 0, "C": 1}
    facts = noise_sentences.describe(frame, noise.Settings(max_retakes=1))
    assert (facts["RetakesState"], facts["StallStill"]) == ("retaken", 1)
    assert facts["StallMax"] == 100 * measured["cpu_stall_share"].max() > 2
    # no retakes asked for (the default): the delayed pass is kept as it came
    methods = FakeMethods({name: [1.0] * 2 for name in "ABC"})
    frame = _measure(tmp_path / "none", _stalling(methods, {"A": [1.0]}, monkeypatch),
                     noise.Settings(), repetitions=2)
    assert methods.calls.count("A") == 2 and frame["retakes"].sum() == 0
    facts = noise_sentences.describe(frame, noise.Settings())
    assert (facts["RetakesState"], facts["StallStill"], facts["Passes"], facts["MaxRetakes"]) == ("off", 1, 6, 0)


def test_without_pressure_information_no_pass_is_called_delayed(tmp_path, monkeypatch):
    monkeypatch.setattr(noise, "_cpu_stall_seconds", lambda: None)
    frame = _measure(tmp_path, FakeMethods({name: [1.0] * 3 for name in "ABC"}), noise.Settings())
    assert frame["cpu_stall_share"].isna().all() and frame["retakes"].sum() == 0
    facts = noise_sentences.describe(frame, noise.Settings())
    assert facts["RetakesState"] == "nopressure" and "Passes" not in facts


def test_the_cpu_pressure_total_grows_where_the_kernel_gives_it():
    before = REAL_CPU_STALL_SECONDS()
    if before is None:
        pytest.skip("no /proc/pressure/cpu on this kernel")
    assert before >= 0 and REAL_CPU_STALL_SECONDS() >= before


def test_round_orders_are_random_permutations_that_a_seed_repeats():
    items = list("ABCD")
    orders = [noise.round_order(items, r, 0) for r in range(40)]
    assert all(sorted(order) == items for order in orders)
    assert orders == [noise.round_order(items, r, 0) for r in range(40)]
    assert orders != [noise.round_order(items, r, 1) for r in range(40)]
    # unlike a rotation, a run does not always follow the same neighbour, nor always come first
    followers = {item: {o[o.index(item) + 1] for o in orders if o.index(item) < 3} for item in items}
    assert all(len(f) == 3 for f in followers.values()), followers
    assert {o[0] for o in orders} == set(items)
    assert noise.round_order([], 3, 0) == []


def test_every_pass_records_the_load_and_every_run_its_spread(tmp_path):
    frame = _measure(tmp_path, FakeMethods({name: [1.0, 1.02, 0.98] for name in "ABC"}), noise.Settings())
    for column in ("load_avg_1min", "others_cores", "orchestrator_cores", "steal_fraction"):
        assert frame[column].notna().all() and (frame[column] >= 0).all(), column
    # the interval across the 3 rounds decides (t on logarithms, 2 degrees of freedom); the CV describes
    half_width = intervals.across_processes([1.0, 1.02, 0.98]).relative_half_width
    assert frame["half_width"].eq(half_width).all() and 0.04 < half_width < 0.1 and not frame["noisy"].any()
    assert frame["cv"].round(6).eq(0.02).all()
    _, stored_provenance, key = results.read_raw(tmp_path / "A.parquet")
    # the three methods moved together, round by round: all of it common, none their own
    drift = stored_provenance["noise"].pop("round_drift")
    assert drift["common"] == pytest.approx(np.std(np.log([1.0, 1.02, 0.98]), ddof=1)) and drift["own"] < 1e-12
    assert (drift["figures"], drift["rounds"]) == (3, 3)
    assert stored_provenance["noise"] == {"max_half_width": 0.1, "attempts": 1, "retakes": 0, "sample_retakes": 0,
                                          "earlier_attempts_widest": [], "noisy": False, "beyond_budget": False,
                                          "half_width": half_width}
    assert set(stored_provenance["load"]) == {"load_avg_1min", "others_cores", "orchestrator_cores",
                                              "steal_fraction", "cpu_stall_share"}
    # the orchestrator's share is the mean over the run's passes, as its rows recorded them
    assert stored_provenance["load"]["orchestrator_cores"] == pytest.approx(
        frame[frame["run"] == "A"].drop_duplicates("round")["orchestrator_cores"].mean())
    assert key["interleaved_with"] == ["A", "B", "C"] and key["machine"] == provenance.fingerprint()


def test_rows_that_are_not_timings_are_left_out_of_the_spread(tmp_path):
    # a reader's rate samples (record "sample") vary within a pass by design; a
    # reader that could not read gives a row that says why, measured or not
    def measure_pass(run, repetition):
        rows = [{"record": "timing", "rep": -1, "warmup": True, "wall_s": 9.0},
                {"record": "timing", "rep": 0, "warmup": False, "wall_s": 1.0 + 0.01 * repetition},
                {"record": "sample", "rep": 0, "warmup": False, "wall_s": 0.1 * (repetition + 1) ** 3}]
        if run["name"] == "C":
            rows = [{"record": "failed", "rep": float("nan"), "warmup": False, "wall_s": float("nan")}]
        return pd.DataFrame(rows), {}

    frame = _measure(tmp_path, measure_pass, noise.Settings(max_half_width=0.1))
    cv = frame.groupby("run")["cv"].first()
    assert cv["A"] == pytest.approx(noise.coefficient_of_variation([1.0, 1.01, 1.02]))
    assert math.isnan(cv["C"]) and not frame["noisy"].any()
    assert (frame[frame["run"] == "C"]["record"] == "failed").all()


def test_a_noisy_group_gets_more_rounds_until_its_intervals_are_narrow(tmp_path):
    # B is disturbed in its second round: its interval over 3 rounds is too wide, and still over 6;
    # each re-measure adds 3 rounds of the whole group, the earlier ones kept
    methods = FakeMethods({"A": [1.0] * 9, "B": [1.0, 1.3] + [1.0] * 7, "C": [1.0] * 9})
    frame = _measure(tmp_path, methods, noise.Settings(max_half_width=0.1, max_remeasures=2))
    assert len(methods.calls) == 27 and methods.rounds == [r for r in range(9) for _ in range(3)]
    assert set(frame["attempt"]) == {0, 1, 2} and not frame["noisy"].any()
    measured = frame[~frame["warmup"]]
    assert sorted(measured[measured["run"] == "B"]["round"]) == list(range(9))
    b = measured[measured["run"] == "B"]["half_width"].iloc[0]
    assert b == noise.interval_half_width([1.0, 1.3] + [1.0] * 7) < 0.1
    stored = results.read_raw(tmp_path / "B.parquet")[1]["noise"]
    assert stored["attempts"] == 3
    assert stored["earlier_attempts_widest"] == [noise.interval_half_width([1.0, 1.3, 1.0]),
                                                 noise.interval_half_width([1.0, 1.3] + [1.0] * 4)]


def test_re_measures_stop_where_the_next_would_cost_more_than_the_budget_left(tmp_path, monkeypatch):
    # every pass costs 2 s of a fake clock: one attempt of a 3-run group over 3 rounds costs 18 s.
    # With 20 s, group g re-measures once (18 s) and is flagged; h, as noisy, cannot afford one.
    clock = [0.0]
    monkeypatch.setattr(experiment.time, "perf_counter", lambda: clock[0])
    noisy = [1.0, 2.0, 1.0] * 3
    methods = FakeMethods({"A": [1.0] * 9, "B": noisy, "C": [1.0] * 9, "D": [1.0] * 9, "E": noisy, "F": [1.0] * 9})

    def costly(run, repetition):
        clock[0] += 2.0
        return methods(run, repetition)

    settings = noise.Settings(max_half_width=0.1, max_remeasures=2, remeasure_budget_s=20)
    frame = experiment.measure_interleaved([experiment.Group("g", [{"name": n} for n in "ABC"]),
                                            experiment.Group("h", [{"name": n} for n in "DEF"])],
                                           tmp_path, lambda run: dict(run), costly, 3, settings, progress=False)
    assert len(methods.calls) == 18 + 9  # g: the base rounds and one re-measure; h: its base rounds
    attempts = frame.groupby("run")["attempt"].max()
    assert attempts.to_dict() == {"A": 1, "B": 1, "C": 1, "D": 0, "E": 0, "F": 0}
    assert frame.groupby("run")["noisy"].any().to_dict() == {"A": False, "B": True, "C": False,
                                                              "D": False, "E": True, "F": False}
    assert all(results.read_raw(tmp_path / f"{run}.parquet")[1]["noise"]["beyond_budget"] for run in "ABCDEF")
    facts = noise_sentences.describe(frame, settings)
    assert (facts["BudgetState"], facts["RemeasureBudget"]) == ("limited", 20)
    assert (facts["BeyondState"], facts["BeyondRuns"]) == ("some", 2)  # the noisy runs B and E
    # without a budget both groups take their two re-measures
    unlimited = FakeMethods({"A": [1.0] * 9, "B": noisy, "C": [1.0] * 9})
    _measure(tmp_path / "unlimited", unlimited, noise.Settings(max_half_width=0.1, max_remeasures=2,
                                                              remeasure_budget_s=None))
    assert len(unlimited.calls) == 27


def test_a_group_that_stays_noisy_is_flagged_not_dropped(tmp_path):
    methods = FakeMethods({"A": [1.0] * 9, "B": [1.0, 2.0, 1.0] * 3, "C": [1.0] * 9})
    frame = _measure(tmp_path, methods, noise.Settings(max_half_width=0.1, max_remeasures=2))
    assert len(methods.calls) == 27 and set(frame["attempt"]) == {0, 1, 2}
    flagged = frame.groupby("run")["noisy"].all()
    assert flagged.to_dict() == {"A": False, "B": True, "C": False}
    assert results.read_raw(tmp_path / "B.parquet")[1]["noise"]["noisy"] is True
    facts = noise_sentences.describe(frame, noise.Settings(max_half_width=0.1, max_remeasures=2))
    # over all 9 rounds: t with 8 degrees of freedom on the logarithms
    logs = np.log([1.0, 2.0, 1.0] * 3)
    width = math.sinh(stdtrit(8, 0.975) * logs.std(ddof=1) / 3)
    assert noise.interval_half_width([1.0, 2.0, 1.0] * 3) == pytest.approx(width)
    assert (facts["VerdictState"], facts["NoisyCount"], facts["Runs"], facts["NamedState"]) == ("noisy", 1, 3, "all")
    assert facts["NoisyList"] == [("B", pytest.approx(100 * width))] and facts["MaxRemeasures"] == 2
    assert (facts["AgainState"], facts["RemeasuredRuns"]) == ("some", 3)  # the whole group, twice


def test_a_stored_group_is_reused_and_a_partly_stored_one_measured_again_whole(tmp_path):
    first = FakeMethods({name: [1.0] * 3 for name in "ABC"})
    _measure(tmp_path, first, noise.Settings())
    again = FakeMethods({name: [] for name in "ABC"})
    frame = _measure(tmp_path, again, noise.Settings())
    assert again.calls == [] and len(frame) == 18
    (tmp_path / "B.parquet").unlink()  # as after an interruption within the group
    third = FakeMethods({name: [1.0] * 3 for name in "ABC"})
    _measure(tmp_path, third, noise.Settings())
    assert len(third.calls) == 9


def test_a_group_stored_by_another_machine_is_not_reused(tmp_path, monkeypatch):
    real = provenance.fingerprint()
    monkeypatch.setattr(provenance, "fingerprint", lambda: {**real, "cpu_model": "another CPU"})
    _measure(tmp_path, FakeMethods({name: [1.0] * 3 for name in "ABC"}), noise.Settings())
    monkeypatch.setattr(provenance, "fingerprint", lambda: real)
    methods = FakeMethods({name: [1.0] * 3 for name in "ABC"})
    _measure(tmp_path, methods, noise.Settings())
    assert len(methods.calls) == 9


def test_changed_noise_settings_or_repetitions_measure_again(tmp_path):
    _measure(tmp_path, FakeMethods({name: [1.0] * 3 for name in "ABC"}), noise.Settings())
    methods = FakeMethods({name: [1.0] * 6 for name in "ABC"})
    _measure(tmp_path, methods, noise.Settings(max_half_width=0.05))
    assert len(methods.calls) == 9
    _measure(tmp_path, methods, noise.Settings(max_half_width=0.05), repetitions=2)
    assert len(methods.calls) == 15
    methods = FakeMethods({name: [1.0] * 2 for name in "ABC"})
    _measure(tmp_path, methods, noise.Settings(max_half_width=0.05, max_sample_retakes=1), repetitions=2)
    assert len(methods.calls) == 6  # another retake rule measures again


def test_run_names_must_be_unique(tmp_path):
    with pytest.raises(ValueError, match="not unique"):
        _measure(tmp_path, FakeMethods({}), noise.Settings(), groups=[_group("A", "A")])


def test_coefficient_of_variation():
    assert noise.coefficient_of_variation([2.0, 2.0, 2.0]) == 0
    assert noise.coefficient_of_variation([1.0, 3.0]) == pytest.approx(math.sqrt(2) / 2)
    assert math.isnan(noise.coefficient_of_variation([1.0]))
    assert not noise.Settings().is_noisy(math.nan)  # one pass: spread unknown, not called noisy


def test_load_monitor_counts_another_process_and_not_this_one():
    # another process: not a descendant of this one (a shell starts it and exits), whose CPU
    # time would be this process's own
    started = subprocess.run(["sh", "-c", f"{sys.executable} -c 'while True: pass' >/dev/null 2>&1 & echo $!"],
                             capture_output=True, text=True, check=True)
    busy = int(started.stdout)
    try:
        time.sleep(0.3)  # let it start
        with noise.LoadMonitor() as monitor:
            time.sleep(1.0)
    finally:
        os.kill(busy, signal.SIGKILL)
    assert monitor.load.others_cores > 0.5, monitor.load  # the busy loop took about one core


def test_load_monitor_leaves_out_this_process_and_stolen_time(monkeypatch):
    # Scripted /proc/stat readings: 3 s busy (0.5 s of it stolen), of which this process used 2 s.
    machine = iter([dict.fromkeys(noise._STAT_FIELDS, 0.0),
                    {**dict.fromkeys(noise._STAT_FIELDS, 0.0), "user": 2.0, "system": 0.5, "steal": 0.5,
                     "idle": 7.0}])
    own = iter([10.0, 12.0])
    monkeypatch.setattr(noise, "_cpu_seconds", lambda: next(machine))
    monkeypatch.setattr(noise, "_own_cpu_seconds", lambda: next(own))
    monkeypatch.setattr(noise, "_orchestrator_cpu_seconds", iter([1.0, 1.25]).__next__)
    with noise.LoadMonitor() as monitor:
        pass
    assert monitor.load.others_cpu_s == pytest.approx(0.25)  # 3 busy - 0.5 stolen - 2 own - 0.25 orchestrator
    assert monitor.load.orchestrator_cpu_s == pytest.approx(0.25)
    assert monitor.load.steal_s == 0.5


def _spin_cpu(seconds: float) -> float:
    before, hang_guard = time.process_time(), time.monotonic() + 120
    while time.process_time() - before < seconds and time.monotonic() < hang_guard:
        pass
    return time.process_time() - before


def test_a_fresh_process_rounds_cpu_time_is_this_processs_own():
    # A Python method's round is a child of multiprocessing's fork server, which waits for it: its
    # CPU time is this process's own (as a waited-for kernel's is), not other work's.
    harness.in_fresh_process(_spin_cpu, 0.0)  # the fork server started before measuring
    own = noise._own_cpu_seconds()
    spun = harness.in_fresh_process(_spin_cpu, 0.5)
    counted = noise._own_cpu_seconds() - own
    # at least the round's spinning (and the round's start: it imports this test module afresh)
    assert spun >= 0.5 and counted >= spun - 0.05, (counted, spun)


_CHILD_MONITOR = """
import json, sys, time
from throughput.core import noise
sys.stdin.readline()
with noise.LoadMonitor() as monitor:
    print("measuring", flush=True)
    sys.stdin.readline()  # until the parent has spun what it means to
print(json.dumps(vars(monitor.load)))
"""


def test_load_monitor_counts_the_process_it_descends_from_as_its_orchestrator():
    # The parent (this test, standing for Snakemake or the notebook runner) keeps a core busy while
    # its child measures: that CPU time is the orchestrator's, not another process's. The parent
    # spins for half a second of its own CPU time, however long a busy machine makes that take,
    # entirely inside the child's measurement (it waits blocked before and after).
    child = subprocess.Popen([sys.executable, "-c", _CHILD_MONITOR], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    child.stdin.write("go\n")
    child.stdin.flush()
    assert child.stdout.readline().strip() == "measuring"
    spun = _spin_cpu(0.5)
    child.stdin.write("stop\n")
    child.stdin.flush()
    load = json.loads(child.communicate(timeout=60)[0])
    # the parent's spinning, give or take a clock tick (and its few reads and writes) either side
    assert spun >= 0.5 and abs(load["orchestrator_cpu_s"] - spun) <= 0.05, (load, spun)


def test_the_method_section_sentence_comes_from_every_stored_run(tmp_path):
    _measure(tmp_path / "mbw", FakeMethods({"A": [1.0, 2.0, 1.0] * 3, "B": [1.0] * 9}),
             noise.Settings(max_remeasures=2), groups=[_group("A", "B")])
    experiment.measure_once(tmp_path / "writing" / "w.parquet", {"x": 1},
                         lambda: (pd.DataFrame({"wall_s": [1.0]}), {}))
    old = tmp_path / "old.parquet"  # stored before runs recorded their load
    results.write_raw(pd.DataFrame({"wall_s": [1.0]}), old, {}, {})
    provenances = {"memory_bandwidth": [results.read_provenance(tmp_path / "mbw" / f"{n}.parquet") for n in "AB"],
                   "writing": [results.read_provenance(tmp_path / "writing" / "w.parquet"),
                               results.read_provenance(old)]}
    facts = noise_sentences.study_summary(provenances)
    assert (facts["LoadState"], facts["Recorded"], facts["Total"], facts["RecordedState"]) == ("some", 3, 4, "some")
    loads = [p["load"] for runs in provenances.values() for p in runs if "load" in p]
    assert facts["OthersMax"] == max(load["others_cores"] for load in loads)
    assert facts["LoadMax"] == max(load["load_avg_1min"] for load in loads)
    assert (facts["StayedState"], facts["StayedList"]) == ("some", [(1, "memory bandwidth")])
    assert facts["InterleavedList"] == ["memory bandwidth"] and facts["OneByOneList"] == ["writing"]
    assert facts["RetakenState"] == "none" and facts["RetakenList"] == []  # no pass was delayed
    # the distribution of the interval widths: A's 9 rounds of 1, 2, 1, ... and B's exact 1s
    width = noise.interval_half_width([1.0, 2.0, 1.0] * 3)
    assert (facts["WidthsState"], facts["WidthRuns"], facts["Wide"], facts["WidthLimit"]) == ("some", 2, 1, 10)
    assert facts["WidthMedian"] == pytest.approx(100 * width / 2)
    assert facts["WidthHigh"] == pytest.approx(100 * 0.9 * width)  # 90th percentile of 0 and the width
    assert facts["WidthsList"] == [("memory bandwidth", pytest.approx(100 * width / 2), 2)]
    assert noise_sentences.study_summary({"writing": [{}]}) == {"LoadState": "none", "Total": 1}
    macros = noise_sentences.study_macros(provenances)
    assert macros["StudyNoise"] == r"\studynoise" and macros["StudyNoiseRecorded"] == "3"
    assert macros["StudyNoiseFitState"] == "none"  # nothing lowered in these runs
    retaken = {"memory_bandwidth": [{**p, "noise": {**p["noise"], "retakes": 2}} for p in provenances["memory_bandwidth"]]}
    assert noise_sentences.study_summary(retaken)["RetakenList"] == [(4, "memory bandwidth")]


def _with_orchestrator(shares):
    return {"memory_bandwidth": [{"load": {"others_cores": 0.1, "load_avg_1min": 1.0, "steal_fraction": 0.0,
                                           "orchestrator_cores": share}} for share in shares]}


def test_the_method_section_says_how_busy_the_orchestrator_kept_the_cores():
    # judged by the mean over the runs (one run's share is a few clock ticks), the busiest run named
    quiet = noise_sentences.study_summary(_with_orchestrator([0.0, 0.004, 0.024]))
    assert quiet["OrchestratorState"] == "quiet" and quiet["OrchestratorRuns"] == 3
    assert quiet["OrchestratorMean"] == pytest.approx(100 * 0.028 / 3) and quiet["OrchestratorMax"] == pytest.approx(2.4)
    busy = noise_sentences.study_summary(_with_orchestrator([0.25, 0.2, float("nan")]))  # before issue 44
    assert (busy["OrchestratorState"], busy["OrchestratorRuns"]) == ("busy", 2)
    assert busy["OrchestratorMean"] == pytest.approx(22.5)
    unknown = _with_orchestrator([0.1])
    del unknown["memory_bandwidth"][0]["load"]["orchestrator_cores"]  # stored before it was recorded
    assert noise_sentences.study_summary(unknown)["OrchestratorState"] == "unknown"
    assert noise_sentences.study_macros(_with_orchestrator([0.0]))["StudyNoiseOrchestratorState"] == "quiet"


def test_the_noise_sentence_says_when_no_spread_is_known(tmp_path):
    single = _measure(tmp_path / "one", FakeMethods({name: [1.0] for name in "ABC"}), noise.Settings(), repetitions=1)
    assert noise_sentences.describe(single, noise.Settings())["VerdictState"] == "unknown"
    several = _measure(tmp_path / "three", FakeMethods({name: [1.0, 1.02, 1.0] for name in "ABC"}), noise.Settings())
    widest = noise.interval_half_width([1.0, 1.02, 1.0])
    facts = noise_sentences.describe(several, noise.Settings())
    assert (facts["VerdictState"], facts["TooFewState"], facts["TooFew"]) == ("within", "none", 0)
    assert facts["Widest"] == pytest.approx(100 * widest) and facts["Median"] == pytest.approx(100 * widest)
    macros = noise_sentences.paper_macros("Xx", several, noise.Settings(max_remeasures=0), section="writing")
    assert {"Xx" + name for name in noise_sentences.PAPER_MACROS} <= set(macros)
    assert macros["XxRemeasured"] == r"\noiseremeasured{Xx}" and macros["XxNoise"] == r"\noisesentence{Xx}"
    assert (macros["XxNoiseRemeasureState"], macros["XxNoiseSection"]) == ("offsection", "writing")
    assert macros["XxNoiseWidest"] == paper.number(100 * widest) and macros["XxNoiseVerdictState"] == "within"
    assert "XxNoiseNoisyList" not in macros  # not said when no run is noisy, so a wording reading it stops the build
    assert noise_sentences.paper_macros("Xx", several, noise.Settings(max_remeasures=0))["XxNoiseRemeasureState"] == "off"


def test_the_noise_sentence_names_the_noisiest_runs_only():
    runs = [f"r{i}" for i in range(12)]
    frame = pd.DataFrame({"run": runs, "warmup": False, "half_width": [0.11 + 0.01 * i for i in range(12)],
                          "cv": 0.05, "noisy": True, "attempt": 0, "others_cores": 0.0, "load_avg_1min": 0.0,
                          "steal_fraction": 0.0})
    facts = noise_sentences.describe(frame, noise.Settings(max_remeasures=0))
    assert (facts["NoisyCount"], facts["Runs"], facts["NamedState"]) == (12, 12, "some")
    assert facts["NoisyList"] == [(f"r{i}", pytest.approx(100 * (0.11 + 0.01 * i)))
                                  for i in range(11, 11 - noise_sentences.NAMED_NOISY, -1)]
    assert facts["Unnamed"] == 12 - noise_sentences.NAMED_NOISY
    text = noise_sentences.macros("Xx", facts)["XxNoiseNoisyList"]
    assert text.startswith(r"\noisenoisyrun{r11}{\num{22}}, \noisenoisyrun{r10}{\num{21}}")


def test_the_samples_facts_count_retaken_samples_and_those_still_delayed(monkeypatch):
    """Each sample's run delay is judged over its wall time times its threads; the facts count
    the samples taken again, their takes, and those still above the share, apart from the
    samples of a method that takes none again, and what runs on every core could not isolate."""
    settings = noise.Settings(min_sample_s=0.1, max_run_delay_share=0.02, max_sample_retakes=3)
    delays, threads = [0.001, 0.01, 0.006, -1.0, 0.01], [1, 1, 2, 2, 1]
    retakes = [0, 3, 1, 0, None]
    rows = pd.DataFrame({"warmup": False, "loops": 10, "run": ["a", "b", "c", "d", "java"],
                         "threads": threads, "wall_s": 0.2, "run_delay_s": delays, "sample_retakes": retakes})
    # d took no run delay; the others' shares of their wall time times threads
    shares = {run: d / (0.2 * t) for run, d, t in zip("abc", delays, threads)} | {"java": 0.01 / 0.2}
    above = {run for run, share in shares.items() if share > 0.02}
    monkeypatch.setattr(noise_sentences, "_usable_cores", lambda: 4)
    facts = noise_sentences.samples(rows, settings)
    assert facts["DelayMedian"] == pytest.approx(100 * np.median(list(shares.values())))
    assert facts["DelayMax"] == pytest.approx(100 * max(shares.values())) and facts["DelayWorst"] == "b"
    assert (facts["DelayState"], facts["Retaking"], facts["SamplesRetaken"], facts["SampleTakes"]) == \
        ("retaken", 3, 2, 4)
    assert facts["DelayAbove"] == len(above - {"java"}) and facts["DelayLimit"] == 2
    assert (facts["NonRetakingState"], facts["NonRetaking"], facts["NonRetakingAbove"]) == ("some", 1, 1)
    assert facts["EveryCoreState"] == "none"  # no run had a thread on every core
    monkeypatch.setattr(noise_sentences, "_usable_cores", lambda: 2)
    facts = noise_sentences.samples(rows, settings)
    assert (facts["EveryCoreState"], facts["Cores"], facts["EveryCoreSamples"], facts["EveryCoreRetaken"],
            facts["EveryCoreAbove"]) == ("some", 2, 1, 1, 0)  # c
    assert (facts["FreeSamples"], facts["FreeRetaken"], facts["FreeAbove"]) == (2, 1, 1)  # a, b
    without = noise_sentences.samples(rows.drop(columns="sample_retakes"), settings)
    assert without["DelayState"] == "noretake" and "Retaking" not in without


def test_the_retake_rule_comes_from_the_noise_section():
    assert noise.Settings.from_config({}).sample_retakes == harness.Retakes(0.02, 3)
    settings = noise.Settings.from_config({"max_run_delay_share": 0.05, "max_sample_retakes": 1})
    assert settings.sample_retakes == harness.Retakes(0.05, 1)


def test_round_drift_splits_what_all_figures_shared_in_a_round_from_their_own():
    rng = np.random.default_rng(1)
    common = np.array([0.10, -0.10, 0.05, -0.05, 0.0, 0.08, -0.08, 0.0])  # the machine's speed per round
    figures, rounds = 12, len(common)
    own = 0.01 * rng.standard_normal((figures, rounds))
    logs = np.log(rng.uniform(1, 100, figures))[:, None] + common[None, :] + own
    per_round = pd.Series(np.exp(logs).ravel(), index=pd.MultiIndex.from_product(
        [range(figures), range(rounds)], names=["figure", "round"]))
    drift = noise.round_drift(per_round)
    assert drift.figures == figures and drift.rounds == rounds
    assert drift.common == pytest.approx(np.std(common, ddof=1), rel=0.1)
    assert drift.own == pytest.approx(0.01, rel=0.3)
    # without a shared part, what is left as common is the figures' own noise averaged: small
    still = noise.round_drift(per_round / np.exp(np.tile(common, figures)))
    assert still.common < 0.01 and still.own == pytest.approx(drift.own, rel=0.1)
    # too few figures or rounds to split; a figure missing a round is left out
    assert noise.round_drift(per_round.loc[[0, 1]]) is None
    assert noise.round_drift(per_round[per_round.index.get_level_values("round") < 2]) is None
    assert noise.round_drift(per_round.drop((0, 3))).figures == figures - 1


def test_the_method_section_says_how_the_groups_moved_between_rounds():
    def run(common, own):
        return {"load": {"others_cores": 0.0, "load_avg_1min": 0.1, "steal_fraction": 0.0},
                "noise": {"half_width": 0.05, "max_half_width": 0.1,
                          "round_drift": {"common": common, "own": own, "figures": 4, "rounds": 5}}}
    facts = noise_sentences.study_summary({"memory_bandwidth": [run(0.02, 0.01)] * 2,
                                           "reader_comparison": [run(0.1, 0.05), run(0.12, 0.07)]})
    # one value per group (both memory-bandwidth runs record their group's): median of 2%, 10%, 12%
    assert facts["DriftState"] == "some" and facts["DriftCommon"] == pytest.approx(10)
    assert facts["DriftOwn"] == pytest.approx(5)  # of 1%, 5%, 7%
    assert facts["DriftList"] == [("memory bandwidth", pytest.approx(2), pytest.approx(1)),
                                  ("reader comparison", pytest.approx(11), pytest.approx(6))]
    unsplit = {**run(0, 0), "noise": {"half_width": 0.05, "max_half_width": 0.1, "round_drift": None}}
    assert noise_sentences.study_summary({"memory_bandwidth": [unsplit]})["DriftState"] == "none"


# --- more rounds where a claim needs them (experiment.Deciding, experiment.Looks) ---------------

class RatioJudge:
    """A claim on A's time over B's, paired by round: decided once the paired ratio's interval at the
    level it is given lies above `bound`; otherwise it needs ledger.rounds_needed's rounds. Records
    the levels and the rounds it was asked to judge."""

    def __init__(self, a="A", b="B", bound=1.0):
        self.a, self.b, self.bound, self.levels, self.rounds = a, b, bound, [], []

    def __call__(self, rows, confidence):
        measured = rows[~rows["warmup"].astype(bool)]
        times = {name: measured[measured["run"] == name].set_index("round")["wall_s"].to_dict() for name in (self.a, self.b)}
        ratio = intervals.paired_by_round(times[self.a], times[self.b], confidence)
        self.levels.append(confidence)
        self.rounds.append(ratio.processes)
        if ratio.low > self.bound:
            return True, None
        half = math.log(ratio.high / ratio.low) / 2
        distance = abs(math.log(ratio.value / self.bound))
        return False, max(ratio.processes + 1, math.ceil(ratio.processes * (half / distance) ** 2))


def _claim(judge, *names, claim="C1", group="g"):
    return experiment.Deciding(claim, group, tuple({"name": name} for name in names), judge)


def _decide(tmp_path, methods, deciding, looks, repetitions=3, groups=None):
    return experiment.measure_interleaved(groups or [_group("A", "B", "C")], tmp_path, lambda run: dict(run),
                                          methods, repetitions, noise.Settings(max_remeasures=0), progress=False,
                                          deciding=deciding, looks=looks)


def _noisy_ratio(n):
    """A's times over B's: a ratio of about 1.3 whose rounds scatter by +-10%."""
    return {"A": [1.3 * (1.1 if r % 2 else 0.9) for r in range(n)], "B": [1.0] * n, "C": [1.0] * n}


def test_an_undecided_claim_gets_the_rounds_it_needs_on_its_own_runs_only(tmp_path, monkeypatch):
    monkeypatch.setattr(experiment, "_cost_per_round", lambda rows: 1.0)
    judge = RatioJudge()
    methods = FakeMethods(_noisy_ratio(200))
    frame = _decide(tmp_path, methods, [_claim(judge, "A", "B")], experiment.Looks(max_looks=3, budget_s=1000))
    measured = frame[~frame["warmup"]]
    extra = measured[measured["look"] > 0]
    assert set(extra["run"]) == {"A", "B"} and (extra["extended_for"] == "C1").all()
    assert measured[measured["run"] == "C"]["round"].nunique() == 3  # a descriptive run keeps the base rounds
    assert set(judge.levels) == {intervals.bonferroni(3)}  # every look at the split level, the first too
    # each extra round measures the claim's runs in a fresh random order, continuing the numbering
    later = methods.calls[9:]
    rounds = methods.rounds[9:]
    assert all(sorted(later[i:i + 2]) == ["A", "B"] and rounds[i] == rounds[i + 1] for i in range(0, len(later), 2))
    assert rounds[0] == 3 and extra["look"].max() <= 2
    # the first look asked for the rounds the judge named at the base rounds' spread
    assert judge.rounds[0] == 3 and extra[extra["look"] == 1]["round"].nunique() == \
        RatioJudge()(measured[measured["look"] == 0], intervals.bonferroni(3))[1] - 3
    stored, record, _ = results.read_raw(tmp_path / "A.parquet")
    assert stored["round"].nunique() == measured[measured["run"] == "A"]["round"].nunique()
    assert record["looks"]["for"] == ["C1"] and record["looks"]["extra_rounds"] == extra["round"].nunique()


def test_a_claim_gets_no_more_looks_than_the_rule_fixed(tmp_path, monkeypatch):
    monkeypatch.setattr(experiment, "_cost_per_round", lambda rows: 1.0)
    never = lambda rows, confidence: (False, int(rows["round"].nunique()) + 2)  # noqa: E731  (never decided)
    methods = FakeMethods({name: [1.0] * 20 for name in "ABC"})
    frame = _decide(tmp_path, methods, [_claim(never, "A")], experiment.Looks(max_looks=3, budget_s=1000))
    assert sorted(frame["look"].unique()) == [0, 1, 2]
    assert frame[frame["run"] == "A"]["round"].nunique() == 3 + 2 + 2
    # stored with its looks: run again, the claim's looks are spent and nothing is measured
    again = FakeMethods({name: [] for name in "ABC"})
    _decide(tmp_path, again, [_claim(never, "A")], experiment.Looks(max_looks=3, budget_s=1000))
    assert again.calls == []
    # another stopping rule is another measurement
    third = FakeMethods({name: [1.0] * 20 for name in "ABC"})
    _decide(tmp_path, third, [_claim(never, "A")], experiment.Looks(max_looks=2, budget_s=1000))
    assert third.calls.count("A") == 3 + 2


def test_a_look_is_taken_only_where_the_budget_pays_for_all_its_rounds_and_a_decided_claim_gets_none(
        tmp_path, monkeypatch):
    monkeypatch.setattr(experiment, "_cost_per_round", lambda rows: 1.0)
    # 4.5 s at 1 s a round: a claim that needs 4 rounds more gets them, one that needs 47 more gets none
    # (a look of the 4 the budget would pay for ends undecided at the spread observed, and spends a look)
    four_more = lambda rows, confidence: (False, int(rows["round"].nunique()) + 4)  # noqa: E731
    methods = FakeMethods({name: [1.0] * 60 for name in "ABC"})
    frame = _decide(tmp_path / "a", methods, [_claim(four_more, "A")], experiment.Looks(max_looks=2, budget_s=4.5))
    assert frame[frame["run"] == "A"]["round"].nunique() == 3 + 4
    never = lambda rows, confidence: (False, 50)  # noqa: E731
    methods = FakeMethods({name: [1.0] * 60 for name in "ABC"})
    frame = _decide(tmp_path / "d", methods, [_claim(never, "A")], experiment.Looks(max_looks=2, budget_s=4.5))
    assert frame[frame["run"] == "A"]["round"].nunique() == 3 and len(methods.calls) == 9
    methods = FakeMethods({name: [1.0] * 60 for name in "ABC"})
    _decide(tmp_path / "b", methods, [_claim(never, "A")], experiment.Looks(max_looks=3, budget_s=0))
    decided = lambda rows, confidence: (True, None)  # noqa: E731
    _decide(tmp_path / "c", methods, [_claim(decided, "A")], experiment.Looks(max_looks=3, budget_s=1000))
    assert len(methods.calls) == 18  # two base measurements, nothing more


def test_the_claim_cheapest_to_decide_goes_first_and_another_claims_look_counts(tmp_path, monkeypatch):
    monkeypatch.setattr(experiment, "_cost_per_round", lambda rows: 5.0 if "A" in set(rows["run"]) else 1.0)
    seen = []

    def needs(name, more):
        def judge(rows, confidence):
            seen.append(name)
            return False, int(rows[rows["run"] == more]["round"].nunique()) + 2
        return judge

    methods = FakeMethods({name: [1.0] * 20 for name in "ABC"})
    frame = _decide(tmp_path, methods, [_claim(needs("AB", "A"), "A", "B", claim="costly"),
                                        _claim(needs("C", "C"), "C", claim="cheap")],
                    experiment.Looks(max_looks=2, budget_s=1000))
    extra = frame[frame["look"] > 0]
    assert list(dict.fromkeys(extra.sort_values("round")["extended_for"])) == ["cheap", "costly"]
    assert methods.calls[9:11] == ["C", "C"]
    # two looks: each claim one extra, however many times it was judged
    assert frame[frame["run"] == "C"]["round"].nunique() == 5 and frame[frame["run"] == "A"]["round"].nunique() == 5
    shared = _claim(needs("B", "B"), "B", claim="shares B")
    assert experiment.looks_taken(frame, shared) == 2  # B's data changed with the costly claim's look


def test_claims_must_name_a_measured_group_and_a_sound_stopping_rule(tmp_path):
    with pytest.raises(ValueError, match="not measured"):
        _decide(tmp_path, FakeMethods({}), [_claim(lambda r, c: (True, None), "A", group="other")],
                experiment.Looks(max_looks=2, budget_s=1))
    with pytest.raises(ValueError, match="max_looks 0"):
        experiment.Looks(max_looks=0)


def test_a_rounds_cost_is_its_runs_median_pass_the_extra_rounds_once_there_are_some():
    rows = pd.DataFrame({"run": ["A", "A", "B", "B", "A", "B"], "round": [0, 1, 0, 1, 2, 2], "retakes": 0,
                         "pass_cost_s": [4.0, 6.0, 1.0, 1.0, 0.5, 0.25], "look": [0, 0, 0, 0, 1, 1]})
    assert experiment._cost_per_round(rows[rows["look"] == 0]) == 5.0 + 1.0
    assert experiment._cost_per_round(rows) == 0.5 + 0.25  # an extra round measures only the claim's cells
    assert experiment._cost_per_round(rows.drop(columns="pass_cost_s")) == 0.0
    # a run another claim's look measured (B) does not stand for this claim's runs that none did (A)
    assert experiment._cost_per_round(rows[(rows["run"] == "A") & (rows["look"] == 0) | (rows["run"] == "B")]) == \
        5.0 + 0.25


def test_a_pass_whose_rows_carry_the_loops_own_columns_stops_rather_than_being_overwritten(tmp_path):
    def measure(run, repetition):  # as rdf_rate_reader's rows carry process_s, its processing time
        return pd.DataFrame({"rep": [0], "warmup": [False], "wall_s": [1.0], "look": [7]}), {}
    with pytest.raises(ValueError, match=r"columns the measuring loop sets itself: \['look'\]"):
        _measure(tmp_path, measure, noise.Settings(), groups=[_group("A")])

"""throughput.core.intervals on samples of known distributions: how often the intervals hold the
true value, paired ratios, and the three-valued verdicts."""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from throughput.core import intervals
from throughput.core.intervals import Estimate, Verdict

PROCESSES = 5  # the default config's repetitions: one value per process
TRIALS = 2000


def _coverage(make_interval, trials: int, seed: int) -> float:
    """Share of `trials` where the interval from five log-normal values around 1 holds 1."""
    rng = np.random.default_rng(seed)
    held = 0
    for _ in range(trials):
        low, high = make_interval(rng.lognormal(0.0, 0.1, PROCESSES), rng)
        held += low <= 1.0 <= high
    return held / trials


def test_the_interval_holds_the_true_value_95_percent_of_the_time():
    coverage = _coverage(lambda x, _: (lambda e: (e.low, e.high))(intervals.across_processes(x)), TRIALS, 1)
    # 2000 trials: the share's standard error is 0.5%
    assert 0.935 <= coverage <= 0.965, coverage


def test_a_bootstrap_of_five_processes_covers_too_seldom():
    # Why the module uses Student's t on logarithms rather than scipy.stats.bootstrap.
    def bootstrap(x, rng):
        result = stats.bootstrap((np.log(x),), np.mean, n_resamples=999, method="BCa", rng=rng)
        return math.exp(result.confidence_interval.low), math.exp(result.confidence_interval.high)

    assert _coverage(bootstrap, 500, 2) < 0.9


def test_a_figure_is_the_geometric_mean_with_bounds_around_it():
    estimate = intervals.across_processes([1.0, 2.0, 4.0])
    assert estimate.value == pytest.approx(2.0) and estimate.processes == 3
    assert estimate.low < 2.0 < estimate.high and estimate.low > 0
    assert estimate.low * estimate.high == pytest.approx(4.0)  # symmetric in logarithms


def test_one_process_gives_a_figure_without_an_interval():
    estimate = intervals.across_processes([3.0])
    assert estimate.value == pytest.approx(3.0) and not estimate.known and math.isnan(estimate.relative_half_width)
    assert intervals.at_least(estimate, 1.0) is Verdict.INCONCLUSIVE


def test_identical_methods_are_not_separated_and_a_clear_difference_is():
    rng = np.random.default_rng(3)
    separated = 0
    for _ in range(TRIALS):
        a, b = rng.lognormal(0.0, 0.05, PROCESSES), rng.lognormal(0.0, 0.05, PROCESSES)
        separated += intervals.comparison(intervals.paired_ratio(a, b)) != "not separated"
    assert separated / TRIALS <= 0.065, separated / TRIALS
    faster = intervals.paired_ratio(rng.lognormal(math.log(1.3), 0.03, PROCESSES),
                                    rng.lognormal(0.0, 0.03, PROCESSES))
    assert intervals.comparison(faster) == "higher" and intervals.comparison(faster.inverted()) == "lower"


def test_a_disturbance_of_a_whole_round_cancels_out_of_a_paired_ratio():
    # Both methods slowed by the same factor in a round (another process took the core):
    # the ratio of their paired values stays 1.2 exactly, with a zero-width interval.
    rounds = np.array([1.0, 3.0, 0.7, 1.5, 2.2])
    ratio = intervals.paired_ratio(1.2 * rounds, rounds)
    assert ratio.value == pytest.approx(1.2) and ratio.relative_half_width == pytest.approx(0.0, abs=1e-12)
    unpaired = intervals.across_processes(1.2 * rounds)
    assert unpaired.relative_half_width > 0.3


@pytest.mark.parametrize("low, high, met_at_least, met_at_most, met_within", [
    (1.1, 1.2, Verdict.MET, Verdict.MISSED, Verdict.MISSED),
    (0.8, 0.9, Verdict.MISSED, Verdict.MET, Verdict.MET),
    (0.9, 1.1, Verdict.INCONCLUSIVE, Verdict.INCONCLUSIVE, Verdict.INCONCLUSIVE),
    (1.0, 1.0, Verdict.MET, Verdict.MET, Verdict.MISSED),
    (0.9, 0.97, Verdict.MISSED, Verdict.MET, Verdict.INCONCLUSIVE),
])
def test_verdicts_come_from_the_whole_interval(low, high, met_at_least, met_at_most, met_within):
    estimate = Estimate(value=math.sqrt(low * high), low=low, high=high, processes=5)
    assert intervals.at_least(estimate, 1.0) is met_at_least
    assert intervals.at_most(estimate, 1.0) is met_at_most
    assert intervals.within(estimate, 0.5, 0.95) is met_within


def test_units_change_without_changing_the_relative_interval():
    estimate = intervals.across_processes([0.9, 1.0, 1.1, 1.05])
    rate = estimate.inverted(1e9)
    assert rate.value == pytest.approx(1e9 / estimate.value)
    assert rate.low == pytest.approx(1e9 / estimate.high) and rate.high == pytest.approx(1e9 / estimate.low)
    assert estimate.scaled(1e-6).relative_half_width == pytest.approx(estimate.relative_half_width)
    with pytest.raises(ValueError, match="positive factor"):
        estimate.scaled(0)


@pytest.mark.parametrize("call, message", [
    (lambda: intervals.across_processes([]), "non-empty"),
    (lambda: intervals.across_processes([1.0, 0.0]), "positive finite"),
    (lambda: intervals.across_processes([1.0, float("nan")]), "positive finite"),
    (lambda: intervals.paired_ratio([1.0, 2.0], [1.0]), "one value of each side per round: 2 against 1"),
    (lambda: intervals.paired_ratio([1.0], [-1.0]), "ratio denominator"),
])
def test_bad_values_are_refused_naming_what_is_wrong(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_a_ratio_by_round_pairs_only_the_rounds_both_runs_timed():
    a = {0: 2.0, 1: 4.0, 2: 3.0, 3: float("nan"), 5: 1.0}
    b = {0: 1.0, 1: 2.0, 2: 0.0, 3: 1.0, 4: 1.0}
    ratio = intervals.paired_by_round(a, b)  # rounds 0 and 1: round 2 has no time for b, 3 none for a
    assert ratio.processes == 2 and ratio.value == pytest.approx(2.0) and ratio.low == pytest.approx(2.0)
    assert intervals.paired_by_round(a, {7: 1.0}).processes == 0
    assert math.isnan(intervals.paired_by_round({}, {}).value)


def test_the_noise_judgement_is_the_interval_half_width():
    from throughput.core import noise
    values = [1.0, 1.1, 0.9, 1.05]
    assert noise.interval_half_width(values) == intervals.across_processes(values).relative_half_width
    # a pass too short to time gives no value; one value gives no interval
    assert noise.interval_half_width([1.0, float("nan"), 0.0, 1.2]) == \
        intervals.across_processes([1.0, 1.2]).relative_half_width
    assert math.isnan(noise.interval_half_width([1.0, float("nan")]))


def test_a_figure_across_the_timed_processes_leaves_the_untimed_out():
    assert intervals.across_timed([1.0, float("nan"), 0.0, 1.2]) == intervals.across_processes([1.0, 1.2])
    assert intervals.across_timed([float("nan"), -1.0]) is intervals.UNKNOWN
    assert not intervals.UNKNOWN.known and intervals.UNKNOWN.processes == 0


def test_unpaired_comparison_says_lower_or_higher_only_when_the_intervals_lie_apart():
    low, high = intervals.Estimate(1.0, 0.9, 1.1, 5), intervals.Estimate(2.0, 1.8, 2.2, 5)
    assert intervals.unpaired_comparison(low, high) == "lower"
    assert intervals.unpaired_comparison(high, low) == "higher"
    assert intervals.unpaired_comparison(low, intervals.Estimate(1.15, 1.05, 1.3, 5)) == "not separated"
    assert intervals.unpaired_comparison(low, intervals.UNKNOWN) == "not separated"


def test_an_unpaired_ratio_is_welchs_interval_on_the_logarithms_and_covers_95_percent():
    """A ratio of two runs measured in different rounds: the ratio of geometric means with the
    interval scipy's Welch test gives on the logarithms, which holds the true ratio about 95% of
    the time with unequal spreads; identical runs are not separated, a clear gap is."""
    rng = np.random.default_rng(11)
    a, b = np.exp(rng.normal(0.3, 0.05, 5)), np.exp(rng.normal(0.0, 0.15, 6))
    ratio = intervals.unpaired_ratio(a, b)
    welch = stats.ttest_ind(np.log(a), np.log(b), equal_var=False).confidence_interval(0.95)
    assert ratio.value == pytest.approx(math.exp(np.log(a).mean() - np.log(b).mean()))
    assert (math.log(ratio.low), math.log(ratio.high)) == pytest.approx((welch.low, welch.high))
    assert ratio.processes == 5
    true = math.exp(0.3)
    hits = 0
    for _ in range(2000):
        r = intervals.unpaired_ratio(np.exp(rng.normal(0.3, 0.05, 5)), np.exp(rng.normal(0.0, 0.15, 6)))
        hits += r.low <= true <= r.high
    assert 0.935 <= hits / 2000 <= 0.965  # 2000 trials: the share's standard error is 0.5%
    assert intervals.comparison(intervals.unpaired_ratio([1.0, 1.1, 0.9, 1.05], [1.02, 0.98, 1.1, 0.95])) \
        == "not separated"
    assert intervals.comparison(intervals.unpaired_ratio([2.0, 2.1, 1.9], [1.0, 1.05, 0.95])) == "higher"
    assert not intervals.unpaired_ratio([2.0], [1.0, 1.1]).known


def test_mean_across_is_the_arithmetic_mean_with_a_t_interval_and_takes_negative_values():
    values = [-0.5, 1.0, 2.5]
    got = intervals.mean_across(values)
    low, high = stats.t.interval(0.95, len(values) - 1, loc=np.mean(values), scale=stats.sem(values))
    assert got.value == pytest.approx(1.0) and (got.low, got.high) == pytest.approx((low, high))
    assert not intervals.mean_across([3.0]).known
    with pytest.raises(ValueError, match="finite"):
        intervals.mean_across([1.0, float("nan")])


def test_one_less_swaps_the_bounds():
    share = intervals.Estimate(0.25, 0.2, 0.3, 4).one_less()
    assert (share.value, share.low, share.high, share.processes) == pytest.approx((0.75, 0.7, 0.8, 4))
    assert not intervals.UNKNOWN.one_less().known

"""Two runs agree on a cell by equivalence: the 95% interval of their ratio inside the margin (issue
45: overlapping intervals let a true shift of 20% "agree" two times in three)."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from throughput import repeatability


def _cell(value: float, half_width: float) -> tuple[float, float, float]:
    """A value with an interval symmetric in logarithms, +-half_width (0.12 for +-12%)."""
    factor = math.exp(math.log1p(half_width))
    return value, value / factor, value * factor


@pytest.mark.parametrize("a, b, expected", [
    (_cell(1.0, 0.02), _cell(1.01, 0.02), "agrees"),      # the same within a few percent, known tightly
    (_cell(1.0, 0.15), _cell(1.2, 0.15), "too wide"),     # a 20% shift with wide intervals: not "agrees"
    (_cell(1.0, 0.15), _cell(1.0, 0.15), "too wide"),     # equal values, but intervals too wide to tell
    (_cell(1.0, 0.02), _cell(1.3, 0.02), "DIFFERS"),      # a 30% shift, known tightly
    (_cell(1.0, 0.02), _cell(0.7, 0.02), "DIFFERS"),
    ((1.0, math.nan, math.nan), _cell(1.0, 0.01), "too wide"),  # one process: no interval, not judged
])
def test_a_cell_is_judged_by_the_interval_of_its_ratio(a, b, expected):
    ratio, low, high = repeatability.between_runs(*a, *b)
    assert ratio == pytest.approx(b[0] / a[0])
    assert repeatability.verdict(low, high, 0.10) == expected


def test_the_ratios_interval_adds_both_half_widths_in_logarithms():
    ratio, low, high = repeatability.between_runs(*_cell(2.0, 0.03), *_cell(2.0, 0.04))
    assert ratio == 1 and math.log(high) == pytest.approx(math.hypot(math.log(1.03), math.log(1.04)))
    assert low * high == pytest.approx(1)


def test_a_true_shift_with_wide_intervals_rarely_agrees():
    # the simulation: 5 processes, a spread of 10% each, a true shift of 20%. Overlap called
    # it agreeing about two times in three; equivalence (never "agrees" for a shift beyond the margin
    # but by chance at 2.5% a side) almost never does.
    rng = np.random.default_rng(1)
    t = stats.t.ppf(0.975, 4)

    def run(shift: float) -> tuple[float, float, float]:
        logs = np.log(shift) + rng.normal(0, 0.10, 5)
        half = t * logs.std(ddof=1) / math.sqrt(5)
        return math.exp(logs.mean()), math.exp(logs.mean() - half), math.exp(logs.mean() + half)

    trials = [(run(1.0), run(1.2)) for _ in range(2000)]
    overlap = np.mean([a[1] <= b[2] and b[1] <= a[2] for a, b in trials])
    agrees = np.mean([repeatability.verdict(*repeatability.between_runs(*a, *b)[1:], 0.10) == "agrees"
                      for a, b in trials])
    assert overlap > 0.5 and agrees < 0.01, (overlap, agrees)


def _table(verdicts: list[str]) -> pd.DataFrame:
    return pd.DataFrame({"verdict": verdicts, "overlap": [True] * len(verdicts)})


@pytest.mark.parametrize("verdicts, passes, problem", [
    (["agrees"] * 19 + ["DIFFERS"], True, None),
    (["agrees"] * 8 + ["DIFFERS"] * 2, False, "fewer than 90% of the judged cells agree"),
    (["agrees"] * 8 + ["too wide"] * 2, False, "more than 10% of the cells are too wide to judge"),
    ([], False, "the two runs share no cell"),
    (["too wide"], False, "no cell could be judged"),
])
def test_the_check_fails_on_too_few_agreeing_too_many_too_wide_or_no_cells(verdicts, passes, problem):
    passed, sentence = repeatability.judge(_table(verdicts), 0.9, 0.1)
    assert passed == passes, sentence
    assert (problem is None) == ("FAILS" not in sentence) and (problem is None or problem in sentence), sentence

"""Every figure with its 95% interval, every verdict met, missed or inconclusive by it.

A run is measured in P fresh processes (its rounds, throughput.core.experiment), each
giving one value: the median of its timed samples for a time, the best of them
for a bandwidth (as STREAM and BabelStream report). The figure is the geometric
mean of the P values; its interval is Student's t on their logarithms, so it is
exact for log-normal values, which times on a shared machine roughly are, and
never reaches zero or below. A ratio of two methods comes from their paired
per-round log-ratios (they ran in the same rounds), so a disturbance that slowed
one whole round cancels out of it.

Why not scipy.stats.bootstrap: at the study's P = 5 processes a bootstrap
resamples five values, and its percentile and BCa intervals cover the true value
in only about 84% of runs (tests/unit/test_intervals.py measures it), where the
t interval on logarithms gives 95%.
"""
from __future__ import annotations

import enum
import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

import numpy as np
# Student's t quantile from scipy.special: importing scipy.stats takes about a second, a tenth
# of a notebook's budget on a Binder host
from scipy.special import stdtrit

CONFIDENCE = 0.95


def bonferroni(tests: int) -> float:
    """The level of each of `tests` simultaneous intervals (or looks at one figure) that keeps the
    chance of any one missing its true value within 1 - CONFIDENCE (Bonferroni)."""
    return 1 - (1 - CONFIDENCE) / max(1, tests)


@dataclass(frozen=True)
class Estimate:
    """A figure, its interval (NaN bounds where fewer than two processes give no spread) and
    the number of processes it rests on."""

    value: float
    low: float
    high: float
    processes: int

    @property
    def known(self) -> bool:
        """Whether the interval is known (two processes or more)."""
        return not (math.isnan(self.low) or math.isnan(self.high))

    @property
    def relative_half_width(self) -> float:
        """Half the interval's width over the figure (0.05: +-5%); NaN when unknown."""
        return (self.high - self.low) / 2 / self.value if self.known and self.value else math.nan

    def scaled(self, factor: float) -> "Estimate":
        """The same estimate in other units (`factor` > 0): a rate from a time, MB/s from B/s."""
        if not factor > 0:
            raise ValueError(f"an estimate can only be scaled by a positive factor, not {factor}")
        return Estimate(self.value * factor, self.low * factor, self.high * factor, self.processes)

    def inverted(self, numerator: float = 1.0) -> "Estimate":
        """`numerator` over the estimate (a rate from a time): the bounds swap."""
        return Estimate(numerator / self.value, numerator / self.high, numerator / self.low, self.processes)

    def one_less(self) -> "Estimate":
        """One minus the estimate (a share from a ratio of two times): the bounds swap."""
        return Estimate(1 - self.value, 1 - self.high, 1 - self.low, self.processes)


# No figure: nothing was measured, or no process gave a value.
UNKNOWN = Estimate(math.nan, math.nan, math.nan, 0)


def _positive(values: Sequence[float], what: str) -> np.ndarray:
    array = np.asarray(values, dtype=float)
    if array.ndim != 1 or not len(array):
        raise ValueError(f"{what}: need a non-empty list of values, got {values!r}")
    if not np.all(np.isfinite(array)) or np.any(array <= 0):
        raise ValueError(f"{what}: every value must be a positive finite number, got {array.tolist()}")
    return array


def _log_mean(logs: np.ndarray, confidence: float) -> tuple[float, float, float]:
    """Mean of `logs` and its t interval (NaN bounds for a single value)."""
    mean = float(logs.mean())
    if len(logs) < 2:
        return mean, math.nan, math.nan
    half = float(stdtrit(len(logs) - 1, (1 + confidence) / 2) * logs.std(ddof=1) / math.sqrt(len(logs)))
    return mean, mean - half, mean + half


def across_processes(per_process: Sequence[float], confidence: float = CONFIDENCE) -> Estimate:
    """The figure of one run from one positive value per process (its median time, its best
    rate): their geometric mean and its t interval on logarithms."""
    values = _positive(per_process, "per-process values")
    mean, low, high = _log_mean(np.log(values), confidence)
    return Estimate(math.exp(mean), math.exp(low), math.exp(high), len(values))


def across_timed(per_process: Iterable[float], confidence: float = CONFIDENCE) -> Estimate:
    """across_processes over the processes that gave a positive finite value (a pass too short
    for its tool to time gives none); UNKNOWN where none did."""
    values = [float(v) for v in per_process if _usable(v)]
    return across_processes(values, confidence) if values else UNKNOWN


def mean_across(per_process: Sequence[float], confidence: float = CONFIDENCE) -> Estimate:
    """The arithmetic mean of one finite value per process and its t interval: for a figure
    that may be zero or negative in a process (a fixed cost taken as a difference of two
    times), where a geometric mean has no meaning."""
    values = np.asarray(per_process, dtype=float)
    if values.ndim != 1 or not len(values) or not np.all(np.isfinite(values)):
        raise ValueError(f"per-process values: need a non-empty list of finite numbers, got {per_process!r}")
    mean, low, high = _log_mean(values, confidence)  # the same t interval, on the values themselves
    return Estimate(mean, low, high, len(values))


def paired_ratio(a: Sequence[float], b: Sequence[float], confidence: float = CONFIDENCE) -> Estimate:
    """a / b from values of the same rounds (a[i] and b[i] measured in round i): the geometric
    mean of the per-round ratios and its t interval on their logarithms."""
    a, b = _positive(a, "ratio numerator"), _positive(b, "ratio denominator")
    if len(a) != len(b):
        raise ValueError(f"a paired ratio needs one value of each side per round: {len(a)} against {len(b)}")
    mean, low, high = _log_mean(np.log(a) - np.log(b), confidence)
    return Estimate(math.exp(mean), math.exp(low), math.exp(high), len(a))


def paired_by_round(a: Mapping[Any, float], b: Mapping[Any, float], confidence: float = CONFIDENCE) -> Estimate:
    """a / b from two runs' values keyed by round (runs of one interleaved group), over the
    rounds in which both gave a positive finite value (a pass too short for its tool to time
    gives none); NaN without such a round."""
    rounds = sorted(r for r in set(a) & set(b) if _usable(a[r]) and _usable(b[r]))
    if not rounds:
        return UNKNOWN
    return paired_ratio([a[r] for r in rounds], [b[r] for r in rounds], confidence)


def unpaired_ratio(a: Sequence[float], b: Sequence[float], confidence: float = CONFIDENCE) -> Estimate:
    """a / b from two runs that did not run in the same rounds (a warm and a cold cache state
    are measured as separate groups): the ratio of their geometric means and Welch's t interval
    on the difference of their mean logarithms (spreads not assumed equal; Welch-Satterthwaite
    degrees of freedom, as scipy.stats.ttest_ind(equal_var=False) gives it). Wider than a paired
    ratio: nothing that slowed both cancels out. `processes` is the smaller side's count."""
    la, lb = np.log(_positive(a, "ratio numerator")), np.log(_positive(b, "ratio denominator"))
    value, processes = math.exp(float(la.mean() - lb.mean())), min(len(la), len(lb))
    if len(la) < 2 or len(lb) < 2:
        return Estimate(value, math.nan, math.nan, processes)
    va, vb = la.var(ddof=1) / len(la), lb.var(ddof=1) / len(lb)
    if va + vb == 0:
        return Estimate(value, value, value, processes)
    freedom = (va + vb) ** 2 / (va ** 2 / (len(la) - 1) + vb ** 2 / (len(lb) - 1))
    half = float(stdtrit(freedom, (1 + confidence) / 2) * math.sqrt(va + vb))
    return Estimate(value, value * math.exp(-half), value * math.exp(half), processes)


def _usable(value: float) -> bool:
    return math.isfinite(float(value)) and float(value) > 0


class Verdict(str, enum.Enum):
    """What an interval says of a target: the whole interval on its good side (met), the whole
    interval on its bad side (missed), or the target inside the interval (inconclusive; also
    when the interval is unknown)."""

    MET = "met"
    MISSED = "missed"
    INCONCLUSIVE = "inconclusive"


def at_least(estimate: Estimate, target: float) -> Verdict:
    """Is the figure at least `target`?"""
    if not estimate.known:
        return Verdict.INCONCLUSIVE
    if estimate.low >= target:
        return Verdict.MET
    if estimate.high < target:
        return Verdict.MISSED
    return Verdict.INCONCLUSIVE


def at_most(estimate: Estimate, target: float) -> Verdict:
    """Is the figure at most `target`?"""
    if not estimate.known:
        return Verdict.INCONCLUSIVE
    if estimate.high <= target:
        return Verdict.MET
    if estimate.low > target:
        return Verdict.MISSED
    return Verdict.INCONCLUSIVE


def within(estimate: Estimate, low: float, high: float) -> Verdict:
    """Is the figure within [low, high]? Missed when the whole interval is outside."""
    if not estimate.known:
        return Verdict.INCONCLUSIVE
    if low <= estimate.low and estimate.high <= high:
        return Verdict.MET
    if estimate.high < low or estimate.low > high:
        return Verdict.MISSED
    return Verdict.INCONCLUSIVE


def comparison(ratio: Estimate) -> str:
    """How a sentence compares A with B from the paired ratio A/B of a quantity where larger
    is more (a rate): "higher" or "lower" only when the interval excludes 1, else "not
    separated" (this run cannot tell them apart)."""
    verdict = at_least(ratio, 1.0)
    if verdict is Verdict.MET and ratio.low > 1.0:
        return "higher"
    if verdict is Verdict.MISSED:
        return "lower"
    return "not separated"


def unpaired_comparison(a: Estimate, b: Estimate) -> str:
    """How figure `a` compares with figure `b` where they did not run in the same rounds (so no
    paired ratio exists): "lower" or "higher" only when their intervals lie apart, else "not
    separated" (also when either interval is unknown). Stricter than a paired comparison."""
    if not (a.known and b.known):
        return "not separated"
    if a.high < b.low:
        return "lower"
    if a.low > b.high:
        return "higher"
    return "not separated"

"""What the runs say: histograms read and compared bin by bin (every run with its reference run),
summaries of the timings (median wall and CPU time, CPU efficiency, rate), and the Amdahl and
Universal Scalability Law fits of the thread scan."""
from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from ...core import experiment, intervals
from ...core.intervals import Estimate

# Histograms whose name starts with this hold sums of weights (the PDF-weight
# histograms); all others hold counts, which must agree exactly.
WEIGHTED_PREFIX = "pdf"


# ----------------------------------------------------------------------------------------------
# Histograms: reading, comparing

def load_histograms(path: str | os.PathLike) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """name -> (contents, variances), flow bins included, of every histogram in a ROOT file."""
    import uproot

    out = {}
    with uproot.open(path) as handle:
        for name in sorted({key.split(";")[0] for key in handle.keys()}):
            h = handle[name]
            out[name] = (np.asarray(h.values(flow=True), dtype=np.float64),
                         np.asarray(h.variances(flow=True), dtype=np.float64))
    return out


class HistogramMismatch(AssertionError):
    """Two runs that must give the same histograms do not."""


def nhist_names(n: int) -> list[str]:
    """The histograms of rdf_bench's nhist workload with n histograms (nhist_name in rdf_bench.cpp)."""
    return [f"nhist_{i:03d}" for i in range(n)]


def compare_histograms(reference: dict, other: dict, rtol: float, what: str,
                       expected: Iterable[str] | None = None) -> dict[str, Any]:
    """Compare `other` with `reference`: first the names, as sets (`other` must hold exactly the
    `expected` histograms, by default every one of the reference's), then bin by bin. Counts must be
    identical; sums of weights identical or within rtol of max(|a|, |b|, sqrt(variance)). Raises
    HistogramMismatch naming the run and the missing or extra histogram, or the histogram and bin."""
    expected = set(reference) if expected is None else set(expected)
    if not expected:
        raise HistogramMismatch(f"{what}: the reference run has no histograms to compare with")
    unknown = sorted(expected - set(reference))
    if unknown:
        raise HistogramMismatch(f"{what}: histograms {unknown} are expected but not in the reference run")
    missing, extra = sorted(expected - set(other)), sorted(set(other) - expected)
    if missing:
        raise HistogramMismatch(f"{what}: histograms {missing} of the reference run are missing")
    if extra:
        raise HistogramMismatch(f"{what}: histograms {extra} are not in the reference run")
    identical, max_rel = True, 0.0
    for name, (values, variances) in other.items():
        ref_values, ref_variances = reference[name]
        if values.shape != ref_values.shape:
            raise HistogramMismatch(f"{what}: histogram {name} has shape {values.shape}, reference {ref_values.shape}")
        differ = values != ref_values
        if not differ.any():
            continue
        identical = False
        where = np.argwhere(differ)[0]
        if not name.startswith(WEIGHTED_PREFIX):
            raise HistogramMismatch(f"{what}: counts of histogram {name} differ from the reference in bin "
                                    f"{tuple(where.tolist())}: {values[tuple(where)]} != {ref_values[tuple(where)]}")
        scale = np.maximum.reduce([np.abs(values), np.abs(ref_values), np.sqrt(np.abs(ref_variances))])
        rel = np.where(differ, np.abs(values - ref_values) / np.where(scale > 0, scale, 1), 0.0)
        max_rel = max(max_rel, float(rel.max()))
        if rel.max() > rtol:
            worst = np.unravel_index(int(rel.argmax()), rel.shape)
            raise HistogramMismatch(f"{what}: histogram {name} bin {tuple(int(i) for i in worst)}: "
                                    f"{values[worst]!r} vs reference {ref_values[worst]!r} "
                                    f"(relative difference {rel.max():.3g} > {rtol:g})")
    return {"histograms": len(other), "identical": identical, "max_rel_diff": max_rel}


def check_agreement(frame: pd.DataFrame, results_dir: str | Path, rtol: float,
                    extra: dict[str, str] | None = None) -> pd.DataFrame:
    """Compare every run's histograms with its reference run: the same set of histograms (an nhist
    run with fewer histograms than its reference: the first ones), then bin by bin; raise on a
    disagreement. `extra` maps more runs (e.g. Dask's, the same set as their reference) to their
    references. Returns one row per comparison."""
    hists = Path(results_dir) / "histograms"
    pairs = dict(frame.groupby("name", sort=False)["reference"].first())
    asked = dict(frame[frame["part"] == "nhist"].groupby("name", sort=False)["histograms_asked"].first()) \
        if "part" in frame.columns and (frame["part"] == "nhist").any() else {}
    pairs.update(extra or {})
    cache: dict[str, dict] = {}

    def get(name: str) -> dict:
        if name not in cache:
            cache[name] = load_histograms(hists / f"{name}.root")
        return cache[name]

    rows = []
    for name, reference in pairs.items():
        if name == reference:
            continue
        expected = nhist_names(int(asked[name])) if name in asked else None
        result = compare_histograms(get(reference), get(name), rtol, f"run {name} vs {reference}", expected)
        rows.append({"run": name, "reference": reference, **result})
    return pd.DataFrame(rows)


def agreement_summary(agreement: pd.DataFrame) -> dict[str, Any]:
    return {"comparisons": len(agreement), "identical": int(agreement["identical"].sum()),
            "max_rel_diff": float(agreement["max_rel_diff"].max()) if len(agreement) else 0.0}


# ----------------------------------------------------------------------------------------------
# Summaries

def summary(frame: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Median (min, max) wall time and median CPU time of one event loop per group, warm-up
    excluded (a calibrated sample's times over its `loops`), with the spread (`cv`, `noisy`)
    where measured interleaved; CPU efficiency = CPU time / (wall time x threads), threads 0
    (no IMT) counting as 1."""
    measured = frame[~frame["warmup"].astype(bool)].copy()
    loops = measured["loops"].fillna(1) if "loops" in measured else 1
    measured["wall_s"], measured["cpu_s"] = experiment.time_per_pass(measured), measured["cpu_s"] / loops
    measured["cpu_eff"] = measured["cpu_s"] / (measured["wall_s"] * measured["threads"].clip(lower=1))
    extra = {c: (c, "first") for c in ("events", "file_bytes", "read_zip_bytes", "read_tot_bytes", "files", "open_s")
             if c in measured.columns}
    if "noisy" in measured:  # the interleaved runs' spread (throughput.core.experiment; Dask runs have none)
        extra.update(cv=("cv", "max"), noisy=("noisy", "any"))
    out = (measured.groupby(by, sort=False)
           .agg(wall_s=("wall_s", "median"), wall_min=("wall_s", "min"), wall_max=("wall_s", "max"),
                cpu_s=("cpu_s", "median"), cpu_eff=("cpu_eff", "median"), passes=("wall_s", "count"), **extra)
           .reset_index())
    out["khz"] = out["events"] / out["wall_s"] / 1e3
    if "round" in measured:  # what paired ratios pair: each round's median pass (interleaved runs share rounds)
        out["wall_by_round"] = experiment.by_round(measured, by, out)
    else:  # runs measured one after another in one process or cluster (Dask): their timed passes
        out["wall_passes"] = [rows["wall_s"].tolist() for _, rows in measured.groupby(by, sort=False)]
    return out


def time_estimate(row: pd.Series) -> Estimate:
    """A run's time per event loop across its processes (rounds) with its interval, where it
    was measured interleaved; otherwise its median, with no interval."""
    rounds = row.get("wall_by_round")
    if isinstance(rounds, dict) and rounds:
        return intervals.across_timed(rounds.values())
    return Estimate(row["wall_s"], math.nan, math.nan, 0)


def passes_estimate(passes: Sequence[float]) -> Estimate:
    """A run measured in one process or cluster (Dask): its time across its timed passes with
    their interval, which holds how the passes of that cluster differed, not how clusters would."""
    return intervals.across_timed(passes)


def speedup(reference: pd.Series, row: pd.Series) -> Estimate:
    """How many times faster `row`'s run is than `reference`'s, paired round by round with its
    interval where both were measured interleaved (throughput.core.intervals); otherwise the ratio
    of their medians, with no interval."""
    if isinstance(reference.get("wall_by_round"), dict) and isinstance(row.get("wall_by_round"), dict):
        ratio = intervals.paired_by_round(reference["wall_by_round"], row["wall_by_round"])
        if ratio.processes:
            return ratio
    return Estimate(reference["wall_s"] / row["wall_s"], math.nan, math.nan, 0)


# ----------------------------------------------------------------------------------------------
# Fits

def _lstsq_nonnegative(design: np.ndarray, target: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Weighted least squares with every coefficient >= 0 (exhaustive over active sets: few columns)."""
    a, b = design * weights[:, None], target * weights
    best, best_cost = None, math.inf
    n = design.shape[1]
    for mask in range(1, 2**n):
        cols = [j for j in range(n) if mask >> j & 1]
        coef, *_ = np.linalg.lstsq(a[:, cols], b, rcond=None)
        if (coef < 0).any():
            continue
        full = np.zeros(n)
        full[cols] = coef
        cost = float(np.sum((a @ full - b) ** 2))
        if cost < best_cost:
            best, best_cost = full, cost
    return best if best is not None else np.zeros(n)


def fit_amdahl(threads: np.ndarray, wall: np.ndarray) -> dict[str, Any]:
    """T(n) = T1 * (s + (1 - s) / n), fitted to relative residuals; s is the serial fraction."""
    n, t = np.asarray(threads, float), np.asarray(wall, float)
    if len(np.unique(n)) < 2:  # one thread count: nothing to fit
        level = float(np.median(t))
        return {"t1_s": level, "serial_fraction": math.nan, "max_speedup": math.nan, "points": len(np.unique(n)),
                "dof": len(np.unique(n)) - 2, "predict": lambda x: np.full(np.shape(x), level)}
    coef = _lstsq_nonnegative(np.column_stack([np.ones_like(n), 1 / n]), t, 1 / t)
    t1 = coef.sum()
    return {"t1_s": t1, "serial_fraction": coef[0] / t1 if t1 else math.nan,
            "max_speedup": t1 / coef[0] if coef[0] > 0 else math.inf,
            "points": len(np.unique(n)), "dof": len(np.unique(n)) - 2,
            "predict": lambda x: coef[0] + coef[1] / np.asarray(x, float)}


def fit_usl(threads: np.ndarray, wall: np.ndarray) -> dict[str, Any] | None:
    """Universal Scalability Law, T(n) = T1 * (1 + sigma*(n-1) + kappa*n*(n-1)) / n; None with fewer
    than 4 distinct thread counts (3 parameters need at least one degree of freedom)."""
    n, t = np.asarray(threads, float), np.asarray(wall, float)
    if len(np.unique(n)) < 4:
        return None
    coef = _lstsq_nonnegative(np.column_stack([np.ones_like(n), n - 1, n * (n - 1)]), n * t, 1 / (n * t))
    t1, a, b = coef
    return {"t1_s": t1, "sigma": a / t1, "kappa": b / t1, "points": len(np.unique(n)), "dof": len(np.unique(n)) - 3,
            "predict": lambda x: (t1 + a * (np.asarray(x, float) - 1)
                                  + b * np.asarray(x, float) * (np.asarray(x, float) - 1)) / np.asarray(x, float)}

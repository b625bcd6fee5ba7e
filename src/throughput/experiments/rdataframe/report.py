"""For the paper: the seeds' published figures beside ours, the LaTeX tables (cells formatted for
paper.write_table; a part the configuration left out as not measured), every number and sentence
the paper section quotes (paper_macros, the whole of macros.tex), and the figures."""
from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from ...core import experiment, intervals
from ...report import ledger, noise_sentences, paper, seeds
from ...core.intervals import UNKNOWN, Estimate
from ...setup.config import usable_cores
from ...inputs.datasets import MIN_COMPARED_VALUES, float_compression_by_compressor, source_path
from ...machines.tables import section_macros
from .analysis import agreement_summary, passes_estimate, speedup, summary, time_estimate
from . import io_rate_model
from .io_rate_model import rate_model


# ----------------------------------------------------------------------------------------------
# The seeds' published figures (seeds 002 and 004, in throughput.report.seeds with where each comes
# from), used only as "seed" columns beside ours.

SEED_EVENTS_BENCHMARK = seeds.RDF_BENCH_EVENTS  # "fill 9 TH3D's from 513M Monte Carlo events", LZMA
SEED_STORAGE = seeds.RDF_STORAGE
# Compression: total size and size of the branches read (GB), and the benchmark on the local SSD
# (64 threads) and in the page cache (256 threads).
SEED_COMPRESSION = seeds.RDF_COMPRESSION
SEED_NHIST = seeds.RDF_NHIST  # number of histograms (one Define each), LZMA, 32C/64T
SEED_PDF = seeds.RDF_PDF  # 103 Define + Histo2D vs the Histo3D trick, seconds
SEED_PDF_WEIGHTS = seeds.RDF_PDF_WEIGHTS
SEED_RDEC_MB_S = seeds.RDF_RDEC_MB_S  # seed 004's effective decompression rate


def _seconds(text: str) -> float:
    """'8m45s' -> 525.0 (the seeds' notation)."""
    minutes, seconds = text.rstrip("s").split("m")
    return 60 * int(minutes) + float(seconds)


# ----------------------------------------------------------------------------------------------
# Tables and numbers for the paper (cells formatted for paper.write_table)

def _num(value: float, digits: int = 3) -> str:
    return paper.number(value, digits) if value is not None and math.isfinite(value) else "--"


NOT_MEASURED = "not measured (disabled in the configuration)"


def _not_measured() -> pd.DataFrame:
    """The table of a part the configuration left out."""
    return pd.DataFrame({"": [NOT_MEASURED]})


def _threads_label(t: int) -> str:
    return "no IMT" if t == 0 else str(t)


def scaling_table(table: pd.DataFrame) -> pd.DataFrame:
    """The thread scan: wall time and rate across the processes with their interval (min-max of
    the passes), speed-up over the sequential run (paired round by round, with its interval), CPU
    efficiency; a figure from a run that stayed noisy is marked (throughput.core.noise)."""
    scan = table[table["part"] == "scan"].sort_values("threads")
    sequential = scan[scan["threads"] == 0].iloc[0]
    return pd.DataFrame({
        "threads": [_threads_label(t) for t in scan["threads"]],
        "wall [s]": [paper.flagged(paper.estimate(time_estimate(row)), row["noisy"]) for _, row in scan.iterrows()],
        "min--max [s]": [f"{_num(a)}--{_num(b)}" for a, b in zip(scan["wall_min"], scan["wall_max"])],
        "rate [kHz]": [paper.estimate(time_estimate(row).inverted(row["events"] / 1e3)) for _, row in scan.iterrows()],
        # paired with the sequential run round by round, +- its interval; as noisy as either side
        "speed-up": [paper.flagged(paper.estimate(speedup(sequential, row)), row["noisy"] or sequential["noisy"])
                     for _, row in scan.iterrows()],
        "CPU eff.": [_num(v, 2) for v in scan["cpu_eff"]],
    })


def storage_table(table: pd.DataFrame, cpu: str, max_threads: int) -> pd.DataFrame:
    """Seed 002's benchmark table (its rates derived from 513M events) with our all-threads row
    (its time and rate with their intervals across the processes)."""
    ours = table[(table["part"] == "scan") & (table["threads"] == max_threads)].iloc[0]
    time = time_estimate(ours)
    rows = [{"": "seed", "CPU": row.cpu, "storage": row.storage, "threads": str(row.threads),
             "CPU eff.": _num(row.cpu_eff, 2), "wall [s]": _num(row.wall_s),
             "rate [kHz]": _num(SEED_EVENTS_BENCHMARK / row.wall_s / 1e3)} for row in SEED_STORAGE.itertuples()]
    rows.append({"": "this run", "CPU": paper.escape(cpu), "storage": "page cache (warm)", "threads": str(max_threads),
                 "CPU eff.": _num(ours["cpu_eff"], 2), "wall [s]": paper.estimate(time),
                 "rate [kHz]": paper.estimate(time.inverted(ours["events"] / 1e3))})
    return pd.DataFrame(rows)


def compression_table(table: pd.DataFrame, levels: dict[str, int], compressions: list[str],
                      max_threads: int) -> pd.DataFrame:
    """Seed 002's compression table beside ours: sizes (total, branches read), CPU efficiency and time
    at all threads (with its interval across the processes); sizes also as ratios to LZMA, the
    comparison that travels. Not measured without `compressions`."""
    if not compressions:
        return _not_measured()
    ours = table[(table["part"] == "compression") & (table["threads"] == max_threads)].set_index("compression")
    seed = SEED_COMPRESSION.set_index("compression")
    base = ours.loc["LZMA"] if "LZMA" in ours.index else None
    rows = []
    for c in compressions:
        o = ours.loc[c]
        s = seed.loc[c] if c in seed.index else None
        rows.append({
            "algorithm": c if c == "none" else f"{c} ({levels.get(c, '?')})",
            "seed total [GB]": _num(s["total_gb"]) if s is not None else "--",
            "seed read [GB]": _num(s["read_gb"]) if s is not None else "--",
            "seed size / LZMA": _num(s["total_gb"] / seed.loc["LZMA", "total_gb"], 2) if s is not None else "--",
            "seed eff.": _num(s["ssd_eff"], 2) if s is not None else "--",
            "seed time [s]": _num(_seconds(s["ssd_time"])) if s is not None else "--",
            "total [MB]": _num(o["file_bytes"] / 1e6),
            "read [MB]": _num(o["read_zip_bytes"] / 1e6),
            "size / LZMA": _num(o["file_bytes"] / base["file_bytes"], 2) if base is not None else "--",
            "eff.": _num(o["cpu_eff"], 2),
            "wall [s]": paper.estimate(time_estimate(o)),
        })
    return pd.DataFrame(rows)


def nhist_table(table: pd.DataFrame, max_threads: int) -> pd.DataFrame:
    """Seed 002's number-of-histograms table beside ours (wall time with its interval across the
    processes, also relative to one histogram, paired round by round). Not measured without
    histogram-count runs (rdataframe.histogram_counts empty)."""
    if not (table["part"] == "nhist").any():
        return _not_measured()
    ours = table[(table["part"] == "nhist") & (table["threads"] == max_threads)].set_index("histograms")
    seed = SEED_NHIST.set_index("histograms")
    one = ours.loc[1] if 1 in ours.index else None
    rows = []
    for n in sorted(set(ours.index) | set(seed.index)):
        s = seed.loc[n] if n in seed.index else None
        o = ours.loc[n] if n in ours.index else None
        rows.append({
            "histograms": str(n),
            "seed wall [s]": _num(s["wall_s"]) if s is not None else "--",
            "seed eff.": _num(s["cpu_eff"], 2) if s is not None else "--",
            "seed / 1 histo.": _num(s["wall_s"] / seed.loc[1, "wall_s"], 2) if s is not None else "--",
            "wall [s]": paper.estimate(time_estimate(o)) if o is not None else "--",
            "eff.": _num(o["cpu_eff"], 2) if o is not None else "--",
            # n histograms' time over one's: speedup's ratio (its reference's time over the other's)
            "/ 1 histo.": paper.estimate(speedup(o, one), 2) if o is not None and one is not None else "--",
        })
    return pd.DataFrame(rows)


PDF_LABELS = {"defines": "Define + Histo2D per weight", "histo3d": "Histo3D trick",
              "histond": "HistoND, scalars + vectors", "vary": "Vary"}


def pdf_table(table: pd.DataFrame, max_threads: int) -> pd.DataFrame:
    """The PDF-weight methods: wall time (with its interval across the processes), CPU efficiency
    and speed-up over one Define per weight (paired round by round, with its interval). Not
    measured without PDF runs (rdataframe.pdf_methods empty)."""
    if not (table["part"] == "pdf").any():
        return _not_measured()
    ours = table[(table["part"] == "pdf") & (table["threads"] == max_threads)].set_index("method")
    reference = ours.loc["defines"]
    return pd.DataFrame([{
        "method": PDF_LABELS[m],
        "seed time [s]": _num(SEED_PDF[m]) if m in SEED_PDF else "--",
        "seed speed-up": _num(SEED_PDF["defines"] / SEED_PDF[m], 2) if m in SEED_PDF else "--",
        "wall [s]": paper.estimate(time_estimate(ours.loc[m])),
        "CPU eff.": _num(ours.loc[m, "cpu_eff"], 2),
        "speed-up": paper.estimate(speedup(reference, ours.loc[m]), 2),
    } for m in ours.index])


def _dask_versus_compiled(passes: list[float], threads: int, scan: pd.DataFrame) -> Estimate:
    """A Dask run's wall time (its cluster's timed `passes`) over the compiled IMT run's with as
    many threads, unpaired (the Dask cluster ran after the compiled rounds: Welch's interval), or
    UNKNOWN where no such compiled run exists."""
    if threads not in scan.index or not isinstance(scan.loc[threads].get("wall_by_round"), dict):
        return UNKNOWN
    return intervals.unpaired_ratio(passes, list(scan.loc[threads, "wall_by_round"].values()))


def dask_table(dask: pd.DataFrame | None, table: pd.DataFrame) -> pd.DataFrame:
    """Distributed RDataFrame by workers, beside the compiled IMT run with as many threads: each
    Dask figure across the timed event loops of its cluster with its interval, the speed-up over
    one worker and the ratio to the compiled run unpaired (Welch's interval). Not measured
    without Dask runs (None)."""
    if dask is None:
        return _not_measured()
    scan = table[table["part"] == "scan"].set_index("threads")
    ordered = dask.sort_values("threads")
    first = ordered.iloc[0]
    rows = []
    for row in ordered.itertuples():
        wall = passes_estimate(row.wall_passes)
        rows.append({
            "workers": str(row.threads), "partitions": str(int(row.npartitions)),
            "wall [s]": _estimate(wall), "rate [kHz]": _estimate(wall.inverted(row.events / 1e3)),
            "CPU eff.": _num(row.cpu_eff, 2),
            "speed-up": (_estimate(intervals.unpaired_ratio(first["wall_passes"], row.wall_passes), 2)
                         if row.threads != first["threads"] else _num(1)),  # one worker: the reference
            "C++ IMT wall [s]": _estimate(time_estimate(scan.loc[row.threads])) if row.threads in scan.index else "--",
        })
    return pd.DataFrame(rows)


def agreement_table(agreement: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({
        "run": [paper.escape(r) for r in agreement["run"]],
        "reference": [paper.escape(r) for r in agreement["reference"]],
        "histograms": agreement["histograms"].astype(str),
        "bit-identical": ["yes" if v else "no" for v in agreement["identical"]],
        "max. rel. diff.": [_num(v, 2) if v > 0 else "0" for v in agreement["max_rel_diff"]],
    })


def rate_components_table(rs: dict[str, Any] | None, measured: pd.DataFrame | None = None) -> pd.DataFrame:
    """R_IO, R_dec, R_proc, and R1 predicted from them beside R1 measured (one reader, from
    `measured`, by default the summary's own table), each across the rounds with its 95%
    interval. Not measured without the rate model's summary (None)."""
    if rs is None:
        return _not_measured()
    measured = rs["table"] if measured is None else measured

    def np1(cache: str) -> tuple[Estimate, bool]:
        row = measured[(measured["cache"] == cache) & (measured["ttree_cache"] == "on") & (measured["processes"] == 1)]
        if not len(row):
            return UNKNOWN, False
        row = row.iloc[0]
        return Estimate(row["rate"], row["rate_low"], row["rate_high"], 0), bool(row["noisy"])

    est, raw_noisy = rs["estimates"], rs["r_io_noisy"]
    rows = [("R_IO, cold cache (raw bytes)", est["r_io"].get("cold", UNKNOWN), "--", raw_noisy.get("cold", False)),
            ("R_IO, O_DIRECT (past this system's page cache)", est["r_io"].get("direct", UNKNOWN), "--",
             raw_noisy.get("direct", False)),
            ("R_IO, warm cache (raw bytes)", est["r_io"]["warm"], "--", raw_noisy.get("warm", False)),
            ("R_IO, throttled (raw bytes, cold, reads limited)", est["r_io"].get(io_rate_model.THROTTLED, UNKNOWN), "--",
             raw_noisy.get(io_rate_model.THROTTLED, False)),
            ("R_dec (decompress + deserialise, warm)", est["r_dec"], f"{SEED_RDEC_MB_S[0]}--{SEED_RDEC_MB_S[1]}",
             False),
            ("R_proc (processing, decompressed data)", est["r_proc"], "--", False)]
    for cache in ("cold", "warm", io_rate_model.THROTTLED):
        if cache in est["r1_predicted"]:
            rows.append((f"R1 predicted, {cache}", est["r1_predicted"][cache], "--", False))
            measured_rate, noisy = np1(cache)
            rows.append((f"R1 measured, {cache}, one reader", measured_rate, "--", noisy))
    return pd.DataFrame({"rate": [paper.escape(r[0]) for r in rows],
                         "this run [MB/s]": [paper.flagged(_estimate(r[1]), r[3]) for r in rows],
                         "seed [MB/s]": [r[2] for r in rows]})


def _estimate(value: Estimate, digits: int = 3) -> str:
    """An Estimate as the tables print it (paper.estimate), or "--" where it is unknown."""
    return paper.estimate(value, digits) if math.isfinite(value.value) else "--"


def _with_sigma(value: float, sigma: float, dof: int) -> str:
    """A fitted value with its standard deviation; without degrees of freedom (as many points as
    parameters: the curve goes through them) no uncertainty is known, and the value is marked so."""
    if dof < 1:
        return f"{_num(value)} (through its points)"
    return f"${_num(value)} \\pm {_num(sigma, 2)}$" if math.isfinite(sigma) else _num(value)


def _fitted_r_io(fit: Any) -> str:
    if math.isfinite(fit.r_io):
        return _with_sigma(fit.r_io, fit.r_io_sigma, fit.dof)
    return f"unbounded ($> {_num(fit.r_io_lower)}$)" if math.isfinite(fit.r_io_lower) else "unbounded"


def rate_fit_table(rs: dict[str, Any] | None) -> pd.DataFrame:
    """Per cache state and TTreeCache setting: the measured rates at one and at the most processes
    (marked where they outnumber the cores), and the fit with one-standard-deviation uncertainties.
    Not measured without the rate model's summary (None)."""
    if rs is None:
        return _not_measured()
    table = rs["table"]
    rows = []
    for fit in rs["fits"].itertuples():
        group = table[(table["cache"] == fit.cache) & (table["ttree_cache"] == fit.ttree_cache)]
        top = group.sort_values("processes").iloc[-1]
        rows.append({"cache": fit.cache, "TTreeCache": fit.ttree_cache,
                     "R(1) [MB/s]": paper.flagged(_estimate(Estimate(fit.r_np1, fit.r_np1_low, fit.r_np1_high, 0)),
                                                  fit.r_np1_noisy),
                     "R(Np max) [MB/s]": paper.flagged(
                         _estimate(Estimate(top["rate"], top["rate_low"], top["rate_high"], 0)), top["noisy"]),
                     "Np max": str(int(top["processes"])) + (" (> cores)" if top["oversubscribed"] else ""),
                     "fit R1 [MB/s]": _with_sigma(fit.r1, fit.r1_sigma, fit.dof), "fit asymptote [MB/s]": _fitted_r_io(fit),
                     "asymptote": io_rate_model.asymptote_against_raw_read(
                         fit, rs["estimates"]["r_io"].get(fit.cache, UNKNOWN)),
                     "Np fitted": str(fit.points), "dof": str(fit.dof)})
    return pd.DataFrame(rows)


# The model check's rates as its states name them (io_rate_model.model_check; the section words them).
_CHECKED = {"r_io": "io", "r_dec": "dec", "r_proc": "proc"}


def model_check_macros(rs: dict[str, Any] | None) -> dict[str, str]:
    """Per cache state, whether one reader's measured rate lies below every rate Eq. (1) builds
    it from (io_rate_model.model_check), as states paper/sections/rdataframe.tex words:
    RdfModelCheckState, the caches checked (cold, warm, throttled in that order, joined, e.g.
    coldwarm; unchecked where none was; notmeasured without the rate model); per checked cache
    RdfModelCheck{Cold,Warm,Throttled}State (holds, fails, notseparated) and, where it does not
    hold, its RatesState: the rates R_1 is above (fails) or not separated from (io, dec, proc,
    joined in that order)."""
    if rs is None:
        return {"RdfModelCheckState": paper.state(None)}
    macros, checked = {}, []
    for cache in ("cold", "warm", io_rate_model.THROTTLED):
        check = io_rate_model.model_check(rs, cache)
        if check is None:
            continue
        checked.append(cache)
        name = f"RdfModelCheck{cache.capitalize()}"
        macros[f"{name}State"] = check["state"].replace(" ", "")
        if check["state"] != "holds":
            rates = check["above"] if check["state"] == "fails" else check["unseparated"]
            macros[f"{name}RatesState"] = "".join(_CHECKED[k] for k in rates)
    return {"RdfModelCheckState": "".join(checked) or "unchecked", **macros}


def saturation_macros(rs: dict[str, Any] | None) -> dict[str, str]:
    """Where Eq. (1) saturates (N_p, and the cache it is for) against the most reader processes
    this run started, by its interval: RdfSaturationState met (more), missed (fewer), inconclusive
    (not separated) or notmeasured (paper/sections/rdataframe.tex words each); and below it, the
    aggregate rate of the most readers the cores hold (RdfRateCoresProcesses) over one reader's,
    warm (RdfRateCoresSpeedup), and that over those readers (RdfRateCoresEfficiency); one warm
    reader's read calls with TTreeCache over those without (RdfReadCallsOnOverOff; RdfReadCallsState
    measured, or notmeasured unless rate_model.ttree_cache measures both)."""
    if rs is None:
        return {"RdfSaturationNp": "--", "RdfSaturationCache": "--", "RdfSaturationState": paper.state(None),
                "RdfRateCoresProcesses": "--", "RdfRateCoresSpeedup": "--", "RdfRateCoresEfficiency": "--",
                "RdfReadCallsOnOverOff": "--", "RdfReadCallsState": paper.NOT_MEASURED,
                "RdfSharingProcesses": "--", "RdfSharingOnOverOff": "--", "RdfSharingState": paper.NOT_MEASURED}
    saturation, cache = io_rate_model.saturation(rs)
    verdict = intervals.at_least(saturation, int(rs["table"]["processes"].max()))
    # below saturation: as many readers as cores against one, warm (io_rate_model.cores_speedup)
    processes, speedup = rs["cores_speedup"]
    measured = math.isfinite(speedup.value)
    return {"RdfSaturationNp": _estimate(saturation, 2), "RdfSaturationCache": cache,
            "RdfSaturationState": paper.state(verdict), "RdfRateCoresProcesses": str(processes) if measured else "--",
            "RdfRateCoresSpeedup": _estimate(speedup),
            "RdfRateCoresEfficiency": _estimate(speedup.scaled(1 / processes) if measured else speedup),
            "RdfReadCallsOnOverOff": _estimate(rs["read_calls_ratio"]),
            "RdfReadCallsState": "measured" if math.isfinite(rs["read_calls_ratio"].value) else paper.NOT_MEASURED,
            **sharing_macros(rs)}


def sharing_macros(rs: dict[str, Any]) -> dict[str, str]:
    """Cold readers sharing the device with TTreeCache and without (io_rate_model.ttree_cache_sharing):
    how many (RdfSharingProcesses), the aggregate rate with it over without it (RdfSharingOnOverOff),
    RdfSharingState measured, or notmeasured unless rate_model.ttree_cache measures both."""
    processes, ratio = rs["ttree_cache_sharing"]
    measured = math.isfinite(ratio.value)
    return {"RdfSharingProcesses": str(processes) if measured else "--", "RdfSharingOnOverOff": _estimate(ratio),
            "RdfSharingState": "measured" if measured else paper.NOT_MEASURED}


def throttle_macros(rs: dict[str, Any] | None) -> dict[str, str]:
    """The throttled variant of the rate model: its read limit, the raw read under it, the fit's
    asymptote on every process count, the asymptote over the raw read paired round by round, and
    whether it recovers that rate: RdfThrottleState, met, missed, inconclusive or notmeasured;
    the raw read's rate over the limit and whether the kernel's burst moved it by at most
    RdfThrottleBurstShare percent: RdfThrottleBurstState (paper/sections/rdataframe.tex words each)."""
    check = rs["throttled_check"] if rs is not None else None
    share = {"RdfThrottleBurstShare": _num(100 * io_rate_model.BURST_SHARE)}
    if check is None:
        return {"RdfThrottleFactor": "--", "RdfThrottleLimit": "--", "RdfRIOThrottled": "--",
                "RdfThrottleAsymptote": "--", "RdfThrottleDof": "--", "RdfThrottleRatio": "--",
                "RdfThrottleResidual": "--",
                "RdfThrottleState": paper.state(None), "RdfThrottleOverLimit": "--", "RdfThrottleSize": "--",
                "RdfThrottleBurstState": paper.state(None), **share}
    return {"RdfThrottleFactor": _num(check["factor"], 2) if math.isfinite(check["factor"]) else "--",
            "RdfThrottleLimit": _num(check["limit_mb_s"]),
            "RdfRIOThrottled": _estimate(check["raw"]),
            "RdfThrottleAsymptote": _fitted_r_io(check["fit"]),
            "RdfThrottleDof": str(int(check["fit"].dof)),
            "RdfThrottleRatio": _estimate(check["ratio"]),
            # a share that may lie near zero: its bounds, not a relative plus-or-minus
            "RdfThrottleResidual": paper.with_bounds(check["residual"], 2, factor=100, unit=r"\%", missing="--"),
            "RdfThrottleState": paper.state(check["verdict"]),
            "RdfThrottleOverLimit": _estimate(check["over_limit"]), "RdfThrottleSize": _num(check["size_mb"]),
            "RdfThrottleBurstState": paper.state(check["burst"]), **share}


def compression_storage_macros(rs: dict[str, Any] | None) -> dict[str, str]:
    """Seed 002's compressions against the storage (io_rate_model.compression_storage):
    RdfCompStorageState measured or notmeasured (paper/sections/rdataframe.tex words each), the
    readers, LZ4's time over LZMA's from the page cache and from the throttled device, the second
    over the first, and on the throttled device each one's CPU efficiency and LZMA's over LZ4's."""
    pair = rs["compression_storage"] if rs is not None else None
    names = ("RdfCompStorageProcesses", "RdfCompLzFourOverLzmaWarm", "RdfCompLzFourOverLzmaThrottled",
             "RdfCompThrottledOverWarm", "RdfCompEffLzFourThrottled", "RdfCompEffLzmaThrottled",
             "RdfCompEffLzmaOverLzFour")
    if pair is None:
        return {"RdfCompStorageState": paper.NOT_MEASURED, **{name: "--" for name in names}}
    lz4, lzma = io_rate_model.COMPRESSION_PAIR
    throttled = io_rate_model.THROTTLED
    return {"RdfCompStorageState": "measured", "RdfCompStorageProcesses": str(pair["processes"]),
            "RdfCompLzFourOverLzmaWarm": _estimate(pair["lz4_over_lzma"]["warm"]),
            "RdfCompLzFourOverLzmaThrottled": _estimate(pair["lz4_over_lzma"][throttled]),
            "RdfCompThrottledOverWarm": _estimate(pair["throttled_over_warm"]),
            "RdfCompEffLzFourThrottled": _estimate(pair["efficiency"][(lz4, throttled)], 2),
            "RdfCompEffLzmaThrottled": _estimate(pair["efficiency"][(lzma, throttled)], 2),
            "RdfCompEffLzmaOverLzFour": _estimate(pair["lzma_over_lz4_efficiency"])}


def workflow_macros(rs: dict[str, Any] | None, confidence: float = intervals.CONFIDENCE) -> dict[str, str]:
    """Seed 002's RDataFrame workflow on the throttled device (io_rate_model.workflow_rates):
    RdfWorkflowState measured or notmeasured (paper/sections/rdataframe.tex words each), its
    threads, its device rate over the throttled raw read (RdfWorkflowOverRawThrottled, a figure of
    the ledger: at `confidence`, the level its claim's looks split), its rate from the page cache
    over the same raw read, whether that is above or below unity by its interval (RdfWorkflowCoresState
    higher, lower or notseparated: the cores outran the device, the seed's regime, or not), and what a
    loop took from the device over its branches' compressed bytes."""
    rates = rs["by_round"].get("workflow") if rs is not None else None
    if rates is None:
        return {"RdfWorkflowState": paper.NOT_MEASURED, "RdfWorkflowThreads": "--", "RdfWorkflowOverRawThrottled": "--",
                "RdfWorkflowWarmOverRawThrottled": "--", "RdfWorkflowCoresState": paper.NOT_MEASURED,
                "RdfWorkflowDeviceOverRead": "--"}
    from_cache = io_rate_model.workflow_against_raw_read(rs, "from_cache")
    return {"RdfWorkflowState": "measured", "RdfWorkflowThreads": str(rates["threads"]),
            "RdfWorkflowOverRawThrottled": _estimate(io_rate_model.workflow_against_raw_read(rs, "device", confidence)),
            "RdfWorkflowWarmOverRawThrottled": _estimate(from_cache),
            "RdfWorkflowCoresState": intervals.comparison(from_cache).replace(" ", ""),
            "RdfWorkflowDeviceOverRead": _num(rates["device_over_read"], 2)}


def cold_reads_macros(rs: dict[str, Any] | None, confidence: float = intervals.CONFIDENCE) -> dict[str, str]:
    """Where the cold raw reads came from (io_rate_model.cold_reads_verdict): RdfColdReadsState
    reached, cache or notseparated, with the cold rate over the O_DIRECT one (RdfColdOverDirect, a
    figure of the ledger: plus or minus its interval at `confidence`, the level its claim's looks
    split) and over the warm one (RdfColdOverWarm, with its 95% interval's bounds:
    paper.with_bounds); nocold or nodirect where that read was not measured, notmeasured without
    the rate model (paper/sections/rdataframe.tex words each)."""
    verdict = rs["cold_reads"] if rs is not None else None
    if verdict is None:
        state = paper.NOT_MEASURED if rs is None else "nocold" if "cold" not in rs["r_io"] else "nodirect"
        return {"RdfColdReadsState": state, "RdfColdOverDirect": "--", "RdfColdOverWarm": "--"}
    return {"RdfColdReadsState": verdict["state"],
            "RdfColdOverDirect": _estimate(io_rate_model.cold_over_direct(rs["by_round"]["r_io"], confidence)),
            "RdfColdOverWarm": paper.with_bounds(verdict["cold_over_warm"], 3)}


def oversubscribed_macros(rs: dict[str, Any] | None) -> dict[str, str]:
    """Which of the rate model's process counts outnumber the cores of the machine that measured
    them (RdfRateFitCores): RdfRateOversubscribedState none, one or several (paper.count_state),
    notmeasured without the rate model, and those counts, ascending, as RdfRateCounts lists them
    (RdfRateOversubscribedCounts, "--": none); paper/sections/rdataframe.tex words each state."""
    if rs is None:
        return {"RdfRateOversubscribedState": paper.NOT_MEASURED, "RdfRateOversubscribedCounts": "--"}
    table = rs["table"]
    over = sorted(int(n) for n in table[table["oversubscribed"]]["processes"].unique())
    return {"RdfRateOversubscribedState": paper.count_state(len(over)),
            "RdfRateOversubscribedCounts": ", ".join(str(n) for n in over) or "--"}


def dask_macros(params: dict[str, Any], dask: pd.DataFrame | None, scan: pd.DataFrame) -> dict[str, str]:
    """Distributed RDataFrame's numbers (the Dask runs `dask`, against the compiled scan `scan` by
    threads): how it ran, RdfDaskModeState scheduler (rdataframe.dask.scheduler), local (a local
    cluster of single-threaded worker processes) or notrun (rdataframe.dask.enabled false); the
    largest cluster's workers (RdfDaskWorkers, 0 where not run, and RdfDaskWorkersState none, one
    or several: paper.count_state), its speed-up over one worker and its wall time over the
    compiled run with as many threads; paper/sections/rdataframe.tex words each state."""
    if dask is None or not len(dask):
        return {"RdfDaskModeState": "notrun", "RdfDaskWorkers": "0", "RdfDaskWorkersState": paper.count_state(0),
                "RdfDaskSpeedup": "--", "RdfDaskOverCpp": "--"}
    d = dask.sort_values("threads")
    largest = int(d["threads"].iloc[-1])
    one, most = d["wall_passes"].iloc[0], d["wall_passes"].iloc[-1]
    return {"RdfDaskModeState": "scheduler" if params["dask"]["scheduler"] else "local",
            "RdfDaskWorkers": str(largest), "RdfDaskWorkersState": paper.count_state(largest),
            "RdfDaskSpeedup": _estimate(intervals.unpaired_ratio(one, most), 2),
            "RdfDaskOverCpp": _estimate(_dask_versus_compiled(most, largest, scan), 3)}


def pdf_weights_macros(params: dict[str, Any], pdf_count: int) -> dict[str, str]:
    """The PDF weights the analysis fills: the branch's values per event (RdfPdfCount), whether the
    nominal weight is put in front of them (rdataframe.pdf_nominal: RdfPdfNominalState added or
    notadded) and the weights that makes (RdfPdfWeights), as many as seed 002's (RdfPdfVsSeedState
    same) or not (different; the seed's count is SeedRdfPdfWeights); paper/sections/rdataframe.tex
    words each state."""
    weights = pdf_count + int(params["pdf_nominal"])
    return {"RdfPdfCount": str(pdf_count), "RdfPdfWeights": str(weights),
            "RdfPdfNominalState": "added" if params["pdf_nominal"] else "notadded",
            "RdfPdfVsSeedState": "same" if weights == SEED_PDF_WEIGHTS else "different"}


def amdahl_macros(amdahl: dict[str, Any], sequential_s: float) -> dict[str, str]:
    """Amdahl's law fitted to the thread scan (analysis.fit_amdahl): the serial fraction, the thread
    counts and the degrees of freedom; taken at its word at seed 002's fewest and most threads
    (SeedRdfThreadsSmall, SeedRdfThreadsLarge), its speed-up over the sequential run's `sequential_s`
    (RdfAmdahlSpeedupSmall, RdfAmdahlSpeedupLarge) only where the fit has a degree of freedom left:
    RdfAmdahlExtrapolationState extrapolated, or notextrapolated (a fit through every point says
    nothing of the law's form); paper/sections/rdataframe.tex words each state."""
    threads = sorted(set(SEED_STORAGE["threads"]))
    extrapolated = amdahl["dof"] >= 1
    at = [_num(float(sequential_s / amdahl["predict"](n)), 2) if extrapolated else "--"
          for n in (threads[0], threads[-1])]
    return {"RdfSerialFraction": _num(amdahl["serial_fraction"], 2), "RdfAmdahlDof": str(amdahl["dof"]),
            "RdfAmdahlPoints": str(amdahl["points"]),
            "RdfAmdahlExtrapolationState": "extrapolated" if extrapolated else "notextrapolated",
            "RdfAmdahlSpeedupSmall": at[0], "RdfAmdahlSpeedupLarge": at[1]}


def usl_macros(usl: dict[str, Any] | None) -> dict[str, str]:
    """The Universal Scalability Law fitted to the thread scan (analysis.fit_usl, None with fewer
    than four thread counts): RdfUslState fitted, with its contention RdfUslSigma, coherency
    RdfUslKappa and degrees of freedom RdfUslDof, or notfitted (RdfAmdahlPoints says how many thread
    counts there were); paper/sections/rdataframe.tex words each state."""
    if usl is None:
        return {"RdfUslState": "notfitted", "RdfUslSigma": "--", "RdfUslKappa": "--", "RdfUslDof": "--"}
    return {"RdfUslState": "fitted", "RdfUslSigma": _num(usl["sigma"]), "RdfUslKappa": _num(usl["kappa"]),
            "RdfUslDof": str(usl["dof"])}


def compression_macros(table: pd.DataFrame, compressions: list[str], max_threads: int) -> dict[str, str]:
    """Seed 002's size figures, as the files give them (paper.exact: the same bytes every round):
    the compressed bytes of the branches the analysis reads over the main files' bytes
    (RdfReadShare), and the ZSTD and LZ4 files' bytes over the LZMA ones' of the same events
    (RdfSizeZstdOverLzma, RdfSizeLzFourOverLzma) and LZ4's over ZSTD's (RdfSizeLzFourOverZstd); and
    its trade-off's other side, the analysis's time at the most threads on the LZMA files over the
    ZSTD ones' (RdfTimeLzmaOverZstd) and on the ZSTD files over the LZ4 ones' (RdfTimeZstdOverLzFour),
    paired round by round (the compressions are one group: measuring.cpp_groups); "--" where not
    measured."""
    scan = table[table["part"] == "scan"]
    macros = {"RdfReadShare": paper.exact(scan["read_zip_bytes"].iloc[0] / scan["file_bytes"].iloc[0], 3)}
    ours = table[(table["part"] == "compression") & (table["threads"] == max_threads)].set_index("compression")
    measured = set(compressions) & set(ours.index)
    for larger, smaller, name in (("ZSTD", "LZMA", "ZstdOverLzma"), ("LZ4", "LZMA", "LzFourOverLzma"),
                                  ("LZ4", "ZSTD", "LzFourOverZstd")):
        both = {larger, smaller} <= measured
        macros[f"RdfSize{name}"] = (paper.exact(ours.loc[larger, "file_bytes"] / ours.loc[smaller, "file_bytes"], 3)
                                    if both else "--")
    for slower, faster, name in (("LZMA", "ZSTD", "LzmaOverZstd"), ("ZSTD", "LZ4", "ZstdOverLzFour")):
        both = {slower, faster} <= measured
        macros[f"RdfTime{name}"] = _estimate(speedup(ours.loc[slower], ours.loc[faster])) if both else "--"
    return macros


def agreement_macros(agreement: pd.DataFrame) -> dict[str, str]:
    """Every run's histograms against its sequential reference (analysis.agreement_summary): the
    comparisons (RdfComparisons), those bit-identical (RdfIdentical) and the largest relative
    difference of the others' sums of weights (RdfMaxRelDiff); RdfAgreementState identical (all
    of them) or withintolerance (some differ, within the tolerance); paper/sections/rdataframe.tex
    words each state."""
    agree = agreement_summary(agreement)
    return {"RdfComparisons": str(agree["comparisons"]), "RdfIdentical": str(agree["identical"]),
            "RdfMaxRelDiff": _num(agree["max_rel_diff"], 2) if agree["max_rel_diff"] > 0 else "0",
            "RdfAgreementState": "identical" if agree["identical"] == agree["comparisons"] else "withintolerance"}


def paper_macros(params: dict[str, Any], table: pd.DataFrame, agreement: pd.DataFrame, info: dict[str, Any],
                 amdahl: dict[str, Any], usl: dict[str, Any] | None, dask: pd.DataFrame | None,
                 rs: dict[str, Any] | None, not_measured: dict[str, str], datasets: dict[str, Any],
                 max_threads_requested: int | None, *, inputs: dict[str, Any], cpp: pd.DataFrame,
                 noise_settings: Any, archived: list[Any]) -> dict[str, str]:
    """Every number and sentence the paper section quotes, as macro name -> LaTeX: the runs'
    (`_run_macros`), their noise control (throughput.report.noise_sentences, from the compiled
    runs `cpp`), the inputs' floats against the real file's (`precision_macros`; `datasets`:
    the config's datasets section) and which archived machines are shown."""
    # the inputs' floats against the real file's: precision kept, compression factor per branch by
    # each compressor of ROOT's baskets
    float_branches = float_compression_by_compressor(inputs["main"][0], source_path(datasets))
    return {
        **_run_macros(params, table, agreement, info, amdahl, usl, dask, rs, not_measured, datasets["levels"],
                      max_threads_requested),
        **noise_sentences.paper_macros("Rdf", cpp, noise_settings, section="rdataframe"),
        **precision_macros(float_branches, datasets["jitter"]),
        **section_macros("Rdf", archived, "rdataframe"),
    }


def _run_macros(params: dict[str, Any], table: pd.DataFrame, agreement: pd.DataFrame, info: dict[str, Any],
                amdahl: dict[str, Any], usl: dict[str, Any] | None, dask: pd.DataFrame | None,
                rs: dict[str, Any] | None, not_measured: dict[str, str], levels: dict[str, int],
                max_threads_requested: int | None) -> dict[str, str]:
    """The runs' numbers the paper section quotes (paper_macros adds the rest), as macro name -> LaTeX."""
    top = params["max_threads"]
    scan = table[table["part"] == "scan"].set_index("threads")
    sequential = scan.loc[0, "wall_s"]
    pdf = table[(table["part"] == "pdf") & (table["threads"] == top)].set_index("method")
    main_files = params["files"]
    looks = experiment.Looks.of(params["rate_model"])  # Eq. (1)'s claim: its figures' level, its extra rounds
    macros = {
        "RdfCores": str(usable_cores()),
        "RdfMaxThreads": str(top),
        "RdfMaxThreadsRequested": str(max_threads_requested or top),
        "RdfFiles": str(main_files),
        "RdfEventsPerFile": _num(params["events_per_file"]),
        "RdfEvents": _num(int(scan.loc[0, "events"])),
        "RdfCompression": params["compression"],
        "RdfLevel": str(levels.get(params["compression"], 0)),
        "RdfCompressionFiles": str(params["compression_files"]),
        "RdfCollection": paper.escape(params["collection"]),
        "RdfPdfBranch": paper.escape(params["pdf_weights_branch"]),
        **pdf_weights_macros(params, info["pdf_count"]),
        "RdfRepetitions": str(params["repetitions"]), "RdfWarmup": str(params["warmup"]),
        "RdfSequentialKHz": _num(scan.loc[0, "khz"]),
        # Opening one file and its tree (measured by the kernel before its event loops), against one
        # file's share of the sequential event loop.
        "RdfOpenMs": _num(1e3 * scan.loc[0, "open_s"] / main_files, 2),
        "RdfLoopPerFileMs": _num(1e3 * sequential / main_files, 2),
        "RdfTopKHz": _num(scan.loc[top, "khz"]),
        "RdfTopSpeedup": paper.estimate(speedup(scan.loc[0], scan.loc[top])),
        "RdfTopEff": _num(scan.loc[top, "cpu_eff"], 2),
        # the IMT run with one thread over the sequential one, paired round by round
        "RdfImtOneOverhead": paper.estimate(speedup(scan.loc[1], scan.loc[0]), 3) if 1 in scan.index else "--",
        **amdahl_macros(amdahl, sequential),  # its states; the section words each
        **usl_macros(usl),
        **agreement_macros(agreement),
        "RdfRtol": _num(params["rtol"], 2),
    }
    for method, name in (("histo3d", "Trick"), ("histond", "Histond"), ("vary", "Vary")):
        # paired round by round with its interval, as the tables print them
        macros[f"Rdf{name}Speedup"] = (paper.estimate(speedup(pdf.loc["defines"], pdf.loc[method]), 2)
                                       if method in pdf.index else "--")
    macros.update(compression_macros(table, params["compressions"], top))
    nhist = table[(table["part"] == "nhist") & (table["threads"] == top)].set_index("histograms")
    counts_ = sorted(nhist.index)
    macros["RdfNhistMax"] = str(counts_[-1]) if counts_ else "--"
    macros["RdfNhistRatio"] = (paper.estimate(speedup(nhist.loc[counts_[-1]], nhist.loc[counts_[0]]), 2)
                               if len(counts_) > 1 else "--")
    macros.update(dask_macros(params, dask, scan))
    if rs is not None:
        fits = rs["fits"]
        macros.update({
            "RdfRateFiles": str(params["rate_model"]["files"]),
            "RdfRateCompression": params["rate_model"]["compression"],
            "RdfRateMB": _num(rs["size_mb"]),
            "RdfRateMaxNp": str(int(rs["table"]["processes"].max())),
            "RdfRateDof": str(int(fits["dof"].max())) if len(fits) else "--",
            "RdfRIOCold": _estimate(rs["estimates"]["r_io"].get("cold", UNKNOWN)),
            "RdfRIOWarm": _estimate(rs["estimates"]["r_io"]["warm"]),
            "RdfRIODirect": _estimate(rs["estimates"]["r_io"].get("direct", UNKNOWN)),
            "RdfRateCounts": ", ".join(str(n) for n in sorted(rs["table"]["processes"].unique())),
            "RdfRDec": _estimate(rs["estimates"]["r_dec"]), "RdfRProc": _estimate(rs["estimates"]["r_proc"]),
            "RdfROnePredCold": _estimate(rs["estimates"]["r1_predicted"].get("cold", UNKNOWN)),
            "RdfROnePredWarm": _estimate(rs["estimates"]["r1_predicted"]["warm"]),
            # Eq. (1)'s prediction over the measured one reader, paired round by round, at the level
            # its claim's looks split (io_rate_model.deciding_claims; the ledger judges it)
            **{f"RdfROnePredOverMeasured{cache.capitalize()}":
               _estimate(io_rate_model.predicted_over_measured(rs, cache, looks.confidence)) for cache in ("cold", "warm")},
            "RdfTSetupShare": _estimate(rs["setup_share"], 2),
            "RdfLoadOverProcess": _estimate(rs["load_over_process"]),
            "RdfOffCpuShare": paper.with_bounds(rs["off_cpu_share"], 2, factor=100, unit=r"\%", missing="--"),
            "RdfProcOverIOWarm": _estimate(rs["proc_over_io_warm"], 2),
            "RdfLimiter": io_rate_model.slowest_limit(rs),
            "RdfRateFitCores": str(int(rs["cores"])),
            **model_check_macros(rs),  # its states; the section words each
            **oversubscribed_macros(rs),
            **cold_reads_macros(rs, looks.confidence),
            **compression_storage_macros(rs),
            **throttle_macros(rs),
            **workflow_macros(rs, looks.confidence),
        })
        macros.update(saturation_macros(rs))
    else:
        macros.update({k: "--" for k in ("RdfRateFiles", "RdfRateCompression", "RdfRateMB", "RdfRateMaxNp",
                                          "RdfRateDof", "RdfRIOCold", "RdfRIOWarm", "RdfRDec", "RdfRProc",
                                          "RdfRIODirect", "RdfRateCounts",
                                          "RdfROnePredCold", "RdfROnePredWarm", "RdfROnePredOverMeasuredCold",
                                          "RdfROnePredOverMeasuredWarm", "RdfTSetupShare", "RdfLoadOverProcess",
                                          "RdfOffCpuShare", "RdfProcOverIOWarm", "RdfLimiter",
                                          "RdfRateFitCores")})
        macros.update(model_check_macros(None))
        macros.update(oversubscribed_macros(None))
        macros.update(cold_reads_macros(None))
        macros.update(compression_storage_macros(None))
        macros.update(throttle_macros(None))
        macros.update(workflow_macros(None))
        macros.update(saturation_macros(None))
    # the stopping rule of Eq. (1)'s extra rounds and what it did
    macros.update(ledger.looks_macros("RdfRate", looks, rs["looks"] if rs is not None else pd.DataFrame(),
                                      ledger.deciding("rdataframe", io_rate_model.DECIDING_FIGURES)))
    macros["RdfNotMeasured"] = paper.escape("; ".join(f"{k}: {v}" for k, v in not_measured.items())) or "nothing"
    # what delayed the model's passes, and which were taken again for it (io_rate_model.samples),
    # worded by paper/wording/noise.tex's \noisesamples from the RdfRateNoise... macros
    macros.update(noise_sentences.macros("RdfRate", rs["samples"]) if rs is not None else {})
    macros["RdfRateSamples"] = r"\noisesamples{RdfRate}" if rs is not None else ""
    return macros


def precision_macros(by_compression: dict[str, pd.DataFrame], jitter: float) -> dict[str, str]:
    """How the inputs' floats compare with the real file's (throughput.inputs.datasets.
    float_compression_by_compressor, one frame per compressor, ZLIB's the real file's own): the
    smear, the branches stored with reduced precision, and the compared branches' compression
    factors against the real file's (largest and median relative difference), by ZLIB and, in
    RdfFactorOthers, by each other compressor."""
    def apart(frame: pd.DataFrame) -> pd.Series:  # each compared branch's factor against the real one's
        return (frame.loc[frame["compared"], "ratio"] - 1).abs()

    def within(frame: pd.DataFrame) -> str:
        return rf"within {_num(100 * apart(frame).max(), 2)}\,\% (median {_num(100 * apart(frame).median(), 2)}\,\%)"

    branches = by_compression["ZLIB"]
    compared, off = branches[branches["compared"]], apart(branches)
    others = [f"{name} {within(frame)}" for name, frame in by_compression.items()
              if name != "ZLIB" and len(apart(frame))]
    return {"RdfJitterPercent": _num(100 * jitter, 2),
            "RdfFactorOthers": ", ".join(others) if others else "no other compressor compared",
            "RdfFloatBranches": str(len(branches)),
            "RdfReducedPrecisionBranches": str(int((branches["zero_bits_real"] > 0).sum())),
            "RdfPrecisionKept": str(int((branches["zero_bits_generated"] >= branches["zero_bits_real"]).sum())),
            "RdfFactorCompared": str(len(compared)),
            "RdfFactorMinValues": str(MIN_COMPARED_VALUES),
            "RdfFactorWorstPercent": _num(100 * off.max(), 2) if len(compared) else "--",
            "RdfFactorMedianPercent": _num(100 * off.median(), 2) if len(compared) else "--"}


# ----------------------------------------------------------------------------------------------
# Figures

def scaling_figure(table: pd.DataFrame, dask: pd.DataFrame | None, amdahl: dict[str, Any],
                   usl: dict[str, Any] | None, seed_threads: int = 256,
                   archived: dict[str, pd.DataFrame] | None = None):
    """Left: speed-up over the sequential run against threads, with the Amdahl (and USL) fit drawn
    over the measured thread counts only (a fit says nothing beyond them; the seed's thread counts
    are on the right, as the seed's figures). Right: CPU efficiency, with the seed's 64- and
    256-thread figures. Each archived machine's scan (`archived_scan`) adds its own speed-up (over
    its own sequential run) and efficiency, black and dash-dotted, a marker each."""
    import matplotlib.pyplot as plt

    scan = table[table["part"] == "scan"].sort_values("threads")
    imt = scan[scan["threads"] > 0]
    sequential = float(scan[scan["threads"] == 0]["wall_s"].iloc[0])
    top = int(imt["threads"].max())
    fig, (left, right) = plt.subplots(1, 2, figsize=(16, 7))
    left.errorbar(imt["threads"], sequential / imt["wall_s"],
                  yerr=[sequential / imt["wall_s"] - sequential / imt["wall_max"],
                        sequential / imt["wall_min"] - sequential / imt["wall_s"]],
                  marker="o", linestyle="none", color="C0", label="RDataFrame + IMT (C++), median")
    grid_in = np.linspace(1, top, 50)
    left.plot(grid_in, sequential / amdahl["predict"](grid_in), color="C1",
              label=f"Amdahl fit, serial fraction {amdahl['serial_fraction']:.3f} ({amdahl['dof']} dof)")
    if usl is not None:
        left.plot(grid_in, sequential / usl["predict"](grid_in), color="C2", label=f"USL fit ({usl['dof']} dof)")
    if dask is not None and len(dask):
        left.errorbar(dask["threads"], sequential / dask["wall_s"], marker="s", linestyle="none", color="C3",
                      label="distributed RDataFrame on Dask (workers)")
    for k, (label, other) in enumerate((archived or {}).items()):
        scan_k = other[other["part"] == "scan"].sort_values("threads")
        imt_k = scan_k[scan_k["threads"] > 0]
        style = {"color": "black", "alpha": 0.6, "linestyle": "-.", "marker": "sD^v<>p"[k % 7], "label": label}
        left.plot(imt_k["threads"], float(scan_k[scan_k["threads"] == 0]["wall_s"].iloc[0]) / imt_k["wall_s"], **style)
        right.plot(imt_k["threads"], imt_k["cpu_eff"], **style)
    ideal = np.array([1, top])
    left.plot(ideal, ideal, color="grey", linestyle="--", label="ideal")
    left.set(xscale="log", yscale="log", xlabel="threads (Dask: workers)", ylabel="speed-up vs sequential")
    left.legend(fontsize="xx-small", loc="upper left")
    right.plot(imt["threads"], imt["cpu_eff"], marker="o", color="C0", label="this run (page cache)")
    for row in SEED_STORAGE.itertuples():
        right.plot([row.threads], [row.cpu_eff], marker="x", linestyle="none", color="grey")
    right.plot([], [], marker="x", linestyle="none", color="grey", label="seed 002 (64 and 256 threads)")
    right.set(xscale="log", xlabel="threads", ylabel="CPU efficiency", ylim=(0, 1.1),
              xlim=(0.8, max(seed_threads, top) * 1.3))
    right.legend(fontsize="xx-small", loc="lower left")
    return fig


def not_measured_figure(why: str):
    """A figure the paper shows that this run did not measure: why, in its place."""
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 6))
    ax.text(0.5, 0.5, why, ha="center", wrap=True)
    ax.set_axis_off()
    return fig


def rate_figure(rs: dict[str, Any], extrapolate_to: int = 24):
    """R(Np) measured (across the rounds with its 95% interval; the passes' min-max where one
    round gives no interval), the fitted model over the processes it was fitted to only (a fit says
    nothing beyond them), the model predicted from R_IO, R_dec and R_proc measured separately
    (dashed, up to `extrapolate_to`: a prediction, not a fit), per cache state."""
    import matplotlib.pyplot as plt

    table, fits = rs["table"], rs["fits"]
    states = list(dict.fromkeys(table["cache"]))
    fig, axes = plt.subplots(1, len(states), figsize=(8 * len(states), 7), squeeze=False)
    for ax, cache in zip(axes[0], states):
        # the fit's own range (io_rate_model.fitted_up_to)
        top = int(io_rate_model.fitted_up_to(cache, rs["cores"], table[table["cache"] == cache]["processes"].max()))
        grid_in = np.linspace(1, top, 50)
        for colour, (ttc, group) in zip(("C0", "C1"), table[table["cache"] == cache].groupby("ttree_cache")):
            group = group.sort_values("processes")
            # the interval across rounds; with one round none is known, so the passes' min-max
            low = group["rate_low"].where(group["rate_low"].notna(), group["rate_min"])
            high = group["rate_high"].where(group["rate_high"].notna(), group["rate_max"])
            ax.errorbar(group["processes"], group["rate"],
                        yerr=[(group["rate"] - low).clip(lower=0), (high - group["rate"]).clip(lower=0)],
                        marker="o", linestyle="none", color=colour, label=f"measured, TTreeCache {ttc}")
            fit = fits[(fits["cache"] == cache) & (fits["ttree_cache"] == ttc)].iloc[0]
            ax.plot(grid_in, rate_model(grid_in, fit.r1, fit.r_io), color=colour,
                    label=f"fit, TTreeCache {ttc}: R1 {fit.r1:.3g}, asymptote {fit.r_io:.3g} MB/s ({fit.dof} dof)")
        if cache in rs["r1_predicted"]:
            grid = np.linspace(1, max(extrapolate_to, top), 100)
            ax.plot(grid, rate_model(grid, rs["r1_predicted"][cache], rs["r_io"][cache]), color="C2", linestyle="--",
                    label=f"predicted from R_IO, R_dec, R_proc (R1 {rs['r1_predicted'][cache]:.3g} MB/s)")
            ax.axhline(rs["r_io"][cache], color="grey", linestyle="-.", label=f"R_IO measured ({cache})")
        if top > rs["cores"]:
            ax.axvspan(rs["cores"] + 0.5, max(extrapolate_to, top), color="grey", alpha=0.1,
                       label=f"more processes than the {rs['cores']} cores")
        ax.set(xlabel="reader processes Np", ylabel="R [MB/s of file bytes]", title=f"{cache} cache", yscale="log")
        ax.legend(fontsize="xx-small", loc="lower right")
    return fig


def archived_scan(rows: pd.DataFrame | None) -> pd.DataFrame | None:
    """An archived machine's thread-scan runs (throughput.machines.tables), summarised as this
    machine's (`summary` by part and threads); None where it holds no complete scan."""
    if rows is None or "part" not in rows.columns:
        return None
    scan = rows[rows["part"] == "scan"]
    if scan.empty or not (scan["threads"] == 0).any() or not (scan["threads"] > 0).any():
        return None
    return summary(scan, ["part", "threads"])


def machine_table(scans: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per machine, from its own thread scan: events, sequential rate, and at its
    most threads the rate, speed-up over its own sequential run and CPU efficiency."""
    rows = []
    for label, table in scans.items():
        scan = table[table["part"] == "scan"]
        sequential = scan[scan["threads"] == 0].iloc[0]
        top = scan[scan["threads"] == scan["threads"].max()].iloc[0]
        noisy = bool(sequential.get("noisy", False)) or bool(top.get("noisy", False))
        rows.append({"machine": paper.escape(label), "events": paper.number(sequential["events"]),
                     "sequential [kHz]": _num(sequential["khz"]), "most threads": str(int(top["threads"])),
                     "rate [kHz]": _num(top["khz"]),
                     "speed-up": paper.flagged(paper.estimate(speedup(sequential, top)), noisy),
                     "CPU eff.": _num(top["cpu_eff"], 2)})
    return pd.DataFrame(rows)

"""Distributed RDataFrame on Dask, measured from Python: the kernel's header declared in Cling
(here and on the workers), the `analysis` workload booked with the kernel's columns, functions and
binnings, the input files warmed where the workers read them, and the runs on a local cluster of
1, 2, 4, ... single-threaded workers or on the configured scheduler's workers."""
from __future__ import annotations

import contextlib
import io
import socket
import tempfile
import time
from pathlib import Path
from typing import Any

import pandas as pd
from tqdm.auto import tqdm

from ... import REPO
from ...core import provenance
from ...core.experiment import measure_once
from ...core.results import atomic_path, input_identity, sha256
from .spec import counts
from .dask_scheduler import SchedulerError, connect_scheduler
from .measuring import _cache_note, _common_key, cache_columns, set_cache

HEADER = REPO / "kernels" / "rdataframe" / "analysis.hpp"
TREE = "Events"


def _declare_analysis():
    """Declare kernels/rdataframe/analysis.hpp locally and (for the workers) with DistributeCppCode."""
    import ROOT

    code = "\n".join(line for line in HEADER.read_text().splitlines() if line.strip() != "#pragma once")
    ROOT.RDF.Distributed.DistributeCppCode(code)
    return ROOT


@contextlib.contextmanager
def _no_progress_bar():
    """Distributed RDataFrame shows dask's progress bar: text in a terminal, an ipywidgets widget in
    a notebook (which fails without ipywidgets). The runs have their own tqdm bar: switch it off."""
    try:
        from ROOT._distrdf.Backends.Dask import Backend as backend
    except ImportError:  # another layout of ROOT's internals: leave it alone
        backend = None
    saved = getattr(backend, "progress", None)
    if saved is not None:
        backend.progress = lambda *args, **kwargs: None
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            yield
    finally:
        if saved is not None:
            backend.progress = saved


def _axis(a) -> tuple[int, float, float]:
    return int(a.bins), float(a.low), float(a.high)


def book_analysis(df, section: dict[str, Any], pdf_count: int) -> dict[str, Any]:
    """The `analysis` workload of rdf_bench.cpp, booked with string expressions on any RDataFrame
    (local or distributed). Same columns, functions and binnings as the kernel."""
    import ROOT

    tpa = ROOT.tpa
    c, pdf = section["collection"], section["pdf_weights_branch"]
    nominal = bool(section["pdf_nominal"])
    n = pdf_count + int(nominal)
    booked = {
        "count": df.Count(),
        "met": df.Histo1D(("met", "", *_axis(tpa.kMet)), "MET_pt"),
        "njet": df.Histo1D(("njet", "", *_axis(tpa.kNJet)), "nJet"),
        "jet_pt": df.Histo1D(("jet_pt", "", *_axis(tpa.kJetPt)), "Jet_pt"),
        "jet_eta_pt": df.Histo2D(("jet_eta_pt", "", *_axis(tpa.kJetEta), *_axis(tpa.kJetPt)), "Jet_eta", "Jet_pt"),
        "npv": df.Histo1D(("npv", "", *_axis(tpa.kNpv)), "PV_npvs"),
    }
    sel = (df.Filter(f"n{c} > 0", f"has a leading {c}")
           .Define("leadPt", f"tpa::lead({c}_pt)")
           .Define("leadEta", f"tpa::lead({c}_eta)")
           .Define("pdfWeights", f"tpa::pdf_weights({pdf}, {'true' if nominal else 'false'}, {pdf_count}u)"))
    booked["lead_pt_eta"] = sel.Histo2D(("lead_pt_eta", "", *_axis(tpa.kLeadPt), *_axis(tpa.kLeadEta)),
                                        "leadPt", "leadEta")
    booked["pdf3d"] = (sel.Define("leadPtVec", "tpa::repeat(leadPt, pdfWeights)")
                       .Define("leadEtaVec", "tpa::repeat(leadEta, pdfWeights)")
                       .Define("pdfIdx", "tpa::indices(pdfWeights)")
                       .Histo3D(("pdf3d", "", *_axis(tpa.kPdfPt), *_axis(tpa.kPdfEta), n, 0.0, float(n)),
                                "leadPtVec", "leadEtaVec", "pdfIdx", "pdfWeights"))
    return booked


def _write_root_histograms(hists: dict[str, Any], path: Path) -> None:
    import ROOT

    with atomic_path(path) as temporary:
        handle = ROOT.TFile.Open(str(temporary), "RECREATE")
        for name, h in hists.items():
            handle.WriteObject(h, name)
        handle.Close()


def _worker_cpu(client) -> float:
    def cpu() -> float:
        import psutil

        times = psutil.Process().cpu_times()
        return times.user + times.system

    return float(sum(client.run(cpu).values()))


def _warm_here(files: list[str]) -> dict[str, Any]:
    """Warm the files in this machine's page cache, checked per file (run on a Dask worker)."""
    with tempfile.TemporaryDirectory(prefix="rdf-cache-") as tmp:
        return {**set_cache(files, "warm", Path(tmp)), "host": socket.gethostname()}


def warm_dask_workers(client, files: list[str]) -> dict[str, Any]:
    """Warm the input files where the Dask workers read them, as the compiled runs do here: with
    the page_cache tool on one worker per host (a host's workers share its page cache), which checks
    every file's resident fraction. Returns cache_columns of the hosts."""
    hosts: dict[str, str] = {}
    for address, host in client.run(socket.gethostname).items():
        hosts.setdefault(host, address)
    if not hosts:
        raise SchedulerError("the Dask cluster has no workers to read the input files")
    found = client.run(_warm_here, list(files), workers=list(hosts.values()))
    return cache_columns("warm", found.values())


def dask_plan(params: dict[str, Any], info: dict[str, Any]) -> list[int]:
    dask = params["dask"]
    if not dask["enabled"]:
        return []
    if dask["scheduler"]:
        return [info["dask_workers"]]
    return counts(dask["max_workers"], "doubling")


def _measure_dask(workers, params, files, pdf_count, hist_path, expected_entries):
    ROOT = _declare_analysis()
    dask = params["dask"]
    cluster = None
    if dask["scheduler"]:
        client = connect_scheduler(dask["scheduler"], dask["connect_timeout_s"])
    else:
        from dask.distributed import Client, LocalCluster

        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
        client = Client(cluster)
    npartitions = min(len(files), workers * dask["partitions_per_worker"])
    rows, last = [], None
    try:
        cache = warm_dask_workers(client, files)
        for index in range(params["warmup"] + params["repetitions"]):
            cpu0, own0, wall0 = _worker_cpu(client), time.process_time(), time.perf_counter()
            df = ROOT.RDataFrame(TREE, files, executor=client, npartitions=npartitions)
            booked = book_analysis(df, params, pdf_count)
            with _no_progress_bar():
                entries = int(booked["count"].GetValue())
            wall1, own1, cpu1 = time.perf_counter(), time.process_time(), _worker_cpu(client)
            if entries != expected_entries:
                raise AssertionError(f"Dask run with {workers} workers saw {entries} entries, the files hold "
                                     f"{expected_entries}")
            last = {name: result.GetValue() for name, result in booked.items() if name != "count"}
            rows.append({"rep": index - params["warmup"], "warmup": index < params["warmup"],
                         "wall_s": wall1 - wall0, "cpu_s": (cpu1 - cpu0) + (own1 - own0),
                         "client_cpu_s": own1 - own0, "events": entries})
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    hist_path.parent.mkdir(parents=True, exist_ok=True)
    _write_root_histograms(last, hist_path)
    frame = pd.DataFrame(rows).assign(workers=workers, npartitions=npartitions, threads=workers,
                                      name=f"dask_w{workers}", part="dask", files=len(files), **cache)
    return frame, provenance.capture(params, cache_state=_cache_note(cache))


def measure_dask(params: dict[str, Any], inputs: dict[str, Any], info: dict[str, Any], results_dir: str | Path,
                 progress: bool = True) -> pd.DataFrame:
    """Distributed RDataFrame on a local Dask cluster of 1, 2, 4, ... workers (or on the configured
    scheduler's workers); histograms to results_dir/histograms/dask_w<N>.root."""
    results_dir = Path(results_dir)
    files = inputs["main"]
    expected = sum(info["entries"][f] for f in files)
    frames = []
    versions = {"packages": provenance.package_versions(), "header_sha256": sha256(HEADER)}
    for workers in tqdm(dask_plan(params, info), desc="Dask runs", unit="run", disable=not progress):
        name = f"dask_w{workers}"
        hist_path = results_dir / "histograms" / f"{name}.root"
        raw_path = results_dir / "raw" / f"{name}.parquet"
        if not hist_path.exists():
            raw_path.unlink(missing_ok=True)
        key = {**_common_key(params, info["pdf_count"]), "dask": params["dask"], "workers": workers,
               "inputs": input_identity(files), **versions}
        frames.append(measure_once(raw_path, key, lambda: _measure_dask(workers, params, files, info["pdf_count"],
                                                                       hist_path, expected)))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()

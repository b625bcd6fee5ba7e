"""Shared fixtures: the repository, and how to run its commands in a subprocess."""
from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
TINY_CONFIG = REPO / "tests" / "data" / "tiny.yaml"


def command_env() -> dict[str, str]:
    """The environment of `make`: the project's venv first on PATH."""
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    env.setdefault("XDG_CACHE_HOME", str(REPO / ".cache"))
    return env


def snakemake(workdir: Path, *args: str, check: bool = False, env: dict[str, str] | None = None,
              **kwargs) -> subprocess.CompletedProcess:
    """Run the study's workflow in `workdir` (sources stay in the repository), in `env`
    (default: `command_env()`)."""
    argv = ["snakemake", "--snakefile", str(REPO / "workflow" / "Snakefile"), "--directory", str(workdir), *args]
    return subprocess.run(argv, capture_output=True, text=True, env=env or command_env(), check=check, **kwargs)


class Daemons:
    """Background processes a test starts (a Dask cluster, a Slurm node): each one's output in
    `logs/<name>.log`; `wait_until` fails the test with every log's tail when one exits or the
    time is up; `stop` terminates them in reverse order (killing after 20 s) and closes the logs."""

    def __init__(self, logs: Path):
        logs.mkdir(parents=True, exist_ok=True)
        self.logs, self._running = logs, []

    def start(self, name: str, argv: list[str], **popen) -> None:
        log = open(self.logs / f"{name}.log", "w")
        self._running.append((name, subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, **popen), log))

    def wait_until(self, ready, what: str, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            exited = [name for name, process, _ in self._running if process.poll() is not None]
            if exited or time.monotonic() > deadline:
                tails = "\n".join(f"== {f.name}\n{f.read_text()[-1500:]}" for f in sorted(self.logs.iterdir()))
                pytest.fail(f"waiting for {what}: {'exited: ' + ', '.join(exited) if exited else 'timed out'}\n{tails}")
            time.sleep(0.2)

    def stop(self) -> None:
        for _, process, log in reversed(self._running):
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
            log.close()


@dataclass
class TinyStudy:
    """The tiny study, run once to its PDF in `workdir`: `result` is Snakemake's; `slurm_jobs` what
    the Slurm controller recorded of every job, with `slurm_cpus` the node's cores (both None
    when Slurm could not run here, for the reason in `without_slurm`)."""
    workdir: Path
    result: subprocess.CompletedProcess
    slurm_jobs: list[dict[str, str]] | None
    slurm_cpus: int | None
    without_slurm: str | None


# `make test` runs the suite on two workers (pytest-xdist, --dist loadfile: the Makefile). The tests
# that read the session's one tiny study are one module (tests/workflow/test_tiny_study.py), so one
# worker runs it once; the slow tests go first, that module first of all, so that the other
# worker's short tests fill the time the tiny study waits on Slurm rather than the other way round.
# (xdist's --dist loadgroup would group by marker, but under pytest 9 it cannot suffix the node ids
# it groups by, and every worker ran the tiny study.)
TINY_STUDY_MODULE = "test_tiny_study.py"


# The measurement lock (throughput.core.measurement_lock) keeps two measurements of one machine
# apart. The suite takes the machine's lock once, for all its tests: a `make paper` started beside
# `make test` waits for the suite, and the suite for it. Inside, each process (each xdist worker)
# measures under a lock of its own: the suite's figures are not published, and with the machine's
# lock between the two workers the tiny study's notebooks and the other worker's readers waited
# for each other (the tiny study's memory-bandwidth notebook 44 s, 2026-12-01).
def pytest_configure(config):
    from throughput.core import measurement_lock

    if not hasattr(config, "workerinput"):  # the controller, or the only process of `-n 0`
        suite = contextlib.ExitStack()
        capture = config.pluginmanager.getplugin("capturemanager")  # so that a wait is said, not swallowed
        with capture.global_and_fixture_disabled() if capture else contextlib.nullcontext():
            suite.enter_context(measurement_lock.held(f"the test suite (pytest in {REPO})"))
        config.add_cleanup(suite.close)
    own = Path(tempfile.gettempdir()) / f"throughput-test-{os.getpid()}.lock"
    os.environ.pop(measurement_lock.HELD_ENV, None)  # the tests' processes hold none until they take theirs
    os.environ[measurement_lock.LOCK_ENV] = str(own)
    config.add_cleanup(lambda: own.unlink(missing_ok=True))


def pytest_collection_modifyitems(config, items):
    def first(item) -> int:
        return 0 if item.path.name == TINY_STUDY_MODULE else 1 if item.get_closest_marker("slow") else 2

    items.sort(key=first)  # stable: the order within each kind is kept


@pytest.fixture(scope="session")
def tiny_study(tmp_path_factory) -> TinyStudy:
    """The tiny study (tests/data/tiny.yaml) run once for the workflow tests (its paper, what a
    change re-runs, an archived machine) and the Slurm test (its jobs): through the Slurm
    profile on a single-node Slurm of this host (tests/slurm_cluster.py) where one can run, as
    `make test` as root has, else on 2 local cores. Each used to run it on its own, 4 to 5
    minutes of `make test` each. The kernels are those `make test` built first (its `kernels`
    prerequisite, with the same build.sh): building them again would take a minute and a half
    and check nothing new; the workflow's kernel rule builds for real in the interrupted run."""
    import slurm_cluster

    workdir = tmp_path_factory.mktemp("tiny")
    if (REPO / "build/kernels/bin").is_dir():
        (workdir / "build").mkdir()
        (workdir / "build/kernels").symlink_to(REPO / "build/kernels")
    arguments = ["--configfile", str(TINY_CONFIG)]
    reason = slurm_cluster.missing()
    if reason:
        return TinyStudy(workdir, snakemake(workdir, "--cores", "2", *arguments), None, None, reason)
    # a short path: munged's socket path must fit a Unix socket's 108 bytes
    cluster = slurm_cluster.SingleNodeSlurm(tmp_path_factory.mktemp("slurm"))
    try:
        cluster.start()
        env = command_env()
        env["PATH"] = f"{cluster.bin}{os.pathsep}{env['PATH']}"
        result = snakemake(workdir, *cluster.workflow_arguments(), *arguments, env=env)
        return TinyStudy(workdir, result, cluster.jobs(), cluster.cpus, None)
    finally:
        cluster.daemons.stop()


@pytest.fixture
def repo() -> Path:
    return REPO


@pytest.fixture(scope="module", autouse=True)
def built_kernels(request) -> list[Path]:
    """The kernels a test module names in KERNELS_USED, built: the module fails naming each
    one missing (`make test` builds them all, so a missing one is a broken build, not a
    reason to skip)."""
    from throughput.core import harness

    names = getattr(request.module, "KERNELS_USED", ())
    missing = [k for k in names if not (harness.kernels_dir() / k).is_file()]
    if missing:
        pytest.fail(f"kernels not built in {harness.kernels_dir()}: {missing} (run kernels/build.sh)")
    return [harness.kernels_dir() / k for k in names]


def loops_follow_the_calibration_rule(rows: pd.DataFrame, warmup: int, min_sample_s: float) -> bool:
    """Replays harness.Calibration (bench::Calibration's twin) on the samples as they ran: each
    sample's loops must be what the samples before it decided. Whether a sample then reached the
    minimum depends on how fast its passes ran on a noisy host, so that is not what a test checks."""
    from throughput.core import harness

    calibration = harness.Calibration(warmup, min_sample_s)
    for index, (loops, wall_s) in enumerate(zip(rows["loops"], rows["wall_s"])):
        if loops != calibration.loops(index):
            return False
        calibration.update(index, loops, wall_s, wall_s)
    return True


def aod_small_arrays(attributes: int) -> list[int]:
    """The attributes of three values per particle (kernels/common/aod_classes.cmake: a % 16 == 14),
    which the flat AOD-like file holds as three branches each, C_aNNN_0.._2; the classes hold the
    first, 14, as their inner std::vector<Float_t> userFloats and the others as Float_t[3]."""
    return list(range(14, attributes, 16))


def flip_basket_bytes(source: str | Path, target: str | Path, branch: str, tree: str = "Events") -> None:
    """Copy `source` to `target` with bytes flipped inside the compressed data of `branch`'s first
    basket: the file opens, but that basket no longer decompresses."""
    import uproot

    target = Path(target)
    shutil.copyfile(source, target)
    with uproot.open(source) as f:
        b = f[tree][branch]
        seek, size = int(b.member("fBasketSeek")[0]), int(b.member("fBasketBytes")[0])
        key_length = b.basket_key(0).fKeylen
    data = bytearray(target.read_bytes())
    start = seek + key_length + 9  # past the key and ROOT's 9-byte compression header
    for i in range(start + 4, min(start + size - key_length - 9, start + 64), 3):
        data[i] ^= 0xFF
    target.write_bytes(bytes(data))


@pytest.fixture
def contended_core():
    """A core that a busy process shares with the kernel pinned to it: the kernel then waits on
    the run queue for about half of every sample, a disturbance by its cause."""
    from throughput.core import harness

    core = harness.single_core() or 0
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"], preexec_fn=harness.pin_to(core))
    try:
        time.sleep(0.2)  # the hog is running before the kernel starts
        yield core
    finally:
        hog.kill()
        hog.wait()


@pytest.fixture
def small_tmpfs(tmp_path):
    """A 1 MB tmpfs: a really full disk (needs the right to mount, as CI's root has)."""
    mount = tmp_path / "small"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)],
                      capture_output=True).returncode != 0:
        pytest.skip("cannot mount a small tmpfs here (not root); the file size limit test covers the path")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], check=True)


def printed_with_interval(cell: str) -> bool:
    """Whether a paper cell carries its interval: as plus-or-minus, or as its two bounds where the
    interval is wider than the value (throughput.report.paper.with_interval)."""
    return r"$\pm$" in cell or r"\confidenceinterval{" in cell


def t_interval(logs: list[float]) -> tuple[float, float, float]:
    """exp of the mean of `logs` and of its 95% t interval, computed here (scipy.stats), not by the study."""
    import math

    import numpy as np
    from scipy import stats

    logs = np.asarray(logs)
    mean = logs.mean()
    half = stats.t.ppf(0.975, len(logs) - 1) * logs.std(ddof=1) / math.sqrt(len(logs)) if len(logs) > 1 else math.nan
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half)

"""Running measurements: compiled kernels and Python functions alike.

Both paths yield the same records: one row per pass, the warm-up passes kept
but flagged (`warmup=True`) so the analysis can drop them, wall time from a
steady clock and CPU time beside it. Every kernel validates its own output and
exits non-zero when that fails; `run_kernel` turns that into an exception, so a
failed validation can never become a number.
"""
from __future__ import annotations

import concurrent.futures
import json
import math
import multiprocessing
import os
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from .. import REPO

# pandas only where a function returns a frame: a reader process of the reader comparison imports
# this module to start (`Retakes`, `kernel_path`) and has no use for pandas' 0.4 s of import.
if TYPE_CHECKING:
    import pandas as pd

DEFAULT_KERNELS_DIR = REPO / "build" / "kernels" / "bin"


class KernelError(RuntimeError):
    """A kernel failed: bad arguments, a crash, or a failed validation."""


def kernels_dir() -> Path:
    """Where the built kernels are: $THROUGHPUT_KERNELS_DIR, else build/kernels/bin."""
    return Path(os.environ.get("THROUGHPUT_KERNELS_DIR", DEFAULT_KERNELS_DIR))


def kernel_path(name: str) -> Path:
    path = kernels_dir() / name
    if not path.is_file():
        raise KernelError(f"kernel '{name}' is not built: {path} is missing (run `make kernels`)")
    return path


def pinned_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """Environment for a kernel: OpenMP threads pinned one per core, nothing dynamic."""
    env = dict(os.environ)
    env.update({"OMP_PROC_BIND": "close", "OMP_PLACES": "cores", "OMP_DYNAMIC": "false"})
    env.update(extra or {})
    return env


def single_core() -> int | None:
    """The core a single-threaded measuring process is pinned to (sched_setaffinity, so the
    scheduler does not move it, and its caches, between cores mid-sample): the last core this
    process may run on, away from core 0, where devices' and the hypervisor's interrupts most
    often land. None where only one core is allowed: nothing to choose."""
    allowed = sorted(os.sched_getaffinity(0))
    return allowed[-1] if len(allowed) > 1 else None


def pin_to(core: int | None, then: Callable[[], None] | None = None) -> Callable[[], None] | None:
    """A Popen preexec_fn that pins the child to `core` (None: no pinning), then calls `then`
    (e.g. io_throttle.ReadThrottle.join) where given."""
    if core is None:
        return then

    def preexec() -> None:
        os.sched_setaffinity(0, {core})
        if then is not None:
            then()
    return preexec


@dataclass
class KernelRun:
    """Everything one kernel invocation printed, split by record type."""

    timings: pd.DataFrame
    validation: dict[str, Any]
    build_info: dict[str, Any]


def json_lines(text: str, source: str) -> list[dict[str, Any]]:
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as error:
            raise KernelError(f"{source}: line {number} is not JSON: {line!r}") from error
    return records


def run_kernel(name: str, args: dict[str, Any], timeout_s: float | None = None,
               on_progress: Callable[[dict[str, Any]], None] | None = None,
               core: int | None = None, preexec: Callable[[], None] | None = None) -> KernelRun:
    """Run kernel `name` with `--key value` options, pinned to `core` where given (a
    single-threaded run: single_core()), calling `preexec` in the child before it starts (e.g.
    io_throttle.ReadThrottle.join); return its records.

    Records of type "progress" are passed to `on_progress` as they arrive (for
    progress bars). Raises KernelError naming the kernel and its arguments when
    it exits non-zero (its stderr is in the message), runs past `timeout_s`, or
    reports a failed validation.
    """
    path = kernel_path(name)
    argv = [str(path)]
    for key, value in args.items():
        argv += [f"--{key}", str(value)]
    command = " ".join(argv[1:])
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    lines = []
    with tempfile.TemporaryFile(mode="w+") as stderr, subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=stderr, text=True, env=pinned_env(),
            preexec_fn=pin_to(core, preexec)) as proc:
        try:
            for line in proc.stdout:
                lines.append(line)
                if on_progress and line.startswith('{"record": "progress"'):
                    on_progress(json.loads(line))
                if deadline and time.monotonic() > deadline:
                    raise subprocess.TimeoutExpired(argv, timeout_s)
            proc.wait(timeout=None if deadline is None else max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired as error:
            proc.kill()
            raise KernelError(f"kernel {name} {command} did not finish within {timeout_s} s") from error
        except BaseException:
            proc.kill()  # Ctrl-C in the notebook stops the kernel too
            raise
        stderr.seek(0)
        message = stderr.read().strip()
    if proc.returncode != 0:
        raise KernelError(f"kernel {name} {command} exited with {proc.returncode}: {message}")
    records = json_lines("".join(lines), f"kernel {name}")
    timings = [r for r in records if r.get("record") == "timing"]
    validations = [r for r in records if r.get("record") == "validation"]
    if len(validations) != 1:
        raise KernelError(f"kernel {name} {command}: expected exactly one validation record")
    if not validations[0].get("ok"):
        raise KernelError(f"kernel {name} {command}: validation failed: {validations[0]}")
    import pandas as pd  # here, not at the top: see TYPE_CHECKING above

    frame = pd.DataFrame(timings).drop(columns="record") if timings else pd.DataFrame()
    return KernelRun(timings=frame, validation=validations[0], build_info=build_info(name))


def build_info(name: str) -> dict[str, Any]:
    """The compiler, flags and -O level kernel `name` was built with."""
    proc = subprocess.run([str(kernel_path(name)), "--build-info"], capture_output=True, text=True)
    if proc.returncode != 0:
        raise KernelError(f"kernel {name} --build-info exited with {proc.returncode}: {proc.stderr.strip()}")
    return json_lines(proc.stdout, f"kernel {name} --build-info")[0]


class Calibration:
    """How many calls one sample repeats, as kernels/common/bench.hpp's bench::Calibration
    decides it (the same rule, for the Python methods): one call per warm-up repetition, then
    as many as the last warm-up call says reach `min_sample_s` of the printed quantity
    (`sample_s`), with a tenth to spare; a sample that still fell short raises the loops for
    the next ones, never lowers them. With `max_sample_s` above 0, no sample is planned to
    cost more than that in all (`wall_s`: a reader's opening and cache preparation too)."""

    def __init__(self, warmup: int, min_sample_s: float, max_sample_s: float = 0.0):
        self.warmup, self.min_sample_s, self.max_sample_s = warmup, min_sample_s, max_sample_s
        self._loops = 1

    def loops(self, rep: int) -> int:
        return 1 if rep < self.warmup else self._loops

    def update(self, rep: int, these: int, sample_s: float, wall_s: float) -> None:
        call_s = sample_s / these
        wanted = 1 if call_s >= self.min_sample_s else math.ceil(1.1 * self.min_sample_s / max(call_s, 1e-9))
        if self.max_sample_s > 0 and wall_s > 0:
            wanted = min(wanted, max(1, int(self.max_sample_s / (wall_s / these))))
        if rep < self.warmup:
            self._loops = wanted
        elif sample_s < self.min_sample_s:
            self._loops = max(self._loops, wanted)


@dataclass(frozen=True)
class Retakes:
    """Which samples are taken again, by their cause rather than by their spread, as
    kernels/common/bench.hpp's bench::Retakes decides it: a measured sample during which this
    process's threads waited on a run queue for a CPU longer than `max_share` of their time in
    it (run delay over wall time times threads) was disturbed by something else on the machine,
    and is taken again, at most `max_retakes` times (its last take kept, and counted)."""

    max_share: float = 0.0  # 0: no sample is taken again
    max_retakes: int = 0

    def __post_init__(self) -> None:
        if not 0 <= self.max_share < 1 or self.max_retakes < 0:
            raise ValueError(f"need 0 <= max_share < 1 and max_retakes >= 0, got {self.max_share} and "
                             f"{self.max_retakes}")

    def disturbed(self, run_delay_s: float, wall_s: float, threads: int = 1) -> bool:
        """Whether a sample waited too long for a CPU (an unknown delay, NaN, never does)."""
        return self.max_share > 0 and run_delay_s > self.max_share * wall_s * max(threads, 1)

    def kernel_args(self) -> dict[str, Any]:
        """The options that give a kernel this rule (bench::retakes_from)."""
        return {"max-run-delay-share": self.max_share, "max-sample-retakes": self.max_retakes}


def time_python(
    function: Callable[[], Any], repetitions: int, warmup: int, min_sample_s: float = 0.0,
    retakes: Retakes = Retakes(), threads: int = 1, **labels: Any
) -> tuple[pd.DataFrame, list[Any]]:
    """Time `function()` warmup times alone, then `repetitions` samples, as run_kernel's records:
    each sample repeats the call as often as `Calibration` says reach `min_sample_s`
    (`loops` in its row), and is taken again while `retakes` says its process's `threads`
    waited too long for a CPU (`run_delay_s`, `sample_retakes`), as the kernels' bench::Sampler does.

    Returns the timing rows (with `labels` as extra columns) and what each call
    returned, so the caller can validate it (its length is the calls made, every take's).
    """
    if repetitions < 1 or warmup < 0 or min_sample_s < 0:
        raise ValueError(f"need repetitions >= 1, warmup >= 0 and min_sample_s >= 0, got {repetitions}, {warmup} "
                         f"and {min_sample_s}")
    rows, outputs, calibration = [], [], Calibration(warmup, min_sample_s)

    def calls(these: int) -> None:
        for _ in range(these):
            outputs.append(function())

    for index in range(warmup + repetitions):
        these = calibration.loops(index)
        sample = take_sample(lambda: timed(lambda: calls(these)), retakes, index >= warmup, threads)
        rows.append({**labels, "rep": index - warmup, "warmup": index < warmup, "loops": these, **sample})
        calibration.update(index, these, sample["wall_s"], sample["wall_s"])
    import pandas as pd  # here, not at the top: see TYPE_CHECKING above

    return pd.DataFrame(rows), outputs


def _pin_self(core: int | None) -> None:
    if core is not None:
        os.sched_setaffinity(0, {core})


# Fresh processes for the Python methods: children of multiprocessing's fork server, a clean
# process started once that imports the first method's module and measures nothing. A spawned
# interpreter would import numpy, pandas, numba and awkward anew each round, about a second
# (4 minutes of the GPU section's tiny test run); a fork of the server takes some 30 ms. The
# server also does numba's one-time set-up (core/jit_setup.py), which each round would repeat.
_FRESH = multiprocessing.get_context("forkserver")
_SERVER_SETUP = ["throughput.core.jit_setup"]


def in_fresh_process(function: Callable[..., Any], *args: Any, core: int | None = None, **kwargs: Any) -> Any:
    """`function(*args, **kwargs)` run in a process of its own (forked from the clean fork
    server; pinned to `core` where given), its result returned and its exception raised here: a
    round of a Python method is then a fresh process, as a compiled kernel's is, and nothing one
    round warmed (JIT code loaded, the allocator's pages, a CUDA context) carries over to the
    next. `function` and its arguments must be picklable (module-level). Why not subprocess and
    JSON lines, as the kernels: the methods return DataFrames and checksums, and
    multiprocessing hands them back as they are."""
    # read when the server starts, at the first call
    _FRESH.set_forkserver_preload([*_SERVER_SETUP, function.__module__])
    with concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=_FRESH, initializer=_pin_self,
                                                initargs=(core,)) as pool:
        return pool.submit(function, *args, **kwargs).result()


def timed(function: Callable[[], Any]) -> dict[str, float]:
    """One call's steady-clock and CPU time, and how long this process's threads waited for a
    CPU meanwhile (`run_delay_s`, NaN: unknown), as bench::time_delayed."""
    before = thread_run_delays()
    wall0, cpu0 = time.perf_counter(), time.process_time()
    function()
    cpu1, wall1 = time.process_time(), time.perf_counter()
    return {"wall_s": wall1 - wall0, "cpu_s": cpu1 - cpu0, "run_delay_s": run_delay_since(before)}


def take_sample(take: Callable[[], dict[str, Any]], retakes: Retakes, may_retake: bool = True,
                threads: int = 1) -> dict[str, Any]:
    """One sample, taken again while `retakes` says it was disturbed, as bench::take_retaking:
    `take` sets up afresh (untimed) what its timed region needs and returns that region's row
    (with `wall_s` and `run_delay_s`, e.g. `timed`'s); `may_retake` false (a warm-up) takes it
    once. Returns the last take's row with `sample_retakes`, the takes dropped before it."""
    for retake in range(retakes.max_retakes + 1):
        row = take()
        if not may_retake or not retakes.disturbed(row["run_delay_s"], row["wall_s"], threads):
            break
    return {**row, "sample_retakes": retake}


def passes_made(timings: pd.DataFrame) -> int:
    """Every pass a process's samples made, warm-up and retaken takes included (each take of a
    sample repeats its `loops`): what an in-place kernel's values count."""
    retaken = timings["sample_retakes"].fillna(0) if "sample_retakes" in timings else 0
    return int((timings["loops"] * (1 + retaken)).sum())


def _schedstat_delay(path: str) -> float:
    """The run delay in one schedstat file (its second field, in ns), in seconds; NaN unknown."""
    try:
        with open(path) as schedstat:
            return int(schedstat.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return math.nan


def run_delay_seconds() -> float:
    """Seconds the calling thread has waited on a run queue for a CPU since it started
    (/proc/thread-self/schedstat), NaN where the kernel does not say: as
    bench::run_delay_seconds, what delayed a sample by its cause."""
    return _schedstat_delay("/proc/thread-self/schedstat")


def thread_run_delays() -> dict[str, float]:
    """The run delay (seconds) of every live thread of this process by its id
    (/proc/self/task/*/schedstat: numba's and the BLAS's threads too); empty where the kernel
    does not say."""
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return {}
    delays = {task: _schedstat_delay(f"/proc/self/task/{task}/schedstat") for task in tasks}
    return {task: delay for task, delay in delays.items() if not math.isnan(delay)}  # a thread may end meanwhile


def run_delay_since(before: dict[str, float]) -> float:
    """How long this process's threads waited for a CPU since `before` (thread_run_delays then):
    each live thread's delay less its delay then (a thread started since counts whole). A thread
    that ended meanwhile cannot be read: its wait is left out (a sum of the live threads' totals
    would lose its whole delay, and could come out negative). NaN where the kernel does not say."""
    after = thread_run_delays()
    if not before or not after:
        return math.nan
    return sum(max(0.0, delay - before.get(task, 0.0)) for task, delay in after.items())


"""The CUDA program's case table (kernels/gpu_bandwidth/gpu_bandwidth.cu, `--list-cases`), its rows
generated at build time from the one the Python methods count with (gpu_bandwidth.cases.KERNEL_CASES)
and joined with each case's implementation, read back without a GPU: the same cases as the
experiment measures, and for each the same bytes per pass, record n, expected adds and clock."""
from __future__ import annotations

import subprocess

import numpy as np
import pytest

from throughput.core import harness
from throughput.experiments import gpu_bandwidth as gb


def listed_bytes(row: dict, itemsize: int, counts: dict[str, int]) -> int:
    """Bytes of one pass from a --list-cases row, counted here on their own (not with gb's code)."""
    widths = {"value": itemsize, "index": 8}
    return sum(term["times"] * counts[term["count"]] * widths[term["width"]] for term in row["bytes_moved"])


def test_list_cases_answers_without_a_gpu_and_before_any_other_option():
    path = harness.kernel_path(gb.CUDA_KERNEL)
    proc = subprocess.run([str(path), "--list-cases"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    rows = harness.json_lines(proc.stdout, "--list-cases")
    assert rows and all(row["record"] == "case" for row in rows)
    proc = subprocess.run([str(path), "--list-cases", "--typo", "1"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "--typo" in proc.stderr, "options are still checked"


def test_the_programs_case_table_is_the_one_python_counts_with():
    listed = gb.listed_cases()
    assert [row["name"] for row in listed] == [case.name for case in gb.KERNEL_CASES]
    assert list(listed) == [case.listed() for case in gb.KERNEL_CASES]


def test_the_program_lists_exactly_the_cases_the_experiment_sends_it():
    sent = set(gb.GPU_CASES) | {gb.JAGGED_KERNEL_CASE[op] for op in gb.GPU_METHOD_JAGGED["cuda"]} | {gb.LAUNCH_CASE}
    assert {row["name"] for row in gb.listed_cases()} == sent


@pytest.mark.parametrize("dtype", gb.DTYPES)
def test_listed_bytes_agree_with_what_the_python_methods_count(dtype):
    """Table 2's cases on n values (transfers: n values across the link; copies and adds: read +
    write), and the jagged operations on events with empty ones among them."""
    rows = {row["name"]: row for row in gb.listed_cases()}
    size, n = np.dtype(dtype).itemsize, 10001
    for case in gb.GPU_CASES:
        got = listed_bytes(rows[case], size, gb.case_shape(n=n))
        assert got == gb.case_bytes_moved(case, dtype, gb.case_shape(n=n)), case
        # transfers cross the link once; copies and adds read and write; the triad reads two
        assert got == (n * size if case.startswith(("h2d", "d2h")) else 3 * n * size if case == "triad_tuned"
                       else 2 * n * size), case
        assert rows[case]["values"] == "n"
    data = gb.make_jagged(300, 3, dtype)
    events, particles, pairs = data.events, data.particles, data.pairs
    by_hand = {"flat_inplace": 2 * particles * size, "flat_immutable": 2 * particles * size,
               "explode": particles * size + events * (size + 8), "combine": 3 * pairs * size + 4 * (events + 1) * 8}
    for op in gb.JAGGED_OPS:
        row = rows[gb.JAGGED_KERNEL_CASE[op]]
        assert listed_bytes(row, size, gb.jagged_shape(data)) == gb.jagged_bytes_moved(op, data) == by_hand[op], op
        assert gb.jagged_shape(data)[row["values"]] == gb.jagged_values(op, data) == (
            pairs if op == "combine" else particles), op

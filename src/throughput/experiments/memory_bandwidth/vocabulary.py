"""The experiment's names and numbers: the seed's figures, the targets, the
kernels' initial values, the modes, and the bytes each value moves."""
from __future__ import annotations

from ...report import seeds

# Seed 000 (figures in throughput.report.seeds): single thread, SEED_N doubles, seconds per pass.
SEED_N = seeds.MBW_VALUES
SEED_SECONDS = seeds.MBW_SECONDS
SEED_PLATEAU_GHZ = seeds.MBW_PLATEAU_GHZ  # the multi-thread limit on a conventional memory bus
# Targets against STREAM scale (the paper quotes them from here): the single-thread -O3
# in-place rate reaches SINGLE_TARGET of it; the all-cores plateau is within PLATEAU_BAND of it.
SINGLE_TARGET = 0.9
PLATEAU_BAND = 0.1
CONSTANT = 1.0
INIT_PERIOD = 1000  # values are i % 1000: small integers, exact in float64
MODES = ("inplace", "immutable")
STREAM_OPS = ("copy", "scale", "add", "triad")
# Bytes actually crossing the memory bus per value, write-allocate included
# (a store to a line not in cache first reads it).
BUS_BYTES_PER_VALUE = {"inplace": 16, "immutable": 24, "copy": 24, "scale": 24, "add": 32, "triad": 32}

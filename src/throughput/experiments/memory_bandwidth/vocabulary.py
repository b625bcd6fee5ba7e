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
BUS_BYTES_PER_VALUE = {"inplace": 16, "immutable": 24, "copy": 24, "scale": 24, "add": 32, "triad": 32, "read": 8}
# Seed 000's hierarchy (disk access << memory access << processing), on one thread in the rounds of
# the -O levels (config key hierarchy): the -O3 in-place add on an array that stays in a core's cache
# (IN_CACHE_VALUES doubles, 128 KiB: every current server core's L2 holds it; a smaller one, in the
# L1, spends much of its pass in the OpenMP region's entry), and the same values as the memory runs
# read from a file with a cold page cache (rdf_raw_read, 8 bytes a value).
IN_CACHE = "C++ in cache"
FROM_FILE = "file, cold"
IN_CACHE_VALUES = 16384

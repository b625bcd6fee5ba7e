"""The measuring machinery every experiment shares: running a kernel or a Python method
(`harness`), the one interleaved measuring loop (`experiment`), noise control (`noise`) and
intervals (`intervals`), raw results and their provenance (`results`, `provenance`), the lock
that serializes measurements and the notebook runner (`measurement_lock`, `notebook`), reads
throttled at the device (`io_throttle`) and the flat numba kernel two experiments measure
(`flat_add`). Imports only `setup` below it."""

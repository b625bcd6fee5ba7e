// The timing record of the memory-bandwidth kernels (add_constant, stream): one
// JSON line per pass, read by throughput.harness; the same fields for both, so
// their rates are computed alike.
#pragma once

#include <omp.h>

#include <string>

#include "bench.hpp"

namespace bench {

inline void print_bandwidth_timing(const char *kernel, const std::string &mode, long long n, int threads,
                                   long long rep, long long warmup, const Timing &t, long long bytes_moved) {
  JsonLine()
      .add("record", "timing")
      .add("kernel", kernel)
      .add("opt", TP_OPT)
      .add("mode", mode)
      .add("n", n)
      .add("threads", threads)
      .add("proc_bind", static_cast<int>(omp_get_proc_bind()))
      .add("rep", rep - warmup)
      .add("warmup", rep < warmup)
      .add("wall_s", t.wall_s)
      .add("cpu_s", t.cpu_s)
      .add("bytes_moved", bytes_moved)
      .print();
}

}  // namespace bench

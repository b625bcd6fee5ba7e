// The timing record of the memory-bandwidth kernels (add_constant, stream): one
// JSON line per sample (of `loops` passes, bench::Sampler), read by
// throughput.harness; the same fields for both, so their rates are computed alike.
// huge_page_bytes: the process's memory in transparent huge pages after the first
// touch (bench::huge_page_bytes), what its arrays' madvise got. run_delay_s and sample_retakes:
// what bench::Sampler saw of the kept take of the sample, and how often it took it again.
#pragma once

#include <omp.h>

#include <string>

#include "bench.hpp"

namespace bench {

inline void print_bandwidth_timing(const char *kernel, const std::string &mode, long long n, int threads,
                                   long long rep, long long warmup, const Sampler::Sample &s,
                                   long long bytes_per_pass, long long huge_page_bytes) {
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
      .add("loops", s.loops)
      .add("wall_s", s.timing.wall_s)
      .add("cpu_s", s.timing.cpu_s)
      .add("run_delay_s", s.run_delay_s)
      .add("sample_retakes", s.retakes)
      .add("bytes_moved", s.loops * bytes_per_pass)
      .add("huge_page_bytes", huge_page_bytes)
      .print();
}

}  // namespace bench

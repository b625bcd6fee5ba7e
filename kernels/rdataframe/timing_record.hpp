// The fields that the RDataFrame experiment's kernels (rdf_bench, rdf_rate_reader,
// rdf_raw_read) write into each timing record to say which sample it is and what it
// took, in one order for all three: rep (negative for the warm-up), warmup, wall_s,
// cpu_s, run_delay_s (bench::time_delayed) and sample_retakes (bench::take_retaking).
#pragma once

#include "bench.hpp"

namespace bench {

inline JsonLine &add_sample_fields(JsonLine &record, long long rep, long long warmup, const DelayedTiming &t,
                                   long long sample_retakes) {
  return record.add("rep", rep - warmup)
      .add("warmup", rep < warmup)
      .add("wall_s", t.wall_s)
      .add("cpu_s", t.cpu_s)
      .add("run_delay_s", t.run_delay_s)
      .add("sample_retakes", sample_retakes);
}

}  // namespace bench

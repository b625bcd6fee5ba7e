// OpenMP with exactly the asked-for number of threads: dynamic adjustment off,
// and a check that a parallel region really gets them (a row measured "at 8
// threads" that ran on fewer would be a wrong result, not a slow one).
#pragma once

#include <omp.h>

#include <stdexcept>
#include <string>

namespace bench {

inline void use_exactly_threads(int threads) {
  omp_set_dynamic(0);
  omp_set_num_threads(threads);
  int threads_seen = 0;
#pragma omp parallel
  {
#pragma omp single
    threads_seen = omp_get_num_threads();
  }
  if (threads_seen != threads)
    throw std::runtime_error("asked for " + std::to_string(threads) + " threads, OpenMP gave " +
                             std::to_string(threads_seen));
}

}  // namespace bench

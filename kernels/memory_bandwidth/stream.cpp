// A STREAM-like reference (after McCalpin's STREAM): copy, scale, add and
// triad over three arrays of N doubles, measured in the same run as the
// add-a-constant kernel, as the physical memory-bandwidth limit each of its
// figures is held against. Written here rather than vendoring stream.c so that
// it shares the harness's clocks, options, threading and JSON output.
//
// Bytes follow STREAM's convention: copy and scale move 16 bytes per value,
// add and triad 24 (write-allocate traffic is not counted).
#include <omp.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "bench.hpp"
#include "omp_threads.hpp"
#include "timing_record.hpp"

using bench::Array;
using bench::allocate;

int main(int argc, char **argv) {
  return bench::guarded_main("stream", argc, argv,
      bench::with_retake_options({{"n", "10000000"}, {"threads", "1"}, {"reps", "5"}, {"warmup", "1"},
      {"min-sample-s", "0"}}), [&](const bench::Options &opt) {
    const long long n = opt.integer("n", 1);
    const int threads = static_cast<int>(opt.integer("threads", 1));
    const long long reps = opt.integer("reps", 1);
    const long long warmup = opt.integer("warmup", 0);
    const double min_sample_s = opt.seconds("min-sample-s", 60);
    const bench::Retakes retakes = bench::retakes_from(opt);

    bench::use_exactly_threads(threads);
    Array a = allocate(n), b = allocate(n), c = allocate(n);
#pragma omp parallel for schedule(static)
    for (long long i = 0; i < n; ++i) {
      a[i] = 1.0;
      b[i] = 2.0;
      c[i] = 0.0;
    }
    const double scalar = 3.0;
    double *pa = a.get(), *pb = b.get(), *pc = c.get();
    const long long word = sizeof(double);

    // STREAM's cycle of four operations per repetition; each operation's sample repeats it as
    // often as its minimum length needs (bench::Sampler, one per operation). All four are
    // idempotent on their inputs, so repeating one leaves the values STREAM's check replays.
    const long long huge = bench::huge_page_bytes();
    bench::Sampler copy(warmup, min_sample_s, retakes, threads), scale(warmup, min_sample_s, retakes, threads),
        add(warmup, min_sample_s, retakes, threads), triad(warmup, min_sample_s, retakes, threads);
    auto report = [&](const char *op, long long rep, const bench::Sampler::Sample &s, long long words) {
      bench::print_bandwidth_timing("stream", op, n, threads, rep, warmup, s, words * word * n, huge);
    };

    for (long long rep = 0; rep < warmup + reps; ++rep) {
      report("copy", rep, copy.take(rep, [&] {
#pragma omp parallel for schedule(static)
               for (long long i = 0; i < n; ++i) pc[i] = pa[i];
             }), 2);
      report("scale", rep, scale.take(rep, [&] {
#pragma omp parallel for schedule(static)
               for (long long i = 0; i < n; ++i) pb[i] = scalar * pc[i];
             }), 2);
      report("add", rep, add.take(rep, [&] {
#pragma omp parallel for schedule(static)
               for (long long i = 0; i < n; ++i) pc[i] = pa[i] + pb[i];
             }), 3);
      report("triad", rep, triad.take(rep, [&] {
#pragma omp parallel for schedule(static)
               for (long long i = 0; i < n; ++i) pa[i] = pb[i] + scalar * pc[i];
             }), 3);
    }

    // STREAM's check: replay the sequence on scalars, compare every element.
    double aj = 1.0, bj = 2.0, cj = 0.0;
    for (long long rep = 0; rep < warmup + reps; ++rep) {
      cj = aj;
      bj = scalar * cj;
      cj = aj + bj;
      aj = bj + scalar * cj;
    }
    long long wrong = 0;
    double checksum = 0;
#pragma omp parallel for schedule(static) reduction(+ : wrong, checksum)
    for (long long i = 0; i < n; ++i) {
      if (std::fabs(pa[i] - aj) > 1e-13 * std::fabs(aj) || std::fabs(pb[i] - bj) > 1e-13 * std::fabs(bj) ||
          std::fabs(pc[i] - cj) > 1e-13 * std::fabs(cj))
        ++wrong;
      checksum += pa[i];
    }
    return bench::report_validation("stream", wrong, n, checksum);
  });
}

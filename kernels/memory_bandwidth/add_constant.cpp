// Seed 000's memory-bandwidth probe: add a constant to N doubles, either in
// place (a[i] += c: one read and one write per value) or into a second array
// (b[i] = a[i] + c, the "immutable" case: two streams). Built once per
// optimisation level (-O0..-O3), as the seed did.
//
// Threads are OpenMP threads with a static schedule; the arrays are first
// touched by the same schedule so each thread's pages are local to it, and
// pinning comes from OMP_PROC_BIND / OMP_PLACES (set by the harness, reported
// here). The first `warmup` passes are timed one by one and marked as
// warm-up; each repetition is then one timed sample of as many passes as last
// --min-sample-s (bench::Sampler). After all passes every value is checked exactly (the
// values are small integers, exact in double), so a wrong or skipped pass
// fails the run instead of giving a fast number.
#include <omp.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "bench.hpp"
#include "omp_threads.hpp"
#include "timing_record.hpp"

namespace {

using bench::Array;
using bench::allocate;

double initial_value(long long i) { return static_cast<double>(i % 1000); }

void add_in_place(double *a, long long n, double c) {
#pragma omp parallel for schedule(static)
  for (long long i = 0; i < n; ++i) a[i] += c;
}

void add_immutable(const double *a, double *b, long long n, double c) {
#pragma omp parallel for schedule(static)
  for (long long i = 0; i < n; ++i) b[i] = a[i] + c;
}

}  // namespace

int main(int argc, char **argv) {
  return bench::guarded_main("add_constant", argc, argv,
      bench::with_retake_options({{"mode", "inplace"}, {"n", "10000000"}, {"threads", "1"}, {"reps", "5"},
      {"warmup", "1"}, {"min-sample-s", "0"}, {"constant", "1"}, {"corrupt-for-test", "0"}}), [&](const bench::Options &opt) {
    const std::string mode = opt.str("mode");
    if (mode != "inplace" && mode != "immutable")
      throw std::invalid_argument("--mode must be 'inplace' or 'immutable', got '" + mode + "'");
    const bool in_place = mode == "inplace";
    const long long n = opt.integer("n", 1);
    const int threads = static_cast<int>(opt.integer("threads", 1));
    const long long reps = opt.integer("reps", 1);
    const long long warmup = opt.integer("warmup", 0);
    const double c = opt.real("constant");
    const double min_sample_s = opt.seconds("min-sample-s", 60);
    const bench::Retakes retakes = bench::retakes_from(opt);
    if (c != std::floor(c) || std::fabs(c) > 1000)
      throw std::invalid_argument("--constant must be a small integer so that checks are exact");

    bench::use_exactly_threads(threads);

    Array a = allocate(n);
    Array b = in_place ? Array() : allocate(n);
    // First touch with the same static schedule as the timed loops.
#pragma omp parallel for schedule(static)
    for (long long i = 0; i < n; ++i) {
      a[i] = initial_value(i);
      if (!in_place) b[i] = -1.0;
    }

    // STREAM convention: bytes the loop itself reads and writes (no write-allocate traffic).
    const long long bytes_moved = 2 * n * static_cast<long long>(sizeof(double));
    const long long huge = bench::huge_page_bytes();
    bench::Sampler sampler(warmup, min_sample_s, retakes, threads);
    for (long long rep = 0; rep < warmup + reps; ++rep) {
      const bench::Sampler::Sample s = sampler.take(rep, [&] {
        if (in_place)
          add_in_place(a.get(), n, c);
        else
          add_immutable(a.get(), b.get(), n, c);
      });
      bench::print_bandwidth_timing("add_constant", mode, n, threads, rep, warmup, s, bytes_moved, huge);
    }

    if (opt.integer("corrupt-for-test", 0)) (in_place ? a : b)[n / 2] += 0.5;

    // Exact check of every value, and a checksum the other methods are compared with.
    const double passes = in_place ? static_cast<double>(sampler.calls()) : 1.0;
    const double *out = in_place ? a.get() : b.get();
    long long wrong = 0;
    double checksum = 0;
#pragma omp parallel for schedule(static) reduction(+ : wrong, checksum)
    for (long long i = 0; i < n; ++i) {
      if (out[i] != initial_value(i) + passes * c) ++wrong;
      if (!in_place && a[i] != initial_value(i)) ++wrong;
      checksum += out[i];
    }
    return bench::report_validation("add_constant", wrong, n, checksum);
  });
}

// The first row of seed 000's Table 2, "DRAM to CPU": a data copy that does not
// involve the GPU, for comparison with the transfers that do. memcpy of N
// float32 or float64 values from one host array to another, by `threads`
// OpenMP threads (one static chunk each; the seed's row is one thread).
// Run under numactl it also measures local against remote memory where a host
// has more than one NUMA node (the nearest stand-in for the seed's KNL MCDRAM).
//
// The warm-up passes are timed one by one; each repetition is then one sample of as many
// copies as reach --min-sample-s (bench::Sampler), timed with the steady clock (CPU time
// beside it), its row giving the copies (`loops`); every value is checked exactly after the
// last copy.
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "bench.hpp"
#include "omp_threads.hpp"

namespace {

struct Buffer {
  void *p = nullptr;
  explicit Buffer(std::size_t bytes) {
    p = std::aligned_alloc(64, std::max<std::size_t>(64, (bytes + 63) / 64 * 64));
    if (!p) throw std::runtime_error("cannot allocate " + std::to_string(bytes) + " bytes");
  }
  ~Buffer() { std::free(p); }
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;
};

template <class T>
std::pair<long long, double> run(long long n, int threads, long long reps, long long warmup, double min_sample_s,
                                 const bench::Retakes &retakes, bool corrupt, const std::string &dtype) {
  const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(T);
  Buffer src_buffer(bytes), dst_buffer(bytes);
  T *src = static_cast<T *>(src_buffer.p), *dst = static_cast<T *>(dst_buffer.p);
  // First touch by the thread that copies each chunk.
#pragma omp parallel for schedule(static)
  for (long long i = 0; i < n; ++i) {
    src[i] = static_cast<T>(i % 1000);
    dst[i] = static_cast<T>(-1);
  }
  bench::Sampler sampler(warmup, min_sample_s, retakes, threads);
  for (long long rep = 0; rep < warmup + reps; ++rep) {
    const bench::Sampler::Sample s = sampler.take(rep, [&] {
#pragma omp parallel
      {
        const long long nt = omp_get_num_threads(), id = omp_get_thread_num();
        const long long chunk = (n + nt - 1) / nt, begin = std::min(n, id * chunk), end = std::min(n, begin + chunk);
        if (end > begin) std::memcpy(dst + begin, src + begin, static_cast<std::size_t>(end - begin) * sizeof(T));
      }
    });
    bench::JsonLine()
        .add("record", "timing")
        .add("kernel", "host_copy")
        .add("case", "host_copy")
        .add("dtype", dtype)
        .add("n", n)
        .add("threads", threads)
        .add("rep", rep - warmup)
        .add("warmup", rep < warmup)
        .add("loops", s.loops)
        .add("wall_s", s.timing.wall_s)
        .add("cpu_s", s.timing.cpu_s)
        .add("run_delay_s", s.run_delay_s)
        .add("sample_retakes", s.retakes)
        .add("bytes_moved", static_cast<long long>(2 * bytes))
        .add("clock", "steady_clock")
        .print();
  }
  if (corrupt) dst[n / 2] += static_cast<T>(0.5);
  long long wrong = 0;
  double checksum = 0;
#pragma omp parallel for schedule(static) reduction(+ : wrong, checksum)
  for (long long i = 0; i < n; ++i) {
    if (dst[i] != static_cast<T>(i % 1000)) ++wrong;
    checksum += static_cast<double>(dst[i]);
  }
  return {wrong, checksum};
}

}  // namespace

int main(int argc, char **argv) {
  return bench::guarded_main("host_copy", argc, argv,
      bench::with_retake_options({{"dtype", "float64"}, {"n", "10000000"}, {"threads", "1"}, {"reps", "5"},
      {"warmup", "1"}, {"min-sample-s", "0"}, {"corrupt-for-test", "0"}}), [&](const bench::Options &opt) {
    const std::string dtype = opt.str("dtype");
    if (dtype != "float32" && dtype != "float64")
      throw std::invalid_argument("--dtype must be 'float32' or 'float64', got '" + dtype + "'");
    const long long n = opt.integer("n", 1);
    const int threads = static_cast<int>(opt.integer("threads", 1));
    const long long reps = opt.integer("reps", 1), warmup = opt.integer("warmup", 0);
    const double min_sample_s = opt.seconds("min-sample-s", 60);
    const bench::Retakes retakes = bench::retakes_from(opt);
    const bool corrupt = opt.integer("corrupt-for-test", 0) != 0;
    bench::use_exactly_threads(threads);
    const auto [wrong, checksum] = dtype == "float32" ? run<float>(n, threads, reps, warmup, min_sample_s, retakes, corrupt, dtype)
                                                      : run<double>(n, threads, reps, warmup, min_sample_s, retakes, corrupt, dtype);
    return bench::report_validation("host_copy", wrong, n, checksum);
  });
}

// Seed 000's Table 2 on an NVIDIA GPU: data transfers between host memory and
// the GPU, the seed's "unified" memory ("also known as pinned": host memory
// mapped into the device, cudaHostAlloc with cudaHostAllocMapped, zero-copy)
// and today's managed memory (cudaMallocManaged), copies within the GPU, and
// adding a constant in place and into a new array on global, mapped and
// managed memory; and
// the jagged "explode" and "combine" operations. One case and one value type
// (float32 or float64) per run:
//
//   gpu_bandwidth_cuda --case CASE --dtype float32|float64 --n N --reps R --warmup W
//   gpu_bandwidth_cuda --case device        (what the device is; no timing)
//
// Device work is timed with CUDA events around each pass (`event_s`); the
// steady clock and the process CPU time are recorded beside it. Cases in which
// the CPU does the work (CPU write and read of mapped or managed memory) are timed by the
// steady clock only. Every run checks every value it produced against the
// exact expected one (the values are small integers, exact in both types).
//
// Each pass records how long this process waited for a CPU during it (run_delay_s); with
// --max-run-delay-share above 0, a pass that waited longer than that share of its wall time
// is taken again, its inputs and outputs set up afresh first, at most --max-sample-retakes
// times (sample_retakes). The in-place add on device memory checks every take it made.
//
// Where there is no usable GPU (no device, no NVIDIA driver, or a driver older
// than this runtime) the program says why on stderr and exits with code 4,
// which the Python side reports as "not measured", never as a number.
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <string>
#include <tuple>
#include <vector>

#include "bench.hpp"
#include "jagged.hpp"

namespace {

constexpr int kExitNoDevice = 4;
constexpr int kBlock = 256;
constexpr int kScanBlock = 1024;
const char *const kCases[] = {"device",           "h2d_pageable",     "h2d_pinned",        "d2h_pageable",
                              "d2h_pinned",       "mapped_cpu_write", "mapped_cpu_read",   "managed_cpu_write",
                              "managed_cpu_read", "d2d_copy",         "inplace_global",    "immutable_global",
                              "inplace_mapped",   "immutable_mapped", "inplace_managed",   "immutable_managed",
                              "explode",          "combine"};

struct NoDevice : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void check(cudaError_t status, const char *what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}
#define CUDA_CHECK(call) check((call), #call)

std::string cuda_version(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

// Throws NoDevice (with the reason) where this host has no GPU this program can use.
void require_device() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status == cudaSuccess && count > 0) return;
  if (status == cudaSuccess || status == cudaErrorNoDevice)
    throw NoDevice("no GPU on this host (the CUDA runtime finds no device)");
  if (status == cudaErrorInsufficientDriver) {
    void *driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!driver) throw NoDevice("no GPU on this host (no NVIDIA driver: libcuda.so.1 is not installed)");
    dlclose(driver);
    int driver_version = 0;
    cudaDriverGetVersion(&driver_version);
    throw NoDevice("the NVIDIA driver supports CUDA " + cuda_version(driver_version) +
                   ", older than the CUDA " + cuda_version(CUDART_VERSION) +
                   " runtime these kernels are built with (update the driver)");
  }
  throw std::runtime_error(std::string("cudaGetDeviceCount: ") + cudaGetErrorString(status));
}

struct DeviceInfo {
  std::string name;
  int major = 0, minor = 0, sms = 0, mem_clock_khz = 0, bus_width_bits = 0, l2_bytes = 0;
  int managed = 0, concurrent_managed = 0;
  std::size_t total_bytes = 0, free_bytes = 0;
  double nominal_gb_s = 0;  // 2 transfers per clock (DDR/HBM) x bus width
};

DeviceInfo device_info() {
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  DeviceInfo info;
  info.name = prop.name;
  info.major = prop.major;
  info.minor = prop.minor;
  CUDA_CHECK(cudaDeviceGetAttribute(&info.sms, cudaDevAttrMultiProcessorCount, dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&info.mem_clock_khz, cudaDevAttrMemoryClockRate, dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&info.bus_width_bits, cudaDevAttrGlobalMemoryBusWidth, dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&info.l2_bytes, cudaDevAttrL2CacheSize, dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&info.managed, cudaDevAttrManagedMemory, dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&info.concurrent_managed, cudaDevAttrConcurrentManagedAccess, dev));
  CUDA_CHECK(cudaMemGetInfo(&info.free_bytes, &info.total_bytes));
  info.nominal_gb_s = 2.0 * info.mem_clock_khz * 1e3 * (info.bus_width_bits / 8.0) / 1e9;
  return info;
}

void print_device(const DeviceInfo &d) {
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  bench::JsonLine()
      .add("record", "device")
      .add("name", d.name)
      .add("compute_capability", std::to_string(d.major) + "." + std::to_string(d.minor))
      .add("multiprocessors", d.sms)
      .add("memory_clock_khz", d.mem_clock_khz)
      .add("bus_width_bits", d.bus_width_bits)
      .add("nominal_gb_s", d.nominal_gb_s)
      .add("l2_bytes", d.l2_bytes)
      .add("total_bytes", static_cast<long long>(d.total_bytes))
      .add("free_bytes", static_cast<long long>(d.free_bytes))
      .add("managed_memory", d.managed != 0)
      .add("concurrent_managed_access", d.concurrent_managed != 0)
      .add("driver_cuda", cuda_version(driver))
      .add("runtime_cuda", cuda_version(runtime))
      .print();
}

// ---- kernels (the same logic as the numba.cuda kernels of experiments/gpu_bandwidth/numba_cuda.py) ----

template <class T>
__global__ void fill_initial(T *a, long long n) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n) a[i] = static_cast<T>(i % 1000);
}

template <class T>
__global__ void fill_value(T *a, long long n, T value) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n) a[i] = value;
}

template <class T>
__global__ void add_in_place(T *a, long long n, T c) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n) a[i] += c;
}

template <class T>
__global__ void add_immutable(const T *__restrict__ a, T *__restrict__ b, long long n, T c) {
  const long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n) b[i] = a[i] + c;
}

// Largest e in [0, events) with offsets[e] <= j: the event that holds item j
// (empty events have offsets[e] == offsets[e+1] and are skipped over).
__device__ long long owner(const long long *offsets, long long events, long long j) {
  long long lo = 0, hi = events;  // offsets[lo] <= j < offsets[hi]
  while (hi - lo > 1) {
    const long long mid = lo + (hi - lo) / 2;
    if (offsets[mid] <= j)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

// explode: one thread per particle, out[j] = event_values[event of j].
template <class T>
__global__ void explode(const long long *offsets, const T *event_values, long long events, T *out,
                        long long particles) {
  const long long j = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (j < particles) out[j] = event_values[owner(offsets, events, j)];
}

// combine, step 1: pairs per event, written at pair_counts[e + 1] (pair_counts[0] = 0).
__global__ void pair_counts(const long long *offsets, long long events, long long *counts) {
  const long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (e == 0) counts[0] = 0;
  if (e < events) {
    const long long n = offsets[e + 1] - offsets[e];
    counts[e + 1] = n * (n - 1) / 2;
  }
}

// combine, step 3: one thread per pair (i < j within one event, row by row),
// out[k] = values[i] + values[j].
template <class T>
__global__ void combine(const long long *offsets, const long long *pair_offsets, const T *values, long long events,
                        T *out, long long pairs) {
  const long long k = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (k >= pairs) return;
  const long long e = owner(pair_offsets, events, k);
  const long long n = offsets[e + 1] - offsets[e];
  long long r = k - pair_offsets[e], i = 0;
  while (r >= n - 1 - i) {
    r -= n - 1 - i;
    ++i;
  }
  const long long first = offsets[e];
  out[k] = values[first + i] + values[first + i + 1 + r];
}

// Inclusive prefix sum (combine, step 2), block by block in shared memory,
// then the block totals scanned the same way and added back: the log2(N)
// passes the seed says a vectorised combine needs.
__global__ void scan_blocks(const long long *in, long long *out, long long *block_sums, long long n) {
  __shared__ long long buffer[kScanBlock];
  const long long i = blockIdx.x * static_cast<long long>(kScanBlock) + threadIdx.x;
  buffer[threadIdx.x] = i < n ? in[i] : 0;
  __syncthreads();
  for (int step = 1; step < kScanBlock; step *= 2) {
    const long long add = static_cast<int>(threadIdx.x) >= step ? buffer[threadIdx.x - step] : 0;
    __syncthreads();
    buffer[threadIdx.x] += add;
    __syncthreads();
  }
  if (i < n) out[i] = buffer[threadIdx.x];
  if (threadIdx.x == kScanBlock - 1) block_sums[blockIdx.x] = buffer[threadIdx.x];
}

__global__ void add_block_prefix(long long *out, const long long *scanned_sums, long long n) {
  const long long i = blockIdx.x * static_cast<long long>(kScanBlock) + threadIdx.x;
  if (blockIdx.x > 0 && i < n) out[i] += scanned_sums[blockIdx.x - 1];
}

long long blocks_for(long long n, long long block) { return (n + block - 1) / block; }

// Work space of the scan, allocated before timing: one level per recursion.
struct ScanSpace {
  std::vector<long long *> sums, scanned;
  std::vector<long long> sizes;
  explicit ScanSpace(long long n) {
    for (long long blocks = blocks_for(n, kScanBlock); ; blocks = blocks_for(blocks, kScanBlock)) {
      long long *s = nullptr, *t = nullptr;
      CUDA_CHECK(cudaMalloc(&s, blocks * sizeof(long long)));
      CUDA_CHECK(cudaMalloc(&t, blocks * sizeof(long long)));
      sums.push_back(s);
      scanned.push_back(t);
      sizes.push_back(blocks);
      if (blocks == 1) break;
    }
  }
  ~ScanSpace() {
    for (auto *p : sums) cudaFree(p);
    for (auto *p : scanned) cudaFree(p);
  }
  ScanSpace(const ScanSpace &) = delete;
  ScanSpace &operator=(const ScanSpace &) = delete;
};

void inclusive_scan(const long long *in, long long *out, long long n, ScanSpace &space, std::size_t level = 0) {
  const long long blocks = blocks_for(n, kScanBlock);
  scan_blocks<<<blocks, kScanBlock>>>(in, out, space.sums[level], n);
  if (blocks > 1) {
    inclusive_scan(space.sums[level], space.scanned[level], blocks, space, level + 1);
    add_block_prefix<<<blocks, kScanBlock>>>(out, space.scanned[level], n);
  }
}

// ---- host side ----

template <class T>
struct DeviceArray {
  T *p = nullptr;
  explicit DeviceArray(long long n) { CUDA_CHECK(cudaMalloc(&p, std::max(1LL, n) * sizeof(T))); }
  ~DeviceArray() { cudaFree(p); }
  DeviceArray(const DeviceArray &) = delete;
  DeviceArray &operator=(const DeviceArray &) = delete;
};

// Memory both the CPU and the GPU address: managed (cudaMallocManaged, pages
// migrated on demand) or mapped (pinned host memory, cudaHostAlloc with
// cudaHostAllocMapped: the GPU reads and writes it across the bus, through the
// device pointer cudaHostGetDevicePointer gives). `host` is the CPU's pointer,
// `device` the kernels'.
template <class T>
struct SharedArray {
  T *host = nullptr, *device = nullptr;
  bool mapped;
  SharedArray(long long n, bool mapped_memory) : mapped(mapped_memory) {
    const std::size_t bytes = std::max(1LL, n) * sizeof(T);
    if (mapped) {
      CUDA_CHECK(cudaHostAlloc(&host, bytes, cudaHostAllocMapped));
      CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void **>(&device), host, 0));
    } else {
      CUDA_CHECK(cudaMallocManaged(&host, bytes));
      device = host;
    }
  }
  ~SharedArray() { mapped ? cudaFreeHost(host) : cudaFree(host); }
  SharedArray(const SharedArray &) = delete;
  SharedArray &operator=(const SharedArray &) = delete;
};

template <class T>
struct PinnedArray {
  T *p = nullptr;
  explicit PinnedArray(long long n) { CUDA_CHECK(cudaMallocHost(&p, std::max(1LL, n) * sizeof(T))); }
  ~PinnedArray() { cudaFreeHost(p); }
  PinnedArray(const PinnedArray &) = delete;
  PinnedArray &operator=(const PinnedArray &) = delete;
};

// Pageable host memory (ordinary malloc'd pages, touched once so they exist).
template <class T>
struct PageableArray {
  std::vector<T> v;
  explicit PageableArray(long long n) : v(static_cast<std::size_t>(std::max(1LL, n))) {}
  T *p() { return v.data(); }
};

unsigned grid(long long n) { return static_cast<unsigned>(blocks_for(std::max(1LL, n), kBlock)); }

struct PassTime {
  double wall_s, cpu_s, event_s;  // event_s < 0: not timed by events (CPU work)
  double run_delay_s;             // -1: unknown
  long long retakes;
};

class Timer {
 public:
  Timer() {
    CUDA_CHECK(cudaEventCreate(&start_));
    CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~Timer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  // Device work: CUDA events on the default stream around `op`, which only enqueues.
  template <class F>
  PassTime device(F &&op) {
    CUDA_CHECK(cudaDeviceSynchronize());
    const bench::DelayedTiming t = bench::time_delayed([&] {
      CUDA_CHECK(cudaEventRecord(start_));
      op();
      CUDA_CHECK(cudaEventRecord(stop_));
      CUDA_CHECK(cudaEventSynchronize(stop_));
    });
    CUDA_CHECK(cudaGetLastError());
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return {t.wall_s, t.cpu_s, ms * 1e-3, t.run_delay_s, 0};
  }
  // CPU work (reading or writing managed memory): the steady clock.
  template <class F>
  PassTime host(F &&op) {
    CUDA_CHECK(cudaDeviceSynchronize());
    const bench::DelayedTiming t = bench::time_delayed(op);
    return {t.wall_s, t.cpu_s, -1.0, t.run_delay_s, 0};
  }

 private:
  cudaEvent_t start_{}, stop_{};
};

template <class T>
T initial(long long i) {
  return static_cast<T>(i % 1000);
}

// Counts the values of `got` that differ from expected(i); the checksum is their sum in double.
template <class T, class E>
std::pair<long long, double> compare(const T *got, long long n, E &&expected) {
  long long wrong = 0;
  double checksum = 0;
  for (long long i = 0; i < n; ++i) {
    if (got[i] != expected(i)) ++wrong;
    checksum += static_cast<double>(got[i]);
  }
  return {wrong, checksum};
}

template <class T>
std::vector<T> to_host(const T *device, long long n) {
  std::vector<T> host(static_cast<std::size_t>(std::max(1LL, n)));
  // cudaMemcpyDefault: the pointer may be device, managed or mapped host memory (unified addressing)
  CUDA_CHECK(cudaMemcpy(host.data(), device, n * sizeof(T), cudaMemcpyDefault));
  return host;
}

struct Run {
  std::string kcase, dtype;
  long long n, reps, warmup, events, mean;
  double c;
  bool corrupt;
  bench::Retakes retakes;
};

struct Outcome {
  long long values = 0, bytes_moved = 0, wrong = 0;
  double checksum = 0;
};

template <class T>
Outcome run_case(const Run &run, Timer &timer) {
  const long long n = run.n, passes = run.warmup + run.reps;
  const long long bytes = n * static_cast<long long>(sizeof(T));
  const T c = static_cast<T>(run.c);
  Outcome out;
  out.values = n;
  std::vector<PassTime> times;
  // Pass r: `setup` (untimed) puts inputs and outputs where the pass expects them, `timed` times
  // it; taken again while the run delay rule says so (never a warm-up pass).
  long long takes = 0;
  auto pass = [&](long long r, auto &&setup, auto &&timed) {
    auto taken = bench::take_retaking(run.retakes, r >= run.warmup, 1, [&] {
      setup();
      ++takes;
      return timed();
    });
    taken.first.retakes = taken.second;
    times.push_back(taken.first);
  };
  auto host_initial = [&](T *dst) {
    for (long long i = 0; i < n; ++i) dst[i] = initial<T>(i);
  };
  auto is_initial = [](long long i) { return initial<T>(i); };
  auto maybe_corrupt = [&](T *p) {
    if (run.corrupt) p[n / 2] += static_cast<T>(0.5);
  };

  const std::string &k = run.kcase;
  if (k == "h2d_pageable" || k == "h2d_pinned") {
    PageableArray<T> pageable(k == "h2d_pageable" ? n : 0);
    PinnedArray<T> pinned(k == "h2d_pinned" ? n : 0);
    T *src = k == "h2d_pageable" ? pageable.p() : pinned.p;
    host_initial(src);
    DeviceArray<T> d(n);
    for (long long r = 0; r < passes; ++r)
      pass(r, [&] { fill_value<<<grid(n), kBlock>>>(d.p, n, static_cast<T>(-1)); },
           [&] { return timer.device([&] { CUDA_CHECK(cudaMemcpyAsync(d.p, src, bytes, cudaMemcpyHostToDevice)); }); });
    std::vector<T> back = to_host(d.p, n);
    maybe_corrupt(back.data());
    std::tie(out.wrong, out.checksum) = compare(back.data(), n, is_initial);
    out.bytes_moved = bytes;
  } else if (k == "d2h_pageable" || k == "d2h_pinned") {
    PageableArray<T> pageable(k == "d2h_pageable" ? n : 0);
    PinnedArray<T> pinned(k == "d2h_pinned" ? n : 0);
    T *dst = k == "d2h_pageable" ? pageable.p() : pinned.p;
    DeviceArray<T> d(n);
    fill_initial<<<grid(n), kBlock>>>(d.p, n);
    for (long long r = 0; r < passes; ++r)
      pass(r, [&] { std::fill(dst, dst + n, static_cast<T>(-1)); },
           [&] { return timer.device([&] { CUDA_CHECK(cudaMemcpyAsync(dst, d.p, bytes, cudaMemcpyDeviceToHost)); }); });
    maybe_corrupt(dst);
    std::tie(out.wrong, out.checksum) = compare(dst, n, is_initial);
    out.bytes_moved = bytes;
  } else if (k == "managed_cpu_write" || k == "mapped_cpu_write") {
    // The CPU stores every value into shared memory that the GPU touched last.
    PageableArray<T> src(n);
    host_initial(src.p());
    SharedArray<T> m(n, k == "mapped_cpu_write");
    for (long long r = 0; r < passes; ++r)
      pass(r, [&] { fill_value<<<grid(n), kBlock>>>(m.device, n, static_cast<T>(-1)); },
           [&] { return timer.host([&] { std::memcpy(m.host, src.p(), bytes); }); });
    CUDA_CHECK(cudaDeviceSynchronize());
    maybe_corrupt(m.host);
    std::tie(out.wrong, out.checksum) = compare(m.host, n, is_initial);
    out.bytes_moved = 2 * bytes;
  } else if (k == "managed_cpu_read" || k == "mapped_cpu_read") {
    // The CPU reads every value of shared memory that the GPU wrote last.
    PageableArray<T> dst(n);
    SharedArray<T> m(n, k == "mapped_cpu_read");
    for (long long r = 0; r < passes; ++r)
      pass(
          r,
          [&] {
            fill_initial<<<grid(n), kBlock>>>(m.device, n);
            std::fill(dst.p(), dst.p() + n, static_cast<T>(-1));
          },
          [&] { return timer.host([&] { std::memcpy(dst.p(), m.host, bytes); }); });
    maybe_corrupt(dst.p());
    std::tie(out.wrong, out.checksum) = compare(dst.p(), n, is_initial);
    out.bytes_moved = 2 * bytes;
  } else if (k == "d2d_copy") {
    DeviceArray<T> a(n), b(n);
    fill_initial<<<grid(n), kBlock>>>(a.p, n);
    for (long long r = 0; r < passes; ++r)
      pass(r, [&] { fill_value<<<grid(n), kBlock>>>(b.p, n, static_cast<T>(-1)); },
           [&] { return timer.device([&] { CUDA_CHECK(cudaMemcpyAsync(b.p, a.p, bytes, cudaMemcpyDeviceToDevice)); }); });
    std::vector<T> back = to_host(b.p, n);
    maybe_corrupt(back.data());
    std::tie(out.wrong, out.checksum) = compare(back.data(), n, is_initial);
    out.bytes_moved = 2 * bytes;
  } else if (k == "inplace_global" || k == "inplace_managed" || k == "inplace_mapped") {
    const bool shared = k != "inplace_global";
    DeviceArray<T> d(shared ? 0 : n);
    SharedArray<T> m(shared ? n : 0, k == "inplace_mapped");
    T *a = shared ? m.device : d.p;
    if (!shared) fill_initial<<<grid(n), kBlock>>>(a, n);
    for (long long r = 0; r < passes; ++r)
      pass(
          r,
          [&] {
            // Shared memory: the CPU writes the input first, so the kernel finds it in host memory.
            if (shared) {
              CUDA_CHECK(cudaDeviceSynchronize());
              host_initial(m.host);
            }
          },
          [&] { return timer.device([&] { add_in_place<<<grid(n), kBlock>>>(a, n, c); }); });
    std::vector<T> back = to_host(a, n);
    maybe_corrupt(back.data());
    const double added = shared ? 1.0 : static_cast<double>(takes);  // device memory: every take added
    std::tie(out.wrong, out.checksum) =
        compare(back.data(), n, [&](long long i) { return static_cast<T>(initial<T>(i) + added * run.c); });
    out.bytes_moved = 2 * bytes;
  } else if (k == "immutable_global" || k == "immutable_managed" || k == "immutable_mapped") {
    const bool shared = k != "immutable_global", mapped = k == "immutable_mapped";
    DeviceArray<T> da(shared ? 0 : n), db(shared ? 0 : n);
    SharedArray<T> ma(shared ? n : 0, mapped), mb(shared ? n : 0, mapped);
    T *a = shared ? ma.device : da.p, *b = shared ? mb.device : db.p;
    if (!shared) fill_initial<<<grid(n), kBlock>>>(a, n);
    for (long long r = 0; r < passes; ++r)
      pass(
          r,
          [&] {
            if (shared) {
              CUDA_CHECK(cudaDeviceSynchronize());
              host_initial(ma.host);
              std::fill(mb.host, mb.host + n, static_cast<T>(-1));
            } else {
              fill_value<<<grid(n), kBlock>>>(b, n, static_cast<T>(-1));
            }
          },
          [&] { return timer.device([&] { add_immutable<<<grid(n), kBlock>>>(a, b, n, c); }); });
    std::vector<T> back = to_host(b, n);
    maybe_corrupt(back.data());
    std::tie(out.wrong, out.checksum) =
        compare(back.data(), n, [&](long long i) { return static_cast<T>(initial<T>(i) + run.c); });
    std::vector<T> input = to_host(a, n);  // the immutable input must be untouched
    out.wrong += compare(input.data(), n, is_initial).first;
    out.bytes_moved = 2 * bytes;
  } else if (k == "explode" || k == "combine") {
    const std::vector<long long> off = jagged::offsets(run.events, run.mean);
    const long long events = run.events, particles = off.back();
    std::vector<long long> pair_off(static_cast<std::size_t>(events) + 1, 0);
    for (long long e = 0; e < events; ++e) {
      const long long m = off[e + 1] - off[e];
      pair_off[e + 1] = pair_off[e] + m * (m - 1) / 2;
    }
    const long long pairs = pair_off.back();
    DeviceArray<long long> d_off(events + 1), d_pair_counts(events + 1), d_pair_off(events + 1);
    CUDA_CHECK(cudaMemcpy(d_off.p, off.data(), (events + 1) * sizeof(long long), cudaMemcpyHostToDevice));
    if (k == "explode") {
      std::vector<T> ev(static_cast<std::size_t>(std::max(1LL, events)));
      for (long long e = 0; e < events; ++e) ev[e] = initial<T>(e);
      DeviceArray<T> d_ev(events), d_out(particles);
      CUDA_CHECK(cudaMemcpy(d_ev.p, ev.data(), events * sizeof(T), cudaMemcpyHostToDevice));
      for (long long r = 0; r < passes; ++r)
        pass(r, [&] { fill_value<<<grid(particles), kBlock>>>(d_out.p, particles, static_cast<T>(-1)); },
             [&] {
               return timer.device([&] {
                 if (particles > 0) explode<<<grid(particles), kBlock>>>(d_off.p, d_ev.p, events, d_out.p, particles);
               });
             });
      std::vector<T> back = to_host(d_out.p, particles);
      std::vector<T> expected(static_cast<std::size_t>(std::max(1LL, particles)));
      for (long long e = 0; e < events; ++e)
        for (long long j = off[e]; j < off[e + 1]; ++j) expected[j] = ev[e];
      if (run.corrupt && particles) back[particles / 2] += static_cast<T>(0.5);
      std::tie(out.wrong, out.checksum) = compare(back.data(), particles, [&](long long j) { return expected[j]; });
      out.values = particles;
      // writes the output; reads each event's offsets and value (once per event, cached)
      out.bytes_moved = particles * static_cast<long long>(sizeof(T)) +
                        events * static_cast<long long>(sizeof(T) + sizeof(long long));
    } else {
      std::vector<T> values(static_cast<std::size_t>(std::max(1LL, particles)));
      for (long long j = 0; j < particles; ++j) values[j] = initial<T>(j);
      DeviceArray<T> d_values(particles), d_out(pairs);
      CUDA_CHECK(cudaMemcpy(d_values.p, values.data(), particles * sizeof(T), cudaMemcpyHostToDevice));
      ScanSpace space(events + 1);
      for (long long r = 0; r < passes; ++r)
        pass(r, [&] { fill_value<<<grid(pairs), kBlock>>>(d_out.p, pairs, static_cast<T>(-1)); },
             [&] {
               return timer.device([&] {
                 pair_counts<<<grid(events + 1), kBlock>>>(d_off.p, events, d_pair_counts.p);
                 inclusive_scan(d_pair_counts.p, d_pair_off.p, events + 1, space);
                 if (pairs > 0)
                   combine<<<grid(pairs), kBlock>>>(d_off.p, d_pair_off.p, d_values.p, events, d_out.p, pairs);
               });
             });
      std::vector<long long> got_pair_off = to_host(d_pair_off.p, events + 1);
      for (long long e = 0; e <= events; ++e) out.wrong += got_pair_off[e] != pair_off[e];
      std::vector<T> back = to_host(d_out.p, pairs);
      std::vector<T> expected(static_cast<std::size_t>(std::max(1LL, pairs)));
      for (long long e = 0, q = 0; e < events; ++e)
        for (long long i = off[e]; i < off[e + 1]; ++i)
          for (long long j = i + 1; j < off[e + 1]; ++j) expected[q++] = values[i] + values[j];
      if (run.corrupt && pairs) back[pairs / 2] += static_cast<T>(0.5);
      long long wrong = 0;
      std::tie(wrong, out.checksum) = compare(back.data(), pairs, [&](long long q) { return expected[q]; });
      out.wrong += wrong;
      out.values = pairs;
      // reads two values and writes one per pair, plus offsets and pair counts per event
      out.bytes_moved = 3 * pairs * static_cast<long long>(sizeof(T)) + 4 * (events + 1) * 8;
    }
  } else {
    throw std::invalid_argument("--case '" + k + "' is not implemented");
  }

  for (long long r = 0; r < passes; ++r) {
    bench::JsonLine line;
    line.add("record", "timing")
        .add("kernel", "gpu_bandwidth_cuda")
        .add("case", k)
        .add("dtype", run.dtype)
        .add("n", out.values)
        .add("rep", r - run.warmup)
        .add("warmup", r < run.warmup)
        .add("wall_s", times[r].wall_s)
        .add("cpu_s", times[r].cpu_s)
        .add("run_delay_s", times[r].run_delay_s)
        .add("sample_retakes", times[r].retakes)
        .add("bytes_moved", out.bytes_moved)
        .add("clock", times[r].event_s >= 0 ? "cuda_event" : "steady_clock");
    if (times[r].event_s >= 0) line.add("event_s", times[r].event_s);
    line.print();
  }
  return out;
}

}  // namespace

int main(int argc, char **argv) {
  const char *kernel = "gpu_bandwidth_cuda";
  try {
    bench::Options opt(argc, argv, bench::with_retake_options({{"case", "device"},
                        {"dtype", "float32"},
                        {"n", "1048576"},
                        {"reps", "5"},
                        {"warmup", "1"},
                        {"constant", "1"},
                        {"events", "100000"},
                        {"mean-particles", "4"},
                        {"corrupt-for-test", "0"}}));
    if (opt.build_info()) {
      bench::print_build_info(kernel);
      return 0;
    }
    Run run;
    run.kcase = opt.str("case");
    if (std::find(std::begin(kCases), std::end(kCases), run.kcase) == std::end(kCases)) {
      std::string known;
      for (const char *name : kCases) known += std::string(known.empty() ? "" : ", ") + name;
      throw std::invalid_argument("--case must be one of " + known + "; got '" + run.kcase + "'");
    }
    run.dtype = opt.str("dtype");
    if (run.dtype != "float32" && run.dtype != "float64")
      throw std::invalid_argument("--dtype must be 'float32' or 'float64', got '" + run.dtype + "'");
    run.n = opt.integer("n", 1);
    run.reps = opt.integer("reps", 1);
    run.warmup = opt.integer("warmup", 0);
    run.events = opt.integer("events", 1);
    run.mean = opt.integer("mean-particles", 0);
    run.c = opt.real("constant");
    run.corrupt = opt.integer("corrupt-for-test", 0) != 0;
    run.retakes = bench::retakes_from(opt);
    if (run.c != std::floor(run.c) || std::fabs(run.c) > 1000)
      throw std::invalid_argument("--constant must be a small integer so that checks are exact");

    require_device();
    const DeviceInfo info = device_info();
    print_device(info);
    if (run.kcase == "device") {
      bench::JsonLine().add("record", "validation").add("kernel", kernel).add("ok", true).print();
      return 0;
    }
    Timer timer;
    const Outcome out = run.dtype == "float32" ? run_case<float>(run, timer) : run_case<double>(run, timer);
    return bench::report_validation(kernel, out.wrong, out.values, out.checksum);
  } catch (const NoDevice &e) {
    std::fprintf(stderr, "%s: no usable CUDA device: %s\n", kernel, e.what());
    return kExitNoDevice;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "%s: error: %s\n", kernel, e.what());
    return 2;
  }
}

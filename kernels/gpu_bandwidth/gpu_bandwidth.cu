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
//   gpu_bandwidth_cuda --list-cases         (the case table as JSON lines; needs no GPU)
//
// Every case is a row of one table (case_table below, its rows generated from cases.py): its bytes
// per pass, expected values, clock, and the state that sets up, runs and checks a pass; one loop
// (run_case) times them all.
//
// Beside the seed's kernels (one element per thread, a grid of n/256 blocks: at most 2048
// threads x 8 bytes in flight per multiprocessor), the "tuned" cases run the same operations
// as a grid of a few waves that strides over 16-byte vectors, kUnroll of them loaded per thread
// before any is stored (bytes in flight per multiprocessor sized as CUB's transform kernels
// size them), and `cub_transform` is CUB's own (cub::DeviceTransform, where the toolkit has it).
//
// Device work is timed with CUDA events around each sample (`event_s`): `loops` back-to-back
// launches, calibrated after the warm-up to last --min-sample-s (kernel-only time: no launch
// from Python, no host work inside); cases whose pass needs the CPU first (shared memory) time
// one pass. The steady clock and the process CPU time are recorded beside it. Cases in which
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

// CUB's transform (CCCL 2.8 and later: the CUDA 13 toolkit's, or PyPI's nvidia-cuda-cccl
// headers, which kernels/gpu_bandwidth/CMakeLists.txt adds): the reference the tuned kernels
// stand beside; without it the case says so (exit 5) and Python records why.
#if __has_include(<cub/device/device_transform.cuh>)
#include <cub/device/device_transform.cuh>
#include <cuda/std/tuple>
#define TP_HAVE_CUB_TRANSFORM 1
#endif

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "bench.hpp"
#include "jagged.hpp"

namespace {

constexpr int kExitNoDevice = 4;
constexpr int kExitNotBuilt = 5;  // a case this build lacks (cub_transform without CUB's transform)
constexpr int kBlock = 256;
constexpr int kScanBlock = 1024;

struct NoDevice : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct NotBuilt : std::runtime_error {
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
#ifdef TP_HAVE_CUB_TRANSFORM
      .add("cub_transform", true)
#else
      .add("cub_transform", false)
#endif
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

// ---- the tuned kernels: 16-byte vectors, kUnroll in flight per thread, a grid of few waves ----

constexpr int kTunedBlock = 256;
constexpr int kUnroll = 4;  // 4 x 16 bytes loaded per thread before the first store
constexpr int kWaves = 2;   // resident blocks per multiprocessor x SMs x kWaves blocks

template <class T>
struct Vec;
template <>
struct Vec<float> {
  using type = float4;
};
template <>
struct Vec<double> {
  using type = double2;
};
template <class T>
constexpr long long kLanes = 16 / sizeof(T);

__device__ inline float4 plus(float4 a, float c) { return {a.x + c, a.y + c, a.z + c, a.w + c}; }
__device__ inline double2 plus(double2 a, double c) { return {a.x + c, a.y + c}; }
__device__ inline float4 plus_scaled(float4 a, float4 b, float s) {
  return {a.x + s * b.x, a.y + s * b.y, a.z + s * b.z, a.w + s * b.w};
}
__device__ inline double2 plus_scaled(double2 a, double2 b, double s) { return {a.x + s * b.x, a.y + s * b.y}; }

// out[i] = f(in_0[i], ...) over n values: the vectors by a grid-stride loop, kUnroll loads of
// every input per thread before its stores (the bytes in flight a multiprocessor needs to keep
// HBM busy), then the values past the last whole vector one per thread. `vector_op` maps input
// vectors to an output vector, `value_op` values to a value (the same arithmetic).
template <class T, class VectorOp, class ValueOp, class... In>
__device__ void wide_transform(long long n, T *out, VectorOp vector_op, ValueOp value_op, const In *...in) {
  using V = typename Vec<T>::type;
  const long long vectors = n / kLanes<T>;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  const long long first = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  V *out_v = reinterpret_cast<V *>(out);
  long long v = first;
  for (; v + (kUnroll - 1) * stride < vectors; v += kUnroll * stride) {
    V result[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) result[u] = vector_op(reinterpret_cast<const V *>(in)[v + u * stride]...);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) out_v[v + u * stride] = result[u];
  }
  for (; v < vectors; v += stride) out_v[v] = vector_op(reinterpret_cast<const V *>(in)[v]...);
  const long long tail = vectors * kLanes<T> + first;
  if (tail < n) out[tail] = value_op(in[tail]...);
}

template <class T>
__global__ void __launch_bounds__(kTunedBlock) add_in_place_tuned(T *a, long long n, T c) {
  wide_transform<T>(
      n, a, [c](typename Vec<T>::type x) { return plus(x, c); }, [c](T x) { return x + c; },
      static_cast<const T *>(a));
}

template <class T>
__global__ void __launch_bounds__(kTunedBlock) add_immutable_tuned(const T *__restrict__ a, T *__restrict__ b,
                                                                   long long n, T c) {
  wide_transform<T>(
      n, b, [c](typename Vec<T>::type x) { return plus(x, c); }, [c](T x) { return x + c; }, a);
}

template <class T>
__global__ void __launch_bounds__(kTunedBlock) copy_tuned(const T *__restrict__ a, T *__restrict__ b, long long n) {
  wide_transform<T>(
      n, b, [](typename Vec<T>::type x) { return x; }, [](T x) { return x; }, a);
}

// STREAM's triad, a = b + s x c: with c all ones and s the constant, a = b + constant.
template <class T>
__global__ void __launch_bounds__(kTunedBlock) triad_tuned(T *__restrict__ a, const T *__restrict__ b,
                                                           const T *__restrict__ c, long long n, T s) {
  wide_transform<T>(
      n, a, [s](typename Vec<T>::type x, typename Vec<T>::type y) { return plus_scaled(x, y, s); },
      [s](T x, T y) { return x + s * y; }, b, c);
}

// One thread that counts its launches: as near an empty kernel as can be checked.
__global__ void count_launch(long long *launches) { ++*launches; }

// The tuned kernels' grid: kWaves x as many blocks as the device keeps resident at once.
template <class K>
unsigned tuned_grid(K kernel) {
  int device = 0, sms = 0, per_sm = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kTunedBlock, 0));
  return static_cast<unsigned>(std::max(1, kWaves * sms * per_sm));
}

#ifdef TP_HAVE_CUB_TRANSFORM
template <class T>
struct PlusConstant {
  T c;
  __host__ __device__ T operator()(T x) const { return x + c; }
};
#endif

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
  // Device work: CUDA events on the default stream around `loops` calls of `op`, which only
  // enqueues (kernel-only time: the launches queue back to back behind the first).
  template <class F>
  PassTime device(F &&op, long long loops = 1) {
    CUDA_CHECK(cudaDeviceSynchronize());
    const bench::DelayedTiming t = bench::time_delayed([&] {
      CUDA_CHECK(cudaEventRecord(start_));
      for (long long i = 0; i < loops; ++i) op();
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
  double c, min_sample_s;
  bool corrupt;
  bench::Retakes retakes;
};

// ---- the case table ----
//
// Every case is one row of case_table (BabelStream's way: one table of what is measured, one
// loop that times it, run_case): its name; which count of its data a record's n gives; the bytes
// one pass moves; how many times the constant its expected values hold; which clock times it;
// and its state (Bench below), made before timing, which sets up each take, runs one pass and
// checks every value at the end. All but the state are the rows of
// src/throughput/experiments/gpu_bandwidth/cases.py (KERNEL_CASES), generated into the build
// tree at build time (gpu_bandwidth_cases.inc) and joined here with each case's implementation
// by name, so the bytes this program counts are those the methods that run without it count.
// `--list-cases` prints the joined table, with no CUDA call, as JSON lines
// (tests/kernels/test_gpu_bandwidth_cases.py reads it back). A new case: its row in cases.py,
// its Bench and its line in implementations() here.

// The counts of one run's data: n values (Table 2's arrays), and the jagged cases' particles,
// events and pairs; `offsets` is events + 1 (an offsets array).
struct Shape {
  long long n = 0, particles = 0, events = 0, pairs = 0;
  long long count(const std::string &name) const {
    if (name == "n") return n;
    if (name == "particles") return particles;
    if (name == "events") return events;
    if (name == "offsets") return events + 1;
    if (name == "pairs") return pairs;
    throw std::logic_error("no count '" + name + "' in a Shape");
  }
};

// One term of the bytes a pass moves: times x count x width, the width "value" (the value
// type's size) or "index" (8: an int64 offset or pair count).
struct Term {
  long long times;
  const char *count, *width;
};

// How many times the constant every expected value holds: none (copies, explode, combine), one
// (an immutable add; an in-place add on shared memory, whose input the CPU rewrites before
// every take), or every take (an in-place add on device memory: warm-up and dropped ones too).
enum class Adds { none, one, every_take };
const char *name_of(Adds a) { return a == Adds::none ? "none" : a == Adds::one ? "one" : "every_take"; }

// Device work is timed with CUDA events, CPU work (write or read of shared memory) by the steady clock.
enum class Clock { cuda_event, steady_clock };
const char *name_of(Clock c) { return c == Clock::cuda_event ? "cuda_event" : "steady_clock"; }

struct Checked {
  long long wrong = 0;
  double checksum = 0;
};

// One case's arrays, made and filled before timing.
template <class T>
struct Bench {
  Shape shape;
  virtual ~Bench() = default;
  // Untimed, before every take: puts inputs and outputs where the pass expects them.
  virtual void setup() {}
  // One pass: enqueues the device work (Clock::cuda_event) or does the CPU work (steady_clock).
  virtual void pass() = 0;
  // After the last pass: every value checked, against initial + added x constant where it applies.
  virtual Checked verify(double added) = 0;
  // Whether a sample may repeat the pass back to back (false: each pass needs its setup, as
  // where the CPU writes shared memory first); such a case times one pass a sample.
  virtual bool repeatable() const { return true; }
  // The launch configuration of the pass's kernel, for the records (0: a copy engine's or CUB's).
  virtual unsigned grid_blocks() const { return 0; }
  virtual int values_per_thread() const { return 1; }
};

// With --corrupt-for-test, one value of `got` made wrong before it is checked (the test of the check).
template <class T>
void corrupt_one(const Run &run, T *got, long long n) {
  if (run.corrupt && n > 0) got[n / 2] += static_cast<T>(0.5);
}

// Table 2's expected values: initial(i) + added x constant.
template <class T>
Checked expect_initial(const Run &run, T *got, long long n, double added) {
  corrupt_one(run, got, n);
  Checked c;
  std::tie(c.wrong, c.checksum) =
      compare(got, n, [&](long long i) { return static_cast<T>(initial<T>(i) + added * run.c); });
  return c;
}

template <class T>
void host_initial(T *dst, long long n) {
  for (long long i = 0; i < n; ++i) dst[i] = initial<T>(i);
}

// Where a case's arrays live.
enum Memory : int { kGlobal, kPageable, kPinned, kMapped, kManaged };

// Host memory, pageable or pinned.
template <class T>
struct HostArray {
  PageableArray<T> pageable;
  PinnedArray<T> pinned;
  T *p;
  HostArray(long long n, bool pin) : pageable(pin ? 0 : n), pinned(pin ? n : 0), p(pin ? pinned.p : pageable.p()) {}
};

// Table 2's cases on n values of T.
template <class T>
struct Table2 : Bench<T> {
  const Run &run;
  const long long n, bytes;
  const T c;
  explicit Table2(const Run &r)
      : run(r), n(r.n), bytes(r.n * static_cast<long long>(sizeof(T))), c(static_cast<T>(r.c)) {
    this->shape.n = n;
  }
};

// A copy of n values with cudaMemcpyAsync: host (pageable or pinned) to device, device to host,
// or within the device (kGlobal to kGlobal).
template <class T>
struct Copy : Table2<T> {
  const bool from_cpu, to_cpu;
  HostArray<T> host;
  DeviceArray<T> from_device, to_device;
  T *from, *to;
  Copy(const Run &r, int from_memory, int to_memory)
      : Table2<T>(r), from_cpu(from_memory != kGlobal), to_cpu(to_memory != kGlobal),
        host(from_cpu || to_cpu ? r.n : 0, from_memory == kPinned || to_memory == kPinned),
        from_device(from_cpu ? 0 : r.n), to_device(to_cpu ? 0 : r.n), from(from_cpu ? host.p : from_device.p),
        to(to_cpu ? host.p : to_device.p) {
    if (from_cpu)
      host_initial(from, this->n);
    else
      fill_initial<<<grid(this->n), kBlock>>>(from, this->n);
  }
  void setup() override {
    if (to_cpu)
      std::fill(to, to + this->n, static_cast<T>(-1));
    else
      fill_value<<<grid(this->n), kBlock>>>(to, this->n, static_cast<T>(-1));
  }
  void pass() override {
    const cudaMemcpyKind kind =
        from_cpu ? cudaMemcpyHostToDevice : to_cpu ? cudaMemcpyDeviceToHost : cudaMemcpyDeviceToDevice;
    CUDA_CHECK(cudaMemcpyAsync(to, from, this->bytes, kind));
  }
  Checked verify(double added) override {
    if (to_cpu) return expect_initial(this->run, to, this->n, added);
    std::vector<T> back = to_host(to, this->n);
    return expect_initial(this->run, back.data(), this->n, added);
  }
};

// The CPU stores every value into shared memory that the GPU touched last.
template <class T>
struct CpuWrite : Table2<T> {
  PageableArray<T> src;
  SharedArray<T> m;
  CpuWrite(const Run &r, int memory) : Table2<T>(r), src(r.n), m(r.n, memory == kMapped) {
    host_initial(src.p(), this->n);
  }
  void setup() override { fill_value<<<grid(this->n), kBlock>>>(m.device, this->n, static_cast<T>(-1)); }
  void pass() override { std::memcpy(m.host, src.p(), this->bytes); }
  Checked verify(double added) override {
    CUDA_CHECK(cudaDeviceSynchronize());
    return expect_initial(this->run, m.host, this->n, added);
  }
};

// The CPU reads every value of shared memory that the GPU wrote last.
template <class T>
struct CpuRead : Table2<T> {
  PageableArray<T> dst;
  SharedArray<T> m;
  CpuRead(const Run &r, int memory) : Table2<T>(r), dst(r.n), m(r.n, memory == kMapped) {}
  void setup() override {
    fill_initial<<<grid(this->n), kBlock>>>(m.device, this->n);
    std::fill(dst.p(), dst.p() + this->n, static_cast<T>(-1));
  }
  void pass() override { std::memcpy(dst.p(), m.host, this->bytes); }
  Checked verify(double added) override { return expect_initial(this->run, dst.p(), this->n, added); }
};

// Adds the constant in place, on device (kGlobal) or shared memory.
template <class T>
struct InPlace : Table2<T> {
  const bool shared;
  DeviceArray<T> d;
  SharedArray<T> m;
  T *a;
  InPlace(const Run &r, int memory)
      : Table2<T>(r), shared(memory != kGlobal), d(shared ? 0 : r.n), m(shared ? r.n : 0, memory == kMapped),
        a(shared ? m.device : d.p) {
    if (!shared) fill_initial<<<grid(this->n), kBlock>>>(a, this->n);
  }
  void setup() override {
    // Shared memory: the CPU writes the input first, so the kernel finds it in host memory.
    if (shared) {
      CUDA_CHECK(cudaDeviceSynchronize());
      host_initial(m.host, this->n);
    }
  }
  void pass() override { add_in_place<<<grid(this->n), kBlock>>>(a, this->n, this->c); }
  bool repeatable() const override { return !shared; }
  unsigned grid_blocks() const override { return grid(this->n); }
  Checked verify(double added) override {
    std::vector<T> back = to_host(a, this->n);
    return expect_initial(this->run, back.data(), this->n, added);
  }
};

// Adds the constant into a new array, on device (kGlobal) or shared memory; the input must stay untouched.
template <class T>
struct Immutable : Table2<T> {
  const bool shared;
  DeviceArray<T> da, db;
  SharedArray<T> ma, mb;
  T *a, *b;
  Immutable(const Run &r, int memory)
      : Table2<T>(r), shared(memory != kGlobal), da(shared ? 0 : r.n), db(shared ? 0 : r.n),
        ma(shared ? r.n : 0, memory == kMapped), mb(shared ? r.n : 0, memory == kMapped),
        a(shared ? ma.device : da.p), b(shared ? mb.device : db.p) {
    if (!shared) fill_initial<<<grid(this->n), kBlock>>>(a, this->n);
  }
  void setup() override {
    if (shared) {
      CUDA_CHECK(cudaDeviceSynchronize());
      host_initial(ma.host, this->n);
      std::fill(mb.host, mb.host + this->n, static_cast<T>(-1));
    } else {
      fill_value<<<grid(this->n), kBlock>>>(b, this->n, static_cast<T>(-1));
    }
  }
  void pass() override { add_immutable<<<grid(this->n), kBlock>>>(a, b, this->n, this->c); }
  bool repeatable() const override { return !shared; }
  unsigned grid_blocks() const override { return grid(this->n); }
  Checked verify(double added) override {
    std::vector<T> back = to_host(b, this->n);
    Checked out = expect_initial(this->run, back.data(), this->n, added);
    std::vector<T> input = to_host(a, this->n);  // the immutable input must be untouched
    out.wrong += compare(input.data(), this->n, [](long long i) { return initial<T>(i); }).first;
    return out;
  }
};

// The tuned kernels and CUB's transform on device memory (Table 2's add, the copy and the
// triad as calibrators): `op` is which.
enum class Tuned { inplace, immutable, copy, triad, cub };

template <class T>
struct TunedCase : Table2<T> {
  const Tuned op;
  DeviceArray<T> a, b, ones;
  unsigned blocks = 0;
  TunedCase(const Run &r, int which)
      : Table2<T>(r), op(static_cast<Tuned>(which)), a(r.n), b(op == Tuned::inplace ? 0 : r.n),
        ones(op == Tuned::triad ? r.n : 0) {
#ifndef TP_HAVE_CUB_TRANSFORM
    if (op == Tuned::cub) throw NotBuilt("built without CUB's DeviceTransform (CCCL 2.8 or later)");
#endif
    fill_initial<<<grid(this->n), kBlock>>>(a.p, this->n);
    if (op == Tuned::triad) fill_value<<<grid(this->n), kBlock>>>(ones.p, this->n, static_cast<T>(1));
    blocks = op == Tuned::inplace     ? tuned_grid(add_in_place_tuned<T>)
             : op == Tuned::immutable ? tuned_grid(add_immutable_tuned<T>)
             : op == Tuned::copy      ? tuned_grid(copy_tuned<T>)
             : op == Tuned::triad     ? tuned_grid(triad_tuned<T>)
                                      : 0;
  }
  void setup() override {
    if (op != Tuned::inplace) fill_value<<<grid(this->n), kBlock>>>(b.p, this->n, static_cast<T>(-1));
  }
  void pass() override {
    const long long n = this->n;
    switch (op) {
      case Tuned::inplace: add_in_place_tuned<<<blocks, kTunedBlock>>>(a.p, n, this->c); break;
      case Tuned::immutable: add_immutable_tuned<<<blocks, kTunedBlock>>>(a.p, b.p, n, this->c); break;
      case Tuned::copy: copy_tuned<<<blocks, kTunedBlock>>>(a.p, b.p, n); break;
      case Tuned::triad: triad_tuned<<<blocks, kTunedBlock>>>(b.p, a.p, ones.p, n, this->c); break;
      case Tuned::cub:
#ifdef TP_HAVE_CUB_TRANSFORM
        CUDA_CHECK(cub::DeviceTransform::Transform(::cuda::std::make_tuple(static_cast<const T *>(a.p)), b.p, n,
                                                   PlusConstant<T>{this->c}));
#endif
        break;
    }
  }
  unsigned grid_blocks() const override { return blocks; }
  int values_per_thread() const override { return op == Tuned::cub ? 0 : static_cast<int>(kUnroll * kLanes<T>); }
  Checked verify(double added) override {
    std::vector<T> back = to_host(op == Tuned::inplace ? a.p : b.p, this->n);
    Checked out = expect_initial(this->run, back.data(), this->n, added);
    if (op != Tuned::inplace) {  // the input must stay untouched
      std::vector<T> input = to_host(a.p, this->n);
      out.wrong += compare(input.data(), this->n, [](long long i) { return initial<T>(i); }).first;
    }
    return out;
  }
};

// A one-thread kernel that counts its launches, launched back to back: what a launch costs
// (no bytes); checked by the count, which must equal every pass made.
template <class T>
struct EmptyLaunch : Bench<T> {
  const Run &run;
  DeviceArray<long long> launches;
  explicit EmptyLaunch(const Run &r) : run(r), launches(1) {
    this->shape.n = r.n;
    CUDA_CHECK(cudaMemset(launches.p, 0, sizeof(long long)));
  }
  void pass() override { count_launch<<<1, 1>>>(launches.p); }
  unsigned grid_blocks() const override { return 1; }
  Checked verify(double passes) override {
    std::vector<long long> got = to_host(launches.p, 1);
    if (run.corrupt) ++got[0];
    return {got[0] != static_cast<long long>(passes) ? 1LL : 0LL, static_cast<double>(got[0])};
  }
};

// The jagged events of --events and --mean-particles (jagged.hpp), their offsets on the device.
template <class T>
struct JaggedData : Bench<T> {
  const Run &run;
  const std::vector<long long> off;
  std::vector<long long> pair_off;
  const long long events, particles;
  DeviceArray<long long> d_off;
  explicit JaggedData(const Run &r)
      : run(r), off(jagged::offsets(r.events, r.mean)), pair_off(static_cast<std::size_t>(r.events) + 1, 0),
        events(r.events), particles(off.back()), d_off(r.events + 1) {
    for (long long e = 0; e < events; ++e) {
      const long long m = off[e + 1] - off[e];
      pair_off[e + 1] = pair_off[e] + m * (m - 1) / 2;
    }
    this->shape = {r.n, particles, events, pair_off.back()};
    CUDA_CHECK(cudaMemcpy(d_off.p, off.data(), (events + 1) * sizeof(long long), cudaMemcpyHostToDevice));
  }
};

template <class T>
struct Explode : JaggedData<T> {
  std::vector<T> ev;
  DeviceArray<T> d_ev, d_out;
  explicit Explode(const Run &r)
      : JaggedData<T>(r), ev(static_cast<std::size_t>(std::max(1LL, r.events))), d_ev(r.events),
        d_out(this->particles) {
    for (long long e = 0; e < this->events; ++e) ev[e] = initial<T>(e);
    CUDA_CHECK(cudaMemcpy(d_ev.p, ev.data(), this->events * sizeof(T), cudaMemcpyHostToDevice));
  }
  void setup() override {
    fill_value<<<grid(this->particles), kBlock>>>(d_out.p, this->particles, static_cast<T>(-1));
  }
  void pass() override {
    if (this->particles > 0)
      explode<<<grid(this->particles), kBlock>>>(this->d_off.p, d_ev.p, this->events, d_out.p, this->particles);
  }
  Checked verify(double) override {
    const long long particles = this->particles;
    std::vector<T> back = to_host(d_out.p, particles);
    std::vector<T> expected(static_cast<std::size_t>(std::max(1LL, particles)));
    for (long long e = 0; e < this->events; ++e)
      for (long long j = this->off[e]; j < this->off[e + 1]; ++j) expected[j] = ev[e];
    corrupt_one(this->run, back.data(), particles);
    Checked out;
    std::tie(out.wrong, out.checksum) = compare(back.data(), particles, [&](long long j) { return expected[j]; });
    return out;
  }
};

template <class T>
struct Combine : JaggedData<T> {
  std::vector<T> values;
  DeviceArray<T> d_values, d_out;
  DeviceArray<long long> d_pair_counts, d_pair_off;
  ScanSpace space;
  explicit Combine(const Run &r)
      : JaggedData<T>(r), values(static_cast<std::size_t>(std::max(1LL, this->particles))),
        d_values(this->particles), d_out(this->shape.pairs), d_pair_counts(r.events + 1), d_pair_off(r.events + 1),
        space(r.events + 1) {
    for (long long j = 0; j < this->particles; ++j) values[j] = initial<T>(j);
    CUDA_CHECK(cudaMemcpy(d_values.p, values.data(), this->particles * sizeof(T), cudaMemcpyHostToDevice));
  }
  void setup() override {
    fill_value<<<grid(this->shape.pairs), kBlock>>>(d_out.p, this->shape.pairs, static_cast<T>(-1));
  }
  void pass() override {
    const long long events = this->events, pairs = this->shape.pairs;
    pair_counts<<<grid(events + 1), kBlock>>>(this->d_off.p, events, d_pair_counts.p);
    inclusive_scan(d_pair_counts.p, d_pair_off.p, events + 1, space);
    if (pairs > 0) combine<<<grid(pairs), kBlock>>>(this->d_off.p, d_pair_off.p, d_values.p, events, d_out.p, pairs);
  }
  Checked verify(double) override {
    const long long events = this->events, pairs = this->shape.pairs;
    const std::vector<long long> &off = this->off;
    Checked out;
    std::vector<long long> got_pair_off = to_host(d_pair_off.p, events + 1);
    for (long long e = 0; e <= events; ++e) out.wrong += got_pair_off[e] != this->pair_off[e];
    std::vector<T> back = to_host(d_out.p, pairs);
    std::vector<T> expected(static_cast<std::size_t>(std::max(1LL, pairs)));
    for (long long e = 0, q = 0; e < events; ++e)
      for (long long i = off[e]; i < off[e + 1]; ++i)
        for (long long j = i + 1; j < off[e + 1]; ++j) expected[q++] = values[i] + values[j];
    corrupt_one(this->run, back.data(), pairs);
    long long wrong = 0;
    std::tie(wrong, out.checksum) = compare(back.data(), pairs, [&](long long q) { return expected[q]; });
    out.wrong += wrong;
    return out;
  }
};

// What a case is, apart from its implementation: its name, which Shape count a record's n gives,
// the bytes one pass moves (reads + writes; across the link for transfers), the constant's count in
// its expected values and its clock. The rows are generated at build time from
// src/throughput/experiments/gpu_bandwidth/cases.py (KERNEL_CASES, which every Python method
// reads): one source for what each case moves (gpu_bandwidth_cases.inc, in the build tree).
struct CaseTerms {
  const char *name;
  const char *values;
  std::vector<Term> bytes;
  Adds adds;
  Clock clock;
};

const std::vector<CaseTerms> &case_terms() {
  static const std::vector<CaseTerms> rows = {
#include "gpu_bandwidth_cases.inc"
  };
  return rows;
}

template <class T>
using Maker = std::unique_ptr<Bench<T>> (*)(const Run &);

template <class T>
struct Case : CaseTerms {
  Maker<T> make;
};

// The state of a case: B<T> made from the run and the case's memory (or memories).
template <class T, template <class> class B, int... memory>
std::unique_ptr<Bench<T>> make(const Run &run) {
  return std::make_unique<B<T>>(run, memory...);
}

// Each case's implementation, by the name of its row.
template <class T>
const std::map<std::string, Maker<T>> &implementations() {
  static const std::map<std::string, Maker<T>> table = {
      {"h2d_pageable", make<T, Copy, kPageable, kGlobal>},
      {"h2d_pinned", make<T, Copy, kPinned, kGlobal>},
      {"d2h_pageable", make<T, Copy, kGlobal, kPageable>},
      {"d2h_pinned", make<T, Copy, kGlobal, kPinned>},
      {"mapped_cpu_write", make<T, CpuWrite, kMapped>},
      {"mapped_cpu_read", make<T, CpuRead, kMapped>},
      {"managed_cpu_write", make<T, CpuWrite, kManaged>},
      {"managed_cpu_read", make<T, CpuRead, kManaged>},
      {"d2d_copy", make<T, Copy, kGlobal, kGlobal>},
      {"inplace_global", make<T, InPlace, kGlobal>},
      {"immutable_global", make<T, Immutable, kGlobal>},
      {"inplace_mapped", make<T, InPlace, kMapped>},
      {"immutable_mapped", make<T, Immutable, kMapped>},
      {"inplace_managed", make<T, InPlace, kManaged>},
      {"immutable_managed", make<T, Immutable, kManaged>},
      // the tuned kernels and CUB's (device memory only), and the cost of one empty launch
      {"inplace_tuned", make<T, TunedCase, int(Tuned::inplace)>},
      {"immutable_tuned", make<T, TunedCase, int(Tuned::immutable)>},
      {"copy_tuned", make<T, TunedCase, int(Tuned::copy)>},
      {"triad_tuned", make<T, TunedCase, int(Tuned::triad)>},
      {"cub_transform", make<T, TunedCase, int(Tuned::cub)>},
      {"empty_launch", make<T, EmptyLaunch>},
      {"explode", make<T, Explode>},
      {"combine", make<T, Combine>},
  };
  return table;
}

// The rows joined with their implementations, in the rows' order. A row with no implementation, or
// an implementation with no row, stops the program on its first use (--list-cases too, which the
// tests run), naming the case.
template <class T>
const std::vector<Case<T>> &case_table() {
  static const std::vector<Case<T>> table = [] {
    const std::map<std::string, Maker<T>> &made = implementations<T>();
    std::vector<Case<T>> rows;
    for (const CaseTerms &terms : case_terms()) {
      const auto found = made.find(terms.name);
      if (found == made.end())
        throw std::logic_error(std::string("case '") + terms.name +
                               "' of cases.py (KERNEL_CASES) has no implementation in gpu_bandwidth.cu");
      rows.push_back(Case<T>{terms, found->second});
    }
    for (const auto &entry : made)
      if (std::none_of(rows.begin(), rows.end(), [&](const Case<T> &c) { return entry.first == c.name; }))
        throw std::logic_error("gpu_bandwidth.cu implements case '" + entry.first +
                               "', which cases.py (KERNEL_CASES) does not list");
    return rows;
  }();
  return table;
}

template <class T>
long long bytes_moved(const Case<T> &kcase, const Shape &shape) {
  long long bytes = 0;
  for (const Term &t : kcase.bytes)
    bytes += t.times * shape.count(t.count) *
             static_cast<long long>(std::string(t.width) == "value" ? sizeof(T) : sizeof(long long));
  return bytes;
}

// The table as JSON lines, one per case (no CUDA call: it answers without a GPU).
void list_cases() {
  for (const Case<float> &c : case_table<float>()) {
    std::vector<bench::JsonLine> terms(c.bytes.size());
    for (std::size_t i = 0; i < c.bytes.size(); ++i)
      terms[i].add("times", c.bytes[i].times).add("count", c.bytes[i].count).add("width", c.bytes[i].width);
    bench::JsonLine()
        .add("record", "case")
        .add("name", c.name)
        .add("values", c.values)
        .add("bytes_moved", terms)
        .add("adds", name_of(c.adds))
        .add("clock", name_of(c.clock))
        .print();
  }
}

template <class T>
const Case<T> &find_case(const std::string &name) {
  for (const Case<T> &c : case_table<T>())
    if (name == c.name) return c;
  std::string known = "device";
  for (const Case<T> &c : case_table<T>()) known += std::string(", ") + c.name;
  throw std::invalid_argument("--case must be one of " + known + "; got '" + name + "'");
}

struct Outcome {
  long long values = 0, wrong = 0;
  double checksum = 0;
  long long passes = 0;  // the adds of the constant the values hold (an in-place add's: every pass)
};

// The one sample loop of every case: sample r sets up (untimed), then times `loops` passes
// back to back (one for a CPU case or one that is not repeatable; after the warm-up as many
// as reach --min-sample-s by the CUDA events, bench::Calibration); it is taken again while the
// run delay rule says so (never a warm-up sample). Every value is checked after the last
// sample, and each sample printed as a timing record.
template <class T>
Outcome run_case(const Run &run, Timer &timer) {
  const Case<T> &kcase = find_case<T>(run.kcase);
  const std::unique_ptr<Bench<T>> state = kcase.make(run);
  const bool calibrated = kcase.clock == Clock::cuda_event && state->repeatable();
  bench::Calibration calibration(run.warmup, calibrated ? run.min_sample_s : 0.0);
  const long long samples = run.warmup + run.reps;
  std::vector<PassTime> times;
  std::vector<long long> loops;
  long long passes_made = 0;  // every take's, kept or not (an in-place add's values hold them all)
  for (long long r = 0; r < samples; ++r) {
    const long long these = calibration.loops(r);
    auto taken = bench::take_retaking(run.retakes, r >= run.warmup, 1, [&] {
      state->setup();
      passes_made += these;
      auto one = [&] { state->pass(); };
      return kcase.clock == Clock::cuda_event ? timer.device(one, these) : timer.host(one);
    });
    taken.first.retakes = taken.second;
    calibration.update(r, these, taken.first.event_s, taken.first.wall_s);
    times.push_back(taken.first);
    loops.push_back(these);
  }
  const double added =
      kcase.adds == Adds::none ? 0.0 : kcase.adds == Adds::one ? 1.0 : static_cast<double>(passes_made);
  const Checked checked = state->verify(added);
  const Outcome out{state->shape.count(kcase.values), checked.wrong, checked.checksum,
                    static_cast<long long>(added)};
  const long long bytes = bytes_moved(kcase, state->shape);

  for (long long r = 0; r < samples; ++r) {
    bench::JsonLine line;
    line.add("record", "timing")
        .add("kernel", "gpu_bandwidth_cuda")
        .add("case", run.kcase)
        .add("dtype", run.dtype)
        .add("n", out.values)
        .add("rep", r - run.warmup)
        .add("warmup", r < run.warmup)
        .add("wall_s", times[r].wall_s)
        .add("cpu_s", times[r].cpu_s)
        .add("run_delay_s", times[r].run_delay_s)
        .add("sample_retakes", times[r].retakes);
    // (a case that times one pass a sample gives no loops: the method section counts its samples
    // apart from the calibrated ones)
    if (calibrated) line.add("loops", loops[r]);
    line.add("grid_blocks", static_cast<long long>(state->grid_blocks()))
        .add("values_per_thread", state->values_per_thread())
        .add("bytes_moved", bytes)
        .add("clock", times[r].event_s >= 0 ? "cuda_event" : "steady_clock");
    if (times[r].event_s >= 0) line.add("event_s", times[r].event_s);
    line.print();
  }
  return out;
}

}  // namespace

int main(int argc, char **argv) {
  const char *kernel = "gpu_bandwidth_cuda";
  return bench::guarded_main(
      kernel, argc, argv,
      bench::with_retake_options({{"case", "device"},
                                  {"dtype", "float32"},
                                  {"n", "1048576"},
                                  {"reps", "5"},
                                  {"warmup", "1"},
                                  {"min-sample-s", "0"},
                                  {"constant", "1"},
                                  {"events", "100000"},
                                  {"mean-particles", "4"},
                                  {"corrupt-for-test", "0"}}),
      {"list-cases"}, [&](const bench::Options &opt) {
        if (opt.flag("list-cases")) {
          list_cases();
          return 0;
        }
        Run run;
        run.kcase = opt.str("case");
        if (run.kcase != "device") find_case<float>(run.kcase);  // an unknown case: refused before any CUDA call
        run.dtype = opt.str("dtype");
        if (run.dtype != "float32" && run.dtype != "float64")
          throw std::invalid_argument("--dtype must be 'float32' or 'float64', got '" + run.dtype + "'");
        run.n = opt.integer("n", 1);
        run.reps = opt.integer("reps", 1);
        run.warmup = opt.integer("warmup", 0);
        run.events = opt.integer("events", 1);
        run.mean = opt.integer("mean-particles", 0);
        run.c = opt.real("constant");
        run.min_sample_s = opt.seconds("min-sample-s", 60);
        run.corrupt = opt.integer("corrupt-for-test", 0) != 0;
        run.retakes = bench::retakes_from(opt);
        if (run.c != std::floor(run.c) || std::fabs(run.c) > 1000)
          throw std::invalid_argument("--constant must be a small integer so that checks are exact");

        try {
          require_device();
          const DeviceInfo info = device_info();
          print_device(info);
          if (run.kcase == "device") {
            bench::JsonLine().add("record", "validation").add("kernel", kernel).add("ok", true).print();
            return 0;
          }
          Timer timer;
          const Outcome out = run.dtype == "float32" ? run_case<float>(run, timer) : run_case<double>(run, timer);
          return bench::report_validation(kernel, out.wrong, out.values, out.checksum, out.passes);
        } catch (const NoDevice &e) {
          std::fprintf(stderr, "%s: no usable CUDA device: %s\n", kernel, e.what());
          return kExitNoDevice;
        } catch (const NotBuilt &e) {
          std::fprintf(stderr, "%s: case %s not built: %s\n", kernel, run.kcase.c_str(), e.what());
          return kExitNotBuilt;
        }
      });
}

// What every benchmark kernel shares: clocks, command-line options, and the
// JSON-lines output that the Python harness (src/throughput/core/harness.py) parses.
//
// Wall time comes from std::chrono::steady_clock (never std::clock(), which is
// CPU time and made the seed's GPU figures wrong); CPU time from
// CLOCK_PROCESS_CPUTIME_ID, summed over all threads of the process.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <dirent.h>
#include <sys/mman.h>

#ifndef TP_COMPILER
#define TP_COMPILER "unknown"
#endif
#ifndef TP_CXX_FLAGS
#define TP_CXX_FLAGS "unknown"
#endif
#ifndef TP_OPT
#define TP_OPT "unknown"
#endif

namespace bench {

inline double wall_seconds() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

// The mean cost of one wall_seconds() call, measured once per process: what a
// sample of a rate costs a reader that takes one (see the reader comparison's Pass).
inline double clock_read_seconds() {
  static const double cost = [] {
    constexpr int kReads = 100000;
    const double start = wall_seconds();
    double last = start;
    for (int i = 0; i < kReads; ++i) last = wall_seconds();
    return (last - start) / kReads;
  }();
  return cost;
}

inline double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// Wall and CPU time of one call of f.
struct Timing {
  double wall_s;
  double cpu_s;
};
template <class F>
Timing time_it(F &&f) {
  const double w0 = wall_seconds(), c0 = cpu_seconds();
  f();
  const double c1 = cpu_seconds(), w1 = wall_seconds();
  return {w1 - w0, c1 - c0};
}

// Calibrated samples, pyperf's way: a call shorter than the minimum sample is repeated inside
// one timed region, so that a timer tick, a preemption or a page-fault burst is a small share
// of the sample rather than 5-50% of a millisecond pass (with a tenth to spare).
inline long long calibrated_loops(double call_s, double min_sample_s) {
  if (!(min_sample_s > 0) || call_s >= min_sample_s) return 1;
  return static_cast<long long>(std::ceil(1.1 * min_sample_s / std::max(call_s, 1e-9)));
}

// How many calls one sample repeats, pyperf's way: during the `warmup` repetitions one call
// each, then as many as the last warm-up call says reach the minimum. A sample that still fell
// short (the warm-up call ran slower than the calls after it) raises the loops for the next
// ones, never lowers them; where there is no warm-up, the first sample calibrates the rest.
// `sample_s` is the printed quantity of the whole sample (a reader's: its reading time), and
// `wall_s` all the sample cost; with `max_sample_s` above 0, no sample is planned to cost
// more than that (a reader whose opening dwarfs its reading then falls short, and says so).
class Calibration {
 public:
  Calibration(long long warmup, double min_sample_s, double max_sample_s = 0)
      : warmup_(warmup), min_sample_s_(min_sample_s), max_sample_s_(max_sample_s) {}
  long long loops(long long rep) const { return rep < warmup_ ? 1 : loops_; }
  void update(long long rep, long long these, double sample_s, double wall_s) {
    const double calls = static_cast<double>(these);
    long long wanted = calibrated_loops(sample_s / calls, min_sample_s_);
    if (max_sample_s_ > 0 && wall_s > 0)
      wanted = std::min(wanted, std::max(1LL, static_cast<long long>(max_sample_s_ / (wall_s / calls))));
    loops_ = rep < warmup_ ? wanted : (sample_s < min_sample_s_ ? std::max(loops_, wanted) : loops_);
  }

 private:
  long long warmup_;
  double min_sample_s_, max_sample_s_;
  long long loops_ = 1;
};

// The run delay in one schedstat file (its second field, in ns), in seconds; -1 where the file
// cannot be read (a kernel without scheduler statistics, or a thread that has ended).
inline double schedstat_delay_seconds(const std::string &path) {
  std::FILE *f = std::fopen(path.c_str(), "r");
  if (!f) return -1;
  unsigned long long on_cpu = 0, waiting = 0;
  const int got = std::fscanf(f, "%llu %llu", &on_cpu, &waiting);
  std::fclose(f);
  return got == 2 ? 1e-9 * static_cast<double>(waiting) : -1;
}

// Seconds the calling thread has waited on a run queue for a CPU since it started
// (/proc/thread-self/schedstat), -1 where the kernel does not say: what delayed a sample, by
// its cause, where a single-threaded kernel takes it before and after.
inline double run_delay_seconds() { return schedstat_delay_seconds("/proc/thread-self/schedstat"); }

// The run delay (seconds) of every live thread of this process by its id
// (/proc/self/task/*/schedstat); empty where the kernel does not say.
inline std::map<std::string, double> thread_run_delays() {
  std::map<std::string, double> delays;
  DIR *tasks = opendir("/proc/self/task");
  if (!tasks) return delays;
  while (const dirent *task = readdir(tasks)) {
    if (task->d_name[0] == '.') continue;
    const double delay = schedstat_delay_seconds(std::string("/proc/self/task/") + task->d_name + "/schedstat");
    if (delay >= 0) delays[task->d_name] = delay;  // else the thread ended meanwhile
  }
  closedir(tasks);
  return delays;
}

// How long this process's threads waited for a CPU since `before` (thread_run_delays then), -1
// where the kernel does not say: each live thread's delay less its delay then (a thread started
// since counts whole). A thread that ended meanwhile cannot be read and its wait is left out; a
// difference of the live threads' totals would lose its whole delay and could come out negative.
inline double run_delay_since(const std::map<std::string, double> &before) {
  const auto after = thread_run_delays();
  if (before.empty() || after.empty()) return -1;
  double total = 0;
  for (const auto &[task, delay] : after) {
    const auto then = before.find(task);
    total += std::max(0.0, delay - (then == before.end() ? 0.0 : then->second));
  }
  return total;
}

// Wall and CPU time of one call of f, and how long this process's threads waited on a run queue
// for a CPU meanwhile (-1: unknown): a sample's time beside what the machine did to it.
struct DelayedTiming {
  double wall_s, cpu_s, run_delay_s;
};
template <class F>
DelayedTiming time_delayed(F &&f) {
  const auto before = thread_run_delays();
  const Timing t = time_it(f);
  return {t.wall_s, t.cpu_s, run_delay_since(before)};
}
// A sample timed in parts, with untimed work between them (a cache state set afresh): the parts'
// times and delays summed, the delay unknown (-1) where any part's is.
inline DelayedTiming &operator+=(DelayedTiming &sum, const DelayedTiming &part) {
  sum.wall_s += part.wall_s;
  sum.cpu_s += part.cpu_s;
  sum.run_delay_s = sum.run_delay_s < 0 || part.run_delay_s < 0 ? -1 : sum.run_delay_s + part.run_delay_s;
  return sum;
}

// Which samples are taken again, by their cause rather than by their spread: a sample during
// which this process's threads waited on a run queue for a CPU longer than `max_share` of their
// time in it (run delay over wall time times threads) was disturbed by something else on the
// machine, and is taken again, at most `max_retakes` times (its last take kept, and counted).
// Warm-up samples are never taken again. The Python side: throughput.harness.Retakes.
struct Retakes {
  double max_share = 0;  // 0: no sample is taken again
  long long max_retakes = 0;
  bool disturbed(double run_delay_s, double wall_s, int threads) const {
    return max_share > 0 && run_delay_s >= 0 && run_delay_s > max_share * wall_s * std::max(threads, 1);
  }
};

// One sample, taken again while `rule` says it was disturbed, for kernels whose samples need
// their state set up afresh before each take (a page cache evicted, an output refilled): `take`
// does that untimed, then returns its timed region's wall_s and run_delay_s (a DelayedTiming or a
// type with both). With `may_retake` false (a warm-up) it is taken once. Returns the last take
// and how many takes before it were dropped.
template <class F>
auto take_retaking(const Retakes &rule, bool may_retake, int threads, F &&take) {
  for (long long retakes = 0;; ++retakes) {
    auto sample = take();
    if (!may_retake || retakes >= rule.max_retakes || !rule.disturbed(sample.run_delay_s, sample.wall_s, threads))
      return std::make_pair(sample, retakes);
  }
}

// The samples of one timed operation, each a Calibration's loops of calls in one timed region,
// each taken again while Retakes says it was disturbed (its run delay and retakes in Sample).
// A kernel that checks its values exactly needs calls(): an in-place pass changes them, and so
// does every take of a sample, kept or not.
class Sampler {
 public:
  Sampler(long long warmup, double min_sample_s, Retakes retakes = {}, int threads = 1)
      : calibration_(warmup, min_sample_s), warmup_(warmup), retakes_(retakes), threads_(threads) {}
  struct Sample {
    long long loops;
    Timing timing;
    double run_delay_s;  // -1: unknown
    long long retakes;
  };
  template <class F>
  Sample take(long long rep, F &&f) {
    const long long these = calibration_.loops(rep);
    const auto taken = take_retaking(retakes_, rep >= warmup_, threads_, [&] {
      calls_ += these;
      return time_delayed([&] {
        for (long long i = 0; i < these; ++i) f();
      });
    });
    const DelayedTiming &t = taken.first;
    calibration_.update(rep, these, t.wall_s, t.wall_s);
    return {these, {t.wall_s, t.cpu_s}, t.run_delay_s, taken.second};
  }
  long long calls() const { return calls_; }

 private:
  Calibration calibration_;
  long long warmup_;
  Retakes retakes_;
  int threads_;
  long long calls_ = 0;
};

// Cache-line aligned, uninitialised doubles: the caller's first touch decides
// which NUMA node (and which thread's cache) each page lands on. An array of
// 2 MiB or more is aligned to 2 MiB and asks for transparent huge pages
// (madvise: where THP is "madvise", the common default, only memory that asks
// gets them), so that every process of a run streams through the same page
// size, and through fewer TLB misses, a nested page walk each on a VM.
struct FreeDeleter {
  void operator()(double *p) const { std::free(p); }
};
using Array = std::unique_ptr<double[], FreeDeleter>;

inline constexpr std::size_t kHugePage = std::size_t{2} << 20;

inline Array allocate(long long n) {
  const std::size_t wanted = static_cast<std::size_t>(n) * sizeof(double);
  const std::size_t align = wanted >= kHugePage ? kHugePage : 64;
  const std::size_t bytes = (wanted + align - 1) / align * align;
  auto *p = static_cast<double *>(std::aligned_alloc(align, bytes));
  if (!p) throw std::runtime_error("cannot allocate " + std::to_string(bytes) + " bytes");
  if (align == kHugePage) madvise(p, bytes, MADV_HUGEPAGE);  // advice: refused where THP is off
  return Array(p);
}

// Bytes of this process's anonymous memory in transparent huge pages (the kernel's
// /proc/self/smaps_rollup AnonHugePages), -1 where unknown: what the advice above got.
inline long long huge_page_bytes() {
  std::FILE *f = std::fopen("/proc/self/smaps_rollup", "r");
  if (!f) return -1;
  char line[256];
  long long kib = -1;
  while (std::fgets(line, sizeof line, f))
    if (std::sscanf(line, "AnonHugePages: %lld kB", &kib) == 1) break;
  std::fclose(f);
  return kib < 0 ? -1 : kib * 1024;
}

// Options given as --name value, and the `flags` a kernel names given alone (--list-cases).
// Unknown or malformed options are an error that names the option, so a typo never runs a
// benchmark with a default.
class Options {
 public:
  Options(int argc, char **argv, std::map<std::string, std::string> defaults, std::set<std::string> flags = {})
      : values_(std::move(defaults)) {
    for (int i = 1; i < argc; ++i) {
      std::string key = argv[i];
      if (key == "--build-info") {
        build_info_ = true;
        continue;
      }
      if (key.rfind("--", 0) == 0 && flags.count(key.substr(2))) {
        flags_.insert(key.substr(2));
        continue;
      }
      if (key.rfind("--", 0) != 0 || i + 1 >= argc)
        throw std::invalid_argument("expected '--option value', got '" + key + "'");
      key = key.substr(2);
      if (!values_.count(key)) throw std::invalid_argument("unknown option --" + key);
      values_[key] = argv[++i];
    }
  }
  bool build_info() const { return build_info_; }
  bool flag(const std::string &name) const { return flags_.count(name) != 0; }
  std::string str(const std::string &key) const { return values_.at(key); }
  long long integer(const std::string &key, long long min_value) const {
    const std::string &text = values_.at(key);
    std::size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(text, &used);
    } catch (const std::exception &) {
      used = 0;
    }
    if (used != text.size() || v < min_value)
      throw std::invalid_argument("--" + key + " must be an integer >= " + std::to_string(min_value) +
                                  ", got '" + text + "'");
    return v;
  }
  double real(const std::string &key) const {
    const std::string &text = values_.at(key);
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(text, &used);
    } catch (const std::exception &) {
      used = 0;
    }
    if (used != text.size()) throw std::invalid_argument("--" + key + " must be a number, got '" + text + "'");
    return v;
  }
  // A duration option such as --min-sample-s, in [0, max_s] seconds.
  double seconds(const std::string &key, int max_s) const {
    const double v = real(key);
    if (!(v >= 0 && v <= max_s))
      throw std::invalid_argument("--" + key + " must lie in [0, " + std::to_string(max_s) + "] seconds, got '" +
                                  values_.at(key) + "'");
    return v;
  }

 private:
  std::map<std::string, std::string> values_;
  std::set<std::string> flags_;
  bool build_info_ = false;
};

// The kernel options that set Retakes, added to a kernel's defaults (both 0: none taken again).
inline std::map<std::string, std::string> with_retake_options(std::map<std::string, std::string> defaults) {
  defaults.emplace("max-run-delay-share", "0");
  defaults.emplace("max-sample-retakes", "0");
  return defaults;
}
inline Retakes retakes_from(const Options &opt) {
  const double share = opt.real("max-run-delay-share");
  if (!(share >= 0 && share < 1))
    throw std::invalid_argument("--max-run-delay-share must lie in [0, 1), got '" + opt.str("max-run-delay-share") +
                                "'");
  return {share, opt.integer("max-sample-retakes", 0)};
}

// One JSON object per line. Only the types the kernels need.
class JsonLine {
 public:
  JsonLine &add(const std::string &key, const std::string &value) {
    std::string escaped;
    for (char c : value) {
      if (c == '"' || c == '\\') escaped += '\\';
      escaped += c;
    }
    return raw(key, "\"" + escaped + "\"");
  }
  JsonLine &add(const std::string &key, const char *value) { return add(key, std::string(value)); }
  JsonLine &add(const std::string &key, bool value) { return raw(key, value ? "true" : "false"); }
  JsonLine &add(const std::string &key, long long value) { return raw(key, std::to_string(value)); }
  JsonLine &add(const std::string &key, int value) { return raw(key, std::to_string(value)); }
  JsonLine &add(const std::string &key, double value) {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "%.17g", value);
    return raw(key, buffer);
  }
  // A list of objects, each built as a JsonLine.
  JsonLine &add(const std::string &key, const std::vector<JsonLine> &objects) {
    std::string list;
    for (const JsonLine &o : objects) list += (list.empty() ? "{" : ", {") + o.body_.str() + "}";
    return raw(key, "[" + list + "]");
  }
  void print() const {
    std::printf("{%s}\n", body_.str().c_str());
    std::fflush(stdout);
  }

 private:
  JsonLine &raw(const std::string &key, const std::string &value) {
    if (!first_) body_ << ", ";
    first_ = false;
    body_ << '"' << key << "\": " << value;
    return *this;
  }
  std::ostringstream body_;
  bool first_ = true;
};

// The closing record of a run that checked `n` values and found `wrong` of
// them wrong. Returns the process exit code: 0, or 3 for a failed validation.
// `passes` (where 0 or more): how many passes the checked values hold (an in-place add's
// checksum grew by each; the analysis takes them off before methods are compared).
inline int report_validation(const char *kernel, long long wrong, long long n, double checksum,
                             long long passes = -1) {
  JsonLine line;
  line.add("record", "validation").add("kernel", kernel).add("ok", wrong == 0).add("wrong_values", wrong);
  line.add("checksum", checksum);
  if (passes >= 0) line.add("passes", passes);
  line.print();
  if (wrong == 0) return 0;
  std::fprintf(stderr, "%s: validation failed: %lld of %lld values wrong\n", kernel, wrong, n);
  return 3;
}

// How this binary was compiled, for the provenance of every result.
inline void print_build_info(const char *kernel) {
  JsonLine()
      .add("record", "build_info")
      .add("kernel", kernel)
      .add("compiler", TP_COMPILER)
      .add("cxx_flags", TP_CXX_FLAGS)
      .add("opt", TP_OPT)
      .print();
}

// Runs main_body, turning exceptions into a message on stderr and exit code 2.
template <class F>
int guarded_main(const char *kernel, F &&main_body) {
  try {
    return main_body();
  } catch (const std::exception &e) {
    std::fprintf(stderr, "%s: error: %s\n", kernel, e.what());
    return 2;
  }
}

// The prologue every kernel shares, written once: its options parsed against `defaults` and
// `flags` (an unknown or malformed one is an error naming it, exit 2), --build-info answered,
// then body(options) run as above.
template <class F>
int guarded_main(const char *kernel, int argc, char **argv, std::map<std::string, std::string> defaults,
                 std::set<std::string> flags, F &&body) {
  return guarded_main(kernel, [&] {
    const Options opt(argc, argv, std::move(defaults), std::move(flags));
    if (opt.build_info()) {
      print_build_info(kernel);
      return 0;
    }
    return body(opt);
  });
}
template <class F>
int guarded_main(const char *kernel, int argc, char **argv, std::map<std::string, std::string> defaults,
                 F &&body) {
  return guarded_main(kernel, argc, argv, std::move(defaults), {}, std::forward<F>(body));
}

}  // namespace bench

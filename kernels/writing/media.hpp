// Where the writers of the writing experiment write, and what a pass costs
// besides time: the output medium (a disk directory, a tmpfs directory,
// memory, or a disk directory throttled to a set rate to stand in for a slow
// device), the peak resident memory of the process during a pass, and
// (common/root_errors.hpp) ROOT's error messages, which ROOT prints but does not throw.
#pragma once

#include <TFile.h>
#include <TMemFile.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bench.hpp"
#include "root_errors.hpp"

namespace writing {

// ---- media ------------------------------------------------------------------------------------

// A disk directory ("disk"), a tmpfs directory ("tmpfs"), memory ("memory":
// a TMemFile, or a byte buffer for the simple format), or a disk directory
// whose writes are throttled to --slow-mb-s MB/s ("slow", the seed's hard
// disk stand-in: it shows what happens when producers outrun the medium).
struct Medium {
  std::string kind;
  std::string dir;
  double slow_bytes_per_s = 0;
  bool fsync = true;  // whether a pass ends with fsync of its file (part of the timed work)
  std::string fs_type = "n/a";

  static Medium from_options(const bench::Options &opt);
  bool in_memory() const { return kind == "memory"; }
  bool throttled() const { return kind == "slow"; }
};

// Limits the rate of the writes passing through it (cumulative bytes over
// time since the first write), by sleeping before a write that would exceed it.
class Throttle {
 public:
  explicit Throttle(double bytes_per_s) : rate_(bytes_per_s) {}
  void wait_for(std::size_t bytes);

 private:
  double rate_;
  std::mutex mutex_;
  bool started_ = false;
  std::chrono::steady_clock::time_point start_;
  double bytes_ = 0;
};

// The output of one pass: a file (written as PATH.tmp, renamed on success,
// removed when the pass is over or fails) or bytes in memory.
class Output {
 public:
  Output(const Medium &medium, const std::string &stem);
  ~Output();
  Output(const Output &) = delete;
  Output &operator=(const Output &) = delete;
  const Medium &medium() const { return medium_; }
  const std::string &write_path() const { return temporary_; }  // where writers write
  const std::string &path() const { return path_; }             // the finished file
  std::string where() const { return medium_.in_memory() ? "memory (" + path_ + ")" : path_; }
  std::vector<char> &memory() { return memory_; }
  Throttle *throttle() { return throttle_.get(); }
  void commit();            // rename PATH.tmp to PATH (file media)
  std::uint64_t size() const;
  void remove();

 private:
  const Medium &medium_;
  std::string path_, temporary_;
  std::vector<char> memory_;
  std::unique_ptr<Throttle> throttle_;
  bool committed_ = false;
};

// fsync a file by name: its data reaches the device before the pass ends.
void sync_file(const std::string &path);

// A ROOT output file on the medium: TFile (disk, tmpfs), a throttled TFile
// (slow), or a TMemFile whose bytes land in output.memory() when it is
// closed or deleted (memory). The caller (or TBufferMerger) owns it.
std::unique_ptr<TFile> open_root_output(Output &output, int compression_settings);
// The finished output opened for reading.
std::unique_ptr<TFile> open_root_input(Output &output);

// ---- peak resident memory ---------------------------------------------------------------------

// The peak resident set size during a pass. Where the kernel allows it, the
// high-water mark VmHWM is reset at the start (echo 5 > /proc/self/clear_refs)
// and read at the end: exact. Otherwise a thread samples VmRSS every 2 ms.
class PeakRss {
 public:
  struct Result {
    long long start_bytes, peak_bytes;
    const char *method;
  };
  ~PeakRss();
  void start();
  Result stop();
  static long long status_bytes(const char *field);  // VmRSS, VmHWM, ... of this process

 private:
  long long start_ = 0;
  bool reset_ok_ = false;
  std::atomic<bool> sampling_{false};
  std::atomic<long long> sampled_peak_{0};
  std::thread sampler_;
};

}  // namespace writing

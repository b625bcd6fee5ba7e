// The state of a file in the Linux page cache, set and checked per file (never
// the whole machine's cache):
//   evict(path)     posix_fadvise(POSIX_FADV_DONTNEED) on the file, then checks
//                   with mincore() that none of its pages is still resident
//                   ("cold" reads come from the device);
//   warm(path)      reads the whole file, then checks that at least
//                   min_warm_fraction() of its pages are resident ("warm"
//                   reads come from memory, as the seed's pre-read files did);
//                   the caller records the fraction it got;
//   resident(path)  the fraction of the file's pages that are resident now;
//   device_read_bytes()  what this process has had read from the device so far.
// Each throws std::runtime_error naming the file when it cannot do or verify
// what was asked.
#pragma once

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace bench {
namespace page_cache {

struct Residency {
  long long pages = 0;
  long long resident = 0;
  double fraction() const { return pages ? static_cast<double>(resident) / static_cast<double>(pages) : 1.0; }
};

namespace detail {

class Fd {
 public:
  explicit Fd(const std::string &path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {
    if (fd_ < 0) throw std::runtime_error("cannot open " + path + ": " + std::strerror(errno));
  }
  ~Fd() { ::close(fd_); }
  Fd(const Fd &) = delete;
  Fd &operator=(const Fd &) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

inline long long file_size(int fd, const std::string &path) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw std::runtime_error("cannot stat " + path + ": " + std::strerror(errno));
  return static_cast<long long>(st.st_size);
}

inline Residency residency(int fd, const std::string &path) {
  Residency r;
  const long long size = file_size(fd, path);
  if (size == 0) return r;
  const long page = ::sysconf(_SC_PAGESIZE);
  r.pages = (size + page - 1) / page;
  void *map = ::mmap(nullptr, static_cast<std::size_t>(size), PROT_READ, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) throw std::runtime_error("cannot mmap " + path + ": " + std::strerror(errno));
  std::vector<unsigned char> flags(static_cast<std::size_t>(r.pages));
  const int status = ::mincore(map, static_cast<std::size_t>(size), flags.data());
  const int error = errno;
  ::munmap(map, static_cast<std::size_t>(size));
  if (status != 0) throw std::runtime_error("mincore failed on " + path + ": " + std::strerror(error));
  for (unsigned char f : flags) r.resident += f & 1;
  return r;
}

}  // namespace detail

inline Residency resident(const std::string &path) {
  detail::Fd fd(path);
  return detail::residency(fd.get(), path);
}

// Drops the file's pages from the page cache and checks that they are gone.
// Dirty pages cannot be dropped, so the file is synced first; a page that a
// concurrent reader brings back makes the check fail (and the caller retry).
// A file read just before (a calibrated sample's passes evict it between
// reads) can keep a few pages that DONTNEED skips while the kernel still
// holds them on a per-CPU list: each retry waits a little longer first (1,
// 2, 4 ... 64 ms, about 0.1 s in all, untimed), instead of failing the run.
inline Residency evict(const std::string &path, int attempts = 8) {
  detail::Fd fd(path);
  Residency r;
  for (int attempt = 0; attempt < attempts; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1 << (attempt - 1)));
    ::fdatasync(fd.get());  // allowed on a read-only descriptor; harmless if clean
    const int status = ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_DONTNEED);
    if (status != 0) throw std::runtime_error("posix_fadvise(DONTNEED) failed on " + path + ": " + std::strerror(status));
    r = detail::residency(fd.get(), path);
    if (r.resident == 0) return r;
  }
  throw std::runtime_error("cannot evict " + path + " from the page cache: " + std::to_string(r.resident) + " of " +
                           std::to_string(r.pages) + " pages still resident after posix_fadvise(DONTNEED)");
}

// The smallest resident fraction a warm file may have. These VMs evict a few
// pages of a file right after it was read (9315 of 9355 seen), so "every page"
// would fail at random; the threshold comes from the config key
// warm_min_resident, handed to every kernel in THROUGHPUT_WARM_MIN_RESIDENT.
inline double min_warm_fraction() {
  const char *text = std::getenv("THROUGHPUT_WARM_MIN_RESIDENT");
  if (!text || !*text) return 0.99;
  char *end = nullptr;
  const double value = std::strtod(text, &end);
  if (*end != '\0' || !(value > 0.0 && value <= 1.0))
    throw std::invalid_argument(std::string("THROUGHPUT_WARM_MIN_RESIDENT (config key warm_min_resident) must be a "
                                            "fraction in (0, 1], got '") + text + "'");
  return value;
}

// Reads the whole file (into the page cache) until at least min_warm_fraction()
// of its pages are resident, re-reading a few times when the kernel evicted
// some at once; returns the best residency seen. A file with every page
// already resident is only checked (mincore), not read again: a reader's
// calibrated sample warms its files before every pass, and reading them again
// would cost each pass more than the reading it times. Only a file that cannot
// be brought in that far is an error.
inline Residency warm(const std::string &path, int attempts = 5) {
  detail::Fd fd(path);
  const long long size = detail::file_size(fd.get(), path);
  const double needed = min_warm_fraction();
  const Residency already = detail::residency(fd.get(), path);
  if (already.resident == already.pages) return already;
  std::vector<char> buffer(1 << 20);
  Residency best;
  for (int attempt = 0; attempt < attempts; ++attempt) {
    ::posix_fadvise(fd.get(), 0, 0, POSIX_FADV_WILLNEED);
    long long done = 0;
    while (done < size) {
      const ssize_t got = ::pread(fd.get(), buffer.data(), buffer.size(), done);
      if (got < 0) throw std::runtime_error("cannot read " + path + ": " + std::strerror(errno));
      if (got == 0) break;
      done += got;
    }
    const Residency r = detail::residency(fd.get(), path);
    if (attempt == 0 || r.resident > best.resident) best = r;
    if (best.fraction() >= needed) return best;
  }
  throw std::runtime_error("cannot keep " + path + " in the page cache: at best " + std::to_string(best.resident) +
                           " of " + std::to_string(best.pages) + " pages resident after reading it " +
                           std::to_string(attempts) + " times, below warm_min_resident = " + std::to_string(needed) +
                           " (memory pressure?)");
}

// The bytes this process (all its threads) has had read from the storage device so far
// (/proc/self/io's read_bytes: what came from below the page cache, readahead included), or -1
// where the kernel does not say. The difference around a pass is what that pass took from the
// device, however few of a file's bytes it asked for.
inline long long device_read_bytes() {
  std::FILE *io = std::fopen("/proc/self/io", "r");
  if (!io) return -1;
  long long bytes = -1;
  char line[128];
  while (std::fgets(line, sizeof line, io))
    if (std::sscanf(line, "read_bytes: %lld", &bytes) == 1) break;
  std::fclose(io);
  return bytes;
}

// Brings every file to the state `mode` ("warm" or "cold"); returns the
// smallest resident fraction (warm: at least min_warm_fraction()) or the
// largest (cold: 0.0) seen.
inline double prepare(const std::vector<std::string> &paths, const std::string &mode) {
  if (mode != "warm" && mode != "cold")
    throw std::invalid_argument("cache mode must be 'warm' or 'cold', got '" + mode + "'");
  double extreme = mode == "warm" ? 1.0 : 0.0;
  for (const auto &path : paths) {
    const double f = (mode == "warm" ? warm(path) : evict(path)).fraction();
    extreme = mode == "warm" ? std::min(extreme, f) : std::max(extreme, f);
  }
  return extreme;
}

}  // namespace page_cache
}  // namespace bench

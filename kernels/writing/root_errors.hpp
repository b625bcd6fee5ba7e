// ROOT's error messages, which ROOT prints but does not throw (a write that
// fails on a full disk is only logged, often from a destructor), and what may
// explain a failed write. Header-only: write_bench and the dataset copier
// (kernels/datasets/tree_to_rntuple.cpp) share it.
#pragma once

#include <TError.h>

#include <sys/resource.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace writing {

// Records every message ROOT reports at Error level or above, so that a pass
// can fail with the first one. Also makes the process ignore SIGXFSZ, so
// that a file size limit turns into a failed write instead of a kill.
class RootErrors {
 public:
  static void install() {
    SetErrorHandler(record);
    std::signal(SIGXFSZ, SIG_IGN);
  }
  static void clear() {
    std::lock_guard<std::mutex> lock(state().mutex);
    state().errors.clear();
    state().first_system.clear();
  }
  static std::string first() {
    std::lock_guard<std::mutex> lock(state().mutex);
    return state().errors.empty() ? "" : state().errors.front();
  }
  // The first SysError (it carries the operating system's reason, e.g. "No space left on device"), or "".
  static std::string first_system() {
    std::lock_guard<std::mutex> lock(state().mutex);
    return state().first_system;
  }
  static void throw_if_any(const std::string &what) {
    const std::string message = first();
    if (!message.empty()) throw std::runtime_error("writing " + what + " failed: " + message);
  }

 private:
  struct State {
    std::mutex mutex;
    std::vector<std::string> errors;
    std::string first_system;
  };
  static State &state() {
    static State s;
    return s;
  }
  static void record(int level, Bool_t abort, const char *location, const char *message) {
    if (level >= kError) {
      std::lock_guard<std::mutex> lock(state().mutex);
      state().errors.push_back(std::string(location ? location : "ROOT") + ": " + (message ? message : ""));
      if (level == kSysError && state().first_system.empty()) state().first_system = state().errors.back();
    }
    DefaultErrorHandler(level, abort, location, message);
  }
};

// What may explain a failed write into `dir` ("": in memory), as " [...]"
// parts: ROOT's first error and first SysError, the free space left and the
// file size limit (a full disk and RLIMIT_FSIZE look alike to ROOT).
inline std::string describe_write_failure(const std::string &dir) {
  std::string text;
  const std::string root = RootErrors::first(), system = RootErrors::first_system();
  if (!root.empty()) text += " [ROOT: " + root + "]";
  if (!system.empty() && system != root) text += " [ROOT: " + system + "]";
  if (dir.empty()) return text;
  struct statvfs fs {};
  if (statvfs(dir.c_str(), &fs) == 0)
    text += " [" + std::to_string(static_cast<unsigned long long>(fs.f_bavail) * fs.f_frsize / 1000000) +
            " MB free in " + dir + "]";
  struct rlimit limit {};
  if (getrlimit(RLIMIT_FSIZE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
    text += " [file size limit " + std::to_string(static_cast<unsigned long long>(limit.rlim_cur)) + " bytes]";
  return text;
}

// Applies --max-file-bytes (RLIMIT_FSIZE; 0: unchanged), the tests' stand-in for a full disk.
inline void limit_file_size(long long max_bytes) {
  if (max_bytes <= 0) return;
  struct rlimit limit {};
  getrlimit(RLIMIT_FSIZE, &limit);
  limit.rlim_cur = static_cast<rlim_t>(max_bytes);
  if (limit.rlim_max != RLIM_INFINITY && limit.rlim_cur > limit.rlim_max) limit.rlim_cur = limit.rlim_max;
  if (setrlimit(RLIMIT_FSIZE, &limit) != 0)
    throw std::runtime_error(std::string("cannot set --max-file-bytes: ") + std::strerror(errno));
}

}  // namespace writing

// ROOT's error messages, which ROOT prints but does not throw: a basket that
// does not decompress ("R__unzip: error -3 in inflate"), a damaged key, a
// write that fails on a full disk (often from a destructor) are only logged,
// and ROOT goes on. One handler for every kernel that reads or writes ROOT
// files (the reader comparison's readers, rdf_bench, write_bench and the
// dataset copier): header-only, beside root_io.hpp.
//
// RootErrors::install() sets the handler. Every message is still printed by
// ROOT's own handler, as before; one at Error level or above (Error, Break,
// SysError, Fatal) is also recorded, the first since the last clear() kept,
// and the first SysError (it carries the operating system's reason, e.g. "No
// space left on device") apart. Info and Warning messages are only printed.
// A kernel then fails with the recorded message (exit 2 by bench::guarded_main):
//
//   check(context)        throws "<context>: ROOT reported an error: <first>" and clears
//   throw_if_any(what)    throws "writing <what> failed: <first>"
//   take()                the first message ("" if none), cleared
//   Throwing              while one lives, the handler also throws RootError itself
//                         (an RDataFrame event loop passes it on from any worker
//                         thread, instead of going on with garbage)
//
// For writers: limit_file_size (--max-file-bytes, the tests' full disk) and
// describe_write_failure (what may explain a failed write).
#pragma once

#include <TError.h>

#include <sys/resource.h>
#include <sys/statvfs.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>

namespace bench {

// Thrown by the handler while RootErrors::Throwing is alive.
struct RootError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class RootErrors {
 public:
  static void install() { SetErrorHandler(record); }
  static void clear() {
    std::lock_guard<std::mutex> lock(state().mutex);
    state().first.clear();
    state().first_system.clear();
  }
  static std::string first() {
    std::lock_guard<std::mutex> lock(state().mutex);
    return state().first;
  }
  static std::string first_system() {
    std::lock_guard<std::mutex> lock(state().mutex);
    return state().first_system;
  }
  static std::string take() {
    std::lock_guard<std::mutex> lock(state().mutex);
    std::string message;
    message.swap(state().first);
    state().first_system.clear();
    return message;
  }
  static void check(const std::string &context) {
    const std::string message = take();
    if (!message.empty()) throw std::runtime_error(context + ": ROOT reported an error: " + message);
  }
  static void throw_if_any(const std::string &what) {
    const std::string message = first();
    if (!message.empty()) throw std::runtime_error("writing " + what + " failed: " + message);
  }
  // The handler throws RootError while one lives (or until stop_throwing()).
  struct Throwing {
    Throwing() { state().throwing = true; }
    ~Throwing() { stop_throwing(); }
    Throwing(const Throwing &) = delete;
    Throwing &operator=(const Throwing &) = delete;
  };
  static void stop_throwing() { state().throwing = false; }

 private:
  struct State {
    std::mutex mutex;
    std::string first, first_system;
    std::atomic<bool> throwing{false};
  };
  static State &state() {
    static State s;
    return s;
  }
  static void record(int level, Bool_t abort, const char *location, const char *message) {
    DefaultErrorHandler(level, abort, location, message);
    if (level < kError) return;
    const std::string text = std::string(location ? location : "ROOT") + ": " + (message ? message : "");
    {
      std::lock_guard<std::mutex> lock(state().mutex);
      if (state().first.empty()) state().first = text;
      if (level == kSysError && state().first_system.empty()) state().first_system = text;
    }
    if (state().throwing) throw RootError(text);
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

// For a writer: applies --max-file-bytes (RLIMIT_FSIZE; 0: unchanged), the tests'
// stand-in for a full disk, and makes the process ignore SIGXFSZ, so that a file
// size limit (this one or one inherited) turns into a failed write instead of a kill.
inline void limit_file_size(long long max_bytes) {
  std::signal(SIGXFSZ, SIG_IGN);
  if (max_bytes <= 0) return;
  struct rlimit limit {};
  getrlimit(RLIMIT_FSIZE, &limit);
  limit.rlim_cur = static_cast<rlim_t>(max_bytes);
  if (limit.rlim_max != RLIM_INFINITY && limit.rlim_cur > limit.rlim_max) limit.rlim_cur = limit.rlim_max;
  if (setrlimit(RLIMIT_FSIZE, &limit) != 0)
    throw std::runtime_error(std::string("cannot set --max-file-bytes: ") + std::strerror(errno));
}

}  // namespace bench

// What every reader of the reader comparison shares (the C++ readers here, and
// by the same definitions the Python and Java readers):
//
// * the checksum: the sum, modulo 2^64, of mix(bits) over every value read,
//   where bits is the value's bit pattern in its own type (float32 or 64,
//   two's-complement integers of 8 to 64 bits, bool as 0 or 1), zero-extended
//   to 64 bits, and
//       mix(b) = h ^ (h >> 32),  h = (b + 1) * 0x9E3779B97F4A7C15  (mod 2^64).
//   It is exact, independent of the order of reading, and changes when any
//   single value changes; it is printed as 16 hex digits;
// * a Pass: one timed read of one branch over all files, with the rate
//   sampled every `sample_every` items and at the end (for the rate-vs-time
//   figure);
// * the cache state of each file before it is read (warm: pre-read and
//   checked resident; cold: evicted and checked absent), prepared outside the
//   timed region;
// * ROOT's error messages turned into a failure that names file and branch
//   (common/root_errors.hpp: the C++ readers call RootErrors::check after each file).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "bench.hpp"
#include "page_cache.hpp"

namespace rc {

constexpr std::uint64_t kGolden = 0x9E3779B97F4A7C15ULL;

inline std::uint64_t mix(std::uint64_t bits) {
  const std::uint64_t h = (bits + 1) * kGolden;
  return h ^ (h >> 32);
}

// The unsigned integer as wide as T, to carry T's bit pattern.
template <std::size_t Size>
struct Unsigned;
template <>
struct Unsigned<1> { using type = std::uint8_t; };
template <>
struct Unsigned<2> { using type = std::uint16_t; };
template <>
struct Unsigned<4> { using type = std::uint32_t; };
template <>
struct Unsigned<8> { using type = std::uint64_t; };
template <class T>
using BitsOf = typename Unsigned<sizeof(T)>::type;

template <class T>
inline std::uint64_t bits_of(T v) {
  static_assert(std::is_arithmetic_v<T>, "the readers compare numeric values");
  BitsOf<T> b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// A big-endian value of T's width, as ROOT stores it in a basket, as T's bit pattern.
template <class T>
inline std::uint64_t bits_of_big_endian(const char *p) {
  BitsOf<T> b;
  std::memcpy(&b, p, sizeof b);
  if constexpr (sizeof b == 2) b = __builtin_bswap16(b);
  if constexpr (sizeof b == 4) b = __builtin_bswap32(b);
  if constexpr (sizeof b == 8) b = __builtin_bswap64(b);
  return b;
}

inline std::string hex(std::uint64_t v) {
  char text[24];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(v));
  return text;
}

// --- cache state -------------------------------------------------------------------------------
// warm: each file is read completely and checked resident just before it is
// opened (the time this takes is measured and left out of the pass); cold:
// every file of the pass is evicted, and checked, before the pass starts.
class CachePrep {
 public:
  explicit CachePrep(std::string mode) : mode_(std::move(mode)) {
    if (mode_ != "warm" && mode_ != "cold")
      throw std::invalid_argument("--cache must be 'warm' or 'cold', got '" + mode_ + "'");
  }
  const std::string &mode() const { return mode_; }
  void start_pass(const std::vector<std::string> &files) {
    wall_ = cpu_ = 0;
    extreme_ = mode_ == "warm" ? 1.0 : 0.0;
    // Before the pass's clock starts, so nothing to subtract.
    if (mode_ == "cold")
      for (const auto &f : files) extreme_ = std::max(extreme_, bench::page_cache::evict(f).fraction());
  }
  void before_file(const std::string &file) {
    if (mode_ == "warm") timed([&] { extreme_ = std::min(extreme_, bench::page_cache::warm(file).fraction()); });
  }
  double wall() const { return wall_; }
  double cpu() const { return cpu_; }
  // warm: the smallest resident fraction seen (1.0); cold: the largest (0.0).
  double residency() const { return extreme_; }

 private:
  template <class F>
  void timed(F &&f) {
    const bench::Timing t = bench::time_it(f);
    wall_ += t.wall_s;
    cpu_ += t.cpu_s;
  }
  std::string mode_;
  double wall_ = 0, cpu_ = 0, extreme_ = 1.0;
};

// --- one pass ----------------------------------------------------------------------------------
struct Sample {
  long long items, events;
  double wall_s;
};

class Pass {
 public:
  Pass(long long sample_every, CachePrep &prep) : every_(sample_every), next_(sample_every), prep_(prep) {}

  void start() {
    wall0_ = bench::wall_seconds();
    cpu0_ = bench::cpu_seconds();
  }
  void stop() {
    wall_ = bench::wall_seconds() - wall0_ - prep_.wall();
    cpu_ = bench::cpu_seconds() - cpu0_ - prep_.cpu();
    if (samples_.empty() || samples_.back().items != items_) samples_.push_back({items_, events_, wall_});
  }
  // Seconds since start(), cache preparation left out.
  double elapsed() const { return bench::wall_seconds() - wall0_ - prep_.wall(); }

  template <class T>
  inline void value(T v) {
    checksum_ += mix(bits_of(v));
    ++items_;
  }
  template <class T>
  inline void values(const T *v, long long n) {
    for (long long j = 0; j < n; ++j) checksum_ += mix(bits_of(v[j]));
    items_ += n;
    end_events(1);
  }
  // Big-endian values of type T as they lie in a basket (ROOT's bulk I/O: one event's;
  // a whole basket: its `events`).
  template <class T>
  inline void values_big_endian(const char *p, long long n, long long events = 1) {
    for (long long j = 0; j < n; ++j) checksum_ += mix(bits_of_big_endian<T>(p + sizeof(T) * j));
    items_ += n;
    end_events(events);
  }
  inline void end_events(long long n) {
    events_ += n;
    if (items_ >= next_) sample();
  }
  // One file opened in `seconds`, left out of the reading time (every method
  // reports each file it opens: files_opened checks that).
  void opened(double seconds) {
    open_s_ += seconds;
    ++files_opened_;
  }

  // Seconds spent in the checksum, for a method that times it apart (the baskets
  // limit, per basket); -1 where the method does not.
  void add_checksum_seconds(double seconds) { checksum_s_ = std::max(checksum_s_, 0.0) + seconds; }
  double checksum_s() const { return checksum_s_; }
  // Rate samples taken during the pass (each one clock read), the final one left out.
  long long samples_taken() const { return samples_taken_; }

  long long items() const { return items_; }
  long long events() const { return events_; }
  std::uint64_t checksum() const { return checksum_; }
  void corrupt() { checksum_ ^= 1; }  // --corrupt-for-test: a deliberately wrong reader
  double wall() const { return wall_; }
  double cpu() const { return cpu_; }
  double open_s() const { return open_s_; }
  long long files_opened() const { return files_opened_; }
  const std::vector<Sample> &samples() const { return samples_; }

 private:
  void sample() {
    ++samples_taken_;
    samples_.push_back({items_, events_, bench::wall_seconds() - wall0_ - prep_.wall()});
    while (next_ <= items_) next_ += every_;
  }
  long long every_, next_;
  CachePrep &prep_;
  std::uint64_t checksum_ = 0;
  long long items_ = 0, events_ = 0, files_opened_ = 0, samples_taken_ = 0;
  double checksum_s_ = -1;
  double wall0_ = 0, cpu0_ = 0, wall_ = 0, cpu_ = 0, open_s_ = 0;
  std::vector<Sample> samples_;
};

// "a,b,c" -> {"a", "b", "c"}; an empty element is an error naming the option.
inline std::vector<std::string> split_list(const std::string &text, const std::string &option) {
  std::vector<std::string> items;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = text.find(',', start);
    const std::string item = text.substr(start, end == std::string::npos ? std::string::npos : end - start);
    if (item.empty()) throw std::invalid_argument("--" + option + " has an empty element: '" + text + "'");
    items.push_back(item);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return items;
}

}  // namespace rc

// R_IO of the I/O rate model (seed 004): the pure I/O rate, reading the bytes
// of the input files with read() in large blocks, nothing decoded. With
// --cache cold every file is dropped from the page cache first (per file,
// posix_fadvise DONTNEED, checked with mincore; outside the timed region), so
// the bytes come from the device; with --cache warm every file is read and
// checked resident first, so they come from memory.
//
// A 64-bit word sum of the bytes proves they were read; it must be the same in
// every repetition, cold or warm. The bytes read from each file must be its
// size (the rate R_IO is file bytes over time): a file that reads short or
// long is an error naming it.
//
// Each timed pass records how long this process waited for a CPU during it (run_delay_s); with
// --max-run-delay-share above 0, a pass that waited longer than that share of its wall time is
// taken again, at most --max-sample-retakes times (sample_retakes). Every take first sets its
// cache state afresh (cold: evicted again and checked), so it reads what the pass it replaces
// read, from where that pass read it; every take's bytes and sum are checked.
//
// A timed sample is as many passes as reach --min-sample-s of reading (bench::Calibration, from
// the last warm-up pass; `loops` in its record): a warm pass of a few ms is otherwise one timer
// tick away from another rate. Each pass sets its cache state afresh, untimed; wall_s, cpu_s and
// run_delay_s add up the passes' reading alone, and `bytes` is one pass's (every pass checked).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <vector>

#include "bench.hpp"
#include "file_list.hpp"
#include "page_cache.hpp"
#include "timing_record.hpp"

namespace {

struct Read {
  long long bytes = 0;
  std::uint64_t sum = 0;
};

// O_DIRECT needs the buffer, the read size and the file offset aligned to the
// device's logical block: 4096 bytes covers every common device.
constexpr std::size_t kDirectAlignment = 4096;

struct Buffer {
  std::uint64_t *words = nullptr;
  std::size_t capacity = 0;  // bytes, a multiple of kDirectAlignment
  explicit Buffer(std::size_t bytes)
      : capacity((std::max<std::size_t>(bytes, kDirectAlignment) + kDirectAlignment - 1) / kDirectAlignment *
                 kDirectAlignment) {
    // one spare word: a partial last word is zero-padded past the bytes read
    words = static_cast<std::uint64_t *>(std::aligned_alloc(kDirectAlignment, capacity + kDirectAlignment));
    if (!words) throw std::bad_alloc();
  }
  ~Buffer() { std::free(words); }
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;
};

Read read_file(const std::string &path, Buffer &buffer, bool direct) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (direct ? O_DIRECT : 0));
  if (fd < 0) {
    const int error = errno;
    if (direct && error == EINVAL)
      throw std::runtime_error("cannot open " + path + " with O_DIRECT: its file system does not support it");
    throw std::runtime_error("cannot open " + path + ": " + std::strerror(error));
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int error = errno;
    ::close(fd);
    throw std::runtime_error("cannot stat " + path + ": " + std::strerror(error));
  }
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  Read r;
  auto *bytes = reinterpret_cast<char *>(buffer.words);
  for (;;) {
    const ssize_t got = ::read(fd, bytes, buffer.capacity);
    if (got < 0) {
      const int error = errno;
      ::close(fd);
      throw std::runtime_error("cannot read " + path + ": " + std::strerror(error));
    }
    if (got == 0) break;
    // Zero the tail of a partial last word so the sum only sees file bytes.
    const std::size_t words = (static_cast<std::size_t>(got) + 7) / 8;
    std::memset(bytes + got, 0, words * 8 - static_cast<std::size_t>(got));
    std::uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    std::size_t i = 0;
    for (; i + 4 <= words; i += 4) {
      s0 += buffer.words[i];
      s1 += buffer.words[i + 1];
      s2 += buffer.words[i + 2];
      s3 += buffer.words[i + 3];
    }
    for (; i < words; ++i) s0 += buffer.words[i];
    r.sum += s0 + s1 + s2 + s3;
    r.bytes += got;
  }
  ::close(fd);
  if (r.bytes != static_cast<long long>(st.st_size))
    throw std::runtime_error("read " + std::to_string(r.bytes) + " bytes from " + path + ", its size is " +
                             std::to_string(static_cast<long long>(st.st_size)) +
                             " bytes (changed while read, or not a regular file?)");
  return r;
}

}  // namespace

int main(int argc, char **argv) {
  return bench::guarded_main("rdf_raw_read", argc, argv,
      bench::with_retake_options({{"file-list", ""}, {"cache", "cold"}, {"reps", "5"}, {"warmup", "1"},
      {"block-bytes", "4194304"}, {"min-sample-s", "0"}, {"max-sample-s", "0"}}), [&](const bench::Options &opt) {
    const std::string cache = opt.str("cache");
    if (cache != "cold" && cache != "warm" && cache != "direct")
      throw std::invalid_argument("--cache must be cold, warm or direct, got '" + cache + "'");
    const bool direct = cache == "direct";
    const auto files = bench::read_lines(opt.str("file-list"), "file-list");
    const long long reps = opt.integer("reps", 1), warmup = opt.integer("warmup", 0);
    Buffer buffer(static_cast<std::size_t>(opt.integer("block-bytes", 4096)));
    const bench::Retakes retakes = bench::retakes_from(opt);
    bench::Calibration calibration(warmup, opt.seconds("min-sample-s", 60), opt.seconds("max-sample-s", 600));

    std::uint64_t first_sum = 0;
    long long first_bytes = -1;
    bool same = true;
    for (long long rep = 0; rep < warmup + reps; ++rep) {
      double resident = 0;
      Read total;
      const long long loops = calibration.loops(rep);
      const auto [t, sample_retakes] = bench::take_retaking(retakes, rep >= warmup, 1, [&] {
        bench::DelayedTiming sample{0, 0, 0};
        for (long long pass = 0; pass < loops; ++pass) {
          // untimed, checked; the sample's resident share is its first pass's
          const double here = bench::page_cache::prepare(files, direct ? "cold" : cache);
          if (pass == 0) resident = here;
          total = Read{};
          const bench::DelayedTiming timing = bench::time_delayed([&] {
            for (const auto &path : files) {
              const Read r = read_file(path, buffer, direct);
              total.bytes += r.bytes;
              total.sum += r.sum;
            }
          });
          if (first_bytes < 0) {
            first_bytes = total.bytes;
            first_sum = total.sum;
          }
          same = same && total.bytes == first_bytes && total.sum == first_sum;
          sample += timing;
        }
        return sample;
      });
      calibration.update(rep, loops, t.wall_s, t.wall_s);
      bench::JsonLine record;
      record.add("record", "timing").add("kernel", "rdf_raw_read").add("cache", cache).add("resident_before", resident);
      bench::add_sample_fields(record, rep, warmup, t, sample_retakes)
          .add("loops", loops)
          .add("bytes", total.bytes)
          .add("files", static_cast<long long>(files.size()))
          .print();
    }
    bench::JsonLine()
        .add("record", "validation")
        .add("ok", same)
        .add("bytes", first_bytes)
        .add("checksum", static_cast<double>(first_sum % (1ULL << 52)))
        .print();
    if (!same) {
      std::fprintf(stderr, "rdf_raw_read: the bytes read differ between repetitions\n");
      return 3;
    }
    return 0;
  });
}

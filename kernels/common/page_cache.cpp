// Brings files to a page-cache state, and checks it (page_cache.hpp), for every experiment:
//   page_cache --mode warm|cold|status (--files a,b,... | --file-list LIST)
// warm: read each file, then at least warm_min_resident of its pages must be resident;
// cold: posix_fadvise(DONTNEED) on each file, then mincore() must find none resident;
// status: only report. Never touches other files' pages (no drop_caches). One "file"
// record per file and one validation record (pages and resident pages in all); a file
// that cannot be brought to the state asked for is an error naming it (exit 2). The
// experiments' Python sides and the Java readers call it, so "warm" and "cold" mean
// the same everywhere.
#include <algorithm>
#include <string>
#include <vector>

#include "bench.hpp"
#include "file_list.hpp"
#include "page_cache.hpp"

namespace {

// The files named by --files (comma-separated) or --file-list (one per line), exactly one of them.
std::vector<std::string> files_of(const bench::Options &opt) {
  const std::string list = opt.str("files"), listing = opt.str("file-list");
  if (list.empty() == listing.empty())
    throw std::invalid_argument("give the files by exactly one of --files (comma-separated) and --file-list");
  if (!listing.empty()) return bench::read_lines(listing, "file-list");
  std::vector<std::string> files;
  for (std::size_t start = 0;;) {
    const std::size_t end = list.find(',', start);
    files.push_back(list.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (files.back().empty()) throw std::invalid_argument("--files has an empty element: '" + list + "'");
    if (end == std::string::npos) return files;
    start = end + 1;
  }
}

}  // namespace

int main(int argc, char **argv) {
  return bench::guarded_main("page_cache", argc, argv, {{"mode", "status"}, {"files", ""}, {"file-list", ""}},
                             [&](const bench::Options &opt) {
    const std::string mode = opt.str("mode");
    if (mode != "warm" && mode != "cold" && mode != "status")
      throw std::invalid_argument("--mode must be warm, cold or status, got '" + mode + "'");
    const std::vector<std::string> files = files_of(opt);
    double lowest = 1.0, highest = 0.0;
    long long pages = 0, resident = 0;
    for (const auto &file : files) {
      namespace pc = bench::page_cache;
      const pc::Residency r = mode == "warm" ? pc::warm(file) : mode == "cold" ? pc::evict(file) : pc::resident(file);
      lowest = std::min(lowest, r.fraction());
      highest = std::max(highest, r.fraction());
      pages += r.pages;
      resident += r.resident;
      bench::JsonLine()
          .add("record", "file")
          .add("path", file)
          .add("pages", r.pages)
          .add("resident", r.resident)
          .add("fraction", r.fraction())
          .print();
    }
    bench::JsonLine()
        .add("record", "validation")
        .add("ok", true)
        .add("mode", mode)
        .add("files", static_cast<long long>(files.size()))
        .add("pages", pages)
        .add("resident", resident)
        .add("lowest_fraction", lowest)
        .add("highest_fraction", highest)
        .add("checksum", mode == "warm" ? lowest : highest)
        .print();
    return 0;
  });
}

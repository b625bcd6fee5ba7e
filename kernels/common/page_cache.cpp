// Brings files to a page-cache state, and checks it (kernels/common/page_cache.hpp):
//   page_cache --mode warm|cold|status --files a,b,...
// warm: read each file and check that all its pages are resident; cold:
// posix_fadvise(DONTNEED) on each file and check that none is; status: only
// report. One "file" record per file and one validation record; a file that
// cannot be brought to the state asked for is an error naming it (exit 2).
// The Python and Java readers call it, so every reader uses the same code.
#include <string>
#include <vector>

#include "bench.hpp"
#include "page_cache.hpp"

int main(int argc, char **argv) {
  return bench::guarded_main("page_cache", argc, argv,
      {{"mode", "status"}, {"files", ""}}, [&](const bench::Options &opt) {
    const std::string mode = opt.str("mode"), list = opt.str("files");
    if (mode != "warm" && mode != "cold" && mode != "status")
      throw std::invalid_argument("--mode must be warm, cold or status, got '" + mode + "'");
    if (list.empty()) throw std::invalid_argument("--files is required (comma-separated paths)");
    std::vector<std::string> files;
    for (std::size_t start = 0;;) {
      const std::size_t end = list.find(',', start);
      files.push_back(list.substr(start, end == std::string::npos ? std::string::npos : end - start));
      if (end == std::string::npos) break;
      start = end + 1;
    }
    double lowest = 1.0, highest = 0.0;
    long long pages = 0;
    for (const auto &file : files) {
      if (file.empty()) throw std::invalid_argument("--files has an empty element: '" + list + "'");
      const auto r = mode == "warm"   ? bench::page_cache::warm(file)
                     : mode == "cold" ? bench::page_cache::evict(file)
                                      : bench::page_cache::resident(file);
      lowest = std::min(lowest, r.fraction());
      highest = std::max(highest, r.fraction());
      pages += r.pages;
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
        .add("lowest_fraction", lowest)
        .add("highest_fraction", highest)
        .add("checksum", mode == "warm" ? lowest : highest)
        .print();
    return 0;
  });
}

// Puts the input files of the I/O rate model into a known page-cache state,
// per file and checked (seed 004 cleared the cache with posix_fadvise too):
//   --action cold   posix_fadvise(POSIX_FADV_DONTNEED) on each file, then
//                   mincore() must find none of its pages resident;
//   --action warm   reads each file, then at least warm_min_resident of its
//                   pages must be resident;
//   --action check  only reports the resident fraction of each file.
// Never touches other files' pages (no drop_caches). A file that cannot be
// brought to the state asked is an error naming it (exit 2).
#include <algorithm>

#include "bench.hpp"
#include "file_list.hpp"
#include "page_cache.hpp"

int main(int argc, char **argv) {
  return bench::guarded_main("rdf_page_cache", argc, argv,
      {{"file-list", ""}, {"action", "check"}}, [&](const bench::Options &opt) {
    const std::string action = opt.str("action");
    if (action != "cold" && action != "warm" && action != "check")
      throw std::invalid_argument("--action must be cold, warm or check, got '" + action + "'");
    const auto files = rdfx::read_lines(opt.str("file-list"), "file-list");
    long long pages = 0, resident = 0;
    for (const auto &path : files) {
      namespace pc = bench::page_cache;
      const pc::Residency r = action == "cold" ? pc::evict(path) : action == "warm" ? pc::warm(path) : pc::resident(path);
      pages += r.pages;
      resident += r.resident;
      bench::JsonLine().add("record", "file").add("path", path).add("pages", r.pages).add("resident", r.resident).print();
    }
    // warm() itself throws when a file stays below warm_min_resident.
    const bool ok = action != "cold" || resident == 0;
    bench::JsonLine()
        .add("record", "validation")
        .add("ok", ok)
        .add("action", action)
        .add("files", static_cast<long long>(files.size()))
        .add("pages", pages)
        .add("resident", resident)
        .add("checksum", static_cast<double>(resident))
        .print();
    return ok ? 0 : 3;
  });
}

// Reads a file of the simple per-event format (simple_format.hpp) on its own,
// with nothing but the file: checks its header, every record's sizes and
// decompression, that every event parses to exactly its columns, that event
// numbers are unique and that the trailer's count matches; prints the number
// of events and the same column checksum write_bench reports for what it wrote.
#include <lz4.h>

#include "bench.hpp"
#include "simple_format.hpp"

int main(int argc, char **argv) {
  return bench::guarded_main("read_simple", argc, argv, {{"input", ""}}, [&](const bench::Options &opt) {
    const std::string input = opt.str("input");
    if (input.empty()) throw std::invalid_argument("--input is required");
    double wall = 0;
    writing::simple::ReadResult result;
    const bench::Timing t = bench::time_it([&] { result = writing::simple::read_file(input, nullptr); });
    wall = t.wall_s;
    bench::JsonLine()
        .add("record", "validation")
        .add("kernel", "read_simple")
        .add("ok", true)
        .add("events", static_cast<long long>(result.records))
        .add("columns", static_cast<long long>(result.schema.columns.size()))
        .add("checksum", result.checksums.digest())
        .add("wall_s", wall)
        .add("lz4_version", LZ4_versionString())
        .print();
    return 0;
  });
}

// The writing experiment's benchmark (seeds 001 and 003): writes a workload
// with one of four writers to one medium, `warmup` + `reps` times, and reads
// the first and the last pass's output back.
//
//   --workload random   seed 003: --mb MB of uniform random doubles in
//                       --random-branches double branches (tree "random")
//   --workload events   seed 001: NanoAOD-like events from --inputs (the
//                       --branches globs), loaded into memory before any
//                       timing, --events of them written (tree "Events")
//   --workload objects  seed 001's data products: the flat AOD-like file's
//                       events (--inputs) built into std::vector<aod::Type>
//                       products before any timing (aod_products.hpp); written
//                       by root_imt (split product branches), simple_root (ROOT
//                       serialization) or simple (the flat columns' values)
//   --method NAME       a writer of the table of methods (writers.hpp, methods());
//                       --list-methods prints the table as JSON lines and exits
//   --medium disk | tmpfs | memory | slow, --dir DIR       (media.hpp)
//
// A pass is timed from opening the output to closing it (and, with --fsync 1,
// fsync-ing it: the data is on the device); its peak resident memory is
// measured beside. Untimed, the output of the process's first pass (the warm-up's: whatever a
// writer sets up on first use) and of its last (after every other) is then read back and every
// column's checksum and the entry count compared with those of the entries written; a
// difference fails the run (exit 3). The passes between write the same entries with the same
// code; reading each of them back too cost a fifth of the writing notebook's time (measured
// 2026-12-01, default config, quiet 2-core machine: 131 s of 679 s of passes). --read-back every reads every pass's
// output back (the kernel tests do). The closing record counts the passes read back
// (passes_checked) and written (passes_written). The warm-up passes are one per sample;
// each repetition is then one sample of as many passes as reach --min-sample-s
// of writing (bench::Calibration), its record giving the passes (`loops`), their
// summed write time (wall_s, cpu_s) and read-back time (read_s), the largest peak
// memory and the last pass's file size, and for the TTree writers the bytes of its
// baskets read back from that file (basket_bytes, TTree::GetZipBytes; -1 for the others).
// A sample whose writers waited on a run queue for a CPU longer than
// --max-run-delay-share of it is written again, at most --max-sample-retakes times
// (bench::Retakes; its record's run_delay_s and sample_retakes). A record of a sample that read an
// output back carries what its last read-back found (checksum: the digest, column_checksums: every
// column's sum, read_entries; the others: "" and -1), so that the writers can be compared on what
// they produced, and for simple_root how many events had their products
// serialized by more than one thread (events_split; -1 for the other
// methods); the closing record adds the source's digest
// (source_checksum). Any error (an unwritable directory, a full disk or a
// file size limit, an unknown compression) names what failed, removes the
// partial file and exits 2.
#include <ROOT/RNTupleParallelWriter.hxx>
#include <TROOT.h>
#include <lz4.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <thread>

#include "aod_products.hpp"
#include "bench.hpp"
#include "media.hpp"
#include "root_formats.hpp"
#include "root_io.hpp"
#include "simple_format.hpp"
#include "writers.hpp"

using namespace writing;

namespace {

std::vector<std::string> split(const std::string &text) {
  std::vector<std::string> parts;
  std::stringstream stream(text);
  std::string part;
  while (std::getline(stream, part, ','))
    if (!part.empty()) parts.push_back(part);
  return parts;
}

std::string describe_failure(const Output &out) {
  return bench::describe_write_failure(out.medium().in_memory() ? "" : out.medium().dir);
}

}  // namespace

int main(int argc, char **argv) {
  return bench::guarded_main("write_bench", argc, argv,
      bench::with_retake_options({{"workload", "random"}, {"method", "tbuffermerger"}, {"threads", "1"}, {"mb", "16"},
                                  {"random-branches", "1"}, {"seed", "1"}, {"inputs", ""}, {"tree", "Events"},
                                  {"branches", "*"}, {"events", "1000"}, {"compression", "LZ4"}, {"level", "4"},
                                  {"flush-mb", "32"}, {"medium", "tmpfs"}, {"dir", "/dev/shm"}, {"slow-mb-s", "100"},
                                  {"fsync", "1"}, {"reps", "3"}, {"warmup", "1"}, {"min-sample-s", "0"},
                                  {"max-file-bytes", "0"}, {"keep", "0"}, {"corrupt-for-test", "0"},
                                  {"read-back", "first-last"}}),
      {"list-methods"}, [&](const bench::Options &opt) {
    if (opt.flag("list-methods")) {
      for (const Method &m : methods())
        bench::JsonLine()
            .add("record", "method")
            .add("name", m.name)
            .add("format", format_name(m.format))
            .add("flat", m.flat)
            .add("products", m.products)
            .add("imt", m.imt)
            .add("help", m.help)
            .print();
      return 0;
    }
    // Every option is checked before any work starts.
    const std::string workload = opt.str("workload");
    if (workload != "random" && workload != "events" && workload != "objects")
      throw std::invalid_argument("unknown --workload '" + workload + "' (random, events, objects)");
    const Method &method = method_named(opt.str("method"));
    const bool objects = workload == "objects", simple_format = method.format == Format::Simple;
    if (objects && !method.products)
      throw std::invalid_argument(std::string("--method ") + method.name + " cannot write data products (" +
                                  method_names([](const Method &m) { return m.products; }) + ")");
    if (!objects && !method.flat)
      throw std::invalid_argument(std::string("--method ") + method.name +
                                  " serializes data products: it needs --workload objects");
    WriteSettings s;
    s.threads = static_cast<int>(opt.integer("threads", 1));
    s.compression = opt.str("compression");
    s.level = s.compression == "none" ? 0 : static_cast<int>(opt.integer("level", 1));
    s.root_settings = bench::compression_settings(s.compression, s.level);  // names an unknown compression
    if (simple_format) simple::codec_from_name(s.compression);
    s.products = objects;
    s.flush_bytes = static_cast<long long>(opt.real("flush-mb") * 1e6);
    if (s.flush_bytes != 0 && s.flush_bytes < 100000)
      throw std::invalid_argument("--flush-mb must be 0 (each format's default) or >= 0.1");
    const long long reps = opt.integer("reps", 1), warmup = opt.integer("warmup", 0);
    const double min_sample_s = opt.seconds("min-sample-s", 60);
    const std::string read_back_which = opt.str("read-back");
    if (read_back_which != "first-last" && read_back_which != "every")
      throw std::invalid_argument("--read-back: '" + read_back_which + "' is neither first-last nor every");
    bench::Retakes retakes = bench::retakes_from(opt);
    const Medium medium = Medium::from_options(opt);
    bench::limit_file_size(opt.integer("max-file-bytes", 0));
    bench::RootErrors::install();

    ROOT::EnableThreadSafety();
    if (method.imt && s.threads > 1) {
      ROOT::EnableImplicitMT(static_cast<UInt_t>(s.threads));
      if (ROOT::GetThreadPoolSize() != static_cast<UInt_t>(s.threads))
        throw std::runtime_error("asked ROOT for " + std::to_string(s.threads) + " IMT threads, got " +
                                 std::to_string(ROOT::GetThreadPoolSize()));
    }

    // The entries, in memory or made on the fly; never timed.
    std::unique_ptr<EntrySource> source;
    std::uint64_t loaded = 0;
    const bench::Timing load = bench::time_it([&] {
      if (workload == "random") {
        s.tree_name = "random";
        const double mb = opt.real("mb");
        const int columns = static_cast<int>(opt.integer("random-branches", 1));
        if (!(mb > 0)) throw std::invalid_argument("--mb must be > 0");
        const auto entries = static_cast<std::uint64_t>(std::ceil(mb * 1e6 / (8.0 * columns)));
        source = std::make_unique<RandomSource>(entries, columns, static_cast<std::uint64_t>(opt.integer("seed", 0)));
      } else {
        s.tree_name = "Events";
        const auto events = static_cast<std::uint64_t>(opt.integer("events", 1));
        auto store = std::make_unique<EventStore>(split(opt.str("inputs")), opt.str("tree"), split(opt.str("branches")),
                                                  events, events);
        loaded = store->loaded();
        if (objects) source = std::make_unique<ProductStore>(std::move(store));
        else source = std::move(store);
      }
    });
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    // ROOT + IMT's main thread fills while its pool compresses: with more busy threads than
    // cores they wait for each other's CPUs, and a sample's run delay no longer tells a
    // disturbance by something else; such samples are not taken again.
    const int busy_threads = method.imt && s.threads > 1 ? s.threads + 1 : s.threads;
    if (busy_threads > cores) retakes.max_retakes = 0;
    const std::uint64_t n = source->entries();
    const Expected expected = expected_checksums(*source, n, cores);
    const long long baseline_rss = PeakRss::status_bytes("VmRSS");  // entries loaded, nothing written yet
    const std::uint64_t to_write = n - static_cast<std::uint64_t>(opt.integer("corrupt-for-test", 0) ? 1 : 0);

    long long events_split = -1;  // simple_root: events whose products more than one thread serialized
    auto write = [&](Output &out) {
      events_split = method.write(out, *source, to_write, s);
      if (!medium.in_memory() && medium.fsync) sync_file(out.write_path());
    };

    const std::string stem = "write_bench_" + std::string(method.name) + "_" + std::to_string(getpid()) + file_suffix(method);
    const bool keep = opt.integer("keep", 0) != 0;
    std::string kept;
    Checksums last_read;  // what the last pass read back from its output
    long long passes = 0, passes_written = 0;  // read back, and written
    bench::Calibration calibration(warmup, min_sample_s);
    for (long long rep = 0; rep < warmup + reps; ++rep) {
      // One sample: as many passes as the calibration says reach --min-sample-s of writing,
      // each to a fresh output, timed alone and, the first and the last, read back (untimed).
      const long long loops = calibration.loops(rep);
      bench::Timing written{0, 0};
      double read_s = 0, run_delay_s = 0;
      bool sample_read = false;  // whether this sample read an output back (its record says what)
      PeakRss::Result memory{-1, -1, ""};
      std::uint64_t file_bytes = 0;
      long long basket_bytes = -1, sample_retakes = 0;
      // A sample during which the writers waited too long for a CPU is written again
      // (bench::Retakes): every pass rewrites its output, so a retake measures the same thing.
      for (;; ++sample_retakes) {
        written = {0, 0};
        read_s = 0;
        run_delay_s = 0;
        sample_read = false;
        for (long long pass = 0; pass < loops; ++pass) {
          Output out(medium, stem);
          bench::RootErrors::clear();
          PeakRss rss;
          rss.start();
          // Threads a writer starts and ends within the pass take their delay with them
          // (bench::run_delay_since): for those the delay is a lower bound.
          const auto delays_before = bench::thread_run_delays();
          const bench::Timing t = bench::time_it([&] {
            try {
              write(out);
            } catch (const std::exception &e) {
              throw std::runtime_error("writing " + out.where() + " failed: " + e.what() + describe_failure(out));
            }
          });
          const double delay = bench::run_delay_since(delays_before);
          run_delay_s = run_delay_s < 0 || delay < 0 ? -1 : run_delay_s + delay;
          const PeakRss::Result this_pass = rss.stop();
          if (!bench::RootErrors::first().empty())
            throw std::runtime_error("writing " + out.where() + " failed:" + describe_failure(out));
          out.commit();
          written.wall_s += t.wall_s;
          written.cpu_s += t.cpu_s;
          ++passes_written;
          if (pass == 0) memory = this_pass;
          memory.peak_bytes = std::max(memory.peak_bytes, this_pass.peak_bytes);
          file_bytes = out.size();
          const bool first = rep == 0 && pass == 0, last = rep + 1 == warmup + reps && pass + 1 == loops;
          const bool check = first || last || read_back_which == "every";
          Checksums got;
          const bench::Timing read = bench::time_it([&] {
            if (check) got = read_back(method, out, *source, s, cores);  // untimed, with every core
            // ROOT's metadata is the file less its baskets, as the written file counts them
            if (method.format == Format::Tree) basket_bytes = tree_basket_bytes(out, s);
          });
          read_s += read.wall_s;
          bench::RootErrors::throw_if_any("reading back " + out.where());
          if (!check) continue;  // its output is removed unread
          ++passes;
          sample_read = true;
          const int column = got.first_difference(expected.checksums);
          if (got.entries() != n || column >= 0) {
            bench::JsonLine()
                .add("record", "validation")
                .add("kernel", "write_bench")
                .add("ok", false)
                .add("entries_expected", static_cast<long long>(n))
                .add("entries_read", static_cast<long long>(got.entries()))
                .add("first_bad_column",
                     column >= 0 ? source->schema().columns[static_cast<std::size_t>(column)].name : "")
                .print();
            std::fprintf(stderr, "write_bench: %s read back %llu entries of %llu%s%s\n", out.where().c_str(),
                         static_cast<unsigned long long>(got.entries()), static_cast<unsigned long long>(n),
                         column >= 0 ? ", checksum differs in column " : "",
                         column >= 0 ? source->schema().columns[static_cast<std::size_t>(column)].name.c_str() : "");
            return 3;
          }
          last_read = got;
          if (keep && rep + 1 == warmup + reps && pass + 1 == loops && !medium.in_memory()) {
            // The last pass's output stays, under a name without the process id (for the tests and readers).
            kept = medium.dir + "/write_bench_" + method.name + file_suffix(method);
            if (std::rename(out.path().c_str(), kept.c_str()) != 0) throw std::runtime_error("cannot keep " + kept);
          }
        }
        if (rep < warmup || sample_retakes >= retakes.max_retakes ||
            !retakes.disturbed(run_delay_s, written.wall_s, busy_threads))
          break;
      }
      calibration.update(rep, loops, written.wall_s, written.wall_s + read_s);
      bench::JsonLine()
          .add("record", "timing")
          .add("kernel", "write_bench")
          .add("workload", workload)
          .add("method", method.name)
          .add("medium", medium.kind)
          .add("fs_type", medium.fs_type)
          .add("compression", s.compression)
          .add("level", s.level)
          .add("threads", s.threads)
          .add("imt_pool", static_cast<int>(ROOT::GetThreadPoolSize()))
          .add("flush_bytes", s.flush_bytes)
          .add("entries", static_cast<long long>(n))
          .add("raw_bytes", static_cast<long long>(expected.bytes))
          .add("events_split", events_split)
          .add("rep", rep - warmup)
          .add("warmup", rep < warmup)
          .add("loops", loops)
          .add("wall_s", written.wall_s)
          .add("cpu_s", written.cpu_s)
          .add("file_bytes", static_cast<long long>(file_bytes))
          .add("basket_bytes", basket_bytes)
          .add("run_delay_s", run_delay_s)
          .add("sample_retakes", sample_retakes)
          .add("peak_rss_bytes", memory.peak_bytes)
          .add("start_rss_bytes", memory.start_bytes)
          .add("rss_method", memory.method)
          .add("read_s", read_s)
          .add("read_entries", sample_read ? static_cast<long long>(last_read.entries()) : -1LL)
          .add("checksum", sample_read ? last_read.digest() : std::string())
          .add("column_checksums", sample_read ? last_read.column_hex() : std::string())
          .print();
      bench::JsonLine().add("record", "progress").add("done", rep + 1).add("total", warmup + reps).print();
    }
    bench::JsonLine()
        .add("record", "validation")
        .add("kernel", "write_bench")
        .add("ok", true)
        .add("checksum", last_read.digest())
        .add("source_checksum", expected.checksums.digest())
        .add("entries", static_cast<long long>(n))
        .add("raw_bytes", static_cast<long long>(expected.bytes))
        .add("columns", static_cast<long long>(source->schema().columns.size()))
        .add("loaded_events", static_cast<long long>(loaded))
        .add("load_s", load.wall_s)
        .add("passes_checked", passes)
        .add("passes_written", passes_written)
        .add("baseline_rss_bytes", baseline_rss)
        .add("lz4_version", LZ4_versionString())
        .add("kept", kept)
        .print();
    return 0;
  });
}

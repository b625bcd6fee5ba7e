// One reader process of the I/O rate model (seed 004, PROOF-Lite): reads every
// branch of its own disjoint entry ranges with TTree::GetEntry (the seed's
// PROOF selector read most of each event) and processes each event. The
// Python side starts Np of these together (--barrier 1: each prints "ready"
// and waits for "go" on stdin), so their aggregate rate R(Np) can be measured.
//
//   --ranges FILE       lines "first last path": entries [first, last) of the
//                       tree in file `path`
//   --cache-size BYTES  TTreeCache size; 0 switches TTreeCache off
//   --cache none|cold|warm  page-cache state set before each repetition
//                       (untimed; "none" leaves it to the caller)
//   --primer FILE       a file with the same tree, not one of those measured:
//                       one entry of it is read before the start, so that
//                       what a process does once (loading dictionaries,
//                       streamer infos) is not timed, as for PROOF-Lite's
//                       long-lived workers; without touching the page-cache
//                       state of the measured files
//   --phase-timing 1    time GetEntry (I/O + decompression + deserialisation)
//                       and the processing separately, per event: the
//                       processing rate R_proc is measured on data already
//                       decompressed in memory.
//
// Each timed pass records how long this process waited for a CPU during it (run_delay_s). A
// reader alone (no --barrier) takes a pass that waited longer than --max-run-delay-share of its
// wall time again, its cache state set afresh first, at most --max-sample-retakes times
// (sample_retakes). A reader started with others (--barrier 1) does not: its pass is one part
// of theirs, from the first start to the last end, and cannot be taken again alone.
//
// Processing ("making some distribution"): the sum of every float value of
// the event, histogrammed, and the sum of every collection counter. The
// counter sum is an exact integer: the processes' sums must add up to the
// single reader's (checked in Python).
#include <TFile.h>
#include <TH1D.h>
#include <TLeaf.h>
#include <TROOT.h>
#include <TTree.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "bench.hpp"
#include "file_list.hpp"
#include "page_cache.hpp"
#include "timing_record.hpp"

namespace {

struct Range {
  long long first, last;
  std::string path;
};

std::vector<Range> read_ranges(const std::string &list) {
  std::vector<Range> ranges;
  for (const auto &line : bench::read_lines(list, "ranges")) {
    std::istringstream in(line);
    Range r{};
    in >> r.first >> r.last;
    std::getline(in >> std::ws, r.path);
    if (!in && r.path.empty()) throw std::runtime_error("bad line in " + list + ": '" + line + "' (want: first last path)");
    if (r.first < 0 || r.last < r.first) throw std::runtime_error("bad entry range in " + list + ": '" + line + "'");
    ranges.push_back(r);
  }
  return ranges;
}

struct Totals {
  long long entries = 0, counter_sum = 0;
  double float_sum = 0, getentry_s = 0, process_s = 0;
};

struct Leaves {
  std::vector<TLeaf *> floats, counters;
};

Leaves leaves_of(TTree &tree) {
  Leaves l;
  for (auto *object : *tree.GetListOfLeaves()) {
    auto *leaf = static_cast<TLeaf *>(object);
    const std::string type = leaf->GetTypeName();
    if (type == "Float_t") l.floats.push_back(leaf);
    if (type == "UInt_t" && leaf->GetName()[0] == 'n') l.counters.push_back(leaf);
  }
  return l;
}

void process(const Leaves &l, TH1D &h, Totals &t) {
  double sum = 0;
  for (auto *leaf : l.floats) {
    const auto *v = static_cast<const float *>(leaf->GetValuePointer());
    for (int k = 0, n = leaf->GetLen(); k < n; ++k)
      if (std::isfinite(v[k])) sum += v[k];  // some NanoAOD floats are NaN by design
  }
  long long counters = 0;
  for (auto *leaf : l.counters) counters += static_cast<long long>(*static_cast<const UInt_t *>(leaf->GetValuePointer()));
  h.Fill(std::log10(1.0 + std::fabs(sum)));
  t.float_sum += sum;
  t.counter_sum += counters;
}

Totals read_ranges_once(const std::vector<Range> &ranges, const std::string &tree_name, long long cache_size,
                        bool phase_timing, TH1D &h) {
  Totals t;
  for (const auto &r : ranges) {
    std::unique_ptr<TFile> f(TFile::Open(r.path.c_str(), "READ"));
    if (!f || f->IsZombie()) throw std::runtime_error("cannot open input file " + r.path);
    auto *tree = f->Get<TTree>(tree_name.c_str());
    if (!tree) throw std::runtime_error("input file " + r.path + " has no tree '" + tree_name + "'");
    if (r.last > tree->GetEntries())
      throw std::runtime_error("entry range " + std::to_string(r.first) + ".." + std::to_string(r.last) + " beyond the " +
                               std::to_string(tree->GetEntries()) + " entries of " + r.path);
    if (cache_size > 0) {
      tree->SetCacheSize(cache_size);
      tree->AddBranchToCache("*", true);
      tree->StopCacheLearningPhase();
      tree->SetCacheEntryRange(r.first, r.last);
    } else {
      tree->SetCacheSize(0);
    }
    const Leaves leaves = leaves_of(*tree);
    for (long long i = r.first; i < r.last; ++i) {
      if (phase_timing) {
        const double t0 = bench::wall_seconds();
        if (tree->GetEntry(i) <= 0) throw std::runtime_error("cannot read entry " + std::to_string(i) + " of " + r.path);
        const double t1 = bench::wall_seconds();
        process(leaves, h, t);
        t.getentry_s += t1 - t0;
        t.process_s += bench::wall_seconds() - t1;
      } else {
        if (tree->GetEntry(i) <= 0) throw std::runtime_error("cannot read entry " + std::to_string(i) + " of " + r.path);
        process(leaves, h, t);
      }
      ++t.entries;
    }
  }
  return t;
}

}  // namespace

int main(int argc, char **argv) {
  return bench::guarded_main("rdf_rate_reader", argc, argv,
      bench::with_retake_options({{"ranges", ""}, {"tree", "Events"}, {"cache-size", "33554432"},
      {"cache", "none"}, {"barrier", "0"}, {"phase-timing", "0"}, {"primer", ""}, {"reps", "1"},
      {"warmup", "0"}}), [&](const bench::Options &opt) {
    const auto ranges = read_ranges(opt.str("ranges"));
    const std::string tree = opt.str("tree"), cache = opt.str("cache");
    if (cache != "none" && cache != "cold" && cache != "warm")
      throw std::invalid_argument("--cache must be none, cold or warm, got '" + cache + "'");
    const long long cache_size = opt.integer("cache-size", 0);
    const bool barrier = opt.integer("barrier", 0) != 0, phases = opt.integer("phase-timing", 0) != 0;
    const long long reps = opt.integer("reps", 1), warmup = opt.integer("warmup", 0);
    const bench::Retakes retakes = bench::retakes_from(opt);
    if (barrier && retakes.max_share > 0)
      throw std::invalid_argument(
          "--max-run-delay-share: a reader started with others (--barrier 1) times its pass with theirs and "
          "cannot take it again alone");
    long long expected = 0;
    std::vector<std::string> paths;
    for (const auto &r : ranges) {
      expected += r.last - r.first;
      if (std::find(paths.begin(), paths.end(), r.path) == paths.end()) paths.push_back(r.path);
    }
    // Load ROOT's I/O libraries before the start, so they are not timed.
    TH1D h("event_sum", "", 100, 0., 10.);
    h.SetDirectory(nullptr);
    if (const std::string primer = opt.str("primer"); !primer.empty()) {
      std::unique_ptr<TFile> f(TFile::Open(primer.c_str(), "READ"));
      auto *t = f && !f->IsZombie() ? f->Get<TTree>(tree.c_str()) : nullptr;
      if (!t || t->GetEntries() == 0)
        throw std::runtime_error("primer file " + primer + " has no non-empty tree '" + tree + "'");
      t->GetEntry(0);
      Totals scratch;
      process(leaves_of(*t), h, scratch);
      h.Reset();
    }
    if (barrier) {
      bench::JsonLine().add("record", "ready").print();
      std::string go;
      if (!std::getline(std::cin, go) || go != "go") throw std::runtime_error("barrier: expected 'go' on stdin");
    }
    long long first_counters = -1;
    bool ok = true;
    for (long long rep = 0; rep < warmup + reps; ++rep) {
      double residency = -1, start = 0, end = 0;
      long long bytes0 = 0;
      int calls0 = 0;
      Totals totals;
      const auto [t, sample_retakes] = bench::take_retaking(retakes, rep >= warmup, 1, [&] {
        // untimed, checked; warm: the smallest resident fraction, cold: the largest (recorded)
        residency = cache != "none" ? bench::page_cache::prepare(paths, cache) : -1.0;
        h.Reset();
        bytes0 = TFile::GetFileBytesRead();
        calls0 = TFile::GetFileReadCalls();
        start = bench::wall_seconds();
        const bench::DelayedTiming timing =
            bench::time_delayed([&] { totals = read_ranges_once(ranges, tree, cache_size, phases, h); });
        end = bench::wall_seconds();
        if (first_counters < 0) first_counters = totals.counter_sum;
        ok = ok && totals.entries == expected && totals.counter_sum == first_counters &&
             static_cast<long long>(h.GetEntries()) == expected;
        return timing;
      });
      bench::JsonLine record;
      record.add("record", "timing").add("kernel", "rdf_rate_reader");
      bench::add_sample_fields(record, rep, warmup, t, sample_retakes)
          .add("t_start", start)
          .add("t_end", end)
          .add("entries", totals.entries)
          .add("bytes_read", TFile::GetFileBytesRead() - bytes0)
          .add("read_calls", static_cast<long long>(TFile::GetFileReadCalls() - calls0))
          .add("getentry_s", totals.getentry_s)
          .add("process_s", totals.process_s)
          .add("counter_sum", totals.counter_sum)
          .add("float_sum", totals.float_sum)
          .add("cache_size", cache_size)
          .add("residency", residency)
          .print();
    }
    bench::JsonLine()
        .add("record", "validation")
        .add("ok", ok)
        .add("entries", expected)
        .add("checksum", static_cast<double>(first_counters))
        .print();
    if (!ok) {
      std::fprintf(stderr, "rdf_rate_reader: entries or counter sums differ from what the ranges hold\n");
      return 3;
    }
    return 0;
  });
}

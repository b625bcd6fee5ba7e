// Makes a NanoAOD-like file of any size by resampling the events of a real
// NanoAOD file (the CMS Open Data ttbar file in ../shared/data): the same
// branches with the same types, the real multiplicities and value
// distributions. Every floating-point value is smeared by a relative Gaussian
// jitter (--jitter), so that resampled events are not byte-identical copies,
// which would make compression ratios unrealistically good, and then put back
// where the real file's values lie:
// * a value that the real file has in more than one event (a default such as
//   -1 or -10, a point of a discrete grid such as a jet's area) is moved to the
//   nearest such value, so a branch keeps its discrete values and their
//   repeats, as real events do;
// * any other value is rounded to its branch's precision in the real file:
//   NanoAOD stores many floats with fewer mantissa bits (their low bits zero),
//   and a smear that refilled those bits with noise would make the file
//   compress unlike the real one.
// Equal values within one event stay equal (a generator particle copied down
// its decay chain). Integers, flags and counters are copied as they are.
// --resample 0 takes the source's events in their order (cycled) instead of
// at random, so that a test can compare the same events' values.
//
// Output is written to OUTPUT.tmp and renamed when complete, then reopened
// and checked (entries, branches, the sum of every collection counter).
#include <TBranch.h>
#include <TFile.h>
#include <TLeaf.h>
#include <TTree.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "bench.hpp"
#include "root_io.hpp"

namespace {

// The n<Collection> counters (UInt_t leaves named n...).
std::vector<TLeaf *> counter_leaves(TTree &tree) {
  std::vector<TLeaf *> counters;
  for (auto *object : *tree.GetListOfLeaves()) {
    auto *leaf = static_cast<TLeaf *>(object);
    if (leaf->GetName()[0] == 'n' && std::string(leaf->GetTypeName()) == "UInt_t") counters.push_back(leaf);
  }
  return counters;
}

long long sum_of(const std::vector<TLeaf *> &counters) {
  long long sum = 0;
  for (auto *leaf : counters) sum += static_cast<long long>(leaf->GetValue());
  return sum;
}

// Sum of every counter over all entries: the checksum the written file must
// reproduce when read back.
long long counter_sum(TTree &tree) {
  const std::vector<TLeaf *> counters = counter_leaves(tree);
  tree.SetBranchStatus("*", false);
  for (auto *leaf : counters) tree.SetBranchStatus(leaf->GetBranch()->GetName(), true);
  long long sum = 0;
  for (Long64_t i = 0; i < tree.GetEntries(); ++i) {
    tree.GetEntry(i);
    sum += sum_of(counters);
  }
  tree.SetBranchStatus("*", true);
  return sum;
}

constexpr int kMantissaBits = 23;

// A float's bit pattern (what tells two values apart exactly).
std::uint32_t bits_of(float value) {
  std::uint32_t word;
  std::memcpy(&word, &value, sizeof word);
  return word;
}

// Trailing zero bits of a float's 23-bit mantissa (23 for a mantissa of zero:
// it says nothing about the precision it was stored with).
int trailing_zero_mantissa_bits(float value) {
  const std::uint32_t mantissa = bits_of(value) & ((1u << kMantissaBits) - 1);
  if (mantissa == 0) return kMantissaBits;
  int zeros = 0;
  for (std::uint32_t m = mantissa; (m & 1u) == 0; m >>= 1) ++zeros;
  return zeros;
}

// What the source says of each float leaf: its precision, the fewest trailing
// zero mantissa bits over all its values (0: full precision; a branch stored
// with p mantissa bits has at least 23 - p zero bits in every value), and its
// discrete values, those found in more than one event, sorted.
struct FloatLeafStatistics {
  std::vector<int> zero_bits;
  std::vector<std::vector<float>> discrete;
};

FloatLeafStatistics float_statistics(TTree &tree, const std::vector<TLeaf *> &floats) {
  FloatLeafStatistics stats{std::vector<int>(floats.size(), kMantissaBits),
                            std::vector<std::vector<float>>(floats.size())};
  struct Seen {
    Long64_t last_event;
    int events;
  };
  std::vector<std::unordered_map<std::uint32_t, Seen>> seen(floats.size());
  tree.SetBranchStatus("*", false);
  for (auto *leaf : floats) tree.SetBranchStatus(leaf->GetBranch()->GetName(), true);
  for (auto *leaf : counter_leaves(tree)) tree.SetBranchStatus(leaf->GetBranch()->GetName(), true);
  for (Long64_t i = 0; i < tree.GetEntries(); ++i) {
    tree.GetEntry(i);
    for (std::size_t f = 0; f < floats.size(); ++f) {
      const auto *values = static_cast<const float *>(floats[f]->GetValuePointer());
      for (int k = 0, n = floats[f]->GetLen(); k < n; ++k) {
        if (!std::isfinite(values[k])) continue;
        stats.zero_bits[f] = std::min(stats.zero_bits[f], trailing_zero_mantissa_bits(values[k]));
        auto [it, first] = seen[f].try_emplace(bits_of(values[k]), Seen{i, 1});
        if (!first && it->second.last_event != i) {
          it->second.last_event = i;
          if (++it->second.events == 2) stats.discrete[f].push_back(values[k]);
        }
      }
    }
  }
  tree.SetBranchStatus("*", true);
  for (auto &values : stats.discrete) std::sort(values.begin(), values.end());
  return stats;
}

// The member of the sorted, non-empty `discrete` nearest to `value`.
float nearest(const std::vector<float> &discrete, float value) {
  const auto above = std::lower_bound(discrete.begin(), discrete.end(), value);
  if (above == discrete.begin()) return *above;
  if (above == discrete.end()) return discrete.back();
  const float below = *(above - 1);
  return value - below <= *above - value ? below : *above;
}

// `value` rounded to nearest with its low `zeros` mantissa bits cleared (a carry
// into the exponent is the correctly rounded next power of two).
float round_to_precision(float value, int zeros) {
  if (zeros <= 0 || !std::isfinite(value)) return value;
  if (zeros >= kMantissaBits) zeros = kMantissaBits;
  const std::uint32_t word = (bits_of(value) + (1u << (zeros - 1))) & ~((1u << zeros) - 1u);
  float rounded;
  std::memcpy(&rounded, &word, sizeof rounded);
  return std::isfinite(rounded) ? rounded : value;
}

}  // namespace

int main(int argc, char **argv) {
  return bench::guarded_main("make_nanoaod_like", argc, argv,
      {{"source", ""}, {"tree", "Events"}, {"output", ""}, {"events", "10000"}, {"seed", "1"},
      {"compression", "ZLIB"}, {"level", "1"}, {"jitter", "0.01"}, {"resample", "1"}}, [&](const bench::Options &opt) {
    const std::string source = opt.str("source"), output = opt.str("output"), tree_name = opt.str("tree");
    if (source.empty() || output.empty()) throw std::invalid_argument("--source and --output are required");
    const long long events = opt.integer("events", 1);
    const double jitter = opt.real("jitter");
    const long long resample_option = opt.integer("resample", 0);
    if (resample_option > 1) throw std::invalid_argument("--resample must be 0 or 1, got " + opt.str("resample"));
    const bool resample = resample_option == 1;
    const int settings = bench::compression_settings(opt.str("compression"), static_cast<int>(opt.integer("level", 0)));

    std::unique_ptr<TFile> in(TFile::Open(source.c_str(), "READ"));
    if (!in || in->IsZombie()) throw std::runtime_error("cannot open source file " + source);
    auto *src = in->Get<TTree>(tree_name.c_str());
    if (!src) throw std::runtime_error("source file " + source + " has no tree '" + tree_name + "'");
    const Long64_t source_entries = src->GetEntries();
    if (source_entries == 0) throw std::runtime_error("tree '" + tree_name + "' in " + source + " is empty");

    std::vector<TLeaf *> floats;
    for (auto *object : *src->GetListOfLeaves()) {
      auto *leaf = static_cast<TLeaf *>(object);
      if (std::string(leaf->GetTypeName()) == "Float_t") floats.push_back(leaf);
    }

    const std::vector<TLeaf *> counters = counter_leaves(*src);
    const FloatLeafStatistics stats = float_statistics(*src, floats);
    long long reduced_precision = 0;
    for (int z : stats.zero_bits) reduced_precision += z > 0;
    bench::TemporaryOutput target(output);
    long long sampled_counters = 0;
    {
      std::unique_ptr<TFile> out(TFile::Open(target.temporary().c_str(), "RECREATE", "", settings));
      if (!out || out->IsZombie()) throw std::runtime_error("cannot create output file " + target.temporary());
      TTree *dst = src->CloneTree(0);  // shares the branch buffers with src
      std::mt19937_64 rng(static_cast<std::uint64_t>(opt.integer("seed", 0)));
      std::uniform_int_distribution<Long64_t> pick(0, source_entries - 1);
      std::normal_distribution<float> smear(1.0f, static_cast<float>(jitter));
      std::unordered_map<std::uint32_t, float> within_event;
      const long long step = std::max(1LL, events / 100);
      for (long long i = 0; i < events; ++i) {
        src->GetEntry(resample ? pick(rng) : i % source_entries);
        sampled_counters += sum_of(counters);
        if (jitter > 0)
          for (std::size_t f = 0; f < floats.size(); ++f) {
            auto *values = static_cast<float *>(floats[f]->GetValuePointer());
            const std::vector<float> &discrete = stats.discrete[f];
            within_event.clear();  // source value -> its new value, in this event and leaf
            for (int k = 0, n = floats[f]->GetLen(); k < n; ++k) {
              if (!std::isfinite(values[k])) continue;
              const auto [it, first] = within_event.try_emplace(bits_of(values[k]), 0.0f);
              if (first) {
                const bool on_grid = std::binary_search(discrete.begin(), discrete.end(), values[k]);
                const float smeared = values[k] * smear(rng);
                it->second = on_grid ? nearest(discrete, smeared) : round_to_precision(smeared, stats.zero_bits[f]);
              }
              values[k] = it->second;
            }
          }
        if (dst->Fill() <= 0) throw std::runtime_error("writing event " + std::to_string(i) + " to " + output + " failed");
        if ((i + 1) % step == 0 || i + 1 == events)
          bench::JsonLine().add("record", "progress").add("done", i + 1).add("total", events).print();
      }
      dst->Write();
      out->Close();
    }
    target.commit();

    // Read back what was written.
    std::unique_ptr<TFile> check(TFile::Open(output.c_str(), "READ"));
    auto *tree = check ? check->Get<TTree>(tree_name.c_str()) : nullptr;
    const long long written_counters = tree ? counter_sum(*tree) : -1;
    const bool ok = tree && tree->GetEntries() == events &&
                    tree->GetListOfBranches()->GetEntries() == src->GetListOfBranches()->GetEntries() &&
                    written_counters == sampled_counters;
    bench::JsonLine()
        .add("record", "validation")
        .add("ok", ok)
        .add("events", static_cast<long long>(tree ? tree->GetEntries() : 0))
        .add("branches", static_cast<long long>(tree ? tree->GetListOfBranches()->GetEntries() : 0))
        .add("checksum", static_cast<double>(written_counters))
        .add("file_bytes", static_cast<long long>(check ? check->GetSize() : 0))
        .add("compression_settings", settings)
        .add("float_branches", static_cast<long long>(floats.size()))
        .add("reduced_precision_branches", reduced_precision)
        .print();
    if (!ok) {
      std::fprintf(stderr, "make_nanoaod_like: %s does not read back as written\n", output.c_str());
      return 3;
    }
    return 0;
  });
}

// Makes a NanoAOD-like file of any size by resampling the events of a real
// NanoAOD file (the CMS Open Data ttbar file in ../shared/data): the same
// branches with the same types, the real multiplicities and value
// distributions. Every floating-point value is smeared by a relative Gaussian
// jitter (--jitter) so that resampled events are not byte-identical copies,
// which would make compression ratios unrealistically good; integers, flags
// and counters are copied as they are.
//
// Output is written to OUTPUT.tmp and renamed when complete, then reopened
// and checked (entries, branches, the sum of every collection counter).
#include <TBranch.h>
#include <TFile.h>
#include <TLeaf.h>
#include <TTree.h>

#include <cstdint>
#include <memory>
#include <random>
#include <string>
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

}  // namespace

int main(int argc, char **argv) {
  return bench::guarded_main("make_nanoaod_like", [&] {
    bench::Options opt(argc, argv,
                       {{"source", ""},
                        {"tree", "Events"},
                        {"output", ""},
                        {"events", "10000"},
                        {"seed", "1"},
                        {"compression", "ZLIB"},
                        {"level", "1"},
                        {"jitter", "0.01"}});
    if (opt.build_info()) {
      bench::print_build_info("make_nanoaod_like");
      return 0;
    }
    const std::string source = opt.str("source"), output = opt.str("output"), tree_name = opt.str("tree");
    if (source.empty() || output.empty()) throw std::invalid_argument("--source and --output are required");
    const long long events = opt.integer("events", 1);
    const double jitter = opt.real("jitter");
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
    bench::TemporaryOutput target(output);
    long long sampled_counters = 0;
    {
      std::unique_ptr<TFile> out(TFile::Open(target.temporary().c_str(), "RECREATE", "", settings));
      if (!out || out->IsZombie()) throw std::runtime_error("cannot create output file " + target.temporary());
      TTree *dst = src->CloneTree(0);  // shares the branch buffers with src
      std::mt19937_64 rng(static_cast<std::uint64_t>(opt.integer("seed", 0)));
      std::uniform_int_distribution<Long64_t> pick(0, source_entries - 1);
      std::normal_distribution<float> smear(1.0f, static_cast<float>(jitter));
      const long long step = std::max(1LL, events / 100);
      for (long long i = 0; i < events; ++i) {
        src->GetEntry(pick(rng));
        sampled_counters += sum_of(counters);
        if (jitter > 0)
          for (auto *leaf : floats) {
            auto *values = static_cast<float *>(leaf->GetValuePointer());
            for (int k = 0, n = leaf->GetLen(); k < n; ++k) values[k] *= smear(rng);
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
        .print();
    if (!ok) {
      std::fprintf(stderr, "make_nanoaod_like: %s does not read back as written\n", output.c_str());
      return 3;
    }
    return 0;
  });
}

// Copies a TTree into an RNTuple with ROOT's RNTupleImporter (still
// ROOT::Experimental in 6.40), with the compression given, and checks that
// the RNTuple has as many entries as the tree.
#include <ROOT/RNTupleImporter.hxx>
#include <ROOT/RNTupleReader.hxx>
#include <ROOT/RNTupleWriteOptions.hxx>
#include <TFile.h>
#include <TTree.h>

#include <memory>
#include <string>

#include "bench.hpp"
#include "root_io.hpp"

int main(int argc, char **argv) {
  return bench::guarded_main("tree_to_rntuple", [&] {
    bench::Options opt(argc, argv,
                       {{"source", ""}, {"tree", "Events"}, {"output", ""}, {"compression", "ZLIB"}, {"level", "1"}});
    if (opt.build_info()) {
      bench::print_build_info("tree_to_rntuple");
      return 0;
    }
    const std::string source = opt.str("source"), output = opt.str("output"), name = opt.str("tree");
    if (source.empty() || output.empty()) throw std::invalid_argument("--source and --output are required");
    const int settings = bench::compression_settings(opt.str("compression"), static_cast<int>(opt.integer("level", 0)));

    std::unique_ptr<TFile> in(TFile::Open(source.c_str(), "READ"));
    if (!in || in->IsZombie()) throw std::runtime_error("cannot open source file " + source);
    auto *tree = in->Get<TTree>(name.c_str());
    if (!tree) throw std::runtime_error("source file " + source + " has no tree '" + name + "'");

    bench::TemporaryOutput target(output);
    const bench::Timing t = bench::time_it([&] {
      auto importer = ROOT::Experimental::RNTupleImporter::Create(tree, target.temporary());
      ROOT::RNTupleWriteOptions options;
      options.SetCompression(settings);
      importer->SetWriteOptions(options);
      importer->SetIsQuiet(true);
      importer->Import();
    });
    target.commit();

    auto reader = ROOT::RNTupleReader::Open(name, output);
    const bool ok = static_cast<Long64_t>(reader->GetNEntries()) == tree->GetEntries();
    bench::JsonLine()
        .add("record", "validation")
        .add("ok", ok)
        .add("events", static_cast<long long>(reader->GetNEntries()))
        .add("checksum", static_cast<double>(reader->GetNEntries()))
        .add("wall_s", t.wall_s)
        .print();
    if (!ok) {
      std::fprintf(stderr, "tree_to_rntuple: %s has %llu entries, the tree %lld\n", output.c_str(),
                   static_cast<unsigned long long>(reader->GetNEntries()), static_cast<long long>(tree->GetEntries()));
      return 3;
    }
    return 0;
  });
}

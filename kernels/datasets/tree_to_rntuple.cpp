// Copies a TTree into an RNTuple with ROOT's RNTupleImporter (still
// ROOT::Experimental in 6.40), with the compression given, and checks that
// the RNTuple has as many entries as the tree. A split std::vector<aod::Type>
// branch (make_aod_like --layout objects) becomes a std::vector<aod::Type>
// field, through the classes' dictionary linked in here.
//
// The copy is written to OUTPUT.tmp in the same directory, and renamed to
// OUTPUT only once it has been read back and checked: a failed copy (a full
// disk, a file size limit) leaves nothing under the final name, removes the
// temporary and names what failed, with ROOT's own error (which ROOT prints
// but does not throw) and the free space left.
//   --max-file-bytes N   RLIMIT_FSIZE for the tests' stand-in for a full disk
#include <ROOT/RNTupleImporter.hxx>
#include <ROOT/RNTupleReader.hxx>
#include <ROOT/RNTupleWriteOptions.hxx>
#include <TFile.h>
#include <TTree.h>

#include <filesystem>
#include <memory>
#include <string>

#include "aod_classes.h"  // the AOD classes: their dictionary, linked in, lets the importer copy them
#include "bench.hpp"
#include "root_errors.hpp"
#include "root_io.hpp"

int main(int argc, char **argv) {
  return bench::guarded_main("tree_to_rntuple", argc, argv,
      {{"source", ""}, {"tree", "Events"}, {"output", ""}, {"compression", "ZLIB"}, {"level", "1"},
      {"max-file-bytes", "0"}}, [&](const bench::Options &opt) {
    const std::string source = opt.str("source"), output = opt.str("output"), name = opt.str("tree");
    if (source.empty() || output.empty()) throw std::invalid_argument("--source and --output are required");
    const int settings = bench::compression_settings(opt.str("compression"), static_cast<int>(opt.integer("level", 0)));
    bench::limit_file_size(opt.integer("max-file-bytes", 0));
    bench::RootErrors::install();

    std::unique_ptr<TFile> in(TFile::Open(source.c_str(), "READ"));
    if (!in || in->IsZombie()) throw std::runtime_error("cannot open source file " + source);
    auto *tree = in->Get<TTree>(name.c_str());
    if (!tree) throw std::runtime_error("source file " + source + " has no tree '" + name + "'");

    std::string dir = std::filesystem::path(output).parent_path().string();
    if (dir.empty()) dir = ".";
    bench::TemporaryOutput target(output);  // removes the temporary unless committed
    bench::RootErrors::clear();
    const auto failed = [&](const std::string &why) {
      return std::runtime_error("writing " + output + " (as " + target.temporary() + ") failed: " + why +
                                bench::describe_write_failure(dir));
    };
    const bench::Timing t = bench::time_it([&] {
      try {
        auto importer = ROOT::Experimental::RNTupleImporter::Create(tree, target.temporary());
        ROOT::RNTupleWriteOptions options;
        options.SetCompression(settings);
        importer->SetWriteOptions(options);
        importer->SetIsQuiet(true);
        importer->Import();
      } catch (const std::exception &e) {
        throw failed(e.what());
      }
    });
    // A failed write is only logged by ROOT (the writers flush in their destructors).
    if (!bench::RootErrors::first().empty()) throw failed("ROOT reported an error while writing");

    // Read the temporary back before it takes the final name.
    std::uint64_t entries = 0;
    try {
      entries = ROOT::RNTupleReader::Open(name, target.temporary())->GetNEntries();
    } catch (const std::exception &e) {
      throw failed(std::string("reading it back: ") + e.what());
    }
    const bool ok = static_cast<Long64_t>(entries) == tree->GetEntries();
    if (!ok) {
      bench::JsonLine()
          .add("record", "validation")
          .add("ok", false)
          .add("events", static_cast<long long>(entries))
          .add("checksum", static_cast<double>(entries))
          .print();
      std::fprintf(stderr, "tree_to_rntuple: %s has %llu entries, the tree %lld; nothing written to %s\n",
                   target.temporary().c_str(), static_cast<unsigned long long>(entries),
                   static_cast<long long>(tree->GetEntries()), output.c_str());
      return 3;
    }
    target.commit();
    bench::JsonLine()
        .add("record", "validation")
        .add("ok", true)
        .add("events", static_cast<long long>(entries))
        .add("checksum", static_cast<double>(entries))
        .add("wall_s", t.wall_s)
        .print();
    return 0;
  });
}

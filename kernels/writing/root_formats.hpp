// TTree and RNTuple sides of the writing experiment: reading NanoAOD-like
// events into memory, filling a TTree or an RNTuple fill context from an
// EntryView, and reading either back into column checksums. One schema
// drives all of them, so every writer writes exactly the same columns.
#pragma once

#include <ROOT/RNTupleFillContext.hxx>
#include <ROOT/RNTupleModel.hxx>
#include <ROOT/RNTupleReader.hxx>
#include <TTree.h>

#include <memory>
#include <string>
#include <vector>

#include "schema.hpp"

class TLeaf;

namespace writing {

// Reads the columns of `schema` from a TTree, entry by entry, without
// setting branch addresses (ROOT's own leaf buffers are viewed).
class TreeScanner {
 public:
  TreeScanner(TTree &tree, const Schema &schema, const std::string &file);
  void read(Long64_t i, EntryView &view);

 private:
  TTree &tree_;
  std::vector<TLeaf *> leaves_;
  std::vector<std::size_t> sizes_;
  std::string file_;
};

// The columns of `tree` whose branch names match one of the glob `patterns`,
// with the counters of matched arrays added; counters first, then the others
// in the tree's order. max_count is left at 1 (EventStore sets it).
Schema schema_from_tree(TTree &tree, const std::vector<std::string> &patterns, const std::string &file);

// NanoAOD-like events held in memory, column by column. Entry i of the
// source is loaded event i % loaded(): the writers may write more events
// than the input files hold (the seed replayed its first 10 events).
class EventStore : public EntrySource {
 public:
  EventStore(const std::vector<std::string> &files, const std::string &tree_name,
             const std::vector<std::string> &patterns, std::uint64_t max_events, std::uint64_t entries);
  const Schema &schema() const override { return schema_; }
  std::uint64_t entries() const override { return entries_; }
  std::uint64_t loaded() const { return offsets_.empty() ? 0 : offsets_[0].size() - 1; }
  double mean_entry_bytes() const override;
  void get(std::uint64_t i, EntryView &view, std::vector<unsigned char> &scratch) const override;

 private:
  Schema schema_;
  std::vector<std::vector<unsigned char>> data_;
  std::vector<std::vector<std::uint64_t>> offsets_;  // per column: byte offset of each event, and the end
  std::uint64_t entries_;
};

// Branches for every column on `tree` (leaf lists such as "Jet_pt[nJet]/F")
// and a fill() that copies one entry into their buffers and fills the tree.
class TreeFiller {
 public:
  TreeFiller(TTree &tree, const Schema &schema);
  Int_t fill(const EntryView &view);

 private:
  TTree &tree_;
  std::vector<std::vector<unsigned char>> buffers_;
};

// Checksums of entries [begin, end) of `tree` in the columns of `schema`.
Checksums tree_checksums(TTree &tree, const Schema &schema, const std::string &file, Long64_t begin, Long64_t end);

// An RNTuple model with one field per column: scalars as themselves, arrays
// as ROOT::RVec<T> (the counters are kept as fields of their own, as in the TTree).
std::unique_ptr<ROOT::RNTupleModel> make_model(const Schema &schema);

// One fill context's entry, with a fill() that copies an EntryView into it.
class NTupleFiller {
 public:
  NTupleFiller(ROOT::RNTupleFillContext &context, const Schema &schema);
  std::size_t fill(const EntryView &view);

 private:
  ROOT::RNTupleFillContext &context_;
  const Schema &schema_;
  std::unique_ptr<ROOT::REntry> entry_;
  std::vector<void *> values_;
};

// Checksums of entries [begin, end) of an RNTuple in the columns of `schema`.
Checksums ntuple_checksums(ROOT::RNTupleReader &reader, const Schema &schema, const std::string &file,
                           std::uint64_t begin, std::uint64_t end);

}  // namespace writing

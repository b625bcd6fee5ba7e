// Seed 001's data products for the writing experiment: the AOD-like file's
// collections as the objects CMSSW would hold, one std::vector<aod::Type>
// (kernels/common/aod_classes.cmake) per collection and event.
//
// The products are built from the flat AOD-like file's columns (nC, C_pt,
// C_a001, ...: make_aod_like.cpp writes the same values in both layouts) and
// can be flattened back into exactly those columns. So every writer's output,
// objects or columns, is checked against the same column checksums: a product
// read back is flattened into the columns it was built from.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "root_formats.hpp"
#include "schema.hpp"

class TClass;

namespace writing {

// Which columns of a flat schema make which product, and the conversions.
class ProductLayout {
 public:
  // Every column of `schema` must belong to one AOD class's collection (its
  // counter nC or a member C_pt, C_a001, ...) with the member's type, and every
  // member must have its column; anything else is an error naming the column.
  explicit ProductLayout(const Schema &schema);
  ~ProductLayout();
  std::size_t size() const;
  const std::string &name(std::size_t p) const;  // the collection ("Photon"), also the TTree branch name
  TClass *product_class(std::size_t p) const;     // std::vector<aod::Photon>, through the dictionary
  // Fill product p (a std::vector<aod::Type>) from one event's flat columns.
  void build(std::size_t p, const EntryView &flat, void *product) const;
  void swap(std::size_t p, void *a, void *b) const;  // contents of two products, O(1)
  // Point product p's columns of `view` at its values, flattened into `scratch`.
  void flatten(std::size_t p, const void *product, EntryView &view, std::vector<unsigned char> &scratch) const;

  struct Product;  // one collection's conversions (aod_products.cpp)

 private:
  std::vector<std::unique_ptr<Product>> products_;
};

// The AOD-like events held in memory twice: as the flat columns (EventStore,
// this source's entries) and as their data products, built before any timing.
class ProductStore : public EntrySource {
 public:
  explicit ProductStore(std::unique_ptr<EventStore> flat);
  ~ProductStore() override;
  const Schema &schema() const override { return flat_->schema(); }
  std::uint64_t entries() const override { return flat_->entries(); }
  double mean_entry_bytes() const override { return flat_->mean_entry_bytes(); }
  void get(std::uint64_t i, EntryView &view, std::vector<unsigned char> &scratch) const override {
    flat_->get(i, view, scratch);
  }
  std::uint64_t loaded() const { return flat_->loaded(); }
  const ProductLayout &layout() const { return layout_; }
  // Product p of entry i (entry i is loaded event i % loaded(), as EventStore replays).
  const void *product(std::uint64_t i, std::size_t p) const;
  // The same, for a writer that swaps its contents out and back within one call
  // (ProductTreeFiller); it is the stored product again when the call returns.
  void *lend(std::uint64_t i, std::size_t p) const;

 private:
  std::unique_ptr<EventStore> flat_;
  ProductLayout layout_;
  std::vector<std::vector<void *>> objects_;  // per product, per loaded event
};

// Branches of `tree`, one per product, split one sub-branch per member
// (split level 99) as CMSSW stores its products, and a fill() for entry i.
class ProductTreeFiller {
 public:
  ProductTreeFiller(TTree &tree, const ProductStore &store);
  ~ProductTreeFiller();
  Int_t fill(std::uint64_t i);

 private:
  TTree &tree_;
  const ProductStore &store_;
  std::vector<void *> objects_;  // the branches' own objects
};

// Checksums of entries [begin, end) of a tree of products, flattened into `schema`'s columns.
Checksums product_tree_checksums(TTree &tree, const Schema &schema, const std::string &file, Long64_t begin,
                                 Long64_t end);

// Seed 001's simple format serializes each product with ROOT
// (TBufferFile::WriteObjectAny through the dictionary): an event is its
// products in layout order, each as u32 size | its serialized bytes. Product p
// of entry i so, appended to `out`; products may be serialized concurrently.
void serialize_product(const ProductStore &store, std::uint64_t i, std::size_t p, std::vector<char> &out);
// The flat columns of one event serialized so (`data`: the bytes after the event number).
class ProductDecoder {
 public:
  explicit ProductDecoder(const Schema &schema);
  ~ProductDecoder();
  void decode(const char *data, std::size_t size, EntryView &view, const std::string &where);

 private:
  ProductLayout layout_;
  std::vector<std::vector<unsigned char>> scratch_;  // per product
};

}  // namespace writing

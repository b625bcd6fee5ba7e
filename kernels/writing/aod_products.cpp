#include "aod_products.hpp"

#include <TBranch.h>
#include <TBufferFile.h>
#include <TClass.h>
#include <TTree.h>

#include <cstring>
#include <stdexcept>
#include <type_traits>

#include "aod_classes.h"
#include "aod_flat.hpp"

namespace writing {

// One collection: its columns in the flat schema and the conversions, typed by
// its generated class T (ProductOf<T>).
struct ProductLayout::Product {
  virtual ~Product() = default;
  std::string name;
  TClass *cls = nullptr;
  int counter = -1;
  std::vector<int> columns;  // per value of an object (members in visit order, an array's or vector's elements in turn): its column
  virtual void build(const EntryView &flat, void *product) const = 0;
  virtual void swap(void *a, void *b) const = 0;
  virtual void flatten(const void *product, EntryView &view, std::vector<unsigned char> &scratch) const = 0;
};

namespace {

template <class M>
Type column_type() {  // the flat file's type of a member's column (bools are UChar_t there: leaf type 'b')
  if constexpr (std::is_same_v<M, Float_t>) return Type::Float;
  else if constexpr (std::is_same_v<M, Int_t>) return Type::Int32;
  else {
    static_assert(std::is_same_v<M, Bool_t>, "AOD members are Float_t, Int_t or Bool_t, or small arrays or vectors of them");
    return Type::UInt8;
  }
}

template <class T>
struct ProductOf : ProductLayout::Product {
  using Vector = std::vector<T>;
  std::vector<std::size_t> sizes;  // per value: its bytes

  ProductOf(const Schema &schema, const char *collection, int counter_column) {
    name = collection;
    counter = counter_column;
    cls = TClass::GetClass(typeid(Vector));
    if (!cls || !cls->GetCollectionProxy())
      throw std::runtime_error("no dictionary for std::vector<aod::" + name + "> (aod_classes)");
    if (schema.columns[static_cast<std::size_t>(counter)].type != Type::UInt32)
      throw std::runtime_error("column " + aod::flat_counter(name) + " is not a UInt_t counter");
    T{}.visit([&](int a, auto &member) {
      aod::for_each_value(member, a, [&](int k, auto &value) {
        using V = std::decay_t<decltype(value)>;
        const std::string column = aod::flat_branch(name, a, k);
        const int c = schema.index(column);
        if (c < 0) throw std::runtime_error("the input has no column " + column + " for aod::" + name);
        const Column &info = schema.columns[static_cast<std::size_t>(c)];
        if (info.type != column_type<V>() || info.counter != counter)
          throw std::runtime_error("column " + column + " does not hold aod::" + name + "'s member " + std::to_string(a) +
                                   " (type or counter differs)");
        columns.push_back(c);
        sizes.push_back(sizeof(V));
      });
    });
  }

  void build(const EntryView &flat, void *product) const override {
    std::uint32_t n;
    std::memcpy(&n, flat.data[static_cast<std::size_t>(counter)], 4);
    auto &objects = *static_cast<Vector *>(product);
    objects.assign(n, T{});
    for (std::uint32_t j = 0; j < n; ++j) {
      std::size_t v = 0;
      objects[j].visit([&](int a, auto &member) {
        aod::for_each_value(member, a, [&](int, auto &value) {
          const auto *values = static_cast<const unsigned char *>(flat.data[static_cast<std::size_t>(columns[v++])]);
          if constexpr (std::is_same_v<std::decay_t<decltype(value)>, Bool_t>) value = values[j] != 0;
          else std::memcpy(&value, values + j * sizeof value, sizeof value);
        });
      });
    }
  }

  void swap(void *a, void *b) const override { static_cast<Vector *>(a)->swap(*static_cast<Vector *>(b)); }

  void flatten(const void *product, EntryView &view, std::vector<unsigned char> &scratch) const override {
    auto &objects = *const_cast<Vector *>(static_cast<const Vector *>(product));  // visit() is not const; nothing changes
    const auto n = static_cast<std::uint32_t>(objects.size());
    std::vector<std::size_t> offset(sizes.size());
    std::size_t total = 4;
    for (std::size_t v = 0; v < sizes.size(); ++v) {
      offset[v] = total;
      total += n * sizes[v];
    }
    scratch.resize(total);
    std::memcpy(scratch.data(), &n, 4);
    for (std::uint32_t j = 0; j < n; ++j) {
      std::size_t v = 0;
      objects[j].visit([&](int a, auto &member) {
        aod::for_each_value(member, a, [&](int, auto &value) {
          std::memcpy(scratch.data() + offset[v++] + j * sizeof value, &value, sizeof value);
        });
      });
    }
    view.data[static_cast<std::size_t>(counter)] = scratch.data();
    view.bytes[static_cast<std::size_t>(counter)] = 4;
    for (std::size_t v = 0; v < sizes.size(); ++v) {
      view.data[static_cast<std::size_t>(columns[v])] = scratch.data() + offset[v];
      view.bytes[static_cast<std::size_t>(columns[v])] = static_cast<std::uint32_t>(n * sizes[v]);
    }
  }
};

}  // namespace

ProductLayout::ProductLayout(const Schema &schema) {
  std::vector<bool> claimed(schema.columns.size(), false);
#define AOD_PRODUCT(type, mean, attributes, pt_min)                                               \
  if (const int counter = schema.index(aod::flat_counter(#type)); counter >= 0)                   \
    products_.push_back(std::make_unique<ProductOf<aod::type>>(schema, #type, counter));
  AOD_COLLECTIONS(AOD_PRODUCT)
#undef AOD_PRODUCT
  for (const auto &p : products_) {
    claimed[static_cast<std::size_t>(p->counter)] = true;
    for (int c : p->columns) claimed[static_cast<std::size_t>(c)] = true;
  }
  for (std::size_t c = 0; c < claimed.size(); ++c)
    if (!claimed[c])
      throw std::runtime_error("column " + schema.columns[c].name + " of the input is not a member of any AOD class");
  if (products_.empty()) throw std::runtime_error("the input has no AOD-like collection (no column nPhoton, nJet, ...)");
}

ProductLayout::~ProductLayout() = default;
std::size_t ProductLayout::size() const { return products_.size(); }
const std::string &ProductLayout::name(std::size_t p) const { return products_[p]->name; }
TClass *ProductLayout::product_class(std::size_t p) const { return products_[p]->cls; }
void ProductLayout::build(std::size_t p, const EntryView &flat, void *product) const { products_[p]->build(flat, product); }
void ProductLayout::swap(std::size_t p, void *a, void *b) const { products_[p]->swap(a, b); }
void ProductLayout::flatten(std::size_t p, const void *product, EntryView &view, std::vector<unsigned char> &scratch) const {
  products_[p]->flatten(product, view, scratch);
}

// ---- ProductStore ----------------------------------------------------------------------------

ProductStore::ProductStore(std::unique_ptr<EventStore> flat) : flat_(std::move(flat)), layout_(flat_->schema()) {
  objects_.resize(layout_.size());
  EntryView view;
  std::vector<unsigned char> scratch;
  for (std::uint64_t e = 0; e < flat_->loaded(); ++e) {
    flat_->get(e, view, scratch);
    for (std::size_t p = 0; p < layout_.size(); ++p) {
      objects_[p].push_back(layout_.product_class(p)->New());
      layout_.build(p, view, objects_[p].back());
    }
  }
}

ProductStore::~ProductStore() {
  for (std::size_t p = 0; p < objects_.size(); ++p)
    for (void *object : objects_[p]) layout_.product_class(p)->Destructor(object);
}

const void *ProductStore::product(std::uint64_t i, std::size_t p) const { return objects_[p][i % loaded()]; }
void *ProductStore::lend(std::uint64_t i, std::size_t p) const { return objects_[p][i % loaded()]; }

// ---- TTree of products -------------------------------------------------------------------------

ProductTreeFiller::ProductTreeFiller(TTree &tree, const ProductStore &store) : tree_(tree), store_(store) {
  const ProductLayout &layout = store.layout();
  objects_.resize(layout.size());
  for (std::size_t p = 0; p < layout.size(); ++p) {
    objects_[p] = layout.product_class(p)->New();
    if (!tree.Branch(layout.name(p).c_str(), layout.product_class(p)->GetName(), &objects_[p], 32000, 99))
      throw std::runtime_error("cannot create the product branch " + layout.name(p));
  }
}

ProductTreeFiller::~ProductTreeFiller() {
  for (std::size_t p = 0; p < objects_.size(); ++p) store_.layout().product_class(p)->Destructor(objects_[p]);
}

Int_t ProductTreeFiller::fill(std::uint64_t i) {
  // Each branch keeps its own object, whose contents are swapped with the stored
  // product for the Fill and back (O(1): no product is copied in the timed region).
  // Pointing the branch at the stored product instead would make ROOT redo
  // SetAddress over every member sub-branch each event.
  const ProductLayout &layout = store_.layout();
  for (std::size_t p = 0; p < layout.size(); ++p) layout.swap(p, store_.lend(i, p), objects_[p]);
  const Int_t filled = tree_.Fill();
  for (std::size_t p = 0; p < layout.size(); ++p) layout.swap(p, store_.lend(i, p), objects_[p]);
  return filled;
}

Checksums product_tree_checksums(TTree &tree, const Schema &schema, const std::string &file, Long64_t begin,
                                 Long64_t end) {
  const ProductLayout layout(schema);
  std::vector<void *> objects(layout.size());
  for (std::size_t p = 0; p < layout.size(); ++p) {
    TBranch *branch = tree.GetBranch(layout.name(p).c_str());
    if (!branch) throw std::runtime_error(file + " has no product branch " + layout.name(p));
    objects[p] = layout.product_class(p)->New();
    branch->SetAddress(&objects[p]);
  }
  Checksums sums(schema);
  EntryView view;
  view.resize(schema.columns.size());
  std::vector<std::vector<unsigned char>> scratch(layout.size());
  for (Long64_t i = begin; i < end; ++i) {
    if (tree.GetEntry(i) <= 0) throw std::runtime_error(file + ": cannot read entry " + std::to_string(i));
    for (std::size_t p = 0; p < layout.size(); ++p) layout.flatten(p, objects[p], view, scratch[p]);
    sums.add(view);
  }
  tree.ResetBranchAddresses();
  for (std::size_t p = 0; p < layout.size(); ++p) layout.product_class(p)->Destructor(objects[p]);
  return sums;
}

// ---- ROOT serialization for the simple format ---------------------------------------------------

void serialize_product(const ProductStore &store, std::uint64_t i, std::size_t p, std::vector<char> &out) {
  thread_local TBufferFile buffer(TBuffer::kWrite, 1 << 16);
  buffer.Reset();
  buffer.WriteObjectAny(store.product(i, p), store.layout().product_class(p));
  const auto size = static_cast<std::uint32_t>(buffer.Length());
  const auto *bytes = reinterpret_cast<const char *>(&size);
  out.insert(out.end(), bytes, bytes + 4);
  out.insert(out.end(), buffer.Buffer(), buffer.Buffer() + size);
}

ProductDecoder::ProductDecoder(const Schema &schema) : layout_(schema), scratch_(layout_.size()) {}
ProductDecoder::~ProductDecoder() = default;

void ProductDecoder::decode(const char *data, std::size_t size, EntryView &view, const std::string &where) {
  std::size_t pos = 0;
  for (std::size_t p = 0; p < layout_.size(); ++p) {
    std::uint32_t length;
    if (pos + 4 > size) throw std::runtime_error(where + " ends before its product " + layout_.name(p));
    std::memcpy(&length, data + pos, 4);
    pos += 4;
    if (pos + length > size) throw std::runtime_error(where + ": product " + layout_.name(p) + " is cut short");
    TBufferFile in(TBuffer::kRead, static_cast<Int_t>(length), const_cast<char *>(data + pos), kFALSE);
    void *object = in.ReadObjectAny(layout_.product_class(p));
    if (!object || in.Length() != static_cast<Int_t>(length))
      throw std::runtime_error(where + ": product " + layout_.name(p) + " does not deserialize to its bytes");
    layout_.flatten(p, object, view, scratch_[p]);
    layout_.product_class(p)->Destructor(object);
    pos += length;
  }
  if (pos != size) throw std::runtime_error(where + " has bytes beyond its products");
}

}  // namespace writing

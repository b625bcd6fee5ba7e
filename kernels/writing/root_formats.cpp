#include "root_formats.hpp"

#include <ROOT/RVec.hxx>
#include <ROOT/RField.hxx>
#include <TBranch.h>
#include <TFile.h>
#include <TLeaf.h>

#include <fnmatch.h>

#include <set>
#include <stdexcept>

namespace writing {

namespace {

TLeaf *only_leaf(TBranch &branch, const std::string &file) {
  auto *leaves = branch.GetListOfLeaves();
  if (leaves->GetEntries() != 1)
    throw std::invalid_argument("branch '" + std::string(branch.GetName()) + "' in " + file + " has " +
                                std::to_string(leaves->GetEntries()) + " leaves; only one leaf per branch is supported");
  return static_cast<TLeaf *>(leaves->At(0));
}

// Whether `name` matches one of `patterns`; marks which patterns matched.
bool matches(const std::string &name, const std::vector<std::string> &patterns, std::vector<bool> &used) {
  bool any = false;
  for (std::size_t i = 0; i < patterns.size(); ++i)
    if (fnmatch(patterns[i].c_str(), name.c_str(), 0) == 0) any = used[i] = true;
  return any;
}

}  // namespace

// ---- reading TTrees ---------------------------------------------------------------------------

Schema schema_from_tree(TTree &tree, const std::vector<std::string> &patterns, const std::string &file) {
  struct Found {
    std::string name, counter;
    Type type;
  };
  std::vector<Found> found;
  std::set<std::string> counters;
  std::vector<bool> used(patterns.size(), false);
  for (auto *object : *tree.GetListOfBranches()) {
    auto *branch = static_cast<TBranch *>(object);
    const std::string name = branch->GetName();
    if (!matches(name, patterns, used)) continue;
    TLeaf *leaf = only_leaf(*branch, file);
    if (leaf->GetLenStatic() != 1)
      throw std::invalid_argument("branch '" + name + "' in " + file + " is a fixed-size array; not supported");
    std::string counter;
    if (TLeaf *count = leaf->GetLeafCount()) {
      counter = count->GetBranch()->GetName();
      counters.insert(counter);
    }
    found.push_back({name, counter, type_from_root(leaf->GetTypeName(), name)});
  }
  if (patterns.empty()) throw std::invalid_argument("--branches names no pattern");
  for (std::size_t i = 0; i < patterns.size(); ++i)
    if (!used[i])
      throw std::invalid_argument("no branch of tree '" + std::string(tree.GetName()) + "' in " + file +
                                  " matches --branches pattern '" + patterns[i] + "'");
  Schema schema;
  // Counters first (including those of matched arrays that were not matched themselves).
  for (auto *object : *tree.GetListOfBranches()) {
    const std::string name = static_cast<TBranch *>(object)->GetName();
    if (!counters.count(name)) continue;
    TLeaf *leaf = only_leaf(*static_cast<TBranch *>(object), file);
    if (leaf->GetLeafCount()) throw std::invalid_argument("counter branch '" + name + "' in " + file + " is itself an array");
    schema.columns.push_back({name, type_from_root(leaf->GetTypeName(), name), -1, 1});
  }
  for (const auto &f : found) {
    if (counters.count(f.name)) continue;
    const int counter = f.counter.empty() ? -1 : schema.index(f.counter);
    schema.columns.push_back({f.name, f.type, counter, 1});
  }
  return schema;
}

TreeScanner::TreeScanner(TTree &tree, const Schema &schema, const std::string &file) : tree_(tree), file_(file) {
  tree.SetBranchStatus("*", false);
  for (const auto &column : schema.columns) {
    TBranch *branch = tree.GetBranch(column.name.c_str());
    if (!branch) throw std::runtime_error("tree '" + std::string(tree.GetName()) + "' in " + file + " has no branch '" + column.name + "'");
    TLeaf *leaf = only_leaf(*branch, file);
    if (type_from_root(leaf->GetTypeName(), column.name) != column.type)
      throw std::runtime_error("branch '" + column.name + "' in " + file + " has type " + leaf->GetTypeName() +
                               ", expected another");
    tree.SetBranchStatus(column.name.c_str(), true);
    leaves_.push_back(leaf);
    sizes_.push_back(type_size(column.type));
  }
}

void TreeScanner::read(Long64_t i, EntryView &view) {
  if (tree_.GetEntry(i) <= 0)
    throw std::runtime_error("cannot read entry " + std::to_string(i) + " of tree '" + tree_.GetName() + "' in " + file_);
  if (view.data.size() != leaves_.size()) view.resize(leaves_.size());
  for (std::size_t c = 0; c < leaves_.size(); ++c) {
    view.data[c] = leaves_[c]->GetValuePointer();
    view.bytes[c] = static_cast<std::uint32_t>(leaves_[c]->GetLen() * sizes_[c]);
  }
}

Checksums tree_checksums(TTree &tree, const Schema &schema, const std::string &file, Long64_t begin, Long64_t end) {
  TreeScanner scanner(tree, schema, file);
  Checksums sums(schema);
  EntryView view;
  for (Long64_t i = begin; i < end; ++i) {
    scanner.read(i, view);
    sums.add(view);
  }
  return sums;
}

// ---- events in memory -------------------------------------------------------------------------

EventStore::EventStore(const std::vector<std::string> &files, const std::string &tree_name,
                       const std::vector<std::string> &patterns, std::uint64_t max_events, std::uint64_t entries)
    : entries_(entries) {
  if (files.empty()) throw std::invalid_argument("--inputs names no file");
  for (const auto &file : files) {
    if (loaded() >= max_events) break;
    std::unique_ptr<TFile> in(TFile::Open(file.c_str(), "READ"));
    if (!in || in->IsZombie()) throw std::runtime_error("cannot open input file " + file);
    auto *tree = in->Get<TTree>(tree_name.c_str());
    if (!tree) throw std::runtime_error("input file " + file + " has no tree '" + tree_name + "'");
    Schema here = schema_from_tree(*tree, patterns, file);
    if (schema_.columns.empty()) {
      schema_ = here;
      data_.resize(schema_.columns.size());
      offsets_.assign(schema_.columns.size(), std::vector<std::uint64_t>{0});
    } else if (!schema_.same_layout(here)) {
      throw std::runtime_error("input file " + file + " has other branches than " + files.front());
    }
    TreeScanner scanner(*tree, schema_, file);
    EntryView view;
    for (Long64_t i = 0, n = tree->GetEntries(); i < n && loaded() < max_events; ++i) {
      scanner.read(i, view);
      for (std::size_t c = 0; c < data_.size(); ++c) {
        const auto *p = static_cast<const unsigned char *>(view.data[c]);
        data_[c].insert(data_[c].end(), p, p + view.bytes[c]);
        offsets_[c].push_back(data_[c].size());
        auto &column = schema_.columns[c];
        column.max_count = std::max<std::uint32_t>(column.max_count, view.bytes[c] / type_size(column.type));
      }
    }
  }
  if (loaded() == 0) throw std::runtime_error("the input files hold no events");
}

double EventStore::mean_entry_bytes() const {
  std::uint64_t total = 0;
  for (const auto &d : data_) total += d.size();
  return static_cast<double>(total) / static_cast<double>(loaded());
}

void EventStore::get(std::uint64_t i, EntryView &view, std::vector<unsigned char> &) const {
  const std::uint64_t e = i % loaded();
  if (view.data.size() != data_.size()) view.resize(data_.size());
  for (std::size_t c = 0; c < data_.size(); ++c) {
    view.data[c] = data_[c].data() + offsets_[c][e];
    view.bytes[c] = static_cast<std::uint32_t>(offsets_[c][e + 1] - offsets_[c][e]);
  }
}

// ---- writing TTrees ---------------------------------------------------------------------------

TreeFiller::TreeFiller(TTree &tree, const Schema &schema) : tree_(tree) {
  for (const auto &column : schema.columns) {
    buffers_.emplace_back(type_size(column.type) * std::max<std::uint32_t>(1, column.max_count));
    std::string leaflist = column.name;
    if (column.jagged()) leaflist += "[" + schema.columns[column.counter].name + "]";
    leaflist += std::string("/") + leaf_code(column.type);
    if (!tree.Branch(column.name.c_str(), buffers_.back().data(), leaflist.c_str()))
      throw std::runtime_error("cannot create branch " + leaflist);
  }
}

Int_t TreeFiller::fill(const EntryView &view) {
  for (std::size_t c = 0; c < buffers_.size(); ++c) {
    if (view.bytes[c] > buffers_[c].size())
      throw std::runtime_error("entry has more values than the branch buffer of column " + std::to_string(c) + " holds");
    std::memcpy(buffers_[c].data(), view.data[c], view.bytes[c]);
  }
  return tree_.Fill();
}

// ---- RNTuple ----------------------------------------------------------------------------------

std::unique_ptr<ROOT::RNTupleModel> make_model(const Schema &schema) {
  // Bare: the parallel writer clones the model for every fill context, and
  // each context makes its own entry.
  auto model = ROOT::RNTupleModel::CreateBare();
  for (const auto &column : schema.columns) {
    dispatch(column.type, [&](auto tag) {
      using T = decltype(tag);
      if (column.jagged())
        model->AddField(std::make_unique<ROOT::RField<ROOT::RVec<T>>>(column.name));
      else
        model->AddField(std::make_unique<ROOT::RField<T>>(column.name));
    });
  }
  return model;
}

NTupleFiller::NTupleFiller(ROOT::RNTupleFillContext &context, const Schema &schema)
    : context_(context), schema_(schema), entry_(context.CreateEntry()) {
  for (const auto &column : schema.columns) values_.push_back(entry_->GetPtr<void>(column.name).get());
}

std::size_t NTupleFiller::fill(const EntryView &view) {
  for (std::size_t c = 0; c < values_.size(); ++c) {
    const Column &column = schema_.columns[c];
    if (!column.jagged()) {
      std::memcpy(values_[c], view.data[c], view.bytes[c]);
      continue;
    }
    dispatch(column.type, [&](auto tag) {
      using T = decltype(tag);
      auto *values = static_cast<ROOT::RVec<T> *>(values_[c]);
      values->resize(view.bytes[c] / sizeof(T));
      if (view.bytes[c]) std::memcpy(static_cast<void *>(values->data()), view.data[c], view.bytes[c]);
    });
  }
  return context_.Fill(*entry_);
}

Checksums ntuple_checksums(ROOT::RNTupleReader &reader, const Schema &schema, const std::string &file,
                           std::uint64_t begin, std::uint64_t end) {
  auto entry = reader.GetModel().CreateEntry();
  std::vector<void *> values;
  for (const auto &column : schema.columns) {
    if (entry->GetTypeName(column.name).empty())
      throw std::runtime_error("RNTuple in " + file + " has no field '" + column.name + "'");
    values.push_back(entry->GetPtr<void>(column.name).get());
  }
  Checksums sums(schema);
  EntryView view;
  view.resize(values.size());
  for (ROOT::NTupleSize_t i = begin; i < end; ++i) {
    reader.LoadEntry(i, *entry);
    for (std::size_t c = 0; c < values.size(); ++c) {
      const Column &column = schema.columns[c];
      if (!column.jagged()) {
        view.data[c] = values[c];
        view.bytes[c] = static_cast<std::uint32_t>(type_size(column.type));
        continue;
      }
      dispatch(column.type, [&](auto tag) {
        using T = decltype(tag);
        const auto *v = static_cast<const ROOT::RVec<T> *>(values[c]);
        view.data[c] = v->data();
        view.bytes[c] = static_cast<std::uint32_t>(v->size() * sizeof(T));
      });
    }
    sums.add(view);
  }
  return sums;
}

}  // namespace writing

// What every writer of the writing experiment (seeds 001 and 003) shares: the
// column layout of an entry, a view of one entry's bytes, where entries come
// from (random doubles or NanoAOD-like events held in memory), and an
// order-independent checksum of every column.
//
// An entry is a list of columns. A column is a scalar of one of the types
// below, or a variable-length array of them whose length is the value of a
// scalar "counter" column of the same entry (NanoAOD's nJet / Jet_pt[nJet]).
// Counters always come before the arrays they count.
//
// Checksums: for each column, the sum (mod 2^64) over entries of a 64-bit
// hash of that column's bytes in that entry. A sum does not depend on the
// order of the entries, which TBufferMerger and RNTupleParallelWriter do not
// keep, but does change if an entry is lost, duplicated or altered.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace writing {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the simple format is defined as little-endian");

enum class Type : std::uint8_t { Bool = 1, UInt8 = 2, Int32 = 3, UInt32 = 4, UInt64 = 5, Float = 6, Double = 7 };

inline std::size_t type_size(Type t) {
  switch (t) {
    case Type::Bool:
    case Type::UInt8: return 1;
    case Type::Int32:
    case Type::UInt32:
    case Type::Float: return 4;
    case Type::UInt64:
    case Type::Double: return 8;
  }
  throw std::invalid_argument("unknown column type code " + std::to_string(static_cast<int>(t)));
}

// The TTree leaf-list type letter of each type.
inline char leaf_code(Type t) {
  switch (t) {
    case Type::Bool: return 'O';
    case Type::UInt8: return 'b';
    case Type::Int32: return 'I';
    case Type::UInt32: return 'i';
    case Type::UInt64: return 'l';
    case Type::Float: return 'F';
    case Type::Double: return 'D';
  }
  throw std::invalid_argument("unknown column type code " + std::to_string(static_cast<int>(t)));
}

// From a TLeaf's type name (what TLeaf::GetTypeName returns).
inline Type type_from_root(const std::string &name, const std::string &branch) {
  if (name == "Bool_t") return Type::Bool;
  if (name == "UChar_t") return Type::UInt8;
  if (name == "Int_t") return Type::Int32;
  if (name == "UInt_t") return Type::UInt32;
  if (name == "ULong64_t") return Type::UInt64;
  if (name == "Float_t") return Type::Float;
  if (name == "Double_t") return Type::Double;
  throw std::invalid_argument("branch '" + branch + "' has leaf type " + name +
                              ", which the writing benchmark does not support");
}

// Calls f(T{}) with the C++ type of t: one switch for every type-generic writer and reader.
template <class F>
decltype(auto) dispatch(Type t, F &&f) {
  switch (t) {
    case Type::Bool: return f(bool{});
    case Type::UInt8: return f(std::uint8_t{});
    case Type::Int32: return f(std::int32_t{});
    case Type::UInt32: return f(std::uint32_t{});
    case Type::UInt64: return f(std::uint64_t{});
    case Type::Float: return f(float{});
    case Type::Double: return f(double{});
  }
  throw std::invalid_argument("unknown column type code " + std::to_string(static_cast<int>(t)));
}

struct Column {
  std::string name;
  Type type;
  int counter = -1;             // index of the counter column; -1 for a scalar
  std::uint32_t max_count = 1;  // the largest number of values in any entry (buffers are this big)
  bool jagged() const { return counter >= 0; }
};

struct Schema {
  std::vector<Column> columns;
  int index(const std::string &name) const {
    for (std::size_t i = 0; i < columns.size(); ++i)
      if (columns[i].name == name) return static_cast<int>(i);
    return -1;
  }
  bool same_layout(const Schema &other) const {
    if (columns.size() != other.columns.size()) return false;
    for (std::size_t i = 0; i < columns.size(); ++i)
      if (columns[i].name != other.columns[i].name || columns[i].type != other.columns[i].type ||
          columns[i].counter != other.columns[i].counter)
        return false;
    return true;
  }
};

// One entry: where each column's bytes are and how many there are.
struct EntryView {
  std::vector<const void *> data;
  std::vector<std::uint32_t> bytes;
  void resize(std::size_t n) {
    data.assign(n, nullptr);
    bytes.assign(n, 0);
  }
  std::uint64_t total_bytes() const {
    std::uint64_t sum = 0;
    for (auto b : bytes) sum += b;
    return sum;
  }
};

// ---- checksums ---------------------------------------------------------------------------------

inline std::uint64_t mix64(std::uint64_t z) {  // splitmix64's finaliser
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

inline std::uint64_t hash_bytes(const void *data, std::size_t n, std::uint64_t salt) {
  const auto *p = static_cast<const unsigned char *>(data);
  std::uint64_t h = mix64(salt ^ (0x100000001b3ULL * (n + 1)));
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = mix64(h ^ w);
  }
  if (i < n) {
    std::uint64_t w = 0;
    std::memcpy(&w, p + i, n - i);
    h = mix64(h ^ w ^ 0xff00000000000000ULL);
  }
  return h;
}

inline std::uint64_t name_salt(const std::string &name) { return hash_bytes(name.data(), name.size(), 0x5eed); }

class Checksums {
 public:
  Checksums() = default;
  explicit Checksums(const Schema &schema) : sums_(schema.columns.size(), 0) {
    for (const auto &c : schema.columns) salts_.push_back(name_salt(c.name));
  }
  void add(const EntryView &entry) {
    for (std::size_t c = 0; c < sums_.size(); ++c) sums_[c] += hash_bytes(entry.data[c], entry.bytes[c], salts_[c]);
    ++entries_;
  }
  void merge(const Checksums &other) {
    if (sums_.empty()) {
      *this = other;
      return;
    }
    for (std::size_t c = 0; c < sums_.size(); ++c) sums_[c] += other.sums_[c];
    entries_ += other.entries_;
  }
  std::uint64_t entries() const { return entries_; }
  const std::vector<std::uint64_t> &columns() const { return sums_; }
  // One value for all columns and the entry count, as 16 hex digits.
  std::string digest() const {
    std::uint64_t d = mix64(entries_);
    for (auto s : sums_) d = mix64(d ^ s);
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(d));
    return text;
  }
  // Every column's sum as 16 hex digits, comma-separated, in schema order.
  std::string column_hex() const {
    std::string text;
    char sum[17];
    for (auto s : sums_) {
      std::snprintf(sum, sizeof sum, "%016llx", static_cast<unsigned long long>(s));
      if (!text.empty()) text += ',';
      text += sum;
    }
    return text;
  }
  // The first column whose sum differs, or -1 (columns compared by position).
  int first_difference(const Checksums &other) const {
    for (std::size_t c = 0; c < sums_.size() && c < other.sums_.size(); ++c)
      if (sums_[c] != other.sums_[c]) return static_cast<int>(c);
    return sums_.size() == other.sums_.size() ? -1 : static_cast<int>(std::min(sums_.size(), other.sums_.size()));
  }

 private:
  std::vector<std::uint64_t> sums_, salts_;
  std::uint64_t entries_ = 0;
};

// ---- where entries come from ---------------------------------------------------------------------

class EntrySource {
 public:
  virtual ~EntrySource() = default;
  virtual const Schema &schema() const = 0;
  virtual std::uint64_t entries() const = 0;
  // Entry i as a view; `scratch` is the caller's (per-thread) space for values made on the fly.
  virtual void get(std::uint64_t i, EntryView &view, std::vector<unsigned char> &scratch) const = 0;
  // Bytes of one entry's values, before any compression (for the random workload, a constant).
  virtual double mean_entry_bytes() const = 0;
};

// Seed 003's workload: `columns` double branches of uniform random numbers in
// [0, 1). Value (i, c) is a pure function of the seed, the entry and the
// column, so any thread can make any entry and a read-back can be checked.
class RandomSource : public EntrySource {
 public:
  RandomSource(std::uint64_t entries, int columns, std::uint64_t seed) : entries_(entries), seed_(seed) {
    if (columns < 1) throw std::invalid_argument("--branches must be >= 1");
    for (int c = 0; c < columns; ++c) schema_.columns.push_back({"random" + std::to_string(c), Type::Double, -1, 1});
  }
  const Schema &schema() const override { return schema_; }
  std::uint64_t entries() const override { return entries_; }
  double mean_entry_bytes() const override { return 8.0 * schema_.columns.size(); }
  static double value(std::uint64_t seed, std::uint64_t i, std::uint64_t c) {
    const std::uint64_t bits = mix64(mix64(seed * 0x9e3779b97f4a7c15ULL + i) ^ (c * 0xbf58476d1ce4e5b9ULL));
    return static_cast<double>(bits >> 11) * 0x1.0p-53;
  }
  void get(std::uint64_t i, EntryView &view, std::vector<unsigned char> &scratch) const override {
    const std::size_t n = schema_.columns.size();
    if (view.data.size() != n) view.resize(n);
    scratch.resize(8 * n);
    for (std::size_t c = 0; c < n; ++c) {
      const double v = value(seed_, i, c);
      std::memcpy(scratch.data() + 8 * c, &v, 8);
      view.data[c] = scratch.data() + 8 * c;
      view.bytes[c] = 8;
    }
  }

 private:
  Schema schema_;
  std::uint64_t entries_, seed_;
};

// Checksums and total bytes of entries [0, n) of a source, computed with `threads` threads.
struct Expected {
  Checksums checksums;
  std::uint64_t bytes = 0;
};
Expected expected_checksums(const EntrySource &source, std::uint64_t n, int threads);

}  // namespace writing

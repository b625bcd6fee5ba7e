// A synthetic "AOD-like" file with seed 000's particle types, multiplicities
// and attribute counts (its Table 1):
//   photon 2.9 per event / 205 attributes, electron 2.5 / 231, muon 2.7 / 192,
//   tau 6.3 / 88, jet 16.7 / 95, AK8 jet ("FatJet") 1.8 / 95
// (the table is kernels/common/aod_classes.cmake's, from which the classes are generated).
// Two layouts of the same values:
//   --layout flat     each collection C as NanoAOD writes it, one leaf-list
//                     branch per attribute: a counter nC (UInt_t), C_pt[nC]/F
//                     and the other attributes C_a001...; a small array is
//                     one branch per element, C_a014_0, C_a014_1, C_a014_2,
//                     as NanoAOD flattens them (its Muon_pfRelIso03_all and
//                     Muon_pfRelIso04_all are two isolation cones; ROOT 6.40's
//                     RNTupleImporter also crashes on a C_a014[nC][3] leaf);
//   --layout objects  each collection as CMS AOD stores its products: a
//                     std::vector<aod::C> of the generated classes, written
//                     through their ROOT dictionary and split one sub-branch
//                     per member (C.pt, C.a001, ...; the count is branch C).
// The multiplicity of each event is Poisson-distributed around the
// seed's mean; the pT follows a falling power law above a threshold and is
// sorted, and the other attributes cycle through value kinds with realistic
// compressibility: angles, energies, fractions stored with 12 bits of
// precision (as NanoAOD does), small integer flags, booleans, isolations with
// many exact zeros (every other one a small array: the sums in three cone
// sizes, growing with the cone), and object indices.
//
// Written to OUTPUT.tmp, renamed when complete, then reread: entries and the
// sum of every counter must match what was generated.
#include <TFile.h>
#include <TTree.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "aod_classes.h"
#include "aod_flat.hpp"
#include "bench.hpp"
#include "root_io.hpp"

namespace {

struct CollectionSpec {
  const char *name;
  double mean;     // particles per event (seed 000, Table 1)
  int attributes;  // branches per collection, pT included (seed 000, Table 1)
  float pt_min;    // GeV
};

const CollectionSpec kCollections[] = {
#define AOD_SPEC(type, mean, attributes, pt_min) {#type, mean, attributes, pt_min},
    AOD_COLLECTIONS(AOD_SPEC)
#undef AOD_SPEC
};

enum Kind { kEta, kPhi, kEnergy, kFraction, kFlags, kBool, kIsolation, kIndex, kKinds };

struct Collection {
  CollectionSpec spec{};
  int max_count = 0;
  UInt_t n = 0;
  std::vector<float> pt;
  std::vector<std::vector<float>> floats;          // per float attribute: element k of particle j at k * max_count + j
  std::vector<int> float_widths;                   // per float attribute: aod::attribute_width
  std::vector<std::vector<Int_t>> ints;            // per int attribute
  std::vector<std::vector<UChar_t>> bools;         // per boolean attribute
  std::vector<Kind> float_kinds, int_kinds;
  std::vector<int> slot;  // per attribute: its index in floats, ints or bools

  // Sets `member` (the generated class's member for attribute a) to particle j's value(s).
  template <class M>
  void set(M &member, int a, UInt_t j) const {
    if constexpr (std::is_array_v<M>)
      for (std::size_t k = 0; k < std::extent_v<M>; ++k) member[k] = floats[slot[a]][k * static_cast<std::size_t>(max_count) + j];
    else if (a == 0) member = pt[j];
    else if constexpr (std::is_same_v<M, Float_t>) member = floats[slot[a]][j];
    else if constexpr (std::is_same_v<M, Int_t>) member = ints[slot[a]][j];
    else member = bools[slot[a]][j] != 0;
  }
};

bool is_int(Kind kind) { return kind == kFlags || kind == kIndex; }

// Sizes every value vector (they must not move once a flat branch holds their data).
void allocate(Collection &c) {
  const std::size_t size = static_cast<std::size_t>(c.max_count);
  c.pt.assign(size, 0.f);
  c.slot.assign(static_cast<std::size_t>(c.spec.attributes), -1);
  for (int a = 1; a < c.spec.attributes; ++a) {
    const Kind kind = static_cast<Kind>(a % kKinds);
    if (is_int(kind)) {
      c.slot[a] = static_cast<int>(c.ints.size());
      c.ints.emplace_back(size);
      c.int_kinds.push_back(kind);
    } else if (kind == kBool) {
      c.slot[a] = static_cast<int>(c.bools.size());
      c.bools.emplace_back(size);
    } else {
      c.slot[a] = static_cast<int>(c.floats.size());
      c.floats.emplace_back(size * static_cast<std::size_t>(aod::attribute_width(a)));
      c.float_kinds.push_back(kind);
      c.float_widths.push_back(aod::attribute_width(a));
    }
  }
}

void make_flat_branches(TTree &tree, Collection &c) {
  const std::string name = c.spec.name, counter = aod::flat_counter(name), count = "[" + counter + "]";
  tree.Branch(counter.c_str(), &c.n, (counter + "/i").c_str());
  const std::string pt = aod::flat_branch(name, 0);
  tree.Branch(pt.c_str(), c.pt.data(), (pt + count + "/F").c_str());
  for (int a = 1; a < c.spec.attributes; ++a) {
    const Kind kind = static_cast<Kind>(a % kKinds);
    const std::string branch = aod::flat_branch(name, a);
    if (is_int(kind))
      tree.Branch(branch.c_str(), c.ints[c.slot[a]].data(), (branch + count + "/I").c_str());
    else if (kind == kBool)
      tree.Branch(branch.c_str(), c.bools[c.slot[a]].data(), (branch + count + "/b").c_str());
    else if (const int width = aod::attribute_width(a); width > 1)
      for (int k = 0; k < width; ++k) {
        const std::string element = aod::flat_branch(name, a, k);
        tree.Branch(element.c_str(), c.floats[c.slot[a]].data() + k * c.max_count, (element + count + "/F").c_str());
      }
    else
      tree.Branch(branch.c_str(), c.floats[c.slot[a]].data(), (branch + count + "/F").c_str());
  }
}

// One collection of the objects layout: its std::vector<aod::Type>, filled
// from the generated values each event, in a branch split one sub-branch per
// member (split level 99, as CMSSW's products).
struct ObjectBranch {
  virtual ~ObjectBranch() = default;
  virtual void fill(const Collection &c) = 0;
};

template <class T>
struct ObjectBranchOf : ObjectBranch {
  std::vector<T> objects;
  std::vector<T> *address = &objects;
  ObjectBranchOf(TTree &tree, const char *name) {
    // The members' types come from aod_classes.cmake's AOD_KIND_TYPES, the values' from
    // Kind here: a drift between the two would read the wrong value vector.
    T{}.visit([&](int a, auto &member) {
      using M = std::remove_reference_t<decltype(member)>;
      using E = std::remove_all_extents_t<M>;
      const Kind kind = static_cast<Kind>(a % kKinds);
      const bool agrees = (std::is_array_v<M> ? std::extent_v<M> : 1) == static_cast<std::size_t>(aod::attribute_width(a)) &&
                          (a == 0 ? std::is_same_v<E, Float_t>
                           : is_int(kind) ? std::is_same_v<E, Int_t>
                           : kind == kBool ? std::is_same_v<E, Bool_t> : std::is_same_v<E, Float_t>);
      if (!agrees)
        throw std::logic_error(std::string(name) + " attribute " + std::to_string(a) +
                               ": aod_classes.cmake's member type does not match make_aod_like's value kind");
    });
    if (!tree.Branch(name, &address, 32000, 99))
      throw std::runtime_error(std::string("cannot create the object branch ") + name + " (no dictionary?)");
  }
  void fill(const Collection &c) override {
    objects.assign(c.n, T{});
    for (UInt_t j = 0; j < c.n; ++j)
      objects[j].visit([&](int a, auto &member) { c.set(member, a, j); });
  }
};

std::unique_ptr<ObjectBranch> make_object_branch(TTree &tree, const std::string &name) {
#define AOD_BRANCH(type, mean, attributes, pt_min) \
  if (name == #type) return std::make_unique<ObjectBranchOf<aod::type>>(tree, #type);
  AOD_COLLECTIONS(AOD_BRANCH)
#undef AOD_BRANCH
  throw std::logic_error("no generated class for collection " + name);
}

class Generator {
 public:
  explicit Generator(std::uint64_t seed) : rng_(seed) {}

  void fill(Collection &c) {
    std::poisson_distribution<int> multiplicity(c.spec.mean);
    c.n = static_cast<UInt_t>(std::min(multiplicity(rng_), c.max_count));
    // pT: power law above the threshold (dN/dpT ~ pT^-4), sorted descending.
    for (UInt_t j = 0; j < c.n; ++j)
      c.pt[j] = c.spec.pt_min * static_cast<float>(std::pow(1.0 - uniform_(rng_), -1.0 / 3.0));
    std::sort(c.pt.begin(), c.pt.begin() + c.n, [](float a, float b) { return a > b; });
    for (std::size_t a = 0; a < c.floats.size(); ++a) {
      const auto max = static_cast<std::size_t>(c.max_count);
      for (std::size_t k = 0; k < static_cast<std::size_t>(c.float_widths[a]); ++k)
        for (UInt_t j = 0; j < c.n; ++j)  // an array's values grow with k (sums in growing cones)
          c.floats[a][k * max + j] = (k ? c.floats[a][(k - 1) * max + j] : 0.f) + float_value(c.float_kinds[a], c.pt[j]);
    }
    for (std::size_t a = 0; a < c.ints.size(); ++a)
      for (UInt_t j = 0; j < c.n; ++j) c.ints[a][j] = int_value(c.int_kinds[a], c.n);
    for (auto &values : c.bools)
      for (UInt_t j = 0; j < c.n; ++j) values[j] = uniform_(rng_) < 0.8 ? 1 : 0;
  }

 private:
  float float_value(Kind kind, float pt) {
    switch (kind) {
      case kEta: return static_cast<float>(gauss_(rng_) * 1.4);
      case kPhi: return static_cast<float>((2 * uniform_(rng_) - 1) * M_PI);
      case kEnergy: return pt * static_cast<float>(1.0 + exponential_(rng_) * 0.5);
      case kFraction: return std::round(static_cast<float>(uniform_(rng_)) * 4096.f) / 4096.f;
      case kIsolation: return uniform_(rng_) < 0.3 ? 0.f : static_cast<float>(exponential_(rng_) * 2.0);
      default: return 0.f;
    }
  }
  Int_t int_value(Kind kind, UInt_t n) {
    if (kind == kFlags) return std::poisson_distribution<Int_t>(2.0)(rng_);
    const Int_t index = static_cast<Int_t>(uniform_(rng_) * (n + 1)) - 1;  // -1: no partner
    return index;
  }
  std::mt19937_64 rng_;
  std::uniform_real_distribution<double> uniform_{0.0, 1.0};
  std::normal_distribution<double> gauss_{0.0, 1.0};
  std::exponential_distribution<double> exponential_{1.0};
};

// The counters read back: nC of the flat layout, or the split branch C itself
// read as its count (MakeClass mode: no objects built).
long long counter_sum(TTree &tree, bool objects) {
  tree.SetBranchStatus("*", false);
  if (objects) tree.SetMakeClass(1);
  std::vector<UInt_t> n(std::size(kCollections));
  for (std::size_t k = 0; k < n.size(); ++k) {
    const std::string counter = objects ? kCollections[k].name : aod::flat_counter(kCollections[k].name);
    if (!tree.GetBranch(counter.c_str())) return -1;
    tree.SetBranchStatus(counter.c_str(), true);
    tree.SetBranchAddress(counter.c_str(), &n[k]);
  }
  long long sum = 0;
  for (Long64_t i = 0; i < tree.GetEntries(); ++i) {
    if (tree.GetEntry(i) <= 0) return -1;
    for (UInt_t v : n) sum += v;
  }
  return sum;
}

}  // namespace

int main(int argc, char **argv) {
  return bench::guarded_main("make_aod_like", [&] {
    bench::Options opt(argc, argv,
                       {{"output", ""}, {"events", "1000"}, {"seed", "1"}, {"compression", "ZLIB"}, {"level", "1"},
                        {"layout", "flat"}});
    if (opt.build_info()) {
      bench::print_build_info("make_aod_like");
      return 0;
    }
    const std::string output = opt.str("output");
    if (output.empty()) throw std::invalid_argument("--output is required");
    const long long events = opt.integer("events", 1);
    const std::string layout = opt.str("layout");
    if (layout != "flat" && layout != "objects")
      throw std::invalid_argument("--layout " + layout + ": one of flat, objects");
    const bool objects = layout == "objects";
    const int settings =
        bench::compression_settings(opt.str("compression"), static_cast<int>(opt.integer("level", 0)));

    std::vector<Collection> collections;
    for (const auto &spec : kCollections) {
      collections.emplace_back();
      collections.back().spec = spec;
      collections.back().max_count = static_cast<int>(4 * spec.mean) + 30;
    }

    bench::TemporaryOutput target(output);
    long long generated = 0;
    {
      std::unique_ptr<TFile> out(TFile::Open(target.temporary().c_str(), "RECREATE", "", settings));
      if (!out || out->IsZombie()) throw std::runtime_error("cannot create output file " + target.temporary());
      TTree tree("Events", "AOD-like events (seed 000's particle types, multiplicities and attribute counts)");
      std::vector<std::unique_ptr<ObjectBranch>> object_branches;
      for (auto &c : collections) {
        allocate(c);
        if (objects) object_branches.push_back(make_object_branch(tree, c.spec.name));
        else make_flat_branches(tree, c);
      }
      Generator generator(static_cast<std::uint64_t>(opt.integer("seed", 0)));
      const long long step = std::max(1LL, events / 100);
      for (long long i = 0; i < events; ++i) {
        for (std::size_t k = 0; k < collections.size(); ++k) {
          generator.fill(collections[k]);
          if (objects) object_branches[k]->fill(collections[k]);
          generated += collections[k].n;
        }
        if (tree.Fill() <= 0) throw std::runtime_error("writing event " + std::to_string(i) + " to " + output + " failed");
        if ((i + 1) % step == 0 || i + 1 == events)
          bench::JsonLine().add("record", "progress").add("done", i + 1).add("total", events).print();
      }
      tree.Write();
      out->Close();
    }
    target.commit();

    std::unique_ptr<TFile> check(TFile::Open(output.c_str(), "READ"));
    auto *tree = check ? check->Get<TTree>("Events") : nullptr;
    const long long read_back = tree ? counter_sum(*tree, objects) : -1;
    const bool ok = tree && tree->GetEntries() == events && read_back == generated;
    bench::JsonLine()
        .add("record", "validation")
        .add("ok", ok)
        .add("events", static_cast<long long>(tree ? tree->GetEntries() : 0))
        .add("branches", static_cast<long long>(tree ? tree->GetListOfBranches()->GetEntries() : 0))
        .add("particles", generated)
        .add("checksum", static_cast<double>(read_back))
        .add("file_bytes", static_cast<long long>(check ? check->GetSize() : 0))
        .add("compression_settings", settings)
        .add("layout", layout)
        .print();
    if (!ok) {
      std::fprintf(stderr, "make_aod_like: %s does not read back as written\n", output.c_str());
      return 3;
    }
    return 0;
  });
}

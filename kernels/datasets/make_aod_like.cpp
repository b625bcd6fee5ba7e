// A "MiniAOD-like" file: seed 000's Table 1 was measured on MiniAOD PAT objects (its
// analyzer, femtoCode-metrics cmssw/Demo/CraptasticAnalyzer, reads slimmedPhotons,
// slimmedElectrons, slimmedMuons, slimmedTaus, slimmedJets, slimmedJetsAK8), with its
// particle types, multiplicities and attribute counts:
//   photon 2.9 per event / 205 attributes, electron 2.5 / 231, muon 2.7 / 192,
//   tau 6.3 / 88, jet 16.7 / 95, AK8 jet ("FatJet") 1.8 / 95
// (the table is kernels/common/aod_classes.cmake's, from which the classes are generated).
// Two layouts of the same values:
//   --layout flat     each collection C as NanoAOD writes it, one leaf-list
//                     branch per attribute: a counter nC (UInt_t), C_pt[nC]/F
//                     and the other attributes C_a001...; a small array is
//                     one branch per element, C_a030_0, C_a030_1, C_a030_2,
//                     as NanoAOD flattens them (ROOT 6.40's RNTupleImporter
//                     also crashes on a C_a014[nC][3] leaf);
//   --layout objects  each collection as CMSSW stores its products: a
//                     std::vector<aod::C> of the generated classes (PAT-like:
//                     a candidate base with a Lorentz vector, a reference, an
//                     inner vector; aod_classes.cmake), written through their
//                     ROOT dictionary and split one sub-branch per member
//                     (C.p4.pt, C.p4.phi, C.userFloats, C.a003, ...; the count
//                     is branch C),
//                     and the empty product Empty, no object in any event
//                     (Empty.pt: what reading a product costs per event).
// The values are the real CMS NanoAOD file's (--source): each event's multiplicity
// is Poisson-distributed around the seed's mean, each particle a whole particle of
// the real file's matching collection drawn at random, its branches mapped onto the
// generated attributes by value kind (eta, phi, energy, fraction, flags, bool,
// isolation, index; map_sources) and cycled to the seed's attribute counts. A real
// column taken again within one object (the cycle's second and later rounds, flags and
// counters too) takes it from another real particle drawn for that copy, so no object
// holds the same value twice where the real one does not (repeats would compress as
// real data does not). So values, precision and within-particle correlations are the
// real file's; the validation record lists which real branch each generated one takes
// ("sources"), how many generated columns repeat a real one from another particle
// ("repeated_columns"), and the tree's compression factor read back (tot_bytes / zip_bytes).
//
// Written to OUTPUT.tmp, renamed when complete, then reread: entries and the
// sum of every counter must match what was generated.
#include <TFile.h>
#include <TLeaf.h>
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
  float pt_min;    // GeV; unused here: the real particles carry the real file's own thresholds
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
  std::vector<std::vector<Int_t>> ints;            // per int attribute
  std::vector<std::vector<UChar_t>> bools;         // per boolean attribute
  std::vector<int> slot;  // per attribute: its index in floats, ints or bools

  // Sets `member` (the generated class's member for attribute a) to particle j's value(s).
  template <class M>
  void set(M &member, int a, UInt_t j) const {
    aod::for_each_value(member, a, [&](int k, auto &value) {
      using V = std::decay_t<decltype(value)>;
      if (a == 0) value = pt[j];
      else if constexpr (std::is_same_v<V, Float_t>) value = floats[slot[a]][std::max(k, 0) * static_cast<std::size_t>(max_count) + j];
      else if constexpr (std::is_same_v<V, Int_t>) value = ints[slot[a]][j];
      else value = bools[slot[a]][j] != 0;
    });
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
    } else if (kind == kBool) {
      c.slot[a] = static_cast<int>(c.bools.size());
      c.bools.emplace_back(size);
    } else {
      c.slot[a] = static_cast<int>(c.floats.size());
      c.floats.emplace_back(size * static_cast<std::size_t>(aod::attribute_width(a)));
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
      const Kind kind = static_cast<Kind>(a % kKinds);
      int values = 0;
      bool agrees = true;
      aod::for_each_value(member, a, [&](int, auto &value) {
        using E = std::decay_t<decltype(value)>;
        ++values;
        agrees = agrees && (a == 0 ? std::is_same_v<E, Float_t>
                            : is_int(kind) ? std::is_same_v<E, Int_t>
                            : kind == kBool ? std::is_same_v<E, Bool_t> : std::is_same_v<E, Float_t>);
      });
      if (!agrees || values != aod::attribute_width(a))
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

// The objects layout's empty product (aod_classes.cmake): a std::vector<aod::Empty>, split as
// the collections are, written in every event with no object in it.
struct EmptyProduct {
  std::vector<aod::Empty> objects;
  std::vector<aod::Empty> *address = &objects;
  explicit EmptyProduct(TTree &tree) {
    if (!tree.Branch(aod::kEmptyProduct, &address, 32000, 99))
      throw std::runtime_error(std::string("cannot create the empty product ") + aod::kEmptyProduct);
  }
};

std::unique_ptr<ObjectBranch> make_object_branch(TTree &tree, const std::string &name) {
#define AOD_BRANCH(type, mean, attributes, pt_min) \
  if (name == #type) return std::make_unique<ObjectBranchOf<aod::type>>(tree, #type);
  AOD_COLLECTIONS(AOD_BRANCH)
#undef AOD_BRANCH
  throw std::logic_error("no generated class for collection " + name);
}

// One collection of the real NanoAOD file, column by column: each branch's values for every
// particle of the file, in file order (particle p is element p of every column).
struct RealColumn {
  std::string branch;  // without the collection's prefix: "eta", "pfRelIso03_all"
  char type;           // 'F' Float_t, 'I' Int_t, 'U' UChar_t, 'B' Bool_t
  std::vector<double> values;  // exact for all four types
};
struct RealCollection {
  std::string name;
  std::size_t particles = 0;
  std::vector<RealColumn> columns;
  int pt = -1;
};

// The real file's collection `name` (FatJet's nearest, Jet, where the file has no FatJet).
RealCollection read_real(TTree &tree, const std::string &wanted) {
  std::string name = wanted;
  if (!tree.GetLeaf(aod::flat_counter(name).c_str()) && name == "FatJet") name = "Jet";
  TLeaf *counter = tree.GetLeaf(aod::flat_counter(name).c_str());
  if (!counter) throw std::runtime_error("the real file has no collection " + wanted + " (no " + aod::flat_counter(wanted) + ")");
  RealCollection real;
  real.name = name;
  std::vector<TLeaf *> leaves;
  for (auto *object : *tree.GetListOfLeaves()) {
    auto *leaf = static_cast<TLeaf *>(object);
    const std::string branch = leaf->GetName();
    if (branch.rfind(name + "_", 0) != 0 || !leaf->GetLeafCount() || leaf->GetLeafCount() != counter) continue;
    const std::string type = leaf->GetTypeName();
    const char code = type == "Float_t" ? 'F' : type == "Int_t" ? 'I' : type == "UChar_t" ? 'U' : type == "Bool_t" ? 'B' : 0;
    if (!code) continue;
    real.columns.push_back({branch.substr(name.size() + 1), code, {}});
    if (real.columns.back().branch == "pt") real.pt = static_cast<int>(real.columns.size()) - 1;
    leaves.push_back(leaf);
  }
  if (real.pt < 0) throw std::runtime_error("the real collection " + name + " has no pt");
  for (Long64_t i = 0; i < tree.GetEntries(); ++i) {
    if (tree.GetEntry(i) <= 0) throw std::runtime_error("cannot read event " + std::to_string(i) + " of the real file");
    const auto n = static_cast<int>(counter->GetValue());
    for (std::size_t c = 0; c < leaves.size(); ++c)
      for (int j = 0; j < n; ++j) real.columns[c].values.push_back(leaves[c]->GetValue(j));
    real.particles += static_cast<std::size_t>(n);
  }
  if (real.particles == 0) throw std::runtime_error("the real collection " + name + " has no particle");
  return real;
}

// The value kind of a real branch, by its name and type (the kinds of aod_classes.cmake).
Kind real_kind(const RealColumn &column) {
  const auto has = [&](std::initializer_list<const char *> words) {
    return std::any_of(words.begin(), words.end(), [&](const char *w) { return column.branch.find(w) != std::string::npos; });
  };
  if (column.type == 'B') return kBool;
  if (column.type != 'F') return has({"Idx"}) ? kIndex : kFlags;
  if (has({"eta", "Eta"})) return kEta;
  if (has({"phi", "Phi"})) return kPhi;
  if (has({"Iso", "iso"})) return kIsolation;
  if (has({"mass", "Err", "Sum", "dxy", "dz", "ip3d", "area", "Pt"})) return kEnergy;
  return kFraction;
}

// Which real column each generated value takes: the candidate base's attributes their own
// (aod::real_branch) where the collection has it; every other attribute a of kind k the kind's real
// columns in turn (cycled to the seed's attribute count; an array's elements take
// consecutive ones). A kind the collection lacks takes its nearest: isolations, energies and
// fractions any other float; flags and indices each other; booleans the UChar_t flags as
// value != 0 (Jet and FatJet have no Bool_t branch).
struct Sources {
  std::vector<std::vector<int>> floats;  // per float slot, per element: the real column
  std::vector<int> ints, bools;          // per int / bool slot
  // the same, which copy of its real column each is: 0 the drawn particle's own value, c > 0
  // the value of the particle drawn for copy c (the column taken again within one object)
  std::vector<std::vector<int>> float_copies;
  std::vector<int> int_copies, bool_copies;
  int copies = 1;        // copies of the most repeated column, the first included
  int repeated = 0;      // generated columns that are a later copy
  std::string describe;  // "Muon_pt=pt;Muon_a001=eta;...": what the tests compare
};

Sources map_sources(const Collection &c, const RealCollection &real) {
  std::vector<std::vector<int>> pools(kKinds);
  for (std::size_t k = 0; k < real.columns.size(); ++k)
    if (static_cast<int>(k) != real.pt) pools[real_kind(real.columns[k])].push_back(static_cast<int>(k));
  std::vector<int> floats_other, uchars;
  for (std::size_t k = 0; k < real.columns.size(); ++k) {
    if (real.columns[k].type == 'F' && static_cast<int>(k) != real.pt) floats_other.push_back(static_cast<int>(k));
    if (real.columns[k].type == 'U') uchars.push_back(static_cast<int>(k));
  }
  const auto pool = [&](Kind kind) -> const std::vector<int> & {
    if (!pools[kind].empty()) return pools[kind];
    if (kind == kFlags && !pools[kIndex].empty()) return pools[kIndex];
    if (kind == kIndex && !pools[kFlags].empty()) return pools[kFlags];
    if (kind == kBool && !uchars.empty()) return uchars;
    if (kind != kBool && kind != kFlags && kind != kIndex && !floats_other.empty()) return floats_other;
    throw std::runtime_error("the real collection " + real.name + " has no branch for value kind " + std::to_string(kind));
  };
  Sources s;
  s.describe = aod::flat_branch(c.spec.name, 0) + "=pt";
  std::vector<int> uses(real.columns.size(), 0);
  uses[static_cast<std::size_t>(real.pt)] = 1;  // pT is the drawn particle's own
  std::vector<std::size_t> used(kKinds, 0);
  const auto take = [&](Kind kind) {
    const auto &p = pool(kind);
    return p[used[kind]++ % p.size()];
  };
  // The candidate base's attributes take their own real branch where the collection has it
  // (its mass, charge, pdgId: aod::real_branch), so each object's four-vector is a real one.
  const auto named = [&](int a, Kind kind) {
    const char *wanted = aod::real_branch(a);
    for (std::size_t k = 0; wanted && k < real.columns.size(); ++k)
      if (real.columns[k].branch == wanted && (real.columns[k].type == 'F') == !is_int(kind)) return static_cast<int>(k);
    return -1;
  };
  for (int a = 1; a < c.spec.attributes; ++a) {
    const Kind kind = static_cast<Kind>(a % kKinds);
    const int width = is_int(kind) || kind == kBool ? 1 : aod::attribute_width(a);
    std::vector<int> columns, copies;
    for (int e = 0; e < width; ++e) {
      const int own = width == 1 ? named(a, kind) : -1;
      columns.push_back(own >= 0 ? own : take(kind));
      copies.push_back(uses[static_cast<std::size_t>(columns.back())]++);
      s.copies = std::max(s.copies, copies.back() + 1);
      s.repeated += copies.back() > 0;
      const RealColumn &r = real.columns[static_cast<std::size_t>(columns.back())];
      s.describe += ";" + aod::flat_branch(c.spec.name, a, width > 1 ? e : -1) + "=" + r.branch +
                    (kind == kBool && r.type != 'B' ? "!=0" : "");
    }
    if (is_int(kind)) {
      s.ints.push_back(columns[0]);
      s.int_copies.push_back(copies[0]);
    } else if (kind == kBool) {
      s.bools.push_back(columns[0]);
      s.bool_copies.push_back(copies[0]);
    } else {
      s.floats.push_back(columns);
      s.float_copies.push_back(copies);
    }
  }
  return s;
}

// Fills each event with whole real particles: n ~ Poisson(seed's mean) particles drawn
// uniformly from the real collection, sorted by pT as NanoAOD and CMSSW order them, each
// generated attribute the drawn particle's value of its real column; a column's later copy
// within the object (Sources) the value of another particle drawn for that copy. So the
// values, their precision and their correlations within a particle are the real file's,
// and no object repeats a value the real particle holds once.
class Generator {
 public:
  explicit Generator(std::uint64_t seed) : rng_(seed) {}

  void fill(Collection &c, const RealCollection &real, const Sources &sources) {
    std::poisson_distribution<int> multiplicity(c.spec.mean);
    c.n = static_cast<UInt_t>(std::min(multiplicity(rng_), c.max_count));
    std::uniform_int_distribution<std::size_t> particle(0, real.particles - 1);
    drawn_.resize(c.n);
    for (auto &p : drawn_) p = particle(rng_);
    const auto &pt = real.columns[static_cast<std::size_t>(real.pt)].values;
    std::sort(drawn_.begin(), drawn_.end(), [&](std::size_t a, std::size_t b) { return pt[a] > pt[b]; });
    // the particles each later copy of a column takes its values from, one per generated particle
    others_.resize(static_cast<std::size_t>(sources.copies));
    for (int copy = 1; copy < sources.copies; ++copy) {
      others_[copy].resize(c.n);
      for (auto &p : others_[copy]) p = particle(rng_);
    }
    const auto max = static_cast<std::size_t>(c.max_count);
    const auto value = [&](int column, int copy, UInt_t j) {
      return real.columns[static_cast<std::size_t>(column)].values[copy == 0 ? drawn_[j] : others_[copy][j]];
    };
    for (UInt_t j = 0; j < c.n; ++j) {
      c.pt[j] = static_cast<float>(pt[drawn_[j]]);
      for (std::size_t a = 0; a < c.floats.size(); ++a)
        for (std::size_t e = 0; e < sources.floats[a].size(); ++e)
          c.floats[a][e * max + j] = static_cast<float>(value(sources.floats[a][e], sources.float_copies[a][e], j));
      for (std::size_t a = 0; a < c.ints.size(); ++a)
        c.ints[a][j] = static_cast<Int_t>(value(sources.ints[a], sources.int_copies[a], j));
      for (std::size_t a = 0; a < c.bools.size(); ++a)
        c.bools[a][j] = value(sources.bools[a], sources.bool_copies[a], j) != 0 ? 1 : 0;
    }
  }

 private:
  std::mt19937_64 rng_;
  std::vector<std::size_t> drawn_;
  std::vector<std::vector<std::size_t>> others_;  // per later copy of a column: its particles
};

// The counters read back: nC of the flat layout, or the split branch C itself
// read as its count (MakeClass mode: no objects built), the empty product's too.
long long counter_sum(TTree &tree, bool objects) {
  tree.SetBranchStatus("*", false);
  if (objects) tree.SetMakeClass(1);
  std::vector<std::string> counters;
  for (const auto &spec : kCollections) counters.push_back(objects ? spec.name : aod::flat_counter(spec.name));
  if (objects) counters.push_back(aod::kEmptyProduct);
  std::vector<UInt_t> n(counters.size());
  for (std::size_t k = 0; k < n.size(); ++k) {
    const std::string &counter = counters[k];
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
  return bench::guarded_main("make_aod_like", argc, argv,
      {{"output", ""}, {"events", "1000"}, {"seed", "1"}, {"compression", "ZLIB"}, {"level", "1"},
      {"layout", "flat"}, {"source", ""}},
      [&](const bench::Options &opt) {
    const std::string output = opt.str("output");
    if (output.empty()) throw std::invalid_argument("--output is required");
    const long long events = opt.integer("events", 1);
    const std::string layout = opt.str("layout");
    if (layout != "flat" && layout != "objects")
      throw std::invalid_argument("--layout " + layout + ": one of flat, objects");
    const bool objects = layout == "objects";
    const int settings =
        bench::compression_settings(opt.str("compression"), static_cast<int>(opt.integer("level", 0)));

    const std::string source = opt.str("source");
    if (source.empty()) throw std::invalid_argument("--source (the real NanoAOD file) is required");

    std::vector<Collection> collections;
    for (const auto &spec : kCollections) {
      collections.emplace_back();
      collections.back().spec = spec;
      collections.back().max_count = static_cast<int>(4 * spec.mean) + 30;
      allocate(collections.back());
    }
    std::vector<RealCollection> reals;
    std::vector<Sources> sources;
    std::string described;
    long long repeated_columns = 0;
    {
      std::unique_ptr<TFile> real_file(TFile::Open(source.c_str(), "READ"));
      auto *real_tree = real_file && !real_file->IsZombie() ? real_file->Get<TTree>("Events") : nullptr;
      if (!real_tree) throw std::runtime_error("cannot read the tree Events of the real file " + source);
      for (const auto &c : collections) {
        reals.push_back(read_real(*real_tree, c.spec.name));
        sources.push_back(map_sources(c, reals.back()));
        described += (described.empty() ? "" : ";") + sources.back().describe;
        repeated_columns += sources.back().repeated;
      }
    }

    bench::TemporaryOutput target(output);
    long long generated = 0;
    {
      std::unique_ptr<TFile> out(TFile::Open(target.temporary().c_str(), "RECREATE", "", settings));
      if (!out || out->IsZombie()) throw std::runtime_error("cannot create output file " + target.temporary());
      TTree tree("Events", "MiniAOD-like events (seed 000's particle types, multiplicities and attribute counts)");
      std::vector<std::unique_ptr<ObjectBranch>> object_branches;
      for (auto &c : collections) {
        if (objects) object_branches.push_back(make_object_branch(tree, c.spec.name));
        else make_flat_branches(tree, c);
      }
      std::unique_ptr<EmptyProduct> empty = objects ? std::make_unique<EmptyProduct>(tree) : nullptr;
      Generator generator(static_cast<std::uint64_t>(opt.integer("seed", 0)));
      const long long step = std::max(1LL, events / 100);
      for (long long i = 0; i < events; ++i) {
        for (std::size_t k = 0; k < collections.size(); ++k) {
          generator.fill(collections[k], reals[k], sources[k]);
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
        // the tree's compression factor as ROOT prints it (uncompressed / compressed bytes), read back
        .add("tot_bytes", static_cast<long long>(tree ? tree->GetTotBytes() : 0))
        .add("zip_bytes", static_cast<long long>(tree ? tree->GetZipBytes() : 0))
        .add("sources", described)
        .add("repeated_columns", repeated_columns)
        .print();
    if (!ok) {
      std::fprintf(stderr, "make_aod_like: %s does not read back as written\n", output.c_str());
      return 3;
    }
    return 0;
  });
}

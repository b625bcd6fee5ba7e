// Seed 000's "ROOT file reading" study on today's ROOT: one float attribute
// (the pT) of one particle collection, read from every file by one of
// several C++ methods, each reporting items read, the exact checksum of
// pass.hpp, wall and CPU time, and the rate every --sample-every items.
// Any branch of one numeric leaf (float, double, the integer types, bool;
// one value per event, a fixed array or a collection) is read in its own type,
// so a user's own file can be compared too (python -m throughput.readers).
//
//   columnar     only the value branch and its counter, TBranch::GetEntry into
//                flat buffers, no objects (the seed's "FemtoCode ROOT reader")
//   bulk         ROOT's bulk I/O: whole baskets at once (GetEntriesSerialized),
//                counter first, big-endian values decoded here
//   ttreereader  TTreeReader with a TTreeReaderArray<float>
//   draw         TTree::Draw("<branch>", "", "goff"), values taken from GetV1()
//   rdataframe   RDataFrame on one thread, Foreach over an RVecF column
//   members      every attribute of the collection read into flat buffers
//                (TBranch::GetEntry), no objects: what reading the whole
//                collection costs before any object is built (on split
//                objects, every numeric member: the inner std::vector needs
//                objects, see collection_branches)
//   cmssw        a CMSSW-like reader. On a split std::vector<aod::Type>
//                branch (make_aod_like --layout objects): the whole branch
//                read into std::vector<aod::Type> through the dictionary,
//                every member streamed and the objects built by ROOT, as CMSSW
//                reads a product. On flat leaf-list branches: every branch of
//                the collection is read and a std::vector<Particle> with all
//                attributes is built per event. The pT is taken from the objects.
//   rntuple      RNTupleReader on the RNTuple copy (--rntuple-files): the
//                collection's offsets and the value column, no objects
//   baskets      the baskets of the value branch and its counter read and
//                decompressed by ROOT, values checksummed where they lie: no
//                per-entry call (what any reader must do at least; not a
//                reader an analysis uses)
//   memory       the values and counts held in memory, read once by the
//                columnar method before any timing; the same per-entry loop
//                and checksum, no file (seed 000's pass over cached data:
//                what loading from the files costs; not a file reader)
//
// A split object member (C.p4.pt of a std::vector<aod::C>) is read as it is
// stored: columnar and members in MakeClass mode (the member's values and the
// collection's count, no object), TTreeReader, TTree::Draw and RDataFrame by
// the member's name. A method that cannot read a branch (bulk I/O where ROOT
// does not support it, TTree::Draw on 64-bit integers it would round to double,
// members and cmssw on a branch that is not a collection, rntuple where the copy
// has no such field) is a "cannot_read" record that says why, and the other
// methods go on.
//
// Methods are rotated: repetition r starts with method r + --rotation (mod the
// number of methods), so no method always runs first (the study runs one
// process per round of its interleaving and gives --methods in that round's own
// random order, throughput.noise.round_order, so no method always follows the
// same one either);
// the first --warmup passes of every method are flagged warm-up (TTree::Draw's
// first call included, as the seed discarded it). Before each pass the files
// are brought to --cache state (see pass.hpp), outside the timed region.
//
// Each measured sample repeats its pass until its reading time (opening left out)
// reaches --min-sample-s (bench::Calibration, calibrated by the last warm-up pass
// of that method and branch): a millisecond pass alone is at the mercy of one
// preemption. No sample is planned to last longer than --max-sample-s in all
// (opening and cache preparation included; 0: no limit), where opening dwarfs reading. Its record gives the means per pass (wall_s, cpu_s, open_s, prep_s),
// the passes it repeated (loops), its reading time (sample_s) and the time the
// thread waited for a CPU during it (run_delay_s, /proc/thread-self/schedstat);
// the rate samples are those of its first pass. A measured sample whose thread waited
// longer than --max-run-delay-share of it is taken again, at most --max-sample-retakes
// times (bench::Retakes; `sample_retakes` in its record).
//
// Every pass of every method must give the same items and checksum for the
// same branch; otherwise the validation record says so and the exit code is 3.
// A missing file, tree or branch, a damaged file or any error ROOT reports
// while reading stops the run (exit 2) with a message naming file and branch.
#include <ROOT/RDataFrame.hxx>
#include <ROOT/RNTupleDescriptor.hxx>
#include <ROOT/RNTupleInspector.hxx>
#include <ROOT/RNTupleReader.hxx>
#include <ROOT/RNTupleView.hxx>
#include <ROOT/RVec.hxx>
#include <TBranch.h>
#include <TBasket.h>
#include <TBranchElement.h>
#include <TBufferFile.h>
#include <TFile.h>
#include <TLeaf.h>
#include <TROOT.h>
#include <TTree.h>
#include <TTreeReader.h>
#include <TTreeReaderArray.h>
#include <TTreeReaderValue.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "aod_classes.h"
#include "bench.hpp"
#include "pass.hpp"
#include "root_errors.hpp"

namespace {

using rc::CachePrep;
using rc::Pass;

struct Job {
  std::vector<std::string> files;          // TTree files
  std::vector<std::string> rntuple_files;  // the same events as RNTuples
  std::string tree;
  std::string branch;
  std::string type;    // the leaf's type (Float_t, Int_t, ...) in the first file; every file must agree
  bool array = false;  // several values per event (a collection or a fixed array), not one
};

std::string where(const std::string &file, const std::string &branch) { return "file " + file + ", branch " + branch; }

// ROOT's first error since the last one taken, as "; ROOT: <it>" ("" if none): what a failed read
// adds to the file and branch it names (a basket that does not decompress: "R__unzip: error -5").
std::string root_said() {
  const std::string error = bench::RootErrors::take();
  return error.empty() ? "" : "; ROOT: " + error;
}

// The leaf types the readers compare: f(T{}) with the C++ type a leaf of `type` is read as.
constexpr const char *kLeafTypes = "Float_t, Double_t, Char_t, UChar_t, Short_t, UShort_t, Int_t, UInt_t, "
                                   "Long64_t, ULong64_t, Bool_t";

template <class F>
bool with_leaf_type(const std::string &type, F &&f) {
  if (type == "Float_t") f(Float_t{});
  else if (type == "Double_t") f(Double_t{});
  else if (type == "Char_t") f(Char_t{});
  else if (type == "UChar_t") f(UChar_t{});
  else if (type == "Short_t") f(Short_t{});
  else if (type == "UShort_t") f(UShort_t{});
  else if (type == "Int_t") f(Int_t{});
  else if (type == "UInt_t") f(UInt_t{});
  else if (type == "Long64_t") f(Long64_t{});
  else if (type == "ULong64_t") f(ULong64_t{});
  else if (type == "Bool_t") f(Bool_t{});
  else return false;
  return true;
}

// --- opening a file ----------------------------------------------------------------------------
struct OpenTree {
  std::unique_ptr<TFile> file;
  TTree *tree = nullptr;
  TBranch *branch = nullptr;
  TLeaf *leaf = nullptr;
  TLeaf *count = nullptr;  // the collection's counter; null for one value per event
  int max_count = 1;       // most particles in one event (1 for one value per event)
  int max_len = 1;         // most values in one event
  // A member of a split object collection (C.p4.pt of std::vector<aod::C>): its
  // collection branch C, whose count leaf C_ is the counter (count->GetBranch()
  // is C); null otherwise.
  TBranchElement *objects = nullptr;
};

// The branches holding every attribute of t's collection (t's branch among them):
// the split collection's numeric sub-branches, or the leaf-list branches sharing t's
// counter. A member that is itself a collection (the classes' inner std::vector,
// C.userFloats) is left out: MakeClass mode cannot read it into a flat buffer (ROOT
// accepts the address and reads nothing), only objects can.
std::vector<TBranch *> collection_branches(const OpenTree &t) {
  std::vector<TBranch *> branches;
  TObjArray *candidates = t.objects ? t.objects->GetListOfBranches() : t.tree->GetListOfBranches();
  for (auto *object : *candidates) {
    auto *branch = static_cast<TBranch *>(object);
    auto *leaf = static_cast<TLeaf *>(branch->GetListOfLeaves()->At(0));
    if (t.objects ? with_leaf_type(leaf->GetTypeName(), [](auto) {})
                  : branch->GetListOfLeaves()->GetEntries() == 1 && leaf->GetLeafCount() == t.count)
      branches.push_back(branch);
  }
  return branches;
}

OpenTree open_tree(const std::string &path, const Job &job) {
  const std::string at = where(path, job.branch);
  OpenTree t;
  t.file.reset(TFile::Open(path.c_str(), "READ"));
  if (!t.file || t.file->IsZombie()) {
    bench::RootErrors::clear();
    throw std::runtime_error("cannot open " + at + " (missing or not a ROOT file)");
  }
  if (t.file->TestBit(TFile::kRecovered)) {
    bench::RootErrors::clear();
    throw std::runtime_error(at + ": the file is damaged (truncated or not closed; ROOT had to recover its keys)");
  }
  t.tree = t.file->Get<TTree>(job.tree.c_str());
  if (!t.tree) throw std::runtime_error(at + ": no tree '" + job.tree + "' in the file");
  t.branch = t.tree->GetBranch(job.branch.c_str());
  if (!t.branch) throw std::runtime_error(at + ": no such branch in tree '" + job.tree + "'");
  t.leaf = static_cast<TLeaf *>(t.branch->GetListOfLeaves()->At(0));
  const std::string type = t.leaf ? t.leaf->GetTypeName() : "none";
  if (t.branch->GetListOfLeaves()->GetEntries() != 1 || !with_leaf_type(type, [](auto) {}))
    throw std::runtime_error(at + ": the readers compare one numeric leaf per branch (" + kLeafTypes +
                             "), this branch has " + std::to_string(t.branch->GetListOfLeaves()->GetEntries()) +
                             " leaves, the first of type " + type);
  if (!job.type.empty() && type != job.type)
    throw std::runtime_error(at + ": its leaf is " + type + " here but " + job.type + " in " + job.files.front());
  t.count = t.leaf->GetLeafCount();
  auto *element = dynamic_cast<TBranchElement *>(t.branch);
  if (element && element->GetMother() != t.branch)
    t.objects = dynamic_cast<TBranchElement *>(element->GetMother());
  // A split collection keeps its largest count in the branch (the count leaf's own maximum is not kept).
  t.max_count = std::max(1, t.objects ? t.objects->GetMaximum() : t.count ? t.count->GetMaximum() : 1);
  t.max_len = t.count ? t.max_count * t.leaf->GetLenStatic() : t.leaf->GetLen();
  bench::RootErrors::check(at);
  return t;
}

void check_entry(Int_t bytes, const std::string &path, const std::string &branch, Long64_t entry) {
  if (bytes < 0)
    throw std::runtime_error(where(path, branch) + ": reading entry " + std::to_string(entry) +
                             " failed (damaged basket?)" + root_said());
}

// --- the methods -------------------------------------------------------------------------------
// Each file of the job in turn: its cache state prepared (untimed), its tree opened, read(t,
// path, t0) run, and ROOT's errors checked (naming file and branch). t0 is when the opening
// began: the reader reports pass.opened(now - t0) once its set-up is done.
template <class F>
void for_each_tree(const Job &job, CachePrep &prep, F &&read) {
  for (const auto &path : job.files) {
    prep.before_file(path);
    const double t0 = bench::wall_seconds();
    OpenTree t = open_tree(path, job);
    read(t, path, t0);
    bench::RootErrors::check(where(path, job.branch));
  }
}

// Every entry of the job's branch as the columnar method reads it (the value branch and its
// counter, TBranch::GetEntry into a flat buffer): entry(values, n) per entry, opened(seconds) per file.
template <class T, class Opened, class Entry>
void columnar_entries(const Job &job, CachePrep &prep, Opened &&opened, Entry &&entry) {
  for_each_tree(job, prep, [&](OpenTree &t, const std::string &path, double t0) {
    TBranch *counter = t.count ? t.count->GetBranch() : nullptr;
    if (t.objects) t.tree->SetMakeClass(1);  // the member's values into our buffer, no object built
    // not std::vector: std::vector<bool> packs bits, ROOT writes one byte per Bool_t
    std::unique_ptr<T[]> buffer(new T[static_cast<std::size_t>(t.max_len) + 1]());
    Int_t n = t.max_len;  // UInt_t and Int_t counters are both 4 bytes
    if (counter) counter->SetAddress(&n);
    t.branch->SetAddress(buffer.get());
    opened(bench::wall_seconds() - t0);
    const Long64_t entries = t.tree->GetEntries();
    for (Long64_t i = 0; i < entries; ++i) {
      // A split collection's TBranchElement::GetEntry would go on to its members:
      // TBranch::GetEntry reads its own basket only, the count.
      if (counter) check_entry(t.objects ? counter->TBranch::GetEntry(i) : counter->GetEntry(i), path, job.branch, i);
      check_entry(t.branch->GetEntry(i), path, job.branch, i);
      if (n < 0 || n > t.max_len)
        throw std::runtime_error(where(path, job.branch) + ": counter " + std::to_string(n) + " at entry " +
                                 std::to_string(i) + " exceeds the leaf's maximum");
      entry(static_cast<const T *>(buffer.get()), n);
    }
    t.branch->ResetAddress();
    if (counter) counter->ResetAddress();
  });
}

template <class T>
void read_columnar(const Job &job, Pass &pass, CachePrep &prep) {
  columnar_entries<T>(job, prep, [&](double seconds) { pass.opened(seconds); },
                      [&](const T *values, Int_t n) { pass.values(values, n); });
}

// The branch's values and per-entry counts held in memory, read once by the columnar method
// before any timing (load_in_memory): what the memory method passes over. Its rate against the
// columnar reader's, in the same process and rounds, is what loading the values from the files
// costs (seed 000: a pass over data cached in memory against the pass that loads it).
struct InMemory {
  std::shared_ptr<void> values;  // T[items], T the leaf's type
  std::vector<Int_t> counts;     // values per entry
};

std::map<std::string, InMemory> &in_memory() {  // per branch
  static std::map<std::string, InMemory> held;
  return held;
}

template <class T>
void load_in_memory(const Job &job, CachePrep &prep) {
  std::vector<unsigned char> bytes;  // not std::vector<T>: std::vector<bool> packs bits
  InMemory held;
  columnar_entries<T>(job, prep, [](double) {}, [&](const T *values, Int_t n) {
    const auto *first = reinterpret_cast<const unsigned char *>(values);
    bytes.insert(bytes.end(), first, first + sizeof(T) * static_cast<std::size_t>(n));
    held.counts.push_back(n);
  });
  std::shared_ptr<T[]> values(new T[bytes.size() / sizeof(T) + 1]());
  std::memcpy(values.get(), bytes.data(), bytes.size());
  held.values = values;
  in_memory()[job.branch] = std::move(held);
}

// The same per-entry loop and checksum as the columnar reader, over the values held in memory:
// no file opened, nothing read or decompressed.
template <class T>
void read_memory(const Job &job, Pass &pass, CachePrep &) {
  const InMemory &held = in_memory().at(job.branch);
  const T *values = static_cast<const T *>(held.values.get());
  for (const Int_t n : held.counts) {
    pass.values(values, n);
    values += n;
  }
}

// Why ROOT's bulk I/O cannot read t's branch, from ROOT itself; empty if it can.
std::string bulk_refusal(const OpenTree &t) {
  if (!t.branch->SupportsBulkRead()) return "ROOT's bulk I/O does not support this branch (SupportsBulkRead)";
  TBranch *counter = t.count ? t.count->GetBranch() : nullptr;
  if (counter && !counter->SupportsBulkRead())
    return std::string("ROOT's bulk I/O does not support its counter ") + counter->GetName() + " (SupportsBulkRead)";
  return "";
}

template <class T>
void read_bulk(const Job &job, Pass &pass, CachePrep &prep) {
  std::vector<Int_t> counts;
  TBufferFile buffer(TBuffer::kWrite, 1 << 16), counter_buffer(TBuffer::kWrite, 1 << 16);
  for_each_tree(job, prep, [&](OpenTree &t, const std::string &path, double t0) {
    const std::string refused = bulk_refusal(t);
    if (!refused.empty()) throw std::runtime_error(where(path, job.branch) + ": " + refused);
    TBranch *counter = t.count ? t.count->GetBranch() : nullptr;
    const Long64_t entries = t.tree->GetEntries();
    pass.opened(bench::wall_seconds() - t0);
    // Counts first (bulk reads must start at a basket boundary, and the
    // value branch's baskets need not start where the counter's do).
    counts.assign(static_cast<std::size_t>(entries), counter ? 0 : t.leaf->GetLen());
    for (Long64_t e = 0; counter && e < entries;) {
      const Int_t got = counter->GetBulkRead().GetEntriesSerialized(e, counter_buffer);
      if (got <= 0 || e + got > entries)
        throw std::runtime_error(where(path, job.branch) + ": bulk read of counter " + counter->GetName() +
                                 " failed at entry " + std::to_string(e));
      const char *p = counter_buffer.GetCurrent();
      for (Int_t k = 0; k < got; ++k) {
        std::uint32_t b;
        std::memcpy(&b, p + 4 * k, 4);
        counts[static_cast<std::size_t>(e + k)] = static_cast<Int_t>(__builtin_bswap32(b));
      }
      e += got;
    }
    for (Long64_t e = 0; e < entries;) {
      const Int_t got = t.branch->GetBulkRead().GetEntriesSerialized(e, buffer);
      if (got <= 0 || e + got > entries)
        throw std::runtime_error(where(path, job.branch) + ": bulk read failed at entry " + std::to_string(e) +
                                 " (damaged basket?)" + root_said());
      const char *p = buffer.GetCurrent();
      for (Int_t k = 0; k < got; ++k) {
        const Int_t n = counts[static_cast<std::size_t>(e + k)];
        pass.values_big_endian<T>(p, n);
        p += sizeof(T) * static_cast<std::ptrdiff_t>(n);
      }
      e += got;
    }
  });
}

// f(data, bytes, entries) for every basket of `branch` that holds entries, read and
// decompressed by ROOT (TBranch::GetBasket); data: its values back to back, between its
// key and fLast (a collection's entry offsets are kept apart). Basket k holds entries from
// GetBasketEntry()[k]; the one being written (fWriteBasket) is empty in a closed file, but
// holds the last entries where a file kept it inside the tree.
template <class F>
void for_each_basket(TBranch *branch, const std::string &path, F &&f) {
  const Int_t baskets = branch->GetWriteBasket() + 1;
  const Long64_t *first_entry = branch->GetBasketEntry();
  for (Int_t k = 0; k < baskets && first_entry[k] < branch->GetEntries(); ++k) {
    TBasket *basket = branch->GetBasket(k);
    if (!basket)
      throw std::runtime_error(where(path, branch->GetName()) + ": basket " + std::to_string(k) +
                               " could not be read (damaged file?)" + root_said());
    f(basket->GetBufferRef()->Buffer() + basket->GetKeylen(), basket->GetLast() - basket->GetKeylen(),
      basket->GetNevBuf());
    branch->DropBaskets("all");  // one basket in memory at a time, as the other methods
  }
}

// The limit of any reader of the branch: ROOT reads and decompresses every basket of
// the value branch and of its counter (the bytes the columnar reader reads), and the
// values are checksummed where they lie, with no per-entry call and no copy; the
// columnar reader's time above it is its per-entry calls. The checksum is timed apart,
// basket by basket (two clock reads per basket of thousands of values), so the pass
// splits into ROOT's reading and decompressing and the checksum every reader computes.
// The counts must add up to the values read. For one value per event, a leaf list
// X_pt[nX] and a split object member (whose counter is its collection's branch) alike.
template <class T>
void read_baskets(const Job &job, Pass &pass, CachePrep &prep) {
  for_each_tree(job, prep, [&](OpenTree &t, const std::string &path, double t0) {
    TBranch *counter = t.count ? t.count->GetBranch() : nullptr;
    pass.opened(bench::wall_seconds() - t0);
    long long counted = 0;  // UInt_t and Int_t counters are both 4 bytes, one per entry
    if (counter)
      for_each_basket(counter, path, [&](const char *data, Int_t bytes, Int_t entries) {
        if (bytes != 4 * entries)
          throw std::runtime_error(where(path, job.branch) + ": counter " + counter->GetName() + " holds " +
                                   std::to_string(bytes) + " bytes for " + std::to_string(entries) + " entries");
        for (Int_t e = 0; e < entries; ++e) counted += static_cast<Int_t>(rc::bits_of_big_endian<Int_t>(data + 4 * e));
      });
    const long long items_before = pass.items();
    for_each_basket(t.branch, path, [&](const char *data, Int_t bytes, Int_t entries) {
      if (bytes < 0 || bytes % static_cast<Int_t>(sizeof(T)) != 0)
        throw std::runtime_error(where(path, job.branch) + ": a basket holds " + std::to_string(bytes) +
                                 " bytes of data, not whole values of " + job.type);
      const double checksum_start = bench::wall_seconds();
      pass.values_big_endian<T>(data, bytes / static_cast<Int_t>(sizeof(T)), entries);
      pass.add_checksum_seconds(bench::wall_seconds() - checksum_start);
    });
    if (counter && counted != pass.items() - items_before)
      throw std::runtime_error(where(path, job.branch) + ": its counter " + counter->GetName() + " counts " +
                               std::to_string(counted) + " values, its baskets hold " +
                               std::to_string(pass.items() - items_before));
  });
}

// TTreeReaderArray<T> for several values per event, TTreeReaderValue<T> for one.
template <class T, class Values>
void read_ttreereader_as(const Job &job, Pass &pass, CachePrep &prep) {
  for_each_tree(job, prep, [&](OpenTree &t, const std::string &path, double t0) {
    TTreeReader reader(t.tree);
    Values values(reader, job.branch.c_str());
    pass.opened(bench::wall_seconds() - t0);
    // A basket that does not decompress is only logged by ROOT, and TTreeReader goes on with the
    // garbage it left (a segmentation fault on a damaged ZLIB, LZ4 or LZMA basket): while the
    // loop runs, ROOT's first error stops it instead (as rdf_bench's event loops).
    try {
      bench::RootErrors::Throwing stop_on_error;
      while (reader.Next()) {
        if constexpr (std::is_same_v<Values, TTreeReaderValue<T>>)
          pass.value(*values);
        else
          for (T v : values) pass.value(v);
        pass.end_events(1);
      }
    } catch (const bench::RootError &error) {
      bench::RootErrors::clear();
      throw std::runtime_error(where(path, job.branch) + ": TTreeReader stopped at entry " +
                               std::to_string(reader.GetCurrentEntry()) + " (damaged basket?); ROOT: " + error.what());
    }
    if (values.GetSetupStatus() < 0 || reader.GetEntryStatus() != TTreeReader::kEntryBeyondEnd)
      throw std::runtime_error(where(path, job.branch) + ": TTreeReader stopped with status " +
                               std::to_string(static_cast<int>(reader.GetEntryStatus())) + " (setup status " +
                               std::to_string(static_cast<int>(values.GetSetupStatus())) + ")");
  });
}

template <class T>
void read_ttreereader(const Job &job, Pass &pass, CachePrep &prep) {
  if (job.array)
    read_ttreereader_as<T, TTreeReaderArray<T>>(job, pass, prep);
  else
    read_ttreereader_as<T, TTreeReaderValue<T>>(job, pass, prep);
}

// TTree::Draw gives every value as a double: exact for every type but the 64-bit integers,
// which read_branch refuses for it (draw_refuses, its row in methods()).
template <class T>
void read_draw(const Job &job, Pass &pass, CachePrep &prep) {
  for_each_tree(job, prep, [&](OpenTree &t, const std::string &path, double t0) {
    const Long64_t entries = t.tree->GetEntries();
    // TTree::Draw keeps at most GetEstimate() values in GetV1(): draw in
    // chunks of entries that cannot exceed it (at most ~10^7 values each).
    const Long64_t chunk = std::max<Long64_t>(1, std::min<Long64_t>(entries, 10000000 / t.max_len));
    t.tree->SetEstimate(chunk * t.max_len + 1);
    pass.opened(bench::wall_seconds() - t0);
    for (Long64_t first = 0; first < entries; first += chunk) {
      const Long64_t n = std::min(chunk, entries - first);
      const Long64_t rows = t.tree->Draw(job.branch.c_str(), "", "goff", n, first);
      if (rows < 0 || rows > t.tree->GetEstimate())
        throw std::runtime_error(where(path, job.branch) + ": TTree::Draw failed (returned " + std::to_string(rows) +
                                 ") for entries " + std::to_string(first) + ".." + std::to_string(first + n));
      const double *v = t.tree->GetV1();
      for (Long64_t r = 0; r < rows; ++r) pass.value(static_cast<T>(v[r]));  // T -> double -> T is exact
      pass.end_events(n);
    }
  });
}

template <class T>
void read_rdataframe(const Job &job, Pass &pass, CachePrep &prep) {
  // Files are opened by RDataFrame itself: each file is brought to its cache
  // state when RDataFrame starts on it (the per-sample callback; the first
  // one also before the clock starts, so warm reads stay warm). Its opening
  // time, left out of the reading time as every other method's is: its set-up
  // up to the start of the first file, and for each later file the time from
  // the previous file's last entry to the start of this one (closing that
  // file, opening this one and setting up its branches). The entries left in
  // a file are counted down, so the clock is read once per file.
  prep.before_file(job.files.front());
  std::size_t next_file = 0;
  ULong64_t entries_left = 0;  // in the file being read
  double last_entry_at = 0;    // when the previous file's last entry was read
  try {
    ROOT::RDataFrame frame(job.tree, job.files);
    auto with_prep = frame.DefinePerSample("rc_sample_", [&](unsigned int, const ROOT::RDF::RSampleInfo &info) {
      const double now = pass.elapsed();
      pass.opened(next_file == 0 ? now : now - last_entry_at);
      entries_left = info.NEntries();
      if (next_file > 0 && next_file < job.files.size()) prep.before_file(job.files[next_file]);
      ++next_file;
      return 0;
    });
    auto count_down = [&] {
      if (--entries_left == 0) last_entry_at = pass.elapsed();
    };
    // ROOT's first error stops the event loop (a damaged basket: garbage and a segmentation fault
    // otherwise), caught below naming the files and the branch.
    bench::RootErrors::Throwing stop_on_error;
    if (job.array)
      with_prep.Foreach(
          [&](int, const ROOT::RVec<T> &values) {
            pass.values(values.data(), values.size());
            count_down();
          },
          {"rc_sample_", job.branch});
    else
      with_prep.Foreach(
          [&](int, T value) {
            pass.value(value);
            pass.end_events(1);
            count_down();
          },
          {"rc_sample_", job.branch});
  } catch (const std::exception &e) {
    bench::RootErrors::clear();
    throw std::runtime_error("RDataFrame on files " + job.files.front() + (job.files.size() > 1 ? ", ..." : "") +
                             ", branch " + job.branch + ": " + e.what());
  }
  bench::RootErrors::check("RDataFrame on " + where(job.files.front(), job.branch));
}

// The CMSSW-like reader's object: every attribute of the collection, as an
// analysis framework's class would hold them, in memory of its own; `value`
// is the branch's (the pT in the study's files).
template <class T>
struct Particle {
  T value;
  std::vector<double> attributes;
};

struct Attribute {
  TBranch *branch;
  const char *type;
  int per_particle;  // values per particle (1 unless the leaf is [n][k])
  std::vector<char> buffer;
  double (*get)(const char *, std::size_t);
};

template <class T>
double get_as(const char *p, std::size_t i) {
  T v;
  std::memcpy(&v, p + i * sizeof(T), sizeof(T));
  return static_cast<double>(v);
}

std::pair<double (*)(const char *, std::size_t), std::size_t> converter(const std::string &type, const std::string &at) {
  std::pair<double (*)(const char *, std::size_t), std::size_t> get_and_size;
  if (!with_leaf_type(type, [&](auto v) { get_and_size = {get_as<decltype(v)>, sizeof v}; }))
    throw std::runtime_error(at + ": attribute of unsupported type " + type);
  return get_and_size;
}

// Every attribute of the branch's collection in flat buffers of their own types,
// read with TTree::GetEntry with only the collection's branches enabled (in
// MakeClass mode for a split object collection: no object is built).
struct CollectionBuffers {
  std::vector<Attribute> attributes;
  std::size_t pt_index = 0;
  Int_t n = 0;  // the collection's count (UInt_t and Int_t counters are both 4 bytes)
  int max_count = 1;

  CollectionBuffers(const OpenTree &t, const std::string &path) : max_count(t.max_count) {
    if (!t.count) throw std::runtime_error(where(path, t.branch->GetName()) + ": not a collection branch");
    if (t.objects) t.tree->SetMakeClass(1);
    t.tree->SetBranchStatus("*", false);
    TBranch *counter = t.count->GetBranch();
    t.tree->SetBranchStatus(counter->GetName(), true);
    counter->SetAddress(&n);
    for (TBranch *branch : collection_branches(t)) {
      auto *leaf = static_cast<TLeaf *>(branch->GetListOfLeaves()->At(0));
      auto [get, size] = converter(leaf->GetTypeName(), where(path, branch->GetName()));
      if (branch == t.branch) pt_index = attributes.size();
      attributes.push_back({branch, leaf->GetTypeName(), leaf->GetLenStatic(),
                            std::vector<char>(size * leaf->GetLenStatic() * (max_count + 1)), get});
      t.tree->SetBranchStatus(branch->GetName(), true);
      branch->SetAddress(attributes.back().buffer.data());
    }
  }
  void read(const OpenTree &t, Long64_t i, const std::string &path, const std::string &branch) {
    check_entry(t.tree->GetEntry(i), path, branch, i);
    if (n < 0 || n > max_count)
      throw std::runtime_error(where(path, branch) + ": counter " + std::to_string(n) + " at entry " +
                               std::to_string(i) + " exceeds the collection's maximum");
  }
  // The branch's own values (the pT in the study's files), as the type of its leaf.
  template <class T>
  const T *values() const {
    return reinterpret_cast<const T *>(attributes[pt_index].buffer.data());
  }
};

template <class T>
void read_members(const Job &job, Pass &pass, CachePrep &prep) {
  for_each_tree(job, prep, [&](OpenTree &t, const std::string &path, double t0) {
    CollectionBuffers c(t, path);
    pass.opened(bench::wall_seconds() - t0);
    const Long64_t entries = t.tree->GetEntries();
    for (Long64_t i = 0; i < entries; ++i) {
      c.read(t, i, path, job.branch);
      pass.values(c.values<T>(), c.n);
    }
    t.tree->ResetBranchAddresses();
  });
}

// The CMSSW-like reader on a split std::vector<T>: ROOT streams every member
// into the objects through the dictionary, as CMSSW reads a product. Its
// branch set-up counts as opening (`opened_at`: when the file's opening began),
// as every other method's does.
template <class T>
void read_objects(OpenTree &t, const std::string &path, const std::string &branch, Pass &pass, double opened_at) {
  std::vector<T> *objects = nullptr;
  t.tree->SetBranchStatus("*", false);
  t.tree->SetBranchStatus((std::string(t.objects->GetName()) + "*").c_str(), true);
  if (t.tree->SetBranchAddress(t.objects->GetName(), &objects) < 0)
    throw std::runtime_error(where(path, branch) + ": cannot read " + t.objects->GetName() + " as " +
                             t.objects->GetClassName());
  pass.opened(bench::wall_seconds() - opened_at);
  const Long64_t entries = t.tree->GetEntries();
  for (Long64_t i = 0; i < entries; ++i) {
    check_entry(t.tree->GetEntry(i), path, branch, i);
    for (const T &object : *objects) {
      if constexpr (std::is_base_of_v<aod::Candidate, T>) pass.value(object.pt());
      else pass.value(object.pt);  // the empty product's one member
    }
    pass.end_events(1);
  }
  t.tree->ResetBranchAddresses();
  delete objects;
}

using ObjectReader = void (*)(OpenTree &, const std::string &, const std::string &, Pass &, double);

ObjectReader object_reader(const std::string &class_name) {
#define AOD_READER(type, mean, attributes, pt_min) \
  if (class_name == "vector<aod::" #type ">") return read_objects<aod::type>;
  AOD_COLLECTIONS(AOD_READER)
  AOD_READER(Empty, 0, 1, 0)  // the empty product: what a product costs per event
#undef AOD_READER
  return nullptr;
}

template <class T>
void read_cmssw(const Job &job, Pass &pass, CachePrep &prep) {
  for_each_tree(job, prep, [&](OpenTree &t, const std::string &path, double t0) {
    if (t.objects) {
      object_reader(t.objects->GetClassName())(t, path, job.branch, pass, t0);  // cmssw_refuses checked it
      return;
    }
    CollectionBuffers c(t, path);
    pass.opened(bench::wall_seconds() - t0);
    const Long64_t entries = t.tree->GetEntries();
    for (Long64_t i = 0; i < entries; ++i) {
      c.read(t, i, path, job.branch);
      std::vector<Particle<T>> particles;
      for (Int_t j = 0; j < c.n; ++j) {
        Particle<T> p;
        p.attributes.reserve(c.attributes.size());
        for (const auto &a : c.attributes)
          for (int k = 0; k < a.per_particle; ++k)
            p.attributes.push_back(a.get(a.buffer.data(), j * static_cast<std::size_t>(a.per_particle) + k));
        p.value = c.values<T>()[j];
        particles.push_back(std::move(p));
      }
      for (const Particle<T> &p : particles) pass.value(p.value);
      pass.end_events(1);
    }
    t.tree->ResetBranchAddresses();
  });
}

// The RNTuple copy made by RNTupleImporter keeps a leaf-list collection as a
// collection field (_collectionN) of records, and the branch name as a
// projected RVec field onto one of the records' members; a branch of one value
// per event as a field of its own (no collection).
struct RNTupleFields {
  ROOT::DescriptorId_t collection, value;
};

// The RNTuple copy has no field for the branch, or holds other values: the
// rntuple method cannot read the branch (a cannot_read record, not a stop).
struct NoSuchField : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The RNTuple type name of the values of a leaf of `type` ("float" for Float_t).
std::string rntuple_type(const std::string &type) {
  std::string name;
  with_leaf_type(type, [&](auto v) { name = ROOT::RField<decltype(v)>::TypeName(); });
  return name;
}

// The field at `member` ("p4.pt") in record field `record`, looking through the record's base
// classes, which the importer keeps as subfields ":_0", ":_1", ... (aod::Candidate under aod::C).
ROOT::DescriptorId_t find_member(const ROOT::RNTupleDescriptor &desc, ROOT::DescriptorId_t record,
                                 const std::string &member) {
  const auto dot = member.find('.');
  const auto id = desc.FindFieldId(member.substr(0, dot), record);
  if (id != ROOT::kInvalidDescriptorId)
    return dot == std::string::npos ? id : find_member(desc, id, member.substr(dot + 1));
  for (const auto &sub : desc.GetFieldIterable(record))
    if (sub.GetFieldName().rfind(":_", 0) == 0)
      if (const auto in_base = find_member(desc, sub.GetId(), member); in_base != ROOT::kInvalidDescriptorId)
        return in_base;
  return ROOT::kInvalidDescriptorId;
}

// The RNTuple copy of a split object member "C.m" or "C.s.m" (the importer, with the classes'
// dictionary, keeps std::vector<aod::C> as a collection field C of aod::C records):
// the collection C and the member of its records.
RNTupleFields rntuple_member_fields(const ROOT::RNTupleDescriptor &desc, const std::string &path,
                                    const std::string &name, const std::string &value_type) {
  const auto dot = name.find('.');
  const auto id = desc.FindFieldId(name.substr(0, dot));
  if (id == ROOT::kInvalidDescriptorId)
    throw NoSuchField(where(path, name) + ": no field " + name.substr(0, dot) + " in the RNTuple");
  const auto &field = desc.GetFieldDescriptor(id);
  if (field.GetStructure() != ROOT::ENTupleStructure::kCollection || field.GetLinkIds().size() != 1)
    throw NoSuchField(where(path, name) + ": expected a collection of records, got " + field.GetTypeName());
  const auto member = find_member(desc, field.GetLinkIds()[0], name.substr(dot + 1));
  if (member == ROOT::kInvalidDescriptorId || desc.GetFieldDescriptor(member).GetTypeName() != value_type)
    throw NoSuchField(where(path, name) + ": its records have no " + value_type + " member " +
                             name.substr(dot + 1));
  return {id, member};
}

// The fields of branch `name` whose leaf is of (TTree) type `leaf_type`.
RNTupleFields rntuple_fields(const ROOT::RNTupleDescriptor &desc, const std::string &path, const std::string &name,
                             const std::string &leaf_type) {
  const std::string value_type = rntuple_type(leaf_type);
  if (name.find('.') != std::string::npos) return rntuple_member_fields(desc, path, name, value_type);
  const auto id = desc.FindFieldId(name);
  if (id == ROOT::kInvalidDescriptorId)
    throw NoSuchField(where(path, name) + ": no such field in the RNTuple");
  const auto &field = desc.GetFieldDescriptor(id);
  if (field.GetStructure() == ROOT::ENTupleStructure::kPlain && field.GetTypeName() == value_type)
    return {ROOT::kInvalidDescriptorId, id};  // one value per event
  if (field.GetStructure() != ROOT::ENTupleStructure::kCollection || field.GetLinkIds().size() != 1)
    throw NoSuchField(where(path, name) + ": expected " + value_type + " or a collection of " + value_type +
                             ", got " + field.GetTypeName());
  auto source = [&](ROOT::DescriptorId_t f) {
    const auto &d = desc.GetFieldDescriptor(f);
    return d.IsProjectedField() ? d.GetProjectionSourceId() : f;
  };
  const ROOT::DescriptorId_t value = source(field.GetLinkIds()[0]);
  ROOT::DescriptorId_t collection = source(id);
  if (desc.GetFieldDescriptor(value).GetTypeName() != value_type)
    throw NoSuchField(where(path, name) + ": the values are " + desc.GetFieldDescriptor(value).GetTypeName() +
                             ", not " + value_type);
  return {collection, value};
}

template <class T>
void read_rntuple(const Job &job, Pass &pass, CachePrep &prep) {
  for (const auto &path : job.rntuple_files) {
    prep.before_file(path);
    const double t0 = bench::wall_seconds();
    std::unique_ptr<ROOT::RNTupleReader> reader;
    try {
      reader = ROOT::RNTupleReader::Open(job.tree, path);
    } catch (const std::exception &e) {
      bench::RootErrors::clear();
      throw std::runtime_error("cannot read " + where(path, job.branch) + " (RNTuple): " + e.what());
    }
    try {
      const RNTupleFields ids = rntuple_fields(reader->GetDescriptor(), path, job.branch, job.type);
      auto values = reader->GetDirectAccessView<T>(ids.value);
      const auto entries = reader->GetNEntries();
      if (ids.collection == ROOT::kInvalidDescriptorId) {
        pass.opened(bench::wall_seconds() - t0);
        for (ROOT::NTupleSize_t i = 0; i < entries; ++i) {
          pass.value(values(i));
          pass.end_events(1);
        }
      } else {
        auto collection = reader->GetCollectionView(ids.collection);
        pass.opened(bench::wall_seconds() - t0);
        for (ROOT::NTupleSize_t i = 0; i < entries; ++i) {
          for (auto j : collection.GetCollectionRange(i)) pass.value(values(j));
          pass.end_events(1);
        }
      }
    } catch (const ROOT::RException &e) {
      bench::RootErrors::clear();
      throw std::runtime_error(where(path, job.branch) + " (RNTuple): " + e.what());
    }
    bench::RootErrors::check(where(path, job.branch) + " (RNTuple)");
  }
}

// --- bytes each method reads (from the files' metadata, outside the timing) --------------------
struct Bytes {
  long long compressed = 0, uncompressed = 0;
};

Bytes tree_bytes(const Job &job, bool whole_collection) {
  Bytes bytes;
  for (const auto &path : job.files) {
    OpenTree t = open_tree(path, job);
    std::vector<TBranch *> branches{t.branch};
    if (t.count) branches.push_back(t.count->GetBranch());
    if (whole_collection && t.count)
      for (TBranch *b : collection_branches(t))
        if (b != t.branch) branches.push_back(b);
    for (auto *b : branches) {
      bytes.compressed += b->GetZipBytes();
      bytes.uncompressed += b->GetTotBytes();
    }
  }
  return bytes;
}

Bytes rntuple_bytes(const Job &job) {
  Bytes bytes;
  for (const auto &path : job.rntuple_files) {
    std::unique_ptr<ROOT::Experimental::RNTupleInspector> inspector;
    try {
      inspector = ROOT::Experimental::RNTupleInspector::Create(job.tree, path);
    } catch (const std::exception &e) {
      bench::RootErrors::clear();
      throw std::runtime_error("cannot read " + where(path, job.branch) + " (RNTuple): " + e.what());
    }
    try {
      const auto &desc = inspector->GetDescriptor();
      const RNTupleFields ids = rntuple_fields(desc, path, job.branch, job.type);
      for (auto field : {ids.collection, ids.value})
        if (field != ROOT::kInvalidDescriptorId)  // no collection: one value per event
          for (const auto &column : desc.GetColumnIterable(field)) {
            const auto &info = inspector->GetColumnInspector(column.GetPhysicalId());
            bytes.compressed += static_cast<long long>(info.GetCompressedSize());
            bytes.uncompressed += static_cast<long long>(info.GetUncompressedSize());
          }
    } catch (const ROOT::RException &e) {
      bench::RootErrors::clear();
      throw std::runtime_error("cannot read " + where(path, job.branch) + " (RNTuple): " + e.what());
    }
    bench::RootErrors::check(where(path, job.branch) + " (RNTuple)");
  }
  return bytes;
}

using Method = std::function<void(const Job &, Pass &, CachePrep &)>;

// What a method reads, which sets the bytes it is credited with: the branch's value and counter
// baskets (columns), every attribute of the branch's collection (collection: the object readers),
// the pages of the RNTuple copy (rntuple), or nothing from a file (memory: the values held).
enum class Reads { columns, collection, rntuple, memory };

// Why a method cannot read the job's branch (t: its first file), from what the method is; empty
// if it can. Checked before any timing; a refusal is a record saying why, not a stop of the others.
using Refusal = std::string (*)(const OpenTree &t, const Job &job);

std::string reads_any(const OpenTree &, const Job &) { return ""; }

std::string bulk_refuses(const OpenTree &t, const Job &) { return bulk_refusal(t); }

std::string draw_refuses(const OpenTree &, const Job &job) {
  if (job.type == "Long64_t" || job.type == "ULong64_t")
    return "TTree::Draw gives its values as double, which cannot hold every " + job.type;
  return "";
}

std::string members_refuse(const OpenTree &t, const Job &) {
  return t.count ? "" : "not a collection (one value or a fixed array per event): there are no objects to build";
}

std::string cmssw_refuses(const OpenTree &t, const Job &job) {
  if (const std::string not_objects = members_refuse(t, job); !not_objects.empty()) return not_objects;
  if (t.objects) {
    if (!object_reader(t.objects->GetClassName()))
      return std::string("no compiled class for ") + t.objects->GetClassName();
    const std::string collection = t.objects->GetName();
    if (job.branch != collection + "." + (collection == aod::kEmptyProduct ? "pt" : aod::kPtMember))
      return "the CMSSW-like reader takes the pT from the objects, not " + job.branch;
  }
  return "";
}

struct MethodEntry {
  Method read;
  Reads reads;
  Refusal refusal;
};

// A method read in the job's leaf type (with_leaf_type knows every type open_tree lets through).
#define RC_TYPED(method) \
  [](const Job &job, Pass &pass, CachePrep &prep) { \
    with_leaf_type(job.type, [&](auto v) { method<decltype(v)>(job, pass, prep); }); \
  }

// Every method: how it reads, what it reads, and when it refuses; one row each.
const std::map<std::string, MethodEntry> &methods() {
  static const std::map<std::string, MethodEntry> table{
      {"columnar", {RC_TYPED(read_columnar), Reads::columns, reads_any}},
      {"bulk", {RC_TYPED(read_bulk), Reads::columns, bulk_refuses}},
      {"ttreereader", {RC_TYPED(read_ttreereader), Reads::columns, reads_any}},
      {"draw", {RC_TYPED(read_draw), Reads::columns, draw_refuses}},
      {"rdataframe", {RC_TYPED(read_rdataframe), Reads::columns, reads_any}},
      {"members", {RC_TYPED(read_members), Reads::collection, members_refuse}},
      {"cmssw", {RC_TYPED(read_cmssw), Reads::collection, cmssw_refuses}},
      {"rntuple", {RC_TYPED(read_rntuple), Reads::rntuple, reads_any}},
      {"baskets", {RC_TYPED(read_baskets), Reads::columns, reads_any}},
      {"memory", {RC_TYPED(read_memory), Reads::memory, reads_any}}};
  return table;
}
#undef RC_TYPED

struct Reference {
  std::string method;
  long long items, events;
  std::uint64_t checksum;
};

}  // namespace

int main(int argc, char **argv) {
  return bench::guarded_main("read_branch", argc, argv,
      bench::with_retake_options({{"files", ""}, {"rntuple-files", ""}, {"tree", "Events"}, {"branches", ""},
                                  {"methods", "columnar"}, {"reps", "5"}, {"warmup", "1"}, {"rotation", "0"},
                                  {"min-sample-s", "0"}, {"max-sample-s", "0"}, {"cache", "warm"},
                                  {"sample-every", "100000"}, {"corrupt-for-test", ""}}),
      [&](const bench::Options &opt) {
    if (opt.str("files").empty()) throw std::invalid_argument("--files is required (comma-separated ROOT files)");
    if (opt.str("branches").empty()) throw std::invalid_argument("--branches is required (comma-separated)");
    const auto files = rc::split_list(opt.str("files"), "files");
    const auto branches = rc::split_list(opt.str("branches"), "branches");
    const auto method_names = rc::split_list(opt.str("methods"), "methods");
    for (const auto &m : method_names)
      if (!methods().count(m)) {
        std::string known;  // from the table itself, so the message cannot drift from it
        for (const auto &entry : methods()) known += (known.empty() ? "" : ", ") + entry.first;
        throw std::invalid_argument("unknown method '" + m + "' in --methods (" + known + ")");
      }
    const bool wants_rntuple = std::count(method_names.begin(), method_names.end(), "rntuple") > 0;
    std::vector<std::string> rntuple_files;
    if (wants_rntuple) {
      if (opt.str("rntuple-files").empty())
        throw std::invalid_argument("method rntuple needs --rntuple-files (the RNTuple copies of --files)");
      rntuple_files = rc::split_list(opt.str("rntuple-files"), "rntuple-files");
    }
    const long long reps = opt.integer("reps", 1), warmup = opt.integer("warmup", 0);
    const long long rotation = opt.integer("rotation", 0);
    const double min_sample_s = opt.seconds("min-sample-s", 60);
    const double max_sample_s = opt.seconds("max-sample-s", 600);
    const bench::Retakes retake_rule = bench::retakes_from(opt);
    const long long every = opt.integer("sample-every", 1);
    const std::string corrupt = opt.str("corrupt-for-test");
    if (!corrupt.empty() && !methods().count(corrupt))
      throw std::invalid_argument("--corrupt-for-test names unknown method '" + corrupt + "'");
    CachePrep prep(opt.str("cache"));

    gROOT->SetBatch(true);  // one thread, as the seed: implicit multi-threading stays off
    bench::RootErrors::install();

    // Bytes per method and branch, and a first check of every input, before any timing.
    // A method ROOT refuses for a branch is a record saying why, not a stop of the others.
    std::map<std::pair<std::string, std::string>, Bytes> bytes;
    std::map<std::pair<std::string, std::string>, std::string> refused;
    std::map<std::string, Job> jobs;  // per branch
    for (const auto &branch : branches) {
      Job job{files, rntuple_files, opt.str("tree"), branch, "", false};
      const OpenTree first = open_tree(files.front(), job);
      job.type = first.leaf->GetTypeName();
      job.array = first.count || first.leaf->GetLen() > 1;
      std::unique_ptr<Bytes> columns;  // value and counter: the same for every TTree method but cmssw
      for (const auto &m : method_names) {
        std::string refused_because;  // names the file and the branch
        try {
          const MethodEntry &method = methods().at(m);
          const std::string reason = method.refusal(first, job);
          if (!reason.empty())
            refused_because = where(files.front(), branch) + ": " + reason;
          else if (method.reads == Reads::rntuple)
            bytes[{m, branch}] = rntuple_bytes(job);
          else if (method.reads == Reads::collection)
            bytes[{m, branch}] = tree_bytes(job, true);
          else if (method.reads == Reads::memory)
            bytes[{m, branch}] = Bytes{};  // no byte read from a file
          else {
            if (!columns) columns = std::make_unique<Bytes>(tree_bytes(job, false));
            bytes[{m, branch}] = *columns;
          }
        } catch (const NoSuchField &e) {  // the RNTuple copy lacks the field or holds other values
          refused_because = e.what();
        }
        if (refused_because.empty()) continue;
        refused[{m, branch}] = refused_because;
        bench::JsonLine()
            .add("record", "cannot_read")
            .add("method", m)
            .add("branch", branch)
            .add("message", refused_because)
            .print();
      }
      if (std::count(method_names.begin(), method_names.end(), "memory") && !refused.count({"memory", branch}))
        with_leaf_type(job.type, [&](auto v) { load_in_memory<decltype(v)>(job, prep); });  // before any timing
      jobs.emplace(branch, job);
    }

    std::map<std::string, Reference> reference;  // per branch: the first pass
    std::map<std::pair<std::string, std::string>, bench::Calibration> calibrations;  // per method and branch
    long long disagreements = 0;
    // One pass of `name` over `branch`, checked against the branch's first pass.
    auto read_once = [&](const std::string &name, const std::string &branch, const std::vector<std::string> &inputs,
                         Pass &pass) {
      prep.start_pass(inputs);
      pass.start();
      methods().at(name).read(jobs.at(branch), pass, prep);
      pass.stop();
      if (name == corrupt) pass.corrupt();
      auto [it, first] = reference.try_emplace(branch, Reference{name, pass.items(), pass.events(), pass.checksum()});
      if (it->second.items == pass.items() && it->second.events == pass.events() &&
          it->second.checksum == pass.checksum())
        return;
      ++disagreements;
      std::fprintf(stderr,
                   "read_branch: %s disagrees with %s on branch %s: %lld items, %lld events, checksum %s vs "
                   "%lld, %lld, %s\n",
                   name.c_str(), it->second.method.c_str(), branch.c_str(), pass.items(), pass.events(),
                   rc::hex(pass.checksum()).c_str(), it->second.items, it->second.events,
                   rc::hex(it->second.checksum).c_str());
    };
    const long long methods_count = static_cast<long long>(method_names.size());
    for (long long rep = 0; rep < warmup + reps; ++rep) {
      for (const auto &branch : branches) {
        for (long long k = 0; k < methods_count; ++k) {
          const std::string &name = method_names[static_cast<std::size_t>((k + rep + rotation) % methods_count)];
          if (refused.count({name, branch})) continue;
          const auto &inputs = name == "rntuple" ? rntuple_files : files;
          auto &calibration =
              calibrations.try_emplace({name, branch}, warmup, min_sample_s, max_sample_s).first->second;
          const long long loops = calibration.loops(rep);
          double wall, cpu, open, prep_s, checksum_s, residency, delay, spent;
          std::unique_ptr<Pass> first;  // its rate samples, items and checksum stand for the sample's
          long long retakes = 0;
          for (;; ++retakes) {  // the sample, taken again while its thread waited too long for a CPU
            wall = cpu = open = prep_s = 0, checksum_s = -1;
            residency = prep.mode() == "warm" ? 1.0 : 0.0;  // the furthest any pass started from its state
            first.reset();
            const double delay0 = bench::run_delay_seconds(), started = bench::wall_seconds();
            for (long long loop = 0; loop < loops; ++loop) {
              auto pass = std::make_unique<Pass>(every, prep);
              read_once(name, branch, inputs, *pass);
              wall += pass->wall();
              cpu += pass->cpu();
              open += pass->open_s();
              prep_s += prep.wall();
              residency = prep.mode() == "warm" ? std::min(residency, prep.residency())
                                                : std::max(residency, prep.residency());
              if (pass->checksum_s() >= 0) checksum_s = std::max(checksum_s, 0.0) + pass->checksum_s();
              if (!first) first = std::move(pass);
            }
            const double delay1 = bench::run_delay_seconds();
            spent = bench::wall_seconds() - started;
            delay = delay0 < 0 || delay1 < 0 ? -1.0 : delay1 - delay0;
            if (rep < warmup || retakes >= retake_rule.max_retakes || !retake_rule.disturbed(delay, spent, 1)) break;
          }
          calibration.update(rep, loops, wall - open, spent);
          const double per_pass = 1.0 / static_cast<double>(loops);
          const Bytes &b = bytes.at({name, branch});
          bench::JsonLine()
              .add("record", "timing")
              .add("kernel", "read_branch")
              .add("method", name)
              .add("branch", branch)
              .add("rep", rep - warmup)
              .add("warmup", rep < warmup)
              .add("order", k)
              .add("wall_s", wall * per_pass)
              .add("cpu_s", cpu * per_pass)
              .add("open_s", open * per_pass)
              .add("loops", loops)
              .add("sample_s", wall - open)
              .add("run_delay_s", delay)
              .add("sample_retakes", retakes)
              .add("files_opened", first->files_opened())
              .add("events", first->events())
              .add("items", first->items())
              .add("checksum", rc::hex(first->checksum()))
              .add("bytes_compressed", b.compressed)
              .add("bytes_uncompressed", b.uncompressed)
              .add("files", static_cast<long long>(inputs.size()))
              .add("cache", prep.mode())
              .add("residency", residency)
              .add("prep_s", prep_s * per_pass)
              .add("checksum_s", checksum_s < 0 ? -1.0 : checksum_s * per_pass)
              .add("samples", first->samples_taken())
              .add("clock_read_s", bench::clock_read_seconds())
              .print();
          for (const auto &s : first->samples())
            bench::JsonLine()
                .add("record", "sample")
                .add("method", name)
                .add("branch", branch)
                .add("rep", rep - warmup)
                .add("items", s.items)
                .add("events", s.events)
                .add("wall_s", s.wall_s)
                .print();
        }
      }
    }
    for (const auto &[branch, ref] : reference)
      bench::JsonLine()
          .add("record", "result")
          .add("branch", branch)
          .add("items", ref.items)
          .add("events", ref.events)
          .add("checksum", rc::hex(ref.checksum))
          .print();
    bench::JsonLine()
        .add("record", "validation")
        .add("kernel", "read_branch")
        .add("ok", disagreements == 0)
        .add("disagreements", disagreements)
        .add("checksum", reference.empty() ? std::string() : rc::hex(reference.begin()->second.checksum))
        .print();
    return disagreements == 0 ? 0 : 3;
  });
}

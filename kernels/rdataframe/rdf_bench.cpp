// RDataFrame thread scaling (seed 002): fills histograms from many
// NanoAOD-like files with ROOT::RDataFrame, sequentially (--threads 0) or with
// ROOT::EnableImplicitMT(n), and reports wall and CPU time per event loop.
//
// Workloads (--workload):
//   analysis  a small analysis: MET, jet multiplicity, jet pT, jet eta vs pT,
//             primary vertices, leading-lepton pT vs eta, and the leading
//             lepton's pT x eta x PDF-weight index filled with the PDF weights
//             (the seed's Histo3D trick). The thread scan, the compression
//             table and the Dask comparison use it.
//   nhist     --histograms N histograms, one Define each (the seed's table).
//   pdf       the PDF-weight histograms by --method: defines (one Define and
//             one Histo2D per weight, the seed's naive way), histo3d (the
//             seed's trick), histond (THnD with scalar and vector columns),
//             vary (RDataFrame's systematic variations).
//
// Every column function and binning comes from analysis.hpp, which the Dask
// run declares in Cling, so both fill the same numbers. After each event loop
// the results are turned into canonical histograms (the PDF methods into one
// TH2D per weight) and compared bin by bin with the first measured loop's;
// --output writes the last loop's to a ROOT file for the cross-checks done in
// Python (every thread count, every method, Dask, against the sequential run).
//
// A timed sample is as many event loops as reach --min-sample-s (bench::Calibration, from
// the last warm-up loop; `loops` in its record, wall_s and cpu_s over all of them), each loop
// building its RDataFrame afresh on the same warm files, so that a loop of a few 10 ms is not
// one timer tick or preemption away from a different figure. Every loop's histograms are
// compared with the first loop's, not only the last one's.
//
// --cache none|cold|warm: with cold (or warm) every file is brought to that page-cache state
// before each event loop, untimed and checked (page_cache.hpp), so that every loop of a sample,
// warm-up ones too, reads from the device (the rate model's throttled RDataFrame workflow); each
// loop is then timed alone and the sample is their sum. Every record carries the bytes the
// sample's loops took from the device (device_bytes, /proc/self/io; -1 where unknown).
//
// Every timed sample records how long the process's threads waited for a CPU during it
// (run_delay_s); with --max-run-delay-share above 0, a sample that waited longer than that share
// of its wall time times its threads is taken again, at most --max-sample-retakes times
// (sample_retakes).
//
// Inputs are checked before any event loop: every file must open, hold the
// tree and every branch the workload reads; an error names the file and the
// branch. A basket that does not decompress (found only when read) stops the
// run with an error naming the file and the branch, not a crash.
#include <ROOT/RDFHelpers.hxx>
#include <ROOT/RDataFrame.hxx>
#include <TBranch.h>
#include <TFile.h>
#include <TH1D.h>
#include <TH2D.h>
#include <TH3D.h>
#include <THn.h>
#include <TLeaf.h>
#include <TROOT.h>
#include <TTree.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "analysis.hpp"
#include "bench.hpp"
#include "file_list.hpp"
#include "page_cache.hpp"
#include "root_errors.hpp"
#include "root_io.hpp"
#include "timing_record.hpp"

namespace {

using tpa::RVecF;
using tpa::RVecU;
using Hists = std::vector<std::unique_ptr<TH1>>;

struct Settings {
  std::string workload, method, tree, collection, pdf_branch;
  int histograms = 1;
  bool nominal = true;
  unsigned int pdf_count = 102;  // values per event in the PDF branch
  unsigned int n_pdf() const { return pdf_count + (nominal ? 1 : 0); }
};

std::vector<std::string> branches_read(const Settings &s) {
  const std::string &c = s.collection;
  if (s.workload == "analysis")
    return {"MET_pt", "nJet", "Jet_pt", "Jet_eta", "PV_npvs", "n" + c, c + "_pt", c + "_eta", s.pdf_branch};
  if (s.workload == "nhist") return {"Jet_pt"};
  return {"n" + c, c + "_pt", c + "_eta", s.pdf_branch};
}

// --- ROOT's errors --------------------------------------------------------------------------
// ROOT reports a basket that does not decompress ("R__unzip: error -3 in
// inflate") as an Error and goes on, handing the event loop garbage that then
// crashes it. bench::RootErrors (common/root_errors.hpp) keeps ROOT's first
// Error; while an event loop runs it also throws it, which RDataFrame passes on
// from any worker thread, and main then names the file and branch
// (unreadable_branch, run only after a failure).

struct Inputs {
  long long entries = 0, file_bytes = 0, read_zip_bytes = 0, read_tot_bytes = 0;
  double open_s = 0;  // opening the files and their trees, all files (RDataFrame does it again, per task)
};

// Opens every file before any event loop: the tree and every branch must be
// there. Sums the entries, the file sizes and the compressed and
// uncompressed sizes of the branches read (with their counter branches).
Inputs check_inputs(const std::vector<std::string> &files, const Settings &s, bool report = false) {
  Inputs in;
  const std::vector<std::string> wanted = branches_read(s);
  for (const auto &path : files) {
    const double t0 = bench::wall_seconds();
    std::unique_ptr<TFile> f(TFile::Open(path.c_str(), "READ"));
    if (!f || f->IsZombie()) throw std::runtime_error("cannot open input file " + path);
    auto *tree = f->Get<TTree>(s.tree.c_str());
    if (!tree) throw std::runtime_error("input file " + path + " has no tree '" + s.tree + "'");
    in.open_s += bench::wall_seconds() - t0;
    std::set<TBranch *> read;
    for (const auto &name : wanted) {
      TBranch *branch = tree->GetBranch(name.c_str());
      if (!branch)
        throw std::runtime_error("input file " + path + ": tree '" + s.tree + "' has no branch '" + name +
                                 "' (read by workload " + s.workload + ")");
      read.insert(branch);
      auto *leaf = static_cast<TLeaf *>(branch->GetListOfLeaves()->At(0));
      if (leaf && leaf->GetLeafCount()) read.insert(leaf->GetLeafCount()->GetBranch());
    }
    for (auto *branch : read) {
      in.read_zip_bytes += branch->GetZipBytes("*");
      in.read_tot_bytes += branch->GetTotBytes("*");
    }
    in.entries += tree->GetEntries();
    in.file_bytes += f->GetSize();
    if (report) {
      // The number of PDF weights per event, from the branch's counter (read here, in C++, because
      // thousands of files must be checked before the first event loop).
      long long low = -1, high = -1;
      auto *leaf = static_cast<TLeaf *>(tree->GetBranch(s.pdf_branch.c_str())->GetListOfLeaves()->At(0));
      if (TLeaf *counter = leaf ? leaf->GetLeafCount() : nullptr) {
        tree->SetBranchStatus("*", false);
        tree->SetBranchStatus(counter->GetBranch()->GetName(), true);
        for (Long64_t i = 0; i < tree->GetEntries(); ++i) {
          if (counter->GetBranch()->GetEntry(i) < 0)
            throw std::runtime_error("input file " + path + ": branch '" + counter->GetBranch()->GetName() +
                                     "' cannot be read at entry " + std::to_string(i) + " (damaged basket?)");
          const auto n = static_cast<long long>(counter->GetValue());
          low = low < 0 ? n : std::min(low, n);
          high = std::max(high, n);
        }
      }
      // One progress record per file checked, carrying what was found.
      bench::JsonLine()
          .add("record", "progress")
          .add("done", static_cast<long long>(&path - files.data()) + 1)
          .add("total", static_cast<long long>(files.size()))
          .add("path", path)
          .add("entries", static_cast<long long>(tree->GetEntries()))
          .add("file_bytes", static_cast<long long>(f->GetSize()))
          .add("pdf_min", low)
          .add("pdf_max", high)
          .print();
    }
    bench::RootErrors::check("input file " + path);
  }
  return in;
}

// After an event loop failed on a ROOT error: the first branch the workload
// reads (counters before the collections they count) that cannot be read,
// entry by entry (TBranch::GetEntry gives -1 where a basket does not
// decompress), as a message naming the file and the branch; empty if all read.
std::string unreadable_branch(const std::vector<std::string> &files, const Settings &s) {
  for (const auto &path : files) {
    std::unique_ptr<TFile> f(TFile::Open(path.c_str(), "READ"));
    auto *tree = f && !f->IsZombie() ? f->Get<TTree>(s.tree.c_str()) : nullptr;
    if (!tree) return "input file " + path + " cannot be opened again, or its tree '" + s.tree + "' read";
    std::vector<TBranch *> order;
    for (const auto &name : branches_read(s)) {
      TBranch *branch = tree->GetBranch(name.c_str());
      auto *leaf = static_cast<TLeaf *>(branch->GetListOfLeaves()->At(0));
      if (leaf && leaf->GetLeafCount()) order.push_back(leaf->GetLeafCount()->GetBranch());
      order.push_back(branch);
    }
    std::set<TBranch *> seen;
    for (TBranch *branch : order) {
      if (!seen.insert(branch).second) continue;
      bench::RootErrors::take();
      for (Long64_t i = 0; i < tree->GetEntries(); ++i) {
        const Int_t bytes = branch->GetEntry(i);
        const std::string error = bench::RootErrors::take();
        if (bytes < 0 || !error.empty())
          return "input file " + path + ": branch '" + branch->GetName() + "' cannot be read at entry " +
                 std::to_string(i) + " (damaged basket?)" + (error.empty() ? "" : "; ROOT: " + error);
      }
    }
  }
  return "";
}

ROOT::RDF::TH1DModel model1(const tpa::Axis &a, const std::string &name) {
  return {name.c_str(), "", a.bins, a.low, a.high};
}
ROOT::RDF::TH2DModel model2(const tpa::Axis &x, const tpa::Axis &y, const std::string &name) {
  return {name.c_str(), "", x.bins, x.low, x.high, y.bins, y.low, y.high};
}

template <class H>
std::unique_ptr<TH1> canonical(const H &h, const std::string &name) {
  auto copy = std::unique_ptr<TH1>(static_cast<TH1 *>(h.Clone(name.c_str())));
  copy->SetDirectory(nullptr);
  return copy;
}

std::string pdf_name(unsigned int k) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "pdf_%03u", k);
  return buffer;
}

std::unique_ptr<TH2D> empty_pdf_slice(unsigned int k) {
  const tpa::Axis x = tpa::kPdfPt, y = tpa::kPdfEta;
  auto h = std::make_unique<TH2D>(pdf_name(k).c_str(), "", x.bins, x.low, x.high, y.bins, y.low, y.high);
  h->SetDirectory(nullptr);
  h->Sumw2();
  return h;
}

// Slice k of the weight-index axis of a TH3D / THnD into a TH2D (flow bins
// included; contents and sums of squared weights copied, not recomputed).
// The index axis must have nothing in its underflow or overflow.
Hists slices_of(const TH3D &h, unsigned int n) {
  Hists out;
  const int nx = h.GetNbinsX(), ny = h.GetNbinsY();
  for (int ix = 0; ix <= nx + 1; ++ix)
    for (int iy = 0; iy <= ny + 1; ++iy)
      for (int iz : {0, static_cast<int>(n) + 1})
        if (h.GetBinContent(ix, iy, iz) != 0) throw std::runtime_error("PDF index outside 0..n-1 in the TH3D");
  for (unsigned int k = 0; k < n; ++k) {
    auto s = empty_pdf_slice(k);
    for (int ix = 0; ix <= nx + 1; ++ix)
      for (int iy = 0; iy <= ny + 1; ++iy) {
        const int from = h.GetBin(ix, iy, static_cast<int>(k) + 1), to = s->GetBin(ix, iy);
        s->SetBinContent(to, h.GetBinContent(from));
        (*s->GetSumw2())[to] = h.GetSumw2()->At(from);
      }
    out.push_back(std::move(s));
  }
  return out;
}

Hists slices_of(const THnD &h, unsigned int n) {
  Hists out;
  const int nx = h.GetAxis(0)->GetNbins(), ny = h.GetAxis(1)->GetNbins();
  for (int ix = 0; ix <= nx + 1; ++ix)
    for (int iy = 0; iy <= ny + 1; ++iy)
      for (int iz : {0, static_cast<int>(n) + 1}) {
        const Int_t idx[3] = {ix, iy, iz};
        if (h.GetBinContent(h.GetBin(idx)) != 0) throw std::runtime_error("PDF index outside 0..n-1 in the THnD");
      }
  for (unsigned int k = 0; k < n; ++k) {
    auto s = empty_pdf_slice(k);
    for (int ix = 0; ix <= nx + 1; ++ix)
      for (int iy = 0; iy <= ny + 1; ++iy) {
        const Int_t idx[3] = {ix, iy, static_cast<int>(k) + 1};
        const Long64_t from = h.GetBin(idx);
        const int to = s->GetBin(ix, iy);
        s->SetBinContent(to, h.GetBinContent(from));
        (*s->GetSumw2())[to] = h.GetBinError2(from);
      }
    out.push_back(std::move(s));
  }
  return out;
}

// What one event loop booked: the entry count, and how to turn the results
// into canonical histograms once the loop has run.
struct Booked {
  ROOT::RDF::RResultPtr<ULong64_t> count, selected;
  std::function<Hists()> collect;
};

ROOT::RDF::RNode selection(ROOT::RDF::RNode df, const Settings &s) {
  const bool nominal = s.nominal;
  const unsigned int expected = s.pdf_count;
  return df.Filter([](UInt_t n) { return n > 0; }, {"n" + s.collection}, "has a leading " + s.collection)
      .Define("leadPt", tpa::lead, {s.collection + "_pt"})
      .Define("leadEta", tpa::lead, {s.collection + "_eta"})
      .Define("pdfWeights", [nominal, expected](const RVecF &v) { return tpa::pdf_weights(v, nominal, expected); },
              {s.pdf_branch});
}

Booked book_analysis(ROOT::RDataFrame &df, const Settings &s) {
  Booked b;
  b.count = df.Count();
  auto met = df.Histo1D<float>(model1(tpa::kMet, "met"), "MET_pt");
  auto njet = df.Histo1D<UInt_t>(model1(tpa::kNJet, "njet"), "nJet");
  auto jet_pt = df.Histo1D<RVecF>(model1(tpa::kJetPt, "jet_pt"), "Jet_pt");
  auto jet_eta_pt = df.Histo2D<RVecF, RVecF>(model2(tpa::kJetEta, tpa::kJetPt, "jet_eta_pt"), "Jet_eta", "Jet_pt");
  auto npv = df.Histo1D<int>(model1(tpa::kNpv, "npv"), "PV_npvs");
  auto sel = selection(df, s);
  b.selected = sel.Count();
  auto lead = sel.Histo2D<float, float>(model2(tpa::kLeadPt, tpa::kLeadEta, "lead_pt_eta"), "leadPt", "leadEta");
  const int n = static_cast<int>(s.n_pdf());
  const tpa::Axis x = tpa::kPdfPt, y = tpa::kPdfEta;
  auto pdf = sel.Define("leadPtVec", tpa::repeat, {"leadPt", "pdfWeights"})
                 .Define("leadEtaVec", tpa::repeat, {"leadEta", "pdfWeights"})
                 .Define("pdfIdx", tpa::indices, {"pdfWeights"})
                 .Histo3D<RVecF, RVecF, RVecU, RVecF>(
                     {"pdf3d", "", x.bins, x.low, x.high, y.bins, y.low, y.high, n, 0., static_cast<double>(n)},
                     "leadPtVec", "leadEtaVec", "pdfIdx", "pdfWeights");
  b.collect = [=]() mutable {
    Hists h;
    h.push_back(canonical(*met, "met"));
    h.push_back(canonical(*njet, "njet"));
    h.push_back(canonical(*jet_pt, "jet_pt"));
    h.push_back(canonical(*jet_eta_pt, "jet_eta_pt"));
    h.push_back(canonical(*npv, "npv"));
    h.push_back(canonical(*lead, "lead_pt_eta"));
    h.push_back(canonical(*pdf, "pdf3d"));
    return h;
  };
  return b;
}

std::string nhist_name(int i) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "nhist_%03d", i);
  return buffer;
}

Booked book_nhist(ROOT::RDataFrame &df, const Settings &s) {
  Booked b;
  b.count = df.Count();
  std::vector<ROOT::RDF::RResultPtr<TH1D>> hists;
  for (int i = 0; i < s.histograms; ++i) {
    const float threshold = tpa::nhist_threshold(i);
    const std::string column = "nAbove" + std::to_string(i);
    hists.push_back(df.Define(column, [threshold](const RVecF &pt) { return tpa::count_above(pt, threshold); },
                              {"Jet_pt"})
                        .Histo1D<int>(model1(tpa::kNAbove, nhist_name(i)), column));
  }
  b.collect = [=]() mutable {
    Hists h;
    for (std::size_t i = 0; i < hists.size(); ++i) h.push_back(canonical(*hists[i], nhist_name(static_cast<int>(i))));
    return h;
  };
  return b;
}

Booked book_pdf(ROOT::RDataFrame &df, const Settings &s) {
  Booked b;
  b.count = df.Count();
  auto sel = selection(df, s);
  b.selected = sel.Count();
  const unsigned int n = s.n_pdf();
  const tpa::Axis x = tpa::kPdfPt, y = tpa::kPdfEta;
  if (s.method == "defines") {
    std::vector<ROOT::RDF::RResultPtr<TH2D>> hists;
    for (unsigned int i = 0; i < n; ++i) {
      const std::string column = "weight_" + std::to_string(i);
      hists.push_back(sel.Define(column, [i](const RVecF &w) { return tpa::at(w, i); }, {"pdfWeights"})
                          .Histo2D<float, float, float>(model2(x, y, pdf_name(i)), "leadPt", "leadEta", column));
    }
    b.collect = [=]() mutable {
      Hists h;
      for (unsigned int i = 0; i < n; ++i) h.push_back(canonical(*hists[i], pdf_name(i)));
      return h;
    };
  } else if (s.method == "histo3d") {
    auto h3 = sel.Define("leadPtVec", tpa::repeat, {"leadPt", "pdfWeights"})
                  .Define("leadEtaVec", tpa::repeat, {"leadEta", "pdfWeights"})
                  .Define("pdfIdx", tpa::indices, {"pdfWeights"})
                  .Histo3D<RVecF, RVecF, RVecU, RVecF>({"pdf3d", "", x.bins, x.low, x.high, y.bins, y.low, y.high,
                                                        static_cast<int>(n), 0., static_cast<double>(n)},
                                                       "leadPtVec", "leadEtaVec", "pdfIdx", "pdfWeights");
    b.collect = [=]() mutable { return slices_of(*h3, n); };
  } else if (s.method == "histond") {
    // Scalars and vectors mixed in one Fill: no repeated copies of pT and eta.
    ROOT::RDF::THnDModel model("pdfnd", "", 3, std::vector<int>{x.bins, y.bins, static_cast<int>(n)},
                               std::vector<double>{x.low, y.low, 0.},
                               std::vector<double>{x.high, y.high, static_cast<double>(n)});
    auto hn = sel.Define("pdfIdx", tpa::indices, {"pdfWeights"})
                  .HistoND<float, float, RVecU, RVecF>(model, {"leadPt", "leadEta", "pdfIdx"}, "pdfWeights");
    b.collect = [=]() mutable { return slices_of(*hn, n); };
  } else if (s.method == "vary") {
    auto nominal = sel.Define("pdfWeight", [] { return 1.f; })
                       .Vary("pdfWeight", [](const RVecF &w) { return w; }, {"pdfWeights"}, n, "pdf")
                       .Histo2D<float, float, float>(model2(x, y, "vary"), "leadPt", "leadEta", "pdfWeight");
    auto varied = std::make_shared<ROOT::RDF::Experimental::RResultMap<TH2D>>(
        ROOT::RDF::Experimental::VariationsFor(nominal));
    b.collect = [=]() {
      Hists h;
      for (unsigned int i = 0; i < n; ++i) h.push_back(canonical((*varied)["pdf:" + std::to_string(i)], pdf_name(i)));
      return h;
    };
  } else {
    throw std::invalid_argument("--method must be defines, histo3d, histond or vary, got '" + s.method + "'");
  }
  return b;
}

bool weighted(const TH1 &h) { return std::strncmp(h.GetName(), "pdf", 3) == 0; }

// FNV-1a over the bit patterns of every bin content (flow bins included), in order.
std::uint64_t content_hash(const Hists &hists) {
  std::uint64_t hash = 1469598103934665603ULL;
  for (const auto &h : hists)
    for (int i = 0; i < h->GetNcells(); ++i) {
      const double v = h->GetBinContent(i);
      unsigned char bytes[sizeof v];
      std::memcpy(bytes, &v, sizeof v);
      for (unsigned char c : bytes) hash = (hash ^ c) * 1099511628211ULL;
    }
  return hash;
}

double content_sum(const Hists &hists) {
  double sum = 0;
  for (const auto &h : hists)
    for (int i = 0; i < h->GetNcells(); ++i) sum += h->GetBinContent(i);
  return sum;
}

std::string hex(std::uint64_t v) {
  char buffer[20];
  std::snprintf(buffer, sizeof buffer, "%016llx", static_cast<unsigned long long>(v));
  return buffer;
}

// Largest relative difference between two sets of the same histograms, and
// whether they agree: the same names and binnings, in order; counts
// (unweighted histograms) exactly; sums of weights within rtol of the larger
// of the content and its uncertainty (summing floating-point weights in
// another order may change the last bits).
struct Agreement {
  bool ok = true, identical = true;
  double max_rel = 0;
};
Agreement compare(const Hists &a, const Hists &b, double rtol) {
  Agreement r;
  if (a.size() != b.size()) return {false, false, INFINITY};
  for (std::size_t k = 0; k < a.size(); ++k) {
    if (std::strcmp(a[k]->GetName(), b[k]->GetName()) != 0 || a[k]->GetNcells() != b[k]->GetNcells())
      return {false, false, INFINITY};
    const bool w = weighted(*a[k]);
    for (int i = 0; i < a[k]->GetNcells(); ++i) {
      const double x = a[k]->GetBinContent(i), y = b[k]->GetBinContent(i);
      if (x == y) continue;
      r.identical = false;
      const double scale = std::max({std::fabs(x), std::fabs(y), a[k]->GetBinError(i)});
      const double rel = std::fabs(x - y) / scale;
      r.max_rel = std::max(r.max_rel, rel);
      if (!w || rel > rtol) r.ok = false;
    }
  }
  return r;
}

void write_histograms(const Hists &hists, const std::string &path) {
  bench::TemporaryOutput target(path);
  {
    std::unique_ptr<TFile> out(TFile::Open(target.temporary().c_str(), "RECREATE"));
    if (!out || out->IsZombie()) throw std::runtime_error("cannot create output file " + target.temporary());
    for (const auto &h : hists) out->WriteObject(h.get(), h->GetName());
    out->Close();
  }
  target.commit();
}

}  // namespace

int main(int argc, char **argv) {
  return bench::guarded_main("rdf_bench", argc, argv,
      bench::with_retake_options({{"file-list", ""}, {"tree", "Events"}, {"workload", "analysis"},
                                  {"method", "histo3d"}, {"histograms", "1"}, {"threads", "0"}, {"reps", "5"},
                                  {"warmup", "1"}, {"collection", "Jet"}, {"pdf-branch", "LHEPdfWeight"},
                                  {"pdf-count", "102"}, {"pdf-nominal", "1"}, {"rtol", "1e-9"}, {"output", ""},
                                  {"check-only", "0"}, {"cache", "none"}, {"min-sample-s", "0"},
                                  {"max-sample-s", "0"}}),
      [&](const bench::Options &opt) {
    bench::RootErrors::install();
    Settings s;
    s.workload = opt.str("workload");
    s.method = s.workload == "pdf" ? opt.str("method") : "";
    s.tree = opt.str("tree");
    s.collection = opt.str("collection");
    s.pdf_branch = opt.str("pdf-branch");
    s.histograms = static_cast<int>(opt.integer("histograms", 1));
    s.pdf_count = static_cast<unsigned int>(opt.integer("pdf-count", 1));
    s.nominal = opt.integer("pdf-nominal", 0) != 0;
    if (s.workload != "analysis" && s.workload != "nhist" && s.workload != "pdf")
      throw std::invalid_argument("--workload must be analysis, nhist or pdf, got '" + s.workload + "'");
    if (s.workload == "pdf" && s.method != "defines" && s.method != "histo3d" && s.method != "histond" &&
        s.method != "vary")
      throw std::invalid_argument("--method must be defines, histo3d, histond or vary, got '" + s.method + "'");
    const std::string cache = opt.str("cache");
    if (cache != "none" && cache != "cold" && cache != "warm")
      throw std::invalid_argument("--cache must be none, cold or warm, got '" + cache + "'");
    const int threads = static_cast<int>(opt.integer("threads", 0));
    const long long reps = opt.integer("reps", 1), warmup = opt.integer("warmup", 0);
    const double rtol = opt.real("rtol");
    const bench::Retakes retakes = bench::retakes_from(opt);
    bench::Calibration calibration(warmup, opt.seconds("min-sample-s", 60), opt.seconds("max-sample-s", 600));
    const std::vector<std::string> files = bench::read_lines(opt.str("file-list"), "file-list");

    // Everything the event loops need is checked before the first one.
    if (opt.integer("check-only", 0)) {
      s.workload = "analysis";  // reads every branch any workload reads
      const Inputs inputs = check_inputs(files, s, true);
      bench::JsonLine()
          .add("record", "validation")
          .add("ok", true)
          .add("files", static_cast<long long>(files.size()))
          .add("events", inputs.entries)
          .add("checksum", static_cast<double>(inputs.entries))
          .print();
      return 0;
    }
    const Inputs inputs = check_inputs(files, s);

    if (threads > 0) {
      ROOT::EnableImplicitMT(threads);
      if (static_cast<int>(ROOT::GetThreadPoolSize()) != threads)
        throw std::runtime_error("asked for " + std::to_string(threads) + " threads, ROOT's pool has " +
                                 std::to_string(ROOT::GetThreadPoolSize()));
    }

    // ROOT errors in the event loops become exceptions (bench::RootErrors::Throwing); a
    // failed loop is then blamed on the file and branch that cannot be read.
    bench::RootErrors::Throwing throwing;
    auto blame = [&](const std::string &root_error, const std::string &what) {
      bench::RootErrors::stop_throwing();
      if (root_error.empty()) return std::runtime_error(what);
      const std::string culprit = unreadable_branch(files, s);
      return std::runtime_error((culprit.empty() ? "ROOT reported an error in the event loop: " + root_error
                                                 : culprit) +
                                " (workload " + s.workload + ", " + std::to_string(threads) + " threads)");
    };

    Hists reference, last;
    Agreement across_reps;
    long long identical_reps = 0;
    bool counts_ok = true;
    unsigned long long selected = 0;
    long long loops_compared = 0;
    for (long long rep = 0; rep < warmup + reps; ++rep) {
      // one Booked per event loop of the sample: their results are read after the timed region
      std::vector<Booked> booked;
      const long long loops = calibration.loops(rep);
      unsigned int slots = 0;
      bench::DelayedTiming t{};
      double resident = -1;        // the first loop's resident share once its cache state was set (none: -1)
      long long device_bytes = 0;  // what the sample's loops took from the device
      long long sample_retakes = 0;
      try {
        // the whole pool's delay, judged over its threads' time (the sequential loop: one thread)
        std::tie(t, sample_retakes) = bench::take_retaking(retakes, rep >= warmup, std::max(threads, 1), [&] {
          booked.clear();
          booked.resize(static_cast<std::size_t>(loops));
          bench::DelayedTiming sample{0, 0, 0};
          device_bytes = 0;
          for (auto &one : booked) {
            if (cache != "none") {  // untimed, checked
              const double here = bench::page_cache::prepare(files, cache);
              if (&one == &booked.front()) resident = here;
            }
            const long long before = bench::page_cache::device_read_bytes();
            sample += bench::time_delayed([&] {
              ROOT::RDataFrame df(s.tree, files);
              slots = df.GetNSlots();
              one = s.workload == "analysis" ? book_analysis(df, s)
                    : s.workload == "nhist"  ? book_nhist(df, s)
                                             : book_pdf(df, s);
              one.count.GetValue();  // runs the event loop for every booked result
            });
            const long long after = bench::page_cache::device_read_bytes();
            device_bytes = device_bytes < 0 || before < 0 || after < 0 ? -1 : device_bytes + after - before;
          }
          return sample;
        });
      } catch (const std::exception &error) {
        throw blame(bench::RootErrors::take(), error.what());
      }
      calibration.update(rep, loops, t.wall_s, t.wall_s);
      // An error that RDataFrame caught itself still fails the run.
      if (const std::string error = bench::RootErrors::take(); !error.empty()) throw blame(error, error);
      Hists hists;
      unsigned long long entries = 0;
      for (std::size_t i = 0; i < booked.size(); ++i) {
        hists = booked[i].collect();
        entries = *booked[i].count;
        if (booked[i].selected) selected = *booked[i].selected;
        counts_ok = counts_ok && static_cast<long long>(entries) == inputs.entries;
        if (rep == 0 && i == 0) {
          reference = std::move(hists);
          hists = Hists();
          continue;
        }
        const Agreement a = compare(reference, hists, rtol);
        across_reps.ok = across_reps.ok && a.ok;
        across_reps.identical = across_reps.identical && a.identical;
        across_reps.max_rel = std::max(across_reps.max_rel, a.max_rel);
        identical_reps += a.identical;
        ++loops_compared;
      }
      const Hists &current = rep == 0 && booked.size() == 1 ? reference : hists;
      bench::JsonLine record;
      record.add("record", "timing")
          .add("kernel", "rdf_bench")
          .add("workload", s.workload)
          .add("method", s.method)
          .add("histograms", static_cast<long long>(current.size()))
          .add("threads", threads)
          .add("slots", static_cast<int>(slots))
          .add("loop_cache", cache)
          .add("loop_resident", resident)
          .add("device_bytes", device_bytes);
      bench::add_sample_fields(record, rep, warmup, t, sample_retakes)
          .add("loops", loops)
          .add("events", static_cast<long long>(entries))
          .add("content_hash", hex(content_hash(current)))
          .add("content_sum", content_sum(current))
          .print();
      bench::JsonLine().add("record", "progress").add("done", rep + 1).add("total", warmup + reps).print();
      if (rep + 1 == warmup + reps) last = rep == 0 && booked.size() == 1 ? std::move(reference) : std::move(hists);
    }
    if (!opt.str("output").empty()) write_histograms(last, opt.str("output"));

    const bool ok = counts_ok && across_reps.ok;
    bench::JsonLine()
        .add("record", "validation")
        .add("ok", ok)
        .add("checksum", content_sum(last))
        .add("content_hash", hex(content_hash(last)))
        .add("histograms", static_cast<long long>(last.size()))
        .add("events", inputs.entries)
        .add("selected", static_cast<long long>(selected))
        .add("files", static_cast<long long>(files.size()))
        .add("file_bytes", inputs.file_bytes)
        .add("read_zip_bytes", inputs.read_zip_bytes)
        .add("read_tot_bytes", inputs.read_tot_bytes)
        .add("open_s", inputs.open_s)
        .add("entries_match", counts_ok)
        .add("reps_agree", across_reps.ok)
        .add("reps_identical", static_cast<long long>(identical_reps))
        .add("loops_compared", loops_compared)
        .add("reps_max_rel_diff", across_reps.max_rel)
        .add("pdf_weights", static_cast<long long>(s.n_pdf()))
        .print();
    if (!ok) {
      std::fprintf(stderr, "rdf_bench: %s\n",
                   !counts_ok ? "an event loop did not see every entry of the input files"
                              : "histograms differ between repetitions of the same event loop");
      return 3;
    }
    return 0;
  });
}

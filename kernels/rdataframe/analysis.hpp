// The RDataFrame workloads' column functions and histogram binnings, in one
// place for both sides of the experiment: the compiled kernel (rdf_bench.cpp)
// calls them in typed Defines, and the distributed (Dask) run declares this
// same header in Cling (locally and on every worker) and calls them from its
// string Defines. One source for both is what lets the Dask histograms be
// compared bin by bin with the compiled single-thread run.
//
// The functions only select, copy and compare values (no arithmetic that a
// compiler could contract into a fused multiply-add differently in GCC and in
// Cling), so both sides fill the histograms with the very same numbers.
#pragma once

#include <ROOT/RVec.hxx>

#include <cstddef>
#include <numeric>
#include <stdexcept>
#include <string>

namespace tpa {

using RVecF = ROOT::RVec<float>;
using RVecU = ROOT::RVec<unsigned int>;

// The PDF weights histogrammed: the branch's values (relative weights
// w_var / w_nominal), with the nominal weight 1 put in front when `nominal`.
// The real CMS file has 102 values per event (LHA IDs 292201..292302: 100
// replicas and two alpha_s variations, without the central set 292200), the
// seed histogrammed 103: prepending the nominal gives the seed's 103. An event
// with another count than `expected` is an error, not a silently shorter row.
inline RVecF pdf_weights(const RVecF &values, bool nominal, unsigned int expected) {
  if (values.size() != expected)
    throw std::runtime_error("PDF weight branch has " + std::to_string(values.size()) + " values in an event, expected " +
                             std::to_string(expected));
  if (!nominal) return values;
  RVecF weights(values.size() + 1);
  weights[0] = 1.f;
  std::copy(values.begin(), values.end(), weights.begin() + 1);
  return weights;
}

// First element of a collection (the caller filters on n > 0).
inline float lead(const RVecF &values) { return values[0]; }

// Element i of the weights (one Define per weight, the seed's naive method).
inline float at(const RVecF &values, unsigned int i) { return values[i]; }

// The seed's Histo3D trick: the scalar repeated once per weight, and the
// weight indices 0..n-1.
inline RVecF repeat(float value, const RVecF &like) { return RVecF(like.size(), value); }
inline RVecU indices(const RVecF &like) {
  RVecU result(like.size());
  std::iota(result.begin(), result.end(), 0u);
  return result;
}

// The "number of histograms" workload: histogram i counts the jets above a
// threshold of (20 + i) GeV; one Define per histogram, as in the seed.
inline int count_above(const RVecF &pt, float threshold) {
  int n = 0;
  for (float x : pt) n += x > threshold;
  return n;
}
inline float nhist_threshold(int i) { return static_cast<float>(20 + i); }

// Binnings. Python reads them from here (through Cling) for the Dask run.
struct Axis {
  int bins;
  double low, high;
};
inline constexpr Axis kMet{100, 0., 500.};      // MET_pt [GeV]
inline constexpr Axis kNJet{20, -0.5, 19.5};    // nJet
inline constexpr Axis kJetPt{100, 0., 500.};    // Jet_pt [GeV]
inline constexpr Axis kJetEta{50, -5., 5.};     // Jet_eta
inline constexpr Axis kNpv{60, -0.5, 59.5};     // PV_npvs
inline constexpr Axis kLeadPt{50, 0., 200.};    // leading object's pT [GeV], unweighted TH2D
inline constexpr Axis kLeadEta{50, -5., 5.};    // leading object's eta (jets reach |eta| = 5)
inline constexpr Axis kPdfPt{25, 0., 200.};     // leading object's pT in the PDF-weight histograms
inline constexpr Axis kPdfEta{20, -5., 5.};     // leading object's eta in the PDF-weight histograms
inline constexpr Axis kNAbove{16, -0.5, 15.5};  // jets above a threshold

}  // namespace tpa

// How the flat MiniAOD-like layout names a collection's branches: the counter nC
// (UInt_t), the pT C_pt and the other attributes C_a001, C_a002, ... (Float_t,
// Int_t, and UChar_t for the classes' Bool_t members); a small-array member
// (Float_t a014[3]) is one branch per element, C_a014_0, C_a014_1, C_a014_2, as
// NanoAOD flattens them. make_aod_like.cpp writes them; the writing experiment
// builds its data products from them.
#pragma once

#include <cstdio>
#include <string>

namespace aod {

inline std::string flat_counter(const std::string &collection) { return "n" + collection; }

// Attribute `attribute`'s branch; element `element` of a small array's.
inline std::string flat_branch(const std::string &collection, int attribute, int element = -1) {
  if (attribute == 0) return collection + "_pt";
  char suffix[24];
  if (element < 0) std::snprintf(suffix, sizeof suffix, "_a%03d", attribute);
  else std::snprintf(suffix, sizeof suffix, "_a%03d_%d", attribute, element);
  return collection + suffix;
}

}  // namespace aod

// How the flat AOD-like layout names a collection's branches: the counter nC
// (UInt_t), the pT C_pt and the other attributes C_a001, C_a002, ... (Float_t,
// Int_t, and UChar_t for the classes' Bool_t members). make_aod_like.cpp writes
// them; the writing experiment builds its data products from them.
#pragma once

#include <cstdio>
#include <string>

namespace aod {

inline std::string flat_counter(const std::string &collection) { return "n" + collection; }

inline std::string flat_branch(const std::string &collection, int attribute) {
  if (attribute == 0) return collection + "_pt";
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "_a%03d", attribute);
  return collection + suffix;
}

}  // namespace aod

// How the flat MiniAOD-like layout names a collection's branches: the counter nC
// (UInt_t), the pT C_pt and the other attributes C_a001, C_a002, ... (Float_t,
// Int_t, and UChar_t for the classes' Bool_t members); a small-array member
// (Float_t a030[3]) is one branch per element, C_a030_0, C_a030_1, C_a030_2, as
// NanoAOD flattens them, and so is the inner vector (std::vector<Float_t> userFloats,
// attribute 14: C_a014_0.._2). make_aod_like.cpp writes them; the writing experiment
// builds its data products from them.
#pragma once

#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

#include "aod_classes.h"

namespace aod {

template <class T>
struct is_vector : std::false_type {};
template <class T>
struct is_vector<std::vector<T>> : std::true_type {};

inline std::string flat_counter(const std::string &collection) { return "n" + collection; }

// Attribute `attribute`'s branch; element `element` of a small array's.
inline std::string flat_branch(const std::string &collection, int attribute, int element = -1) {
  if (attribute == 0) return collection + "_pt";
  char suffix[24];
  if (element < 0) std::snprintf(suffix, sizeof suffix, "_a%03d", attribute);
  else std::snprintf(suffix, sizeof suffix, "_a%03d_%d", attribute, element);
  return collection + suffix;
}

// f(k, value) for each value of attribute a's member, in the flat layout's order: once for a
// scalar (k = -1), for each element of a small array or of the inner vector (k = 0, 1, ...;
// the vector is first sized to attribute_width(a) values, the flat layout's columns).
template <class M, class F>
void for_each_value(M &member, int a, F &&f) {
  if constexpr (std::is_array_v<M>) {
    for (std::size_t k = 0; k < std::extent_v<M>; ++k) f(static_cast<int>(k), member[k]);
  } else if constexpr (is_vector<M>::value) {
    member.resize(static_cast<std::size_t>(attribute_width(a)));
    for (std::size_t k = 0; k < member.size(); ++k) f(static_cast<int>(k), member[k]);
  } else {
    f(-1, member);
  }
}

}  // namespace aod

// Prints the ROOT version these kernels were built against, as one JSON line.
#include <TROOT.h>

#include "bench.hpp"

int main() {
  bench::JsonLine()
      .add("record", "root_info")
      .add("root_version", gROOT->GetVersion())
      .add("root_version_code", static_cast<long long>(gROOT->GetVersionCode()))
      .add("compiler", TP_COMPILER)
      .print();
  return 0;
}

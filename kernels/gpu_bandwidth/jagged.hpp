// The jagged test data of the explode/combine benchmark, shared by the CUDA
// program and mirrored exactly in Python (src/throughput/experiments/gpu_bandwidth/data.py,
// `jagged_counts`), so that every method works on the same events and their
// checksums can be compared.
//
// Event e holds splitmix64(e) % (2*mean + 1) particles (0 included: empty
// events are part of every run). Event e's value is e % 1000 and particle j's
// (global index) is j % 1000: small integers, exact in float32 and float64,
// so every output value and checksum can be checked exactly.
#pragma once

#include <cstdint>
#include <vector>

namespace jagged {

inline std::uint64_t splitmix64(std::uint64_t x) {
  std::uint64_t z = x + 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

inline long long count(long long event, long long mean) {
  return static_cast<long long>(splitmix64(static_cast<std::uint64_t>(event)) %
                                static_cast<std::uint64_t>(2 * mean + 1));
}

// offsets[0] = 0, offsets[e+1] = offsets[e] + count(e).
inline std::vector<long long> offsets(long long events, long long mean) {
  std::vector<long long> off(static_cast<std::size_t>(events) + 1, 0);
  for (long long e = 0; e < events; ++e) off[e + 1] = off[e] + count(e, mean);
  return off;
}

}  // namespace jagged

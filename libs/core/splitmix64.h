// SplitMix64 (Steele, Lea, Flood 2014): one step of the generator, used as a 64-bit mixing function that
// turns nearby seeds into unrelated ones. Deterministic across builds and platforms.
#pragma once

#include <cstdint>

namespace accelopt::core {

// The SplitMix64 output for state `x` (the state advanced by the golden-ratio increment, then mixed).
constexpr uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace accelopt::core

// SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number generators", 2014): a
// 64-bit state advanced by the golden-ratio increment, then a finalizer that mixes every bit.
// Deterministic and tiny: the seeded shuffles of compare's held-out splits use it as a generator,
// and the fabric uses one step of it to give each flow class a random-looking 64-bit word.
#pragma once

#include <cstdint>

namespace specsim {

// Advances `state` and returns the next value.
inline uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace specsim

// SplitMix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number generators", OOPSLA
// 2014; the finalizer of Vigna's splitmix64.c): a well-mixed 64-bit hash, used to derive
// independent-looking seeds and draws from (seed, worker, step) without shared RNG state.
#ifndef HOGWILD_CORE_SPLITMIX64_H_
#define HOGWILD_CORE_SPLITMIX64_H_

#include <cstdint>

namespace hogwild {

// A bijection on 64-bit words; neighbouring inputs give unrelated outputs. Pure.
constexpr uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

}  // namespace hogwild

#endif  // HOGWILD_CORE_SPLITMIX64_H_

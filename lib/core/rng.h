#pragma once
// Rng: a counter-based generator. Its whole state is (seed, counter), so a checkpoint can store
// it and --resume continues the exact stream; value i of a stream depends only on (seed, i), so
// parallel loops (dropout masks) draw the same numbers whatever the thread count.
#include <cstdint>

namespace attn {

// SplitMix64 finaliser: a strong 64-bit mix of (seed, index).
inline uint64_t mix64(uint64_t seed, uint64_t index) {
  uint64_t z = seed + 0x9e3779b97f4a7c15ull * (index + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Uniform in [0, 1) from the top 24 bits (exactly representable in f32).
inline float uniform_at(uint64_t seed, uint64_t index) {
  return static_cast<float>(mix64(seed, index) >> 40) * (1.0f / 16777216.0f);
}

class Rng {
 public:
  explicit Rng(uint64_t seed = 0, uint64_t counter = 0) : seed_(seed), counter_(counter) {}

  uint64_t next_u64() { return mix64(seed_, counter_++); }
  float uniform() { return uniform_at(seed_, counter_++); }
  // Uniform in [0, 1) from the top 53 bits: for choices whose weights need double precision.
  double uniform_double() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  float normal(float mean = 0.f, float stddev = 1.f);  // Box-Muller
  uint64_t below(uint64_t bound) { return next_u64() % bound; }
  // Reserves `count` values for a parallel consumer and returns the first index.
  uint64_t skip(uint64_t count) {
    uint64_t first = counter_;
    counter_ += count;
    return first;
  }

  uint64_t seed() const { return seed_; }
  uint64_t counter() const { return counter_; }

 private:
  uint64_t seed_;
  uint64_t counter_;
};

}  // namespace attn

#include "layers/alibi_positions.h"

#include <cmath>

namespace attn::layers {

namespace {

// 2^(-8 (h + 1) / n) for h = 0 .. n - 1.
std::vector<float> geometric_slopes(int64_t n) {
  std::vector<float> slopes;
  for (int64_t h = 0; h < n; ++h) slopes.push_back(float(std::exp2(-8.0 * double(h + 1) / double(n))));
  return slopes;
}

}  // namespace

std::vector<float> alibi_slopes(int64_t heads) {
  ATTN_CHECK(heads >= 1, "alibi_slopes: ", heads, " heads");
  int64_t power = 1;
  while (power * 2 <= heads) power *= 2;
  std::vector<float> slopes = geometric_slopes(power);
  // The slopes of 2n heads interleave those of n (2^(-8 k / n) = 2^(-8 (2k) / 2n)): the ones
  // with an odd numerator, 2^(-8 (2k + 1) / 2n) at indices 0, 2, 4, ..., are the new ones.
  const std::vector<float> finer = geometric_slopes(2 * power);
  for (size_t i = 0; int64_t(slopes.size()) < heads; i += 2) slopes.push_back(finer[i]);
  return slopes;
}

AlibiPositions::AlibiPositions(int64_t heads) : bias_{alibi_slopes(heads)} {}

std::unique_ptr<PositionScheme> make_alibi_positions(ParameterStore&, const std::string&,
                                                     const PositionSchemeOptions& options) {
  return std::make_unique<AlibiPositions>(options.heads);
}

}  // namespace attn::layers

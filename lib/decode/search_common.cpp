#include <algorithm>
#include <cmath>

#include "decode/search.h"

namespace attn::decode {

int64_t max_output_length(int64_t source_length, const SearchOptions& options) {
  int64_t length = static_cast<int64_t>(options.max_len_ratio * float(source_length)) + options.max_len_extra;
  if (options.max_output_tokens > 0) length = std::min(length, options.max_output_tokens);
  return std::max<int64_t>(length, 1);
}

float length_penalty(int64_t length, float alpha) {
  return alpha == 0.f ? 1.f : std::pow((5.f + float(length)) / 6.f, alpha);
}

}  // namespace attn::decode

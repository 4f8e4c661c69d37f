#include <algorithm>
#include <cmath>

#include "core/fast_math.h"
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

void log_softmax_rows(Tensor& logits) {
  int64_t rows = logits.dim(0), width = logits.dim(1);
  float* values = logits.data();
#pragma omp parallel for if (rows > 1)
  for (int64_t r = 0; r < rows; ++r) {
    float* row = values + r * width;
    const float max_value = row_max(row, width);
    float sum = 0.f;
#pragma omp simd reduction(+ : sum)
    for (int64_t v = 0; v < width; ++v) sum += fast_exp(row[v] - max_value);
    float log_sum = max_value + std::log(sum);
#pragma omp simd
    for (int64_t v = 0; v < width; ++v) row[v] -= log_sum;
  }
}

}  // namespace attn::decode

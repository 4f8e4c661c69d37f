#pragma once
// The additive masks that softmax and attention take (values 0 or kMaskValue), and their builders.
//
// kMaskValue is a finite large negative instead of -inf: exp(kMaskValue - max) underflows to
// exactly 0 in f32, so a masked position gets exactly 0 weight, yet a row whose every position
// is masked stays finite (uniform) instead of turning into NaN.
//
// Shapes: B batch, S source (key) length, T target (query) length. The masks keep size-1 dims
// where they broadcast inside softmax: (B,1,S) over query rows, (1,T,T) over the batch.
#include <cstdint>
#include <vector>

#include "core/tensor.h"

namespace attn::ops {

constexpr float kMaskValue = -1e9f;

// (B,1,S): kMaskValue at key positions s >= lengths[b] (padding), 0 elsewhere.
Tensor key_padding_mask(const std::vector<int32_t>& lengths, int64_t max_len);

// (1,T,T): kMaskValue above the diagonal (query t may not see key s > t), 0 elsewhere.
Tensor causal_mask(int64_t length);

}  // namespace attn::ops

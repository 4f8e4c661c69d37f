#pragma once
// Builders of the additive masks that softmax and attention take (values 0 or kMaskValue).
//
// Shapes: B batch, S source (key) length, T target (query) length. The masks keep size-1 dims
// where they broadcast inside softmax: (B,1,S) over query rows, (1,T,T) over the batch.
#include <cstdint>
#include <vector>

#include "core/tensor.h"
#include "ops/mask.h"

namespace attn::ops {

// (B,1,S): kMaskValue at key positions s >= lengths[b] (padding), 0 elsewhere.
Tensor key_padding_mask(const std::vector<int32_t>& lengths, int64_t max_len);

// (1,T,T): kMaskValue above the diagonal (query t may not see key s > t), 0 elsewhere.
Tensor causal_mask(int64_t length);

}  // namespace attn::ops

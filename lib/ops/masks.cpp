// Additive attention masks. Shapes: lengths (B); key padding mask (B,1,S); causal mask (1,T,T).
#include "ops/masks.h"

#include "core/parallel.h"

namespace attn::ops {

Tensor key_padding_mask(const std::vector<int32_t>& lengths, int64_t max_len) {
  ATTN_CHECK(max_len >= 0, "key_padding_mask: negative max_len ", max_len);
  int64_t batch = static_cast<int64_t>(lengths.size());
  for (int64_t b = 0; b < batch; ++b)
    ATTN_CHECK(lengths[b] >= 0 && lengths[b] <= max_len, "key_padding_mask: length ", lengths[b], " of sequence ", b,
               " is outside [0, ", max_len, "]");
  Tensor mask = Tensor::empty({batch, 1, max_len});  // (B,1,S)
  float* values = mask.data();
  parallel_for(batch, max_len, [&](int64_t first, int64_t last) {
    for (int64_t b = first; b < last; ++b)
      for (int64_t s = 0; s < max_len; ++s) values[b * max_len + s] = s < lengths[b] ? 0.f : kMaskValue;
  });
  return mask;
}

Tensor causal_mask(int64_t length) {
  ATTN_CHECK(length >= 0, "causal_mask: negative length ", length);
  Tensor mask = Tensor::empty({1, length, length});  // (1,T,T)
  float* values = mask.data();
  parallel_for(length, length, [&](int64_t first, int64_t last) {
    for (int64_t t = first; t < last; ++t)
      for (int64_t s = 0; s < length; ++s) values[t * length + s] = s > t ? kMaskValue : 0.f;
  });
  return mask;
}

}  // namespace attn::ops

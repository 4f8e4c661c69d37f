#pragma once
// The additive mask value for attention scores and masked softmax.
//
// A finite large negative instead of -inf: exp(kMaskValue - max) underflows to exactly 0 in
// f32, so a masked position gets exactly 0 weight, yet a row whose every position is masked
// stays finite (uniform) instead of turning into NaN.
namespace attn::ops {

constexpr float kMaskValue = -1e9f;

}  // namespace attn::ops

#pragma once
// AttentionMaps: the attention weights a forward pass produced, by kind and layer, kept for
// attn-dump-attention and the attention tests. Weights are (B, H, Tq, Tk) softmax rows.
#include <string>
#include <vector>

#include "core/tensor.h"

namespace attn::layers {

enum class AttentionKind { encoder_self, decoder_self, cross };

std::string attention_kind_name(AttentionKind kind);  // "enc_self", "dec_self", "cross"
// The kind of one of those names; anything else throws, listing them.
AttentionKind attention_kind_from_name(const std::string& name);

struct AttentionMap {
  AttentionKind kind;
  int layer;
  Tensor weights;  // (B, H, Tq, Tk)
};

struct AttentionMaps {
  std::vector<AttentionMap> maps;
  void add(AttentionKind kind, int layer, const Tensor& weights) { maps.push_back({kind, layer, weights}); }
};

}  // namespace attn::layers

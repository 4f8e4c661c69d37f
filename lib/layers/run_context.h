#pragma once
// RunContext: what every layer's forward needs besides its inputs: the tape, whether this is a
// training pass (dropout on), the generator for dropout masks, and where to put attention maps.
#include "autograd/tape.h"
#include "core/choice.h"
#include "core/rng.h"
#include "layers/attention_maps.h"

namespace attn::layers {

// Guided alignment training: the decoder layer whose cross-attention weights get a gradient
// (ops::AttentionOptions::weights_grad), and where that layer leaves them, (B, H, T, S), for
// the loss on them (ops/guided_alignment_loss.h).
struct GuidedCrossAttention {
  int layer = 0;  // from 0
  Tensor weights;
};

struct RunContext {
  Tape& tape;
  bool training = false;
  Rng* rng = nullptr;                       // required when training with dropout > 0
  AttentionMaps* attention_maps = nullptr;  // filled when a caller wants the weights (dumps, tests)
  // The precision of the products of two activations (attention, the RNN's context), f32 or
  // bf16; a weight's product follows the weight's prepared form (core/matmul_weight.h).
  Precision precision = Precision::f32;
  GuidedCrossAttention* guided = nullptr;  // set by training with train.guided_alignment

  // Inverted dropout in training, identity otherwise; in training the result is `dtype`
  // (matmul_input_dtype() when a matmul is its only reader).
  Tensor dropout(const Tensor& x, float p, DType dtype = DType::f32) const;
  // The dtype for an activation whose only readers are matmuls (attention heads, the input of
  // a Linear): bf16 in bf16 training, so that the op making it converts it in the same pass
  // instead of each product converting it again; f32 otherwise (decoding's caches keep f32).
  DType matmul_input_dtype() const;
};

}  // namespace attn::layers

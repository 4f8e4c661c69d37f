#pragma once
// RunContext: what every layer's forward needs besides its inputs: the tape, whether this is a
// training pass (dropout on), the generator for dropout masks, and where to put attention maps.
#include "autograd/tape.h"
#include "core/rng.h"
#include "layers/attention_maps.h"

namespace attn::layers {

struct RunContext {
  Tape& tape;
  bool training = false;
  Rng* rng = nullptr;                       // required when training with dropout > 0
  AttentionMaps* attention_maps = nullptr;  // filled when a caller wants the weights (dumps, tests)

  // Inverted dropout in training, identity otherwise.
  Tensor dropout(const Tensor& x, float p) const;
};

}  // namespace attn::layers

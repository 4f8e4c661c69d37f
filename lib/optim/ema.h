#pragma once
// Ema: an exponential moving average of the weights (Polyak averaging), over the
// ParameterStore's flat buffer. After every optimizer update, with decay d:
//   ema = d * ema + (1 - d) * weights
// It starts as a copy of the weights. The trainer validates and saves checkpoint.best with the
// average swapped into the store (swap_with_store, twice: exact, no copy of the model kept).
#include "core/parameter_store.h"

namespace attn::optim {

class Ema {
 public:
  // The store must be finalized; the average keeps a reference to it.
  Ema(ParameterStore& store, float decay);

  // ema = decay * ema + (1 - decay) * weights, element by element.
  void update();
  // Exchanges the average and the store's weights; calling it again restores both.
  void swap_with_store();

  // Flat f32 average (store.size()), a shared handle: checkpoints save and load it in place.
  Tensor average() const { return average_; }
  float decay() const { return decay_; }

 private:
  ParameterStore& store_;
  float decay_;
  Tensor average_;
};

}  // namespace attn::optim

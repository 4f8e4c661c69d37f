#pragma once
// EmaWeights: while it lives, the parameters hold the moving average of the weights (if there
// is one) and the average the weights; both are restored when it goes out of scope, exactly.
#include "optim/ema.h"

namespace attn::train {

class EmaWeights {
 public:
  explicit EmaWeights(optim::Ema* ema) : ema_(ema) {
    if (ema_) ema_->swap_with_store();
  }
  ~EmaWeights() {
    if (ema_) ema_->swap_with_store();
  }
  EmaWeights(const EmaWeights&) = delete;
  EmaWeights& operator=(const EmaWeights&) = delete;

 private:
  optim::Ema* ema_;
};

}  // namespace attn::train

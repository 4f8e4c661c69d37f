#pragma once
// Adam (Kingma & Ba 2015) and AdamW (Loshchilov & Hutter 2019) over the ParameterStore's flat
// buffers: one OpenMP loop per step, whatever the number of parameters.
//
// With gradient g, step t (from 1), learning rate lr:
//   m = beta1 m + (1 - beta1) g
//   v = beta2 v + (1 - beta2) g^2
//   p -= lr * (m / (1 - beta1^t)) / (sqrt(v / (1 - beta2^t)) + epsilon)
// Weight decay wd, decoupled (AdamW): p -= lr * wd * p before the update, independent of the
// gradient scale. Not decoupled (L2): g += wd * p before the moments, as if wd/2 |p|^2 were
// added to the loss.
#include <cstdint>

#include "core/parameter_store.h"
#include "io/config.h"

namespace attn::optim {

struct AdamOptions {
  // train.adam_* and train.weight_decay's declared defaults (io/config.h).
  float beta1 = float(io::defaults<io::TrainConfig>().adam_beta1);
  float beta2 = float(io::defaults<io::TrainConfig>().adam_beta2);
  float epsilon = float(io::defaults<io::TrainConfig>().adam_epsilon);
  float weight_decay = float(io::defaults<io::TrainConfig>().weight_decay);
  bool decoupled_weight_decay = true;
};

class Adam {
 public:
  // The store must be finalized; the optimizer keeps a reference to it.
  Adam(ParameterStore& store, AdamOptions options = {});

  // One update from the gradients currently in store.grads(); increments step_count().
  void step(float learning_rate);

  int64_t step_count() const { return step_count_; }
  // Restores the step count on resume (with the moments loaded into first/second_moment()).
  void set_step_count(int64_t step_count);
  // Flat f32 moments (store.size()), shared handles: checkpoints save and load them in place.
  Tensor first_moment() const { return first_moment_; }
  Tensor second_moment() const { return second_moment_; }
  const AdamOptions& options() const { return options_; }

 private:
  ParameterStore& store_;
  AdamOptions options_;
  int64_t step_count_ = 0;
  Tensor first_moment_;   // m (size())
  Tensor second_moment_;  // v (size())
};

}  // namespace attn::optim

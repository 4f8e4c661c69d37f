#pragma once
// Gradient clipping by global norm (Pascanu et al. 2013): if ||g||_2 over ALL parameters
// exceeds max_norm, scale every gradient by max_norm / ||g||, keeping the direction.
#include "core/parameter_store.h"

namespace attn::optim {

// sqrt(sum_i g_i^2) over the flat gradient buffer, accumulated in double.
double global_grad_norm(const ParameterStore& store);

// Returns the norm BEFORE clipping. A non-finite norm (inf/NaN gradients) leaves the gradients
// untouched and is returned as is, so the caller can skip the step.
double clip_grad_norm(ParameterStore& store, double max_norm);

}  // namespace attn::optim

#pragma once
// Initializers: how a parameter's first values are drawn. The ParameterStore runs one on each
// parameter as it is registered, with the store's Rng, so one seed fixes every initial value.
//
// Random initializers reserve numel values of the Rng stream (Rng::skip) and fill element i
// from stream index first + i, so the values do not depend on the OpenMP thread count.
#include <functional>

#include "core/rng.h"
#include "core/tensor.h"

namespace attn {

// Fills `tensor` (f32) in place, drawing from `rng`.
using Initializer = std::function<void(Tensor& tensor, Rng& rng)>;

namespace init {

Initializer zeros();
Initializer ones();
Initializer constant(float value);
// N(0, stddev^2).
Initializer normal(float stddev);
// U(-bound, bound).
Initializer uniform(float bound);
// Glorot & Bengio (2010): U(-b, b) with b = sqrt(6 / (fan_in + fan_out)), for a weight stored
// (out, in) as Linear keeps it: fan_out = shape[0], fan_in = shape[1] (times any trailing
// dimensions, as PyTorch counts them). Keeps activation variance roughly constant across layers.
Initializer xavier_uniform();

}  // namespace init
}  // namespace attn

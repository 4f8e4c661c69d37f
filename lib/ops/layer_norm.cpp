// Layer normalisation over the last axis on oneDNN's layer_normalization primitives.
// Shapes: x, y (..., D) folded to rows (N, D); gamma, beta (D); mean, variance (N).
#include "ops/layer_norm.h"

#include <cstring>
#include <optional>

#include <oneapi/dnnl/dnnl.hpp>

#include "dnnl/context.h"
#include "dnnl/memory.h"
#include "ops/accumulate.h"

namespace attn::ops {

namespace {

using dnnl::layer_normalization_backward;
using dnnl::layer_normalization_forward;

// The cache key holds epsilon's bit pattern: a printed float would round 1e-7 to 0.
int64_t bits_of(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

const auto kFlags = dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;

struct LayerNormForwardEntry {
  layer_normalization_forward::primitive_desc pd;
  layer_normalization_forward primitive;
};

struct LayerNormBackwardEntry {
  layer_normalization_backward primitive;
};

// What the backward needs from the forward: the per-row statistics of a forward_training run.
struct LayerNormSaved {
  Tensor x, gamma, beta, y;  // x, y (N, D)
  Tensor mean, variance;     // (N)
  float epsilon;
};

LayerNormForwardEntry& forward_entry(const Shape& rows, float epsilon, dnnl::prop_kind kind) {
  auto& context = dnn::Context::get();
  dnn::CacheKey key("layer_norm_fwd");
  key.add(rows).add(bits_of(epsilon)).add(int64_t(kind));
  return context.cache().get<LayerNormForwardEntry>(key.str(), [&] {
    layer_normalization_forward::desc op(kind, dnn::plain_desc(rows), dnn::plain_desc({rows[0]}), epsilon, kFlags);
    layer_normalization_forward::primitive_desc pd(op, context.engine());
    return LayerNormForwardEntry{pd, layer_normalization_forward(pd)};
  });
}

LayerNormBackwardEntry& backward_entry(const Shape& rows, float epsilon) {
  auto& context = dnn::Context::get();
  dnn::CacheKey key("layer_norm_bwd");
  key.add(rows).add(bits_of(epsilon));
  return context.cache().get<LayerNormBackwardEntry>(key.str(), [&] {
    auto desc = dnn::plain_desc(rows);
    layer_normalization_backward::desc op(dnnl::prop_kind::backward, desc, desc, dnn::plain_desc({rows[0]}), epsilon,
                                          kFlags);
    auto& hint = forward_entry(rows, epsilon, dnnl::prop_kind::forward_training).pd;
    layer_normalization_backward::primitive_desc pd(op, context.engine(), hint);
    return LayerNormBackwardEntry{layer_normalization_backward(pd)};
  });
}

// With xhat = (x - mean) / sqrt(var + eps) and g = dy * gamma, per row of width D:
//   dgamma += sum_rows dy * xhat,   dbeta += sum_rows dy,
//   dx     += (g - mean_j(g) - xhat * mean_j(g * xhat)) / sqrt(var + eps)
// oneDNN's backward overwrites all three, so it writes scratch that is then added (dx goes
// straight into x's gradient when that is untouched).
void layer_norm_backward(const LayerNormSaved& saved) {
  if (!saved.y.has_grad()) return;
  const Shape& rows = saved.x.shape();
  std::optional<GradientOutput> x_grad;
  if (saved.x.requires_grad()) x_grad.emplace(saved.x);
  Tensor dx = x_grad ? x_grad->tensor() : Tensor::empty(rows);  // (N, D)
  Tensor dgamma = Tensor::empty(saved.gamma.shape());           // (D)
  Tensor dbeta = Tensor::empty(saved.beta.shape());             // (D)
  auto& context = dnn::Context::get();
  backward_entry(rows, saved.epsilon)
      .primitive.execute(context.stream(), {{DNNL_ARG_SRC, dnn::wrap(saved.x)},
                                            {DNNL_ARG_DIFF_DST, dnn::wrap(saved.y.grad())},
                                            {DNNL_ARG_MEAN, dnn::wrap(saved.mean)},
                                            {DNNL_ARG_VARIANCE, dnn::wrap(saved.variance)},
                                            {DNNL_ARG_SCALE, dnn::wrap(saved.gamma)},
                                            {DNNL_ARG_SHIFT, dnn::wrap(saved.beta)},
                                            {DNNL_ARG_DIFF_SRC, dnn::wrap(dx)},
                                            {DNNL_ARG_DIFF_SCALE, dnn::wrap(dgamma)},
                                            {DNNL_ARG_DIFF_SHIFT, dnn::wrap(dbeta)}});
  if (x_grad) x_grad->add_in();
  if (saved.gamma.requires_grad()) accumulate_grad(saved.gamma, dgamma);
  if (saved.beta.requires_grad()) accumulate_grad(saved.beta, dbeta);
}

}  // namespace

Tensor layer_norm(Tape& tape, const Tensor& x_in, const Tensor& gamma, const Tensor& beta, float epsilon) {
  ATTN_CHECK(x_in.rank() >= 1 && x_in.dim(-1) > 0, "layer_norm: needs a non-empty last axis, got ",
             to_string(x_in.shape()));
  int64_t width = x_in.dim(-1);
  ATTN_CHECK(gamma.shape() == Shape{width} && beta.shape() == Shape{width}, "layer_norm: gamma ",
             to_string(gamma.shape()), " and beta ", to_string(beta.shape()), " must both be (", width, ") for input ",
             to_string(x_in.shape()));
  Tensor x = x_in.view({x_in.numel() / width, width});  // (N, D)
  Tensor y = Tensor::empty(x.shape());                  // (N, D)
  bool training = tape.needs_grad(x, gamma, beta);
  // forward_inference neither needs nor writes the statistics.
  Tensor mean = training ? Tensor::empty({x.dim(0)}) : Tensor();      // (N)
  Tensor variance = training ? Tensor::empty({x.dim(0)}) : Tensor();  // (N)
  auto kind = training ? dnnl::prop_kind::forward_training : dnnl::prop_kind::forward_inference;

  std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, dnn::wrap(x)},
                                             {DNNL_ARG_SCALE, dnn::wrap(gamma)},
                                             {DNNL_ARG_SHIFT, dnn::wrap(beta)},
                                             {DNNL_ARG_DST, dnn::wrap(y)}};
  if (training) {
    args.emplace(DNNL_ARG_MEAN, dnn::wrap(mean));
    args.emplace(DNNL_ARG_VARIANCE, dnn::wrap(variance));
  }
  auto& context = dnn::Context::get();
  forward_entry(x.shape(), epsilon, kind).primitive.execute(context.stream(), args);

  if (training) {
    y.set_requires_grad(true);
    LayerNormSaved saved{x, gamma, beta, y.grad_only(), mean, variance, epsilon};
    tape.record([saved] { layer_norm_backward(saved); });
  }
  return y.view(x_in.shape());
}

}  // namespace attn::ops

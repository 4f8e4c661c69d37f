// Layer normalisation over the last axis on oneDNN's layer_normalization primitives.
// Shapes: x, y (..., D) folded to rows (N, D); gamma, beta (D); mean, variance (N).
#include "ops/layer_norm.h"

#include <cstring>
#include <optional>

#include <oneapi/dnnl/dnnl.hpp>

#include "dnnl/context.h"
#include "dnnl/memory.h"
#include "dnnl/pieces.h"
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
  dnnl::memory::desc scratchpad;
};

struct LayerNormBackwardEntry {
  layer_normalization_backward primitive;
  dnnl::memory::desc scratchpad;
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
    layer_normalization_forward::primitive_desc pd(op, dnn::piece_attr(), context.engine());
    return LayerNormForwardEntry{pd, layer_normalization_forward(pd), pd.scratchpad_desc()};
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
    layer_normalization_backward::primitive_desc pd(op, dnn::piece_attr(), context.engine(), hint);
    return LayerNormBackwardEntry{layer_normalization_backward(pd), pd.scratchpad_desc()};
  });
}

// Rows [first, last) of a (..., D) tensor folded to rows (N, D), or entries [first, last) of a
// statistic (N).
dnnl::memory rows_of(const Tensor& t, int64_t first, int64_t last) {
  if (t.rank() == 1) return dnn::wrap(dnn::plain_desc({last - first}), t.data() + first);
  const int64_t width = t.dim(-1);
  return dnn::wrap(dnn::plain_desc({last - first, width}), t.data() + first * width);
}

// The pieces' dgamma and dbeta (each (pieces, D)), summed in piece order into (D) each.
void sum_pieces(const Tensor& partial_dgamma, const Tensor& partial_dbeta, Tensor& dgamma, Tensor& dbeta) {
  const int64_t pieces = partial_dgamma.dim(0), width = partial_dgamma.dim(1);
  const float* from_gamma = partial_dgamma.data();
  const float* from_beta = partial_dbeta.data();
  float* to_gamma = dgamma.data();
  float* to_beta = dbeta.data();
  for (int64_t j = 0; j < width; ++j) {
    to_gamma[j] = from_gamma[j];
    to_beta[j] = from_beta[j];
  }
  for (int64_t p = 1; p < pieces; ++p)
    for (int64_t j = 0; j < width; ++j) {
      to_gamma[j] += from_gamma[p * width + j];
      to_beta[j] += from_beta[p * width + j];
    }
}

// With xhat = (x - mean) / sqrt(var + eps) and g = dy * gamma, per row of width D:
//   dgamma += sum_rows dy * xhat,   dbeta += sum_rows dy,
//   dx     += (g - mean_j(g) - xhat * mean_j(g * xhat)) / sqrt(var + eps)
// oneDNN's backward overwrites all three, so it writes scratch that is then added (dx goes
// straight into x's gradient when that is untouched). Rows are cut into pieces as in the
// forward; each piece writes its own dgamma and dbeta, added in piece order afterwards.
void layer_norm_backward(const LayerNormSaved& saved) {
  if (!saved.y.has_grad()) return;
  const int64_t count = saved.x.dim(0), width = saved.x.dim(1);
  std::optional<GradientOutput> x_grad;
  if (saved.x.requires_grad()) x_grad.emplace(saved.x);
  const Tensor dx = x_grad ? x_grad->tensor() : Tensor::empty(saved.x.shape());  // (N, D)
  const Tensor dy = saved.y.grad();                                              // (N, D)
  Tensor dgamma = Tensor::empty(saved.gamma.shape());                            // (D)
  Tensor dbeta = Tensor::empty(saved.beta.shape());                              // (D)
  // Reads x and dy, writes dx and two sums: about twice the forward's work.
  const int64_t pieces = piece_count(count, 2 * width);
  const Tensor partial_dgamma = pieces > 1 ? Tensor::empty({pieces, width}) : dgamma.view({1, width});
  const Tensor partial_dbeta = pieces > 1 ? Tensor::empty({pieces, width}) : dbeta.view({1, width});
  const auto gamma_desc = dnn::plain_desc({width});
  dnn::run_in_pieces(
      count, pieces,
      [&](int64_t rows) -> LayerNormBackwardEntry& {
        return backward_entry({rows, width}, saved.epsilon);
      },
      [&](const LayerNormBackwardEntry& entry, int64_t piece, int64_t first, int64_t last) {
        dnn::execute(entry.primitive, entry.scratchpad,
                     {{DNNL_ARG_SRC, rows_of(saved.x, first, last)},
                      {DNNL_ARG_DIFF_DST, rows_of(dy, first, last)},
                      {DNNL_ARG_MEAN, rows_of(saved.mean, first, last)},
                      {DNNL_ARG_VARIANCE, rows_of(saved.variance, first, last)},
                      {DNNL_ARG_SCALE, dnn::wrap(saved.gamma)},
                      {DNNL_ARG_SHIFT, dnn::wrap(saved.beta)},
                      {DNNL_ARG_DIFF_SRC, rows_of(dx, first, last)},
                      {DNNL_ARG_DIFF_SCALE, dnn::wrap(gamma_desc, partial_dgamma.data() + piece * width)},
                      {DNNL_ARG_DIFF_SHIFT, dnn::wrap(gamma_desc, partial_dbeta.data() + piece * width)}});
      });
  if (pieces > 1) sum_pieces(partial_dgamma, partial_dbeta, dgamma, dbeta);
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

  // Rows are independent: pieces of rows, each with its rows' statistics.
  const int64_t count = x.dim(0);
  dnn::run_in_pieces(
      count, piece_count(count, width),
      [&](int64_t rows) -> LayerNormForwardEntry& {
        return forward_entry({rows, width}, epsilon, kind);
      },
      [&](const LayerNormForwardEntry& entry, int64_t, int64_t first, int64_t last) {
        std::unordered_map<int, dnnl::memory> args{{DNNL_ARG_SRC, rows_of(x, first, last)},
                                                   {DNNL_ARG_SCALE, dnn::wrap(gamma)},
                                                   {DNNL_ARG_SHIFT, dnn::wrap(beta)},
                                                   {DNNL_ARG_DST, rows_of(y, first, last)}};
        if (training) {
          args.emplace(DNNL_ARG_MEAN, rows_of(mean, first, last));
          args.emplace(DNNL_ARG_VARIANCE, rows_of(variance, first, last));
        }
        dnn::execute(entry.primitive, entry.scratchpad, std::move(args));
      });

  if (training) {
    y.set_requires_grad(true);
    LayerNormSaved saved{x, gamma, beta, y.grad_only(), mean, variance, epsilon};
    tape.record([saved] { layer_norm_backward(saved); });
  }
  return y.view(x_in.shape());
}

}  // namespace attn::ops

#include "ops/activation.h"

#include <unordered_map>

#include <oneapi/dnnl/dnnl.hpp>

#include "dnnl/context.h"
#include "dnnl/memory.h"
#include "dnnl/pieces.h"
#include "ops/accumulate.h"

namespace attn::ops {

namespace {

using dnnl::algorithm;

struct ForwardEntry {
  dnnl::eltwise_forward::primitive_desc pd;
  dnnl::eltwise_forward primitive;
  dnnl::memory::desc scratchpad;
};

struct BackwardEntry {
  dnnl::eltwise_backward primitive;
  dnnl::memory::desc scratchpad;
};

// The oneDNN algorithm. relu, tanh and logistic have *_use_dst_for_bwd variants whose backward
// reads y instead of x (f'(x) from y: relu 1[y>0], tanh 1-y^2, sigmoid y(1-y)); gelu has none.
algorithm to_algorithm(Activation kind) {
  switch (kind) {
    case Activation::relu:
      return algorithm::eltwise_relu_use_dst_for_bwd;
    case Activation::gelu:
      return algorithm::eltwise_gelu_erf;
    case Activation::tanh:
      return algorithm::eltwise_tanh_use_dst_for_bwd;
    case Activation::sigmoid:
      return algorithm::eltwise_logistic_use_dst_for_bwd;
  }
  ATTN_CHECK(false, "unknown activation ", int(kind));
}

bool backward_uses_dst(Activation kind) { return kind != Activation::gelu; }

// Elementwise ops ignore shape, so primitives are keyed (and built) on the flat count.
dnnl::memory::desc flat_desc(int64_t count) { return dnn::plain_desc({count}); }

ForwardEntry& forward_entry(Activation kind, int64_t count) {
  auto& context = dnn::Context::get();
  dnn::CacheKey key("eltwise_fwd");
  key.add(int64_t(kind)).add(count);
  return context.cache().get<ForwardEntry>(key.str(), [&] {
    // relu alpha = 0: the plain max(x, 0), no leaky slope.
    dnnl::eltwise_forward::desc desc(dnnl::prop_kind::forward_training, to_algorithm(kind), flat_desc(count), 0.f, 0.f);
    dnnl::eltwise_forward::primitive_desc pd(desc, dnn::piece_attr(), context.engine());
    return ForwardEntry{pd, dnnl::eltwise_forward(pd), pd.scratchpad_desc()};
  });
}

BackwardEntry& backward_entry(Activation kind, int64_t count) {
  auto& context = dnn::Context::get();
  dnn::CacheKey key("eltwise_bwd");
  key.add(int64_t(kind)).add(count);
  return context.cache().get<BackwardEntry>(key.str(), [&] {
    auto desc_flat = flat_desc(count);
    dnnl::eltwise_backward::desc desc(to_algorithm(kind), desc_flat, desc_flat, 0.f, 0.f);
    dnnl::eltwise_backward::primitive_desc pd(desc, dnn::piece_attr(), context.engine(), forward_entry(kind, count).pd);
    return BackwardEntry{dnnl::eltwise_backward(pd), pd.scratchpad_desc()};
  });
}

// How many pieces of the flat element range an activation of `count` elements runs in. ReLU
// is a pass over memory (kParallelPass); the others compute a transcendental function per
// element.
int64_t activation_pieces(Activation kind, int64_t count) {
  return kind == Activation::relu ? piece_count(count, 1, kParallelPass) : piece_count(count, 4);
}

// element `first` of an f32 tensor's values
const float* at(const Tensor& t, int64_t first) { return static_cast<const float*>(t.raw()) + first; }

// Backward of y = f(x):  dx += f'(x) dy. oneDNN's eltwise backward overwrites its diff_src,
// so it writes f'(x) dy into x's gradient if that is untouched, else into scratch then added.
// Elementwise: pieces of the flat element range.
void activation_backward(const Tensor& x, const Tensor& y, Activation kind) {
  if (!y.has_grad() || !x.requires_grad() || y.numel() == 0) return;
  const int64_t count = y.numel();
  GradientOutput dx(x);
  const Tensor& scratch = dx.tensor();  // x's shape: f'(x) dy
  const Tensor dy = y.grad();
  const bool use_dst = backward_uses_dst(kind);
  const Tensor& value = use_dst ? y : x;
  dnn::run_in_pieces(
      count, activation_pieces(kind, count),
      [&](int64_t length) -> BackwardEntry& { return backward_entry(kind, length); },
      [&](const BackwardEntry& entry, int64_t, int64_t first, int64_t last) {
        auto desc = flat_desc(last - first);
        dnn::execute(entry.primitive, entry.scratchpad,
                     {{use_dst ? DNNL_ARG_DST : DNNL_ARG_SRC, dnn::wrap(desc, at(value, first))},
                      {DNNL_ARG_DIFF_DST, dnn::wrap(desc, at(dy, first))},
                      {DNNL_ARG_DIFF_SRC, dnn::wrap(desc, at(scratch, first))}});
      });
  dx.add_in();
}

}  // namespace

// y = f(x) on oneDNN's eltwise forward; y may be x.
static void activation_forward(const Tensor& x, const Tensor& y, Activation kind) {
  ATTN_CHECK(x.dtype() == DType::f32, "activation ", choice_name(kind), ": input ", to_string(x.shape()),
             " is not f32");
  const int64_t count = x.numel();
  if (count == 0) return;
  dnn::run_in_pieces(
      count, activation_pieces(kind, count),
      [&](int64_t length) -> ForwardEntry& { return forward_entry(kind, length); },
      [&](const ForwardEntry& entry, int64_t, int64_t first, int64_t last) {
        auto desc = flat_desc(last - first);
        dnn::execute(entry.primitive, entry.scratchpad,
                     {{DNNL_ARG_SRC, dnn::wrap(desc, at(x, first))}, {DNNL_ARG_DST, dnn::wrap(desc, at(y, first))}});
      });
}

void activation_in_place(Tensor& x, Activation kind) { activation_forward(x, x, kind); }

Tensor activation(Tape& tape, const Tensor& x, Activation kind) {
  Tensor y = Tensor::empty(x.shape());  // x's shape
  activation_forward(x, y, kind);

  if (tape.needs_grad(x)) {
    y.set_requires_grad(true);
    // The backward reads one of x and y (y where oneDNN has a *_use_dst_for_bwd algorithm);
    // the other is kept for its gradient only.
    bool use_dst = backward_uses_dst(kind);
    tape.record(
        [x = use_dst ? x.grad_only() : x, y = use_dst ? y : y.grad_only(), kind] { activation_backward(x, y, kind); });
  }
  return y;
}

Tensor relu(Tape& tape, const Tensor& x) { return activation(tape, x, Activation::relu); }
Tensor gelu(Tape& tape, const Tensor& x) { return activation(tape, x, Activation::gelu); }
Tensor tanh(Tape& tape, const Tensor& x) { return activation(tape, x, Activation::tanh); }
Tensor sigmoid(Tape& tape, const Tensor& x) { return activation(tape, x, Activation::sigmoid); }

}  // namespace attn::ops

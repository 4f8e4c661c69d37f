#pragma once
// MatmulWeight: a rank-2 parameter (N, K) that a layer multiplies with (a Linear's weight, a
// tied embedding table as the output projection), in the forms decoding may use:
//   f32   the parameter itself (f32 training and decoding: nothing else is made)
//   bf16  a bf16 copy: made once when decoding asks for bf16; bf16 training refreshes it
//         before every forward (train::TrainStep), so each weight is converted once a step
//         instead of once per matmul, and its gradient still lands in the f32 parameter
//   int8  s8 values with per-row scales (core/quantized_matrix.h), made once for int8
// ParameterStore owns one per weight name and converts them all at once
// (ParameterStore::prepare_matmul_weights); ops::linear picks the form to multiply with.
// The copies are made from the f32 values at that moment: whoever changes the values and then
// multiplies again prepares them again.
//
// Decoding and bf16 training may also pack the prepared form (ops::pack_weight in ops/gemm.h):
// a copy in the blocked layout the CPU's matmul kernel reads, which spares every product the
// reordering of the transposed (N, K) operand (up to 3x on the few rows of greedy decoding; for
// int8 it is what puts the product on the VNNI kernel; in bf16 training the forward products,
// while the backward's read the plain bf16 copy). prepare() drops it.
#include <memory>
#include <optional>
#include <string>

#include "core/choice.h"
#include "core/quantized_matrix.h"
#include "core/tensor.h"

namespace attn {

// A weight in a matmul backend's own layout; what it holds is the backend's business.
struct PackedMatrix {
  virtual ~PackedMatrix() = default;
};

struct MatmulWeight {
  Tensor f32;  // (N, K): the parameter
  Precision precision = Precision::f32;
  Tensor bf16;                                 // (N, K) bf16, when precision is bf16
  QuantizedMatrix int8;                        // when precision is int8
  std::shared_ptr<const PackedMatrix> packed;  // the prepared form packed (decoding, bf16 training), or empty

  // Makes the form of `target` from f32 (and drops the others and the packed copy); a bf16
  // copy of the same shape is rewritten in place.
  void prepare(Precision target);
  // The values of the prepared form: what a product multiplies and what is packed (the s8
  // values of int8).
  const Tensor& prepared() const;
};

}  // namespace attn

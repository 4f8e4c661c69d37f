#pragma once
// concat / split along the last axis: joining and separating feature blocks, e.g. the GRU
// decoder input [emb(y); c] or the fused QKV projection's three outputs.
//
// Shapes: parts (..., D_i) with equal leading dims -> y (..., sum D_i); split is the inverse.
// N = product of the leading dims (rows), D width.
#include <cstdint>
#include <vector>

#include "autograd/tape.h"
#include "core/tensor.h"

namespace attn::ops {

Tensor concat(Tape& tape, const std::vector<Tensor>& parts);
// sizes must sum to x.dim(-1); part i is (..., sizes[i]).
std::vector<Tensor> split(Tape& tape, const Tensor& x, const std::vector<int64_t>& sizes);

}  // namespace attn::ops

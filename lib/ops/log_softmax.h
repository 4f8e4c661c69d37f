#pragma once
// log_softmax over the last axis.
//
// Shapes: x, y (..., V); rows N = numel / V.
#include <vector>

#include "autograd/tape.h"
#include "core/tensor.h"

namespace attn::ops {

// y = x - logsumexp(x) over the last axis (log-probabilities, computed without exp overflow).
Tensor log_softmax(Tape& tape, const Tensor& x);

// The same for decoding: logits (R, V) become their row-wise log-probabilities in place, with no
// tape and no new buffer (search calls it once per output token).
void log_softmax_rows_in_place(Tensor& logits);

// What beam search ranks continuations by, without writing a row: per row of logits (R, V), its
// log-sum-exp, so that logits[v] - log_sum is the very float log_softmax_rows_in_place writes,
// and the largest logit of each chunk of `chunk` columns (the last one may be shorter). One
// pass takes the maxima, one the exps.
struct RowLogSumExp {
  std::vector<float> log_sum;    // (R)
  std::vector<float> chunk_max;  // (R, chunks)
  int64_t chunks = 0;
};
RowLogSumExp log_sum_exp_rows(const Tensor& logits, int64_t chunk);

}  // namespace attn::ops

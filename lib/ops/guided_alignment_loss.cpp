#include "ops/guided_alignment_loss.h"

#include <cmath>
#include <vector>

#include "core/check.h"

namespace attn::ops {

namespace {

struct Dims {
  int64_t batch, heads, queries, keys;  // B, H, Tq, Tk
};

Dims check_inputs(const Tensor& weights, const Tensor& targets, const GuidedAlignmentOptions& options) {
  ATTN_CHECK(weights.rank() == 4, "guided_alignment_loss: weights must be (B, H, Tq, Tk), got ",
             to_string(weights.shape()));
  Dims dims{weights.dim(0), weights.dim(1), weights.dim(2), weights.dim(3)};
  ATTN_CHECK(targets.rank() == 3 && targets.dim(0) == dims.batch && targets.dim(1) == dims.queries &&
                 targets.dim(2) == dims.keys,
             "guided_alignment_loss: targets ", to_string(targets.shape()), " do not fit weights ",
             to_string(weights.shape()));
  ATTN_CHECK(!options.head || (*options.head >= 0 && *options.head < dims.heads), "guided_alignment_loss: head ",
             options.head.value_or(0), " outside the ", dims.heads, " heads");
  ATTN_CHECK(options.epsilon >= 0.f, "guided_alignment_loss: epsilon ", options.epsilon, " is negative");
  return dims;
}

// P of row (b, i): one head's weights, or their mean (in `mean`, Tk floats).
const float* row_weights(const float* weights, const Dims& dims, const GuidedAlignmentOptions& options, int64_t b,
                         int64_t i, std::vector<float>& mean) {
  auto head_row = [&](int64_t h) { return weights + ((b * dims.heads + h) * dims.queries + i) * dims.keys; };
  if (options.head) return head_row(*options.head);
  mean.assign(size_t(dims.keys), 0.f);
  for (int64_t h = 0; h < dims.heads; ++h) {
    const float* row = head_row(h);
    for (int64_t j = 0; j < dims.keys; ++j) mean[size_t(j)] += row[j];
  }
  for (float& value : mean) value /= float(dims.heads);
  return mean.data();
}

bool linked(const float* target, int64_t keys) {
  for (int64_t j = 0; j < keys; ++j)
    if (target[j] > 0.f) return true;
  return false;
}

// dL/dP_ij of a linked row.
float row_gradient(GuidedAlignmentCost cost, float p, float a, float epsilon) {
  return cost == GuidedAlignmentCost::ce ? -a / (p + epsilon) : 2.f * (p - a);
}

// Adds seed * dL/dP to the weights' gradient: into the head read, or 1/H of it into every head.
void guided_alignment_backward(const Tensor& weights, const Tensor& targets, const Tensor& loss,
                               const GuidedAlignmentOptions& options) {
  if (!loss.has_grad()) return;
  const float seed = loss.grad().item();
  const Dims dims{weights.dim(0), weights.dim(1), weights.dim(2), weights.dim(3)};
  const float* w = weights.data();
  const float* a = targets.data();
  float* grad = weights.grad().data();
  std::vector<float> mean, row_grad(size_t(dims.keys));
  for (int64_t b = 0; b < dims.batch; ++b)
    for (int64_t i = 0; i < dims.queries; ++i) {
      const float* target = a + (b * dims.queries + i) * dims.keys;
      if (!linked(target, dims.keys)) continue;
      const float* p = row_weights(w, dims, options, b, i, mean);
      for (int64_t j = 0; j < dims.keys; ++j)
        row_grad[size_t(j)] = seed * row_gradient(options.cost, p[j], target[j], options.epsilon);
      const float share = options.head ? 1.f : 1.f / float(dims.heads);
      for (int64_t h = 0; h < dims.heads; ++h) {
        if (options.head && h != *options.head) continue;
        float* g = grad + ((b * dims.heads + h) * dims.queries + i) * dims.keys;
        for (int64_t j = 0; j < dims.keys; ++j) g[j] += share * row_grad[size_t(j)];
      }
    }
}

}  // namespace

GuidedAlignmentResult guided_alignment_loss(Tape& tape, const Tensor& weights, const Tensor& targets,
                                            const GuidedAlignmentOptions& options) {
  const Dims dims = check_inputs(weights, targets, options);
  const float* w = weights.data();
  const float* a = targets.data();
  double sum = 0;
  int64_t rows = 0;
  std::vector<float> mean;
  for (int64_t b = 0; b < dims.batch; ++b)
    for (int64_t i = 0; i < dims.queries; ++i) {
      const float* target = a + (b * dims.queries + i) * dims.keys;
      if (!linked(target, dims.keys)) continue;
      ++rows;
      const float* p = row_weights(w, dims, options, b, i, mean);
      for (int64_t j = 0; j < dims.keys; ++j) {
        if (options.cost == GuidedAlignmentCost::ce) {
          if (target[j] > 0.f) sum -= double(target[j]) * std::log(double(p[j]) + options.epsilon);
        } else {
          const double difference = double(p[j]) - double(target[j]);
          sum += difference * difference;
        }
      }
    }
  Tensor loss = Tensor::full({1}, float(sum));  // (1)
  if (tape.needs_grad(weights)) {
    loss.set_requires_grad(true);
    tape.record([weights, targets, loss = loss.grad_only(), options] {
      guided_alignment_backward(weights, targets, loss, options);
    });
  }
  return {loss, rows};
}

}  // namespace attn::ops

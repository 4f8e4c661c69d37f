#include "ops/concat.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "core/parallel.h"

namespace attn::ops {

namespace {

// A column range [offset, offset + width) of a row-major (rows, stride) matrix.
struct ColumnBlock {
  const float* data;
  int64_t stride;
  int64_t offset;
};

// to[:, cols] = from[:, cols] (add == false) or to[:, cols] += from[:, cols] (add == true),
// for `width` columns of `rows` rows. Concat, split and both their backwards are this one move.
void move_columns(const ColumnBlock& from, const ColumnBlock& to, int64_t rows, int64_t width, bool add) {
  float* target_base = const_cast<float*>(to.data);
  parallel_for(rows, width, [&](int64_t first, int64_t last) {
    for (int64_t n = first; n < last; ++n) {
      const float* source = from.data + n * from.stride + from.offset;
      float* target = target_base + n * to.stride + to.offset;
      if (!add) {
        std::memcpy(target, source, width * sizeof(float));
        continue;
      }
#pragma omp simd
      for (int64_t j = 0; j < width; ++j) target[j] += source[j];
    }
  });
}

// N: the product of every dim but the last (safe when the last dim is 0).
int64_t leading_rows(const Tensor& x) { return numel(Shape(x.shape().begin(), x.shape().end() - 1)); }

std::string shapes_of(const std::vector<Tensor>& parts) {
  std::string text;
  for (const Tensor& part : parts) text += (text.empty() ? "" : ", ") + to_string(part.shape());
  return text;
}

Shape concat_shape(const std::vector<Tensor>& parts) {
  ATTN_CHECK(!parts.empty(), "concat: no parts");
  Shape shape = parts[0].shape();
  ATTN_CHECK(!shape.empty(), "concat: parts need rank >= 1");
  shape.back() = 0;
  for (const Tensor& part : parts) {
    ATTN_CHECK(part.rank() == static_cast<int>(shape.size()) &&
                   std::equal(part.shape().begin(), part.shape().end() - 1, shape.begin()),
               "concat: leading dims differ among parts ", shapes_of(parts));
    shape.back() += part.dim(-1);
  }
  return shape;
}

// The parts' gradient handles: neither backward reads values.
std::vector<Tensor> grad_only(const std::vector<Tensor>& parts) {
  std::vector<Tensor> handles;
  handles.reserve(parts.size());
  for (const Tensor& part : parts) handles.push_back(part.grad_only());
  return handles;
}

// Backward of y = [x_1, ..., x_k] along the last axis: dx_i += dy[..., columns of x_i].
void concat_backward(const std::vector<Tensor>& parts, const Tensor& y) {
  if (!y.has_grad()) return;
  Tensor dy = y.grad();  // (N, sum D_i)
  int64_t offset = 0;
  for (const Tensor& part : parts) {
    int64_t width = part.dim(-1);
    if (part.requires_grad()) {
      move_columns({dy.data(), y.dim(-1), offset}, {part.grad().data(), width, 0}, leading_rows(y), width, true);
    }
    offset += width;
  }
}

// Backward of [y_1, ..., y_k] = x along the last axis: dx[..., columns of y_i] += dy_i.
void split_backward(const Tensor& x, const std::vector<Tensor>& parts) {
  Tensor dx = x.grad();  // (N, D)
  int64_t offset = 0;
  for (const Tensor& part : parts) {
    int64_t width = part.dim(-1);
    if (part.has_grad()) {
      move_columns({part.grad().data(), width, 0}, {dx.data(), x.dim(-1), offset}, leading_rows(x), width, true);
    }
    offset += width;
  }
}

}  // namespace

Tensor concat(Tape& tape, const std::vector<Tensor>& parts) {
  Tensor y = Tensor::empty(concat_shape(parts));  // (..., sum D_i)
  int64_t offset = 0;
  for (const Tensor& part : parts) {
    int64_t width = part.dim(-1);
    move_columns({part.data(), width, 0}, {y.data(), y.dim(-1), offset}, leading_rows(y), width, false);
    offset += width;
  }

  bool needs_grad = std::any_of(parts.begin(), parts.end(), [&](const Tensor& part) { return tape.needs_grad(part); });
  if (needs_grad) {
    y.set_requires_grad(true);
    tape.record([parts = grad_only(parts), y = y.grad_only()] { concat_backward(parts, y); });
  }
  return y;
}

std::vector<Tensor> split(Tape& tape, const Tensor& x, const std::vector<int64_t>& sizes) {
  ATTN_CHECK(x.rank() >= 1, "split: input needs rank >= 1, got ", to_string(x.shape()));
  int64_t total = 0;
  for (int64_t size : sizes) {
    ATTN_CHECK(size >= 0, "split: negative size ", size);
    total += size;
  }
  ATTN_CHECK(total == x.dim(-1), "split: sizes sum to ", total, " but input ", to_string(x.shape()), " has last dim ",
             x.dim(-1));

  bool needs_grad = tape.needs_grad(x);
  std::vector<Tensor> parts;
  int64_t offset = 0;
  for (int64_t size : sizes) {
    Shape shape = x.shape();
    shape.back() = size;
    Tensor part = Tensor::empty(shape);  // (..., size)
    move_columns({x.data(), x.dim(-1), offset}, {part.data(), size, 0}, leading_rows(x), size, false);
    part.set_requires_grad(needs_grad);
    parts.push_back(part);
    offset += size;
  }
  if (needs_grad) tape.record([x = x.grad_only(), parts = grad_only(parts)] { split_backward(x, parts); });
  return parts;
}

}  // namespace attn::ops

#include "core/parameter_store.h"

#include <cstring>

#include "core/buffer_pool.h"
#include "core/parallel.h"

namespace attn {

namespace {

constexpr size_t kAlignElements = 64 / sizeof(float);

size_t round_up(size_t count) { return (count + kAlignElements - 1) / kAlignElements * kAlignElements; }

}  // namespace

ParameterStore::ParameterStore(uint64_t seed) : rng_(seed) {}

Tensor ParameterStore::add(const std::string& name, const Shape& shape, const Initializer& init) {
  ATTN_CHECK(!finalized_, "cannot add parameter '", name, "': the parameter store is already finalized");
  ATTN_CHECK(!name.empty(), "a parameter needs a name (shape ", to_string(shape), ")");
  ATTN_CHECK(index_.count(name) == 0, "duplicate parameter name '", name, "'");
  ATTN_CHECK(init, "parameter '", name, "' has no initializer");
  for (int64_t dim : shape)
    ATTN_CHECK(dim >= 0, "parameter '", name, "' has a negative dimension in shape ", to_string(shape));
  Tensor tensor = Tensor::zeros(shape);
  init(tensor, rng_);
  tensor.set_requires_grad(true);
  index_.emplace(name, parameters_.size());
  parameters_.push_back({name, tensor});
  return tensor;
}

void ParameterStore::finalize() {
  ATTN_CHECK(!finalized_, "the parameter store is already finalized");
  std::vector<size_t> offsets;
  size_t total = 0;
  for (const NamedParameter& parameter : parameters_) {
    offsets.push_back(total);
    total = round_up(total + parameter.tensor.numel());
  }
  // Zero-filled, so the padding stays zero in values and gradients alike. The gradient buffer
  // is made (zero-filled too) by the first grad() of any parameter: decoding never asks, and
  // would otherwise hold a second copy of the model's size.
  auto values = std::make_shared<Buffer>(total * sizeof(float), true);
  auto grads = std::make_shared<GradSlot>();
  for (size_t i = 0; i < parameters_.size(); ++i) {
    Tensor& tensor = parameters_[i].tensor;
    float* destination = static_cast<float*>(values->data()) + offsets[i];
    std::memcpy(destination, tensor.data(), tensor.numel() * sizeof(float));
    tensor.rebind(values, grads, offsets[i]);
  }
  flat_values_ = Tensor::view_of(values, grads, 0, {static_cast<int64_t>(total)});
  flat_values_.set_requires_grad(true);
  finalized_ = true;
  // The parameters' first storages are free blocks of the pool now, as large as the model: back
  // to the system, or a decoding process would keep them until its first step ends.
  BufferPool::instance().trim();
}

void ParameterStore::check_finalized(const char* what) const {
  ATTN_CHECK(finalized_, what, " needs a finalized parameter store (call finalize() after building the model)");
}

size_t ParameterStore::size() const {
  check_finalized("size()");
  return static_cast<size_t>(flat_values_.numel());
}

size_t ParameterStore::parameter_count() const {
  size_t count = 0;
  for (const NamedParameter& parameter : parameters_) count += parameter.tensor.numel();
  return count;
}

float* ParameterStore::values() {
  check_finalized("values()");
  return flat_values_.data();
}
const float* ParameterStore::values() const {
  check_finalized("values()");
  return flat_values_.data();
}
float* ParameterStore::grads() {
  check_finalized("grads()");
  return flat_values_.grad().data();
}
const float* ParameterStore::grads() const {
  check_finalized("grads()");
  return flat_values_.grad().data();
}

Tensor ParameterStore::flat_values() const {
  check_finalized("flat_values()");
  return flat_values_;
}
Tensor ParameterStore::flat_grads() const {
  check_finalized("flat_grads()");
  return flat_values_.grad();
}

void ParameterStore::zero_grad() {
  if (!finalized_) {
    for (NamedParameter& parameter : parameters_) parameter.tensor.zero_grad();
    return;
  }
  if (!flat_values_.has_grad()) return;  // a gradient buffer is made zero-filled
  float* grads = this->grads();          // (size())
  const int64_t count = flat_values_.numel();
  parallel_for(count, 1, kParallelPass, [&](int64_t first, int64_t last) {
#pragma omp simd
    for (int64_t i = first; i < last; ++i) grads[i] = 0.f;
  });
}

Tensor ParameterStore::get(const std::string& name) const {
  auto found = index_.find(name);
  ATTN_CHECK(found != index_.end(), "unknown parameter '", name, "' (the store holds ", parameters_.size(),
             " parameters)");
  return parameters_[found->second].tensor;
}

std::shared_ptr<const MatmulWeight> ParameterStore::matmul_weight(const std::string& name) {
  auto found = matmul_weights_.find(name);
  if (found != matmul_weights_.end()) return found->second;
  Tensor parameter = get(name);
  ATTN_CHECK(parameter.rank() == 2, "parameter ", name, " ", to_string(parameter.shape()), " is not a matrix");
  auto weight = std::make_shared<MatmulWeight>();
  weight->f32 = parameter;  // a handle: finalize()'s rebind reaches it too
  weight->prepare(matmul_precision_);
  matmul_weights_.emplace(name, weight);
  return weight;
}

void ParameterStore::prepare_matmul_weights(Precision precision) {
  for (auto& [name, weight] : matmul_weights_) weight->prepare(precision);
  matmul_precision_ = precision;
}

void ParameterStore::for_each_matmul_weight(const std::function<void(MatmulWeight&)>& visit) {
  for (auto& entry : matmul_weights_) visit(*entry.second);
}

}  // namespace attn

#include "core/parameter_store.h"

#include <cstring>

#include "core/buffer_pool.h"
#include "core/parallel.h"

namespace attn {

namespace {

constexpr size_t kAlignElements = 64 / sizeof(float);

size_t round_up(size_t count) { return (count + kAlignElements - 1) / kAlignElements * kAlignElements; }

}  // namespace

ParameterStore::ParameterStore(ParameterInit init) : rng_(init.seed), initial_values_(init.values) {}

Tensor ParameterStore::add(const std::string& name, const Shape& shape, const Initializer& init) {
  ATTN_CHECK(!finalized_, "cannot add parameter '", name, "': the parameter store is already finalized");
  ATTN_CHECK(!name.empty(), "a parameter needs a name (shape ", to_string(shape), ")");
  ATTN_CHECK(index_.count(name) == 0, "duplicate parameter name '", name, "'");
  ATTN_CHECK(init, "parameter '", name, "' has no initializer");
  for (int64_t dim : shape)
    ATTN_CHECK(dim >= 0, "parameter '", name, "' has a negative dimension in shape ", to_string(shape));
  Tensor tensor = initial_values_ ? Tensor::zeros(shape) : Tensor::without_values(shape);
  if (initial_values_) init(tensor, rng_);
  tensor.set_requires_grad(true);
  index_.emplace(name, parameters_.size());
  parameters_.push_back({name, tensor});
  return tensor;
}

void ParameterStore::finalize() {
  ATTN_CHECK(!finalized_, "the parameter store is already finalized");
  if (initial_values_) lay_out_flat();
  finalized_ = true;
}

void ParameterStore::lay_out_flat() {
  std::vector<size_t> offsets;
  size_t total = 0;
  for (const NamedParameter& parameter : parameters_) {
    offsets.push_back(total);
    if (parameter.tensor.has_values()) total = round_up(total + parameter.tensor.numel());
  }
  // Zeros, so the padding stays zero in values and gradients alike, whose pages count as the
  // parameters move in and their own storages go: the model is never held twice. The gradient
  // buffer is made (zero-filled too) by the first grad() of any parameter: decoding never asks,
  // and would otherwise hold a second copy of the model's size.
  BufferPtr values = Buffer::zeroed_on_touch(total * sizeof(float));
  auto grads = std::make_shared<GradSlot>();
  BufferPool& pool = BufferPool::instance();
  for (size_t i = 0; i < parameters_.size(); ++i) {
    Tensor& tensor = parameters_[i].tensor;
    if (!tensor.has_values()) continue;
    float* destination = static_cast<float*>(values->data()) + offsets[i];
    values->populate(offsets[i] * sizeof(float), tensor.numel() * sizeof(float));
    std::memcpy(destination, tensor.data(), tensor.numel() * sizeof(float));
    tensor.rebind(values, grads, offsets[i]);
    pool.trim();  // the parameter's earlier storage, a free block of the pool now
  }
  flat_values_ = Tensor::view_of(values, grads, 0, {static_cast<int64_t>(total)});
  flat_values_.set_requires_grad(true);
  pool.trim();  // an earlier flat buffer
}

void ParameterStore::check_finalized(const char* what) const {
  ATTN_CHECK(finalized_, what, " needs a finalized parameter store (call finalize() after building the model)");
}

void ParameterStore::check_flat(const char* what) const {
  check_finalized(what);
  ATTN_CHECK(flat_values_.defined(), what,
             " needs the flat parameter buffer, and this store's parameters were read in one by one (decoding)");
}

size_t ParameterStore::size() const {
  check_flat("size()");
  return static_cast<size_t>(flat_values_.numel());
}

size_t ParameterStore::parameter_count() const {
  size_t count = 0;
  for (const NamedParameter& parameter : parameters_) count += parameter.tensor.numel();
  return count;
}

float* ParameterStore::values() {
  check_flat("values()");
  return flat_values_.data();
}
const float* ParameterStore::values() const {
  check_flat("values()");
  return flat_values_.data();
}
float* ParameterStore::grads() {
  check_flat("grads()");
  return flat_values_.grad().data();
}
const float* ParameterStore::grads() const {
  check_flat("grads()");
  return flat_values_.grad().data();
}

Tensor ParameterStore::flat_values() const {
  check_flat("flat_values()");
  return flat_values_;
}
Tensor ParameterStore::flat_grads() const {
  check_flat("flat_grads()");
  return flat_values_.grad();
}

void ParameterStore::zero_grad() {
  if (!finalized_) {
    for (NamedParameter& parameter : parameters_) parameter.tensor.zero_grad();
    return;
  }
  if (!flat_values_.defined() || !flat_values_.has_grad()) return;  // a gradient buffer is made zero-filled
  float* grads = this->grads();                                     // (size())
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

void ParameterStore::adopt(const std::string& name, const Tensor& values) {
  check_finalized("adopt()");
  ATTN_CHECK(!initial_values_, "adopt(", name,
             "): the store has values of its own (a store that adopts is made with ParameterInit::without_values)");
  Tensor parameter = get(name);
  ATTN_CHECK(values.shape() == parameter.shape() && values.dtype() == DType::f32, "adopt(", name, "): F32 ",
             to_string(parameter.shape()), " wanted, not ", dtype_name(values.dtype()), " ", to_string(values.shape()));
  parameter.adopt_values(values);
}

void ParameterStore::prepare_for_decoding(Precision precision, const Packer& pack) {
  for (auto& entry : matmul_weights_) prepare_for_decoding(entry.first, precision, pack);
  if (flat_values_.defined()) lay_out_flat();
}

void ParameterStore::prepare_for_decoding(const std::string& name, Precision precision, const Packer& pack) {
  check_finalized("prepare_for_decoding()");
  ATTN_CHECK(packed_for_decoding_.empty() || precision == matmul_precision_, "prepare_for_decoding(", name,
             "): the store's weights are packed for ", choice_name(matmul_precision_), ", not ",
             choice_name(precision));
  matmul_precision_ = precision;
  auto found = matmul_weights_.find(name);
  if (found == matmul_weights_.end() || !packed_for_decoding_.insert(name).second) return;
  MatmulWeight& weight = *found->second;
  weight.prepare(precision);
  weight.packed = pack(weight.prepared());
  if (weight.bf16.defined()) weight.bf16.drop_values();
  if (weight.int8.defined()) weight.int8.values.drop_values();
  weight.f32.drop_values();
  BufferPool::instance().trim();  // an adopted parameter's storage, a bf16 copy
}

}  // namespace attn

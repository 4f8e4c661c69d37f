#pragma once
// ParameterStore: every model parameter in ONE contiguous f32 buffer, with named views.
//
// The gradients mirror that buffer element for element in a second buffer (made when a
// gradient is first asked for: decoding has none), so zeroing,
// clipping, the optimizer step, an all-reduce and checkpointing are each one loop over one
// buffer instead of one loop per parameter.
//
// Two phases:
//   1. While the model is built, layers call add(name, shape, init); each gets a Tensor with
//      its own storage, initialised at once from the store's Rng (registration order fixes
//      the stream, so one seed gives the same initial parameters).
//   2. finalize() packs every parameter into the flat buffer and rebinds the handles that
//      layers already hold (Tensor::rebind), so they read and write the flat buffer and their
//      grad() is their slice of the flat gradient buffer.
//
// Each parameter starts on a 64-byte boundary (16 floats), like a freshly allocated tensor,
// so kernels see the same alignment; the padding between parameters stays zero in both
// buffers, so it adds nothing to a norm and no optimizer moves it.
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/init.h"
#include "core/matmul_weight.h"
#include "core/rng.h"
#include "core/tensor.h"

namespace attn {

struct NamedParameter {
  std::string name;  // e.g. "decoder.layers.0.self_attn.qkv.weight"
  Tensor tensor;
};

class ParameterStore {
 public:
  explicit ParameterStore(uint64_t seed);
  ParameterStore(const ParameterStore&) = delete;
  ParameterStore& operator=(const ParameterStore&) = delete;

  // Registers an f32 parameter (requires_grad) and initialises it. Errors on a duplicate or
  // empty name, a negative dimension, or after finalize().
  Tensor add(const std::string& name, const Shape& shape, const Initializer& init);
  // Packs all parameters into the flat buffers; add() is closed afterwards.
  void finalize();
  bool finalized() const { return finalized_; }

  // Elements in the flat buffer (parameters plus alignment padding); valid after finalize().
  size_t size() const;
  // Elements in the parameters themselves (sum of numel), in either phase.
  size_t parameter_count() const;

  float* values();
  const float* values() const;
  float* grads();
  const float* grads() const;
  // 1-D views (size()) of the flat buffers; flat_values().grad() is flat_grads().
  Tensor flat_values() const;
  Tensor flat_grads() const;
  void zero_grad();

  // In registration order.
  const std::vector<NamedParameter>& parameters() const { return parameters_; }
  bool contains(const std::string& name) const { return index_.count(name) > 0; }
  Tensor get(const std::string& name) const;
  Rng& rng() { return rng_; }

  // The one MatmulWeight of the rank-2 parameter `name` (made on first request; layers ask
  // for it when they are built). Decoding multiplies with its prepared form.
  std::shared_ptr<const MatmulWeight> matmul_weight(const std::string& name);
  // Converts every matmul weight to `precision` once, from the current f32 values (f32 drops
  // the copies). For inference: the copies do not follow later changes of the values.
  void prepare_matmul_weights(Precision precision);
  Precision matmul_precision() const { return matmul_precision_; }
  // Each matmul weight, for a pass that adds to its prepared form (ops::pack_matmul_weights).
  void for_each_matmul_weight(const std::function<void(MatmulWeight&)>& visit);

 private:
  void check_finalized(const char* what) const;

  Rng rng_;
  std::vector<NamedParameter> parameters_;
  std::unordered_map<std::string, size_t> index_;  // name -> position in parameters_
  bool finalized_ = false;
  Tensor flat_values_;  // (size()); its grad() is the flat gradient buffer, made on first use
  std::map<std::string, std::shared_ptr<MatmulWeight>> matmul_weights_;
  Precision matmul_precision_ = Precision::f32;
};

}  // namespace attn

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
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/init.h"
#include "core/matmul_weight.h"
#include "core/rng.h"
#include "core/tensor.h"

namespace attn {

// How a store's parameters begin: drawn from a seed (training), or without values, for a store
// that takes a checkpoint's (decoding, export), so that the initial model is never made.
struct ParameterInit {
  ParameterInit(uint64_t seed) : seed(seed) {}  // implicit: a seed means values drawn from it
  static ParameterInit without_values() {
    ParameterInit init(0);
    init.values = false;
    return init;
  }
  uint64_t seed;
  bool values = true;
};

struct NamedParameter {
  std::string name;  // e.g. "decoder.layers.0.self_attn.qkv.weight"
  Tensor tensor;
};

class ParameterStore {
 public:
  explicit ParameterStore(ParameterInit init);
  ParameterStore(const ParameterStore&) = delete;
  ParameterStore& operator=(const ParameterStore&) = delete;

  // Registers an f32 parameter (requires_grad) and initialises it (a store without values leaves
  // it without). Errors on a duplicate or empty name, a negative dimension, or after finalize().
  Tensor add(const std::string& name, const Shape& shape, const Initializer& init);
  // Packs all parameters into the flat buffers; add() is closed afterwards. A store without
  // values has none: values(), grads(), size() and the flat views are errors, and adopt() gives
  // each parameter its own storage.
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

  // For a store made without values (decoding, export): makes `values` (the parameter's shape,
  // f32) the storage of parameter `name`, for every handle of it, without a copy.
  void adopt(const std::string& name, const Tensor& values);

  // Decoding's matmul weights, one weight at a time: prepared for `precision`, packed by `pack`
  // (ops::pack_weight), and every plain form the packed copy stands for dropped, so that the
  // process holds each weight once: the bf16 copy, the int8 values (their scales stay) and the
  // f32 parameter. A tied embedding table's rows are read from its packed copy then
  // (ops::embedding_from_packed): the values its products multiply with. A flat buffer is made
  // anew without the dropped parameters; adopted ones are freed one by one. A dropped tensor
  // keeps its shape, and reading its values is an error: the store can decode, not train, save
  // or prepare again.
  using Packer = std::function<std::shared_ptr<const PackedMatrix>(const Tensor&)>;
  void prepare_for_decoding(Precision precision, const Packer& pack);
  // The same for the matmul weight of parameter `name` alone, if it has one, as soon as the
  // parameter is adopted (io::adopt_parameters), so that a checkpoint is never held whole beside
  // its packed copies; prepare_for_decoding then does the rest. Every call takes one precision.
  void prepare_for_decoding(const std::string& name, Precision precision, const Packer& pack);

 private:
  void check_finalized(const char* what) const;
  void check_flat(const char* what) const;
  // Puts every parameter that has values into a new flat buffer and rebinds its handles.
  void lay_out_flat();

  Rng rng_;
  bool initial_values_;
  std::vector<NamedParameter> parameters_;
  std::unordered_map<std::string, size_t> index_;  // name -> position in parameters_
  bool finalized_ = false;
  Tensor flat_values_;  // (size()); its grad() is the flat gradient buffer, made on first use; undefined in
                        // a store made without values
  std::map<std::string, std::shared_ptr<MatmulWeight>> matmul_weights_;
  std::set<std::string> packed_for_decoding_;  // matmul weights prepare_for_decoding has done
  Precision matmul_precision_ = Precision::f32;
};

}  // namespace attn

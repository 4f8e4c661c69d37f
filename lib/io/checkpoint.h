#pragma once
// Checkpoints: the model's parameters (F32, by name) plus extra named tensors (optimizer
// moments) and metadata strings, in one safetensors file written atomically.
//
// Metadata always holds "format": "attn" and "format_version": "1", and "extra_tensors": a
// JSON array naming the tensors that are not parameters, so a loader can tell the two apart
// and insist that the parameters match the model exactly. "data_crc32c" (8 hex digits) is the
// CRC32C (io/checksum.h) of all tensor data in file order; every load verifies it, so a
// damaged file is an error naming it, not weights that train to NaN. Checkpoints written
// before it existed have no such key and load unverified.
//
// A quantised checkpoint (attn-quantize) has metadata "quantized": "int8" and holds every
// matrix parameter (rank 2) as I8 values with F32 per-row scales (core/quantized_matrix.h),
// the scales as extra tensor "<name>.scales"; vectors stay F32. It is about 4x smaller;
// load_parameters and adopt_parameters dequantise it, so it loads like any checkpoint (training
// refuses it).
#include <functional>
#include <map>
#include <string>

#include "core/parameter_store.h"
#include "core/quantized_matrix.h"
#include "core/tensor.h"

namespace attn::io {

struct CheckpointExtras {
  std::map<std::string, Tensor> tensors;  // f32, e.g. "optimizer.m", "optimizer.v"
  // e.g. "config" (the resolved config as JSON), "train_state"; the reserved keys above are errors.
  std::map<std::string, std::string> metadata;
};

struct Checkpoint {
  std::string path;
  std::map<std::string, std::string> metadata;
  std::map<std::string, Tensor> parameters;
  std::map<std::string, Tensor> extras;
};

void save_checkpoint(const std::string& path, const ParameterStore& store, const CheckpointExtras& extras = {});
// The same for parameters held outside a store (e.g. averaged ones), f32, written in name order.
void save_checkpoint(const std::string& path, const std::map<std::string, Tensor>& parameters,
                     const CheckpointExtras& extras = {});

// The store's parameters quantised (matrices to I8 + scales), with the marker, atomically.
void save_quantized_checkpoint(const std::string& path, const ParameterStore& store, CheckpointExtras extras = {});
// Whether checkpoint metadata marks a quantised checkpoint.
bool is_quantized(const std::map<std::string, std::string>& metadata);
// The extra tensor holding the per-row scales of quantised parameter `parameter`.
std::string quantized_scales_name(const std::string& parameter);

// Reads and checks the format, version and data checksum; tensors come back as f32 (or bf16)
// tensors.
Checkpoint load_checkpoint(const std::string& path);
// The metadata alone, from the header, with the format and version checked.
std::map<std::string, std::string> read_checkpoint_metadata(const std::string& path);

// Copies the checkpoint's parameters into the store after checking that every parameter is
// present with the same shape and F32 (or I8 with its scales: dequantised), and that there is
// no unexpected one; on any mismatch nothing is copied and the error names the tensors and
// both shapes.
void load_parameters(const Checkpoint& checkpoint, ParameterStore& store);
// The same checks, made on the header of the file at `path` before any data is read, for a
// store whose parameters are only read (decoding, export), made without values
// (ParameterInit::without_values). The file is read one tensor at a time, in file order: each
// parameter takes its tensor as its storage without a copy (an I8 one is dequantised into its
// own), and `adopted(name)` runs before the next is read (decoding packs the weight there and
// drops its values); the extras are checksummed, not kept. So loading holds the store and one
// tensor, never the file. A damaged file is still an error, after the last tensor.
void adopt_parameters(const std::string& path, ParameterStore& store,
                      const std::function<void(const std::string& name)>& adopted = {});

// Copies extra tensor `name` into `destination` (same shape, f32), e.g. Adam's moments.
void load_extra(const Checkpoint& checkpoint, const std::string& name, Tensor destination);

}  // namespace attn::io

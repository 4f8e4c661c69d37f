#include "io/checkpoint.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <set>

#include <nlohmann/json.hpp>

#include "io/checksum.h"
#include "io/safetensors.h"

namespace attn::io {

namespace {

constexpr const char* kFormat = "attn";
constexpr const char* kFormatVersion = "1";
constexpr const char* kChecksumKey = "data_crc32c";
constexpr const char* kQuantizedKey = "quantized";
constexpr const char* kQuantizedInt8 = "int8";
const char* const kReservedKeys[] = {"format", "format_version", "extra_tensors", kChecksumKey, kQuantizedKey};

// The checksum of the data section as write_safetensors lays it out: the entries' bytes in order.
uint32_t data_checksum(const std::vector<TensorEntry>& entries) {
  uint32_t crc = 0;
  for (const TensorEntry& entry : entries) crc = crc32c(entry.data, entry.bytes, crc);
  return crc;
}

std::map<std::string, std::string> checkpoint_metadata(const std::string& path, const CheckpointExtras& extras,
                                                       uint32_t checksum) {
  std::map<std::string, std::string> metadata = extras.metadata;
  for (const char* key : kReservedKeys)
    ATTN_CHECK(metadata.count(key) == 0, path, ": checkpoint metadata key \"", key, "\" is reserved");
  nlohmann::json names = nlohmann::json::array();
  for (const auto& [name, tensor] : extras.tensors) names.push_back(name);
  metadata["format"] = kFormat;
  metadata["format_version"] = kFormatVersion;
  metadata["extra_tensors"] = names.dump();
  metadata[kChecksumKey] = crc32c_hex(checksum);
  return metadata;
}

// The metadata's list of extra tensor names.
std::vector<std::string> extra_names(const std::string& path, const std::map<std::string, std::string>& metadata) {
  auto found = metadata.find("extra_tensors");
  if (found == metadata.end()) return {};
  nlohmann::json names = nlohmann::json::parse(found->second, nullptr, false);
  bool valid = names.is_array();
  for (const auto& name : names) valid = valid && name.is_string();
  ATTN_CHECK(valid, path, ": checkpoint metadata \"extra_tensors\" is not a JSON array of names");
  return names.get<std::vector<std::string>>();
}

void check_format(const std::string& path, const std::map<std::string, std::string>& metadata) {
  auto format = metadata.find("format");
  ATTN_CHECK(format != metadata.end() && format->second == kFormat, path,
             ": not an attn checkpoint (metadata \"format\" is ",
             format == metadata.end() ? "missing" : quoted_name(format->second), ")");
  auto version = metadata.find("format_version");
  ATTN_CHECK(
      version != metadata.end() && version->second == kFormatVersion, path, ": unsupported checkpoint format_version ",
      version == metadata.end() ? "(missing)" : quoted_name(version->second), "; this build reads ", kFormatVersion);
}

// Compares the CRC32C of the data read with the one the metadata records, if any.
void check_data_checksum(const std::string& path, const std::map<std::string, std::string>& metadata,
                         uint32_t computed) {
  auto recorded = metadata.find(kChecksumKey);
  if (recorded == metadata.end()) return;  // written before checksums existed
  ATTN_CHECK(recorded->second == crc32c_hex(computed), path,
             ": the file is damaged: its tensor data does not match the checksum it was saved with (CRC32C ",
             crc32c_hex(computed), ", metadata \"", kChecksumKey, "\" says ", quoted_name(recorded->second), ")");
}

// The tensor type of a stored one; checkpoints hold F32, and I8 in quantised ones (BF16 is understood).
DType checkpoint_dtype(const std::string& path, const std::string& name, ElementType stored) {
  ATTN_CHECK(stored == ElementType::f32 || stored == ElementType::bf16 || stored == ElementType::i8, path, ": tensor ",
             quoted_name(name), " has dtype ", element_type_name(stored),
             "; checkpoints hold F32 (and I8 when quantised)");
  return stored == ElementType::f32 ? DType::f32 : stored == ElementType::bf16 ? DType::bf16 : DType::s8;
}

// The stored bytes as a tensor, without a copy.
Tensor to_tensor(const std::string& path, const StoredTensor& stored) {
  return Tensor::view_of(stored.bytes.buffer(), nullptr, 0, stored.shape,
                         checkpoint_dtype(path, stored.name, stored.dtype));
}

// What a check of the checkpoint's parameters needs of a tensor, whether it was read or not.
struct StoredForm {
  Shape shape;
  DType dtype;
};
using Catalogue = std::map<std::string, StoredForm>;

Catalogue catalogue_of(const std::map<std::string, Tensor>& tensors) {
  Catalogue catalogue;
  for (const auto& [name, tensor] : tensors) catalogue[name] = {tensor.shape(), tensor.dtype()};
  return catalogue;
}

// Every difference between the checkpoint's parameters (and the scales among its extras) and
// the store's, one phrase each.
std::vector<std::string> parameter_mismatches(const Catalogue& parameters, const Catalogue& extras,
                                              const ParameterStore& store) {
  std::vector<std::string> problems;
  for (const NamedParameter& parameter : store.parameters()) {
    auto found = parameters.find(parameter.name);
    const std::string model_shape = to_string(parameter.tensor.shape());
    if (found == parameters.end()) {
      problems.push_back("missing parameter " + quoted_name(parameter.name) + " (model shape " + model_shape + ")");
    } else if (found->second.shape != parameter.tensor.shape()) {
      problems.push_back("parameter " + quoted_name(parameter.name) + " has shape " + to_string(found->second.shape) +
                         " in the checkpoint but " + model_shape + " in the model");
    } else if (found->second.dtype == DType::s8) {
      auto scales = extras.find(quantized_scales_name(parameter.name));
      if (parameter.tensor.rank() != 2 || scales == extras.end() ||
          scales->second.shape != Shape{parameter.tensor.dim(0)} || scales->second.dtype != DType::f32)
        problems.push_back("parameter " + quoted_name(parameter.name) + " is I8 in the checkpoint without F32 scales " +
                           quoted_name(quantized_scales_name(parameter.name)) + " of shape (" +
                           std::to_string(parameter.tensor.dim(0)) + ")");
    } else if (found->second.dtype != DType::f32) {
      problems.push_back("parameter " + quoted_name(parameter.name) + " is " + dtype_name(found->second.dtype) +
                         " in the checkpoint, not F32");
    }
  }
  for (const auto& [name, form] : parameters)
    if (!store.contains(name))
      problems.push_back("unexpected tensor " + quoted_name(name) + " with shape " + to_string(form.shape) +
                         " (the model has no such parameter)");
  return problems;
}

// Throws one line naming up to five mismatches between the checkpoint's parameters and the store's.
void check_parameters_match(const std::string& path, const Catalogue& parameters, const Catalogue& extras,
                            const ParameterStore& store) {
  std::vector<std::string> problems = parameter_mismatches(parameters, extras, store);
  if (problems.empty()) return;
  std::string message = path + ": " + problems[0];
  const size_t shown = std::min<size_t>(problems.size(), 5);
  for (size_t i = 1; i < shown; ++i) message += "; " + problems[i];
  if (problems.size() > shown) message += "; and " + std::to_string(problems.size() - shown) + " more";
  throw Error(message);
}

// The metadata's extra tensor names, each checked to be among the file's tensors.
std::set<std::string> present_extra_names(const std::string& path, const std::map<std::string, std::string>& metadata,
                                          const std::function<bool(const std::string&)>& in_file) {
  const std::vector<std::string> names = extra_names(path, metadata);
  for (const std::string& name : names)
    ATTN_CHECK(in_file(name), path, ": extra tensor ", quoted_name(name), " listed in the metadata is not in the file");
  return {names.begin(), names.end()};
}

// Writes the parameters' entries followed by the extras'.
void write_checkpoint(const std::string& path, std::vector<TensorEntry> entries, const CheckpointExtras& extras,
                      const std::function<bool(const std::string&)>& is_parameter, bool quantized = false) {
  for (const auto& [name, tensor] : extras.tensors) {
    ATTN_CHECK(!is_parameter(name), path, ": extra tensor ", quoted_name(name), " has the name of a parameter");
    ATTN_CHECK(tensor.defined() && tensor.dtype() == DType::f32, path, ": extra tensor ", quoted_name(name),
               " must be f32");
    entries.push_back(entry_of(name, tensor));
  }
  std::map<std::string, std::string> metadata = checkpoint_metadata(path, extras, data_checksum(entries));
  if (quantized) metadata[kQuantizedKey] = kQuantizedInt8;
  write_safetensors(path, entries, metadata);
}

}  // namespace

void save_checkpoint(const std::string& path, const ParameterStore& store, const CheckpointExtras& extras) {
  std::vector<TensorEntry> entries;
  for (const NamedParameter& parameter : store.parameters())
    entries.push_back(entry_of(parameter.name, parameter.tensor));
  write_checkpoint(path, std::move(entries), extras, [&](const std::string& name) { return store.contains(name); });
}

void save_checkpoint(const std::string& path, const std::map<std::string, Tensor>& parameters,
                     const CheckpointExtras& extras) {
  std::vector<TensorEntry> entries;
  for (const auto& [name, tensor] : parameters) {
    ATTN_CHECK(tensor.defined() && tensor.dtype() == DType::f32, path, ": parameter ", quoted_name(name),
               " must be f32");
    entries.push_back(entry_of(name, tensor));
  }
  write_checkpoint(path, std::move(entries), extras,
                   [&](const std::string& name) { return parameters.count(name) > 0; });
}

void save_quantized_checkpoint(const std::string& path, const ParameterStore& store, CheckpointExtras extras) {
  std::vector<TensorEntry> entries;
  std::vector<QuantizedMatrix> matrices;  // the entries point into these
  matrices.reserve(store.parameters().size());
  for (const NamedParameter& parameter : store.parameters()) {
    if (parameter.tensor.rank() != 2) {
      entries.push_back(entry_of(parameter.name, parameter.tensor));
      continue;
    }
    matrices.push_back(quantize_rows(parameter.tensor));
    entries.push_back(entry_of(parameter.name, matrices.back().values));
    const std::string scales = quantized_scales_name(parameter.name);
    ATTN_CHECK(!store.contains(scales) && !extras.tensors.count(scales), path, ": tensor name ", quoted_name(scales),
               " is taken");
    extras.tensors[scales] = matrices.back().scales;
  }
  write_checkpoint(
      path, std::move(entries), extras, [&](const std::string& name) { return store.contains(name); }, true);
}

bool is_quantized(const std::map<std::string, std::string>& metadata) {
  auto found = metadata.find(kQuantizedKey);
  return found != metadata.end() && found->second == kQuantizedInt8;
}

std::string quantized_scales_name(const std::string& parameter) { return parameter + ".scales"; }

Checkpoint load_checkpoint(const std::string& path) {
  SafetensorsFile file = read_safetensors(path);
  check_format(path, file.metadata);
  Checkpoint checkpoint;
  checkpoint.path = path;
  checkpoint.metadata = file.metadata;
  const std::set<std::string> extras =
      present_extra_names(path, file.metadata, [&](const std::string& name) { return file.find(name) != nullptr; });
  uint32_t crc = 0;
  for (StoredTensor& stored : file.tensors) {  // in file order, as the checksum was made
    crc = crc32c(stored.bytes.data(), stored.bytes.size(), crc);
    (extras.count(stored.name) ? checkpoint.extras : checkpoint.parameters)[stored.name] = to_tensor(path, stored);
  }
  check_data_checksum(path, file.metadata, crc);
  return checkpoint;
}

std::map<std::string, std::string> read_checkpoint_metadata(const std::string& path) {
  std::map<std::string, std::string> metadata = read_safetensors_metadata(path);
  check_format(path, metadata);
  return metadata;
}

void load_parameters(const Checkpoint& checkpoint, ParameterStore& store) {
  check_parameters_match(checkpoint.path, catalogue_of(checkpoint.parameters), catalogue_of(checkpoint.extras), store);
  for (const NamedParameter& parameter : store.parameters()) {
    Tensor destination = parameter.tensor;
    const Tensor& stored = checkpoint.parameters.at(parameter.name);
    const Tensor source = stored.dtype() != DType::s8
                              ? stored
                              : dequantize_rows({stored, checkpoint.extras.at(quantized_scales_name(parameter.name))});
    std::memcpy(destination.data(), source.data(), source.numel() * sizeof(float));
  }
}

namespace {

// The f32 values of the parameter at `entry`, read from the file (an I8 one dequantised with its
// scales, read out of turn); adds its bytes to `crc`, which runs in file order.
Tensor read_parameter(const SafetensorsReader& reader, const SafetensorsEntry& entry, uint32_t& crc) {
  const StoredTensor stored = reader.read(entry);
  crc = crc32c(stored.bytes.data(), stored.bytes.size(), crc);
  const Tensor values = to_tensor(reader.path(), stored);
  if (values.dtype() != DType::s8) return values;
  const StoredTensor scales = reader.read(*reader.find(quantized_scales_name(entry.name)));
  return dequantize_rows({values, to_tensor(reader.path(), scales)});
}

}  // namespace

void adopt_parameters(const std::string& path, ParameterStore& store,
                      const std::function<void(const std::string& name)>& adopted) {
  SafetensorsReader reader(path);
  check_format(path, reader.metadata());
  const std::set<std::string> extra_set = present_extra_names(
      path, reader.metadata(), [&](const std::string& name) { return reader.find(name) != nullptr; });
  Catalogue parameters, extras;
  for (const SafetensorsEntry& entry : reader.entries())
    (extra_set.count(entry.name) ? extras : parameters)[entry.name] = {entry.shape,
                                                                       checkpoint_dtype(path, entry.name, entry.dtype)};
  check_parameters_match(path, parameters, extras, store);
  uint32_t crc = 0;
  for (const SafetensorsEntry& entry : reader.entries()) {  // in file order, as the checksum was made
    if (extra_set.count(entry.name)) {
      reader.scan(entry, [&](const char* bytes, size_t size) { crc = crc32c(bytes, size, crc); });
      continue;
    }
    store.adopt(entry.name, read_parameter(reader, entry, crc));
    if (adopted) adopted(entry.name);
  }
  check_data_checksum(path, reader.metadata(), crc);
}

void load_extra(const Checkpoint& checkpoint, const std::string& name, Tensor destination) {
  auto found = checkpoint.extras.find(name);
  ATTN_CHECK(found != checkpoint.extras.end(), checkpoint.path, ": checkpoint has no extra tensor ", quoted_name(name));
  const Tensor& source = found->second;
  ATTN_CHECK(source.shape() == destination.shape() && source.dtype() == DType::f32, checkpoint.path, ": extra tensor ",
             quoted_name(name), " is ", dtype_name(source.dtype()), " ", to_string(source.shape()),
             " in the checkpoint but F32 ", to_string(destination.shape()), " here");
  std::memcpy(destination.data(), source.data(), source.numel() * sizeof(float));
}

}  // namespace attn::io

#include "run/average.h"

#include <filesystem>
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include "io/checkpoint.h"
#include "io/safetensors.h"
#include "run/run_files.h"

namespace attn::run {

namespace fs = std::filesystem;

namespace {

// Throws naming `path` when its parameters are not `reference`'s names and shapes.
void check_same_parameters(const std::string& path, const std::map<std::string, Tensor>& parameters,
                           const std::string& reference_path, const std::map<std::string, Tensor>& reference) {
  for (const auto& [name, tensor] : reference) {
    auto found = parameters.find(name);
    ATTN_CHECK(found != parameters.end(), path, ": has no parameter ", io::quoted_name(name), " (", reference_path,
               " has it): not a checkpoint of the same model");
    ATTN_CHECK(found->second.shape() == tensor.shape(), path, ": parameter ", io::quoted_name(name), " has shape ",
               to_string(found->second.shape()), " but ", to_string(tensor.shape()), " in ", reference_path,
               ": not a checkpoint of the same model");
    ATTN_CHECK(found->second.dtype() == DType::f32, path, ": parameter ", io::quoted_name(name), " is ",
               dtype_name(found->second.dtype()), ", not F32");
  }
  for (const auto& [name, tensor] : parameters)
    ATTN_CHECK(reference.count(name), path, ": has parameter ", io::quoted_name(name), " that ", reference_path,
               " lacks: not a checkpoint of the same model");
}

std::string metadata_or_empty(const std::map<std::string, std::string>& metadata, const std::string& key) {
  auto found = metadata.find(key);
  return found == metadata.end() ? std::string() : found->second;
}

std::string run_of(const std::string& path, const std::string& run_id) {
  return path + (run_id.empty() ? " records no run id (saved before run ids existed)" : " is of run " + run_id);
}

// Different runs have unrelated weights, even with one model and vocabulary: their mean is
// noise. Checked on the headers, before any tensor is read. A checkpoint without a run id
// averages only with others without: they cannot be told apart, which is said.
void check_one_run(const std::vector<std::string>& checkpoints) {
  const std::string& first = checkpoints.front();
  const std::string first_id = run_id_of(first, io::read_safetensors_metadata(first));
  for (const std::string& path : checkpoints) {
    const std::string id = run_id_of(path, io::read_safetensors_metadata(path));
    ATTN_CHECK(id == first_id, run_of(path, id), " but ", run_of(first, first_id),
               ": checkpoints of different runs cannot be averaged; average checkpoints of one run");
  }
  if (first_id.empty() && checkpoints.size() > 1)
    spdlog::warn(
        "the checkpoints record no run id (saved before run ids existed): that they are of one run is not "
        "checked");
}

}  // namespace

Averaged average_parameters(const std::vector<std::string>& checkpoints) {
  ATTN_CHECK(!checkpoints.empty(), "no checkpoints to average");
  check_one_run(checkpoints);
  Averaged averaged;
  std::map<std::string, std::vector<double>> sums;
  std::map<std::string, Tensor> reference;
  for (const std::string& path : checkpoints) {
    io::Checkpoint checkpoint = io::load_checkpoint(path);
    if (reference.empty()) {
      averaged.metadata = checkpoint.metadata;
      reference = checkpoint.parameters;
      for (const auto& [name, tensor] : reference) sums[name].assign(size_t(tensor.numel()), 0.0);
    }
    check_same_parameters(path, checkpoint.parameters, checkpoints.front(), reference);
    // Averaging across vocabularies would mix the rows of different tokens.
    ATTN_CHECK(metadata_or_empty(checkpoint.metadata, kVocabDigestsKey) ==
                   metadata_or_empty(averaged.metadata, kVocabDigestsKey),
               path, " was trained with another vocabulary than ", checkpoints.front(), " (metadata \"",
               kVocabDigestsKey, "\" differs)");
    for (auto& [name, sum] : sums) {
      const float* values = checkpoint.parameters.at(name).data();
      for (size_t i = 0; i < sum.size(); ++i) sum[i] += values[i];
    }
  }
  const double count = double(checkpoints.size());
  for (const auto& [name, sum] : sums) {
    Tensor tensor = Tensor::empty(reference.at(name).shape(), DType::f32);
    float* out = tensor.data();
    for (size_t i = 0; i < sum.size(); ++i) out[i] = float(sum[i] / count);
    averaged.parameters[name] = tensor;
  }
  return averaged;
}

void average_checkpoints(const std::vector<std::string>& checkpoints, const std::string& out, bool overwrite) {
  ATTN_CHECK(overwrite || !fs::exists(out), out, " exists; choose another --out, or --force to replace it");
  Averaged averaged = average_parameters(checkpoints);
  io::CheckpointExtras extras;
  for (const char* key : {"config", kVocabDigestsKey, kRunIdKey})
    if (averaged.metadata.count(key)) extras.metadata[key] = averaged.metadata.at(key);
  nlohmann::json names = nlohmann::json::array();
  for (const std::string& path : checkpoints) names.push_back(fs::path(path).filename().string());
  extras.metadata["averaged_from"] = names.dump();
  io::save_checkpoint(out, averaged.parameters, extras);
}

std::vector<std::string> last_step_checkpoints(const std::string& dir, int count) {
  ATTN_CHECK(count >= 1, "--last must be at least 1");
  ATTN_CHECK(fs::is_directory(dir), "model directory ", dir, " does not exist");
  std::vector<std::string> all = step_checkpoints(dir);
  ATTN_CHECK(int(all.size()) >= count, "--last ", count, ": ", dir, " has only ", all.size(),
             " checkpoint.step-STEP.safetensors (set train.keep_checkpoints to keep more)");
  return std::vector<std::string>(all.end() - count, all.end());
}

}  // namespace attn::run

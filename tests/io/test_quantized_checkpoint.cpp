#include <cmath>
#include <filesystem>

#include <catch2/catch.hpp>

#include "core/parameter_store.h"
#include "io/checkpoint.h"
#include "io/safetensors.h"
#include "temp_dir.h"

using namespace attn;
using attn::testing::TempDir;

namespace {

void build(ParameterStore& store) {
  store.add("embedding.weight", {50, 256}, init::normal(1.f));
  store.add("layer.weight", {64, 256}, init::xavier_uniform());
  store.add("layer.bias", {64}, init::uniform(0.1f));
  store.finalize();
}

}  // namespace

TEST_CASE("a quantised checkpoint holds I8 matrices with scales: ~4x smaller and loading dequantised",
          "[io][checkpoint][quantize]") {
  TempDir dir;
  ParameterStore saved(1);
  build(saved);
  const std::string f32_path = dir.file("f32.safetensors"), int8_path = dir.file("int8.safetensors");
  io::save_checkpoint(f32_path, saved);
  io::CheckpointExtras extras;
  extras.metadata["config"] = "{}";
  io::save_quantized_checkpoint(int8_path, saved, extras);

  const double ratio = double(std::filesystem::file_size(f32_path)) / std::filesystem::file_size(int8_path);
  INFO("f32 / int8 size: " << ratio);
  CHECK(ratio > 3.8);  // 256 bytes + a 4-byte scale per row of 1024; vectors stay f32

  io::SafetensorsFile file = io::read_safetensors(int8_path);
  CHECK(file.find("layer.weight")->dtype == io::ElementType::i8);
  CHECK(file.find(io::quantized_scales_name("layer.weight"))->dtype == io::ElementType::f32);
  CHECK(file.find("layer.bias")->dtype == io::ElementType::f32);
  CHECK(io::is_quantized(file.metadata));
  CHECK(file.metadata.at("config") == "{}");
  CHECK_FALSE(io::is_quantized(io::read_safetensors_metadata(f32_path)));

  ParameterStore loaded(2);
  build(loaded);
  io::load_parameters(io::load_checkpoint(int8_path), loaded);
  for (const NamedParameter& parameter : saved.parameters()) {
    INFO(parameter.name);
    std::vector<float> before = parameter.tensor.to_vector(), after = loaded.get(parameter.name).to_vector();
    if (parameter.tensor.rank() == 1) {
      CHECK(after == before);
      continue;
    }
    const int64_t cols = parameter.tensor.dim(1);
    for (int64_t r = 0; r < parameter.tensor.dim(0); ++r) {
      float max_abs = 0;
      for (int64_t c = 0; c < cols; ++c) max_abs = std::max(max_abs, std::fabs(before[r * cols + c]));
      for (int64_t c = 0; c < cols; ++c)
        REQUIRE(std::fabs(after[r * cols + c] - before[r * cols + c]) <= max_abs / kWeightLevels / 2 * 1.0001f);
    }
  }
}

TEST_CASE("an I8 parameter without its scales is an error naming both", "[io][checkpoint][quantize]") {
  TempDir dir;
  ParameterStore saved(1);
  build(saved);
  const std::string path = dir.file("int8.safetensors");
  io::save_quantized_checkpoint(path, saved);
  io::Checkpoint checkpoint = io::load_checkpoint(path);
  checkpoint.extras.erase(io::quantized_scales_name("layer.weight"));
  ParameterStore loaded(2);
  build(loaded);
  CHECK_THROWS_WITH(io::load_parameters(checkpoint, loaded),
                    Catch::Contains("\"layer.weight\" is I8") && Catch::Contains("layer.weight.scales"));
}

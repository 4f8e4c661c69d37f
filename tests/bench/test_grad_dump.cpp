// bench::write_grad_dump (attn-bench grad): the file tools/check-gradients.py reads holds what
// docs/ARCHITECTURE.md ("Gradient dumps") lists, and the accumulation of a step over parts of its
// batch gives the gradients of the whole batch. The comparison with PyTorch itself is the ctest
// label gradcheck.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include <catch2/catch.hpp>

#include "bench/grad_dump.h"
#include "io/safetensors.h"
#include "models/model_factory.h"
#include "temp_dir.h"
#include "tiny_config.h"

using namespace attn;

namespace {

io::Config dump_config(const testing::TempDir& dir, int accumulate) {
  nlohmann::json json = testing::tiny_config(dir);
  json["train"]["accumulate"] = accumulate;
  json["train"]["pad_multiple"] = 4;
  return io::config_from_json(json);
}

std::vector<float> floats(const io::StoredTensor& tensor) {
  REQUIRE(tensor.dtype == io::ElementType::f32);
  std::vector<float> values(tensor.bytes.size() / sizeof(float));
  std::memcpy(values.data(), tensor.bytes.data(), tensor.bytes.size());
  return values;
}

const io::StoredTensor& find(const io::SafetensorsFile& file, const std::string& name) {
  const io::StoredTensor* tensor = file.find(name);
  INFO(name);
  REQUIRE(tensor != nullptr);
  return *tensor;
}

}  // namespace

TEST_CASE("a gradient dump holds the batch and each parameter before - its gradient and after 1 and 3 steps",
          "[bench]") {
  testing::TempDir dir;
  const io::Config config = dump_config(dir, 1);
  bench::GradDumpOptions options;
  options.output = dir.file("step.safetensors");
  const bench::GradDumpResult result = bench::write_grad_dump(config, options);
  const io::SafetensorsFile file = io::read_safetensors(options.output);

  const io::StoredTensor& src = find(file, "src");
  CHECK(src.dtype == io::ElementType::i32);
  CHECK(src.shape == Shape{4, 12});  // the longest source, 9, padded to a multiple of 4
  CHECK(find(file, "tgt_out").shape == Shape{4, 8});
  CHECK(find(file, "src_lengths").shape == Shape{4});
  CHECK(find(file, "links").shape == Shape{0, 3});  // guided alignment off
  CHECK(find(file, "logits").shape == Shape{4, 8, config.vocab.size});
  CHECK(floats(find(file, "loss"))[0] == Approx(result.loss));
  CHECK(floats(find(file, "grad_norm"))[0] == Approx(result.grad_norm));
  CHECK(file.find("guided_loss") == nullptr);

  // param.* are the initial parameters of the seed; the steps move them.
  auto fresh = models::make_model(config, {config.vocab.size, config.vocab.size});
  for (const NamedParameter& parameter : fresh->parameters().parameters()) {
    INFO(parameter.name);
    const std::vector<float> before = floats(find(file, "param." + parameter.name));
    CHECK(before == std::vector<float>(parameter.tensor.data(), parameter.tensor.data() + parameter.tensor.numel()));
    CHECK(find(file, "grad." + parameter.name).shape == parameter.tensor.shape());
    CHECK(floats(find(file, "step1." + parameter.name)) != before);
    CHECK(floats(find(file, "step3." + parameter.name)) != floats(find(file, "step1." + parameter.name)));
  }
  // The resolved config, dropout off: what the PyTorch replay builds its model from.
  const nlohmann::json recorded = nlohmann::json::parse(file.metadata.at("config"));
  CHECK(recorded["model"]["transformer"]["dropout"] == 0.0);
  CHECK(file.metadata.at("precision") == "f32");
  CHECK(file.metadata.at("batch") == "synthetic");
}

TEST_CASE("a gradient dump accumulated over 2 parts of its batch has the whole batch's gradients", "[bench]") {
  testing::TempDir dir;
  bench::GradDumpOptions options;
  options.output = dir.file("whole.safetensors");
  bench::write_grad_dump(dump_config(dir, 1), options);
  options.output = dir.file("parts.safetensors");
  bench::write_grad_dump(dump_config(dir, 2), options);
  const io::SafetensorsFile whole = io::read_safetensors(dir.file("whole.safetensors"));
  const io::SafetensorsFile parts = io::read_safetensors(dir.file("parts.safetensors"));
  int compared = 0;
  for (const io::StoredTensor& tensor : whole.tensors) {
    if (tensor.name.rfind("grad.", 0) != 0) continue;
    INFO(tensor.name);
    const std::vector<float> a = floats(tensor), b = floats(find(parts, tensor.name));
    float largest = 0, difference = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      largest = std::max(largest, std::fabs(a[i]));
      difference = std::max(difference, std::fabs(a[i] - b[i]));
    }
    CHECK(difference <= 1e-5f * largest);
    ++compared;
  }
  CHECK(compared > 10);
}

TEST_CASE("a gradient dump refuses to replace an existing file unless forced", "[bench]") {
  testing::TempDir dir;
  bench::GradDumpOptions options;
  options.output = dir.file("kept.safetensors");
  std::ofstream(options.output) << "an earlier file";
  CHECK_THROWS_WITH(bench::write_grad_dump(dump_config(dir, 1), options),
                    Catch::Contains("exists; choose another file, or --force to replace it"));
  std::ifstream kept(options.output);
  CHECK(std::string(std::istreambuf_iterator<char>(kept), {}) == "an earlier file");
  options.force = true;
  bench::write_grad_dump(dump_config(dir, 1), options);
  CHECK(io::read_safetensors(options.output).tensors.size() > 10);
}

#include <algorithm>
#include <fstream>

#include <catch2/catch.hpp>

#include "core/parameter_store.h"
#include "io/checkpoint.h"
#include "io/checksum.h"
#include "io/safetensors.h"
#include "optim/adam.h"
#include "temp_dir.h"

using namespace attn;
using attn::testing::TempDir;

namespace {

void build(ParameterStore& store, int64_t hidden = 4) {
  store.add("encoder.embedding", {5, hidden}, init::normal(1.f));
  store.add("encoder.bias", {hidden}, init::uniform(0.1f));
  store.add("decoder.weight", {3, hidden}, init::xavier_uniform());
  store.finalize();
}

}  // namespace

TEST_CASE("checkpoint save then load gives identical parameters and extras and metadata", "[io][checkpoint]") {
  TempDir dir;
  const std::string path = dir.file("checkpoint.safetensors");
  ParameterStore saved(1);
  build(saved);
  for (const NamedParameter& parameter : saved.parameters()) parameter.tensor.grad().fill(0.5f);
  optim::Adam adam(saved);
  adam.step(0.01f);
  io::CheckpointExtras extras;
  extras.tensors = {{"optimizer.m", adam.first_moment()}, {"optimizer.v", adam.second_moment()}};
  extras.metadata = {{"config", "{\"model\": \"transformer\"}"}, {"train_state", "{\"step\": 1}"}};
  io::save_checkpoint(path, saved, extras);

  io::Checkpoint checkpoint = io::load_checkpoint(path);
  CHECK(checkpoint.metadata.at("format") == "attn");
  CHECK(checkpoint.metadata.at("format_version") == "1");
  CHECK(checkpoint.metadata.at("config") == "{\"model\": \"transformer\"}");
  CHECK(checkpoint.parameters.size() == 3);
  CHECK(checkpoint.extras.size() == 2);

  ParameterStore loaded(2);  // another seed: different initial values
  build(loaded);
  REQUIRE(loaded.get("encoder.embedding").to_vector() != saved.get("encoder.embedding").to_vector());
  io::load_parameters(checkpoint, loaded);
  for (const NamedParameter& parameter : saved.parameters())
    CHECK(loaded.get(parameter.name).to_vector() == parameter.tensor.to_vector());

  optim::Adam resumed(loaded);
  io::load_extra(checkpoint, "optimizer.m", resumed.first_moment());
  io::load_extra(checkpoint, "optimizer.v", resumed.second_moment());
  CHECK(resumed.first_moment().to_vector() == adam.first_moment().to_vector());
  CHECK(resumed.second_moment().to_vector() == adam.second_moment().to_vector());
}

TEST_CASE("loading into a different model names the mismatched tensors", "[io][checkpoint]") {
  TempDir dir;
  const std::string path = dir.file("checkpoint.safetensors");
  ParameterStore saved(1);
  build(saved);
  io::save_checkpoint(path, saved);
  io::Checkpoint checkpoint = io::load_checkpoint(path);

  SECTION("wrong shape") {
    ParameterStore wider(1);
    build(wider, 6);
    const std::vector<float> before = wider.get("encoder.bias").to_vector();
    CHECK_THROWS_WITH(
        io::load_parameters(checkpoint, wider),
        Catch::Contains(path) && Catch::Contains("\"encoder.bias\" has shape (4) in the checkpoint but (6)"));
    CHECK(wider.get("encoder.bias").to_vector() == before);  // nothing copied
  }
  SECTION("missing parameter") {
    ParameterStore larger(1);
    larger.add("decoder.extra", {2}, init::zeros());
    build(larger);
    CHECK_THROWS_WITH(io::load_parameters(checkpoint, larger),
                      Catch::Contains("missing parameter \"decoder.extra\" (model shape (2))"));
  }
  SECTION("unexpected tensor") {
    ParameterStore smaller(1);
    smaller.add("encoder.embedding", {5, 4}, init::zeros());
    smaller.add("encoder.bias", {4}, init::zeros());
    smaller.finalize();
    CHECK_THROWS_WITH(io::load_parameters(checkpoint, smaller),
                      Catch::Contains("unexpected tensor \"decoder.weight\" with shape (3, 4)"));
  }
}

TEST_CASE("a safetensors file that is not an attn checkpoint is refused", "[io][checkpoint]") {
  TempDir dir;
  const std::string path = dir.file("foreign.safetensors");
  std::vector<float> values = {1.f};
  io::write_safetensors(path, {{"w", io::ElementType::f32, {1}, values.data(), 4}}, {{"format", "pt"}});
  CHECK_THROWS_WITH(io::load_checkpoint(path), Catch::Contains(path) && Catch::Contains("not an attn checkpoint"));
  io::write_safetensors(path, {{"w", io::ElementType::f32, {1}, values.data(), 4}},
                        {{"format", "attn"}, {"format_version", "2"}});
  CHECK_THROWS_WITH(io::load_checkpoint(path), Catch::Contains("format_version \"2\""));
}

TEST_CASE("reserved metadata keys and clashing extra names are refused on save", "[io][checkpoint]") {
  TempDir dir;
  ParameterStore store(1);
  build(store);
  io::CheckpointExtras reserved;
  reserved.metadata = {{"format", "mine"}};
  CHECK_THROWS_WITH(io::save_checkpoint(dir.file("a.safetensors"), store, reserved), Catch::Contains("reserved"));
  io::CheckpointExtras clash;
  clash.tensors = {{"encoder.bias", Tensor::zeros({4})}};
  CHECK_THROWS_WITH(io::save_checkpoint(dir.file("b.safetensors"), store, clash), Catch::Contains("\"encoder.bias\""));
}

namespace {

// Flips one byte `from_end` bytes before the end of the file: inside the last tensor's data.
void flip_byte(const std::string& path, long from_end) {
  std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
  file.seekg(-from_end, std::ios::end);
  char byte = 0;
  file.read(&byte, 1);
  byte = static_cast<char>(byte ^ 0x01);
  file.seekp(-from_end, std::ios::end);
  file.write(&byte, 1);
}

}  // namespace

TEST_CASE("a checkpoint records the CRC32C of its data - and a flipped byte is an error naming the file",
          "[io][checkpoint][faults]") {
  TempDir dir;
  const std::string path = dir.file("checkpoint.safetensors");
  ParameterStore store(1);
  build(store);
  io::save_checkpoint(path, store);
  io::Checkpoint checkpoint = io::load_checkpoint(path);
  REQUIRE(checkpoint.metadata.count("data_crc32c") == 1);
  uint32_t crc = 0;  // the parameters' bytes in file order (the store's order)
  for (const NamedParameter& parameter : store.parameters())
    crc = io::crc32c(parameter.tensor.data(), parameter.tensor.numel() * sizeof(float), crc);
  CHECK(checkpoint.metadata.at("data_crc32c") == io::crc32c_hex(crc));

  flip_byte(path, 5);
  CHECK_THROWS_WITH(io::load_checkpoint(path),
                    Catch::StartsWith(path + ": the file is damaged: its tensor data does not match the checksum it "
                                             "was saved with (CRC32C ") &&
                        Catch::EndsWith("metadata \"data_crc32c\" says \"" + io::crc32c_hex(crc) + "\")"));
}

TEST_CASE("a checkpoint from before data checksums still loads", "[io][checkpoint]") {
  TempDir dir;
  const std::string path = dir.file("old.safetensors");
  std::vector<float> values = {1.f, 2.f};
  io::write_safetensors(path, {{"w", io::ElementType::f32, {2}, values.data(), 8}},
                        {{"format", "attn"}, {"format_version", "1"}, {"extra_tensors", "[]"}});
  io::Checkpoint checkpoint = io::load_checkpoint(path);
  CHECK(checkpoint.parameters.at("w").to_vector() == values);
}

TEST_CASE(
    "a checkpoint read one tensor at a time gives a store without values its parameters - each before the next is read",
    "[io][checkpoint]") {
  TempDir dir;
  const std::string path = dir.file("checkpoint.safetensors");
  ParameterStore saved(1);
  build(saved);
  io::CheckpointExtras extras;  // over 1 MiB, so that its checksum is taken in more than one piece
  extras.tensors = {{"optimizer.m", Tensor::full({300000}, 0.25f)}};
  const bool quantized = GENERATE(false, true);
  INFO((quantized ? "quantised" : "f32") << " checkpoint");
  if (quantized)
    io::save_quantized_checkpoint(path, saved, extras);
  else
    io::save_checkpoint(path, saved, extras);
  ParameterStore expected(2);
  build(expected);
  io::load_parameters(io::load_checkpoint(path), expected);

  ParameterStore loaded(ParameterInit::without_values());
  build(loaded);
  std::vector<std::string> order;
  io::adopt_parameters(path, loaded, [&](const std::string& name) {
    order.push_back(name);
    for (const NamedParameter& parameter : loaded.parameters()) {  // this one and those before it only
      const bool arrived = std::find(order.begin(), order.end(), parameter.name) != order.end();
      REQUIRE(parameter.tensor.has_values() == arrived);
    }
  });
  CHECK(order == std::vector<std::string>{"encoder.embedding", "encoder.bias", "decoder.weight"});  // file order
  for (const NamedParameter& parameter : expected.parameters())
    CHECK(loaded.get(parameter.name).to_vector() == parameter.tensor.to_vector());

  SECTION("a mismatch is found in the header, before any tensor is adopted") {
    ParameterStore wider(ParameterInit::without_values());
    build(wider, 6);
    bool adopted = false;
    CHECK_THROWS_WITH(
        io::adopt_parameters(path, wider, [&](const std::string&) { adopted = true; }),
        Catch::Contains(path) && Catch::Contains("\"encoder.bias\" has shape (4) in the checkpoint but (6)"));
    CHECK_FALSE(adopted);
  }
  SECTION("a damaged extra, never kept, still fails the checksum") {
    flip_byte(path, 5);  // inside optimizer.m, the last tensor
    ParameterStore again(ParameterInit::without_values());
    build(again);
    CHECK_THROWS_WITH(io::adopt_parameters(path, again), Catch::Contains(path + ": the file is damaged"));
  }
}

// The model-family registry (models/model_factory.h) and the recurrent-cell registry it uses for
// model.rnn.cell: every name the config accepts builds, unknown names are clear errors, and each
// family registers its parameters in the order that fixes a seed's initial values.
#include <set>

#include <catch2/catch.hpp>

#include "io/config.h"
#include "layers/recurrent_cell.h"
#include "models/model_factory.h"
#include "tiny_models.h"

using namespace attn;
using Catch::Matchers::Contains;

namespace {

// The values io/config.cpp accepts for `key`, read from its error for a value it refuses:
// "KEY must be one of "a", "b"; got "...""
std::set<std::string> accepted_by_config(const std::string& key) {
  nlohmann::json j = nlohmann::json::object();
  io::apply_override(j, key + "=not-a-name");
  std::string message;
  try {
    io::config_from_json(j);
  } catch (const Error& e) {
    message = e.what();
  }
  const std::string start = " must be one of ", end = "; got";
  REQUIRE(message.find(start) != std::string::npos);
  std::string list = message.substr(message.find(start) + start.size());
  list = list.substr(0, list.find(end));
  std::set<std::string> names;
  for (size_t open = list.find('"'); open != std::string::npos; open = list.find('"', list.find('"', open + 1) + 1))
    names.insert(list.substr(open + 1, list.find('"', open + 1) - open - 1));
  return names;
}

std::set<std::string> registered_families() {
  std::set<std::string> names;
  for (const auto& family : models::model_families()) names.insert(choice_name(family.type));
  return names;
}

// "decoder.layers.0.ffn.in.weight" -> "decoder.layers"; "positions.weight" -> "positions".
std::string group_of(const std::string& name) {
  size_t first = name.find('.'), second = name.find('.', first + 1);
  std::string second_word = name.substr(first + 1, second - first - 1);
  return second_word == "weight" || second_word == "bias" ? name.substr(0, first) : name.substr(0, second);
}

// The parameter groups of a model in registration order, each once.
std::vector<std::string> registration_order(const models::Seq2SeqModel& model) {
  std::vector<std::string> groups;
  for (const auto& parameter : model.parameters().parameters())
    if (groups.empty() || groups.back() != group_of(parameter.name)) groups.push_back(group_of(parameter.name));
  return groups;
}

}  // namespace

TEST_CASE("the registries hold exactly the model.type and model.rnn.cell names the config accepts",
          "[models][registry]") {
  CHECK(accepted_by_config("model.type") == registered_families());
  std::vector<std::string> cells = testing::recurrent_cell_names();
  CHECK(accepted_by_config("model.rnn.cell") == std::set<std::string>(cells.begin(), cells.end()));
}

TEST_CASE("every family and every recurrent cell builds from a config - named after its entry", "[models][registry]") {
  std::set<std::string> built;
  for (const testing::TinyModelKind& kind : testing::tiny_model_kinds()) {
    INFO(kind.label);
    auto model = testing::tiny_model(kind);
    CHECK(model->family() == choice_name(kind.type));
    CHECK(model->target_vocab_size() == testing::kTinyVocab);
    CHECK(model->parameters().finalized());
    built.insert(choice_name(kind.type));
  }
  CHECK(built == registered_families());  // so the shared invariant tests run on every family
}

TEST_CASE("an unknown model.type or model.rnn.cell is an error naming the key and the known names",
          "[models][registry]") {
  CHECK_THROWS_WITH(io::config_from_json({{"model", {{"type", "cnn"}}}}),
                    "model.type must be one of \"transformer\", \"rnn\"; got \"cnn\"");
  CHECK_THROWS_WITH(io::config_from_json({{"model", {{"type", "rnn"}, {"rnn", {{"cell", "tree"}}}}}}),
                    "model.rnn.cell must be one of \"gru\", \"lstm\"; got \"tree\"");
}

TEST_CASE("each family's longest sequence - position limit and schedule width", "[models][registry]") {
  io::Config config;
  config.data.max_len = 30;
  config.model.transformer.max_positions = 128;
  config.model.transformer.d_model = 64;
  config.model.rnn.decoder_hidden = 48;
  config.model.type = ModelType::transformer;
  CHECK(models::max_sequence_length(config) == 128);  // the position table
  CHECK(models::position_limit(config) == 128);
  CHECK(models::schedule_width(config) == 64);  // d_model, as Vaswani et al.
  for (Positions relative : {Positions::rotary, Positions::alibi}) {
    config.model.transformer.positions = relative;  // no table: the RNN's bound, no limit
    CHECK(models::max_sequence_length(config) == 4 * 30);
    CHECK(models::position_limit(config) == 0);
  }
  config.model.type = ModelType::rnn;
  CHECK(models::max_sequence_length(config) == 4 * 30);
  CHECK(models::position_limit(config) == 0);   // none
  CHECK(models::schedule_width(config) == 48);  // the decoder state's width
}

TEST_CASE("each family registers its parameters in the order that fixes a seed's initial values",
          "[models][registry]") {
  // ParameterStore draws every parameter from one stream in registration order: a change of
  // order changes every model trained from a seed, so the order is pinned here.
  for (const testing::TinyModelKind& kind : testing::tiny_model_kinds()) {
    INFO(kind.label);
    io::Config config = testing::tiny_model_config(kind);
    config.model.shared_embeddings = config.model.tied_embeddings = false;
    config.model.transformer.norm = Norm::pre;
    config.model.transformer.positions = Positions::learned;
    auto model = models::make_model(config, {11, 13});
    std::vector<std::string> expected;
    if (kind.type == ModelType::transformer)
      expected = {"encoder.embedding", "decoder.embedding",  "positions",          "encoder.layers",
                  "decoder.layers",    "encoder.final_norm", "decoder.final_norm", "decoder.output"};
    else
      expected = {"encoder.embedding",
                  "encoder.forward_" + std::string(choice_name(kind.cell)),
                  "encoder.backward_" + std::string(choice_name(kind.cell)),
                  "decoder.embedding",
                  "decoder.init",
                  "decoder.attention",
                  "decoder." + std::string(choice_name(kind.cell)),
                  "decoder.pre_output",
                  "decoder.output"};
    CHECK(registration_order(*model) == expected);
  }
}

#include "io/config.h"

#include <algorithm>

namespace attn::io {

using nlohmann::json;

namespace {

// Dotted key of one field under `path`, for error messages.
struct KeyOf {
  const std::string& path;
  std::string operator()(const char* name) const { return join_key(path, name); }
};

}  // namespace

void CorpusConfig::validate(const std::string& path) const {
  ATTN_CHECK(!src.empty() && !tgt.empty(), path, " needs both \"src\" and \"tgt\" files");
}

void DataConfig::validate(const std::string& path) const {
  KeyOf key{path};
  const bool shorthand = !train_src.empty() || !train_tgt.empty();
  ATTN_CHECK(!(shorthand && !train.empty()), key("train"), " and ", key("train_src"), "/", key("train_tgt"),
             " exclude each other: list every corpus in ", key("train"));
  ATTN_CHECK(train_alignments.empty() || train.empty(), key("train_alignments"), " goes with ", key("train_src"), "/",
             key("train_tgt"), "; with ", key("train"), " give each corpus its \"alignments\"");
}

std::vector<CorpusConfig> DataConfig::training_corpora() const {
  if (!train.empty()) return train;
  CorpusConfig corpus;  // weight: its default
  corpus.src = train_src;
  corpus.tgt = train_tgt;
  corpus.alignments = train_alignments;
  return {corpus};
}

bool DataConfig::has_train_alignments() const {
  for (const CorpusConfig& corpus : training_corpora())
    if (!corpus.alignments.empty()) return true;
  return false;
}

std::string DataConfig::alignments_key(size_t index) const {
  if (train.empty()) return "data.train_alignments";
  return element_key("data.train", index) + ".alignments";
}

std::string DataConfig::corpus_key(size_t index, bool source) const {
  if (train.empty()) return source ? "data.train_src" : "data.train_tgt";
  return element_key("data.train", index) + (source ? ".src" : ".tgt");
}

void TransformerConfig::validate(const std::string& path) const {
  KeyOf key{path};
  ATTN_CHECK(d_model % heads == 0, key("d_model"), " (", d_model, ") must be divisible by ", key("heads"), " (", heads,
             ")");
}

void TrainConfig::validate(const std::string& path) const {
  // Both warmup schedules divide by warmup_steps; only "constant" may skip the warmup.
  if (schedule != ScheduleType::constant) require_at_least(join_key(path, "warmup_steps"), warmup_steps, 1);
}

void DecodeConfig::validate(const std::string& path) const {
  KeyOf key{path};
  ATTN_CHECK(nbest <= beam, key("nbest"), " (", nbest, ") must be <= ", key("beam"), " (", beam, ")");
}

bool is_language_code(const std::string& code) {
  size_t letters = 0;
  while (letters < code.size() && code[letters] >= 'a' && code[letters] <= 'z') ++letters;
  if (letters < 2 || letters > 3) return false;
  for (size_t i = letters; i < code.size(); ++i) {
    const char c = code[i];
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!alnum && !(c == '-' && i + 1 < code.size() && code[i - 1] != '-')) return false;
  }
  return true;
}

void LanguagesConfig::validate(const std::string& path) const {
  KeyOf key{path};
  ATTN_CHECK(source.empty() == target.empty(), path, " needs both \"source\" and \"target\", or neither");
  for (const auto& [name, code] : {std::pair{"source", &source}, std::pair{"target", &target}})
    ATTN_CHECK(code->empty() || is_language_code(*code), key(name),
               " must be a language code such as \"en\" or "
               "\"pt-BR\"; got \"",
               *code, "\"");
}

namespace {

// train.guided_alignment against the rest of the config.
void validate_guided_alignment(const Config& config, const KeyOf& key) {
  const GuidedAlignmentConfig& guided = config.train.guided_alignment;
  if (!guided.on()) return;
  const std::string weight = key("train.guided_alignment.weight");
  ATTN_CHECK(config.model.type == ModelType::transformer, weight,
             " > 0 needs model.type \"transformer\": guided alignment reads a Transformer's cross attention");
  ATTN_CHECK(config.data.has_train_alignments(), weight, " > 0 needs reference alignments: set ",
             key(config.data.train.empty() ? "data.train_alignments" : "data.train[i].alignments"),
             " (attn-align writes them)");
  const int layers = config.model.transformer.decoder_layers;
  ATTN_CHECK(guided.layer >= -layers && guided.layer < layers, key("train.guided_alignment.layer"), " ", guided.layer,
             " is out of range: the decoder has ", layers, " layers (0-", layers - 1, ", or -1 to -", layers,
             " from the last)");
  const AttentionHead& head = guided.head;
  ATTN_CHECK(!head.index || *head.index < config.model.transformer.heads, key("train.guided_alignment.head"), " ",
             head.index.value_or(0), " is out of range: model.transformer.heads is ", config.model.transformer.heads);
  ATTN_CHECK(!(config.data.train_alignments_level == AlignmentLevel::pieces && config.vocab.sampling_alpha > 0),
             key("data.train_alignments_level"), " \"pieces\" excludes ", key("vocab.sampling_alpha"),
             " > 0: a sampled segmentation has other pieces than the links count");
}

}  // namespace

void Config::validate(const std::string& path) const {
  KeyOf key{path};
  validate_guided_alignment(*this, key);
  ATTN_CHECK(!output_dir.empty(), key("output_dir"), " must not be empty");
  ATTN_CHECK(!model.shared_embeddings || vocab.joint, key("model.shared_embeddings"), " requires ", key("vocab.joint"),
             " = true (one vocabulary for both sides)");
  // A training pair holds up to max_len tokens plus BOS or EOS, and a batch pads it up to a
  // multiple of train.pad_multiple; a fixed position table must cover both (relative
  // positions have no table).
  if (model.type == ModelType::transformer && has_position_table(model.transformer.positions)) {
    // 64-bit: data.max_len may be INT_MAX.
    const int64_t positions = model.transformer.max_positions, max_len = data.max_len, pad = train.pad_multiple;
    ATTN_CHECK(positions >= max_len + 1, key("model.transformer.max_positions"), " (", positions,
               ") must be >= ", key("data.max_len"), " + 1 (", max_len + 1, ")");
    const int64_t padded = (max_len + pad - 1) / pad * pad;
    ATTN_CHECK(positions >= padded, key("model.transformer.max_positions"), " (", positions,
               ") must be >= ", key("data.max_len"), " (", data.max_len, ") rounded up to a multiple of ",
               key("train.pad_multiple"), " (", padded, ")");
  }
}

Config config_from_json(const json& j) {
  Config config;
  read_struct(j, config, "");
  return config;
}

json config_to_json(const Config& config) { return write_struct(config); }

std::string config_to_string(const Config& config) { return config_to_json(config).dump(2); }

Config with_overrides(const Config& config, const std::vector<std::string>& overrides) {
  json j = config_to_json(config);
  for (const auto& assignment : overrides) apply_override(j, assignment);
  return config_from_json(j);
}

void check_config_setting(const std::string& key, const std::string& text) {
  check_setting<Config>(key, override_value(key, text));
}

std::vector<SettingInfo> config_settings() { return describe_settings<Config>(); }

SettingInfo config_setting(const std::string& key) {
  std::vector<std::string> keys;
  for (SettingInfo& setting : config_settings()) {
    const bool section = setting.type == "section" || setting.type == "list";
    ATTN_CHECK(setting.key != key || !section, "config key ", key, " is a ", setting.type, ", not a setting");
    if (setting.key == key) return setting;
    if (!section) keys.push_back(setting.key);
  }
  const std::string suggestion = closest_match(key, keys);
  throw Error("unknown config key " + key +
              (suggestion.empty() ? std::string() : "; did you mean " + suggestion + "?"));
}

std::string config_settings_table() {
  const std::vector<SettingInfo> settings = config_settings();
  const SettingInfo heading{"key", "type", "default", "allowed", "help"};
  size_t widths[4] = {};
  auto measure = [&](const SettingInfo& s) {
    const std::string* columns[4] = {&s.key, &s.type, &s.default_text, &s.allowed};
    for (int c = 0; c < 4; ++c) widths[c] = std::max(widths[c], columns[c]->size());
  };
  measure(heading);
  for (const SettingInfo& s : settings) measure(s);
  std::string table;
  auto row = [&](const SettingInfo& s) {
    const std::string* columns[4] = {&s.key, &s.type, &s.default_text, &s.allowed};
    std::string line;
    for (int c = 0; c < 4; ++c) line += *columns[c] + std::string(widths[c] - columns[c]->size() + 2, ' ');
    table += line + s.help + '\n';
  };
  row(heading);
  for (const SettingInfo& s : settings) row(s);
  return table;
}

Config load_config(const std::string& path, const std::vector<std::string>& overrides) {
  json j = read_config_file(path);  // its errors already name the file
  try {
    for (const auto& assignment : overrides) apply_override(j, assignment);
    return config_from_json(j);
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
}

}  // namespace attn::io

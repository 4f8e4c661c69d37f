#include "io/config.h"

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
  KeyOf key{path};
  ATTN_CHECK(!src.empty() && !tgt.empty(), path, " needs both \"src\" and \"tgt\" files");
  require_positive(key("weight"), weight);
}

void DataConfig::validate(const std::string& path) const {
  KeyOf key{path};
  require_at_least(key("max_len"), max_len, 1);
  require_at_least(key("valid_max_sentences"), valid_max_sentences, 0);
  require_at_least(key("buffer_pairs"), static_cast<double>(buffer_pairs), 1);
  ATTN_CHECK(concat_prob >= 0 && concat_prob <= 1, key("concat_prob"), " must be in [0, 1]; got ", concat_prob);
  ATTN_CHECK(concat_max >= 2 && concat_max <= 4, key("concat_max"), " must be in [2, 4]; got ", concat_max);
  const bool shorthand = !train_src.empty() || !train_tgt.empty();
  ATTN_CHECK(!(shorthand && !train.empty()), key("train"), " and ", key("train_src"), "/", key("train_tgt"),
             " exclude each other: list every corpus in ", key("train"));
  ATTN_CHECK(train_alignments.empty() || train.empty(), key("train_alignments"), " goes with ", key("train_src"), "/",
             key("train_tgt"), "; with ", key("train"), " give each corpus its \"alignments\"");
}

std::vector<CorpusConfig> DataConfig::training_corpora() const {
  if (!train.empty()) return train;
  return {CorpusConfig{train_src, train_tgt, 1.0, train_alignments}};
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

void VocabConfig::validate(const std::string& path) const {
  KeyOf key{path};
  // Below 16 pieces there is no room for the specials plus the characters of any real text.
  require_at_least(key("size"), size, 16);
  require_positive(key("character_coverage"), character_coverage);
  ATTN_CHECK(character_coverage <= 1, key("character_coverage"), " must be in (0, 1]; got ", character_coverage);
  require_at_least(key("max_sentences"), static_cast<double>(max_sentences), 0);
  ATTN_CHECK(sampling_alpha >= 0 && sampling_alpha <= 1, key("sampling_alpha"), " must be in [0, 1]; got ",
             sampling_alpha);
  // SentencePiece's nbest_size -1 (the whole lattice) is not offered: its lattice sampling
  // draws from a per-thread generator that cannot be keyed per pair (see Vocab::encode_sampled).
  ATTN_CHECK(sampling_nbest >= 2 && sampling_nbest <= 1024, key("sampling_nbest"), " must be in [2, 1024]; got ",
             sampling_nbest);
}

void TransformerConfig::validate(const std::string& path) const {
  KeyOf key{path};
  require_at_least(key("d_model"), d_model, 1);
  require_at_least(key("heads"), heads, 1);
  ATTN_CHECK(d_model % heads == 0, key("d_model"), " (", d_model, ") must be divisible by ", key("heads"), " (", heads,
             ")");
  require_at_least(key("ffn_dim"), ffn_dim, 1);
  require_at_least(key("encoder_layers"), encoder_layers, 1);
  require_at_least(key("decoder_layers"), decoder_layers, 1);
  require_fraction(key("dropout"), dropout);
  require_fraction(key("attention_dropout"), attention_dropout);
  require_choice_in(key("activation"), activation, {Activation::relu, Activation::gelu});
  require_at_least(key("max_positions"), max_positions, 1);
}

void RnnConfig::validate(const std::string& path) const {
  KeyOf key{path};
  require_at_least(key("embedding_dim"), embedding_dim, 1);
  require_at_least(key("encoder_hidden"), encoder_hidden, 1);
  require_at_least(key("decoder_hidden"), decoder_hidden, 1);
  require_at_least(key("attention_dim"), attention_dim, 1);
  require_fraction(key("dropout"), dropout);
}

void GuidedAlignmentConfig::validate(const std::string& path) const {
  KeyOf key{path};
  require_at_least(key("weight"), weight, 0);
  ATTN_CHECK(shift == 0 || shift == 1, key("shift"), " must be 0 (the row that predicts a target token) or 1 (the row",
             " whose input it is); got ", shift);
}

void TrainConfig::validate(const std::string& path) const {
  KeyOf key{path};
  require_at_least(key("seed"), static_cast<double>(seed), 0);
  require_at_least(key("threads"), threads, 1);
  require_choice_in(key("precision"), precision, {Precision::f32, Precision::bf16, Precision::automatic});
  require_at_least(key("batch_tokens"), batch_tokens, 1);
  require_at_least(key("pad_multiple"), pad_multiple, 1);
  require_at_least(key("accumulate"), accumulate, 1);
  require_at_least(key("max_steps"), static_cast<double>(max_steps), 0);
  require_at_least(key("max_epochs"), max_epochs, 0);
  require_at_least(key("max_time"), max_time.seconds, 0);
  require_positive(key("learning_rate"), learning_rate);
  // Both warmup schedules divide by warmup_steps; only "constant" may skip the warmup.
  require_at_least(key("warmup_steps"), warmup_steps, schedule == ScheduleType::constant ? 0 : 1);
  require_fraction(key("adam_beta1"), adam_beta1);
  require_fraction(key("adam_beta2"), adam_beta2);
  require_positive(key("adam_epsilon"), adam_epsilon);
  require_at_least(key("weight_decay"), weight_decay, 0);
  require_at_least(key("clip_norm"), clip_norm, 0);
  require_fraction(key("label_smoothing"), label_smoothing);
  require_at_least(key("log_every"), log_every, 1);
  require_at_least(key("valid_every"), valid_every, 1);
  require_at_least(key("save_every"), save_every, 1);
  require_at_least(key("keep_checkpoints"), keep_checkpoints, 0);
  require_fraction(key("ema_decay"), ema_decay);
  require_at_least(key("patience"), patience, 0);
  require_at_least(key("max_nonfinite_steps"), max_nonfinite_steps, 0);
}

void DecodeConfig::validate(const std::string& path) const {
  KeyOf key{path};
  require_at_least(key("beam"), beam, 1);
  require_at_least(key("length_penalty"), length_penalty, 0);
  require_positive(key("max_len_ratio"), max_len_ratio);
  require_at_least(key("max_len_extra"), max_len_extra, 0);
  require_at_least(key("batch_size"), batch_size, 1);
  require_at_least(key("batch_tokens"), batch_tokens, 0);
  require_at_least(key("nbest"), nbest, 1);
  ATTN_CHECK(nbest <= beam, key("nbest"), " (", nbest, ") must be <= ", key("beam"), " (", beam, ")");
  require_at_least(key("min_length"), min_length, 0);
  require_at_least(key("no_repeat_ngram"), no_repeat_ngram, 0);
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

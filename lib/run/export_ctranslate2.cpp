#include "run/export_ctranslate2.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "io/atomic_file.h"
#include "io/ctranslate2_model.h"
#include "layers/alibi_positions.h"
#include "layers/positional_encoding.h"
#include "models/model_family.h"
#include "run/load_run.h"

namespace attn::run {

namespace fs = std::filesystem;
using io::Ct2Model;
using io::Ct2Variable;

namespace {

constexpr uint32_t kTransformerSpecRevision = 7;  // CTranslate2 v4's TransformerSpec
constexpr double kLayerNormEpsilon = 1e-5;        // ops::layer_norm's
// CTranslate2's Activation enum (python/ctranslate2/specs/common_spec.py).
constexpr int8_t kCt2Relu = 0, kCt2GeluErf = 3;

// Refuses what CTranslate2's TransformerSpec cannot hold, naming the setting.
void check_expressible(const io::Config& config) {
  ATTN_CHECK(config.model.type == ModelType::transformer, "model.type ", choice_name(config.model.type),
             " cannot be expressed in CTranslate2 (Transformer only)");
  const io::TransformerConfig& t = config.model.transformer;
  ATTN_CHECK(t.activation == Activation::relu || t.activation == Activation::gelu, "model.transformer.activation ",
             choice_name(t.activation), " cannot be expressed in CTranslate2");
  ATTN_CHECK(t.heads <= 32767, "model.transformer.heads ", t.heads, " does not fit CTranslate2's int16 head count");
}

// The run's parameters under CTranslate2's names, and the spec's attributes.
class SpecBuilder {
 public:
  SpecBuilder(const ParameterStore& store, const io::Config& config) : store_(store), config_(config) {}

  Ct2Model build() {
    model_.spec = "TransformerSpec";
    model_.revision = kTransformerSpecRevision;
    add_encoder();
    add_decoder();
    return std::move(model_);
  }

 private:
  const io::TransformerConfig& transformer() const { return config_.model.transformer; }
  bool pre_norm() const { return transformer().norm == Norm::pre; }
  Positions positions() const { return transformer().positions; }

  void add(Ct2Variable variable) { model_.variables.push_back(std::move(variable)); }
  void tensor(const std::string& name, const Tensor& value) {
    std::vector<uint32_t> shape;
    for (int64_t dim : value.shape()) shape.push_back(uint32_t(dim));
    add(io::ct2_floats(name, shape, value.data()));
  }
  void parameter(const std::string& name, const std::string& attn_name) { tensor(name, store_.get(attn_name)); }
  void linear(const std::string& scope, const std::string& attn_name, bool bias = true) {
    parameter(scope + "/weight", attn_name + ".weight");
    if (bias) parameter(scope + "/bias", attn_name + ".bias");
  }
  void layer_norm(const std::string& scope, const std::string& attn_name) {
    parameter(scope + "/gamma", attn_name + ".weight");
    parameter(scope + "/beta", attn_name + ".bias");
  }

  // What both stacks declare: heads, norm placement, activation, embedding scale.
  void add_stack_attributes(const std::string& stack) {
    add(io::ct2_int16(stack + "/num_heads", int16_t(transformer().heads)));
    add(io::ct2_flag(stack + "/pre_norm", pre_norm()));
    add(io::ct2_int8(stack + "/activation", transformer().activation == Activation::gelu ? kCt2GeluErf : kCt2Relu));
    add(io::ct2_flag(stack + "/scale_embeddings", true));  // x sqrt(d_model), as TransformerModel::embed
    if (pre_norm()) layer_norm(stack + "/layer_norm", stack + ".final_norm");
    if (has_position_table(positions())) add_position_table(stack + "/position_encodings/encodings");
  }

  void add_position_table(const std::string& name) {
    if (positions() == Positions::learned)
      parameter(name, "positions.weight");
    else
      tensor(name, layers::sinusoid_table(transformer().max_positions, transformer().d_model));
  }

  void add_rotary(const std::string& attention) {
    add(io::ct2_int32(attention + "/rotary_dim", 0));           // 0: every dimension of a head
    add(io::ct2_flag(attention + "/rotary_interleave", true));  // pairs (2i, 2i + 1), as ops::rotary
    add(io::ct2_float(attention + "/rotary_base", 10000.f));
  }

  void add_ffn(const std::string& scope, const std::string& attn_name) {
    layer_norm(scope + "/layer_norm", attn_name + ".ffn_norm");
    linear(scope + "/linear_0", attn_name + ".ffn.fc1");
    linear(scope + "/linear_1", attn_name + ".ffn.fc2");
  }

  void add_self_attention(const std::string& scope, const std::string& attn_name) {
    layer_norm(scope + "/layer_norm", attn_name + ".self_attn_norm");
    linear(scope + "/linear_0", attn_name + ".self_attn.qkv");  // (3D, D): q, k, v, heads contiguous
    linear(scope + "/linear_1", attn_name + ".self_attn.out");
    if (positions() == Positions::rotary) add_rotary(scope);
  }

  void add_encoder();
  void add_decoder();
  void add_encoder_alibi(const std::string& attention);

  const ParameterStore& store_;
  const io::Config& config_;
  Ct2Model model_;
};

void SpecBuilder::add_encoder() {
  add_stack_attributes("encoder");
  add(io::ct2_flag("encoder/multi_query_attention", false));
  add(io::ct2_int8("encoder/embeddings_merge", 0));  // one source embedding: nothing to merge
  parameter("encoder/embeddings_0/weight",
            config_.model.shared_embeddings ? "embedding.weight" : "encoder.embedding.weight");
  for (int i = 0; i < transformer().encoder_layers; ++i) {
    const std::string scope = "encoder/layer_" + std::to_string(i), name = "encoder.layers." + std::to_string(i);
    add_self_attention(scope + "/self_attention", name);
    if (positions() == Positions::alibi) add_encoder_alibi(scope + "/self_attention");
    add_ffn(scope + "/ffn", name);
  }
}

void SpecBuilder::add_decoder() {
  add_stack_attributes("decoder");
  const std::string target_table = config_.model.shared_embeddings ? "embedding.weight" : "decoder.embedding.weight";
  parameter("decoder/embeddings/weight", target_table);
  parameter("decoder/projection/weight", config_.model.tied_embeddings ? target_table : "decoder.output.weight");
  add(io::ct2_int16("decoder/alignment_layer", -1));
  add(io::ct2_int16("decoder/alignment_heads", 1));
  add(io::ct2_flag("decoder/start_from_zero_embedding", false));
  // ALiBi with negative positions: a step's query (the last position) gets -m (i - j) for key j,
  // attn's bias exactly; unscaled, as attn adds it to the scaled scores.
  add(io::ct2_flag("decoder/alibi", positions() == Positions::alibi));
  add(io::ct2_flag("decoder/alibi_use_positive_positions", false));
  add(io::ct2_flag("decoder/scale_alibi", false));
  for (int i = 0; i < transformer().decoder_layers; ++i) {
    const std::string scope = "decoder/layer_" + std::to_string(i), name = "decoder.layers." + std::to_string(i);
    add_self_attention(scope + "/self_attention", name);
    layer_norm(scope + "/attention/layer_norm", name + ".cross_attn_norm");
    linear(scope + "/attention/linear_0", name + ".cross_attn.q");
    linear(scope + "/attention/linear_1", name + ".cross_attn.kv");  // (2D, D): k, v
    linear(scope + "/attention/linear_2", name + ".cross_attn.out");
    add_ffn(scope + "/ffn", name);
  }
}

// CTranslate2's T5 bucket of a bidirectional relative position (src/layers/attention.cc): half
// the buckets per direction, the first `exact` of each exact, then logarithmic up to
// `max_distance`. Returns the bucket and the distance it stands for.
int64_t t5_bucket(int64_t distance, int64_t exact, int64_t per_direction, int64_t max_distance) {
  if (distance < exact) return distance;
  const float log_ratio = std::log(float(max_distance) / float(exact));
  const auto bucket =
      int64_t(float(exact) + std::log(float(distance) / float(exact)) / log_ratio * float(per_direction - exact));
  return std::min(bucket, per_direction - 1);
}

// The encoder's symmetric ALiBi bias -m_h |i - j| as a T5 relative attention bias table
// (buckets, heads): exact for every distance below 4 x data.max_len, the longest source attn
// decodes without a position table (models::tableless_sequence_length); a bucket of the
// logarithmic range beyond holds the bias of the shortest distance it covers.
void SpecBuilder::add_encoder_alibi(const std::string& attention) {
  const int64_t exact = models::tableless_sequence_length(config_), per_direction = 2 * exact;
  const int64_t max_distance = 2 * exact, heads = transformer().heads;
  const std::vector<float> slopes = layers::alibi_slopes(heads);
  std::vector<int64_t> distance_of(size_t(per_direction), -1);
  for (int64_t distance = max_distance; distance >= 0; --distance)
    distance_of[size_t(t5_bucket(distance, exact, per_direction, max_distance))] = distance;
  for (size_t b = 1; b < distance_of.size(); ++b)
    if (distance_of[b] < 0) distance_of[b] = distance_of[b - 1];  // a bucket no distance falls in
  std::vector<float> table(size_t(2 * per_direction * heads));    // (2 x per_direction, H)
  for (int64_t side = 0; side < 2; ++side)                        // keys before (or at) the query, then after it
    for (int64_t b = 0; b < per_direction; ++b)
      for (int64_t h = 0; h < heads; ++h)
        table[size_t(((side * per_direction) + b) * heads + h)] = -slopes[size_t(h)] * float(distance_of[size_t(b)]);
  add(io::ct2_floats(attention + "/relative_attention_bias", {uint32_t(2 * per_direction), uint32_t(heads)},
                     table.data()));
  add(io::ct2_int32(attention + "/relative_attention_max_distance", int32_t(max_distance)));
}

std::vector<std::string> pieces(const data::Vocab& vocab) {
  std::vector<std::string> tokens;
  for (int32_t id = 0; id < vocab.size(); ++id) tokens.push_back(vocab.piece(id));
  return tokens;
}

// config.json: the special tokens are the target vocabulary's pieces of attn's fixed ids.
nlohmann::json ct2_config(const data::Vocab& target) {
  return {{"unk_token", target.piece(target.unk_id())},
          {"bos_token", target.piece(target.bos_id())},
          {"eos_token", target.piece(target.eos_id())},
          {"decoder_start_token", target.piece(target.bos_id())},  // attn's decoder starts from bos
          {"add_source_bos", false},
          {"add_source_eos", true},  // attn ends every source with eos
          {"layer_norm_epsilon", kLayerNormEpsilon},
          {"multi_query_attention", false}};
}

void write_model_files(const std::string& dir, const Ct2Model& model, const LoadedRun& run) {
  io::write_file_atomically(dir + "/model.bin", io::serialize_ct2_model(model));
  io::write_file_atomically(dir + "/config.json", ct2_config(run.vocab->target).dump(2) + "\n");
  const std::vector<std::string> source = pieces(run.vocab->source), target = pieces(run.vocab->target);
  if (source == target) {
    io::write_file_atomically(dir + "/shared_vocabulary.json", nlohmann::json(source).dump(2) + "\n");
  } else {
    io::write_file_atomically(dir + "/source_vocabulary.json", nlohmann::json(source).dump(2) + "\n");
    io::write_file_atomically(dir + "/target_vocabulary.json", nlohmann::json(target).dump(2) + "\n");
  }
}

void check_out_dir(const Ct2ExportOptions& options) {
  const std::string& out = options.out_dir;
  if (!fs::exists(out)) return;
  std::error_code error;
  ATTN_CHECK(fs::is_directory(out), "--out ", out, " exists and is not a directory");
  ATTN_CHECK(!fs::equivalent(out, options.model_dir, error), "--out ", out, " is the run being exported");
  ATTN_CHECK(options.force || fs::is_empty(out), "--out ", out, " is not empty; add --force to replace it");
}

// A new directory beside `out` (same file system, so the final rename is atomic).
std::string make_sibling_dir(const std::string& out, const std::string& tag) {
  fs::path parent = fs::absolute(out).parent_path();
  std::error_code error;
  fs::create_directories(parent, error);
  ATTN_CHECK(!error, "--out: cannot create ", parent.string(), ": ", error.message());
  std::string pattern = (parent / (fs::path(out).filename().string() + tag + "XXXXXX")).string();
  ATTN_CHECK(mkdtemp(pattern.data()) != nullptr, "--out: cannot create a directory beside ", out);
  // mkdtemp's 0700 would make the model directory private; give it a new directory's usual mode.
  const mode_t mask = umask(0);
  umask(mask);
  fs::permissions(pattern, fs::perms(0777 & ~mask), error);
  return pattern;
}

// Moves the finished `staged` directory to `out`, replacing an existing one only after the
// new one is complete.
void move_into_place(const std::string& staged, const std::string& out) {
  std::error_code error;
  std::string previous;
  if (fs::exists(out)) {
    previous = make_sibling_dir(out, ".old-");
    fs::remove(previous);
    fs::rename(out, previous, error);
    ATTN_CHECK(!error, "--out: cannot move the old ", out, " aside: ", error.message());
  }
  fs::rename(staged, out, error);
  ATTN_CHECK(!error, "--out: cannot rename ", staged, " to ", out, ": ", error.message());
  if (!previous.empty()) fs::remove_all(previous, error);
}

Ct2Model build_model(const LoadedRun& run, Ct2Weights weights) {
  Ct2Model model = SpecBuilder(run.model->parameters(), run.config).build();
  io::alias_duplicates(model);
  if (weights == Ct2Weights::int8) io::quantize_int8(model);
  if (weights == Ct2Weights::float16) io::convert_floats(model, io::Ct2Type::float16);
  if (weights == Ct2Weights::bfloat16) io::convert_floats(model, io::Ct2Type::bfloat16);
  return model;
}

}  // namespace

Ct2ExportResult export_ctranslate2(const Ct2ExportOptions& options) {
  check_out_dir(options);
  LoadedRun run = read_run(options.model_dir, options.checkpoint);
  check_expressible(run.config);
  const Ct2Model model = build_model(run, options.weights);

  const std::string staged = make_sibling_dir(options.out_dir, ".tmp-");
  try {
    write_model_files(staged, model, run);
    move_into_place(staged, options.out_dir);
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(staged, ignored);
    throw;
  }
  return {run.checkpoint, model.variables.size(), model.aliases.size()};
}

}  // namespace attn::run

#pragma once
// attn's configuration schema: one typed struct per JSON section. Each setting is declared once,
// in its section's visit(): key, type (the member's), default, one line of help and the values it
// allows (io/config_reader.h). The reader, config_to_json, --set, --dump-config, `attn-train
// --help-config` and the programs' flags that set a key (apps/config_flags.h) all come from those
// declarations; validate() keeps only the checks that span several settings. configs/en-it.json is
// the annotated recipe; a run writes its fully resolved config (every key, from config_to_json)
// to OUTPUT_DIR/config.json so that it can be reproduced and resumed.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/choice.h"
#include "io/config_reader.h"

namespace attn::io {

// One training corpus of data.train: two aligned files and its share of the draws.
struct CorpusConfig {
  std::string src, tgt;
  double weight;
  std::string alignments;

  CorpusConfig() { set_defaults(*this); }
  template <class V>
  void visit(V& v) {
    v("src", src, "", "source-side file, one sentence per line");
    v("tgt", tgt, "", "target-side file, line i translating line i of src");
    v("weight", weight, 1.0, "batches draw from the corpora in proportion to their weights", positive());
    // Line i of src/tgt's pair on line i (attn-align's output).
    v("alignments", alignments, "",
      "reference alignments for train.guided_alignment, Pharaoh \"i-j\" links per pair; \"\" = none");
  }
  void validate(const std::string& path) const;
};

// Corpus files, one sentence per line, line i of src aligned with line i of tgt. Paths are
// relative to the current directory.
struct DataConfig {
  std::vector<CorpusConfig> train;   // several corpora with weights ...
  std::string train_src, train_tgt;  // ... or one, as a shorthand
  std::string train_alignments;      // the shorthand's CorpusConfig::alignments
  AlignmentLevel train_alignments_level;
  std::string valid_src, valid_tgt;
  // Gold word alignments for validation (XL-WA's TSV: source<TAB>target<TAB>links, "i-j" sure,
  // "i?j"/"ipj" possible): validation then reports the dev AER of the alignments read from the
  // cross attention of the reference, teacher-forced (train.guided_alignment's layer and head).
  std::string valid_alignment_gold;
  std::string test_src, test_tgt;
  int max_len;
  int valid_max_sentences;
  std::int64_t buffer_pairs;
  double concat_prob;
  int concat_max;

  DataConfig() { set_defaults(*this); }
  template <class V>
  void visit(V& v) {
    v("train", train, "several training corpora with weights, instead of train_src/train_tgt");
    v("train_src", train_src, "", "the one training corpus's source file (a shorthand for train)");
    v("train_tgt", train_tgt, "", "the one training corpus's target file");
    v("train_alignments", train_alignments, "", "train_src/train_tgt's reference alignments (see train[i].alignments)");
    v("train_alignments_level", train_alignments_level, AlignmentLevel::words,
      "what the alignments' positions count: whitespace words of the raw lines, or pieces (eos excluded)");
    v("valid_src", valid_src, "", "dev set source file (validation)");
    v("valid_tgt", valid_tgt, "", "dev set reference translations");
    v("valid_alignment_gold", valid_alignment_gold, "",
      "gold word alignments of the dev pairs (XL-WA TSV): validation reports their AER; \"\" = none");
    v("test_src", test_src, "", "test set source file (attn-translate --subset test)");
    v("test_tgt", test_tgt, "", "test set reference translations");
    v("max_len", max_len, 100, "max tokens per side; longer training pairs are skipped and counted", at_least(1));
    v("valid_max_sentences", valid_max_sentences, 0, "validate on the first N dev pairs; 0 = all", at_least(0));
    v("buffer_pairs", buffer_pairs, 1000000,
      "training pairs in memory at once: the corpus streams through a shuffled window of this many", at_least(1));
    v("concat_prob", concat_prob, 0.0,
      "probability that a training example joins 2..concat_max random pairs of the window; 0 = off", in_range(0, 1));
    v("concat_max", concat_max, 3, "most pairs in one joined example (within max_len)", in_range(2, 4));
  }
  void validate(const std::string& path) const;
  // The training corpora: data.train, or the one corpus of data.train_src/train_tgt (weight 1,
  // data.train_alignments).
  std::vector<CorpusConfig> training_corpora() const;
  // Whether some training corpus names an alignments file.
  bool has_train_alignments() const;
  // "data.train[1].alignments" or "data.train_alignments".
  std::string alignments_key(size_t index) const;
  // "data.train[1].src" or "data.train_src": the key that names corpus `index`'s file.
  std::string corpus_key(size_t index, bool source) const;
};

// The SentencePiece model trained when a run has none yet.
struct VocabConfig {
  VocabType type;
  int size;
  bool joint;
  double character_coverage;
  std::int64_t max_sentences;
  // Subword regularisation of the training batches (validation and decoding stay deterministic):
  // unigram: one of the sampling_nbest best segmentations, p ~ exp(sampling_alpha * score);
  // bpe: BPE-dropout with probability sampling_alpha.
  double sampling_alpha;
  int sampling_nbest;

  VocabConfig() { set_defaults(*this); }
  template <class V>
  void visit(V& v) {
    v("type", type, VocabType::unigram, "SentencePiece's model type");
    // Below 16 pieces there is no room for the specials plus the characters of any real text.
    v("size", size, 8000, "pieces in the vocabulary (exactly)", at_least(16));
    v("joint", joint, true, "one vocabulary for both languages");
    v("character_coverage", character_coverage, 1.0,
      "share of characters kept as pieces, the rest map to unk (1.0 for Latin scripts)", above_up_to(0, 1));
    v("max_sentences", max_sentences, 2000000, "sentences sampled to train the vocabulary; 0 = all", at_least(0));
    v("sampling_alpha", sampling_alpha, 0.0,
      "subword regularisation of training batches: unigram's sampling alpha, or bpe's dropout; 0 = off",
      in_range(0, 1));
    // SentencePiece's nbest_size -1 (the whole lattice) is not offered: its lattice sampling
    // draws from a per-thread generator that cannot be keyed per pair (see Vocab::encode_sampled).
    v("sampling_nbest", sampling_nbest, 64, "unigram sampling draws from this many best segmentations",
      in_range(2, 1024));
  }
};

struct TransformerConfig {
  int d_model;
  int heads;
  int ffn_dim;
  int encoder_layers;
  int decoder_layers;
  double dropout;
  double attention_dropout;
  Activation activation;
  Norm norm;
  Positions positions;
  int max_positions;

  TransformerConfig() { set_defaults(*this); }
  template <class V>
  void visit(V& v) {
    v("d_model", d_model, 256, "width of the embeddings and of every sublayer's output", at_least(1));
    v("heads", heads, 4, "attention heads; d_k = d_model / heads", at_least(1));
    v("ffn_dim", ffn_dim, 1024, "inner width of the feed-forward sublayers", at_least(1));
    v("encoder_layers", encoder_layers, 3, "encoder layers", at_least(1));
    v("decoder_layers", decoder_layers, 3, "decoder layers", at_least(1));
    v("dropout", dropout, 0.1, "dropout on embeddings, sublayer outputs and inside the FFN", fraction());
    v("attention_dropout", attention_dropout, 0.0, "dropout on the attention weights", fraction());
    v("activation", activation, Activation::relu, "the FFN's activation", one_of(Activation::relu, Activation::gelu));
    v("norm", norm, Norm::post, "layer norm after each residual (Vaswani et al.), or before it with final norms");
    v("positions", positions, Positions::sinusoidal,
      "position scheme: tables (sinusoidal, learned) or relative, with no length bound (rotary, alibi)");
    v("max_positions", max_positions, 256, "longest sequence a position table covers (not rotary, alibi)", at_least(1));
  }
  void validate(const std::string& path) const;
};

// Bidirectional encoder + additive (Bahdanau) attention decoder.
struct RnnConfig {
  CellType cell;
  int embedding_dim;
  int encoder_hidden;
  int decoder_hidden;
  int attention_dim;
  double dropout;

  RnnConfig() { set_defaults(*this); }
  template <class V>
  void visit(V& v) {
    v("cell", cell, CellType::gru, "the cell of both encoder directions and of the decoder");
    v("embedding_dim", embedding_dim, 256, "embedding width", at_least(1));
    v("encoder_hidden", encoder_hidden, 256, "encoder state width per direction (the states are twice as wide)",
      at_least(1));
    v("decoder_hidden", decoder_hidden, 512, "decoder state width", at_least(1));
    v("attention_dim", attention_dim, 256, "width of v in e = v^T tanh(W s + U h)", at_least(1));
    v("dropout", dropout, 0.2, "dropout on the embeddings and the output layer's input", fraction());
  }
};

struct ModelConfig {
  ModelType type;
  bool tied_embeddings;
  bool shared_embeddings;
  TransformerConfig transformer;
  RnnConfig rnn;

  ModelConfig() { set_defaults(*this); }
  template <class V>
  void visit(V& v) {
    v("type", type, ModelType::transformer, "the model family: which section below is used");
    v("tied_embeddings", tied_embeddings, true, "the target embedding is also the output projection");
    v("shared_embeddings", shared_embeddings, true, "source and target share one embedding (needs vocab.joint)");
    v("transformer", transformer, "the Transformer (model.type \"transformer\")");
    v("rnn", rnn, "the RNN with additive attention (model.type \"rnn\")");
  }
};

// Guided alignment training (Garg et al. 2019; Marian's --guided-alignment): a loss pulling
// one decoder layer's cross attention towards the reference alignments of data.train_alignments.
// The step's loss is the translation loss per target token + weight x the guided loss per
// linked target position (ops/guided_alignment_loss.h).
struct GuidedAlignmentConfig {
  double weight;
  int layer;
  AttentionHead head;
  // Which decoder row target token j is pulled at: 0 the row that predicts it (Marian), 1 the
  // row whose input it is (the shifted step of decode/alignment.h): the row that knows y_j, so
  // its attention need not guess the word before it is chosen (Chen et al. 2020).
  int shift;
  GuidedAlignmentCost cost;

  GuidedAlignmentConfig() { set_defaults(*this); }
  template <class V>
  void visit(V& v) {
    v("weight", weight, 0.0, "weight of the guided loss in the step's loss; 0 = off", at_least(0));
    v("layer", layer, -1, "the guided decoder layer, from 0; negative counts from the last (-1 = last)");
    v("head", head, AttentionHead{0}, "the guided head (Marian and Garg et al. guide one), or \"mean\" of the heads");
    v("shift", shift, 0, "the row target token j is pulled at: 0 the row that predicts it, 1 the row whose input it is",
      in_range(0, 1).expected("0 (the row that predicts a target token) or 1 (the row whose input it is)"));
    v("cost", cost, GuidedAlignmentCost::ce, "loss between attention and reference: cross-entropy or squared error");
  }
  bool on() const { return weight > 0; }
};

struct TrainConfig {
  std::int64_t seed;
  int threads;
  Precision precision;
  int batch_tokens;
  int pad_multiple;
  int accumulate;
  std::int64_t max_steps;
  int max_epochs;
  Duration max_time;
  double learning_rate;
  ScheduleType schedule;
  int warmup_steps;
  double adam_beta1;
  double adam_beta2;
  double adam_epsilon;
  double weight_decay;
  double clip_norm;
  double label_smoothing;
  int log_every;
  int valid_every;
  int save_every;
  int keep_checkpoints;
  double ema_decay;
  ValidMetric valid_metric;
  int patience;
  int max_nonfinite_steps;
  GuidedAlignmentConfig guided_alignment;

  TrainConfig() { set_defaults(*this); }
  template <class V>
  void visit(V& v) {
    v("seed", seed, 1, "seed of initialisation, shuffling, dropout and sampling", at_least(0));
    v("threads", threads, 2, "threads of training and decoding (attn's loops and its oneDNN calls)", at_least(1));
    v("precision", precision, Precision::f32,
      "matmul precision: f32, bf16 (f32 master weights), or auto (the faster of the two, measured at start)",
      one_of(Precision::f32, Precision::bf16, Precision::automatic));
    v("batch_tokens", batch_tokens, 4096, "bound on sentences x max(S, T) per batch, padding included", at_least(1));
    v("pad_multiple", pad_multiple, 8, "sequence lengths are padded up to a multiple of this", at_least(1));
    v("accumulate", accumulate, 1, "batches whose gradients are summed per optimizer step", at_least(1));
    v("max_steps", max_steps, 0, "optimizer steps; 0 = no limit", at_least(0));
    v("max_epochs", max_epochs, 0, "passes over the training data; 0 = no limit", at_least(0));
    v("max_time", max_time, Duration{}, "wall-clock limit; 0 = no limit");
    v("learning_rate", learning_rate, 0.001, "peak learning rate (noam: its factor)", positive());
    // "noam": learning_rate * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5) (a factor ~1-2).
    v("schedule", schedule, ScheduleType::inverse_sqrt,
      "inverse_sqrt: linear warmup, then lr x sqrt(warmup / step); noam: Vaswani et al.'s; constant: lr from step 1, "
      "no warmup");
    // Both warmup schedules divide by warmup_steps; validate() asks them for at least 1.
    v("warmup_steps", warmup_steps, 4000,
      "steps of linear warmup of inverse_sqrt and noam (>= 1 for them; constant ignores it)", at_least(0));
    v("adam_beta1", adam_beta1, 0.9, "Adam's first-moment decay", fraction());
    v("adam_beta2", adam_beta2, 0.98, "Adam's second-moment decay", fraction());
    v("adam_epsilon", adam_epsilon, 1e-9, "Adam's epsilon", positive());
    v("weight_decay", weight_decay, 0.0, "decoupled weight decay (AdamW)", at_least(0));
    v("clip_norm", clip_norm, 1.0, "global gradient norm limit; 0 = off", at_least(0));
    v("label_smoothing", label_smoothing, 0.1, "label smoothing of the cross-entropy", fraction());
    v("log_every", log_every, 100, "steps between progress lines", at_least(1));
    v("valid_every", valid_every, 1000, "steps between validations", at_least(1));
    v("save_every", save_every, 1000, "steps between checkpoint.last saves", at_least(1));
    v("keep_checkpoints", keep_checkpoints, 0,
      "also keep the newest N checkpoint.step-STEP.safetensors (for attn-average); 0 = none", at_least(0));
    // ema = d * ema + (1 - d) * weights after every update.
    v("ema_decay", ema_decay, 0.0,
      "decay of a moving average of the weights, which validation and checkpoint.best then use; 0 = off", fraction());
    v("valid_metric", valid_metric, ValidMetric::bleu, "the dev metric that selects checkpoint.best");
    v("patience", patience, 0, "validations without improvement before stopping; 0 = never", at_least(0));
    v("max_nonfinite_steps", max_nonfinite_steps, 10, "consecutive NaN/Inf losses (steps skipped) before aborting",
      at_least(0));
    v("guided_alignment", guided_alignment, "a loss pulling cross attention towards reference alignments");
  }
  void validate(const std::string& path) const;
};

struct DecodeConfig {
  int beam;
  double length_penalty;
  double max_len_ratio;
  int max_len_extra;
  int batch_size;
  // A batch of long sentences gets fewer of them, so its KV caches and beams stay bounded
  // whatever the input.
  int batch_tokens;
  bool parallel_batches;
  int nbest;
  int min_length;
  int no_repeat_ngram;
  double repetition_penalty;
  std::string prefix;

  DecodeConfig() { set_defaults(*this); }
  template <class V>
  void visit(V& v) {
    v("beam", beam, 5, "hypotheses kept per step; 1 = greedy", at_least(1));
    v("length_penalty", length_penalty, 2.0,
      "GNMT alpha: score / ((5 + len) / 6)^alpha; 0 = off (then a beam search stops as soon as its best is certain)",
      at_least(0));
    v("max_len_ratio", max_len_ratio, 1.5, "max output tokens = ratio x source tokens + max_len_extra", positive());
    v("max_len_extra", max_len_extra, 10, "added to the max output length", at_least(0));
    v("batch_size", batch_size, 32, "sentences per batch", at_least(1));
    v("batch_tokens", batch_tokens, 2048,
      "at most this many source tokens per batch, sentences x the longest (eos included); 0 = no bound", at_least(0));
    v("parallel_batches", parallel_batches, true,
      "decode as many batches at once as there are threads, each on one thread; false = one batch at a time, all "
      "threads on each of its products (the lowest latency a batch)");
    v("nbest", nbest, 1, "hypotheses returned per sentence (at most beam)", at_least(1));
    v("min_length", min_length, 0,
      "no eos before the output holds this many tokens (eos not counted; the max length wins); 0 = off", at_least(0));
    v("no_repeat_ngram", no_repeat_ngram, 0, "no n-gram of this size twice in an output; 0 = off", at_least(0));
    v("repetition_penalty", repetition_penalty, 1.0,
      "CTRL's penalty on the tokens already in the output: a positive logit / P, a negative one x P; 1 = off",
      positive());
    v("prefix", prefix, "",
      "every translation starts with this text's target pieces, then the model goes on; \"\" = none");
  }
  void validate(const std::string& path) const;
};

// The language pair of a run, as ISO 639 codes ("en", "it"; a region or script may follow a
// hyphen: "pt-BR"): what attn-serve's LibreTranslate API reports and checks requests against.
// Empty (both): unnamed; attn-serve then takes the codes from the extensions of
// data.train_src/train_tgt ("train.en", "train.it") or refuses to start, naming this key.
// "en", "ita", "pt-BR", "zh-Hant": two or three lowercase letters, then hyphenated alphanumeric
// subtags.
bool is_language_code(const std::string& code);

struct LanguagesConfig {
  std::string source, target;

  LanguagesConfig() { set_defaults(*this); }
  template <class V>
  void visit(V& v) {
    v("source", source, "", "the source language's ISO 639 code (\"en\", \"pt-BR\"); \"\" = unnamed");
    v("target", target, "", "the target language's ISO 639 code");
  }
  void validate(const std::string& path) const;
};

struct Config {
  std::string output_dir;
  DataConfig data;
  VocabConfig vocab;
  ModelConfig model;
  TrainConfig train;
  DecodeConfig decode;
  LanguagesConfig languages;

  Config() { set_defaults(*this); }
  template <class V>
  void visit(V& v) {
    v("output_dir", output_dir, "runs/en-it", "the run directory: checkpoints, vocabulary, config.json, logs");
    v("data", data, "corpus files, one sentence per line, paths relative to the current directory");
    v("vocab", vocab, "the SentencePiece model trained when a run has none yet");
    v("model", model, "the model's family and shape");
    v("train", train, "the training loop: optimizer, schedule, budget, checkpoints");
    v("decode", decode, "decoding: validation, attn-translate, attn-serve (their flags override these)");
    v("languages", languages, "the language pair's codes, for attn-serve's API");
  }
  // Checks that span sections (shared embeddings need a joint vocabulary, ...).
  void validate(const std::string& path) const;
};

// Reads the file (comments allowed), applies each "key=value" override in order, reads the
// typed config and validates it. Errors name the file: "configs/x.json: unknown config key ...".
Config load_config(const std::string& path, const std::vector<std::string>& overrides = {});
// Strict read + validation of an already parsed config; absent keys keep their defaults.
Config config_from_json(const nlohmann::json& j);
// The full resolved config: every key, defaults included.
nlohmann::json config_to_json(const Config& config);
// config_to_json pretty-printed with a 2-space indent.
std::string config_to_string(const Config& config);
// Applies "key=value" overrides to a resolved config (as --set does before reading) and
// validates the result: how a program's flags that set keys reach a run's config.
Config with_overrides(const Config& config, const std::vector<std::string>& overrides);

// Throws unless `text` (read as --set reads it) is a valid value of the setting `key` on its
// own: its type and declared range, with the reader's messages ("decode.beam must be >= 1; got
// 0"). Checks across settings wait for the whole config (with_overrides).
void check_config_setting(const std::string& key, const std::string& text);

// Every setting and section of Config with its type, default, allowed values and help.
std::vector<SettingInfo> config_settings();
// The SettingInfo of one dotted key (a setting, not a section); throws naming an unknown one.
SettingInfo config_setting(const std::string& key);
// config_settings() as an aligned table (attn-train --help-config).
std::string config_settings_table();

// The declared defaults of a section, built once: the library's option structs take the
// defaults of the fields a config sets from here, so that no default is written twice.
template <class Section>
const Section& defaults() {
  static const Section section;
  return section;
}

}  // namespace attn::io

#pragma once
// attn's configuration schema: one typed struct per JSON section, with the defaults below.
// configs/en-it.json is the annotated example; a run writes its fully resolved config (every
// key, from config_to_json) to OUTPUT_DIR/config.json so that it can be reproduced and resumed.
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
  double weight = 1.0;  // batches draw from the corpora in proportion to their weights
  // Reference alignments for train.guided_alignment: Pharaoh "i-j" links, line i of src/tgt's
  // pair on line i (attn-align's output). "" = none: the corpus's pairs add no guided loss.
  std::string alignments{};

  template <class V>
  void visit(V& v) {
    v("src", src);
    v("tgt", tgt);
    v("weight", weight);
    v("alignments", alignments);
  }
  void validate(const std::string& path) const;
};

// Corpus files, one sentence per line, line i of src aligned with line i of tgt. Paths are
// relative to the current directory.
struct DataConfig {
  std::vector<CorpusConfig> train;   // several corpora with weights ...
  std::string train_src, train_tgt;  // ... or one, as a shorthand
  std::string train_alignments;      // the shorthand's CorpusConfig::alignments
  // What the alignments' positions count: the whitespace-separated words of the raw lines, or
  // the SentencePiece pieces of the encoded sides (eos excluded).
  AlignmentLevel train_alignments_level = AlignmentLevel::words;
  std::string valid_src, valid_tgt;
  // Gold word alignments for validation (XL-WA's TSV: source<TAB>target<TAB>links, "i-j" sure,
  // "i?j"/"ipj" possible): validation then reports the dev AER of the alignments read from the
  // cross attention of the reference, teacher-forced (train.guided_alignment's layer and head).
  // "" = none.
  std::string valid_alignment_gold;
  std::string test_src, test_tgt;
  int max_len = 100;            // max tokens per side; longer training pairs are skipped and counted
  int valid_max_sentences = 0;  // validate on the first N pairs; 0 = all
  // Training pairs held in memory at once: the corpus streams through a window of this many
  // pairs, shuffled and batched within it.
  std::int64_t buffer_pairs = 1000000;
  // Length generalisation: with this probability a training example is the join of 2..concat_max
  // random training pairs of the window (both sides, same order; within max_len). 0 = off.
  double concat_prob = 0.0;
  int concat_max = 3;  // 2..4

  template <class V>
  void visit(V& v) {
    v("train", train);
    v("train_src", train_src);
    v("train_tgt", train_tgt);
    v("train_alignments", train_alignments);
    v("train_alignments_level", train_alignments_level);
    v("valid_src", valid_src);
    v("valid_tgt", valid_tgt);
    v("valid_alignment_gold", valid_alignment_gold);
    v("test_src", test_src);
    v("test_tgt", test_tgt);
    v("max_len", max_len);
    v("valid_max_sentences", valid_max_sentences);
    v("buffer_pairs", buffer_pairs);
    v("concat_prob", concat_prob);
    v("concat_max", concat_max);
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
  VocabType type = VocabType::unigram;
  int size = 8000;
  bool joint = true;                     // one vocabulary for both languages
  double character_coverage = 1.0;       // SentencePiece: share of characters kept (1.0 for Latin scripts)
  std::int64_t max_sentences = 2000000;  // sentences sampled to train it; 0 = all
  // Subword regularisation of the training batches (validation and decoding stay deterministic):
  // unigram: one of the sampling_nbest best segmentations, p ~ exp(sampling_alpha * score);
  // bpe: BPE-dropout with probability sampling_alpha. 0 = off.
  double sampling_alpha = 0.0;
  int sampling_nbest = 64;

  template <class V>
  void visit(V& v) {
    v("type", type);
    v("size", size);
    v("joint", joint);
    v("character_coverage", character_coverage);
    v("max_sentences", max_sentences);
    v("sampling_alpha", sampling_alpha);
    v("sampling_nbest", sampling_nbest);
  }
  void validate(const std::string& path) const;
};

struct TransformerConfig {
  int d_model = 256;
  int heads = 4;  // d_k = d_model / heads
  int ffn_dim = 1024;
  int encoder_layers = 3;
  int decoder_layers = 3;
  double dropout = 0.1;                         // on embeddings, sublayer outputs and inside the FFN
  double attention_dropout = 0.0;               // on the attention weights
  Activation activation = Activation::relu;     // relu | gelu
  Norm norm = Norm::post;                       // post (Vaswani et al.) | pre (with final norms)
  Positions positions = Positions::sinusoidal;  // sinusoidal | learned | rotary | alibi
  int max_positions = 256;                      // longest sequence the position table covers (not rotary, alibi)

  template <class V>
  void visit(V& v) {
    v("d_model", d_model);
    v("heads", heads);
    v("ffn_dim", ffn_dim);
    v("encoder_layers", encoder_layers);
    v("decoder_layers", decoder_layers);
    v("dropout", dropout);
    v("attention_dropout", attention_dropout);
    v("activation", activation);
    v("norm", norm);
    v("positions", positions);
    v("max_positions", max_positions);
  }
  void validate(const std::string& path) const;
};

// Bidirectional encoder + additive (Bahdanau) attention decoder.
struct RnnConfig {
  CellType cell = CellType::gru;
  int embedding_dim = 256;
  int encoder_hidden = 256;  // per direction; the encoder states are 2 * encoder_hidden wide
  int decoder_hidden = 512;
  int attention_dim = 256;  // width of v in e = v^T tanh(W s + U h)
  double dropout = 0.2;

  template <class V>
  void visit(V& v) {
    v("cell", cell);
    v("embedding_dim", embedding_dim);
    v("encoder_hidden", encoder_hidden);
    v("decoder_hidden", decoder_hidden);
    v("attention_dim", attention_dim);
    v("dropout", dropout);
  }
  void validate(const std::string& path) const;
};

struct ModelConfig {
  ModelType type = ModelType::transformer;  // which section below is used
  bool tied_embeddings = true;              // target embedding shared with the output projection
  bool shared_embeddings = true;            // source and target share one embedding (needs vocab.joint)
  TransformerConfig transformer;
  RnnConfig rnn;

  template <class V>
  void visit(V& v) {
    v("type", type);
    v("tied_embeddings", tied_embeddings);
    v("shared_embeddings", shared_embeddings);
    v("transformer", transformer);
    v("rnn", rnn);
  }
};

// Guided alignment training (Garg et al. 2019; Marian's --guided-alignment): a loss pulling
// one decoder layer's cross attention towards the reference alignments of data.train_alignments.
// The step's loss is the translation loss per target token + weight x the guided loss per
// linked target position (ops/guided_alignment_loss.h).
struct GuidedAlignmentConfig {
  double weight = 0.0;    // 0 = off
  int layer = -1;         // the decoder layer, from 0; negative counts from the last (-1 = last)
  AttentionHead head{0};  // one head (Marian and Garg et al. guide one), or "mean" of the heads
  // Which decoder row target token j is pulled at: 0 the row that predicts it (Marian), 1 the
  // row whose input it is (the shifted step of decode/alignment.h): the row that knows y_j, so
  // its attention need not guess the word before it is chosen (Chen et al. 2020).
  int shift = 0;
  GuidedAlignmentCost cost = GuidedAlignmentCost::ce;

  template <class V>
  void visit(V& v) {
    v("weight", weight);
    v("layer", layer);
    v("head", head);
    v("shift", shift);
    v("cost", cost);
  }
  void validate(const std::string& path) const;
  bool on() const { return weight > 0; }
};

struct TrainConfig {
  std::int64_t seed = 1;
  int threads = 2;  // OpenMP threads (oneDNN and our loops)
  // f32 | bf16 (bf16 matmul inputs, f32 master weights) | auto (the faster of the two on this
  // CPU, measured at start)
  Precision precision = Precision::f32;
  int batch_tokens = 4096;     // bound on B x max(S, T) per batch, padding included
  int pad_multiple = 8;        // sequence lengths are padded up to a multiple of this
  int accumulate = 1;          // batches whose gradients are summed per optimizer step
  std::int64_t max_steps = 0;  // optimizer steps; 0 = no limit
  int max_epochs = 0;          // 0 = no limit
  Duration max_time;           // wall-clock limit; 0 = no limit
  double learning_rate = 0.001;
  // "inverse_sqrt": linear warmup to learning_rate, then learning_rate * sqrt(warmup / step).
  // "noam": learning_rate * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5) (a factor ~1-2).
  // "constant": learning_rate after a linear warmup over warmup_steps (0 = none).
  ScheduleType schedule = ScheduleType::inverse_sqrt;
  int warmup_steps = 4000;
  double adam_beta1 = 0.9;
  double adam_beta2 = 0.98;
  double adam_epsilon = 1e-9;
  double weight_decay = 0.0;  // decoupled (AdamW)
  double clip_norm = 1.0;     // global gradient norm limit; 0 = off
  double label_smoothing = 0.1;
  int log_every = 100;     // steps
  int valid_every = 1000;  // steps
  int save_every = 1000;   // steps
  // checkpoint.step-STEP.safetensors kept at each save_every (the newest N, for attn-average);
  // 0 = none.
  int keep_checkpoints = 0;
  // Exponential moving average of the weights, ema = d * ema + (1 - d) * weights after every
  // update; when on, validation and checkpoint.best use it. 0 = off.
  double ema_decay = 0.0;
  ValidMetric valid_metric = ValidMetric::bleu;  // selects the best checkpoint
  int patience = 0;                              // validations without improvement before stopping; 0 = never
  int max_nonfinite_steps = 10;                  // consecutive NaN/Inf losses (steps skipped) before aborting
  GuidedAlignmentConfig guided_alignment;

  template <class V>
  void visit(V& v) {
    v("seed", seed);
    v("threads", threads);
    v("precision", precision);
    v("batch_tokens", batch_tokens);
    v("pad_multiple", pad_multiple);
    v("accumulate", accumulate);
    v("max_steps", max_steps);
    v("max_epochs", max_epochs);
    v("max_time", max_time);
    v("learning_rate", learning_rate);
    v("schedule", schedule);
    v("warmup_steps", warmup_steps);
    v("adam_beta1", adam_beta1);
    v("adam_beta2", adam_beta2);
    v("adam_epsilon", adam_epsilon);
    v("weight_decay", weight_decay);
    v("clip_norm", clip_norm);
    v("label_smoothing", label_smoothing);
    v("log_every", log_every);
    v("valid_every", valid_every);
    v("save_every", save_every);
    v("keep_checkpoints", keep_checkpoints);
    v("ema_decay", ema_decay);
    v("valid_metric", valid_metric);
    v("patience", patience);
    v("max_nonfinite_steps", max_nonfinite_steps);
    v("guided_alignment", guided_alignment);
  }
  void validate(const std::string& path) const;
};

struct DecodeConfig {
  int beam = 5;                 // 1 = greedy
  double length_penalty = 2.0;  // GNMT alpha: score / ((5 + len) / 6)^alpha; 0 = off (docs/experiments.md)
  double max_len_ratio = 1.5;   // max output tokens = ratio * source tokens + extra
  int max_len_extra = 10;
  int batch_size = 32;  // sentences per batch
  // And at most this many source tokens per batch, counted as sentences x the longest one (eos
  // included): a batch of long sentences gets fewer of them, so its KV caches and beams stay
  // bounded whatever the input. 0 = no bound (batch_size alone).
  int batch_tokens = 2048;
  int nbest = 1;  // hypotheses returned per sentence (<= beam)
  // No eos before the output holds this many tokens (eos not counted); the max output length
  // wins over it. 0 = off.
  int min_length = 0;
  int no_repeat_ngram = 0;  // no n-gram of this size twice in an output; 0 = off

  template <class V>
  void visit(V& v) {
    v("beam", beam);
    v("length_penalty", length_penalty);
    v("max_len_ratio", max_len_ratio);
    v("max_len_extra", max_len_extra);
    v("batch_size", batch_size);
    v("batch_tokens", batch_tokens);
    v("nbest", nbest);
    v("min_length", min_length);
    v("no_repeat_ngram", no_repeat_ngram);
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

  template <class V>
  void visit(V& v) {
    v("source", source);
    v("target", target);
  }
  void validate(const std::string& path) const;
};

struct Config {
  std::string output_dir = "runs/en-it";
  DataConfig data;
  VocabConfig vocab;
  ModelConfig model;
  TrainConfig train;
  DecodeConfig decode;
  LanguagesConfig languages;

  template <class V>
  void visit(V& v) {
    v("output_dir", output_dir);
    v("data", data);
    v("vocab", vocab);
    v("model", model);
    v("train", train);
    v("decode", decode);
    v("languages", languages);
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

}  // namespace attn::io

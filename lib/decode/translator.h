#pragma once
// Translator: raw text lines in, detokenized translations out, exactly one per input line and
// in input order (batches are length-sorted internally, then restored).
//
// Input rules (attn-translate follows them; docs/guide.md, "Translating: decoding options"):
//  - a line that encodes to no token (empty, or only whitespace) gives an empty output without
//    running the model;
//  - bytes that are not valid UTF-8 become U+FFFD in SentencePiece's normaliser, which is not a
//    piece, so they encode as unk (data/vocab.h); NUL and other control bytes are characters
//    like any other (unk unless the vocabulary has them);
//  - a line longer than max_source_tokens (eos included) is cut to its first
//    max_source_tokens - 1 tokens, with a warning naming the line (1-based);
//  - a target prefix (TranslateOptions::prefix, or a line's own) is text encoded with the target
//    vocabulary, and the output's pieces start with its pieces; an empty input line still gives
//    an empty output.
#include <string>
#include <vector>

#include "data/vocab.h"
#include "decode/search.h"
#include "io/config.h"
#include "models/seq2seq_model.h"

namespace attn::decode {

struct TranslateOptions {
  SearchOptions search;
  int batch_size = io::defaults<io::DecodeConfig>().batch_size;
  // A batch also holds at most this many source tokens, sentences x the longest (eos included;
  // 0 = no bound): its encoder output, KV caches and beams grow with it, so a window of long
  // sentences is cut into more, smaller batches (decode.batch_tokens).
  int64_t batch_tokens = io::defaults<io::DecodeConfig>().batch_tokens;
  // With more batches than one, each thread decodes batches of its own (decode.parallel_batches):
  // whole products on one thread, no hand-out per product and no thread waiting for another's
  // part. Otherwise every thread works on each product of one batch.
  bool parallel_batches = io::defaults<io::DecodeConfig>().parallel_batches;
  int64_t max_source_tokens = 0;  // longer inputs are truncated (0 = no limit)
  // Streaming (TranslationWindow): lines are sorted by length within a window of this many
  // batches, which bounds memory by the window at few more decoder steps than sorting the whole
  // input (docs/performance.md, "The streaming window").
  int window_batches = 16;
  // Target prefix of every output, as text (decode.prefix, --prefix; empty = none): the
  // Translator encodes it with the target vocabulary into search.prefix, which must then be
  // empty (its options() hold the ids only). A line's own prefix (Translator::translate's
  // `prefixes`) replaces it.
  std::string prefix = io::defaults<io::DecodeConfig>().prefix;
};

// The decoding settings of a run's config (decode.*, lengths capped by the model's limit,
// models::max_sequence_length): the one place they are read, so that attn-translate,
// attn-dump-attention, attn-bench and validation decode a run alike. Programs then apply their
// flags on top.
TranslateOptions translate_options(const io::Config& config);
// An ensemble's (models/ensemble.h), one config per member: the first's settings, with the
// lengths capped by the smallest member's limit (a Transformer's position table, an RNN's
// 4 x data.max_len), so no member runs past its own.
TranslateOptions translate_options(const std::vector<const io::Config*>& configs);

struct Translation {
  std::vector<Hypothesis> nbest;  // best first; empty for an empty input line
  std::string text;               // detokenized best hypothesis
  std::vector<int32_t> source;    // the input's ids, eos last (what the search read)
};

class Translator {
 public:
  Translator(const models::Seq2SeqModel& model, const data::Vocab& source_vocab, const data::Vocab& target_vocab,
             TranslateOptions options);

  // `first_line` is the 1-based number of lines[0] in the whole input (for warnings).
  // `prefixes`: none, or one per line, the text its output starts with (empty: no prefix),
  // replacing the options' prefix.
  std::vector<Translation> translate(const std::vector<std::string>& lines, int64_t first_line = 1,
                                     const std::vector<std::string>& prefixes = {}) const;
  // The same for lines already encoded (encode_lines): an empty one gets no hypothesis. With
  // sampling, line i draws from stream first_line + i: the same seed gives each input line the
  // same sample whatever the batching. `prefixes`: none, or one per line (encode_prefix).
  std::vector<Translation> translate_ids(const std::vector<std::vector<int32_t>>& encoded, int64_t first_line = 1,
                                         const OutputPrefixes& prefixes = {}) const;
  // A prefix's text as target ids (no eos).
  std::vector<int32_t> encode_prefix(const std::string& text) const;
  // Detokenized text of a hypothesis.
  std::string detokenize(const Hypothesis& hypothesis) const;
  const TranslateOptions& options() const { return options_; }

 private:
  const models::Seq2SeqModel& model_;
  const data::Vocab& source_vocab_;
  const data::Vocab& target_vocab_;
  TranslateOptions options_;
};

// A translator for input that arrives line by line (attn-translate's standard input): lines
// are added one at a time and translated a window at a time, so memory is bounded by the
// window, not the input, and a caller can translate what it has whenever its input pauses.
//
//   TranslationWindow window(translator);
//   while (read a line) if (window.add(line)) write(window.translate());
//   write(window.translate());
class TranslationWindow {
 public:
  explicit TranslationWindow(const Translator& translator);

  // Adds a line; returns true once the window holds window_batches * batch_size lines.
  bool add(std::string line);
  bool empty() const { return lines_.empty(); }
  size_t size() const { return lines_.size(); }
  // Translates the lines added since the last call, in their input order, and empties the
  // window. Warnings number lines from the first line ever added.
  std::vector<Translation> translate();

 private:
  const Translator& translator_;
  size_t capacity_;
  std::vector<std::string> lines_;
  int64_t next_line_ = 1;  // 1-based input line number of lines_[0]
};

// Decoding pads sentence lengths to a multiple of this (one primitive shape per 8 lengths).
inline constexpr int kInferencePadMultiple = 8;

// A source-only batch from encoded sentences (each ending in eos), padded to a multiple of
// kInferencePadMultiple but never past max_length (> 0: the model's limit, which every
// sentence must respect).
data::Batch source_batch(const std::vector<const std::vector<int32_t>*>& sentences, int64_t max_length = 0);

// How decoding batches encoded lines: the non-empty ones (input indices), stably sorted by
// length, cut into consecutive batches of at most batch_size sentences and, when batch_tokens
// > 0, of at most batch_tokens source tokens counted as sentences x the longest (a sentence
// longer than the budget is a batch of its own). Outputs go back to these indices.
std::vector<std::vector<int64_t>> length_sorted_batches(const std::vector<std::vector<int32_t>>& encoded,
                                                        int64_t batch_size, int64_t batch_tokens = 0);

// Each line's ids with eos appended; an empty line gives no ids. A line of max_tokens or more
// tokens (eos included; 0 = no limit) keeps its first max_tokens - 1 and a warning names it as
// "<side> line N" (N counts from first_line, the 1-based number of lines[0] in the input).
std::vector<std::vector<int32_t>> encode_lines(const std::vector<std::string>& lines, const data::Vocab& vocab,
                                               int64_t max_tokens, const std::string& side = "input",
                                               int64_t first_line = 1);

}  // namespace attn::decode

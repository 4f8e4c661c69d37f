#pragma once
// Greedy search, sampling and beam search over any Seq2SeqModel, through its start()/step()
// and the DecoderState interface. All shrink the batch as sentences finish.
//
// Scores are sums of token log-probabilities (eos included, a forced prefix too) under the
// logits processors (decode/logits_processor.h); beam search ranks finished hypotheses by GNMT's
// length penalty: score / ((5 + length) / 6)^alpha.
#include <cstdint>
#include <vector>

#include "data/batch.h"
#include "data/vocab.h"
#include "io/config.h"
#include "models/seq2seq_model.h"

namespace attn::decode {

// Sampling (attn-translate --sample): each token drawn from softmax(log_probs / temperature),
// restricted to the top_k most likely tokens and then to the smallest set of them whose
// probability reaches top_p (nucleus sampling), renormalised.
struct SamplingOptions {
  bool enabled = false;
  float temperature = 1.f;  // > 0; below 1 sharper, above 1 flatter
  int top_k = 0;            // 0 = every token
  float top_p = 1.f;        // in (0, 1]; 1 = every token
  uint64_t seed = 0;        // the same seed gives the same samples
};

struct SearchOptions {
  // The fields a config sets (decode.*) default to its declared defaults: io/config.h.
  int beam = io::defaults<io::DecodeConfig>().beam;
  // alpha; 0 ranks by raw log-probability
  float length_penalty = float(io::defaults<io::DecodeConfig>().length_penalty);
  // max output tokens = ratio * source length + extra
  float max_len_ratio = float(io::defaults<io::DecodeConfig>().max_len_ratio);
  int max_len_extra = io::defaults<io::DecodeConfig>().max_len_extra;
  // The model's own limit on output tokens (a Transformer's position table); 0 = none. Caps
  // the ratio-based limit, so a long source never runs the decoder past the table.
  int64_t max_output_tokens = 0;
  int nbest = io::defaults<io::DecodeConfig>().nbest;
  int32_t bos_id = data::kBosId;
  int32_t eos_id = data::kEosId;
  SamplingOptions sampling;
  // Of the products of two activations (attention): f32, or bf16 when validating a bf16
  // training run. The weights' products follow their prepared forms.
  Precision precision = Precision::f32;
  // Constraints (decode/logits_processor.h); 0 = off. The length limit wins over min_length.
  // eos is forbidden until the output holds this many tokens (eos not counted)
  int min_length = io::defaults<io::DecodeConfig>().min_length;
  // a token that would repeat an n-gram of this size of the output is forbidden
  int no_repeat_ngram = io::defaults<io::DecodeConfig>().no_repeat_ngram;
  // CTRL's repetition penalty on the logits of the tokens already in the output (> 0; 1 = off;
  // RepetitionPenaltyProcessor).
  float repetition_penalty = io::defaults<io::DecodeConfig>().repetition_penalty;
  // Target prefix: every output starts with these ids (target pieces, no bos or eos; empty =
  // none), then the model goes on; cut at the length limit. Forced tokens go through the
  // decoder like chosen ones and their log-probabilities count in the score. A search's
  // per-sentence prefixes (OutputPrefixes) replace it. decode.prefix is text: the Translator
  // encodes it (TranslateOptions::prefix).
  std::vector<int32_t> prefix;
};

// Per sentence (batch row order), the ids its output must start with, replacing
// SearchOptions::prefix; empty: every sentence takes SearchOptions::prefix.
using OutputPrefixes = std::vector<std::vector<int32_t>>;

struct Hypothesis {
  std::vector<int32_t> tokens;  // without bos, with the prefix; ends with eos unless cut at the length limit
  float log_prob = 0.f;         // sum of token log-probabilities
  float score = 0.f;            // log_prob after the length penalty (greedy: log_prob)
};

// The one entry of decoding: per sentence of `source` (in batch row order) its n-best
// hypotheses, best first. Dispatches on the options: sampling.enabled -> sample_search (one
// hypothesis; streams: its key per batch row, e.g. the input line), beam 1 -> greedy_search
// (one hypothesis), otherwise beam_search. Sentence b's output starts with prefixes[b] (one per
// batch row), or with options.prefix when `prefixes` is empty; every search below alike.
std::vector<std::vector<Hypothesis>> search(const models::Seq2SeqModel& model, const data::Batch& source,
                                            const SearchOptions& options, const std::vector<uint64_t>& streams,
                                            const OutputPrefixes& prefixes = {});

// Per sentence of `source` (in batch row order): the n-best hypotheses, best first. Until a
// sentence's prefix ends it has one live beam, forced; its beams diverge after the prefix.
std::vector<std::vector<Hypothesis>> beam_search(const models::Seq2SeqModel& model, const data::Batch& source,
                                                 const SearchOptions& options, const OutputPrefixes& prefixes = {});
// A continuation of a live beam by one token; log_prob is the beam's plus the token's.
struct Continuation {
  float log_prob;
  int beam;
  int32_t token;
};

// Beam search scans a row's tokens in chunks of this many.
inline constexpr int64_t kScanChunk = 64;

// A step's next-token scores for some beams, as logits and what normalises them
// (ops::log_sum_exp_rows): beam b's log-probability of token v is logits[b * width + v] -
// log_sum[b], and chunk_max[b * chunks + c] is at least every logit of chunk c (kScanChunk
// tokens; chunks = width / kScanChunk rounded up).
struct StepScores {
  const float* logits;  // (b, width)
  int64_t width;
  const float* log_sum;    // (b)
  const float* chunk_max;  // (b, chunks)
};

// The `count` best continuations of beams whose log-probs are `beam_log_probs` (b), best first;
// ties keep the earlier (beam, token), as a stable sort would. One pass with a running threshold
// that skips a whole chunk of tokens when its maximum cannot enter: almost every chunk of a
// beam step costs one comparison, and no row of log-probabilities is ever written.
std::vector<Continuation> best_continuations(const StepScores& scores, const std::vector<float>& beam_log_probs,
                                             size_t count);

// Per sentence: the argmax continuation.
std::vector<Hypothesis> greedy_search(const models::Seq2SeqModel& model, const data::Batch& source,
                                      const SearchOptions& options, const OutputPrefixes& prefixes = {});

// Per sentence: a continuation sampled token by token (options.sampling). Sentence b draws
// from its own stream, keyed by (sampling.seed, streams[b]), one value per output position, so
// its sample depends neither on the batch nor on the other sentences; streams: one key per
// batch row (e.g. its input line).
std::vector<Hypothesis> sample_search(const models::Seq2SeqModel& model, const data::Batch& source,
                                      const SearchOptions& options, const std::vector<uint64_t>& streams,
                                      const OutputPrefixes& prefixes = {});

// The token that uniform draw u in [0, 1) picks from a row of `width` log-probabilities
// under `sampling` (temperature, top_k, top_p); ties go to the lower id.
int32_t sample_token(const float* log_probs, int64_t width, const SamplingOptions& sampling, float u);

// A decoder step of a search has ended (each search loop calls it once per step, before the
// next model.step): the buffer pool's end_step(), so that the step's freed temporaries and the
// KV caches it replaced go back to the system instead of piling up in the pool's free lists
// for the rest of the search. A long sentence otherwise keeps a block of every cache length it
// went through (core/buffer_pool.h).
void end_search_step();

// Each sentence's prefix (prefixes[b], or options.prefix when `prefixes` is empty), checked:
// one per batch row, ids of the model's target vocabulary (`vocab_size`), no eos.
OutputPrefixes output_prefixes(const SearchOptions& options, const OutputPrefixes& prefixes, int64_t batch_size,
                               int64_t vocab_size);

// Longest output allowed for a source of `source_length` tokens (at least 1).
int64_t max_output_length(int64_t source_length, const SearchOptions& options);
// GNMT length penalty ((5 + length) / 6)^alpha.
float length_penalty(int64_t length, float alpha);

}  // namespace attn::decode

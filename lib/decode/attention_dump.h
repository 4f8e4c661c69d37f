#pragma once
// Attention dumps: the attention weights a model gives a sentence pair, cut to each sentence's
// real positions (padding never appears), for attn-dump-attention and the attention tests.
//
// Every dump is teacher-forced: the model reads the source and the target (bos y1 .. y_{n-1})
// in one forward() and RunContext::attention_maps collects its maps (B, H, Tq, Tk). Per
// sentence, with Ls source tokens and n target tokens (both counting eos):
//   enc_self  (H, Ls, Ls)  query and key = source token
//   cross     (H, n, Ls)   query = output token y_{q+1} (the token decoder position q predicts,
//                          as in Marian's and Joey NMT's alignment dumps), key = source token
//   dec_self  (H, n, n)    query = output token y_{q+1}, key = decoder input at position k
//                          (bos y1 .. y_{n-1}: the token the decoder read there); 0 above the
//                          diagonal (causal mask)
// The RNN model has one cross map (layer 0, H = 1); the Transformer has one map per kind,
// layer and head.
//
// Shapes: B sentences, H heads, Tq query length, Tk key length (padded), Ls/n real lengths.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "data/corpus.h"
#include "data/vocab.h"
#include "decode/translator.h"
#include "layers/attention_maps.h"
#include "models/seq2seq_model.h"

namespace attn::decode {

// Which maps to keep; an unset field keeps all.
struct AttentionSelection {
  std::optional<layers::AttentionKind> kind;
  std::optional<int> layer;
  std::optional<int> head;
  bool average_heads = false;  // one map per (kind, layer): the mean over heads
};

// One (kind, layer) map of one sentence at its real positions.
struct SentenceMap {
  layers::AttentionKind kind = layers::AttentionKind::cross;
  int layer = 0;
  std::vector<int> heads;      // the model's head index of each stored head; {-1} = mean of all heads
  int64_t queries = 0;         // Tq of this sentence
  int64_t keys = 0;            // Tk of this sentence
  std::vector<float> weights;  // (heads.size(), queries, keys)

  const float* row(size_t head, int64_t query) const { return weights.data() + (head * queries + query) * keys; }
};

inline constexpr int kMeanHead = -1;  // SentenceMap::heads entry of a map averaged over heads

// The maps of one input line. A line with an empty side has no ids and no maps.
struct SentenceAttention {
  int64_t index = 0;                   // 0-based input line
  std::vector<int32_t> source;         // source ids, eos last
  std::vector<int32_t> target;         // output ids y1 .. yn (eos last unless cut at the length limit)
  std::vector<int32_t> decoder_input;  // bos y1 .. y_{n-1}
  std::vector<SentenceMap> maps;
};

using AttentionSink = std::function<void(const SentenceAttention&)>;

// Throws when `selection` asks for what `maps` (one forward's maps) do not have: a kind the
// model lacks, a layer or head out of range (the message names how many there are).
void check_selection(const layers::AttentionMaps& maps, const AttentionSelection& selection);

// Every attention map of one teacher-forced forward() (no tape, no dropout), with padding.
layers::AttentionMaps teacher_forced_attention(const models::Seq2SeqModel& model, const data::Batch& batch);

// Teacher-forced attention of each example (both sides ending in eos; Example::index = input
// line), batch_size examples per forward() in the given order; `sink` gets every example's
// selected maps in that order. The selection is checked against the first batch's maps.
void collect_attention(const models::Seq2SeqModel& model, const std::vector<data::Example>& examples,
                       const AttentionSelection& selection, int batch_size, const AttentionSink& sink);

struct AttentionDumpOptions {
  AttentionSelection selection;
  // As attn-translate decodes (translate_options): batch_size sentences per forward(), sides
  // longer than max_source_tokens truncated with a warning, and in translated() the search.
  TranslateOptions translate;
};

// Text in, one SentenceAttention per input line out, in input order.
class AttentionDumper {
 public:
  AttentionDumper(const models::Seq2SeqModel& model, const data::Vocab& source_vocab, const data::Vocab& target_vocab,
                  AttentionDumpOptions options);

  // The weights the model gives the reference targets[i] (eos appended, as in training).
  // Throws when the line counts differ.
  void forced(const std::vector<std::string>& sources, const std::vector<std::string>& targets,
              const AttentionSink& sink) const;
  // The weights of the model's own translation (the best hypothesis of options.search).
  void translated(const std::vector<std::string>& sources, const AttentionSink& sink) const;

 private:
  // Teacher-forced maps of targets[i] given sources[i]; a line with an empty side gets none.
  void dump(const std::vector<std::vector<int32_t>>& sources, const std::vector<std::vector<int32_t>>& targets,
            const AttentionSink& sink) const;

  const models::Seq2SeqModel& model_;
  const data::Vocab& source_vocab_;
  const data::Vocab& target_vocab_;
  AttentionDumpOptions options_;
};

}  // namespace attn::decode

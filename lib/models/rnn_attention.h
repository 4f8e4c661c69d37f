#pragma once
// The RNN encoder-decoder with additive attention (Bahdanau et al. 2015):
//   encoder  embedding -> bidirectional GRU -> h_i = [h_i^fwd; h_i^bwd] (B, S, 2H); the backward
//            direction starts at each sentence's true last token (padded steps keep its state)
//   init     s_0 = tanh(W_init mean_i h_i + b) over the real positions
//   step t   c_t, a_t = attention(s_{t-1}, h)       (AdditiveAttention, padding masked)
//            s_t = GRU([emb(y_{t-1}); c_t], s_{t-1})
//   output   logits = tanh(W_o [s_t; c_t; emb(y_{t-1})] + b_o) E^T  (or a Linear when untied)
// Dropout on the embeddings and on the output layer's input. Teacher forcing records the T
// decoder steps on the tape, then runs the output layer once over all (B, T, .) steps.
// Attention maps (RunContext::attention_maps): forward() adds one cross map, layer 0, (B, 1, T, S)
// (rows past the longest target, which no loss reads, are 0); step() adds (R, 1, 1, S) per step.
//
// Shapes: B sentences, S source length, T target length, E embedding width, H encoder hidden
// width per direction, Hd decoder hidden width, A attention width, V vocabulary, R decoding rows.
#include <memory>
#include <vector>

#include "layers/additive_attention.h"
#include "layers/embedding.h"
#include "layers/gru_cell.h"
#include "layers/linear.h"
#include "models/seq2seq_model.h"

namespace attn::models {

struct RnnAttentionOptions {
  int64_t source_vocab = 8000;
  int64_t target_vocab = 8000;
  int64_t embedding_dim = 256;   // E
  int64_t encoder_hidden = 256;  // H, per direction
  int64_t decoder_hidden = 512;  // Hd
  int64_t attention_dim = 256;   // A
  float dropout = 0.2f;
  bool shared_embeddings = true;  // one table for source and target (needs one vocabulary)
  bool tied_embeddings = true;    // output projection = target embedding^T
  int32_t padding_id = 0;
};

// What every decoder step reads from the source side.
struct EncodedSource {
  Tensor states;                 // (B, S, 2H) encoder states h_i (zero at padded positions past the longest sentence)
  Tensor keys;                   // (B, S, A) W_k h_i + b_k, computed once
  Tensor mask;                   // (B, 1, S) additive: kMaskValue on padding
  std::vector<int32_t> lengths;  // (B) real source lengths
};

class RnnAttentionModel : public Seq2SeqModel {
 public:
  RnnAttentionModel(const RnnAttentionOptions& options, uint64_t seed);

  Tensor forward(const layers::RunContext& ctx, const data::Batch& batch) const override;
  std::unique_ptr<DecoderState> start(const layers::RunContext& ctx, const data::Batch& batch) const override;
  Tensor step(const layers::RunContext& ctx, DecoderState& state,
              const std::vector<int32_t>& previous_tokens) const override;
  int64_t target_vocab_size() const override { return options_.target_vocab; }
  std::string family() const override { return "rnn"; }

  // Encoder states (B, S, 2H): forward and backward GRU states concatenated per position.
  Tensor encode(const layers::RunContext& ctx, const data::Batch& batch) const;

 private:
  struct StepOutput {
    Tensor state;    // s_t (B, Hd)
    Tensor context;  // c_t (B, 2H)
    Tensor weights;  // a_t (B, 1, S)
  };

  // The states of one encoder direction at each of the S positions, (B, H) each.
  std::vector<Tensor> run_encoder_direction(Tape& tape, const layers::GruCell& cell, const Tensor& embedded,
                                            const std::vector<int32_t>& lengths, bool reverse) const;
  EncodedSource encode_source(const layers::RunContext& ctx, const data::Batch& batch) const;
  // s_0 = tanh(W_init mean(h over real positions) + b): (B, Hd).
  Tensor initial_state(Tape& tape, const EncodedSource& source) const;
  // One decoder step from emb(y_{t-1}) (B, E) and s_{t-1} (B, Hd).
  StepOutput decode_step(Tape& tape, const Tensor& embedded, const Tensor& state, const EncodedSource& source) const;
  // [s; c; emb] (B, T, Hd + 2H + E) -> logits (B, T, V).
  Tensor output_logits(const layers::RunContext& ctx, const Tensor& features) const;

  RnnAttentionOptions options_;
  layers::Embedding source_embedding_, target_embedding_;
  layers::GruCell forward_gru_, backward_gru_, decoder_gru_;
  layers::Linear init_;
  layers::AdditiveAttention attention_;
  layers::Linear pre_output_;
  layers::Linear output_;  // untied only
};

}  // namespace attn::models

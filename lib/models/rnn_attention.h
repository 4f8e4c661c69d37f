#pragma once
// The RNN encoder-decoder with additive attention (Bahdanau et al. 2015):
//   encoder  embedding -> bidirectional recurrent cell -> h_i = [h_i^fwd; h_i^bwd] (B, S, 2H); the
//            backward direction starts at each sentence's true last token (padded steps keep its
//            state, c included)
//   init     s_0 = tanh(W_init mean_i h_i + b) over the real positions; an LSTM's memory cell
//            starts at c_0 = 0 (s_0 already carries the source summary, and c_0 = 0 is where
//            every encoder direction starts too)
//   step t   c_t, a_t = attention(s_{t-1}, h)       (AdditiveAttention, padding masked)
//            s_t = cell([emb(y_{t-1}); c_t], s_{t-1})
//   output   logits = tanh(W_o [s_t; c_t; emb(y_{t-1})] + b_o) E^T  (or a Linear when untied)
// The cell is model.rnn.cell, any name of layers::recurrent_cell_kinds() (GRU or LSTM); its
// parameters are named after it: encoder.forward_gru, encoder.backward_gru, decoder.gru, or
// encoder.forward_lstm, encoder.backward_lstm, decoder.lstm.
// Dropout on the embeddings and on the output layer's input. Teacher forcing records the T
// decoder steps on the tape, then runs the output layer once over all (B, T, .) steps.
// Attention maps (RunContext::attention_maps): forward() adds one cross map, layer 0, (B, 1, T, S)
// (rows past the longest target, which no loss reads, are 0); step() adds (R, 1, 1, S) per step.
//
// Shapes: B sentences, S source length, T target length, E embedding width, H encoder hidden
// width per direction, Hd decoder hidden width, A attention width, V vocabulary, R decoding rows.
#include <memory>
#include <string>
#include <vector>

#include "io/config.h"
#include "layers/additive_attention.h"
#include "layers/linear.h"
#include "layers/recurrent_cell.h"
#include "models/model_family.h"
#include "models/seq2seq_model.h"
#include "models/token_embeddings.h"

namespace attn::models {

// Vocabularies and embedding sharing come from TokenEmbeddingOptions.
struct RnnAttentionOptions : TokenEmbeddingOptions {
  // model.rnn's declared defaults (io/config.h).
  CellType cell = io::defaults<io::RnnConfig>().cell;  // a registered recurrent cell (layers/recurrent_cell.h)
  int64_t embedding_dim = io::defaults<io::RnnConfig>().embedding_dim;    // E
  int64_t encoder_hidden = io::defaults<io::RnnConfig>().encoder_hidden;  // H, per direction
  int64_t decoder_hidden = io::defaults<io::RnnConfig>().decoder_hidden;  // Hd
  int64_t attention_dim = io::defaults<io::RnnConfig>().attention_dim;    // A
  float dropout = float(io::defaults<io::RnnConfig>().dropout);
};

// The options of model.rnn and the model-wide embedding keys, for `vocab`.
RnnAttentionOptions rnn_attention_options(const io::Config& config, const VocabSizes& vocab);
// Its entry in the family table: model.type "rnn". The longest sequence is 4 x data.max_len
// (model_factory.h); there is no position limit. The schedule width is model.rnn.decoder_hidden: noam's d^-0.5 scales
// the rate to the width of the model's main state, which for the RNN is the decoder state that attention, the
// recurrence and the output layer all read.
ModelFamily rnn_attention_family();

// What every decoder step reads from the source side.
struct EncodedSource {
  Tensor states;                 // (B, S, 2H) encoder states h_i (zero at padded positions past the longest sentence)
  Tensor keys;                   // (B, S, A) W_k h_i + b_k, computed once
  Tensor mask;                   // (B, 1, S) additive: kMaskValue on padding
  std::vector<int32_t> lengths;  // (B) real source lengths
};

class RnnAttentionModel : public Seq2SeqModel {
 public:
  RnnAttentionModel(const RnnAttentionOptions& options, ParameterInit init);

  Tensor forward(const layers::RunContext& ctx, const data::Batch& batch) const override;
  HiddenStates forward_hidden(const layers::RunContext& ctx, const data::Batch& batch) const override;
  OutputProjection output_projection() const override;
  std::unique_ptr<DecoderState> start(const layers::RunContext& ctx, const data::Batch& batch) const override;
  Tensor step(const layers::RunContext& ctx, DecoderState& state,
              const std::vector<int32_t>& previous_tokens) const override;

  // Encoder states (B, S, 2H): forward and backward cell states h concatenated per position.
  Tensor encode(const layers::RunContext& ctx, const data::Batch& batch) const;

 private:
  struct StepOutput {
    layers::RecurrentState state;  // s_t: h (B, Hd), and c (B, Hd) for an LSTM
    Tensor context;                // c_t (B, 2H)
    Tensor weights;                // a_t (B, 1, S)
  };

  // The states h of one encoder direction at each of the S positions, (B, H) each.
  std::vector<Tensor> run_encoder_direction(Tape& tape, const layers::RecurrentCell& cell, const Tensor& embedded,
                                            const std::vector<int32_t>& lengths, bool reverse) const;
  EncodedSource encode_source(const layers::RunContext& ctx, const data::Batch& batch) const;
  // s_0 = {tanh(W_init mean(h over real positions) + b), c_0 = 0}: (B, Hd).
  layers::RecurrentState initial_state(const layers::RunContext& ctx, const EncodedSource& source) const;
  // One decoder step from emb(y_{t-1}) (B, E) and s_{t-1}.
  StepOutput decode_step(const layers::RunContext& ctx, const Tensor& embedded, const layers::RecurrentState& state,
                         const EncodedSource& source) const;
  // [s; c; emb] (B, T, Hd + 2H + E) -> tanh(W [s; c; emb] + b) (B, T, E), which the output
  // projection maps to the logits.
  Tensor output_hidden(const layers::RunContext& ctx, const Tensor& features) const;

  RnnAttentionOptions options_;
  TokenEmbeddings embeddings_;
  std::unique_ptr<layers::RecurrentCell> forward_cell_, backward_cell_, decoder_cell_;
  layers::Linear init_;
  layers::AdditiveAttention attention_;
  layers::Linear pre_output_;
};

}  // namespace attn::models

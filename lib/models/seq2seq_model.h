#pragma once
// Seq2SeqModel: the interface the trainer, the decoder and the attention dump use for every
// model family. Training and validation call forward_hidden() (teacher forcing over whole
// target sequences, up to the output projection, which the fused loss ops::linear_cross_entropy
// applies chunk by chunk); forward() gives the logits themselves; decoding calls start() once
// per source batch, then step() once per output token.
//
// Shapes: B sentences, S source length, T target length, V target vocabulary, R decoding
// rows (sentences x beam).
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/parameter_store.h"
#include "data/batch.h"
#include "layers/run_context.h"
#include "models/decoder_state.h"

namespace attn::models {

// A model's output projection, logits = hidden W^T (+ bias), as views of its parameters.
struct OutputProjection {
  const MatmulWeight* weight = nullptr;  // (V, E): the f32 parameter and its prepared forms
  Tensor bias;                           // (V) or undefined
};

// The teacher-forced decoder output before the projection: forward() is the projection of it.
struct HiddenStates {
  Tensor hidden;  // (B, T, E)
  OutputProjection projection;
};

class Seq2SeqModel {
 public:
  virtual ~Seq2SeqModel() = default;

  // Teacher-forced logits (B, T, V) for batch.tgt_in given batch.src.
  virtual Tensor forward(const layers::RunContext& ctx, const data::Batch& batch) const = 0;
  // The same up to the output projection: hidden (B, T, E) and the projection to apply.
  virtual HiddenStates forward_hidden(const layers::RunContext& ctx, const data::Batch& batch) const = 0;
  // The projection forward_hidden() hands the loss (none for a model without one of its own, such
  // as an ensemble).
  virtual OutputProjection output_projection() const { return {}; }
  // Encodes batch.src and returns the state for decoding (one row per sentence).
  virtual std::unique_ptr<DecoderState> start(const layers::RunContext& ctx, const data::Batch& batch) const = 0;
  // Logits (R, V) of the next token of each row, given each row's previous token.
  virtual Tensor step(const layers::RunContext& ctx, DecoderState& state,
                      const std::vector<int32_t>& previous_tokens) const = 0;

  int64_t target_vocab_size() const { return target_vocab_; }
  // Its model.type: the name of its entry in the family table (model_factory.h).
  const std::string& family() const { return family_; }

  ParameterStore& parameters() { return store_; }
  const ParameterStore& parameters() const { return store_; }

 protected:
  Seq2SeqModel(std::string family, int64_t target_vocab, ParameterInit init)
      : store_(init), family_(std::move(family)), target_vocab_(target_vocab) {}
  ParameterStore store_;

 private:
  std::string family_;
  int64_t target_vocab_;
};

}  // namespace attn::models

#pragma once
// EnsembleModel: several trained models decoded as one (attn-translate --model A --model B),
// as Marian and fairseq ensemble. It is a Seq2SeqModel, so greedy search, sampling and beam
// search run it unchanged:
//   start()   encodes the source with every member; its DecoderState holds one state per
//             member and select_rows() applies to all, so beams stay aligned across members;
//   step()    the weighted mean of the members' log-probabilities (R, V) (the searches then
//             normalise it with log-softmax, as they do any logits: a normalised weighted
//             geometric mean of the members' distributions);
//   forward() the same mean over teacher-forced log-probabilities (B, T, V); forward_hidden()
//             is refused: the mean of several projections is no single one.
// Members may be of any family (a Transformer with an RNN): only the DecoderState interface
// is shared. They must share the target vocabulary (token id v means the same piece in all)
// and read the same source ids: run::check_same_vocabularies checks the files.
#include <memory>
#include <vector>

#include "models/seq2seq_model.h"

namespace attn::models {

class EnsembleModel : public Seq2SeqModel {
 public:
  // `members` are not owned and must outlive the ensemble; `weights` gives one weight > 0 per
  // member (normalised to sum 1), or is empty for equal weights.
  explicit EnsembleModel(std::vector<const Seq2SeqModel*> members, std::vector<float> weights = {});

  Tensor forward(const layers::RunContext& ctx, const data::Batch& batch) const override;
  HiddenStates forward_hidden(const layers::RunContext& ctx, const data::Batch& batch) const override;
  std::unique_ptr<DecoderState> start(const layers::RunContext& ctx, const data::Batch& batch) const override;
  Tensor step(const layers::RunContext& ctx, DecoderState& state,
              const std::vector<int32_t>& previous_tokens) const override;

  size_t size() const { return members_.size(); }
  // The normalised weights, one per member.
  const std::vector<float>& weights() const { return weights_; }

 private:
  std::vector<const Seq2SeqModel*> members_;
  std::vector<float> weights_;
};

}  // namespace attn::models

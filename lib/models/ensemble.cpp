#include "models/ensemble.h"

#include <numeric>
#include <string>

#include "ops/add.h"
#include "ops/log_softmax.h"
#include "ops/scale.h"

namespace attn::models {

namespace {

// Every member's state; the searches keep or repeat the same rows in each.
class EnsembleState : public DecoderState {
 public:
  explicit EnsembleState(std::vector<std::unique_ptr<DecoderState>> members) : members_(std::move(members)) {}
  void select_rows(const std::vector<int64_t>& rows) override {
    for (auto& member : members_) member->select_rows(rows);
  }
  int64_t rows() const override { return members_.front()->rows(); }
  DecoderState& member(size_t index) { return *members_[index]; }

 private:
  std::vector<std::unique_ptr<DecoderState>> members_;
};

int64_t shared_target_vocab(const std::vector<const Seq2SeqModel*>& members) {
  ATTN_CHECK(!members.empty(), "an ensemble needs at least one model");
  for (const Seq2SeqModel* member : members) ATTN_CHECK(member != nullptr, "ensemble: a member model is missing");
  const int64_t size = members.front()->target_vocab_size();
  for (size_t i = 1; i < members.size(); ++i)
    ATTN_CHECK(members[i]->target_vocab_size() == size, "ensemble: model ", i + 1, " has a target vocabulary of ",
               members[i]->target_vocab_size(), " tokens, model 1 of ", size,
               "; the models of an ensemble must share their target vocabulary");
  return size;
}

std::vector<float> normalised_weights(std::vector<float> weights, size_t members) {
  if (weights.empty()) weights.assign(members, 1.f);
  ATTN_CHECK(weights.size() == members, "ensemble: ", weights.size(), " weights for ", members, " models");
  for (float weight : weights) ATTN_CHECK(weight > 0.f, "ensemble: weight ", weight, " must be above 0");
  const float total = std::accumulate(weights.begin(), weights.end(), 0.f);
  for (float& weight : weights) weight /= total;
  return weights;
}

}  // namespace

EnsembleModel::EnsembleModel(std::vector<const Seq2SeqModel*> members, std::vector<float> weights)
    : Seq2SeqModel("ensemble", shared_target_vocab(members), 0),
      members_(std::move(members)),
      weights_(normalised_weights(std::move(weights), members_.size())) {}

Tensor EnsembleModel::forward(const layers::RunContext& ctx, const data::Batch& batch) const {
  Tensor mean;
  for (size_t i = 0; i < members_.size(); ++i) {
    Tensor log_probs = ops::log_softmax(ctx.tape, members_[i]->forward(ctx, batch));
    mean = mean.defined() ? ops::add(ctx.tape, mean, log_probs, 1.f, weights_[i])
                          : ops::scale(ctx.tape, log_probs, weights_[i]);
  }
  return mean;
}

HiddenStates EnsembleModel::forward_hidden(const layers::RunContext&, const data::Batch&) const {
  ATTN_CHECK(false, "an ensemble has no single output projection: use forward() for its log-probabilities");
  return {};
}

std::unique_ptr<DecoderState> EnsembleModel::start(const layers::RunContext& ctx, const data::Batch& batch) const {
  std::vector<std::unique_ptr<DecoderState>> states;
  for (const Seq2SeqModel* member : members_) states.push_back(member->start(ctx, batch));
  return std::make_unique<EnsembleState>(std::move(states));
}

Tensor EnsembleModel::step(const layers::RunContext& ctx, DecoderState& state,
                           const std::vector<int32_t>& previous_tokens) const {
  EnsembleState& own = step_state<EnsembleState>(state, previous_tokens);
  Tensor mean;
  for (size_t i = 0; i < members_.size(); ++i) {
    Tensor log_probs = members_[i]->step(ctx, own.member(i), previous_tokens);  // (R, V)
    ops::log_softmax_rows_in_place(log_probs);
    if (!mean.defined()) mean = Tensor::zeros(log_probs.shape());
    float* out = mean.data();
    const float* in = log_probs.data();
    const float weight = weights_[i];
    for (int64_t j = 0, n = mean.numel(); j < n; ++j) out[j] += weight * in[j];
  }
  return mean;
}

}  // namespace attn::models

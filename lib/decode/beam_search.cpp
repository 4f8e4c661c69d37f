// Batched beam search. Every active sentence keeps K rows in the decoder state; each step
// scores all K x V continuations, keeps the best 2K candidates, moves those ending in eos to
// the sentence's finished list (ranked with the length penalty) and the best K others on as
// the next beam. A sentence is done when it has K finished hypotheses or reaches its length
// limit (then its live beams are finished as they are). Finished sentences leave the batch.
#include <algorithm>
#include <limits>
#include <numeric>

#include "decode/search.h"
#include "ops/log_softmax.h"

namespace attn::decode {

namespace {

constexpr float kNegativeInfinity = -std::numeric_limits<float>::infinity();

struct Beam {
  std::vector<int32_t> tokens;
  float log_prob = 0.f;
};

struct SentenceSearch {
  int64_t index = 0;        // row of the source batch
  int64_t limit = 0;        // max output tokens
  std::vector<Beam> beams;  // K live beams, in state-row order
  std::vector<Hypothesis> finished;
};

struct Candidate {
  float log_prob;
  int beam;
  int32_t token;
};

void finish(SentenceSearch& sentence, Beam beam, const SearchOptions& options) {
  Hypothesis hypothesis;
  hypothesis.score = beam.log_prob / length_penalty(int64_t(beam.tokens.size()), options.length_penalty);
  hypothesis.log_prob = beam.log_prob;
  hypothesis.tokens = std::move(beam.tokens);
  sentence.finished.push_back(std::move(hypothesis));
}

// The best 2K continuations of one sentence's K beams; rows point into log-probs (K, V).
std::vector<Candidate> best_candidates(const SentenceSearch& sentence, const float* log_probs, int64_t width, int k) {
  std::vector<Candidate> candidates;
  candidates.reserve(sentence.beams.size() * width);
  for (size_t b = 0; b < sentence.beams.size(); ++b) {
    float base = sentence.beams[b].log_prob;
    if (base == kNegativeInfinity) continue;
    const float* row = log_probs + b * width;
    for (int64_t v = 0; v < width; ++v) candidates.push_back({base + row[v], int(b), int32_t(v)});
  }
  size_t keep = std::min(candidates.size(), size_t(2 * k));
  std::partial_sort(candidates.begin(), candidates.begin() + keep, candidates.end(),
                    [](const Candidate& a, const Candidate& b) { return a.log_prob > b.log_prob; });
  candidates.resize(keep);
  return candidates;
}

// Advances one sentence by one token. Returns the origin beam of each new live beam.
std::vector<int> advance(SentenceSearch& sentence, const float* log_probs, int64_t width,
                         const SearchOptions& options) {
  int k = options.beam;
  std::vector<Beam> next;
  std::vector<int> origins;
  std::vector<Candidate> candidates = best_candidates(sentence, log_probs, width, k);
  for (size_t rank = 0; rank < candidates.size(); ++rank) {
    const Candidate& candidate = candidates[rank];
    Beam beam{sentence.beams[candidate.beam].tokens, candidate.log_prob};
    beam.tokens.push_back(candidate.token);
    if (candidate.token == options.eos_id) {
      // As fairseq: an ending counts only when it ranks among the top K, so beam 1 is greedy.
      if (int(rank) < k && int(sentence.finished.size()) < k) finish(sentence, std::move(beam), options);
    } else if (int(next.size()) < k) {
      next.push_back(std::move(beam));
      origins.push_back(candidate.beam);
    }
    if (int(next.size()) == k && int(sentence.finished.size()) >= k) break;
  }
  sentence.beams = std::move(next);
  return origins;
}

bool sentence_done(SentenceSearch& sentence, const SearchOptions& options) {
  if (int(sentence.finished.size()) >= options.beam || sentence.beams.empty()) return true;
  if (int64_t(sentence.beams.front().tokens.size()) < sentence.limit) return false;
  for (Beam& beam : sentence.beams) finish(sentence, std::move(beam), options);  // cut at the limit
  return true;
}

std::vector<Hypothesis> nbest(SentenceSearch& sentence, int n) {
  std::stable_sort(sentence.finished.begin(), sentence.finished.end(),
                   [](const Hypothesis& a, const Hypothesis& b) { return a.score > b.score; });
  if (int(sentence.finished.size()) > n) sentence.finished.resize(n);
  return std::move(sentence.finished);
}

}  // namespace

std::vector<std::vector<Hypothesis>> beam_search(const models::Seq2SeqModel& model, const data::Batch& source,
                                                 const SearchOptions& options) {
  ATTN_CHECK(options.beam >= 1 && options.nbest >= 1 && options.nbest <= options.beam, "beam search: nbest ",
             options.nbest, " must be between 1 and the beam size ", options.beam);
  Tape tape;
  NoGradScope no_grad(tape);
  layers::RunContext ctx{tape};
  std::unique_ptr<models::DecoderState> state = model.start(ctx, source);
  const int k = options.beam;

  // Every sentence starts with K rows: one real beam and K-1 that cannot be chosen yet, so the
  // first step does not fill the beam with K copies of the same hypothesis.
  std::vector<SentenceSearch> active(source.size);
  std::vector<int64_t> rows;
  for (int64_t b = 0; b < source.size; ++b) {
    active[b].index = b;
    active[b].limit = max_output_length(source.src_lengths[b], options);
    active[b].beams.assign(k, Beam{{}, kNegativeInfinity});
    active[b].beams[0].log_prob = 0.f;
    for (int i = 0; i < k; ++i) rows.push_back(b);
  }
  state->select_rows(rows);
  std::vector<int32_t> previous(rows.size(), options.bos_id);

  std::vector<std::vector<Hypothesis>> result(source.size);
  while (!active.empty()) {
    Tensor logits = model.step(ctx, *state, previous);  // (R, V), R = K x active
    ops::log_softmax_rows_in_place(logits);
    int64_t width = logits.dim(1);
    std::vector<SentenceSearch> still_active;
    std::vector<int64_t> keep_rows;
    std::vector<int32_t> next;
    for (size_t s = 0; s < active.size(); ++s) {
      SentenceSearch& sentence = active[s];
      std::vector<int> origins = advance(sentence, logits.data() + s * k * width, width, options);
      if (sentence_done(sentence, options)) {
        result[sentence.index] = nbest(sentence, options.nbest);
        continue;
      }
      for (size_t b = 0; b < sentence.beams.size(); ++b) {
        keep_rows.push_back(int64_t(s) * k + origins[b]);
        next.push_back(sentence.beams[b].tokens.back());
      }
      // Fewer than K live beams (a tiny vocabulary): pad with unselectable copies.
      while (int64_t(sentence.beams.size()) < k) {
        sentence.beams.push_back(Beam{sentence.beams.front().tokens, kNegativeInfinity});
        keep_rows.push_back(int64_t(s) * k + origins[0]);
        next.push_back(sentence.beams.front().tokens.back());
      }
      still_active.push_back(std::move(sentence));
    }
    if (!still_active.empty()) state->select_rows(keep_rows);
    active = std::move(still_active);
    previous = std::move(next);
  }
  return result;
}

}  // namespace attn::decode

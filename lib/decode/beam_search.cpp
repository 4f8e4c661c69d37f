// Batched beam search. Every active sentence keeps its live beams (1 at the first step, then
// up to K) as rows of the decoder state, so no step computes a row that cannot be chosen. Each
// step scores all continuations of the live beams, keeps the best 2K candidates, moves those
// ending in eos to the sentence's finished list (ranked with the length penalty) and the best K
// others on as the next beams. A sentence is done when it has K finished hypotheses or reaches
// its length limit (then its live beams are finished as they are). Finished sentences leave the
// batch.
#include <algorithm>
#include <limits>
#include <numeric>

#include "decode/search.h"
#include "ops/log_softmax.h"

namespace attn::decode {

namespace {

struct Beam {
  std::vector<int32_t> tokens;
  float log_prob = 0.f;
};

struct SentenceSearch {
  int64_t index = 0;        // row of the source batch
  int64_t limit = 0;        // max output tokens
  std::vector<Beam> beams;  // 1 to K live beams, in state-row order
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

// The best 2K continuations of one sentence's live beams, best first; rows point into
// log-probs (beams, V). One pass over the K x V scores with a running threshold: almost every score falls
// below the 2K-th best so far and costs one comparison, where sorting K x V candidates cost
// most of a beam step. Ties keep the earlier (beam, token).
std::vector<Candidate> best_candidates(const SentenceSearch& sentence, const float* log_probs, int64_t width, int k) {
  const size_t keep = size_t(2 * k);
  std::vector<Candidate> best;
  best.reserve(keep + 1);
  float threshold = -std::numeric_limits<float>::infinity();  // the score to beat once `best` is full
  for (size_t b = 0; b < sentence.beams.size(); ++b) {
    float base = sentence.beams[b].log_prob;
    const float* row = log_probs + b * width;
    for (int64_t v = 0; v < width; ++v) {
      float score = base + row[v];
      if (best.size() == keep && !(score > threshold)) continue;
      Candidate candidate{score, int(b), int32_t(v)};
      auto position = std::upper_bound(best.begin(), best.end(), candidate,
                                       [](const Candidate& a, const Candidate& c) { return a.log_prob > c.log_prob; });
      best.insert(position, candidate);
      if (best.size() > keep) best.pop_back();
      if (best.size() == keep) threshold = best.back().log_prob;
    }
  }
  return best;
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

  // Every sentence starts with one beam (its source row once): K copies of it would only
  // fill the first step's candidates with K equal continuations.
  std::vector<SentenceSearch> active(source.size);
  for (int64_t b = 0; b < source.size; ++b) {
    active[b].index = b;
    active[b].limit = max_output_length(source.src_lengths[b], options);
    active[b].beams.push_back(Beam{{}, 0.f});
  }
  std::vector<int32_t> previous(source.size, options.bos_id);

  std::vector<std::vector<Hypothesis>> result(source.size);
  std::vector<SentenceSearch> still_active;
  std::vector<int64_t> keep_rows;
  std::vector<int32_t> next;
  while (!active.empty()) {
    Tensor logits = model.step(ctx, *state, previous);  // (R, V), R = live beams of all sentences
    ops::log_softmax_rows_in_place(logits);
    int64_t width = logits.dim(1);
    still_active.clear();
    keep_rows.clear();
    next.clear();
    int64_t first_row = 0;  // of the sentence in `logits`
    for (SentenceSearch& sentence : active) {
      int64_t rows = int64_t(sentence.beams.size());
      std::vector<int> origins = advance(sentence, logits.data() + first_row * width, width, options);
      if (sentence_done(sentence, options)) {
        result[sentence.index] = nbest(sentence, options.nbest);
      } else {
        for (size_t b = 0; b < sentence.beams.size(); ++b) {
          keep_rows.push_back(first_row + origins[b]);
          next.push_back(sentence.beams[b].tokens.back());
        }
        still_active.push_back(std::move(sentence));
      }
      first_row += rows;
    }
    if (!still_active.empty()) state->select_rows(keep_rows);
    std::swap(active, still_active);
    std::swap(previous, next);
  }
  return result;
}

}  // namespace attn::decode

// Batched beam search. Every active sentence keeps its live beams (1 at the first step, then
// up to K) as rows of the decoder state, so no step computes a row that cannot be chosen. Each
// step scores all continuations of the live beams, keeps the best 2K candidates, moves those
// ending in eos to the sentence's finished list (ranked with the length penalty) and the best K
// others on as the next beams. A sentence is done when it reaches its length limit (then its
// live beams are finished as they are) or when its search is decided:
//   - with a length penalty, at K finished hypotheses (fairseq's rule, Marian's too: a longer
//     hypothesis may still rank first, so the search stops at a count);
//   - without one, when its n best finished hypotheses score at least its best live beam: a
//     score is then a sum of log-probabilities, which only falls as a hypothesis grows, so no
//     live beam can overtake them. That is exact, and earlier than K finished on most sentences
//     (CTranslate2 stops there too, when its best beam ends); it also goes on past K finished
//     while a live beam could still win.
// Finished sentences leave the batch. The step's logits processors (decode/logits_processor.h)
// see each live beam's logits before their log-sum-exp, and what they forbid is set before its
// continuations are ranked. A sentence with a prefix keeps its one beam and extends it by the
// prefix's tokens until the prefix ends: its beams diverge after it.
#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>

#include "core/parallel.h"
#include "decode/logits_processor.h"
#include "decode/search.h"
#include "ops/log_softmax.h"

namespace attn::decode {

namespace {

struct Beam {
  std::vector<int32_t> tokens;
  float log_prob = 0.f;
};

struct SentenceSearch {
  int64_t index = 0;                             // row of the source batch
  int64_t limit = 0;                             // max output tokens
  const std::vector<int32_t>* prefix = nullptr;  // the tokens its output starts with
  std::vector<Beam> beams;                       // 1 to K live beams, in state-row order
  std::vector<Hypothesis> finished;
};

void finish(SentenceSearch& sentence, Beam beam, const SearchOptions& options) {
  Hypothesis hypothesis;
  hypothesis.score = beam.log_prob / length_penalty(int64_t(beam.tokens.size()), options.length_penalty);
  hypothesis.log_prob = beam.log_prob;
  hypothesis.tokens = std::move(beam.tokens);
  sentence.finished.push_back(std::move(hypothesis));
}

// Whether the sentence's next token is its prefix's: then it has one live beam.
bool forced(const SentenceSearch& sentence) { return sentence.beams.front().tokens.size() < sentence.prefix->size(); }

// Extends a forced sentence's beam by its prefix's next token, scored as best_continuations
// scores it. Returns the origin of the one new live beam.
std::vector<int> force_prefix_token(SentenceSearch& sentence, const StepScores& scores) {
  Beam& beam = sentence.beams.front();
  const int32_t token = (*sentence.prefix)[beam.tokens.size()];
  beam.log_prob = beam.log_prob + (scores.logits[token] - scores.log_sum[0]);
  beam.tokens.push_back(token);
  return {0};
}

// Whether the sentence's search stops when its hypotheses are decided, not at K finished (the
// header): without a length penalty.
bool stops_when_decided(const SearchOptions& options) { return options.length_penalty == 0.f; }

// Whether a finished hypothesis is kept: all of them when the search stops when decided (a
// later one may rank first), else the first K.
bool keeps_finished(const SentenceSearch& sentence, const SearchOptions& options) {
  return stops_when_decided(options) || int(sentence.finished.size()) < options.beam;
}

// Advances one sentence by one token on its rows of scores (live beams, width). Returns the
// origin beam of each new live beam, which are ranked best first.
std::vector<int> advance(SentenceSearch& sentence, const StepScores& scores, const SearchOptions& options) {
  int k = options.beam;
  std::vector<Beam> next;
  std::vector<int> origins;
  std::vector<float> beam_log_probs;
  for (const Beam& beam : sentence.beams) beam_log_probs.push_back(beam.log_prob);
  std::vector<Continuation> candidates = best_continuations(scores, beam_log_probs, size_t(2 * k));
  for (size_t rank = 0; rank < candidates.size(); ++rank) {
    const Continuation& candidate = candidates[rank];
    if (candidate.log_prob == kForbiddenLogProb) break;  // best first: the rest are forbidden too
    Beam beam{sentence.beams[candidate.beam].tokens, candidate.log_prob};
    beam.tokens.push_back(candidate.token);
    if (candidate.token == options.eos_id) {
      // As fairseq: an ending counts only when it ranks among the top K, so beam 1 is greedy.
      if (int(rank) < k && keeps_finished(sentence, options)) finish(sentence, std::move(beam), options);
    } else {
      next.push_back(std::move(beam));
      origins.push_back(candidate.beam);
    }
    if (int(next.size()) == k) break;  // the candidates left rank K or lower: no ending counts
  }
  if (next.empty())  // every continuation forbidden: the live beams end where they are
    for (Beam& beam : sentence.beams)
      if (keeps_finished(sentence, options)) finish(sentence, std::move(beam), options);
  sentence.beams = std::move(next);
  return origins;
}

// Whether the n best finished hypotheses score at least the best live beam (beams[0]), which
// then, its score only falling, can overtake none of them.
bool decided(const SentenceSearch& sentence, const SearchOptions& options) {
  const size_t n = size_t(options.nbest);
  if (sentence.finished.size() < n) return false;
  std::vector<float> scores;
  for (const Hypothesis& hypothesis : sentence.finished) scores.push_back(hypothesis.score);
  std::nth_element(scores.begin(), scores.begin() + (n - 1), scores.end(), std::greater<float>());
  return sentence.beams.front().log_prob <= scores[n - 1];
}

bool sentence_done(SentenceSearch& sentence, const SearchOptions& options) {
  if (sentence.beams.empty()) return true;
  if (stops_when_decided(options) ? decided(sentence, options) : int(sentence.finished.size()) >= options.beam)
    return true;
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

// The first row of each sentence in the step's log-probs (R, V): its live beams are consecutive.
std::vector<int64_t> first_rows(const std::vector<SentenceSearch>& active) {
  std::vector<int64_t> first(active.size(), 0);
  for (size_t i = 1; i < active.size(); ++i) first[i] = first[i - 1] + int64_t(active[i - 1].beams.size());
  return first;
}

// What one step did to a sentence: the origin row (within the sentence) of each new live beam.
struct Advanced {
  std::vector<int> origins;
  bool done = false;
};

// The processors on every live beam's logits (R, V), before their log-sum-exp.
void process_beams(const std::vector<SentenceSearch>& active, Tensor& logits, const std::vector<int64_t>& first_row,
                   LogitsProcessors& processors) {
  const int64_t count = int64_t(active.size()), width = logits.dim(1);
  processors.start_step(logits.dim(0));
  // A sentence's work: the processors walk each live beam's tokens (an n-gram check compares a
  // few per position, the penalty sorts them).
  const int64_t tokens = int64_t(active.front().beams.front().tokens.size()) + 1;
  parallel_for(count, logits.dim(0) / count * tokens * 8, [&](int64_t first, int64_t last) {
    for (int64_t i = first; i < last; ++i)
      for (size_t b = 0; b < active[i].beams.size(); ++b) {
        const int64_t row = first_row[i] + int64_t(b);
        processors.process(row, logits.data() + row * width, width, active[i].beams[b].tokens);
      }
  });
}

// The work of advancing a sentence: per live beam, a bound test per chunk of kScanChunk tokens
// and a scan of the few chunks whose tokens can enter the best 2K.
int64_t advance_work(int64_t beams, int64_t width) {
  return beams * ((width + kScanChunk - 1) / kScanChunk + 4 * kScanChunk);
}

// Advances every active sentence by one token on its rows of logits (R, V), which the
// processors may change; a sentence that is done puts its n-best into `result`. Sentences are
// independent, so they run in parallel.
std::vector<Advanced> advance_all(std::vector<SentenceSearch>& active, Tensor& logits,
                                  const std::vector<int64_t>& first_row, const SearchOptions& options,
                                  LogitsProcessors& processors, std::vector<std::vector<Hypothesis>>& result) {
  const int64_t count = int64_t(active.size()), width = logits.dim(1);
  if (!processors.empty()) process_beams(active, logits, first_row, processors);
  const ops::RowLogSumExp sums = ops::log_sum_exp_rows(logits, kScanChunk);
  std::vector<Advanced> advanced(static_cast<size_t>(count));
  parallel_for(count, advance_work(logits.dim(0) / count, width), [&](int64_t first, int64_t last) {
    for (int64_t i = first; i < last; ++i) {
      SentenceSearch& sentence = active[i];
      const int64_t row = first_row[i];
      float* rows = logits.data() + row * width;
      // Forbidden after the log-sum-exp, a logit of -inf is a log-probability of -inf, the other
      // tokens keep theirs, and the chunk maxima stay upper bounds. A forced step forbids nothing.
      const bool forcing = forced(sentence);
      if (!processors.empty() && !forcing)
        for (size_t b = 0; b < sentence.beams.size(); ++b)
          processors.forbid(row + int64_t(b), rows + int64_t(b) * width);
      const StepScores scores{rows, width, sums.log_sum.data() + row, sums.chunk_max.data() + row * sums.chunks};
      advanced[i].origins = forcing ? force_prefix_token(sentence, scores) : advance(sentence, scores, options);
      advanced[i].done = sentence_done(sentence, options);
      if (advanced[i].done) result[sentence.index] = nbest(sentence, options.nbest);
    }
  });
  return advanced;
}

}  // namespace

std::vector<Continuation> best_continuations(const StepScores& scores, const std::vector<float>& beam_log_probs,
                                             size_t count) {
  std::vector<Continuation> best;
  best.reserve(count + 1);
  float threshold = -std::numeric_limits<float>::infinity();  // the score to beat once `best` is full
  auto by_score = [](const Continuation& a, const Continuation& c) { return a.log_prob > c.log_prob; };
  const int64_t width = scores.width, chunks = (width + kScanChunk - 1) / kScanChunk;
  for (size_t b = 0; b < beam_log_probs.size(); ++b) {
    const float base = beam_log_probs[b], log_sum = scores.log_sum[b];
    const float* row = scores.logits + int64_t(b) * width;
    const float* chunk_max = scores.chunk_max + int64_t(b) * chunks;
    for (int64_t c = 0; c < chunks; ++c) {
      // Rounding is monotonic: no score of the chunk beats the threshold if its bound does not.
      if (best.size() == count && !(base + (chunk_max[c] - log_sum) > threshold)) continue;
      for (int64_t v = c * kScanChunk; v < std::min(width, (c + 1) * kScanChunk); ++v) {
        const float score = base + (row[v] - log_sum);  // the log-prob log_softmax would write, plus the beam's
        if (best.size() == count && !(score > threshold)) continue;
        Continuation candidate{score, int(b), int32_t(v)};
        best.insert(std::upper_bound(best.begin(), best.end(), candidate, by_score), candidate);
        if (best.size() > count) best.pop_back();
        if (best.size() == count) threshold = best.back().log_prob;
      }
    }
  }
  return best;
}

std::vector<std::vector<Hypothesis>> beam_search(const models::Seq2SeqModel& model, const data::Batch& source,
                                                 const SearchOptions& options, const OutputPrefixes& prefixes_asked) {
  ATTN_CHECK(options.beam >= 1 && options.nbest >= 1 && options.nbest <= options.beam, "beam search: nbest ",
             options.nbest, " must be between 1 and the beam size ", options.beam);
  Tape tape;
  NoGradScope no_grad(tape);
  layers::RunContext ctx{tape, false, nullptr, nullptr, options.precision};
  std::unique_ptr<models::DecoderState> state = model.start(ctx, source);

  // Every sentence starts with one beam (its source row once): K copies of it would only
  // fill the first step's candidates with K equal continuations.
  const OutputPrefixes prefixes = output_prefixes(options, prefixes_asked, source.size, model.target_vocab_size());
  std::vector<SentenceSearch> active(source.size);
  for (int64_t b = 0; b < source.size; ++b) {
    active[b].index = b;
    active[b].limit = max_output_length(source.src_lengths[b], options);
    active[b].prefix = &prefixes[size_t(b)];
    active[b].beams.push_back(Beam{{}, 0.f});
  }
  std::vector<int32_t> previous(source.size, options.bos_id);
  LogitsProcessors processors(options);

  std::vector<std::vector<Hypothesis>> result(source.size);
  std::vector<SentenceSearch> still_active;
  std::vector<int64_t> keep_rows;
  std::vector<int32_t> next;
  while (!active.empty()) {
    end_search_step();  // the encoder's or the previous step's temporaries are freed by now
    Tensor logits = model.step(ctx, *state, previous);  // (R, V), R = live beams of all sentences
    std::vector<int64_t> first_row = first_rows(active);
    std::vector<Advanced> advanced = advance_all(active, logits, first_row, options, processors, result);
    still_active.clear();
    keep_rows.clear();
    next.clear();
    for (size_t i = 0; i < active.size(); ++i) {
      if (advanced[i].done) continue;
      SentenceSearch& sentence = active[i];
      for (size_t b = 0; b < sentence.beams.size(); ++b) {
        keep_rows.push_back(first_row[i] + advanced[i].origins[b]);
        next.push_back(sentence.beams[b].tokens.back());
      }
      still_active.push_back(std::move(sentence));
    }
    if (!still_active.empty()) state->select_rows(keep_rows);
    std::swap(active, still_active);
    std::swap(previous, next);
  }
  return result;
}

}  // namespace attn::decode

#pragma once
// IBM Model 2 with fast_align's diagonal reparameterisation (Dyer, Chahuneau and Smith 2013),
// one direction: each word f_i of the generated side (length m) is generated from one word e_j
// of the given side (length n), or from the null word, with
//   p(a_i = null)    = p0
//   p(a_i = j)       = (1 - p0) exp(lambda h(i, j)) / Z_i,   h(i, j) = -| (i+1)/m - (j+1)/n |
//   p(f_i | a_i = j) = t(f_i | e_j)            (t(f_i | null) for the null word)
// where Z_i sums exp(lambda h(i, j)) over j, so links near the diagonal are preferred with a
// tension lambda. EM: the E-step sums posteriors q_ij of every pair into expected counts; the
// M-step sets t to the normalised counts and lambda by Newton's method on the expected
// log-likelihood (concave in lambda: the gradient is the empirical mean of h over aligned
// mass minus the prior's mean, the Hessian minus the prior's variance). p0 stays fixed.
//
// t has entries only for word pairs that co-occur in some sentence pair (CooccurrenceTable);
// counts are summed in the order of the pairs, whatever the number of threads, so results are
// the same bit for bit on any thread count.
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "align/links.h"

namespace attn::align {

// The (given word, generated word) pairs that co-occur, as rows of sorted columns.
class CooccurrenceTable {
 public:
  CooccurrenceTable() = default;
  // `keys`: sorted distinct (given << 32 | generated); `rows`: the given side's vocabulary size.
  CooccurrenceTable(const std::vector<uint64_t>& keys, int32_t rows);
  // The entry of (given, generated), or -1 when they never co-occur.
  int64_t find(int32_t given, int32_t generated) const;
  int64_t size() const { return int64_t(columns_.size()); }
  int32_t rows() const { return int32_t(offsets_.size()) - 1; }
  // Entries [begin(row), begin(row + 1)) belong to row.
  int64_t begin(int32_t row) const { return offsets_[row]; }
  // The same pairs with the sides swapped (`columns`: the generated side's vocabulary size).
  CooccurrenceTable transposed(int32_t columns) const;

 private:
  std::vector<int64_t> offsets_;  // (rows + 1)
  std::vector<int32_t> columns_;  // (entries)
};

struct DiagonalModelOptions {
  double null_probability = 0.08;  // p0 (fast_align's default)
  double initial_tension = 4.0;    // lambda before the first M-step (fast_align's default)
  bool optimize_tension = true;
};

struct IterationStats {
  double log_likelihood = 0;  // sum over generated words of log p(f_i | e), natural log
  int64_t words = 0;          // generated words seen
  double tension = 0;         // lambda after the M-step
};

class DiagonalModel {
 public:
  // t starts uniform over the generated vocabulary.
  DiagonalModel(CooccurrenceTable table, int32_t generated_vocabulary, DiagonalModelOptions options);

  // E-step over one chunk of sentence pairs, (given ids, generated ids) each: posteriors in
  // parallel (OpenMP), their sums added in pair order.
  void expect(const std::vector<std::pair<const std::vector<int32_t>*, const std::vector<int32_t>*>>& chunk);
  // M-step: t and lambda from the counts of the iteration's E-steps, which are then cleared.
  IterationStats maximize();

  // The most probable alignment of each generated word (none when the null word wins), as
  // (given position, generated position) links ordered by the generated position.
  Links viterbi(const std::vector<int32_t>& given, const std::vector<int32_t>& generated) const;
  double tension() const { return tension_; }

 private:
  struct SentenceCounts;
  SentenceCounts posteriors(const std::vector<int32_t>& given, const std::vector<int32_t>& generated) const;
  // Prior weights p(a_i = j) for j < n, given m, n, i and lambda: (1 - p0) exp(lambda h) / Z.
  void diagonal_prior(int64_t i, int64_t m, int64_t n, std::vector<double>& prior) const;
  double translation(int32_t given, int32_t generated, int64_t* entry) const;
  void optimize_tension();

  CooccurrenceTable table_;
  DiagonalModelOptions options_;
  double tension_;
  std::vector<float> t_;        // t(f | e) per table entry
  std::vector<float> null_t_;   // t(f | null) per generated word
  std::vector<double> counts_;  // expected counts per table entry
  std::vector<double> null_counts_;
  // Tension statistics: sum of q_ij h(i, j), and per sentence shape (m, n) the aligned mass
  // sum_j q_ij of each generated position i, summed over the sentences of that shape.
  double feature_ = 0;
  std::map<std::pair<int64_t, int64_t>, std::vector<double>> aligned_mass_;
  IterationStats stats_;
};

}  // namespace attn::align

#include "align/diagonal_model.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"

namespace attn::align {

namespace {

double feature(int64_t i, int64_t m, int64_t j, int64_t n) {
  return -std::fabs(double(i + 1) / double(m) - double(j + 1) / double(n));
}

// Mean and variance of h(i, .) under weights exp(lambda h(i, j)) over j < n.
std::pair<double, double> prior_moments(int64_t i, int64_t m, int64_t n, double lambda) {
  double z = 0, first = 0, second = 0;
  for (int64_t j = 0; j < n; ++j) {
    const double h = feature(i, m, j, n), w = std::exp(lambda * h);
    z += w;
    first += w * h;
    second += w * h * h;
  }
  const double mean = first / z;
  return {mean, std::max(0.0, second / z - mean * mean)};
}

constexpr double kMinTension = 0.0, kMaxTension = 100.0;
constexpr int kNewtonSteps = 10;

}  // namespace

CooccurrenceTable::CooccurrenceTable(const std::vector<uint64_t>& keys, int32_t rows) : offsets_(size_t(rows) + 1, 0) {
  columns_.reserve(keys.size());
  for (uint64_t key : keys) {
    const auto row = int32_t(key >> 32);
    ATTN_CHECK(row >= 0 && row < rows, "co-occurrence row ", row, " outside ", rows, " rows");
    ++offsets_[size_t(row) + 1];
    columns_.push_back(int32_t(key & 0xffffffffu));
  }
  for (size_t r = 1; r < offsets_.size(); ++r) offsets_[r] += offsets_[r - 1];
}

int64_t CooccurrenceTable::find(int32_t given, int32_t generated) const {
  if (given < 0 || given >= rows()) return -1;
  const auto first = columns_.begin() + offsets_[given], last = columns_.begin() + offsets_[given + 1];
  const auto found = std::lower_bound(first, last, generated);
  return found != last && *found == generated ? found - columns_.begin() : -1;
}

CooccurrenceTable CooccurrenceTable::transposed(int32_t columns) const {
  std::vector<uint64_t> keys;
  keys.reserve(columns_.size());
  for (int32_t row = 0; row < rows(); ++row)
    for (int64_t e = offsets_[row]; e < offsets_[row + 1]; ++e)
      keys.push_back(uint64_t(uint32_t(columns_[e])) << 32 | uint32_t(row));
  std::sort(keys.begin(), keys.end());
  return CooccurrenceTable(keys, columns);
}

struct DiagonalModel::SentenceCounts {
  std::vector<std::pair<int64_t, double>> links;  // (table entry, q_ij)
  std::vector<std::pair<int32_t, double>> nulls;  // (generated word, q_i,null)
  std::vector<double> aligned;                    // (m) sum_j q_ij
  double feature = 0, log_likelihood = 0;
};

DiagonalModel::DiagonalModel(CooccurrenceTable table, int32_t generated_vocabulary, DiagonalModelOptions options)
    : table_(std::move(table)),
      options_(options),
      tension_(options.initial_tension),
      t_(size_t(table_.size()), 1.f / float(std::max(1, generated_vocabulary))),
      null_t_(size_t(generated_vocabulary), 1.f / float(std::max(1, generated_vocabulary))),
      counts_(size_t(table_.size()), 0.0),
      null_counts_(size_t(generated_vocabulary), 0.0) {
  ATTN_CHECK(options.null_probability > 0 && options.null_probability < 1, "null probability ",
             options.null_probability, " must be between 0 and 1");
}

void DiagonalModel::diagonal_prior(int64_t i, int64_t m, int64_t n, std::vector<double>& prior) const {
  prior.resize(size_t(n));
  double z = 0;
  for (int64_t j = 0; j < n; ++j) z += prior[j] = std::exp(tension_ * feature(i, m, j, n));
  for (double& p : prior) p *= (1.0 - options_.null_probability) / z;
}

double DiagonalModel::translation(int32_t given, int32_t generated, int64_t* entry) const {
  *entry = table_.find(given, generated);
  return *entry >= 0 ? double(t_[*entry]) : 0.0;  // a pair never seen in training has no mass
}

DiagonalModel::SentenceCounts DiagonalModel::posteriors(const std::vector<int32_t>& given,
                                                        const std::vector<int32_t>& generated) const {
  SentenceCounts counts;
  const int64_t n = int64_t(given.size()), m = int64_t(generated.size());
  counts.aligned.assign(size_t(m), 0.0);
  std::vector<double> prior, weight(static_cast<size_t>(n));
  std::vector<int64_t> entry(static_cast<size_t>(n));
  for (int64_t i = 0; i < m; ++i) {
    const int32_t f = generated[i];
    diagonal_prior(i, m, n, prior);
    const double null_weight = options_.null_probability * double(null_t_[f]);
    double total = null_weight;
    for (int64_t j = 0; j < n; ++j) total += weight[j] = prior[j] * translation(given[j], f, &entry[j]);
    if (!(total > 0)) continue;  // nothing generates f (only outside the training data)
    counts.log_likelihood += std::log(total);
    counts.nulls.push_back({f, null_weight / total});
    for (int64_t j = 0; j < n; ++j) {
      if (entry[j] < 0) continue;
      const double q = weight[j] / total;
      counts.links.push_back({entry[j], q});
      counts.aligned[i] += q;
      counts.feature += q * feature(i, m, j, n);
    }
  }
  return counts;
}

void DiagonalModel::expect(
    const std::vector<std::pair<const std::vector<int32_t>*, const std::vector<int32_t>*>>& chunk) {
  std::vector<SentenceCounts> sentences(chunk.size());
  const auto count = int64_t(chunk.size());
#pragma omp parallel for schedule(dynamic, 16)
  for (int64_t s = 0; s < count; ++s)
    if (!chunk[s].first->empty() && !chunk[s].second->empty())
      sentences[s] = posteriors(*chunk[s].first, *chunk[s].second);
  for (int64_t s = 0; s < count; ++s) {  // in pair order: the same sums on any thread count
    const SentenceCounts& sentence = sentences[s];
    if (sentence.aligned.empty()) continue;
    for (const auto& [entry, q] : sentence.links) counts_[entry] += q;
    for (const auto& [word, q] : sentence.nulls) null_counts_[word] += q;
    std::vector<double>& mass = aligned_mass_[{int64_t(chunk[s].second->size()), int64_t(chunk[s].first->size())}];
    mass.resize(sentence.aligned.size(), 0.0);
    for (size_t i = 0; i < mass.size(); ++i) mass[i] += sentence.aligned[i];
    feature_ += sentence.feature;
    stats_.log_likelihood += sentence.log_likelihood;
    stats_.words += int64_t(sentence.aligned.size());
  }
}

void DiagonalModel::optimize_tension() {
  for (int step = 0; step < kNewtonSteps; ++step) {
    double gradient = feature_, hessian = 0;
    for (const auto& [shape, mass] : aligned_mass_)
      for (int64_t i = 0; i < int64_t(mass.size()); ++i) {
        const auto [mean, variance] = prior_moments(i, shape.first, shape.second, tension_);
        gradient -= mass[i] * mean;
        hessian -= mass[i] * variance;
      }
    if (!(hessian < 0)) break;  // flat: every sentence of one word per side
    const double next = std::clamp(tension_ - gradient / hessian, kMinTension, kMaxTension);
    const bool converged = std::fabs(next - tension_) < 1e-6;
    tension_ = next;
    if (converged) break;
  }
}

IterationStats DiagonalModel::maximize() {
  for (int32_t row = 0; row < table_.rows(); ++row) {
    double total = 0;
    for (int64_t e = table_.begin(row); e < table_.begin(row + 1); ++e) total += counts_[e];
    if (total > 0)
      for (int64_t e = table_.begin(row); e < table_.begin(row + 1); ++e) t_[e] = float(counts_[e] / total);
  }
  double null_total = 0;
  for (double c : null_counts_) null_total += c;
  if (null_total > 0)
    for (size_t f = 0; f < null_t_.size(); ++f) null_t_[f] = float(null_counts_[f] / null_total);
  if (options_.optimize_tension) optimize_tension();
  IterationStats stats = stats_;
  stats.tension = tension_;
  std::fill(counts_.begin(), counts_.end(), 0.0);
  std::fill(null_counts_.begin(), null_counts_.end(), 0.0);
  aligned_mass_.clear();
  feature_ = 0;
  stats_ = {};
  return stats;
}

Links DiagonalModel::viterbi(const std::vector<int32_t>& given, const std::vector<int32_t>& generated) const {
  const int64_t n = int64_t(given.size()), m = int64_t(generated.size());
  Links links;
  std::vector<double> prior;
  int64_t entry = 0;
  for (int64_t i = 0; i < m && n > 0; ++i) {
    if (generated[i] < 0) continue;  // a word the model never saw: no link
    diagonal_prior(i, m, n, prior);
    double best = options_.null_probability * double(null_t_[generated[i]]);
    int64_t best_j = -1;
    for (int64_t j = 0; j < n; ++j) {
      const double w = prior[j] * translation(given[j], generated[i], &entry);
      if (w > best) best = w, best_j = j;
    }
    if (best_j >= 0) links.push_back({best_j, i});
  }
  return links;
}

}  // namespace attn::align

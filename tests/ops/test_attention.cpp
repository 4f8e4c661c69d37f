#include <cmath>
#include <sstream>

#include <catch2/catch.hpp>

#include "bf16_support.h"
#include "grad_check.h"
#include "ops/attention.h"
#include "ops/gemm.h"

using namespace attn;
using attn::testing::check_gradients;
using attn::testing::random_tensor;

namespace {

struct Problem {
  int64_t batch, heads, queries, keys, head_width;  // B, H, Tq, Tk, Dh
  bool causal;
  std::vector<int32_t> key_lengths;

  ops::AttentionOptions options() const {
    ops::AttentionOptions o;
    o.mask.causal = causal;
    o.mask.key_lengths = key_lengths;
    return o;
  }
  // Keys j < visible(b, i) are seen by query i of batch row b.
  int64_t visible(int64_t b, int64_t i) const {
    int64_t limit = key_lengths.empty() ? keys : key_lengths[b];
    return causal ? std::min(limit, i + keys - queries + 1) : limit;
  }
};

struct Inputs {
  Tensor q, k, v;
};

Inputs make_inputs(const Problem& p, uint64_t seed, bool requires_grad = false) {
  return {random_tensor({p.batch, p.heads, p.queries, p.head_width}, seed, 1.f, requires_grad),
          random_tensor({p.batch, p.heads, p.keys, p.head_width}, seed + 1, 1.f, requires_grad),
          random_tensor({p.batch, p.heads, p.keys, p.head_width}, seed + 2, 1.f, requires_grad)};
}

// Naive attention in double: softmax over visible keys only (hidden keys weigh 0).
void reference(const Problem& p, const Inputs& in, std::vector<double>& output, std::vector<double>& weights) {
  auto q = in.q.to_vector(), k = in.k.to_vector(), v = in.v.to_vector();
  output.assign(p.batch * p.heads * p.queries * p.head_width, 0.0);
  weights.assign(p.batch * p.heads * p.queries * p.keys, 0.0);
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.heads; ++h)
      for (int64_t i = 0; i < p.queries; ++i) {
        int64_t bh = b * p.heads + h, visible = p.visible(b, i);
        std::vector<double> s(visible);
        double max = -1e300, sum = 0;
        for (int64_t j = 0; j < visible; ++j) {
          double dot = 0;
          for (int64_t e = 0; e < p.head_width; ++e)
            dot += double(q[(bh * p.queries + i) * p.head_width + e]) * k[(bh * p.keys + j) * p.head_width + e];
          s[j] = dot / std::sqrt(double(p.head_width));
          max = std::max(max, s[j]);
        }
        for (int64_t j = 0; j < visible; ++j) sum += s[j] = std::exp(s[j] - max);
        for (int64_t j = 0; j < visible; ++j) {
          double w = s[j] / sum;
          weights[(bh * p.queries + i) * p.keys + j] = w;
          for (int64_t e = 0; e < p.head_width; ++e)
            output[(bh * p.queries + i) * p.head_width + e] += w * v[(bh * p.keys + j) * p.head_width + e];
        }
      }
}

const std::vector<Problem>& problems() {
  static const std::vector<Problem> all{
      {2, 2, 3, 5, 4, false, {5, 3}},  // cross-attention shape, padded keys
      {2, 2, 4, 4, 4, true, {4, 2}},   // causal self-attention with padding
      {1, 2, 2, 5, 4, true, {}},       // causal, Tq < Tk (decoding with a cache)
      {2, 1, 3, 4, 8, false, {}},      // nothing hidden
  };
  return all;
}

std::string describe(const Problem& p) {
  std::ostringstream text;
  text << "B" << p.batch << " H" << p.heads << " Tq" << p.queries << " Tk" << p.keys << " causal=" << p.causal
       << " lengths=" << p.key_lengths.size();
  return text.str();
}

}  // namespace

TEST_CASE("attention equals a naive double-precision reference", "[ops][attention]") {
  for (const Problem& p : problems()) {
    DYNAMIC_SECTION(describe(p)) {
      Tape tape;
      Inputs in = make_inputs(p, 10);
      auto result = ops::attention(tape, in.q, in.k, in.v, p.options());
      REQUIRE(result.output.shape() == in.q.shape());
      REQUIRE(result.weights.shape() == Shape{p.batch, p.heads, p.queries, p.keys});
      std::vector<double> output, weights;
      reference(p, in, output, weights);
      auto actual_output = result.output.to_vector();
      auto actual_weights = result.weights.to_vector();
      for (size_t i = 0; i < output.size(); ++i) CHECK(actual_output[i] == Approx(output[i]).margin(1e-5));
      for (size_t i = 0; i < weights.size(); ++i) CHECK(actual_weights[i] == Approx(weights[i]).margin(1e-6));
    }
  }
}

TEST_CASE("attention weights: rows sum to 1 - hidden keys get exactly 0", "[ops][attention]") {
  for (const Problem& p : problems()) {
    DYNAMIC_SECTION(describe(p)) {
      Tape tape;
      Inputs in = make_inputs(p, 20);
      auto weights = ops::attention(tape, in.q, in.k, in.v, p.options()).weights.to_vector();
      for (int64_t b = 0; b < p.batch; ++b)
        for (int64_t h = 0; h < p.heads; ++h)
          for (int64_t i = 0; i < p.queries; ++i) {
            const float* row = weights.data() + ((b * p.heads + h) * p.queries + i) * p.keys;
            double sum = 0;
            for (int64_t j = 0; j < p.keys; ++j) sum += row[j];
            CHECK(sum == Approx(1.0).margin(1e-5));
            // Past the key length, and above the (offset) causal diagonal: exactly zero.
            for (int64_t j = p.visible(b, i); j < p.keys; ++j) CHECK(row[j] == 0.f);
            for (int64_t j = 0; j < p.visible(b, i); ++j) CHECK(row[j] > 0.f);
          }
    }
  }
}

TEST_CASE("causal attention of one query over a KV cache equals the last row of full causal attention",
          "[ops][attention]") {
  Tape tape;
  const int64_t B = 2, H = 2, T = 5, Dh = 4;
  Tensor q = random_tensor({B, H, T, Dh}, 30, 1.f, false);
  Tensor k = random_tensor({B, H, T, Dh}, 31, 1.f, false);
  Tensor v = random_tensor({B, H, T, Dh}, 32, 1.f, false);
  ops::AttentionOptions causal;
  causal.mask.causal = true;
  auto full = ops::attention(tape, q, k, v, causal);

  auto q_all = q.to_vector();
  std::vector<float> q_last;
  for (int64_t bh = 0; bh < B * H; ++bh)
    q_last.insert(q_last.end(), q_all.begin() + (bh * T + T - 1) * Dh, q_all.begin() + (bh * T + T) * Dh);
  auto step = ops::attention(tape, Tensor::from_vector({B, H, 1, Dh}, q_last), k, v, causal);

  auto full_output = full.output.to_vector(), step_output = step.output.to_vector();
  auto full_weights = full.weights.to_vector(), step_weights = step.weights.to_vector();
  for (int64_t bh = 0; bh < B * H; ++bh) {
    for (int64_t e = 0; e < Dh; ++e)
      CHECK(step_output[bh * Dh + e] == Approx(full_output[(bh * T + T - 1) * Dh + e]).margin(1e-6));
    for (int64_t j = 0; j < T; ++j)
      CHECK(step_weights[bh * T + j] == Approx(full_weights[(bh * T + T - 1) * T + j]).margin(1e-6));
  }
}

namespace {

// x (B, H, T, Dh) in the first T positions of a (B, H, capacity, Dh) storage of `dtype` whose
// other positions are NaN: a KV cache with room to grow, whose room must never be read.
Tensor storage_with_room(const Tensor& x, int64_t capacity, DType dtype) {
  const int64_t planes = x.dim(0) * x.dim(1), steps = x.dim(2), width = x.dim(3);
  Tensor storage = Tensor::empty({x.dim(0), x.dim(1), capacity, width}, dtype);
  const std::vector<float> values = x.to_vector();
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t t = 0; t < capacity; ++t)
      for (int64_t e = 0; e < width; ++e) {
        const float value = t < steps ? values[(p * steps + t) * width + e] : std::nanf("");
        const int64_t at = (p * capacity + t) * width + e;
        if (dtype == DType::bf16) {
          storage.data_bf16()[at] = f32_to_bf16(value);
        } else {
          storage.data()[at] = value;
        }
      }
  return storage;
}

// x rounded to bf16 and back: the values a bf16 storage of x holds.
Tensor rounded_to_bf16(const Tensor& x) {
  std::vector<float> values = x.to_vector();
  for (float& value : values) value = bf16_to_f32(f32_to_bf16(value));
  return Tensor::from_vector(x.shape(), values);
}

}  // namespace

TEST_CASE("attention_step equals attention's one-query forward - over storages with room - f32 and bf16",
          "[ops][attention]") {
  const int64_t B = 3, H = 2, T = 6, Dh = 8, capacity = T + 3;
  struct Mask {
    const char* name;
    ops::AttentionMask mask;
  };
  const std::vector<Mask> masks{
      {"causal", ops::AttentionMask::causal_mask()},
      {"causal with alibi", ops::AttentionMask::causal_mask(ops::AttentionBias{{0.5f, 0.25f}})},
      {"padded keys and a row that sees none", ops::AttentionMask::padding({6, 2, 0})},
  };
  for (DType dtype : {DType::f32, DType::bf16}) {
    for (const Mask& m : masks) {
      DYNAMIC_SECTION(m.name << (dtype == DType::bf16 ? " bf16" : " f32")) {
        Tensor q = random_tensor({B, H, 1, Dh}, 80, 1.f, false), k = random_tensor({B, H, T, Dh}, 81, 1.f, false),
               v = random_tensor({B, H, T, Dh}, 82, 1.f, false);
        if (dtype == DType::bf16) q = rounded_to_bf16(q), k = rounded_to_bf16(k), v = rounded_to_bf16(v);
        Tape tape;
        ops::AttentionOptions options;
        options.mask = m.mask;
        const ops::AttentionResult expected = ops::attention(tape, q, k, v, options);  // f32 products

        const Tensor q_step = dtype == DType::bf16 ? storage_with_room(q, 1, dtype) : q;
        const ops::KeyValues kv{storage_with_room(k, capacity, dtype), storage_with_room(v, capacity, dtype), T};
        const ops::AttentionResult step = ops::attention_step(q_step, kv, m.mask);
        REQUIRE(step.output.shape() == Shape{B, H, 1, Dh});
        REQUIRE(step.weights.shape() == Shape{B, H, 1, T});
        const std::vector<float> output = step.output.to_vector(), weights = step.weights.to_vector();
        const std::vector<float> expected_output = expected.output.to_vector();
        const std::vector<float> expected_weights = expected.weights.to_vector();
        // The same f32 math summed in another order.
        for (size_t i = 0; i < output.size(); ++i) CHECK(output[i] == Approx(expected_output[i]).margin(1e-5));
        for (size_t i = 0; i < weights.size(); ++i) {
          CHECK(weights[i] == Approx(expected_weights[i]).margin(1e-6));
          CHECK((weights[i] == 0.f) == (expected_weights[i] == 0.f));  // hidden keys exactly 0 in both
        }
      }
    }
  }
}

TEST_CASE("attention_step through a row map equals attention_step on the gathered rows - bit for bit",
          "[ops][attention]") {
  const int64_t stored = 3, H = 2, T = 5, Dh = 4;
  const std::vector<int64_t> rows{2, 0, 0, 1};  // beams: row 0 of the storages serves two queries
  const int64_t R = int64_t(rows.size());
  Tensor k = random_tensor({stored, H, T, Dh}, 90, 1.f, false), v = random_tensor({stored, H, T, Dh}, 91, 1.f, false);
  Tensor q = random_tensor({R, H, 1, Dh}, 92, 1.f, false);
  auto gathered = [&](const Tensor& x) {  // (R, H, T, Dh): row r is stored row rows[r]
    Tensor result = Tensor::empty({R, H, T, Dh});
    const int64_t row_size = H * T * Dh;
    for (int64_t r = 0; r < R; ++r)
      std::copy(x.data() + rows[r] * row_size, x.data() + (rows[r] + 1) * row_size, result.data() + r * row_size);
    return result;
  };
  const ops::AttentionMask mask = ops::AttentionMask::padding({5, 3, 3, 1});  // per query row
  const ops::AttentionResult expected = ops::attention_step(q, {gathered(k), gathered(v), T}, mask);
  const ops::AttentionResult mapped = ops::attention_step(q, {k, v, T, &rows}, mask);
  CHECK(mapped.output.to_vector() == expected.output.to_vector());
  CHECK(mapped.weights.to_vector() == expected.weights.to_vector());
  const std::vector<int64_t> too_few{0, 1}, outside{0, 1, 2, 3};
  CHECK_THROWS_WITH(ops::attention_step(q, {k, v, T, &too_few}), Catch::Contains("row map of 2 rows"));
  CHECK_THROWS_WITH(ops::attention_step(q, {k, v, T, &outside}), Catch::Contains("row map entry 3"));
}

TEST_CASE("attention_step over per-step tensors and row numbers equals it over the gathered storages - bit for bit",
          "[ops][attention]") {
  const int64_t H = 2, T = 4, Dh = 4, R = 3;
  // Step t holds step_rows[t] rows; query row r reads row lineage[t][r] of step t.
  const std::vector<int64_t> step_rows{2, 3, 3, 3};
  const std::vector<std::vector<int32_t>> lineage{{0, 0, 1}, {2, 0, 0}, {1, 1, 2}, {0, 1, 2}};
  std::vector<Tensor> keys, values;
  for (int64_t t = 0; t < T; ++t) {
    keys.push_back(random_tensor({step_rows[t], H, 1, Dh}, 100 + t, 1.f, false));
    values.push_back(random_tensor({step_rows[t], H, 1, Dh}, 110 + t, 1.f, false));
  }
  std::vector<int32_t> rows;  // (T, R)
  for (const auto& step : lineage) rows.insert(rows.end(), step.begin(), step.end());
  auto gathered = [&](const std::vector<Tensor>& steps) {  // (R, H, T, Dh)
    Tensor result = Tensor::empty({R, H, T, Dh});
    for (int64_t r = 0; r < R; ++r)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t t = 0; t < T; ++t)
          std::copy_n(steps[t].data() + (lineage[t][r] * H + h) * Dh, Dh, result.data() + ((r * H + h) * T + t) * Dh);
    return result;
  };
  const Tensor q = random_tensor({R, H, 1, Dh}, 120, 1.f, false);
  const ops::AttentionMask mask = ops::AttentionMask::causal_mask(ops::AttentionBias{{0.5f, 0.25f}});
  const ops::AttentionResult expected = ops::attention_step(q, {gathered(keys), gathered(values), T}, mask);
  ops::KeyValues steps;
  steps.length = T;
  steps.step_keys = &keys;
  steps.step_values = &values;
  steps.step_rows = &rows;
  const ops::AttentionResult stepped = ops::attention_step(q, steps, mask);
  CHECK(stepped.output.to_vector() == expected.output.to_vector());
  CHECK(stepped.weights.to_vector() == expected.weights.to_vector());

  std::vector<int32_t> outside = rows;
  outside[2] = 2;  // step 0 has two rows
  steps.step_rows = &outside;
  CHECK_THROWS_WITH(ops::attention_step(q, steps, mask), Catch::Contains("row 2 of step 0"));
  const std::vector<int32_t> too_few(rows.begin(), rows.end() - 1);
  steps.step_rows = &too_few;
  CHECK_THROWS_WITH(ops::attention_step(q, steps, mask), Catch::Contains("11 row numbers"));
  steps.step_rows = &rows;
  CHECK_THROWS_WITH(ops::attention_step(Tensor::zeros({R, H, 1, Dh}, DType::bf16), steps, mask),
                    Catch::Contains("f32 over cached steps"));
  std::vector<Tensor> other_heads = keys;
  other_heads[1] = Tensor::zeros({3, H + 1, 1, Dh});
  steps.step_keys = &other_heads;
  CHECK_THROWS_WITH(ops::attention_step(q, steps, mask), Catch::Contains("step 1's keys (3, 3, 1, 4)"));
}

TEST_CASE("attention_step rejects what it cannot read - naming it", "[ops][attention]") {
  Tensor q = Tensor::zeros({1, 2, 1, 4}), k = Tensor::zeros({1, 2, 5, 4});
  CHECK_THROWS_WITH(ops::attention_step(q, {k, k, 6}), Catch::Contains("6 keys in a capacity of 5"));
  CHECK_THROWS_WITH(ops::attention_step(Tensor::zeros({1, 2, 2, 4}), {k, k, 5}), Catch::Contains("(1, 2, 2, 4)"));
  CHECK_THROWS_WITH(ops::attention_step(q, {k, Tensor::zeros({1, 2, 5, 4}, DType::bf16), 5}), Catch::Contains("BF16"));
  CHECK_THROWS_WITH(ops::attention_step(q, {k, k, 3}, ops::AttentionMask::padding({4})),
                    Catch::Contains("key length 4"));
}

TEST_CASE("attention gradients match finite differences", "[ops][attention][grad]") {
  for (const Problem& p : problems()) {
    DYNAMIC_SECTION(describe(p)) {
      Inputs in = make_inputs(p, 40, true);
      auto options = p.options();
      auto f = [options](Tape& tape, const std::vector<Tensor>& x) {
        return ops::attention(tape, x[0], x[1], x[2], options).output;
      };
      CHECK(check_gradients(f, {in.q, in.k, in.v}) == "");
    }
  }
}

TEST_CASE("attention gradients when only some inputs require them", "[ops][attention][grad]") {
  Problem p{1, 2, 3, 4, 4, false, {}};
  Inputs in = make_inputs(p, 50, true);
  in.q.set_requires_grad(false);
  auto f = [](Tape& tape, const std::vector<Tensor>& x) { return ops::attention(tape, x[0], x[1], x[2]).output; };
  CHECK(check_gradients(f, {in.q, in.k, in.v}) == "");
  in.q.set_requires_grad(true);
  in.k.set_requires_grad(false);
  in.v.set_requires_grad(false);
  CHECK(check_gradients(f, {in.q, in.k, in.v}) == "");
}

TEST_CASE("attention dropout: inverted scaling - same stream same mask - gradients match", "[ops][attention][grad]") {
  Problem p{2, 2, 3, 4, 4, true, {4, 3}};
  Inputs in = make_inputs(p, 60, true);
  auto run = [&p](Tape& tape, const std::vector<Tensor>& x, bool training) {
    Rng rng(123);  // a fresh stream per call: every evaluation drops the same weights
    auto options = p.options();
    options.dropout = 0.4f;
    options.training = training;
    options.rng = &rng;
    return ops::attention(tape, x[0], x[1], x[2], options);
  };
  Tape tape;
  auto eval = run(tape, {in.q, in.k, in.v}, false);
  auto train = run(tape, {in.q, in.k, in.v}, true);
  auto again = run(tape, {in.q, in.k, in.v}, true);
  tape.clear();
  CHECK(train.output.to_vector() == again.output.to_vector());
  CHECK(train.output.to_vector() != eval.output.to_vector());
  CHECK(train.weights.to_vector() == eval.weights.to_vector());  // weights are reported before dropout

  // Dropping with value v = 1 everywhere: each output equals the kept weights' sum / (1 - p).
  Tensor ones = Tensor::full(in.v.shape(), 1.f);
  auto sums = run(tape, {in.q, in.k, ones}, true).output.to_vector();
  tape.clear();
  bool some_dropped = false, all_scaled = true;
  for (float s : sums) {
    some_dropped = some_dropped || std::fabs(s - 1.f) > 1e-4f;
    all_scaled = all_scaled && s <= 1.f / 0.6f + 1e-4f;
  }
  CHECK(some_dropped);
  CHECK(all_scaled);

  auto f = [&run](Tape& tape, const std::vector<Tensor>& x) { return run(tape, x, true).output; };
  CHECK(check_gradients(f, {in.q, in.k, in.v}) == "");
}

TEST_CASE("attention in bf16 precision: output and gradients within bf16 rounding of f32", "[ops][attention][bf16]") {
  ATTN_SKIP_UNLESS_BF16_MATMUL();
  for (const Problem& p : problems()) {
    DYNAMIC_SECTION(describe(p)) {
      // Output and the three input gradients, for a fixed output gradient.
      auto run = [&p](Precision precision) {
        Inputs in = make_inputs(p, 70, true);
        Tape tape;
        ops::AttentionOptions options = p.options();
        options.precision = precision;
        Tensor output = ops::attention(tape, in.q, in.k, in.v, options).output;
        tape.backward(output, random_tensor(output.shape(), 74, 1.f, false));
        return std::vector<std::vector<float>>{output.to_vector(), in.q.grad().to_vector(), in.k.grad().to_vector(),
                                               in.v.grad().to_vector()};
      };
      auto f32 = run(Precision::f32), bf16 = run(Precision::bf16);
      bool differs = false;
      for (size_t t = 0; t < f32.size(); ++t) {
        float largest = 0;
        for (float x : f32[t]) largest = std::max(largest, std::fabs(x));
        // bf16 keeps 8 significant bits (relative error 2^-9 per operand); softmax and two
        // chained products give a few of those over values of order `largest`.
        for (size_t i = 0; i < f32[t].size(); ++i) {
          INFO("tensor " << t << " element " << i);
          CHECK(std::fabs(bf16[t][i] - f32[t][i]) <= 0.03f * largest + 1e-6f);
          differs = differs || bf16[t][i] != f32[t][i];
        }
      }
      CHECK(differs);  // the bf16 products really ran
    }
  }
}

TEST_CASE("attention rejects mismatched shapes naming them", "[ops][attention]") {
  Tape tape;
  Tensor q = Tensor::zeros({1, 2, 3, 4});
  Tensor k = Tensor::zeros({1, 2, 5, 4});
  Tensor v_bad = Tensor::zeros({1, 2, 5, 3});
  CHECK_THROWS_WITH(ops::attention(tape, q, k, v_bad),
                    Catch::Contains("(1, 2, 5, 3)") && Catch::Contains("(1, 2, 5, 4)"));
  ops::AttentionOptions options;
  options.mask.key_lengths = {6};
  CHECK_THROWS_WITH(ops::attention(tape, q, k, k, options), Catch::Contains("key length 6"));
  ops::AttentionOptions causal;
  causal.mask.causal = true;
  CHECK_THROWS_WITH(ops::attention(tape, k, q, q, causal), Catch::Contains("Tq <= Tk"));
}

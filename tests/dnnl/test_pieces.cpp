// The oneDNN ops that run in pieces on attn's threads (dnnl/pieces.h): a piece's primitive is
// fetched before the pieces start, every item is covered once, and an op cut into pieces gives
// what one piece gives.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <map>
#include <vector>

#include <catch2/catch.hpp>

#include "core/parallel.h"
#include "dnnl/pieces.h"
#include "grad_check.h"
#include "ops/activation.h"
#include "ops/heads.h"
#include "ops/layer_norm.h"
#include "ops/softmax.h"
#include "thread_count.h"

using namespace attn;
using attn::testing::random_tensor;
using attn::testing::ThreadCount;

namespace {

// The values an op and its backward produce: its output, then the inputs' gradients.
using Results = std::vector<std::vector<float>>;
// Makes fresh inputs (same seeds each call) and returns what the op computes from them.
using OpRun = std::function<Results()>;

Results run_with(int threads, const OpRun& op) {
  ThreadCount count(threads);
  return op();
}

double largest_difference(const Results& a, const Results& b) {
  REQUIRE(a.size() == b.size());
  double largest = 0.0;
  for (size_t i = 0; i < a.size(); ++i) {
    REQUIRE(a[i].size() == b[i].size());
    for (size_t j = 0; j < a[i].size(); ++j) largest = std::max(largest, std::fabs(double(a[i][j]) - b[i][j]));
  }
  return largest;
}

// Output and gradients of `forward` on inputs `in`, seeded with a fixed random gradient.
Results forward_and_backward(const std::vector<Tensor>& in, const std::function<Tensor(Tape&)>& forward) {
  Tape tape;
  Tensor y = forward(tape);
  tape.backward(y, random_tensor(y.shape(), 99, 1.f, false));
  Results results{y.to_vector()};
  for (const Tensor& x : in) results.push_back(x.grad().to_vector());
  return results;
}

}  // namespace

TEST_CASE("run_in_pieces fetches both piece lengths first and covers every item once", "[dnnl][pieces]") {
  ThreadCount threads(3);
  const int64_t count = 10, pieces = 4;  // pieces of 2 and 3 items
  std::map<int64_t, int64_t> fetched;    // length -> the entry made for it
  std::vector<std::atomic<int>> covered(count);
  std::atomic<int> wrong_entry{0}, fetched_in_piece{0};
  dnn::run_in_pieces(
      count, pieces,
      [&](int64_t length) -> int64_t& {
        fetched_in_piece += in_parallel_piece();
        fetched[length] = length;
        return fetched[length];
      },
      [&](const int64_t& entry, int64_t, int64_t first, int64_t last) {
        wrong_entry += entry != last - first;
        for (int64_t i = first; i < last; ++i) ++covered[size_t(i)];
      });
  CHECK(fetched.size() == 2);
  CHECK(fetched.count(2) == 1);
  CHECK(fetched.count(3) == 1);
  CHECK(fetched_in_piece == 0);
  CHECK(wrong_entry == 0);
  CHECK(std::all_of(covered.begin(), covered.end(), [](const std::atomic<int>& c) { return c == 1; }));
}

TEST_CASE("run_in_pieces with one piece runs the whole range on one entry", "[dnnl][pieces]") {
  std::vector<int64_t> lengths, ranges;
  int64_t entry = 0;
  dnn::run_in_pieces(
      7, 1,
      [&](int64_t length) -> int64_t& {
        lengths.push_back(length);
        return entry;
      },
      [&](const int64_t&, int64_t piece, int64_t first, int64_t last) {
        ranges = {piece, first, last};
      });
  CHECK(lengths == std::vector<int64_t>{7});
  CHECK(ranges == std::vector<int64_t>{0, 0, 7});
}

TEST_CASE("oneDNN ops cut into pieces give what one piece gives", "[dnnl][pieces][grad]") {
  struct Case {
    const char* name;
    int64_t count, item_work, threshold;  // the op's leading axis and its piece_count arguments
    OpRun run;
  };
  const std::vector<Case> cases{
      {"layer_norm (100 rows of 512)", 100, 512, kParallelWork,
       [] {
         Tensor x = random_tensor({4, 25, 512}, 1, 2.f), gamma = random_tensor({512}, 2),
                beta = random_tensor({512}, 3);
         return forward_and_backward({x, gamma, beta},
                                     [&](Tape& tape) { return ops::layer_norm(tape, x, gamma, beta); });
       }},
      {"gelu (20001 elements)", 20001, 4, kParallelWork,
       [] {
         Tensor x = random_tensor({20001}, 4);
         return forward_and_backward({x}, [&](Tape& tape) { return ops::gelu(tape, x); });
       }},
      {"relu (70001 elements)", 70001, 1, kParallelPass,
       [] {
         Tensor x = random_tensor({70001}, 5);
         return forward_and_backward({x}, [&](Tape& tape) { return ops::relu(tape, x); });
       }},
      {"softmax with a (B 1 1 S) mask (7 batch rows)", 7, 4 * 32 * 128, kParallelPass,
       [] {
         Tensor x = random_tensor({7, 4, 32, 128}, 6, 3.f);
         Tensor mask = random_tensor({7, 1, 1, 128}, 7, 3.f, false);
         return forward_and_backward({x}, [&](Tape& tape) { return ops::softmax(tape, x, mask); });
       }},
      {"softmax with a (1 1 T S) mask (7 batch rows)", 7, 4 * 32 * 128, kParallelPass,
       [] {
         Tensor x = random_tensor({7, 4, 32, 128}, 8, 3.f);
         Tensor mask = random_tensor({1, 1, 32, 128}, 9, 3.f, false);
         return forward_and_backward({x}, [&](Tape& tape) { return ops::softmax(tape, x, mask); });
       }},
      {"split_heads then merge_heads (7 batch rows)", 7, 40 * 256, kParallelPass,
       [] {
         Tensor x = random_tensor({7, 40, 256}, 10);
         return forward_and_backward({x}, [&](Tape& tape) {
           return ops::merge_heads(tape, ops::split_heads(tape, x, 4));  // through (7, 4, 40, 64)
         });
       }},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.name) {
      {
        ThreadCount threads(3);
        REQUIRE(piece_count(c.count, c.item_work, c.threshold) > 1);  // the case is cut
      }
      const Results whole = run_with(1, c.run);
      const Results pieces = run_with(3, c.run);
      // Rows are computed alike in any piece; only layer norm's dgamma and dbeta add the
      // pieces' sums in another order.
      CHECK(largest_difference(whole, pieces) < 1e-4);
    }
  }
}

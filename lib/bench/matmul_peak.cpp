#include "bench/matmul_peak.h"

#include <algorithm>
#include <chrono>
#include <vector>

#include "core/tensor.h"
#include "ops/gemm.h"

namespace attn::bench {

double measure_matmul_peak(int size, int repeats) {
  Tensor a = Tensor::full({size, size}, 0.5f);
  Tensor b = Tensor::full({size, size}, 0.25f);
  Tensor c = Tensor::zeros({size, size});
  auto run = [&] { ops::gemm(ops::MatrixView::of(a), ops::MatrixView::of(b), ops::MatrixView::of(c)); };
  run();
  std::vector<double> rates;
  for (int i = 0; i < repeats; ++i) {
    auto start = std::chrono::steady_clock::now();
    run();
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    rates.push_back(2.0 * size * double(size) * size / seconds / 1e9);
  }
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

}  // namespace attn::bench

#include "ops/precision.h"

#include <algorithm>
#include <chrono>
#include <fmt/format.h>
#include <vector>

#include "core/tensor.h"
#include "dnnl/onednn_info.h"
#include "ops/gemm.h"

namespace attn::ops {

namespace {

// 1024^3 is 2 GFLOP a product: about 10 ms on two cores, large enough to reach the kernel's
// steady rate; five of each keep the probe near a tenth of a second.
constexpr int kProbeSize = 1024;
constexpr int kProbeRepeats = 5;

PrecisionChoice measured_choice() {
  PrecisionChoice choice;
  choice.requested = Precision::automatic;
  if (!bf16_gemm_supported()) {
    choice.reason = fmt::format("auto: f32, since oneDNN has no bf16 matmul on this CPU (ISA {})", dnn::cpu_isa_name());
    return choice;
  }
  choice.f32_gflops = measure_matmul_peak(Precision::f32, kProbeSize, kProbeRepeats);
  choice.bf16_gflops = measure_matmul_peak(Precision::bf16, kProbeSize, kProbeRepeats);
  const bool bf16 = choice.bf16_gflops >= kBf16PeakLead * choice.f32_gflops;
  choice.precision = bf16 ? Precision::bf16 : Precision::f32;
  choice.reason = fmt::format(
      "auto: {}, since the bf16 matmul peak is {:.0f} GFLOP/s against f32's {:.0f} ({:.2f}x; "
      "bf16 needs {:.2f}x)",
      choice_name(choice.precision), choice.bf16_gflops, choice.f32_gflops, choice.bf16_gflops / choice.f32_gflops,
      kBf16PeakLead);
  return choice;
}

}  // namespace

PrecisionChoice resolve_precision(Precision requested, const std::string& key) {
  if (requested == Precision::automatic) return measured_choice();
  ATTN_CHECK(requested != Precision::bf16 || bf16_gemm_supported(), key, " bf16: oneDNN has no bf16 matmul on this ",
             "CPU (ISA ", dnn::cpu_isa_name(), "; it needs AVX-512); use f32 or auto");
  PrecisionChoice choice;
  choice.requested = requested;
  choice.precision = requested;
  choice.reason = fmt::format("{}, as asked", choice_name(requested));
  return choice;
}

double measure_matmul_peak(Precision precision, int size, int repeats) {
  Tensor a = Tensor::full({size, size}, 0.5f);
  Tensor b = Tensor::full({size, size}, 0.25f);
  Tensor c = Tensor::zeros({size, size});
  GemmOptions options;
  options.precision = precision;
  auto run = [&] { gemm(MatrixView::of(a), MatrixView::of(b), MatrixView::of(c), options); };
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

}  // namespace attn::ops

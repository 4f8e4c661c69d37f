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

// 1024^3 is 2 GFLOP a product, large enough to reach the kernel's steady rate and small enough
// that seven of each keep the probe short beside a model's load.
constexpr int kProbeSize = 1024;
constexpr int kProbeRounds = 7;

// One size x size product in `precision`, run once to warm up, then timed on each rate().
class MatmulProbe {
 public:
  MatmulProbe(Precision precision, int size)
      : a_(Tensor::full({size, size}, 0.5f)), b_(Tensor::full({size, size}, 0.25f)), c_(Tensor::zeros({size, size})) {
    options_.precision = precision;
    run();
  }
  double rate() {  // GFLOP/s
    auto start = std::chrono::steady_clock::now();
    run();
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double size = double(a_.dim(0));
    return 2.0 * size * size * size / seconds / 1e9;
  }

 private:
  void run() { gemm(MatrixView::of(a_), MatrixView::of(b_), MatrixView::of(c_), options_); }
  Tensor a_, b_, c_;
  GemmOptions options_;
};

PrecisionChoice measured_choice() {
  PrecisionChoice choice;
  choice.requested = Precision::automatic;
  if (!bf16_gemm_supported()) {
    choice.reason = fmt::format("auto: f32, since oneDNN has no bf16 matmul on this CPU (ISA {})", dnn::cpu_isa_name());
    return choice;
  }
  // The two precisions alternate, and each keeps its best product: another process that runs
  // for a while slows some products of both, where a block of f32 then a block of bf16 once
  // chose f32 on a CPU whose bf16 is much faster (another job ran during the bf16 half). Load
  // only ever lowers a rate, so the best of each is the CPU's.
  MatmulProbe f32_probe(Precision::f32, kProbeSize), bf16_probe(Precision::bf16, kProbeSize);
  for (int round = 0; round < kProbeRounds; ++round) {
    choice.f32_gflops = std::max(choice.f32_gflops, f32_probe.rate());
    choice.bf16_gflops = std::max(choice.bf16_gflops, bf16_probe.rate());
  }
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
  MatmulProbe probe(precision, size);
  std::vector<double> rates;
  for (int i = 0; i < repeats; ++i) rates.push_back(probe.rate());
  std::sort(rates.begin(), rates.end());
  return rates[rates.size() / 2];
}

}  // namespace attn::ops

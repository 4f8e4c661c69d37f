// ops::resolve_precision: a request taken as asked, or auto measured into f32 or bf16.
#include <string>

#include <catch2/catch.hpp>

#include "ops/gemm.h"
#include "ops/precision.h"

using namespace attn;

TEST_CASE("a precision asked for by name is taken as asked", "[ops][precision]") {
  for (Precision precision : {Precision::f32, Precision::int8}) {
    ops::PrecisionChoice choice = ops::resolve_precision(precision, "--precision");
    CHECK(choice.precision == precision);
    CHECK(choice.requested == precision);
    CHECK(choice.f32_gflops == 0);  // nothing measured
  }
  if (ops::bf16_gemm_supported()) {
    CHECK(ops::resolve_precision(Precision::bf16, "train.precision").precision == Precision::bf16);
  } else {
    CHECK_THROWS_WITH(ops::resolve_precision(Precision::bf16, "train.precision"),
                      Catch::StartsWith("train.precision bf16: oneDNN has no bf16 matmul"));
  }
}

TEST_CASE("auto is the faster of f32 and bf16 by their measured peaks", "[ops][precision]") {
  ops::PrecisionChoice choice = ops::resolve_precision(Precision::automatic, "train.precision");
  CHECK(choice.requested == Precision::automatic);
  REQUIRE((choice.precision == Precision::f32 || choice.precision == Precision::bf16));
  CHECK_THAT(choice.reason, Catch::StartsWith("auto: " + std::string(choice_name(choice.precision))));
  if (!ops::bf16_gemm_supported()) {
    CHECK(choice.precision == Precision::f32);
    CHECK(choice.bf16_gflops == 0);
    return;
  }
  REQUIRE(choice.f32_gflops > 0);
  REQUIRE(choice.bf16_gflops > 0);
  const bool bf16 = choice.bf16_gflops >= ops::kBf16PeakLead * choice.f32_gflops;
  CHECK(choice.precision == (bf16 ? Precision::bf16 : Precision::f32));
}

TEST_CASE("the matmul peak is a positive rate in either precision", "[ops][precision]") {
  CHECK(ops::measure_matmul_peak(Precision::f32, 64, 3) > 0);
  if (ops::bf16_gemm_supported()) CHECK(ops::measure_matmul_peak(Precision::bf16, 64, 3) > 0);
}

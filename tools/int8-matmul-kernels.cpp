// Which oneDNN kernel an int8 decoding product runs on, and how long it takes, for the row
// counts of beam decoding (docs/performance.md, "The int8 kernel"). Built and run by tools/bench-int8-matmul.sh.
//
// For each shape (M rows x K inner x N outputs) it times three forms of c = a W^T:
//   f32 packed        f32 a, W packed in the layout oneDNN picks (f32 decoding)
//   s8 scaled plain   s8 a, the transposed s8 W, run-time per-column output scales
//                     (attn's int8 product before its weights were packed)
//   s8 packed         s8 a, s8 W packed, no scales (attn's int8 product now; the scales are
//                     applied after, in one pass)
// and prints the kernel oneDNN chose (impl_info_str) beside the median of 5 timings.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unordered_map>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

namespace {

using dnnl::memory;
using Tag = memory::format_tag;
using Type = memory::data_type;

struct Form {
  const char* name;
  Type data_type;
  bool packed;
  bool runtime_scales;
};

// Milliseconds per call: the median of 5 timings of `calls` calls each, after a warm-up.
double time_calls(const dnnl::matmul& product, dnnl::stream& stream, std::unordered_map<int, memory>& args, int calls) {
  for (int i = 0; i < 3; ++i) product.execute(stream, args);
  stream.wait();
  std::vector<double> timings;
  for (int repeat = 0; repeat < 5; ++repeat) {
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) product.execute(stream, args);
    stream.wait();
    timings.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() /
                      calls);
  }
  std::sort(timings.begin(), timings.end());
  return timings[2];
}

void run(dnnl::engine& engine, dnnl::stream& stream, const Form& form, int64_t rows, int64_t inner, int64_t cols) {
  const Type weight_type = form.data_type == Type::f32 ? Type::f32 : Type::s8;
  memory::desc a({rows, inner}, form.data_type, Tag::ab);
  memory::desc w({inner, cols}, weight_type, form.packed ? Tag::any : Tag::ba);
  memory::desc c({rows, cols}, Type::f32, Tag::ab);
  dnnl::primitive_attr attr;
  if (form.runtime_scales) attr.set_output_scales(1 << 1, {DNNL_RUNTIME_F32_VAL});
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(a, w, c), attr, engine);
  memory a_mem(a, engine), w_mem(pd.weights_desc(), engine), c_mem(c, engine);
  memory scales(memory::desc({cols}, Type::f32, Tag::a), engine);
  std::memset(a_mem.get_data_handle(), 1, a.get_size());
  std::memset(w_mem.get_data_handle(), 1, pd.weights_desc().get_size());
  std::fill_n(static_cast<float*>(scales.get_data_handle()), cols, 0.01f);
  std::unordered_map<int, memory> args{{DNNL_ARG_SRC, a_mem}, {DNNL_ARG_WEIGHTS, w_mem}, {DNNL_ARG_DST, c_mem}};
  if (form.runtime_scales) args[DNNL_ARG_ATTR_OUTPUT_SCALES] = scales;
  const double flops = 2.0 * double(rows) * double(inner) * double(cols);
  const int calls = std::max(20, int(2e9 / flops));
  const double ms = time_calls(dnnl::matmul(pd), stream, args, calls);
  std::printf("%5lld x %5lld x %5lld  %-16s %9.4f ms %8.1f GFLOP/s  %s\n", (long long)rows, (long long)inner,
              (long long)cols, form.name, ms, flops / ms / 1e6, pd.impl_info_str());
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> row_counts = {5, 32, 160};
  if (argc > 1) {
    row_counts.clear();
    for (int i = 1; i < argc; ++i) row_counts.push_back(std::atoll(argv[i]));
  }
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  const Form forms[] = {{"f32 packed", Type::f32, true, false},
                        {"s8 scaled plain", Type::s8, false, true},
                        {"s8 packed", Type::s8, true, false}};
  // The products of the en-it Transformer (d_model 256, FFN 1024, vocabulary 8,000).
  const int64_t shapes[][2] = {{256, 768}, {256, 256}, {256, 1024}, {1024, 256}, {256, 8000}};
  for (int64_t rows : row_counts)
    for (const auto& shape : shapes)
      for (const Form& form : forms) run(engine, stream, form, rows, shape[0], shape[1]);
}

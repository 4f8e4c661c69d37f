// Decoding memory: each decoder step of a search ends a buffer-pool step
// (decode::end_search_step), so the blocks a long search leaves behind (every KV-cache length
// it went through) go back to the system instead of staying in the pool until the search ends.
#include <catch2/catch.hpp>

#include "core/buffer_pool.h"
#include "decode/search.h"
#include "decode/translator.h"
#include "models/tiny_models.h"

using namespace attn;

namespace {

// Wide enough that the KV caches, not the fixed per-step temporaries, dominate the pool.
std::unique_ptr<models::TransformerModel> wide_model() {
  models::TransformerOptions options = attn::testing::tiny_transformer_options();
  options.layer.width = 64;
  options.layer.ffn_width = 64;
  options.max_positions = 512;
  return std::make_unique<models::TransformerModel>(options, 3);
}

// The pool's peak (live + cached) bytes above what was live before, while `search` decodes two
// 150-token sources to 240 output tokens each (eos forbidden until then).
size_t pool_growth(const decode::SearchOptions& base, int beam) {
  auto model = wide_model();
  std::vector<int32_t> source;
  for (int i = 0; i < 149; ++i) source.push_back(int32_t(4 + i % 7));
  source.push_back(data::kEosId);
  std::vector<int32_t> other(source.rbegin() + 1, source.rend());
  other.push_back(data::kEosId);
  const data::Batch batch = decode::source_batch({&source, &other});
  decode::SearchOptions options = base;
  options.beam = beam;
  options.max_len_ratio = 1.5f;
  options.max_len_extra = 15;
  options.min_length = 1000;  // every hypothesis runs to its limit: 1.5 x 150 + 15 = 240 tokens
  BufferPool& pool = BufferPool::instance();
  pool.trim();
  // 8 MiB of least slack: this search's blocks are a few MiB, which the default would keep
  // whether the search ends pool steps or not.
  struct SmallSlack {
    explicit SmallSlack(BufferPool& pool) : pool(pool) { pool.set_min_slack(size_t(8) << 20); }
    ~SmallSlack() { pool.set_min_slack(BufferPool::kMinSlackBytes); }
    BufferPool& pool;
  } small_slack(pool);
  const size_t before = pool.stats().live_bytes;
  pool.reset_peak();
  const auto found = decode::search(*model, batch, options, {1, 2});
  REQUIRE(found.size() == 2);
  CHECK(found[0].front().tokens.size() == 240);
  const size_t peak = pool.stats().peak_bytes;
  pool.trim();
  return peak - before;
}

}  // namespace

// Measured (this model, these sources): beam 5 peaks 3.8 MiB above the weights with the
// per-step release (2.7 MiB before the KV caches kept a second storage each) and 11.5 MiB
// without it (end_search_step doing nothing); greedy and sampling 1.4 MiB and 2.9 MiB. The
// bounds sit between.
constexpr size_t kMiB = size_t(1) << 20;
TEST_CASE("a long search keeps the buffer pool within a bound its unreleased steps exceed",
          "[decode][search][memory]") {
  decode::SearchOptions options;
  SECTION("beam 5") { CHECK(pool_growth(options, 5) < 6 * kMiB); }
  SECTION("greedy") { CHECK(pool_growth(options, 1) < 21 * kMiB / 10); }
  SECTION("sampling") {
    options.sampling.enabled = true;
    CHECK(pool_growth(options, 1) < 21 * kMiB / 10);
  }
}

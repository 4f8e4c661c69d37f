// The explorer's endpoint without a model: its request fields, GET /v1/run's bounded log, and
// the data format's filter and byte bound (lib/serve/explorer_api.h, attention_json.h).
#include <fstream>

#include <catch2/catch.hpp>

#include "serve/explorer_api.h"
#include "serve/translate_request.h"
#include "temp_dir.h"

using namespace attn::serve;
using Catch::Contains;
using nlohmann::json;

namespace {

// The message of the HttpError that parse_attention_request throws, with its status.
std::pair<int, std::string> refusal(const json& fields) {
  std::string key;
  try {
    parse_attention_request(fields, 4, &key);
  } catch (const HttpError& error) {
    return {error.status(), error.what()};
  }
  return {0, ""};
}

}  // namespace

TEST_CASE("/v1/attention's fields: sentences and forced targets - beam - selection - refusals name the field",
          "[serve]") {
  std::string key;
  const AttentionQuery query = parse_attention_request({{"q", "One.\n\nTwo."},
                                                        {"target", "Uno.\nDue."},
                                                        {"kinds", {"cross", "enc_self"}},
                                                        {"layers", "0,2"},
                                                        {"heads", {1}},
                                                        {"api_key", "k"}},
                                                       4, &key);
  CHECK(query.sources == std::vector<std::string>{"One.", "Two."});
  CHECK(query.targets == std::vector<std::string>{"Uno.", "Due."});
  CHECK(query.beam == 4);  // the server's
  CHECK(query.filter.kinds.size() == 2);
  CHECK(query.filter.layers == std::set<int>{0, 2});
  CHECK(query.filter.heads == std::set<int>{1});
  CHECK(key == "k");
  CHECK(parse_attention_request({{"q", "One."}, {"beam", "2"}}, 4, &key).beam == 2);  // a form's string
  CHECK(refusal({{"target", "x"}}) == std::pair<int, std::string>{400, "Invalid request: missing q parameter"});
  CHECK_THAT(refusal({{"q", "a"}, {"target", "x\ny"}}).second, Contains("target has 2 sentence(s)"));
  CHECK_THAT(refusal({{"q", "a"}, {"beam", 5}}).second, Contains("beam must be from 1 to 4"));
  CHECK_THAT(refusal({{"q", "a"}, {"beam", "x"}}).second, Contains("beam must be a whole number"));
  CHECK_THAT(refusal({{"q", "a"}, {"kinds", {"diagonal"}}}).second, Contains("kinds"));
  CHECK_THAT(refusal({{"q", "a"}, {"heads", {-1}}}).second, Contains("heads must be"));
  CHECK_THAT(refusal({{"q", 3}}).second, Contains("q must be a string"));
}

TEST_CASE("/v1/run: the config and the log - a long log thinned near the bound - validations all kept", "[serve]") {
  attn::testing::TempDir dir;
  std::ofstream(dir.file("config.json"))
      << R"({"train": {"max_steps": 5000}, "data": {"train_src": "/srv/corpora/secret/train.en", "files": ["a/b.it"]}})";
  {
    std::ofstream log(dir.file("train.log.jsonl"));
    for (int step = 1; step <= 5000; ++step) {
      log << json{{"type", "train"}, {"step", step}, {"loss", 1.0 / step}, {"padding", std::string(60, 'x')}}.dump()
          << '\n';
      if (step % 500 == 0) log << json{{"type", "valid"}, {"step", step}, {"bleu", step / 100.0}}.dump() << '\n';
    }
    log << R"({"type": "train", "st)";  // a record still being written
  }
  const json small = run_summary(dir.path().string(), int64_t(1) << 30);
  CHECK(small["config"]["train"]["max_steps"] == 5000);
  // A client learns which files the run read, not where the server keeps them.
  CHECK(small["config"]["data"]["train_src"] == "train.en");
  CHECK(small["config"]["data"]["files"][0] == "b.it");
  CHECK(small["run"] == dir.path().filename().string());
  CHECK(public_run_name("runs/en-it/") == "en-it");
  CHECK(public_run_name("/srv/runs/en-it") == "en-it");
  CHECK(small.dump().find('/') == std::string::npos);
  CHECK(small["log"].size() == 5010);
  CHECK(small["log_stride"] == 1);
  const json thinned = run_summary(dir.path().string(), 50000);
  const int64_t bytes = thinned["log_bytes"];
  const int64_t stride = thinned["log_stride"];
  CHECK(stride == (bytes + 49999) / 50000);
  int valid = 0, train = 0;
  for (const json& record : thinned["log"]) (record["type"] == "valid" ? valid : train) += 1;
  CHECK(valid == 10);
  CHECK(train == (5000 + stride - 1) / stride + 1);
  CHECK(thinned["log"].back()["step"] == 5000);  // the newest point
  CHECK(thinned["log"].dump().size() < 2 * 50000);
}

TEST_CASE("the explorer's filter: checked against the model's maps - naming what there is", "[serve]") {
  attn::decode::SentenceMap map;
  map.kind = attn::layers::AttentionKind::cross;
  map.layer = 0;
  map.heads = {0, 1};
  map.queries = 2;
  map.keys = 2;
  map.weights = {0.25f, 0.75f, 1.f, 0.f, 0.5f, 0.5f, 0.1f, 0.9f};
  AttentionFilter filter;
  CHECK_NOTHROW(check_filter({map}, filter));
  filter.heads = {2};
  CHECK_THROWS_WITH(check_filter({map}, filter), Contains("heads: head 2 is out of range; the model's heads are 0, 1"));
  filter = {};
  filter.kinds = {attn::layers::AttentionKind::encoder_self};
  CHECK_THROWS_WITH(check_filter({map}, filter), Contains("no enc_self attention; it has cross (1 layer)"));
  filter = {};
  filter.layers = {1};
  CHECK_THROWS_WITH(check_filter({map}, filter), Contains("layer 1 is out of range"));
}

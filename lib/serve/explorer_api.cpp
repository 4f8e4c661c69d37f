#include "serve/explorer_api.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "run/run_files.h"
#include "serve/explorer_page.h"
#include "serve/text_template.h"

namespace attn::serve {

using nlohmann::json;

namespace {

// GET /v1/run's bound on the log's records (the page polls it every few seconds).
constexpr int64_t kMaxRunLogBytes = 2 << 20;

HttpError invalid(const std::string& field, const std::string& what) {
  return HttpError(400, "Invalid request: " + field + " " + what);
}

// A whole number from JSON, or from a form's string of digits.
int whole_number(const json& value, const std::string& field) {
  if (value.is_number_integer()) return value.get<int>();
  if (value.is_string()) {
    const std::string text = value.get<std::string>();
    if (!text.empty() && text.size() < 10 &&
        std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c) != 0; }))
      return std::stoi(text);
  }
  throw invalid(field, "must be a whole number >= 0");
}

// An array, one value, or a form's comma-separated string -> its items.
std::vector<json> items(const json& value) {
  if (value.is_array()) return {value.begin(), value.end()};
  if (!value.is_string()) return {value};
  std::vector<json> parts;
  std::stringstream text(value.get<std::string>());
  for (std::string part; std::getline(text, part, ',');)
    if (!part.empty()) parts.push_back(part);
  return parts;
}

std::set<int> whole_numbers(const json& fields, const std::string& field) {
  std::set<int> numbers;
  if (fields.contains(field))
    for (const json& item : items(fields[field])) {
      const int number = whole_number(item, field);
      if (number < 0) throw invalid(field, "must be whole numbers >= 0");
      numbers.insert(number);
    }
  return numbers;
}

std::string text_field(const json& fields, const std::string& field) {
  if (!fields.contains(field)) return "";
  if (!fields[field].is_string()) throw invalid(field, "must be a string");
  return fields[field].get<std::string>();
}

void attention(TranslationService& service, const std::atomic<AttentionBackend*>& backend, int64_t max_bytes,
               const HttpRequest& http, HttpResponse& response) {
  SentenceQueue& queue = service.ready_queue();
  std::string api_key;
  AttentionQuery query = parse_attention_request(service.fields(http), service.info().beam, &api_key);
  service.authorize(api_key, http);
  AttentionBackend* model = backend.load();
  if (!model) throw HttpError(400, "Invalid request: attention maps are one model's, and this server runs an ensemble");
  std::vector<std::string> texts = query.sources;
  texts.insert(texts.end(), query.targets.begin(), query.targets.end());
  check_text_size(texts, service.limits());
  check_sentence_count(int64_t(query.sources.size()), service.limits());
  query.max_bytes = max_bytes;
  json answer;
  service.run_on_model(queue, http, [&] { answer = model->attention(query); });
  set_json(response, 200, answer);
}

// The records of a train.log.jsonl (lines that are not JSON objects, such as a line still being
// written, are left out), thinned as run_summary says.
json log_records(const std::string& path, int64_t max_bytes, int64_t* stride_out, int64_t* bytes_out) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  json records = json::array();
  if (!in) return records;
  const int64_t bytes = int64_t(in.tellg());
  in.seekg(0);
  const int64_t stride = std::max<int64_t>(1, (bytes + max_bytes - 1) / max_bytes);
  int64_t train_seen = 0;
  json last_train;
  for (std::string line; std::getline(in, line);) {
    json record = json::parse(line, nullptr, false);
    if (!record.is_object()) continue;
    if (record.value("type", "") != "train") {
      records.push_back(std::move(record));
      continue;
    }
    if (train_seen++ % stride == 0) {
      records.push_back(std::move(record));
      last_train = nullptr;
    } else {
      last_train = std::move(record);
    }
  }
  if (!last_train.is_null()) records.push_back(std::move(last_train));  // the newest point is always shown
  *stride_out = stride;
  *bytes_out = bytes;
  return records;
}

}  // namespace

AttentionQuery parse_attention_request(const json& fields, int beam, std::string* api_key) {
  AttentionQuery query;
  if (!fields.contains("q")) throw HttpError(400, "Invalid request: missing q parameter");
  const std::string q = text_field(fields, "q");
  query.sources = plain_text_template(q).sentences;
  if (fields.contains("target") && !text_field(fields, "target").empty()) {
    query.targets = plain_text_template(text_field(fields, "target")).sentences;
    if (query.targets.size() != query.sources.size())
      throw invalid("target", "has " + std::to_string(query.targets.size()) +
                                  " sentence(s) (non-blank lines) but q has " + std::to_string(query.sources.size()));
  }
  query.beam = fields.contains("beam") ? whole_number(fields["beam"], "beam") : beam;
  if (query.beam < 1 || query.beam > beam)
    throw invalid("beam", "must be from 1 to " + std::to_string(beam) + " (the server's beam)");
  if (fields.contains("kinds"))
    for (const json& kind : items(fields["kinds"])) {
      if (!kind.is_string()) throw invalid("kinds", "must be names: enc_self, dec_self, cross");
      try {
        query.filter.kinds.insert(layers::attention_kind_from_name(kind.get<std::string>()));
      } catch (const std::exception& error) {
        throw invalid("kinds", error.what());
      }
    }
  query.filter.layers = whole_numbers(fields, "layers");
  query.filter.heads = whole_numbers(fields, "heads");
  *api_key = text_field(fields, "api_key");
  return query;
}

// A config as a client may see it: every path (a string with a directory) cut to its file name,
// so that the page shows which files a run read without telling clients where the server keeps them.
json without_directories(json value) {
  if (value.is_string()) {
    const std::string text = value.get<std::string>();
    if (text.find('/') != std::string::npos) return std::filesystem::path(text).filename().string();
  }
  if (value.is_structured())
    for (auto& item : value) item = without_directories(item);
  return value;
}

json run_summary(const std::string& run_dir, int64_t max_log_bytes) {
  const run::RunPaths paths = run::run_paths(run_dir, true);
  json config = nullptr;
  std::ifstream config_file(paths.config);
  if (config_file) config = json::parse(config_file, nullptr, false, true);
  if (config.is_discarded()) config = nullptr;
  int64_t stride = 1, bytes = 0;
  json log = log_records(paths.log, max_log_bytes, &stride, &bytes);
  return {{"run", public_run_name(run_dir)},
          {"config", without_directories(std::move(config))},
          {"log", std::move(log)},
          {"log_stride", stride},
          {"log_bytes", bytes}};
}

void add_explorer_api(Routes& routes, TranslationService& service, const std::atomic<AttentionBackend*>& backend,
                      int64_t max_attention_bytes) {
  routes.get("/", [](const HttpRequest&, HttpResponse& response) {
    response.body = explorer_page();
    response.content_type = "text/html; charset=utf-8";
  });
  routes.post("/v1/attention",
              [&service, &backend, max_attention_bytes](const HttpRequest& request, HttpResponse& response) {
                attention(service, backend, max_attention_bytes, request, response);
              });
  routes.get("/v1/run", [&service](const HttpRequest&, HttpResponse& response) {
    service.ready_queue();  // the run is known once the model is
    json summary = run_summary(service.info().name, kMaxRunLogBytes);
    summary["beam"] = service.info().beam;
    summary["source"] = service.info().languages.source;
    summary["target"] = service.info().languages.target;
    summary["keys_required"] = service.keys_required();
    summary["char_limit"] = service.limits().char_limit;
    set_json(response, 200, summary);
  });
}

}  // namespace attn::serve

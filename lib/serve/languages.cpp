#include "serve/languages.h"

#include <filesystem>
#include <map>
#include <spdlog/spdlog.h>

#include "core/check.h"

namespace attn::serve {

namespace {

// A two-letter extension (ISO 639-1: "train.en"); longer ones are too often no language
// ("train.src", "train.tgt").
std::string extension_code(const std::string& path) {
  const std::string extension = std::filesystem::path(path).extension().string();
  return extension.size() == 3 ? extension.substr(1) : "";
}

}  // namespace

LanguagePair run_languages(const io::Config& config, const std::string& config_path) {
  if (!config.languages.source.empty()) return {config.languages.source, config.languages.target};
  const auto corpora = config.data.training_corpora();
  const std::string source = corpora.empty() ? "" : extension_code(corpora.front().src);
  const std::string target = corpora.empty() ? "" : extension_code(corpora.front().tgt);
  ATTN_CHECK(io::is_language_code(source) && io::is_language_code(target) && source != target, config_path,
             ": languages is not set and the training files' extensions name no language pair; add "
             "\"languages\": {\"source\": \"en\", \"target\": \"it\"} (ISO 639 codes) to it");
  spdlog::info("languages: {} -> {}, from the extensions of the training files (set languages in {} to name them)",
               source, target, config_path);
  return {source, target};
}

std::string language_name(const std::string& code) {
  static const std::map<std::string, std::string> names = {
      {"ar", "Arabic"},  {"az", "Azerbaijani"}, {"ca", "Catalan"},    {"cs", "Czech"},      {"da", "Danish"},
      {"de", "German"},  {"el", "Greek"},       {"en", "English"},    {"eo", "Esperanto"},  {"es", "Spanish"},
      {"fa", "Persian"}, {"fi", "Finnish"},     {"fr", "French"},     {"ga", "Irish"},      {"he", "Hebrew"},
      {"hi", "Hindi"},   {"hu", "Hungarian"},   {"id", "Indonesian"}, {"it", "Italian"},    {"ja", "Japanese"},
      {"ko", "Korean"},  {"nl", "Dutch"},       {"pl", "Polish"},     {"pt", "Portuguese"}, {"ru", "Russian"},
      {"sk", "Slovak"},  {"sv", "Swedish"},     {"tr", "Turkish"},    {"uk", "Ukrainian"},  {"zh", "Chinese"}};
  const auto found = names.find(code);
  return found == names.end() ? code : found->second;
}

}  // namespace attn::serve

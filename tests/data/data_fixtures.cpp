#include "data/data_fixtures.h"

#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <sstream>
#include <unistd.h>

#include "core/check.h"
#include "core/rng.h"
#include "data/vocab.h"

namespace attn::testing {

void write_file(const std::string& path, const std::string& text) {
  std::ofstream file(path, std::ios::binary);
  file << text;
  ATTN_CHECK(file.good(), "cannot write ", path);
}

std::string synthetic_text(int lines, uint64_t seed) {
  static const char* syllables[] = {"ka", "to", "ri", "na", "me", "lu", "so", "pe",
                                    "di", "ga", "vo", "ne", "mi", "ta", "ru", "bo"};
  Rng rng(seed);
  std::string text;
  for (int line = 0; line < lines; ++line) {
    const int words = 2 + static_cast<int>(rng.below(8));
    for (int w = 0; w < words; ++w) {
      if (w) text += ' ';
      // Words come from a fixed lexicon of 200 so that pieces repeat enough to be learned.
      Rng word(mix64(seed, rng.below(200)));
      const int length = 1 + static_cast<int>(word.below(3));
      for (int s = 0; s < length; ++s) text += syllables[word.below(16)];
    }
    text += '\n';
  }
  return text;
}

std::vector<std::string> synthetic_lines(int lines, uint64_t seed) {
  std::istringstream text(synthetic_text(lines, seed));
  std::vector<std::string> result;
  for (std::string line; std::getline(text, line);) result.push_back(line);
  return result;
}

const std::string& tiny_vocab_model(const std::string& type) {
  static TempDir directory;
  static std::map<std::string, std::string> models;
  auto found = models.find(type);
  if (found != models.end()) return found->second;
  const std::string corpus = directory.file("corpus.txt");
  write_file(corpus, synthetic_text(400, 11));
  data::VocabTrainOptions options;
  options.inputs = {corpus};
  options.model_prefix = directory.file(type);
  options.type = *parse_choice<VocabType>(type);
  options.vocab_size = 100;
  options.threads = 1;
  data::train_vocab(options);
  return models[type] = options.model_prefix + ".model";
}

}  // namespace attn::testing

// libFuzzer target: attn-translate's input path, bytes -> lines (CRLF rule) -> Vocab::encode
// -> truncation to the model's limit -> length-sorted source batches, the way Translator
// feeds the model (the model itself is left out: it only ever sees the batches checked here).
//
// The first input byte picks the limit (2..65 tokens, eos included); the rest is the text.
// The vocabulary is a tiny SentencePiece model trained at start-up on generated text. Broken
// invariants abort: one entry per line, no entry over the limit, eos last, batches within it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <spdlog/spdlog.h>
#include <sstream>
#include <string>
#include <vector>

#include "data/corpus.h"
#include "data/vocab.h"
#include "decode/translator.h"

namespace {

void require(bool condition) {
  if (!condition) std::abort();
}

// A 200-piece unigram model of made-up words: plenty of unk for arbitrary bytes.
const attn::data::Vocab& vocab() {
  static const attn::data::Vocab* model = [] {
    spdlog::set_level(spdlog::level::err);  // a truncation warning per input would drown the fuzzer's own output
    std::string dir = (std::filesystem::temp_directory_path() / "attn-fuzz-XXXXXX").string();
    require(mkdtemp(dir.data()) != nullptr);
    const char* syllables[] = {"ka", "to", "ri", "na", "me", "lu", "so", "pe", "é", "ß", "日本", "語"};
    std::ofstream text(dir + "/text.txt");
    uint64_t state = 12345;
    for (int line = 0; line < 2000; ++line) {
      for (int word = 0; word < 6; ++word) {
        for (int s = 0; s < 3; ++s) {
          state = state * 6364136223846793005ull + 1442695040888963407ull;  // an LCG: fixed text
          text << syllables[(state >> 33) % 12];
        }
        text << ' ';
      }
      text << '\n';
    }
    text.close();
    attn::data::VocabTrainOptions options;
    options.inputs = {dir + "/text.txt"};
    options.model_prefix = dir + "/spm";
    options.vocab_size = 200;
    options.threads = 1;
    attn::data::train_vocab(options);
    auto* loaded = new attn::data::Vocab(attn::data::Vocab::load(dir + "/spm.model"));
    std::filesystem::remove_all(dir);
    return loaded;
  }();
  return *model;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const int64_t limit = 2 + data[0] % 64;
  std::istringstream stream(std::string(reinterpret_cast<const char*>(data) + 1, size - 1));
  const std::vector<std::string> lines = attn::data::read_lines(stream, "fuzz input");
  const std::vector<std::vector<int32_t>> encoded = attn::decode::encode_lines(lines, vocab(), limit);
  require(encoded.size() == lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::vector<int32_t>& ids = encoded[i];
    require(int64_t(ids.size()) <= limit);
    require(ids.empty() || ids.back() == attn::data::kEosId);
    for (size_t t = 0; t + 1 < ids.size(); ++t)  // text never encodes to pad, bos or eos
      require((ids[t] == attn::data::kUnkId || ids[t] > attn::data::kEosId) && ids[t] < vocab().size());
    vocab().decode(ids);  // what a translation's detokenizer does with ids
  }
  for (const auto& chunk : attn::decode::length_sorted_batches(encoded, 7)) {
    std::vector<const std::vector<int32_t>*> sentences;
    for (int64_t i : chunk) sentences.push_back(&encoded[i]);
    require(!sentences.empty() && sentences.size() <= 7);
    attn::data::Batch batch = attn::decode::source_batch(sentences, limit);
    require(batch.src_len <= limit && batch.size == int64_t(sentences.size()));
    for (int64_t b = 0; b < batch.size; ++b) require(batch.src_lengths[b] <= batch.src_len);
  }
  return 0;
}

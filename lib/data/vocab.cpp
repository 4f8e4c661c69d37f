#include "data/vocab.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <queue>
#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>
#include <unordered_map>

#include "core/check.h"
#include "core/parallel.h"
#include "core/rng.h"
#include "data/corpus.h"
#include "data/line_sample.h"

namespace attn::data {

namespace {

std::string join(const std::vector<std::string>& items, const char* separator) {
  std::string joined;
  for (const auto& item : items) joined += (joined.empty() ? "" : separator) + item;
  return joined;
}

void check_train_options(const VocabTrainOptions& options) {
  ATTN_CHECK(!options.inputs.empty(), "train_vocab: no input files");
  for (const auto& input : options.inputs) {
    // SentencePiece takes the inputs as one comma-separated flag.
    ATTN_CHECK(input.find(',') == std::string::npos, "train_vocab: input path '", input,
               "' contains a comma, which SentencePiece cannot take");
    ATTN_CHECK(std::ifstream(input).good(), "train_vocab: cannot read input file '", input, "'");
  }
  ATTN_CHECK(!options.model_prefix.empty(), "train_vocab: empty model prefix");
  ATTN_CHECK(options.vocab_size > kEosId + 1, "train_vocab: vocab_size ", options.vocab_size, " is too small");
  ATTN_CHECK(options.character_coverage > 0.f && options.character_coverage <= 1.f, "train_vocab: character_coverage ",
             options.character_coverage, " is outside (0, 1]");
  ATTN_CHECK(options.max_sentences > 0, "train_vocab: max_sentences must be positive");
}

// SentencePiece fails on an input without a sentence with an internal message, or aborts the
// process when every line is blank: such an input is refused first, by name.
void check_has_text(const std::string& input, bool has_text) {
  ATTN_CHECK(has_text, "train_vocab: input file '", input, "' has no text (it is empty or holds only blank lines)");
}

// A sample of the inputs in a file beside the model, removed when training ends (or fails).
class SampleFile {
 public:
  explicit SampleFile(const VocabTrainOptions& options) : path_(options.model_prefix + ".sample.txt") {
    ATTN_CHECK(path_.find(',') == std::string::npos, "train_vocab: model prefix '", options.model_prefix,
               "' contains a comma, which SentencePiece cannot take in the path of its input sample");
    LineSampleOptions sampling;
    sampling.lines = options.max_sentences;
    sampling.seed = options.seed;
    const LineSample sample = sample_lines(options.inputs, sampling);
    for (const auto& file : sample.files) check_has_text(file.path, file.lines > 0);
    write(sample.lines);
  }
  ~SampleFile() {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
  }
  SampleFile(const SampleFile&) = delete;
  SampleFile& operator=(const SampleFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  void write(const std::vector<std::string>& lines) {
    std::ofstream file(path_, std::ios::binary);
    for (const auto& line : lines) file << line << '\n';
    file.close();
    if (file.good()) return;
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);  // the destructor does not run for a throwing constructor
    ATTN_CHECK(false, "train_vocab: cannot write the input sample '", path_, "'");
  }
  std::string path_;
};

// Above SentencePiece's highest severity (FATAL, 3): nothing is printed.
constexpr int kSilentLogLevel = 4;

std::unordered_map<std::string, std::string> trainer_flags(const VocabTrainOptions& options,
                                                           const std::vector<std::string>& inputs) {
  int threads = options.threads > 0 ? options.threads : parallel_threads();
  return {
      {"input", join(inputs, ",")},
      {"model_prefix", options.model_prefix},
      {"model_type", choice_name(options.type)},
      {"vocab_size", std::to_string(options.vocab_size)},
      {"character_coverage", std::to_string(options.character_coverage)},
      {"input_sentence_size", std::to_string(options.max_sentences)},
      {"shuffle_input_sentence", "true"},
      {"num_threads", std::to_string(threads)},
      {"pad_id", std::to_string(kPadId)},
      {"unk_id", std::to_string(kUnkId)},
      {"bos_id", std::to_string(kBosId)},
      {"eos_id", std::to_string(kEosId)},
      // A hard limit makes SentencePiece 0.1.97 crash (segfault) when the inputs cannot fill
      // vocab_size; with a soft one it stops short and train_vocab reports that instead.
      {"hard_vocab_limit", "false"},
      // Silent: SentencePiece's log lines (source file and line, "LOG(WARNING)") mean nothing
      // to a user; its errors come back as a status, which train_vocab reports.
      {"minloglevel", std::to_string(kSilentLogLevel)},
  };
}

}  // namespace

void train_vocab(const VocabTrainOptions& options) {
  check_train_options(options);
  const std::string inputs = join(options.inputs, ", ");
  std::optional<SampleFile> sample;
  if (total_bytes(options.inputs) > options.sample_above_bytes) {
    sample.emplace(options);
  } else {
    for (const auto& input : options.inputs) check_has_text(input, text_file_stats(input).text_lines > 0);
  }
  sentencepiece::SetRandomGeneratorSeed(static_cast<unsigned int>(options.seed));
  auto status = sentencepiece::SentencePieceTrainer::Train(
      trainer_flags(options, sample ? std::vector<std::string>{sample->path()} : options.inputs));
  ATTN_CHECK(status.ok(), "training the vocabulary on ", inputs, " failed: ", status.message());

  const std::string model_path = options.model_prefix + ".model";
  sentencepiece::SentencePieceProcessor trained;
  status = trained.Load(model_path);
  ATTN_CHECK(status.ok(), "cannot load the vocabulary just trained on ", inputs, ": ", status.ToString());
  if (trained.GetPieceSize() < options.vocab_size) {
    // Leave no undersized model behind for a later run to pick up as if it were requested.
    std::filesystem::remove(model_path);
    std::filesystem::remove(options.model_prefix + ".vocab");
    ATTN_CHECK(false, "vocab_size ", options.vocab_size, " is too large for ", inputs, ": they yield only ",
               trained.GetPieceSize(), " pieces");
  }
}

namespace {

// The model's type, which SentencePiece's public API does not tell: only unigram models have
// n-best segmentations.
bool is_bpe_model(const sentencepiece::SentencePieceProcessor& processor) {
  std::vector<std::vector<int>> nbest;
  return !processor.NBestEncode("a", 2, &nbest).ok();
}

// Bytes of the UTF-8 character starting with `lead` (1 for a stray continuation byte).
size_t utf8_length(unsigned char lead) {
  if (lead >= 0xf0) return 4;
  if (lead >= 0xe0) return 3;
  if (lead >= 0xc0) return 2;
  return 1;
}

}  // namespace

Vocab::Vocab(std::shared_ptr<const sentencepiece::SentencePieceProcessor> processor)
    : processor_(std::move(processor)), bpe_(is_bpe_model(*processor_)) {}

Vocab Vocab::load(const std::string& path) {
  ATTN_CHECK(std::filesystem::exists(path), "cannot load SentencePiece model '", path, "': it does not exist");
  ATTN_CHECK(std::ifstream(path).good(), "cannot load SentencePiece model '", path, "': the file cannot be read");
  auto processor = std::make_shared<sentencepiece::SentencePieceProcessor>();
  // SentencePiece's reason is a line of its source code: say what it means instead.
  ATTN_CHECK(processor->Load(path).ok(), "cannot load SentencePiece model '", path,
             "': it is not a SentencePiece model, or it is damaged");
  ATTN_CHECK(processor->pad_id() == kPadId && processor->unk_id() == kUnkId && processor->bos_id() == kBosId &&
                 processor->eos_id() == kEosId,
             "SentencePiece model '", path, "' has special ids pad ", processor->pad_id(), ", unk ",
             processor->unk_id(), ", bos ", processor->bos_id(), ", eos ", processor->eos_id(), "; expected ", kPadId,
             ", ", kUnkId, ", ", kBosId, ", ", kEosId, " (train it with attn-tokenize)");
  return Vocab(std::move(processor));
}

std::vector<int32_t> Vocab::encode(const std::string& text) const {
  std::vector<int> ids;
  auto status = processor_->Encode(text, &ids);
  ATTN_CHECK(status.ok(), "encoding failed: ", status.ToString());
  return std::vector<int32_t>(ids.begin(), ids.end());
}

std::vector<int32_t> Vocab::encode_sampled(const std::string& text, const SegmentationSampling& sampling,
                                           uint64_t key) const {
  if (!sampling.on()) return encode(text);
  return bpe_ ? bpe_dropout(text, sampling.alpha, key) : sample_nbest(text, sampling, key);
}

std::vector<int32_t> Vocab::sample_nbest(const std::string& text, const SegmentationSampling& sampling,
                                         uint64_t key) const {
  const auto nbest = processor_->NBestEncodeAsImmutableProto(text, sampling.nbest);
  const size_t count = nbest.nbests_size();
  if (count == 0) return {};
  std::vector<double> weights(count);
  double best = -HUGE_VAL;
  for (size_t i = 0; i < count; ++i) best = std::max(best, double(nbest.nbests(int(i)).score()));
  double total = 0;
  for (size_t i = 0; i < count; ++i)
    total += weights[i] = std::exp(sampling.alpha * (nbest.nbests(int(i)).score() - best));
  Rng draws(key);
  double u = draws.uniform_double() * total;
  size_t chosen = 0;
  while (chosen + 1 < count && (u -= weights[chosen]) >= 0) ++chosen;
  const auto pieces = nbest.nbests(int(chosen));
  std::vector<int32_t> ids;
  for (size_t i = 0; i < pieces.pieces_size(); ++i) ids.push_back(int32_t(pieces.pieces(int(i)).id()));
  return ids;
}

// BPE-dropout (Provilkov et al., 2020) as SentencePiece's BPE model does it: start from the
// characters of the normalised text, merge the adjacent pair whose merged piece scores highest
// (ties: leftmost), and skip each merge with probability alpha. The normalised text is that of
// the deterministic encoding, whose pieces spell it. (SentencePiece also re-splits "unused"
// pieces; the vocabularies attn trains have none.)
std::vector<int32_t> Vocab::bpe_dropout(const std::string& text, double alpha, uint64_t key) const {
  std::string normalized;
  const auto best = processor_->EncodeAsImmutableProto(text);
  for (size_t i = 0; i < best.pieces_size(); ++i) normalized += best.pieces(int(i)).piece();
  struct Symbol {
    size_t begin, length;
    int prev, next;
  };
  std::vector<Symbol> symbols;
  for (size_t at = 0; at < normalized.size();) {
    const size_t length = std::min(utf8_length(static_cast<unsigned char>(normalized[at])), normalized.size() - at);
    const int index = int(symbols.size());
    symbols.push_back({at, length, index - 1, at + length < normalized.size() ? index + 1 : -1});
    at += length;
  }
  auto id_of = [&](size_t begin, size_t length) { return processor_->PieceToId(normalized.substr(begin, length)); };
  auto mergeable = [&](int id) {
    return !processor_->IsUnknown(id) && !processor_->IsControl(id) && !processor_->IsUnused(id);
  };
  struct Pair {
    float score;
    int left, right;
    size_t length;
  };
  auto later = [](const Pair& a, const Pair& b) {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  };
  std::priority_queue<Pair, std::vector<Pair>, decltype(later)> agenda(later);
  auto consider = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const size_t length = symbols[size_t(left)].length + symbols[size_t(right)].length;
    const int id = id_of(symbols[size_t(left)].begin, length);
    if (mergeable(id)) agenda.push({processor_->GetScore(id), left, right, length});
  };
  for (size_t i = 1; i < symbols.size(); ++i) consider(int(i) - 1, int(i));
  Rng draws(key);
  while (!agenda.empty()) {
    const Pair top = agenda.top();
    agenda.pop();
    Symbol& left = symbols[size_t(top.left)];
    Symbol& right = symbols[size_t(top.right)];
    // Stale: one side was merged away or grew since the pair was queued.
    if (left.length == 0 || right.length == 0 || left.length + right.length != top.length) continue;
    if (draws.uniform() < alpha) continue;
    left.length = top.length;
    left.next = right.next;
    if (right.next >= 0) symbols[size_t(right.next)].prev = top.left;
    right.length = 0;
    consider(left.prev, top.left);
    consider(top.left, left.next);
  }
  std::vector<int32_t> ids;
  for (int i = symbols.empty() ? -1 : 0; i >= 0; i = symbols[size_t(i)].next) {
    const int id = id_of(symbols[size_t(i)].begin, symbols[size_t(i)].length);
    ids.push_back(mergeable(id) ? id : kUnkId);
  }
  return ids;
}

std::string Vocab::decode(const std::vector<int32_t>& ids) const {
  std::vector<int> kept;
  kept.reserve(ids.size());
  for (int32_t id : ids) {
    if (id == kEosId) break;
    check_id(id);
    if (id != kPadId && id != kBosId) kept.push_back(id);
  }
  std::string text;
  auto status = processor_->Decode(kept, &text);
  ATTN_CHECK(status.ok(), "decoding failed: ", status.ToString());
  return text;
}

std::string Vocab::piece(int32_t id) const {
  check_id(id);
  return processor_->IdToPiece(id);
}

int32_t Vocab::piece_to_id(const std::string& piece) const { return processor_->PieceToId(piece); }

int32_t Vocab::size() const { return processor_->GetPieceSize(); }

void Vocab::check_id(int32_t id) const {
  ATTN_CHECK(id >= 0 && id < size(), "token id ", id, " is outside the vocabulary [0, ", size(), ")");
}

}  // namespace attn::data

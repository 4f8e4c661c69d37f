#include "run/run_files.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>

#include <nlohmann/json.hpp>

#include "core/check.h"
#include "io/atomic_file.h"
#include "io/checksum.h"

namespace attn::run {

namespace fs = std::filesystem;

RunPaths run_paths(const std::string& dir, bool joint_vocab) {
  fs::path root(dir);
  RunPaths paths;
  paths.dir = dir;
  paths.config = (root / "config.json").string();
  paths.source_vocab = (root / (joint_vocab ? "spm.model" : "spm.src.model")).string();
  paths.target_vocab = (root / (joint_vocab ? "spm.model" : "spm.tgt.model")).string();
  paths.vocab_record = (root / "vocab.sha256").string();
  paths.best_checkpoint = (root / "checkpoint.best.safetensors").string();
  paths.last_checkpoint = (root / "checkpoint.last.safetensors").string();
  paths.log = (root / "train.log.jsonl").string();
  paths.lock = (root / "train.lock").string();
  return paths;
}

namespace {
constexpr const char* kStepPrefix = "checkpoint.step-";
constexpr const char* kStepSuffix = ".safetensors";
}  // namespace

std::string step_checkpoint_path(const std::string& dir, int64_t step) {
  return (fs::path(dir) / (kStepPrefix + std::to_string(step) + kStepSuffix)).string();
}

std::vector<std::string> step_checkpoints(const std::string& dir) {
  std::vector<std::pair<int64_t, std::string>> found;
  const std::string prefix = kStepPrefix, suffix = kStepSuffix;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= prefix.size() + suffix.size() || name.compare(0, prefix.size(), prefix) != 0 ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    const std::string digits = name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
    if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 18) continue;
    found.emplace_back(std::stoll(digits), entry.path().string());
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> paths;
  for (auto& [step, path] : found) paths.push_back(std::move(path));
  return paths;
}

namespace {

struct EntryPattern {
  const char* glob;  // a name, or a name with one '*' standing for any characters
  RunEntry kind;
  bool directory = false;
};

// The list of run_files.h, in the order messages name files; the first that matches decides.
const EntryPattern kEntryPatterns[] = {
    {"config.json", RunEntry::run_file},
    {"vocab.sha256", RunEntry::run_file},
    {"train.log.jsonl", RunEntry::run_file},
    {"checkpoint.best.safetensors", RunEntry::run_file},
    {"checkpoint.last.safetensors", RunEntry::run_file},
    {"checkpoint.average.safetensors", RunEntry::run_file},
    {"checkpoint.step-*.safetensors", RunEntry::run_file},
    {"*.safetensors", RunEntry::run_file},
    {"alignment.json", RunEntry::run_file},
    {"test.*", RunEntry::run_file},
    {"spm.model", RunEntry::vocabulary},
    {"spm.vocab", RunEntry::vocabulary},
    {"spm.src.model", RunEntry::vocabulary},
    {"spm.src.vocab", RunEntry::vocabulary},
    {"spm.tgt.model", RunEntry::vocabulary},
    {"spm.tgt.vocab", RunEntry::vocabulary},
    {"*.tmp", RunEntry::leftover},        // io/atomic_file.h's PATH.tmp
    {"*.tmp.model", RunEntry::leftover},  // a vocabulary being trained (train/run_directory.cpp)
    {"*.tmp.vocab", RunEntry::leftover},
    {"train.lock", RunEntry::lock},
    {"previous-run-*", RunEntry::earlier_run, true},
};
constexpr size_t kNoPattern = std::size(kEntryPatterns);

bool glob_matches(const std::string& glob, const std::string& name) {
  const size_t star = glob.find('*');
  if (star == std::string::npos) return glob == name;
  const size_t suffix = glob.size() - star - 1;
  return name.size() >= glob.size() - 1 && name.compare(0, star, glob, 0, star) == 0 &&
         name.compare(name.size() - suffix, suffix, glob, star + 1, suffix) == 0;
}

// The index in kEntryPatterns of the pattern `name` matches, or kNoPattern.
size_t pattern_of(const std::string& name, bool is_directory) {
  for (size_t i = 0; i < kNoPattern; ++i)
    if (kEntryPatterns[i].directory == is_directory && glob_matches(kEntryPatterns[i].glob, name)) return i;
  return kNoPattern;
}

RunEntry kind_of(size_t pattern) { return pattern == kNoPattern ? RunEntry::unknown : kEntryPatterns[pattern].kind; }

}  // namespace

RunEntry run_entry_kind(const std::string& name, bool is_directory) { return kind_of(pattern_of(name, is_directory)); }

std::vector<std::string> run_entries(const std::string& dir, RunEntry kind) {
  std::vector<std::pair<size_t, std::string>> found;
  if (!fs::exists(dir)) return {};
  std::error_code error;
  fs::directory_iterator entries(dir, error);
  ATTN_CHECK(!error, "cannot read the run directory ", dir, ": ", error.message());
  for (const fs::directory_entry& entry : entries) {
    const std::string name = entry.path().filename().string();
    std::error_code ignored;  // a dangling symlink is no directory
    const size_t pattern = pattern_of(name, entry.is_directory(ignored));
    if (kind_of(pattern) == kind) found.emplace_back(pattern, name);
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> names;
  for (auto& [pattern, name] : found) names.push_back(std::move(name));
  return names;
}

std::string new_run_id() {
  std::random_device device;  // the system's entropy: two runs started at once still differ
  std::string id;
  for (int word = 0; word < 4; ++word) {
    char hex[9];
    std::snprintf(hex, sizeof hex, "%08x", static_cast<unsigned>(device()));
    id += hex;
  }
  return id;
}

std::string run_id_of(const std::string& checkpoint, const std::map<std::string, std::string>& metadata) {
  auto found = metadata.find(kRunIdKey);
  if (found == metadata.end()) return "";  // saved before run ids
  const std::string& id = found->second;
  ATTN_CHECK(id.size() == 32 && id.find_first_not_of("0123456789abcdef") == std::string::npos, checkpoint,
             ": checkpoint metadata \"", kRunIdKey, "\" is not 32 lowercase hex digits");
  return id;
}

Vocabularies load_vocabularies(const RunPaths& paths) {
  Vocabularies vocab{data::Vocab::load(paths.source_vocab), data::Vocab::load(paths.target_vocab), {}};
  for (const std::string& path : {paths.source_vocab, paths.target_vocab}) {
    const std::string name = fs::path(path).filename().string();
    if (!vocab.digests.count(name)) vocab.digests[name] = io::sha256_of_file(path);  // joint: hashed once
  }
  return vocab;
}

std::string digests_to_json(const VocabDigests& digests) { return nlohmann::json(digests).dump(); }

void write_vocab_record(const RunPaths& paths, const VocabDigests& digests) {
  std::string text;
  for (const auto& [name, digest] : digests) text += digest + "  " + name + "\n";  // sha256sum's format
  io::write_file_atomically(paths.vocab_record, text);
}

std::optional<VocabDigests> read_vocab_record(const RunPaths& paths) {
  std::ifstream file(paths.vocab_record);
  if (!file.is_open()) return std::nullopt;
  VocabDigests digests;
  std::string line;
  for (int number = 1; std::getline(file, line); ++number) {
    if (line.empty()) continue;
    const bool valid = line.size() > 66 && line.find_first_not_of("0123456789abcdef") == 64 &&
                       (line.compare(64, 2, "  ") == 0 || line.compare(64, 2, " *") == 0);
    ATTN_CHECK(valid, paths.vocab_record, ":", number, ": not a line \"SHA256  FILE\" as sha256sum writes");
    digests[line.substr(66)] = line.substr(0, 64);
  }
  return digests;
}

void check_vocab_record(const RunPaths& paths, const VocabDigests& recorded, const VocabDigests& actual) {
  for (const auto& [name, digest] : actual) {
    auto found = recorded.find(name);
    ATTN_CHECK(found != recorded.end(), paths.vocab_record, " has no sha256 of ", name,
               ", the vocabulary this config uses: is vocab.joint not what the run was trained with?");
    ATTN_CHECK(found->second == digest, (fs::path(paths.dir) / name).string(),
               " is not the vocabulary this run was trained with: its sha256 is ", digest, " but ", paths.vocab_record,
               " records ", found->second,
               ". The run's checkpoints work only with their own vocabulary: put the original file back");
  }
}

void check_checkpoint_vocabulary(const std::string& checkpoint, const std::map<std::string, std::string>& metadata,
                                 const VocabDigests& digests) {
  auto found = metadata.find(kVocabDigestsKey);
  if (found == metadata.end()) return;  // saved before the record existed
  nlohmann::json recorded = nlohmann::json::parse(found->second, nullptr, false);
  bool valid = recorded.is_object();
  for (const auto& item : recorded.items()) valid = valid && item.value().is_string();
  ATTN_CHECK(valid, checkpoint, ": checkpoint metadata \"", kVocabDigestsKey,
             "\" is not a JSON object of file name -> sha256");
  const fs::path dir = fs::path(checkpoint).parent_path();
  for (const auto& [name, digest] : digests) {
    const std::string saved = recorded.contains(name) ? recorded[name].get<std::string>() : "(none)";
    ATTN_CHECK(saved == digest, checkpoint, " was trained with another vocabulary: it records sha256 ", saved, " for ",
               name, " but ", (dir / name).string(), " has ", digest, ". Put the run's original vocabulary back");
  }
}

void check_checkpoint_model(const std::string& checkpoint, const std::map<std::string, std::string>& metadata,
                            const io::Config& config) {
  if (config.model.type != ModelType::transformer) return;
  auto found = metadata.find("config");
  if (found == metadata.end()) return;  // saved without its config
  const nlohmann::json recorded = nlohmann::json::parse(found->second, nullptr, false);
  if (!recorded.is_object()) return;
  const nlohmann::json current = io::config_to_json(config);
  for (const std::string key : {"positions", "activation"}) {
    const nlohmann::json::json_pointer pointer("/model/transformer/" + key);
    if (!recorded.contains(pointer) || !current.contains(pointer)) continue;
    const std::string was = recorded.at(pointer).dump(), is = current.at(pointer).dump();
    ATTN_CHECK(was == is, checkpoint, " was trained with model.transformer.", key, " ", was, " but the config has ", is,
               ": its parameters mean something else under another value; set model.transformer.", key, " to ", was);
  }
}

}  // namespace attn::run

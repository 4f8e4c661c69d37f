// attn-export --format ctranslate2 from the command line: tiny runs of every position scheme,
// norm placement, activation and embedding sharing, exported as float32, int8, float16 and
// bfloat16, each read back by tools/read-ctranslate2-model.py (an independent reader of
// CTranslate2's model.bin and of the safetensors checkpoint) and compared tensor by tensor;
// the RNN and an occupied --out are refused in one line.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "apps/app_fixtures.h"
#include "data/vocab.h"
#include "skip.h"

using namespace attn::testing;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

// The system interpreter: Debian's python3-numpy is its package.
const std::string kPython = fs::exists("/usr/bin/python3") ? "/usr/bin/python3" : "python3";
const std::string kReader = std::string(ATTN_SOURCE_DIR) + "/tools/read-ctranslate2-model.py";

bool numpy_available() { return std::system((kPython + " -c 'import numpy' 2>/dev/null").c_str()) == 0; }

// A tiny run trained with `model` merged into the config's "model" section (and `vocab` into
// "vocab"); returns its directory.
std::string train_run(const TempDir& dir, const std::string& model_type, const json& model, const json& vocab,
                      const json& train = json::object()) {
  const std::string config_path = write_tiny_setup(dir, train, model_type);
  json config = json::parse(read_text(config_path));
  config["model"].merge_patch(model);
  config["vocab"].merge_patch(vocab);
  std::ofstream(config_path) << config.dump(2) << '\n';
  Result trained = run_program(dir, "attn-train", "--config " + quoted(config_path));
  INFO("attn-train stderr:\n" << trained.err);
  REQUIRE(trained.exit_code == 0);
  return dir.file("run");
}

Result read_back(const TempDir& dir, const std::string& model_dir, const std::string& run_dir,
                 const std::string& quantization) {
  const std::string out = dir.file("reader.out");
  const std::string command = kPython + " " + quoted(kReader) + " " + quoted(model_dir) + " --run " + quoted(run_dir) +
                              " --quantization " + quantization + " > " + quoted(out) + " 2>&1";
  const int status = std::system(command.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_text(out), ""};
}

// Flips one bit of the last float of the first tensor found after `name` in model.bin.
void corrupt_after(const std::string& path, const std::string& name) {
  std::string bytes = read_text(path);
  const size_t at = bytes.find(name);
  REQUIRE(at != std::string::npos);
  // name, NUL, rank 2, 2 dims, type, byte count: the data follows; its 8th byte is inside it.
  bytes[at + name.size() + 1 + 1 + 8 + 1 + 4 + 7] ^= 0x01;
  std::ofstream(path, std::ios::binary) << bytes;
}

// Greedy translations of `source_file` by the reader's numpy run of the exported model (source and
// output as pieces, encoded and decoded here with the run's vocabularies).
std::vector<std::string> reader_translations(const TempDir& dir, const std::string& model_dir, const std::string& run,
                                             bool joint, const std::string& source_file, int64_t limit) {
  const attn::data::Vocab source = attn::data::Vocab::load(run + (joint ? "/spm.model" : "/spm.src.model"));
  const attn::data::Vocab target = attn::data::Vocab::load(run + (joint ? "/spm.model" : "/spm.tgt.model"));
  std::vector<std::string> piece_lines;
  for (const std::string& line : split_lines(read_text(source_file))) {
    std::string pieces;
    for (int32_t id : source.encode(line)) pieces += (pieces.empty() ? "" : " ") + source.piece(id);
    piece_lines.push_back(pieces);
  }
  write_lines(dir.file("source.pieces"), piece_lines);
  // decode.max_len_ratio 1.5 and max_len_extra 10 (the defaults), and the model's length limit.
  const std::string command = kPython + " " + quoted(kReader) + " " + quoted(model_dir) + " --translate 1.5 10 " +
                              std::to_string(limit) + " < " + quoted(dir.file("source.pieces")) + " > " +
                              quoted(dir.file("output.pieces"));
  REQUIRE(std::system(command.c_str()) == 0);
  std::vector<std::string> texts;
  for (const std::string& line : split_lines(read_text(dir.file("output.pieces")))) {
    std::vector<int32_t> ids;
    std::istringstream words(line);
    for (std::string piece; words >> piece;) ids.push_back(target.piece_to_id(piece));
    texts.push_back(target.decode(ids));
  }
  return texts;
}

struct ExportCase {
  std::string name;
  json model, vocab;
  std::string quantization;
};

}  // namespace

TEST_CASE("attn-export writes CTranslate2 models that an independent reader finds equal to the run's checkpoint",
          "[cli][export][tools][slow]") {
  ATTN_SKIP_UNLESS(numpy_available(), "numpy is not installed (python3-numpy): the reader cannot run");
  const ExportCase c = GENERATE(
      ExportCase{"post-norm sinusoidal relu tied and shared", json::object(), json::object(), "float32"},
      ExportCase{"pre-norm gelu learned separate untied",
                 {{"shared_embeddings", false},
                  {"tied_embeddings", false},
                  {"transformer", {{"norm", "pre"}, {"activation", "gelu"}, {"positions", "learned"}}}},
                 {{"joint", false}, {"size", 40}},
                 "float32"},
      ExportCase{"alibi with 3 heads",
                 {{"transformer", {{"positions", "alibi"}, {"d_model", 18}, {"heads", 3}}}},
                 json::object(),
                 "float32"},
      ExportCase{"rotary", {{"transformer", {{"positions", "rotary"}}}}, json::object(), "float32"},
      ExportCase{"int8", json::object(), json::object(), "int8"},
      ExportCase{"int8 separate untied pre-norm",
                 {{"shared_embeddings", false}, {"tied_embeddings", false}, {"transformer", {{"norm", "pre"}}}},
                 {{"joint", false}, {"size", 40}},
                 "int8"},
      ExportCase{"float16 rotary", {{"transformer", {{"positions", "rotary"}}}}, json::object(), "float16"},
      ExportCase{"bfloat16 alibi", {{"transformer", {{"positions", "alibi"}}}}, json::object(), "bfloat16"});
  INFO(c.name);
  TempDir dir;
  // Trained long enough that its translations are not all alike.
  const std::string run = train_run(dir, "transformer", c.model, c.vocab, {{"max_steps", 300}}), out = dir.file("ct2");
  Result exported = run_program(
      dir, "attn-export",
      "--format ctranslate2 --model " + quoted(run) + " --out " + quoted(out) + " --quantization " + c.quantization);
  INFO("attn-export stderr:\n" << exported.err);
  REQUIRE(exported.exit_code == 0);
  CHECK(fs::exists(out + "/model.bin"));
  CHECK(fs::exists(out + "/config.json"));
  const bool joint = !c.vocab.contains("joint");
  CHECK(fs::exists(out + "/shared_vocabulary.json") == joint);
  CHECK(fs::exists(out + "/source_vocabulary.json") == !joint);
  CHECK(fs::exists(out + "/target_vocabulary.json") == !joint);
  for (const auto& entry : fs::directory_iterator(dir.path()))  // no staging directory left
    CHECK_THAT(entry.path().filename().string(), !Catch::Contains(".tmp-"));

  Result read = read_back(dir, out, run, c.quantization);
  INFO("reader:\n" << read.out);
  CHECK(read.exit_code == 0);
  CHECK_THAT(read.out, Catch::StartsWith("ok: "));

  if (c.quantization == "float32") {
    // The model, run as CTranslate2 runs it (the reader's numpy Transformer), translates as
    // attn-translate does with the settings docs/guide.md gives (greedy, no length penalty).
    const json config = json::parse(read_text(run + "/config.json"));
    const json& transformer = config["model"]["transformer"];
    const bool table = transformer["positions"] == "sinusoidal" || transformer["positions"] == "learned";
    const int64_t limit =
        table ? transformer["max_positions"].get<int64_t>() : 4 * config["data"]["max_len"].get<int64_t>();
    const std::vector<std::string> ct2 =
        reader_translations(dir, out, run, !c.vocab.contains("joint"), dir.file("valid.src"), limit);
    Result attn_lines =
        run_program(dir, "attn-translate", "--model " + quoted(run) + " --beam 1 --length-penalty 0 --quiet",
                    dir.file("valid.src"));
    REQUIRE(attn_lines.exit_code == 0);
    const std::vector<std::string> expected = split_lines(attn_lines.out);
    REQUIRE(ct2.size() == expected.size());
    size_t same = 0;
    for (size_t i = 0; i < ct2.size(); ++i) same += ct2[i] == expected[i];
    INFO("identical translations: " << same << " of " << ct2.size());
    CHECK(same == ct2.size());
  }

  // The reader is not blind: one flipped bit of a weight, or the wrong type, fails it.
  Result wrong_type = read_back(dir, out, run, c.quantization == "float32" ? "float16" : "float32");
  CHECK(wrong_type.exit_code == 1);
  corrupt_after(out + "/model.bin", "decoder/layer_0/ffn/linear_0/weight");
  Result corrupted = read_back(dir, out, run, c.quantization);
  CHECK(corrupted.exit_code == 1);
  CHECK_THAT(corrupted.out, Catch::Contains("decoder/layer_0/ffn/linear_0/weight"));
}

TEST_CASE("attn-export refuses the RNN in one line that names model.type", "[cli][export]") {
  TempDir dir;
  const std::string run = train_run(dir, "rnn", json::object(), json::object()), out = dir.file("ct2");
  Result refused =
      run_program(dir, "attn-export", "--format ctranslate2 --model " + quoted(run) + " --out " + quoted(out));
  check_refused(refused, "model.type rnn cannot be expressed in CTranslate2 (Transformer only)");
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("attn-export replaces a non-empty --out only with --force - and never exports into the run",
          "[cli][export]") {
  TempDir dir;
  const std::string run = train_run(dir, "transformer", json::object(), json::object()), out = dir.file("ct2");
  const std::string export_args = "--format ctranslate2 --model " + quoted(run) + " --out " + quoted(out);
  fs::create_directories(out);
  write_lines(out + "/keep.txt", {"mine"});

  Result refused = run_program(dir, "attn-export", export_args);
  check_refused(refused, "--out " + out + " is not empty; add --force to replace it");
  CHECK(read_text(out + "/keep.txt") == "mine\n");
  CHECK_FALSE(fs::exists(out + "/model.bin"));

  Result forced = run_program(dir, "attn-export", export_args + " --force");
  INFO("stderr:\n" << forced.err);
  CHECK(forced.exit_code == 0);
  CHECK(fs::exists(out + "/model.bin"));
  CHECK_FALSE(fs::exists(out + "/keep.txt"));  // the directory was replaced whole
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    CHECK_THAT(entry.path().filename().string(), !Catch::Contains(".tmp-"));
    CHECK_THAT(entry.path().filename().string(), !Catch::Contains(".old-"));
  }

  Result into_run = run_program(dir, "attn-export",
                                "--format ctranslate2 --model " + quoted(run) + " --out " + quoted(run) + " --force");
  check_refused(into_run, "is the run being exported");
  CHECK(fs::exists(run + "/checkpoint.best.safetensors"));

  Result no_format = run_program(dir, "attn-export", "--format onnx --model " + quoted(run) + " --out " + quoted(out));
  check_refused(no_format, "--format");
}

// attn-tokenize: SentencePiece by hand. Trains a vocabulary, or encodes / decodes stdin to
// stdout one line at a time (pieces or ids, space-separated).
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "app_main.h"
#include "data/vocab.h"

namespace {

using attn::data::Vocab;

void encode_stream(const Vocab& vocab, bool as_ids) {
  std::string line;
  while (std::getline(std::cin, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const auto ids = vocab.encode(line);
    for (size_t i = 0; i < ids.size(); ++i)
      std::cout << (i ? " " : "") << (as_ids ? std::to_string(ids[i]) : vocab.piece(ids[i]));
    std::cout << '\n';
  }
}

// Reads one space-separated line of ids or pieces.
std::vector<int32_t> parse_tokens(const Vocab& vocab, const std::string& line, bool as_ids) {
  std::istringstream tokens(line);
  std::vector<int32_t> ids;
  std::string token;
  while (tokens >> token) {
    if (!as_ids) {
      ids.push_back(vocab.piece_to_id(token));
      continue;
    }
    size_t used = 0;
    int id = -1;
    try {
      id = std::stoi(token, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != token.size()) throw std::runtime_error("'" + token + "' is not a token id");
    ids.push_back(id);
  }
  return ids;
}

void decode_stream(const Vocab& vocab, bool as_ids) {
  std::string line;
  while (std::getline(std::cin, line)) std::cout << vocab.decode(parse_tokens(vocab, line, as_ids)) << '\n';
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"attn-tokenize: train, encode and decode SentencePiece vocabularies"};
  app.require_subcommand(1);
  using attn::apps::at_least;

  attn::data::VocabTrainOptions train;
  auto* train_command = app.add_subcommand("train", "train a vocabulary (writes PREFIX.model and PREFIX.vocab)");
  train_command->add_option("--input", train.inputs, "text file, one sentence per line (repeatable)")->required();
  train_command->add_option("--model-prefix", train.model_prefix, "output prefix")->required();
  attn::apps::add_choice_option(*train_command, "--type", train.type, "model type: unigram or bpe");
  train_command->add_option("--vocab-size", train.vocab_size, "number of pieces, specials included")
      ->check(at_least(5));  // the 4 specials and at least one piece
  train_command->add_option("--character-coverage", train.character_coverage, "share of characters kept, in (0, 1]")
      ->check(attn::apps::in_range(0, 1, true));
  train_command->add_option("--max-sentences", train.max_sentences, "sample at most this many sentences")
      ->check(at_least(1));
  train_command->add_option("--seed", train.seed, "sampling seed");
  train_command->add_option("--threads", train.threads, "trainer threads (0: all)")->check(at_least(0));

  std::string model;
  bool as_ids = false;
  auto* encode_command = app.add_subcommand("encode", "text on stdin -> pieces (or ids) on stdout");
  auto* decode_command = app.add_subcommand("decode", "pieces (or ids) on stdin -> text on stdout");
  for (auto* command : {encode_command, decode_command}) {
    command->add_option("--model", model, "SentencePiece model (PREFIX.model)")->required();
    command->add_flag("--ids", as_ids, "ids instead of pieces");
  }

  return attn::apps::run_app(app, argc, argv, [&] {
    if (train_command->parsed()) attn::data::train_vocab(train);
    if (encode_command->parsed()) encode_stream(Vocab::load(model), as_ids);
    if (decode_command->parsed()) decode_stream(Vocab::load(model), as_ids);
    return 0;
  });
}

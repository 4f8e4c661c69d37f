#pragma once
// The run directory (config output_dir): everything needed to translate and to resume.
//
//   config.json                       the resolved config
//   spm.model, spm.vocab              joint SentencePiece vocabulary (vocab.joint)
//   spm.src.model, spm.tgt.model      separate vocabularies otherwise
//   checkpoint.best.safetensors       best by train.valid_metric
//   checkpoint.last.safetensors       latest, with optimizer and training state (for --resume)
//   train.log.jsonl                   one JSON object per log line
#include <memory>
#include <string>

#include "data/vocab.h"
#include "io/config.h"
#include "models/seq2seq_model.h"

namespace attn::train {

struct RunPaths {
  std::string dir;
  std::string config;
  std::string source_vocab;  // same file as target_vocab when joint
  std::string target_vocab;
  std::string best_checkpoint;
  std::string last_checkpoint;
  std::string log;
};

RunPaths run_paths(const std::string& dir, bool joint_vocab);

struct Vocabularies {
  data::Vocab source;
  data::Vocab target;
};

// Loads the run's vocabularies, training them first (from the training corpus) when missing.
Vocabularies prepare_vocabularies(const io::Config& config, const RunPaths& paths);

// A trained run, ready to translate: its config, vocabularies and model with the best (or,
// failing that, the last) checkpoint's parameters.
struct LoadedRun {
  io::Config config;
  RunPaths paths;
  std::unique_ptr<Vocabularies> vocab;
  std::unique_ptr<models::Seq2SeqModel> model;
  std::string checkpoint;  // the file the parameters came from
};

LoadedRun load_run(const std::string& dir);

}  // namespace attn::train

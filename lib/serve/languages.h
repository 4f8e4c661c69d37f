#pragma once
// The language pair attn-serve announces (GET /languages) and checks requests against: the
// run config's `languages` key, or, when it is unset, the extensions of data.train_src and
// data.train_tgt when both are two-letter language codes ("train.en", "train.it"), as runs trained before
// the key have them. Otherwise attn-serve refuses to start: a LibreTranslate client picks
// languages by code, and a guessed code would send it the wrong model.
#include <string>

#include "io/config.h"

namespace attn::serve {

struct LanguagePair {
  std::string source, target;
};

// `config_path` names the run's config.json in the error.
LanguagePair run_languages(const io::Config& config, const std::string& config_path);

// "English" for "en", ...: LibreTranslate's names of its languages; the code itself for others.
std::string language_name(const std::string& code);

}  // namespace attn::serve

#pragma once
// The training and validation files a config names, checked before attn-train writes anything,
// so that a bad input never leaves a half-made run directory behind.
#include "io/config.h"

namespace attn::train {

// Throws attn::Error naming the config key and the path of the first file that is unset,
// missing, a directory, unreadable, or without text (empty or only blank lines), or naming
// both files and their line counts when the two sides of a pair differ in length.
void check_input_files(const io::Config& config);

}  // namespace attn::train

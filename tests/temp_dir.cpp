#include "temp_dir.h"

#include <stdexcept>
#include <stdlib.h>

namespace attn::testing {

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "attn-test-XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw std::runtime_error("cannot create a temporary directory");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::permissions(path_, std::filesystem::perms::owner_all, ignored);
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace attn::testing

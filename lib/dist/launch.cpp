#include "dist/launch.h"

#include <algorithm>
#include <cstdlib>
#include <string>

namespace attn::dist {

int launched_world_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}) {
    const char* value = std::getenv(name);
    if (value == nullptr) continue;
    try {
      return std::max(1, std::stoi(value));
    } catch (const std::exception&) {
      return 1;  // a launcher would never write this; treat the process as alone
    }
  }
  return 1;
}

}  // namespace attn::dist

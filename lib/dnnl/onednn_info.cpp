#include "dnnl/onednn_info.h"

#include <cstdio>
#include <oneapi/dnnl/dnnl.h>

namespace attn::dnn {

std::string onednn_version() {
  const dnnl_version_t* v = dnnl_version();
  std::string hash = v->hash ? v->hash : "";
  std::string text = std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
  if (!hash.empty() && hash != "N/A") text += " (commit " + hash.substr(0, 8) + ")";
  return text;
}

std::string cpu_isa_name() {
  // By value rather than by enumerator: oneDNN 3 renamed and removed some enumerators, and a
  // library newer than this table still gets a readable answer.
  struct Isa {
    unsigned value;
    const char* name;
  };
  static const Isa kIsas[] = {{0x0, "all"},
                              {0x1, "sse41"},
                              {0x3, "avx"},
                              {0x7, "avx2"},
                              {0x407, "avx2_vnni"},
                              {0xf, "avx512_mic"},
                              {0x1f, "avx512_mic_4ops"},
                              {0x27, "avx512_core"},
                              {0x67, "avx512_core_vnni"},
                              {0xe7, "avx512_core_bf16"},
                              {0x3e7, "avx512_core_amx"}};
  const auto isa = static_cast<unsigned>(dnnl_get_effective_cpu_isa());
  for (const Isa& known : kIsas)
    if (known.value == isa) return known.name;
  char unknown[32];
  std::snprintf(unknown, sizeof(unknown), "isa 0x%x", isa);
  return unknown;
}

}  // namespace attn::dnn

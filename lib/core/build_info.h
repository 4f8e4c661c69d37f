#pragma once
// What this binary is: attn's version and the commit it was built from (`--version`).
// The definitions are generated at build time (cmake/build_info.cmake), so they follow the
// checkout without a reconfigure.

namespace attn {

// The CMake project version, e.g. "0.1.0".
const char* version();
// The git commit the sources were at when built (12 hex digits), with "-dirty" when tracked
// files differed from it; "unknown" when the sources are not a git checkout.
const char* git_commit();

}  // namespace attn

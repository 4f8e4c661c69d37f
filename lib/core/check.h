#pragma once
// ATTN_CHECK: the one way the library reports bad input or broken invariants.
// It throws attn::Error (never aborts) so that apps can print one clear line and exit non-zero.
#include <sstream>
#include <stdexcept>
#include <string>

namespace attn {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {
// Streams every argument into one message: ATTN_CHECK(a == b, "a=", a, " b=", b).
template <class... Args>
[[noreturn]] void fail(const char* condition, const char* file, int line, const Args&... args) {
  std::ostringstream message;
  (message << ... << args);
  if (message.tellp() == 0) message << "check failed: " << condition << " (" << file << ":" << line << ")";
  throw Error(message.str());
}
}  // namespace detail

}  // namespace attn

#define ATTN_CHECK(condition, ...)                                                         \
  do {                                                                                     \
    if (!(condition)) ::attn::detail::fail(#condition, __FILE__, __LINE__, ##__VA_ARGS__); \
  } while (0)

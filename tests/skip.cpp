// The listener that turns a test case's recorded skips into the marker line ctest reads
// (tests/skip.h).
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include "skip.h"

#include <set>
#include <string>

#include <catch2/catch.hpp>

namespace attn::testing {
namespace {

// The reasons recorded by the running test case (one per distinct reason).
std::set<std::string>& skip_reasons() {
  static std::set<std::string> reasons;
  return reasons;
}

class SkipListener : public Catch::TestEventListenerBase {
 public:
  using TestEventListenerBase::TestEventListenerBase;

  void testCaseStarting(const Catch::TestCaseInfo& info) override {
    TestEventListenerBase::testCaseStarting(info);
    skip_reasons().clear();
  }

  void testCaseEnded(const Catch::TestCaseStats& stats) override {
    const Catch::Counts& checks = stats.totals.assertions;
    for (const std::string& reason : skip_reasons()) {
      if (checks.failed > 0) {
        // No marker: the test case fails as it would without the skip.
        stream << "a failed test case is not skipped (it also skipped: " << reason << ")\n";
      } else {
        stream << kSkipMarker << reason << " [test case \"" << stats.testInfo.name << '"';
        if (checks.passed > 0) stream << "; its other parts passed " << checks.passed << " checks";
        stream << "]\n";
      }
    }
    skip_reasons().clear();
    TestEventListenerBase::testCaseEnded(stats);
  }
};

CATCH_REGISTER_LISTENER(SkipListener)

}  // namespace

void record_skip(const std::string& reason) { skip_reasons().insert(reason); }

}  // namespace attn::testing

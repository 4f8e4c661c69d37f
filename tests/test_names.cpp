// ctest learns the test names from `attn_tests --list-test-names-only` through Catch2's
// CatchAddTests.cmake, which reads them as a CMake list: a ';' splits a name in two, a ','
// makes the name a two-way test spec that matches neither half when ctest runs it, and an
// unbalanced '[' or ']' glues every later name into one test that matches nothing and
// "passes"; a name that starts with '-' is taken for an option. Either way tests silently
// stop running under ctest (and CI); this test keeps such names out.
#include <string>

#include <catch2/catch.hpp>

TEST_CASE("no test name holds a character that breaks ctest's test discovery", "[meta]") {
  int checked = 0;
  for (const Catch::TestCase& test : Catch::getRegistryHub().getTestCaseRegistry().getAllTests()) {
    INFO("test case: " << test.getTestCaseInfo().name);
    const std::string& name = test.getTestCaseInfo().name;
    CHECK(name.find_first_of(";,[]") == std::string::npos);
    CHECK(name.front() != '-');
    ++checked;
  }
  CHECK(checked > 100);
}

#include <set>
#include <string>

#include <catch2/catch.hpp>

#include "core/choice.h"

namespace attn {
namespace {

// Every value of a choice's table has one name that parses back to it, and the names are distinct.
template <class E>
void check_round_trip() {
  std::set<std::string> names;
  for (const auto& [value, name] : ChoiceNames<E>::table) {
    CHECK(parse_choice<E>(name) == value);
    CHECK(std::string(choice_name(value)) == name);
    CHECK(names.insert(name).second);
  }
  CHECK_FALSE(parse_choice<E>("").has_value());
  CHECK_FALSE(parse_choice<E>("no-such-choice").has_value());
}

TEST_CASE("every choice's names parse back to their values", "[core][choice]") {
  check_round_trip<Precision>();
  check_round_trip<ModelType>();
  check_round_trip<Norm>();
  check_round_trip<Positions>();
  check_round_trip<Activation>();
  check_round_trip<CellType>();
  check_round_trip<ScheduleType>();
  check_round_trip<VocabType>();
  check_round_trip<ValidMetric>();
}

TEST_CASE("a choice's names are listed in table order for messages", "[core][choice]") {
  CHECK(choice_list<Norm>() == "\"post\", \"pre\"");
  CHECK(choice_list<Precision>() == "\"f32\", \"bf16\", \"int8\", \"auto\"");
  CHECK(std::string(choice_name(Precision::automatic)) == "auto");
  CHECK_FALSE(parse_choice<Precision>("F32").has_value());  // names are exact, as JSON keys are
  static_assert(is_choice_v<Norm> && !is_choice_v<int>);
}

}  // namespace
}  // namespace attn

#pragma once
// Generic, strict JSON <-> typed-struct machinery for configs.
//
// A config struct lists its fields once, through a visitor:
//
//   struct TransformerConfig {
//     int d_model = 256;
//     Activation activation = Activation::relu;   // a choice (core/choice.h): read from its name
//     template <class V> void visit(V& v) { v("d_model", d_model); v("activation", activation); }
//     void validate(const std::string& path) const;   // optional: range and subset checks
//   };
//
// read_struct / write_struct / validate_struct walk that list, so adding a field is one line.
// Reading is strict on purpose: a typo in a config silently falling back to a default costs a
// whole training run, so unknown keys and wrong types are errors that name the dotted key.
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/check.h"
#include "core/choice.h"

namespace attn::io {

// A time span read from a number of seconds or from a string such as "90s", "45m", "2h",
// "1h30m" (units d, h, m, s; each part may have a fraction: "1.5h").
struct Duration {
  double seconds = 0;
  bool operator==(const Duration& other) const { return seconds == other.seconds; }
  bool operator!=(const Duration& other) const { return !(*this == other); }
};

// One attention head by its index, or the mean over the heads: read from an integer >= 0 or
// "mean", and written back the same way.
struct AttentionHead {
  std::optional<int> index;  // unset: the mean
  bool operator==(const AttentionHead& other) const { return index == other.index; }
};

// Parses the string form of a Duration; throws attn::Error naming the text when malformed.
Duration parse_duration(const std::string& text);
// The inverse of parse_duration for whole seconds ("1h30m", "0s"); fractions as "0.5s".
std::string format_duration(Duration duration);

// Parses JSON text that may hold // and /* */ comments. A syntax error becomes
// attn::Error("SOURCE:LINE:COLUMN: what went wrong").
nlohmann::json parse_config_text(const std::string& text, const std::string& source);
// Reads and parses a config file; a missing file is an error naming it.
nlohmann::json read_config_file(const std::string& path);

// Applies one "--set a.b.c=value" assignment. The value is taken as JSON when it parses
// (numbers, true/false, quoted strings, lists) and as a plain string otherwise, so both
// `model.type=rnn` and `train.max_steps=100` work. Missing objects on the path are created;
// keys that the schema does not know are rejected later by read_struct.
void apply_override(nlohmann::json& config, const std::string& assignment);

// "model" + "heads" -> "model.heads"; "" + "model" -> "model".
std::string join_key(const std::string& path, const std::string& name);
// "data.train" + 2 -> "data.train[2]".
std::string element_key(const std::string& key, size_t index);

// The closest candidate by edit distance (adjacent transpositions count 1), or "" when
// nothing is close enough to be a plausible typo.
std::string closest_match(const std::string& name, const std::vector<std::string>& candidates);

// Validation helpers: each throws attn::Error naming `key` and the offending value.
void require_at_least(const std::string& key, double value, double min);
void require_positive(const std::string& key, double value);
void require_fraction(const std::string& key, double value);  // value in [0, 1)
// A choice limited to some values of its table (train.precision has no int8).
template <class E>
void require_choice_in(const std::string& key, E value, std::initializer_list<E> allowed) {
  std::string list;
  for (E option : allowed) {
    if (option == value) return;
    list += (list.empty() ? "\"" : ", \"") + std::string(choice_name(option)) + "\"";
  }
  throw Error(key + " must be one of " + list + "; got \"" + choice_name(value) + "\"");
}

namespace detail {

// Leaf readers: `key` is the full dotted key, used in every error message.
bool read_bool(const nlohmann::json& j, const std::string& key);
std::int64_t read_integer(const nlohmann::json& j, const std::string& key, std::int64_t min, std::int64_t max);
double read_real(const nlohmann::json& j, const std::string& key);
std::string read_string(const nlohmann::json& j, const std::string& key);
std::vector<std::string> read_string_list(const nlohmann::json& j, const std::string& key);
Duration read_duration(const nlohmann::json& j, const std::string& key);
AttentionHead read_attention_head(const nlohmann::json& j, const std::string& key);
// A choice from its name: "KEY must be one of "a", "b"; got "x"" otherwise.
template <class E>
E read_choice(const nlohmann::json& j, const std::string& key) {
  const std::string name = read_string(j, key);
  if (std::optional<E> value = parse_choice<E>(name)) return *value;
  throw Error(key + " must be one of " + choice_list<E>() + "; got " + nlohmann::json(name).dump());
}

// Leaf writers that need more than nlohmann's conversion.
nlohmann::json write_float(float value);  // shortest decimal that round-trips: 0.1f -> 0.1
nlohmann::json write_duration(Duration duration);
nlohmann::json write_attention_head(const AttentionHead& head);

// Throws unless `j` is an object whose keys are all in `known` (suggesting the closest one).
void check_object_keys(const nlohmann::json& j, const std::string& path, const std::vector<std::string>& known);

template <class T>
constexpr bool is_leaf_v =
    std::is_arithmetic_v<T> || std::is_same_v<T, std::string> || std::is_same_v<T, std::vector<std::string>> ||
    std::is_same_v<T, Duration> || std::is_same_v<T, AttentionHead> || is_choice_v<T>;

// A list of config structs (data.train: one object per corpus).
template <class T>
struct is_struct_list : std::false_type {};
template <class T, class A>
struct is_struct_list<std::vector<T, A>> : std::bool_constant<!is_leaf_v<T>> {};
template <class T>
constexpr bool is_struct_list_v = is_struct_list<T>::value;

// Throws unless `j` is an array, naming `key`.
void check_array(const nlohmann::json& j, const std::string& key);

template <class T, class = void>
struct has_validate : std::false_type {};
template <class T>
struct has_validate<T, std::void_t<decltype(std::declval<const T&>().validate(std::string()))>> : std::true_type {};

template <class T>
void read_fields(const nlohmann::json& j, T& out, const std::string& path);

template <class T>
void read_value(const nlohmann::json& j, T& out, const std::string& key) {
  if constexpr (std::is_same_v<T, bool>) {
    out = read_bool(j, key);
  } else if constexpr (std::is_integral_v<T>) {
    out = static_cast<T>(read_integer(j, key, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
  } else if constexpr (std::is_floating_point_v<T>) {
    out = static_cast<T>(read_real(j, key));
  } else if constexpr (std::is_same_v<T, std::string>) {
    out = read_string(j, key);
  } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
    out = read_string_list(j, key);
  } else if constexpr (std::is_same_v<T, Duration>) {
    out = read_duration(j, key);
  } else if constexpr (std::is_same_v<T, AttentionHead>) {
    out = read_attention_head(j, key);
  } else if constexpr (is_choice_v<T>) {
    out = read_choice<T>(j, key);
  } else if constexpr (is_struct_list_v<T>) {
    check_array(j, key);
    out.assign(j.size(), typename T::value_type{});
    for (size_t i = 0; i < j.size(); ++i) read_fields(j[i], out[i], element_key(key, i));
  } else {
    read_fields(j, out, key);
  }
}

template <class T>
nlohmann::json write_value(const T& value);

// Collects the field names of a struct, for the unknown-key check.
struct KeyLister {
  std::vector<std::string> names;
  template <class F>
  void operator()(const char* name, F&) {
    names.emplace_back(name);
  }
};

// Reads the fields present in `j`; absent ones keep their defaults.
struct FieldReader {
  const nlohmann::json& j;
  const std::string& path;
  template <class F>
  void operator()(const char* name, F& field) {
    auto it = j.find(name);
    if (it != j.end()) read_value(*it, field, join_key(path, name));
  }
};

struct FieldWriter {
  nlohmann::json& j;
  template <class F>
  void operator()(const char* name, F& field) {
    j[name] = write_value(field);
  }
};

template <class T>
void read_fields(const nlohmann::json& j, T& out, const std::string& path) {
  KeyLister lister;
  out.visit(lister);
  check_object_keys(j, path, lister.names);
  FieldReader reader{j, path};
  out.visit(reader);
}

template <class T>
nlohmann::json write_value(const T& value) {
  if constexpr (std::is_same_v<T, float>) {
    return write_float(value);
  } else if constexpr (std::is_same_v<T, Duration>) {
    return write_duration(value);
  } else if constexpr (std::is_same_v<T, AttentionHead>) {
    return write_attention_head(value);
  } else if constexpr (is_choice_v<T>) {
    return nlohmann::json(choice_name(value));
  } else if constexpr (is_leaf_v<T>) {
    return nlohmann::json(value);
  } else if constexpr (is_struct_list_v<T>) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& element : value) j.push_back(write_value(element));
    return j;
  } else {
    nlohmann::json j = nlohmann::json::object();
    FieldWriter writer{j};
    // visit() is declared non-const so that one list serves reading and writing; the writer
    // only reads the fields it is handed.
    const_cast<T&>(value).visit(writer);
    return j;
  }
}

template <class T>
void validate_struct(const T& value, const std::string& path);

// Validates nested structs (children first, so a parent's cross-field checks see valid parts).
struct NestedValidator {
  const std::string& path;
  template <class F>
  void operator()(const char* name, F& field) {
    if constexpr (!is_leaf_v<F>) validate_struct(field, join_key(path, name));
  }
};

template <class T>
void validate_struct(const T& value, const std::string& path) {
  if constexpr (is_struct_list_v<T>) {
    for (size_t i = 0; i < value.size(); ++i) validate_struct(value[i], element_key(path, i));
    return;
  } else {
    NestedValidator nested{path};
    const_cast<T&>(value).visit(nested);  // reads only, see write_value
    if constexpr (has_validate<T>::value) value.validate(path);
  }
}

}  // namespace detail

// Fills `out` from `j` (keys absent from `j` keep their defaults), rejecting unknown keys and
// wrong types, then runs every validate() in the tree. `path` is the dotted key of `j` ("" at
// the root) and prefixes every key named in an error.
template <class T>
void read_struct(const nlohmann::json& j, T& out, const std::string& path) {
  detail::read_fields(j, out, path);
  detail::validate_struct(out, path);
}

// Every field of `value`, nested structs as nested objects.
template <class T>
nlohmann::json write_struct(const T& value) {
  return detail::write_value(value);
}

}  // namespace attn::io

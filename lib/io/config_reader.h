#pragma once
// Generic, strict JSON <-> typed-struct machinery for configs.
//
// A config struct declares each of its settings once, through a visitor: key, member (its
// type), default, one line of help and the values it allows beyond its type:
//
//   struct TransformerConfig {
//     int d_model;
//     Activation activation;   // a choice (core/choice.h): read from its name
//     TransformerConfig() { set_defaults(*this); }
//     template <class V> void visit(V& v) {
//       v("d_model", d_model, 256, "width of the embeddings and every sublayer", at_least(1));
//       v("activation", activation, Activation::relu, "the FFN's", one_of(Activation::relu, Activation::gelu));
//     }
//     void validate(const std::string& path) const;   // optional: checks that span fields
//   };
//
// A nested section is declared with its help only: v("transformer", transformer, "help").
// read_struct / write_struct / validate_struct / set_defaults / describe_settings walk that list,
// so adding a setting is one line, and its default, range and help cannot drift apart.
// Reading is strict on purpose: a typo in a config silently falling back to a default costs a
// whole training run, so unknown keys and wrong types are errors that name the dotted key.
#include <cmath>
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
// The value of an override's text, read as apply_override reads it.
nlohmann::json override_value(const std::string& key, const std::string& text);

// "model" + "heads" -> "model.heads"; "" + "model" -> "model".
std::string join_key(const std::string& path, const std::string& name);
// "data.train" + 2 -> "data.train[2]".
std::string element_key(const std::string& key, size_t index);

// The closest candidate by edit distance (adjacent transpositions count 1), or "" when
// nothing is close enough to be a plausible typo.
std::string closest_match(const std::string& name, const std::vector<std::string>& candidates);

// Throws attn::Error "KEY must be >= MIN; got VALUE": for a bound that depends on another field
// (train.warmup_steps), which a declaration cannot state.
void require_at_least(const std::string& key, double value, double min);

// The values a setting allows beyond its type: any, a numeric interval, or some names of a
// choice's table. Its violation() is the message without the key ("must be >= 1; got 0"), so
// the config reader says "decode.beam must be >= 1; got 0" and a flag "--beam: must be ...".
class Allowed {
 public:
  Allowed() = default;  // any value of the type
  static Allowed interval(double min, bool min_open, double max, bool max_open);
  // Some names of a choice's table (train.precision has no int8).
  static Allowed names(std::vector<std::string> names) {
    Allowed allowed;
    allowed.names_ = std::move(names);
    return allowed;
  }
  // Says what a value must be in its own words: "must be EXPECTED; got VALUE".
  Allowed expected(std::string text) && {
    expected_ = std::move(text);
    return std::move(*this);
  }
  bool any() const { return !interval_ && names_.empty(); }
  // "" when allowed, else "must be ...; got ...".
  std::string violation(double value) const;
  std::string violation(const std::string& choice_name) const;
  // ">= 1", "> 0", "[0, 1)", "\"relu\", \"gelu\"", or "" for any.
  std::string text() const;

 private:
  struct Interval {
    double min, max;
    bool min_open, max_open;
  };
  std::optional<Interval> interval_;
  std::vector<std::string> names_;
  std::string expected_;
};

inline Allowed at_least(double min) {
  return Allowed::interval(min, false, std::numeric_limits<double>::infinity(), false);
}
inline Allowed positive() { return Allowed::interval(0, true, std::numeric_limits<double>::infinity(), false); }
inline Allowed fraction() { return Allowed::interval(0, false, 1, true); }  // [0, 1)
inline Allowed in_range(double min, double max) { return Allowed::interval(min, false, max, false); }
inline Allowed above_up_to(double min, double max) { return Allowed::interval(min, true, max, false); }  // (min, max]
template <class E, class... More>
Allowed one_of(E first, More... more) {
  return Allowed::names({choice_name(first), choice_name(more)...});
}

// One setting as --help-config shows it: the dotted key ("data.train[i].src" inside a list),
// its type, default and allowed values as text, and its help. A section has type "section".
struct SettingInfo {
  std::string key, type, default_text, allowed, help;
};

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

// Visitors see two forms of declaration: a setting (name, field, default, help[, allowed]) and
// a section (name, field, help). Those that treat both alike take any trailing arguments.

// Collects the field names of a struct, for the unknown-key check.
struct KeyLister {
  std::vector<std::string> names;
  template <class F, class... Declaration>
  void operator()(const char* name, F&, const Declaration&...) {
    names.emplace_back(name);
  }
};

// Reads the fields present in `j`; absent ones keep their defaults.
struct FieldReader {
  const nlohmann::json& j;
  const std::string& path;
  template <class F, class... Declaration>
  void operator()(const char* name, F& field, const Declaration&...) {
    auto it = j.find(name);
    if (it != j.end()) read_value(*it, field, join_key(path, name));
  }
};

struct FieldWriter {
  nlohmann::json& j;
  template <class F, class... Declaration>
  void operator()(const char* name, F& field, const Declaration&...) {
    j[name] = write_value(field);
  }
};

// Gives every setting of a struct its declared default (a section's constructor does its own).
struct DefaultSetter {
  template <class F, class D>
  void operator()(const char*, F& field, const D& fallback, const char*, const Allowed& = {}) {
    field = static_cast<F>(fallback);
  }
  template <class F>
  void operator()(const char*, F&, const char*) {}
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

// "" when `value` is one of `allowed`, else "must be ...; got ...". Strings, durations and
// heads have no declared range: their readers check their form.
template <class F>
std::string violation_of(const F& value, const Allowed& allowed) {
  if constexpr (is_choice_v<F>) {
    return allowed.violation(std::string(choice_name(value)));
  } else if constexpr (std::is_arithmetic_v<F> && !std::is_same_v<F, bool>) {
    return allowed.violation(static_cast<double>(value));
  } else {
    return "";
  }
}

template <class T>
void validate_struct(const T& value, const std::string& path);

// Checks each setting against its declaration and validates nested structs (before the
// parent's validate(), so its cross-field checks see valid parts).
struct FieldValidator {
  const std::string& path;
  template <class F, class D>
  void operator()(const char* name, F& field, const D&, const char*, const Allowed& allowed = {}) {
    const std::string violation = violation_of(field, allowed);
    if (!violation.empty()) throw Error(join_key(path, name) + " " + violation);
  }
  template <class F>
  void operator()(const char* name, F& section, const char*) {
    validate_struct(section, join_key(path, name));
  }
};

template <class T>
void validate_struct(const T& value, const std::string& path) {
  if constexpr (is_struct_list_v<T>) {
    for (size_t i = 0; i < value.size(); ++i) validate_struct(value[i], element_key(path, i));
    return;
  } else {
    FieldValidator fields{path};
    const_cast<T&>(value).visit(fields);  // reads only, see write_value
    if constexpr (has_validate<T>::value) value.validate(path);
  }
}

template <class F>
std::string type_name() {
  if constexpr (std::is_same_v<F, bool>) return "bool";
  if constexpr (std::is_integral_v<F>) return "integer";
  if constexpr (std::is_floating_point_v<F>) return "number";
  if constexpr (std::is_same_v<F, std::string>) return "string";
  if constexpr (std::is_same_v<F, std::vector<std::string>>) return "strings";
  if constexpr (std::is_same_v<F, Duration>) return "duration";
  if constexpr (std::is_same_v<F, AttentionHead>) return "head";
  if constexpr (is_choice_v<F>) return "choice";
  return "section";
}

// What a setting of type F allows when its declaration adds nothing.
template <class F>
std::string any_value_text() {
  if constexpr (is_choice_v<F>) return choice_list<F>();
  if constexpr (std::is_same_v<F, Duration>) return "seconds, or \"90s\", \"45m\", \"1h30m\"";
  if constexpr (std::is_same_v<F, AttentionHead>) return "an index from 0, or \"mean\"";
  return "";
}

template <class T>
void describe_fields(T& value, const std::string& path, std::vector<SettingInfo>& out);

struct Describer {
  const std::string& path;
  std::vector<SettingInfo>& out;
  template <class F, class D>
  void operator()(const char* name, F&, const D& fallback, const char* help, const Allowed& allowed = {}) {
    out.push_back({join_key(path, name), type_name<F>(), write_value(static_cast<F>(fallback)).dump(),
                   allowed.any() ? any_value_text<F>() : allowed.text(), help});
  }
  template <class F>
  void operator()(const char* name, F& section, const char* help) {
    const std::string key = join_key(path, name);
    if constexpr (is_struct_list_v<F>) {
      out.push_back({key, "list", "[]", "", help});
      typename F::value_type element;
      describe_fields(element, key + "[i]", out);
    } else {
      out.push_back({key, "section", "", "", help});
      describe_fields(section, key, out);
    }
  }
};

template <class T>
void describe_fields(T& value, const std::string& path, std::vector<SettingInfo>& out) {
  Describer describer{path, out};
  value.visit(describer);
}

// Reads `value` as the setting `key` (dotted, under the struct at `path`) and checks it against
// the setting's declaration; `found` tells whether the key was one.
struct SettingChecker {
  const std::string& key;
  const std::string& path;
  const nlohmann::json& value;
  bool found = false;
  template <class F, class D>
  void operator()(const char* name, F&, const D& fallback, const char*, const Allowed& allowed = {}) {
    if (join_key(path, name) != key) return;
    found = true;
    F field = static_cast<F>(fallback);
    read_value(value, field, key);
    const std::string violation = violation_of(field, allowed);
    if (!violation.empty()) throw Error(key + " " + violation);
  }
  template <class F>
  void operator()(const char* name, F& section, const char*) {
    const std::string here = join_key(path, name);
    if constexpr (!is_struct_list_v<F>) {
      if (key.compare(0, here.size() + 1, here + ".") != 0) return;
      SettingChecker inner{key, here, value};
      section.visit(inner);
      found = inner.found;
    }
  }
};

}  // namespace detail

// Fills `out` from `j` (keys absent from `j` keep their defaults), rejecting unknown keys and
// wrong types, then checks every setting against its declaration and runs every validate() in
// the tree. `path` is the dotted key of `j` ("" at the root) and prefixes every key named in an
// error.
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

// Gives every setting of `config` its declared default: a section's constructor calls it.
template <class T>
void set_defaults(T& config) {
  detail::DefaultSetter setter;
  config.visit(setter);
}

// Every setting and section of T, in declaration order: the --help-config table.
template <class T>
std::vector<SettingInfo> describe_settings() {
  std::vector<SettingInfo> out;
  T root;
  detail::describe_fields(root, "", out);
  return out;
}

// Throws attn::Error unless `value` is a valid value of the setting `key` of T on its own (its
// type and declared range; checks across settings wait for the whole config), naming the key
// as the config reader does. An unknown key, or one of a section or list, is an error too.
template <class T>
void check_setting(const std::string& key, const nlohmann::json& value) {
  T root;
  detail::SettingChecker checker{key, "", value};
  root.visit(checker);
  ATTN_CHECK(checker.found, "unknown config setting ", key);
}

}  // namespace attn::io

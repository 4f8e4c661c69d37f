#pragma once
// The config's choices, each an enum with its names table beside it. io/ turns a config string
// into its enum once, when the config is read, and writes the name back; the config's checks
// and their "must be one of ..." messages come from these tables, so a new value is one table
// row. Below io/ nothing compares a config string: code switches on the enum.
//
// A choice is an enum E with a specialisation ChoiceNames<E> whose `table` lists every value
// with its name, in the order the messages list them.
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace attn {

template <class E>
struct ChoiceNames;  // specialised below: static constexpr std::array<std::pair<E, const char*>, N> table

template <class E, class = void>
struct is_choice : std::false_type {};
template <class E>
struct is_choice<E, std::void_t<decltype(ChoiceNames<E>::table)>> : std::true_type {};
template <class E>
constexpr bool is_choice_v = is_choice<E>::value;

template <class E>
const char* choice_name(E value) {
  for (const auto& [entry, name] : ChoiceNames<E>::table)
    if (entry == value) return name;
  return "?";  // unreachable for a value of the table
}

template <class E>
std::optional<E> parse_choice(std::string_view name) {
  for (const auto& [entry, entry_name] : ChoiceNames<E>::table)
    if (name == entry_name) return entry;
  return std::nullopt;
}

// Every name, in table order (for a command-line flag's check).
template <class E>
std::vector<std::string> choice_names() {
  std::vector<std::string> names;
  for (const auto& entry : ChoiceNames<E>::table) names.emplace_back(entry.second);
  return names;
}

// "\"a\", \"b\", \"c\"": the names for a message.
template <class E>
std::string choice_list() {
  std::string list;
  for (const auto& entry : ChoiceNames<E>::table)
    list += (list.empty() ? "\"" : ", \"") + std::string(entry.second) + "\"";
  return list;
}

// The precision of matmuls. automatic is a request, not a precision: it is resolved to the
// faster of f32 and bf16 on this CPU (ops::resolve_precision) before anything computes.
enum class Precision { f32, bf16, int8, automatic };
template <>
struct ChoiceNames<Precision> {
  static constexpr std::array table{std::pair{Precision::f32, "f32"}, std::pair{Precision::bf16, "bf16"},
                                    std::pair{Precision::int8, "int8"}, std::pair{Precision::automatic, "auto"}};
};

// model.type: which model family the run builds.
enum class ModelType { transformer, rnn };
template <>
struct ChoiceNames<ModelType> {
  static constexpr std::array table{std::pair{ModelType::transformer, "transformer"}, std::pair{ModelType::rnn, "rnn"}};
};

// model.transformer.norm: post-norm (Vaswani et al.) or pre-norm with final norms.
enum class Norm { post, pre };
template <>
struct ChoiceNames<Norm> {
  static constexpr std::array table{std::pair{Norm::post, "post"}, std::pair{Norm::pre, "pre"}};
};

// model.transformer.positions: how a Transformer knows where a token is (layers/positions.h).
enum class Positions { sinusoidal, learned, rotary, alibi };
template <>
struct ChoiceNames<Positions> {
  static constexpr std::array table{std::pair{Positions::sinusoidal, "sinusoidal"},
                                    std::pair{Positions::learned, "learned"}, std::pair{Positions::rotary, "rotary"},
                                    std::pair{Positions::alibi, "alibi"}};
};
// Absolute schemes add rows of a (max_positions, D) table, which bounds the sequence length;
// relative ones (rotary, ALiBi) act inside self-attention and have no table and no bound.
constexpr bool has_position_table(Positions positions) {
  return positions == Positions::sinusoidal || positions == Positions::learned;
}

// Elementwise activations (ops::activation). The FFN's model.transformer.activation takes
// relu or gelu of them.
enum class Activation { relu, gelu, tanh, sigmoid };
template <>
struct ChoiceNames<Activation> {
  static constexpr std::array table{std::pair{Activation::relu, "relu"}, std::pair{Activation::gelu, "gelu"},
                                    std::pair{Activation::tanh, "tanh"}, std::pair{Activation::sigmoid, "sigmoid"}};
};

// model.rnn.cell: the recurrent cell of both RNN directions and the decoder.
enum class CellType { gru, lstm };
template <>
struct ChoiceNames<CellType> {
  static constexpr std::array table{std::pair{CellType::gru, "gru"}, std::pair{CellType::lstm, "lstm"}};
};

// train.schedule: the learning-rate schedule (optim/schedule.h).
enum class ScheduleType { constant, inverse_sqrt, noam };
template <>
struct ChoiceNames<ScheduleType> {
  static constexpr std::array table{std::pair{ScheduleType::constant, "constant"},
                                    std::pair{ScheduleType::inverse_sqrt, "inverse_sqrt"},
                                    std::pair{ScheduleType::noam, "noam"}};
};

// vocab.type: SentencePiece's model type.
enum class VocabType { unigram, bpe };
template <>
struct ChoiceNames<VocabType> {
  static constexpr std::array table{std::pair{VocabType::unigram, "unigram"}, std::pair{VocabType::bpe, "bpe"}};
};

// train.valid_metric: what selects checkpoint.best.
enum class ValidMetric { bleu, chrf, loss };
template <>
struct ChoiceNames<ValidMetric> {
  static constexpr std::array table{std::pair{ValidMetric::bleu, "bleu"}, std::pair{ValidMetric::chrf, "chrf"},
                                    std::pair{ValidMetric::loss, "loss"}};
};

// train.guided_alignment.cost: the loss between attention and reference alignments
// (ops/guided_alignment_loss.h).
enum class GuidedAlignmentCost { ce, mse };
template <>
struct ChoiceNames<GuidedAlignmentCost> {
  static constexpr std::array table{std::pair{GuidedAlignmentCost::ce, "ce"},
                                    std::pair{GuidedAlignmentCost::mse, "mse"}};
};

// data.train_alignments_level: what the indices of data.train_alignments count.
enum class AlignmentLevel { words, pieces };
template <>
struct ChoiceNames<AlignmentLevel> {
  static constexpr std::array table{std::pair{AlignmentLevel::words, "words"},
                                    std::pair{AlignmentLevel::pieces, "pieces"}};
};

}  // namespace attn

//===- Json.h - a small strict JSON reader and string writer ----*- C++ -*-===//
//
// Safetensors headers are JSON. The runtime has no third-party dependencies besides protobuf and
// zlib, so it parses JSON itself: RFC 8259 strictly (no comments, no trailing commas, no NaN),
// with a nesting limit, and duplicate object keys rejected (a header naming a tensor twice is
// ambiguous, so it is malformed).
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_IO_JSON_H
#define MEMC_RUNTIME_IO_JSON_H

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace memc::runtime {

class JsonValue {
public:
  enum class Kind { Null, Bool, Number, String, Array, Object };

  Kind kind() const { return valueKind; }
  bool isObject() const { return valueKind == Kind::Object; }
  bool isArray() const { return valueKind == Kind::Array; }
  bool isString() const { return valueKind == Kind::String; }
  /// A number written without fraction or exponent that fits in int64.
  bool isInteger() const { return valueKind == Kind::Number && integral; }

  bool boolean() const { return flag; }
  int64_t integer() const { return intValue; }
  double number() const { return doubleValue; }
  const std::string &string() const { return text; }
  const std::vector<JsonValue> &elements() const { return items; }
  /// Members in document order; keys are unique.
  const std::vector<std::pair<std::string, JsonValue>> &members() const { return fields; }
  /// The member named `key`, or null.
  const JsonValue *find(std::string_view key) const;

  /// "an object", "a string", ... for messages.
  static const char *kindName(Kind kind);

private:
  friend class JsonParser;
  Kind valueKind = Kind::Null;
  bool flag = false;
  bool integral = false;
  int64_t intValue = 0;
  double doubleValue = 0;
  std::string text;
  std::vector<JsonValue> items;
  std::vector<std::pair<std::string, JsonValue>> fields;
};

/// Parses one JSON document (surrounding whitespace allowed); false with a message giving the
/// byte offset of the problem.
bool parseJson(std::string_view text, JsonValue &out, std::string &error);

/// `text` as a JSON string literal, quotes included.
std::string jsonQuote(std::string_view text);

} // namespace memc::runtime

#endif // MEMC_RUNTIME_IO_JSON_H

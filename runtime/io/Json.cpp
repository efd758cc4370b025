//===- Json.cpp - a small strict JSON reader and string writer ------------===//
#include "runtime/io/Json.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace memc::runtime {

const JsonValue *JsonValue::find(std::string_view key) const {
  for (const auto &[name, value] : fields)
    if (name == key)
      return &value;
  return nullptr;
}

const char *JsonValue::kindName(Kind kind) {
  switch (kind) {
  case Kind::Null:
    return "null";
  case Kind::Bool:
    return "a boolean";
  case Kind::Number:
    return "a number";
  case Kind::String:
    return "a string";
  case Kind::Array:
    return "an array";
  case Kind::Object:
    return "an object";
  }
  return "?";
}

/// Recursive descent over the RFC 8259 grammar. Every failure records the first error and
/// unwinds; the nesting limit keeps hostile input from exhausting the stack.
class JsonParser {
public:
  explicit JsonParser(std::string_view text) : text(text) {}

  bool parseDocument(JsonValue &out, std::string &error) {
    skipWhitespace();
    bool ok = parseValue(out, 0);
    if (ok) {
      skipWhitespace();
      if (at != text.size())
        ok = fail("unexpected text after the JSON value");
    }
    if (!ok)
      error = message;
    return ok;
  }

private:
  static constexpr int kMaxDepth = 64;

  std::string_view text;
  size_t at = 0;
  std::string message;

  bool fail(const std::string &what) {
    if (message.empty())
      message = "malformed JSON at byte " + std::to_string(at) + ": " + what;
    return false;
  }

  void skipWhitespace() {
    while (at < text.size() &&
           (text[at] == ' ' || text[at] == '\t' || text[at] == '\n' || text[at] == '\r'))
      ++at;
  }

  bool consume(char expected) {
    if (at < text.size() && text[at] == expected) {
      ++at;
      return true;
    }
    return false;
  }

  bool consumeWord(std::string_view word) {
    if (text.substr(at, word.size()) != word)
      return false;
    at += word.size();
    return true;
  }

  bool parseValue(JsonValue &out, int depth) {
    if (depth > kMaxDepth)
      return fail("nested deeper than " + std::to_string(kMaxDepth) + " levels");
    if (at >= text.size())
      return fail("unexpected end of input");
    char c = text[at];
    if (c == '{')
      return parseObject(out, depth);
    if (c == '[')
      return parseArray(out, depth);
    if (c == '"') {
      out.valueKind = JsonValue::Kind::String;
      return parseString(out.text);
    }
    if (c == '-' || (c >= '0' && c <= '9'))
      return parseNumber(out);
    if (consumeWord("true") || consumeWord("false")) {
      out.valueKind = JsonValue::Kind::Bool;
      out.flag = c == 't';
      return true;
    }
    if (consumeWord("null")) {
      out.valueKind = JsonValue::Kind::Null;
      return true;
    }
    return fail(std::string("unexpected character '") + c + "'");
  }

  bool parseObject(JsonValue &out, int depth) {
    out.valueKind = JsonValue::Kind::Object;
    ++at; // '{'
    skipWhitespace();
    if (consume('}'))
      return true;
    while (true) {
      skipWhitespace();
      if (at >= text.size() || text[at] != '"')
        return fail("expected a string key");
      std::string key;
      if (!parseString(key))
        return false;
      if (out.find(key))
        return fail("duplicate key \"" + key + "\"");
      skipWhitespace();
      if (!consume(':'))
        return fail("expected ':' after a key");
      skipWhitespace();
      JsonValue value;
      if (!parseValue(value, depth + 1))
        return false;
      out.fields.emplace_back(std::move(key), std::move(value));
      skipWhitespace();
      if (consume('}'))
        return true;
      if (!consume(','))
        return fail("expected ',' or '}' in an object");
    }
  }

  bool parseArray(JsonValue &out, int depth) {
    out.valueKind = JsonValue::Kind::Array;
    ++at; // '['
    skipWhitespace();
    if (consume(']'))
      return true;
    while (true) {
      skipWhitespace();
      JsonValue value;
      if (!parseValue(value, depth + 1))
        return false;
      out.items.push_back(std::move(value));
      skipWhitespace();
      if (consume(']'))
        return true;
      if (!consume(','))
        return fail("expected ',' or ']' in an array");
    }
  }

  bool parseHex4(uint32_t &out) {
    if (text.size() - at < 4)
      return fail("truncated \\u escape");
    out = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text[at++];
      uint32_t digit;
      if (c >= '0' && c <= '9')
        digit = c - '0';
      else if (c >= 'a' && c <= 'f')
        digit = c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        digit = c - 'A' + 10;
      else
        return fail("bad hex digit in a \\u escape");
      out = out * 16 + digit;
    }
    return true;
  }

  static void appendUtf8(std::string &out, uint32_t code) {
    if (code < 0x80) {
      out.push_back(static_cast<char>(code));
    } else if (code < 0x800) {
      out.push_back(static_cast<char>(0xc0 | (code >> 6)));
      out.push_back(static_cast<char>(0x80 | (code & 0x3f)));
    } else if (code < 0x10000) {
      out.push_back(static_cast<char>(0xe0 | (code >> 12)));
      out.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3f)));
      out.push_back(static_cast<char>(0x80 | (code & 0x3f)));
    } else {
      out.push_back(static_cast<char>(0xf0 | (code >> 18)));
      out.push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3f)));
      out.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3f)));
      out.push_back(static_cast<char>(0x80 | (code & 0x3f)));
    }
  }

  bool parseEscape(std::string &out) {
    if (at >= text.size())
      return fail("unterminated string");
    char c = text[at++];
    switch (c) {
    case '"':
    case '\\':
    case '/':
      out.push_back(c);
      return true;
    case 'b':
      out.push_back('\b');
      return true;
    case 'f':
      out.push_back('\f');
      return true;
    case 'n':
      out.push_back('\n');
      return true;
    case 'r':
      out.push_back('\r');
      return true;
    case 't':
      out.push_back('\t');
      return true;
    case 'u':
      break;
    default:
      return fail(std::string("unknown escape '\\") + c + "'");
    }
    uint32_t code = 0;
    if (!parseHex4(code))
      return false;
    if (code >= 0xdc00 && code <= 0xdfff)
      return fail("unpaired low surrogate");
    if (code >= 0xd800 && code <= 0xdbff) {
      uint32_t low = 0;
      if (!consumeWord("\\u") || !parseHex4(low) || low < 0xdc00 || low > 0xdfff)
        return fail("unpaired high surrogate");
      code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
    }
    appendUtf8(out, code);
    return true;
  }

  bool parseString(std::string &out) {
    ++at; // '"'
    while (true) {
      if (at >= text.size())
        return fail("unterminated string");
      unsigned char c = static_cast<unsigned char>(text[at++]);
      if (c == '"')
        return true;
      if (c < 0x20)
        return fail("control character in a string");
      if (c == '\\') {
        if (!parseEscape(out))
          return false;
      } else {
        out.push_back(static_cast<char>(c));
      }
    }
  }

  bool parseDigits() {
    size_t start = at;
    while (at < text.size() && text[at] >= '0' && text[at] <= '9')
      ++at;
    return at > start;
  }

  bool parseNumber(JsonValue &out) {
    out.valueKind = JsonValue::Kind::Number;
    size_t start = at;
    consume('-');
    if (consume('0')) {
      if (at < text.size() && text[at] >= '0' && text[at] <= '9')
        return fail("leading zero in a number");
    } else if (!parseDigits()) {
      return fail("expected digits");
    }
    bool fractional = false;
    if (consume('.')) {
      fractional = true;
      if (!parseDigits())
        return fail("expected digits after '.'");
    }
    if (at < text.size() && (text[at] == 'e' || text[at] == 'E')) {
      fractional = true;
      ++at;
      if (!consume('+'))
        consume('-');
      if (!parseDigits())
        return fail("expected digits in an exponent");
    }
    std::string literal(text.substr(start, at - start));
    out.doubleValue = std::strtod(literal.c_str(), nullptr);
    if (!fractional) {
      errno = 0;
      long long value = std::strtoll(literal.c_str(), nullptr, 10);
      out.integral = errno != ERANGE;
      out.intValue = value;
    }
    return true;
  }
};

bool parseJson(std::string_view text, JsonValue &out, std::string &error) {
  out = JsonValue();
  return JsonParser(text).parseDocument(out, error);
}

std::string jsonQuote(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    unsigned char byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (byte < 0x20) {
      char escape[8];
      snprintf(escape, sizeof(escape), "\\u%04x", byte);
      out += escape;
    } else {
      out.push_back(c);
    }
  }
  return out + "\"";
}

} // namespace memc::runtime

#include "plugin/json_line.h"

#include <limits>

namespace kiln {

namespace {

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// Shows a byte in an error message without dumping control characters into logs.
std::string describeChar(char c) {
  unsigned char u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return std::string("'") + c + "'";
  static const char* kHex = "0123456789abcdef";
  return std::string("byte 0x") + kHex[u >> 4] + kHex[u & 15];
}

void appendUtf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xc0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xe0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  } else {
    out += static_cast<char>(0xf0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (cp & 0x3f));
  }
}

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  Status parseObject(JsonObject& out) {
    out.members.clear();
    skipSpace();
    if (!consume('{')) return expected("'{' to open the object");
    skipSpace();
    if (consume('}')) return finish();
    while (true) {
      skipSpace();
      if (atEnd() || peek() != '"') return expected("a string key");
      std::string key;
      KILN_RETURN_IF_ERROR(parseString(key));
      if (out.find(key) != nullptr) return error("duplicate key \"" + key + "\"");
      skipSpace();
      if (!consume(':')) return expected("':' after key \"" + key + "\"");
      skipSpace();
      JsonValue value;
      KILN_RETURN_IF_ERROR(parseValue(key, value));
      out.members.emplace_back(std::move(key), std::move(value));
      skipSpace();
      if (consume('}')) return finish();
      if (!consume(',')) return expected("',' or '}' after a value");
    }
  }

 private:
  bool atEnd() const { return pos_ >= text_.size(); }
  char peek() const { return text_[pos_]; }
  bool consume(char c) {
    if (atEnd() || peek() != c) return false;
    ++pos_;
    return true;
  }
  void skipSpace() {
    while (!atEnd() && isSpace(peek())) ++pos_;
  }

  Status error(const std::string& what) const {
    return invalidArgument("column " + std::to_string(pos_ + 1) + ": " + what);
  }
  Status expected(const std::string& what) const {
    return error("expected " + what + ", found " +
                 (atEnd() ? std::string("end of line") : describeChar(peek())));
  }

  Status finish() {
    skipSpace();
    if (!atEnd()) return error("unexpected " + describeChar(peek()) + " after the object");
    return Status::ok();
  }

  Status parseValue(const std::string& key, JsonValue& value) {
    if (atEnd()) return expected("a value for \"" + key + "\"");
    char c = peek();
    if (c == '"') {
      value.kind = JsonValue::Kind::kString;
      return parseString(value.string);
    }
    if (c == '-' || (c >= '0' && c <= '9')) {
      value.kind = JsonValue::Kind::kInteger;
      return parseInteger(key, value.integer);
    }
    if (text_.substr(pos_, 4) == "null") {
      pos_ += 4;
      value.kind = JsonValue::Kind::kNull;
      return Status::ok();
    }
    if (c == '{' || c == '[') return error("value of \"" + key + "\" is nested; only flat objects");
    return error("value of \"" + key + "\" must be a string, an integer or null, found " +
                 describeChar(c));
  }

  Status parseInteger(const std::string& key, int64_t& out) {
    bool negative = consume('-');
    if (atEnd() || peek() < '0' || peek() > '9') return expected("a digit");
    if (peek() == '0' && pos_ + 1 < text_.size() && text_[pos_ + 1] >= '0' &&
        text_[pos_ + 1] <= '9') {
      return error("leading zero in the value of \"" + key + "\"");
    }
    // Accumulate as a negative number so that INT64_MIN fits.
    int64_t value = 0;
    const int64_t min = std::numeric_limits<int64_t>::min();
    while (!atEnd() && peek() >= '0' && peek() <= '9') {
      int digit = peek() - '0';
      if (value < (min + digit) / 10) return error("value of \"" + key + "\" overflows int64");
      value = value * 10 - digit;
      ++pos_;
    }
    if (!atEnd() && (peek() == '.' || peek() == 'e' || peek() == 'E')) {
      return error("value of \"" + key + "\" is not an integer");
    }
    if (!negative) {
      if (value == min) return error("value of \"" + key + "\" overflows int64");
      value = -value;
    }
    out = value;
    return Status::ok();
  }

  Status parseHex4(uint32_t& out) {
    if (pos_ + 4 > text_.size()) return error("\\u escape needs four hex digits");
    out = 0;
    for (int i = 0; i < 4; ++i) {
      char c = text_[pos_ + i];
      uint32_t d;
      if (c >= '0' && c <= '9') {
        d = c - '0';
      } else if (c >= 'a' && c <= 'f') {
        d = c - 'a' + 10;
      } else if (c >= 'A' && c <= 'F') {
        d = c - 'A' + 10;
      } else {
        return error("\\u escape needs four hex digits");
      }
      out = out * 16 + d;
    }
    pos_ += 4;
    return Status::ok();
  }

  Status parseString(std::string& out) {
    ++pos_;  // the opening quote
    out.clear();
    while (true) {
      if (atEnd()) return error("unterminated string");
      char c = text_[pos_++];
      if (c == '"') return Status::ok();
      if (static_cast<unsigned char>(c) < 0x20) {
        --pos_;
        return error("unescaped control character (" + describeChar(c) + ") in a string");
      }
      if (c != '\\') {
        out += c;
        continue;
      }
      if (atEnd()) return error("unterminated escape in a string");
      char e = text_[pos_++];
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          uint32_t cp;
          KILN_RETURN_IF_ERROR(parseHex4(cp));
          if (cp >= 0xdc00 && cp <= 0xdfff) return error("unpaired low surrogate in \\u escape");
          if (cp >= 0xd800 && cp <= 0xdbff) {
            if (text_.substr(pos_, 2) != "\\u") return error("unpaired high surrogate");
            pos_ += 2;
            uint32_t low;
            KILN_RETURN_IF_ERROR(parseHex4(low));
            if (low < 0xdc00 || low > 0xdfff) return error("unpaired high surrogate");
            cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
          }
          appendUtf8(out, cp);
          break;
        }
        default:
          --pos_;
          return error("unknown escape \\" + std::string(1, e) + " in a string");
      }
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

const JsonValue* JsonObject::find(std::string_view key) const {
  for (const auto& [k, v] : members) {
    if (k == key) return &v;
  }
  return nullptr;
}

Status parseJsonLine(std::string_view line, JsonObject& out) {
  return Parser(line).parseObject(out);
}

}  // namespace kiln

#include <charconv>

#include "json.h"
#include "utf.h"

namespace hcn::json {
namespace {

// Deep enough for any HNS document, shallow enough that hostile input cannot exhaust a worker thread's stack.
constexpr int kMaxDepth = 200;

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool IsNumberChar(char c) { return (c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.' || c == 'e' || c == 'E'; }

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  bool ParseDocument(Value* out) {
    if (!ParseValue(out, 0)) return false;
    SkipSpace();
    return pos_ == text_.size() || Fail("trailing characters");
  }

  const std::string& error() const { return error_; }

 private:
  bool Fail(const char* what) {
    if (error_.empty()) error_ = std::string(what) + " at offset " + std::to_string(pos_);
    return false;
  }

  void SkipSpace() {
    while (pos_ < text_.size() && IsSpace(text_[pos_])) ++pos_;
  }

  bool Consume(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  bool Literal(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return Fail("invalid literal");
    pos_ += word.size();
    return true;
  }

  bool ParseValue(Value* out, int depth) {
    if (depth > kMaxDepth) return Fail("nesting too deep");
    SkipSpace();
    if (pos_ >= text_.size()) return Fail("unexpected end");
    switch (text_[pos_]) {
      case '{': return ParseObject(out, depth);
      case '[': return ParseArray(out, depth);
      case '"': out->type = Value::Type::kString; return ParseString(&out->string);
      case 't': out->type = Value::Type::kBool; out->boolean = true; return Literal("true");
      case 'f': out->type = Value::Type::kBool; out->boolean = false; return Literal("false");
      case 'n': out->type = Value::Type::kNull; return Literal("null");
      default: return ParseNumber(out);
    }
  }

  bool ParseObject(Value* out, int depth) {
    out->type = Value::Type::kObject;
    ++pos_;
    if (Consume('}')) return true;
    do {
      SkipSpace();
      std::pair<std::string, Value> member;
      if (pos_ >= text_.size() || text_[pos_] != '"') return Fail("expected a member name");
      if (!ParseString(&member.first)) return false;
      if (!Consume(':')) return Fail("expected ':'");
      if (!ParseValue(&member.second, depth + 1)) return false;
      out->members.push_back(std::move(member));
    } while (Consume(','));
    return Consume('}') || Fail("expected ',' or '}'");
  }

  bool ParseArray(Value* out, int depth) {
    out->type = Value::Type::kArray;
    ++pos_;
    if (Consume(']')) return true;
    do {
      out->items.emplace_back();
      if (!ParseValue(&out->items.back(), depth + 1)) return false;
    } while (Consume(','));
    return Consume(']') || Fail("expected ',' or ']'");
  }

  bool ParseNumber(Value* out) {
    // JSON's grammar is stricter than from_chars (no leading '+', no "inf"), so check the shape first.
    const size_t start = pos_;
    if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
    const size_t digits = pos_;
    while (pos_ < text_.size() && IsNumberChar(text_[pos_])) ++pos_;
    if (pos_ == digits || text_[digits] < '0' || text_[digits] > '9') return Fail("invalid value");
    const char* first = text_.data() + start;
    const char* last = text_.data() + pos_;
    const auto result = std::from_chars(first, last, out->number);
    if (result.ec != std::errc() || result.ptr != last) return Fail("invalid number");
    out->type = Value::Type::kNumber;
    return true;
  }

  bool ReadHex4(char32_t* unit) {
    if (pos_ + 4 > text_.size()) return Fail("truncated \\u escape");
    *unit = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = text_[pos_++];
      int v;
      if (c >= '0' && c <= '9') v = c - '0';
      else if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
      else if (c >= 'A' && c <= 'F') v = c - 'A' + 10;
      else return Fail("invalid \\u escape");
      *unit = (*unit << 4) | static_cast<char32_t>(v);
    }
    return true;
  }

  bool ParseUnicodeEscape(std::string* out) {
    char32_t unit = 0;
    if (!ReadHex4(&unit)) return false;
    if (unit >= 0xD800 && unit <= 0xDBFF && text_.substr(pos_, 2) == "\\u") {
      const size_t save = pos_;
      pos_ += 2;
      char32_t low = 0;
      if (!ReadHex4(&low)) return false;
      if (low >= 0xDC00 && low <= 0xDFFF) {
        AppendUtf8(out, 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00));
        return true;
      }
      pos_ = save;  // not a pair: the high half alone is replaced, the next escape is read on its own
    }
    AppendUtf8(out, unit);  // AppendUtf8 turns a lone surrogate into U+FFFD
    return true;
  }

  bool ParseString(std::string* out) {
    ++pos_;  // opening quote
    while (pos_ < text_.size()) {
      const char c = text_[pos_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return Fail("control character in string");
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (pos_ >= text_.size()) break;
      switch (text_[pos_++]) {
        case '"': out->push_back('"'); break;
        case '\\': out->push_back('\\'); break;
        case '/': out->push_back('/'); break;
        case 'b': out->push_back('\b'); break;
        case 'f': out->push_back('\f'); break;
        case 'n': out->push_back('\n'); break;
        case 'r': out->push_back('\r'); break;
        case 't': out->push_back('\t'); break;
        case 'u':
          if (!ParseUnicodeEscape(out)) return false;
          break;
        default: return Fail("invalid escape");
      }
    }
    return Fail("unterminated string");
  }

  std::string_view text_;
  size_t pos_ = 0;
  std::string error_;
};

}  // namespace

const Value* Value::Find(std::string_view key) const {
  for (const auto& member : members) {
    if (member.first == key) return &member.second;
  }
  return nullptr;
}

bool Parse(std::string_view text, Value* out, std::string* error) {
  Parser parser(text);
  *out = Value();
  if (parser.ParseDocument(out)) return true;
  if (error != nullptr) *error = parser.error();
  return false;
}

}  // namespace hcn::json

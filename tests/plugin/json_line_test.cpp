#include "plugin/json_line.h"

#include <gtest/gtest.h>

#include <random>

namespace kiln {
namespace {

uint32_t freshSeed() { return std::random_device{}(); }

TEST(JsonLine, ParsesStringsIntegersAndNull) {
  JsonObject obj;
  Status s = parseJsonLine(
      R"(  {"a":"x\"y\\z\n\t\u0041\u00e9\ud83d\ude00","b":-9223372036854775808,"c":null, "d" : 42 } )",
      obj);
  ASSERT_TRUE(s.isOk()) << s.message();
  ASSERT_EQ(obj.members.size(), 4u);
  EXPECT_EQ(obj.members[0].first, "a");
  EXPECT_EQ(obj.find("a")->string, "x\"y\\z\n\tA\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_EQ(obj.find("b")->kind, JsonValue::Kind::kInteger);
  EXPECT_EQ(obj.find("b")->integer, INT64_MIN);
  EXPECT_EQ(obj.find("c")->kind, JsonValue::Kind::kNull);
  EXPECT_EQ(obj.find("d")->integer, 42);
  EXPECT_EQ(obj.find("e"), nullptr);

  ASSERT_TRUE(parseJsonLine("{}", obj).isOk());
  EXPECT_TRUE(obj.members.empty());
}

TEST(JsonLine, RefusesMalformedLinesWithAColumn) {
  struct Case {
    const char* line;
    const char* says;
  };
  const Case cases[] = {
      {"", "expected '{'"},
      {"[1]", "expected '{'"},
      {"{\"a\":1", "expected ',' or '}'"},
      {"{\"a\":1,}", "expected a string key"},
      {"{a:1}", "expected a string key"},
      {"{\"a\" 1}", "expected ':'"},
      {"{\"a\":}", "must be a string, an integer or null"},
      {"{\"a\":\"x}", "unterminated string"},
      {"{\"a\":\"\\q\"}", "unknown escape"},
      {"{\"a\":\"\\u12g4\"}", "four hex digits"},
      {"{\"a\":\"\\ud800\"}", "unpaired high surrogate"},
      {"{\"a\":\"\\udc00\"}", "unpaired low surrogate"},
      {"{\"a\":\"x\ny\"}", "unescaped control character"},
      {"{\"a\":1,\"a\":2}", "duplicate key"},
      {"{\"a\":9223372036854775808}", "overflows int64"},
      {"{\"a\":-9223372036854775809}", "overflows int64"},
      {"{\"a\":1.5}", "not an integer"},
      {"{\"a\":1e3}", "not an integer"},
      {"{\"a\":01}", "leading zero"},
      {"{\"a\":-}", "expected a digit"},
      {"{\"a\":true}", "must be a string, an integer or null"},
      {"{\"a\":{\"b\":1}}", "nested"},
      {"{\"a\":[1]}", "nested"},
      {"{\"a\":nul}", "must be a string, an integer or null"},
      {"{\"a\":1} x", "after the object"},
      {"{\"a\":1}{}", "after the object"},
  };
  for (const Case& c : cases) {
    JsonObject obj;
    Status s = parseJsonLine(c.line, obj);
    EXPECT_FALSE(s.isOk()) << c.line;
    EXPECT_NE(s.message().find(c.says), std::string::npos) << c.line << " -> " << s.message();
    EXPECT_NE(s.message().find("column "), std::string::npos) << s.message();
  }
}

TEST(JsonLine, EscapedStringsRoundTrip) {
  const uint32_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  for (int i = 0; i < 500; ++i) {
    std::string text(std::uniform_int_distribution<int>(1, 40)(rng), '\0');
    for (char& c : text) c = static_cast<char>(std::uniform_int_distribution<int>(0, 255)(rng));
    std::string line = "{\"k\":";
    appendJsonString(line, text);
    line += "}";
    EXPECT_EQ(line.find('\n'), std::string::npos);
    JsonObject obj;
    Status s = parseJsonLine(line, obj);
    ASSERT_TRUE(s.isOk()) << s.message();
    EXPECT_EQ(obj.find("k")->string, text);
  }
}

TEST(JsonLine, RandomGarbageNeverCrashes) {
  const uint32_t seed = freshSeed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937 rng(seed);
  const std::string alphabet = "{}[]\":,\\ -0123456789nultrue\x01\x80uU\"\"";
  const std::string good = R"({"seq":1,"s":"a\"b","o":null,"i":-7})";
  int accepted = 0;
  for (int i = 0; i < 5000; ++i) {
    std::string line = good;
    int edits = std::uniform_int_distribution<int>(1, 4)(rng);
    for (int e = 0; e < edits; ++e) {
      size_t pos = std::uniform_int_distribution<size_t>(0, line.size() - 1)(rng);
      char c = alphabet[std::uniform_int_distribution<size_t>(0, alphabet.size() - 1)(rng)];
      switch (std::uniform_int_distribution<int>(0, 2)(rng)) {
        case 0:
          line[pos] = c;
          break;
        case 1:
          line.insert(pos, 1, c);
          break;
        default:
          line.erase(pos, 1);
          if (line.empty()) line = "{";
          break;
      }
    }
    JsonObject obj;
    Status s = parseJsonLine(line, obj);
    if (s.isOk()) {
      ++accepted;
    } else {
      EXPECT_FALSE(s.message().empty());
    }
  }
  // Most edits break the line; the untouched line itself parses.
  EXPECT_LT(accepted, 5000);
  JsonObject obj;
  EXPECT_TRUE(parseJsonLine(good, obj).isOk());
}

}  // namespace
}  // namespace kiln

//===- JsonTest.cpp - the strict JSON reader ------------------------------===//
#include "runtime/io/Json.h"

#include <gtest/gtest.h>

using namespace memc::runtime;

namespace {

TEST(JsonTest, ParsesNestedValues) {
  JsonValue value;
  std::string error;
  ASSERT_TRUE(parseJson(R"( {"a": [1, -2, 3.5e1, true, null], "b": {"c": "d\u00e9\n"}} )", value,
                        error))
      << error;
  ASSERT_TRUE(value.isObject());
  const JsonValue *a = value.find("a");
  ASSERT_TRUE(a && a->isArray());
  ASSERT_EQ(a->elements().size(), 5u);
  EXPECT_TRUE(a->elements()[0].isInteger());
  EXPECT_EQ(a->elements()[1].integer(), -2);
  EXPECT_FALSE(a->elements()[2].isInteger());
  EXPECT_DOUBLE_EQ(a->elements()[2].number(), 35.0);
  EXPECT_TRUE(a->elements()[3].boolean());
  EXPECT_EQ(a->elements()[4].kind(), JsonValue::Kind::Null);
  EXPECT_EQ(value.find("b")->find("c")->string(), "d\xc3\xa9\n");
}

TEST(JsonTest, DecodesSurrogatePairs) {
  JsonValue value;
  std::string error;
  ASSERT_TRUE(parseJson(R"("\ud83d\ude00")", value, error)) << error;
  EXPECT_EQ(value.string(), "\xf0\x9f\x98\x80");
}

TEST(JsonTest, RejectsMalformedDocuments) {
  const char *bad[] = {
      "",           "{",          "{\"a\":}",     "{\"a\" 1}",    "[1,]",          "{\"a\":1,}",
      "01",         "1.",         "-",            "1e",           "tru",           "\"abc",
      "\"\\x\"",    "\"\\ud800\"", "\"\\udc00\"", "\"a\nb\"",     "{\"a\":1} x",   "NaN",
      "{'a': 1}",   "[1 2]",      "{\"a\":1,\"a\":2}",
  };
  for (const char *text : bad) {
    JsonValue value;
    std::string error;
    EXPECT_FALSE(parseJson(text, value, error)) << "accepted: " << text;
    EXPECT_NE(error.find("malformed JSON"), std::string::npos) << error;
  }
}

TEST(JsonTest, LimitsNesting) {
  JsonValue value;
  std::string error;
  EXPECT_FALSE(parseJson(std::string(100000, '['), value, error));
  EXPECT_NE(error.find("nested deeper"), std::string::npos) << error;
}

TEST(JsonTest, IntegersBeyondInt64AreNotIntegers) {
  JsonValue value;
  std::string error;
  ASSERT_TRUE(parseJson("123456789012345678901234567890", value, error));
  EXPECT_FALSE(value.isInteger());
}

TEST(JsonTest, QuoteRoundTrips) {
  std::string text = "a\"b\\c\n\x01\xc3\xa9";
  JsonValue value;
  std::string error;
  ASSERT_TRUE(parseJson(jsonQuote(text), value, error)) << error;
  EXPECT_EQ(value.string(), text);
}

} // namespace

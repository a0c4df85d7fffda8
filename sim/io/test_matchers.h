// Test helpers: substring assertions and text edits without gmock (only GTest is required to build the tests).
#pragma once

#include <gtest/gtest.h>

#include <string>

namespace specsim::io::testing {

// EXPECT_TRUE(Contains(message, "links[1]")) prints the whole message when it fails.
inline ::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << part << "\" not found in:\n" << text;
}

// `text` with the first occurrence of `from` replaced by `to`; fails the test when `from` is absent.
inline std::string ReplaceFirst(std::string text, const std::string& from, const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << "\"" << from << "\" not in the text";
  return at == std::string::npos ? text : text.replace(at, from.size(), to);
}

}  // namespace specsim::io::testing

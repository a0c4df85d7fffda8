// Test helper: substring assertions without gmock (only GTest is required to build the tests).
#pragma once

#include <gtest/gtest.h>

#include <string>

namespace specsim::io::testing {

// EXPECT_TRUE(Contains(message, "links[1]")) prints the whole message when it fails.
inline ::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << part << "\" not found in:\n" << text;
}

}  // namespace specsim::io::testing

// Small string helpers shared by every layer (names read case-insensitively from flags, configs
// and profiler traces).
#pragma once

#include <string>
#include <string_view>

namespace specsim {

// `s` with ASCII letters in lower case; other bytes (UTF-8 included) unchanged. Locale-free, so a
// flag or config value parses the same everywhere.
inline std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

// `s` with ASCII letters in upper case (as AsciiLower, the other way).
inline std::string AsciiUpper(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return out;
}

}  // namespace specsim

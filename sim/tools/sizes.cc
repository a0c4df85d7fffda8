#include "sim/tools/sizes.h"

#include <cctype>
#include <cmath>
#include <set>
#include <sstream>

namespace specsim::tools {

StatusOr<int64_t> ParseSizeBytes(const std::string& text) {
  const std::string bad = "size '" + text + "': expected a number with an optional K, M or G suffix (e.g. 4K, 256M)";
  if (text.empty()) return InvalidArgumentError(bad);
  size_t pos = 0;
  double value = 0;
  try {
    value = std::stod(text, &pos);
  } catch (...) {
    return InvalidArgumentError(bad);
  }
  std::string suffix = text.substr(pos);
  if (!suffix.empty() && (suffix.back() == 'B' || suffix.back() == 'b')) suffix.pop_back();
  double scale = 1;
  if (suffix == "K" || suffix == "k")
    scale = 1024.0;
  else if (suffix == "M" || suffix == "m")
    scale = 1024.0 * 1024;
  else if (suffix == "G" || suffix == "g")
    scale = 1024.0 * 1024 * 1024;
  else if (!suffix.empty())
    return InvalidArgumentError(bad);
  double bytes = value * scale;
  if (!(bytes >= 1) || bytes > 64.0 * 1024 * 1024 * 1024 || bytes != std::floor(bytes))
    return InvalidArgumentError("size '" + text + "': must be a whole number of bytes from 1 to 64G");
  return static_cast<int64_t>(bytes);
}

StatusOr<std::vector<int64_t>> ParseSizeList(const std::string& text) {
  std::vector<int64_t> sizes;
  auto colon = text.find(':');
  if (colon != std::string::npos) {
    ASSIGN_OR_RETURN(int64_t lo, ParseSizeBytes(text.substr(0, colon)));
    ASSIGN_OR_RETURN(int64_t hi, ParseSizeBytes(text.substr(colon + 1)));
    if (hi < lo) return InvalidArgumentError("sizes '" + text + "': the end is smaller than the start");
    for (int64_t s = lo; s <= hi; s *= 2) sizes.push_back(s);
    return sizes;
  }
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    ASSIGN_OR_RETURN(int64_t s, ParseSizeBytes(item));
    sizes.push_back(s);
  }
  if (sizes.empty()) return InvalidArgumentError("sizes: empty list");
  return sizes;
}

std::string FormatSize(int64_t bytes) {
  const char* units[] = {"", "K", "M", "G"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (u < 3 && v >= 1024 && std::fmod(v, 1024) == 0) {
    v /= 1024;
    ++u;
  }
  std::ostringstream os;
  os << static_cast<int64_t>(v) << units[u];
  if (u == 0 && std::fmod(v, 1) != 0) os.str(std::to_string(bytes));
  return os.str();
}

StatusOr<std::vector<int>> ParseIndexList(const std::string& text) {
  // Indices 0..kMaxIndex (a box of at most 1024 GPUs), each once; a range is "a-b" with a <= b.
  constexpr int kMaxIndex = 1023;
  std::vector<int> out;
  std::set<int> seen;
  std::stringstream ss(text);
  std::string item;
  const std::string bad = "'" + text + "': expected GPU indices like 0,1,2 or 0-3";
  auto index = [&](const std::string& digits) -> StatusOr<int> {
    if (digits.empty()) return InvalidArgumentError(bad);
    for (char c : digits)
      if (!std::isdigit(static_cast<unsigned char>(c))) return InvalidArgumentError(bad);
    const int v = digits.size() > 4 ? kMaxIndex + 1 : std::stoi(digits);  // no overflow
    if (v > kMaxIndex)
      return InvalidArgumentError("'" + text + "': GPU index " + digits + " is past " + std::to_string(kMaxIndex));
    return v;
  };
  while (std::getline(ss, item, ',')) {
    const size_t dash = item.find('-');
    if (dash != std::string::npos && item.find('-', dash + 1) != std::string::npos)
      return InvalidArgumentError(bad + " (one dash per range: '" + item + "')");
    ASSIGN_OR_RETURN(const int a, index(item.substr(0, dash)));
    int b = a;
    if (dash != std::string::npos) {
      ASSIGN_OR_RETURN(b, index(item.substr(dash + 1)));
      if (b < a) return InvalidArgumentError(bad + " (range '" + item + "' runs backwards)");
    }
    for (int i = a; i <= b; ++i) {
      if (!seen.insert(i).second)
        return InvalidArgumentError("'" + text + "': GPU " + std::to_string(i) + " is listed twice");
      out.push_back(i);
    }
  }
  if (out.empty()) return InvalidArgumentError(bad);
  return out;
}

}  // namespace specsim::tools

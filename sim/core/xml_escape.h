// XML escaping for the SVG and other XML the tools write.
#pragma once

#include <string>

namespace specsim {

// "&amp;", "&lt;", "&gt;", "&quot;", "&apos;" for the five XML specials; other bytes unchanged.
inline std::string XmlEscape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace specsim

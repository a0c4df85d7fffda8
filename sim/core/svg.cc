#include "sim/core/svg.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>

#include "sim/core/xml_escape.h"

namespace specsim::svg {
namespace {

std::string Attributes(std::string_view attributes) { return attributes.empty() ? "" : " " + std::string(attributes); }

}  // namespace

std::string Open(double width, double height, bool standalone) {
  const std::string head =
      standalone
          ? fmt::format(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
                "width=\"{0:g}\" height=\"{1:g}\" viewBox=\"0 0 {0:g} {1:g}\"",
                width, height)
          : fmt::format("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:g}\" height=\"{:g}\"", width, height);
  return head +
         " font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
}

std::string Close() { return "</svg>\n"; }

std::string Line(double x1, double y1, double x2, double y2, std::string_view stroke, std::string_view attributes) {
  return fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\"{}/>\n", x1, y1, x2,
                     y2, stroke, Attributes(attributes));
}

std::string Text(double x, double y, std::string_view anchor, std::string_view text, std::string_view attributes) {
  return fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"{}\"{}>{}</text>\n", x, y, anchor,
                     Attributes(attributes), XmlEscape(std::string(text)));
}

std::string Circle(double cx, double cy, double r, std::string_view fill, std::string_view title,
                   std::string_view attributes) {
  const std::string head = fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{:g}\" fill=\"{}\"{}", cx, cy, r, fill,
                                       Attributes(attributes));
  if (title.empty()) return head + "/>\n";
  return head + "><title>" + XmlEscape(std::string(title)) + "</title></circle>\n";
}

std::string Rect(double x, double y, double width, double height, std::string_view fill, std::string_view attributes) {
  return fmt::format("<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" fill=\"{}\"{}/>\n", x, y,
                     width, height, fill, Attributes(attributes));
}

std::string SeriesColour(int i) {
  // The first eight: matplotlib's "tab10" colours in the order the plots have always used.
  static const char* const kFirst[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                       "#9467bd", "#8c564b", "#e377c2", "#17becf"};
  if (i >= 0 && i < 8) return kFirst[i];
  // HSL to RGB: hue by the golden angle; lightness 0.38 / 0.5 / 0.62 and saturation 0.55 / 0.8 in
  // turn (six shades, so that hues of one shade stay far enough apart to round to other bytes).
  const double h = std::fmod(137.50776405 * i, 360.0) / 60.0;
  const double l = 0.38 + 0.12 * (i % 3), sat = (i / 3) % 2 ? 0.8 : 0.55;
  const double c = (1 - std::abs(2 * l - 1)) * sat, x = c * (1 - std::abs(std::fmod(h, 2.0) - 1)), m = l - c / 2;
  double r = 0, g = 0, b = 0;
  switch (static_cast<int>(h) % 6) {
    case 0: r = c, g = x; break;
    case 1: r = x, g = c; break;
    case 2: g = c, b = x; break;
    case 3: g = x, b = c; break;
    case 4: r = x, b = c; break;
    default: r = c, b = x; break;
  }
  auto byte = [m](double v) { return static_cast<int>(std::lround(255 * (v + m))); };
  char out[8];
  std::snprintf(out, sizeof(out), "#%02x%02x%02x", byte(r), byte(g), byte(b));
  return out;
}

}  // namespace specsim::svg

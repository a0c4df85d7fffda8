#include "sim/core/svg.h"

#include <fmt/format.h>

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

}  // namespace specsim::svg

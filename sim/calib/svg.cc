#include "sim/calib/svg.h"

#include "sim/core/xml_escape.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace specsim::calib {

std::string ScatterSvg(const std::vector<ItemResult>& items, const std::string& title) {
  const std::map<std::string, std::string> colours = {
      {"pcie", "#1f77b4"}, {"collectives", "#ff7f0e"}, {"kernels", "#2ca02c"}, {"decode", "#d62728"}};
  double lo = INFINITY, hi = 0;
  for (const ItemResult& r : items) {
    if (!r.simulated || r.predicted_us <= 0 || r.measured_us <= 0) continue;
    lo = std::min({lo, r.predicted_us, r.measured_us});
    hi = std::max({hi, r.predicted_us, r.measured_us});
  }
  if (!(hi > 0)) {
    lo = 1;
    hi = 10;
  }
  const double dlo = std::floor(std::log10(lo)), dhi = std::max(dlo + 1, std::ceil(std::log10(hi)));
  const double w = 640, h = 640, left = 80, right = 170, top = 50, bottom = 70;
  const double pw = w - left - right, ph = h - top - bottom;
  auto x = [&](double v) { return left + (std::log10(v) - dlo) / (dhi - dlo) * pw; };
  auto y = [&](double v) { return top + ph - (std::log10(v) - dlo) / (dhi - dlo) * ph; };
  std::string s = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{}\" y=\"25\" text-anchor=\"middle\" font-size=\"14\">{}</text>\n",
      w, h, w, h, left + pw / 2, XmlEscape(title));
  s += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"black\"/>\n", left, top,
                   pw, ph);
  for (double d = dlo; d <= dhi + 1e-9; d += 1) {
    const double v = std::pow(10.0, d);
    const std::string label = v >= 1 ? fmt::format("{:g}", v) : fmt::format("{:g}", v);
    s += fmt::format("<line x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\" stroke=\"#ddd\"/>\n", x(v), top, x(v),
                     top + ph);
    s += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>\n", left, y(v), left + pw,
                     y(v));
    s += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x(v), top + ph + 18, label);
    s += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", left - 6, y(v) + 4, label);
  }
  s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">measured (us, log)</text>\n", left + pw / 2, h - 20);
  s += fmt::format(
      "<text x=\"20\" y=\"{}\" text-anchor=\"middle\" transform=\"rotate(-90 20 {})\">predicted (us, log)</text>\n",
      top + ph / 2, top + ph / 2);
  const double a = std::pow(10.0, dlo), b = std::pow(10.0, dhi);
  s += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"black\"/>\n", x(a), y(a),
                   x(b), y(b));
  for (double f : {1.1, 1 / 1.1})
    s += fmt::format(
        "<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"gray\" stroke-dasharray=\"4 3\"/>\n",
        x(a), y(a * f), x(b), y(b * f));
  for (const ItemResult& r : items) {
    if (!r.simulated || r.predicted_us <= 0 || r.measured_us <= 0) continue;
    auto it = colours.find(r.suite);
    const std::string colour = it == colours.end() ? "#7f7f7f" : it->second;
    s += fmt::format(
        "<circle cx=\"{:.2f}\" cy=\"{:.2f}\" r=\"3\" fill=\"{}\" fill-opacity=\"0.7\"><title>{}: {:.4g} us predicted, "
        "{:.4g} us measured</title></circle>\n",
        x(r.measured_us), y(r.predicted_us), colour, XmlEscape(r.name), r.predicted_us, r.measured_us);
  }
  double ly = top + 10;
  for (const char* suite : {"pcie", "collectives", "kernels", "decode"}) {
    s += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"5\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">{}</text>\n",
                     left + pw + 20, ly, colours.at(suite), left + pw + 32, ly + 4, suite);
    ly += 20;
  }
  s += fmt::format(
      "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"gray\" stroke-dasharray=\"4 3\"/><text x=\"{}\" "
      "y=\"{}\">+-10%</text>\n",
      left + pw + 12, ly, left + pw + 28, ly, left + pw + 32, ly + 4);
  s += "</svg>\n";
  return s;
}

}  // namespace specsim::calib

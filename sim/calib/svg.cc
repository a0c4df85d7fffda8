#include "sim/calib/svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>
#include <set>

#include "sim/core/svg.h"

namespace specsim::calib {

std::string ScatterSvg(const std::vector<ItemResult>& items, const std::string& title) {
  // One colour per suite: the suites in their report order, then any other in order of appearance.
  std::vector<std::string> suites = {"pcie", "collectives", "kernels", "decode", "pacing"};
  for (const ItemResult& r : items)
    if (std::find(suites.begin(), suites.end(), r.suite) == suites.end()) suites.push_back(r.suite);
  std::map<std::string, std::string> colours;
  for (size_t i = 0; i < suites.size(); ++i) {
    static const int kOrder[] = {0, 3, 2, 1};  // pcie, collectives, kernels, decode as before
    colours[suites[i]] = svg::SeriesColour(i < 4 ? kOrder[i] : static_cast<int>(i));
  }
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
  std::string s = svg::Open(w, h, /*standalone=*/true);
  s += svg::Text(left + pw / 2, 25, "middle", title, "font-size=\"14\"");
  s += svg::Rect(left, top, pw, ph, "none", "stroke=\"black\"");
  // Decade ticks and grid on both log axes.
  for (double d = dlo; d <= dhi + 1e-9; d += 1) {
    const double v = std::pow(10.0, d);
    const std::string label = fmt::format("{:g}", v);
    s += svg::Line(x(v), top, x(v), top + ph, "#ddd");
    s += svg::Line(left, y(v), left + pw, y(v), "#ddd");
    s += svg::Text(x(v), top + ph + 18, "middle", label);
    s += svg::Text(left - 6, y(v) + 4, "end", label);
  }
  s += svg::Text(left + pw / 2, h - 20, "middle", "measured (us, log)");
  s += svg::Text(20, top + ph / 2, "middle", "predicted (us, log)",
                 fmt::format("transform=\"rotate(-90 20 {:.1f})\"", top + ph / 2));
  // y = x and +-10%.
  const double a = std::pow(10.0, dlo), b = std::pow(10.0, dhi);
  s += svg::Line(x(a), y(a), x(b), y(b), "black");
  for (double f : {1.1, 1 / 1.1}) s += svg::Line(x(a), y(a * f), x(b), y(b * f), "gray", "stroke-dasharray=\"4 3\"");
  for (const ItemResult& r : items) {
    if (!r.simulated || r.predicted_us <= 0 || r.measured_us <= 0) continue;
    const std::string& colour = colours.at(r.suite);
    s += svg::Circle(x(r.measured_us), y(r.predicted_us), 3, colour,
                     fmt::format("{}: {:.4g} us predicted, {:.4g} us measured", r.name, r.predicted_us, r.measured_us),
                     "fill-opacity=\"0.7\"");
  }
  // Legend: the suites with items, then the +-10% lines.
  std::set<std::string> present;
  for (const ItemResult& r : items)
    if (r.simulated) present.insert(r.suite);
  double ly = top + 10;
  for (const std::string& suite : suites) {
    if (!present.count(suite)) continue;
    s += svg::Circle(left + pw + 20, ly, 5, colours.at(suite));
    s += svg::Text(left + pw + 32, ly + 4, "start", suite);
    ly += 20;
  }
  s += svg::Line(left + pw + 12, ly, left + pw + 28, ly, "gray", "stroke-dasharray=\"4 3\"");
  s += svg::Text(left + pw + 32, ly + 4, "start", "+-10%");
  return s + svg::Close();
}

}  // namespace specsim::calib

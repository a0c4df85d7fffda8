#include "sim/tools/svg_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "sim/core/svg.h"

namespace specsim::tools {

namespace {

// A "nice" step (1, 2 or 5 x 10^k) so that about `ticks` steps cover `range`.
double NiceStep(double range, int ticks) {
  double raw = range / ticks;
  double p = std::pow(10, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * p >= raw) return m * p;
  return 10 * p;
}

}  // namespace

std::string RenderSvgLinePlot(const SvgPlot& plot) {
  // The legend sits right of the plot: make room for its longest label (~7 px per character).
  size_t longest = 0;
  for (const SvgSeries& s : plot.series) longest = std::max(longest, s.name.size());
  const double left = 80, top = 40, bottom = 60;
  const double legend = 50 + 7.0 * static_cast<double>(longest);
  const double w = plot.width - left - 200, h = plot.height - top - bottom;  // plot area
  const int total_width = static_cast<int>(left + w + legend);
  double x_min = 0, x_max = 1, y_max = 0;
  bool first = true;
  for (const SvgSeries& s : plot.series) {
    for (auto [x, y] : s.points) {
      if (first) x_min = x_max = x;
      x_min = std::min(x_min, x);
      x_max = std::max(x_max, x);
      y_max = std::max(y_max, y);
      first = false;
    }
  }
  if (!plot.x_categories.empty()) {
    x_min = 0;
    x_max = std::max<double>(1, static_cast<double>(plot.x_categories.size()) - 1);
  }
  if (x_max == x_min) x_max = x_min + 1;
  if (y_max <= 0) y_max = 1;
  const double step = NiceStep(y_max, 5);
  y_max = std::ceil(y_max / step) * step;
  auto px = [&](double x) { return left + (x - x_min) / (x_max - x_min) * w; };
  auto py = [&](double y) { return top + h - y / y_max * h; };

  std::string out = svg::Open(total_width, plot.height, /*standalone=*/false);
  out += svg::Text(left, 22, "start", plot.title, "font-size=\"15\"");
  // Axes, grid and ticks.
  for (double y = 0; y <= y_max + step / 2; y += step) {
    out += svg::Line(left, py(y), left + w, py(y), "#ddd");
    out += svg::Text(left - 6, py(y) + 4, "end", fmt::format("{:g}", y));
  }
  if (!plot.x_categories.empty()) {
    for (size_t i = 0; i < plot.x_categories.size(); ++i)
      out += svg::Text(px(double(i)), top + h + 18, "middle", plot.x_categories[i]);
  } else {
    const double xs = NiceStep(x_max - x_min, 6);
    for (double x = std::ceil(x_min / xs) * xs; x <= x_max + xs / 2; x += xs)
      out += svg::Text(px(x), top + h + 18, "middle", fmt::format("{:g}", x));
  }
  out += svg::Line(left, top, left, top + h, "black");
  out += svg::Line(left, top + h, left + w, top + h, "black");
  out += svg::Text(left + w / 2, top + h + 40, "middle", plot.x_label);
  out += svg::Text(0, 0, "middle", plot.y_label,
                   fmt::format("transform=\"translate(20,{:.1f}) rotate(-90)\"", top + h / 2));
  // Series and legend.
  for (size_t i = 0; i < plot.series.size(); ++i) {
    const SvgSeries& s = plot.series[i];
    const std::string colour = svg::SeriesColour(static_cast<int>(i));
    std::string path;
    for (auto [x, y] : s.points) path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "M" : " L", px(x), py(y));
    out += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>\n", path, colour);
    for (auto [x, y] : s.points) out += svg::Circle(px(x), py(y), 3, colour, fmt::format("{}: {:g}", s.name, y));
    const double ly = top + 10 + 18 * static_cast<double>(i);
    out += svg::Rect(left + w + 15, ly - 10, 12, 12, colour);
    out += svg::Text(left + w + 32, ly, "start", s.name);
  }
  return out + svg::Close();
}

}  // namespace specsim::tools

// A small SVG line-plot writer (no dependencies): series of (x, y) points over categorical x
// positions 0..k-1 (labelled by x_categories) or numeric x, a linear y axis from 0, a legend.
#pragma once

#include <string>
#include <vector>

namespace specsim::tools {

struct SvgSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y)
};

struct SvgPlot {
  std::string title;
  std::string x_label;
  std::string y_label;
  std::vector<std::string> x_categories;  // when set, x is an index into these labels
  std::vector<SvgSeries> series;
  int width = 860;
  int height = 480;
};

// The whole SVG document. Text is XML-escaped.
std::string RenderSvgLinePlot(const SvgPlot& plot);

}  // namespace specsim::tools

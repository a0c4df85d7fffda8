// The SVG elements the plots are drawn with (sim/calib/svg.cc: predicted against measured;
// sim/tools/svg_plot.cc: sweep line plots): the document, lines, text, circles and rectangles.
// Coordinates are printed with one decimal; text and titles are XML-escaped; `attributes` is
// appended to the element as given (e.g. "stroke-dasharray=\"4 3\"").
#pragma once

#include <string>
#include <string_view>

namespace specsim::svg {

// The document's start: width x height px, a white background, sans-serif 12 px text. With
// `standalone` (a file of its own) the XML declaration and a viewBox come first.
std::string Open(double width, double height, bool standalone);
std::string Close();
std::string Line(double x1, double y1, double x2, double y2, std::string_view stroke, std::string_view attributes = "");
// `anchor`: "start", "middle" or "end".
std::string Text(double x, double y, std::string_view anchor, std::string_view text, std::string_view attributes = "");
// With a <title> (shown on hover) when `title` is not empty.
std::string Circle(double cx, double cy, double r, std::string_view fill, std::string_view title = "",
                   std::string_view attributes = "");
std::string Rect(double x, double y, double width, double height, std::string_view fill,
                 std::string_view attributes = "");

// The colour of series `i` ("#rrggbb"), distinct for any number of series: eight of matplotlib's
// "tab10" colours first, then hues stepped by the golden angle (137.5 degrees) in six shades, so
// that neighbours differ in hue and no two of the first thousand coincide (a test checks).
std::string SeriesColour(int i);

}  // namespace specsim::svg

// A hand-written SVG scatter plot of predicted against measured time: log-log axes with decade
// ticks, the y = x line and +-10% lines, one colour per suite, a legend, and a <title> per point
// (the item name, shown on hover). Item names are XML-escaped.
#pragma once

#include <string>
#include <vector>

#include "sim/calib/compare.h"

namespace specsim::calib {

// The plot of the simulated items of `items` (non-positive times are skipped). `title` heads it.
std::string ScatterSvg(const std::vector<ItemResult>& items, const std::string& title);

}  // namespace specsim::calib

// The short human summary printed at the end of a run, computed from the trace alone (so it can be
// re-printed from any trace file and is tested on the CPU).
#pragma once

#include <string>

#include "specsim/trace.pb.h"

namespace specsim::validate {

std::string SummaryTable(const trace::Trace& t);

}  // namespace specsim::validate

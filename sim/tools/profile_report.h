// Printing of what `specsim compare` adds for a trace imported from a profiler
// (calib::BuildProfileReport, sim/calib/profile_report.h): per pass the measured -> predicted time
// by kernel class, per NCCL call the ranks' waits against the transfer, and the largest
// disagreements; as text or as JSON.
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "sim/calib/profile_report.h"

namespace specsim::tools {

// Nothing when the report is empty (not an imported profile's trace).
void PrintProfileReport(const calib::ProfileReport& report, std::ostream& out);
nlohmann::json ProfileReportJson(const calib::ProfileReport& report);

}  // namespace specsim::tools

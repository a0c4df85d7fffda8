#include "sim/tools/profile_report.h"

#include <fmt/format.h>

#include <set>
#include <string>

namespace specsim::tools {

void PrintProfileReport(const calib::ProfileReport& r, std::ostream& out) {
  if (r.empty()) return;
  if (!r.passes.empty()) {
    out << "\nprofile passes by kernel class (measured GPU busy -> predicted device time, us; nccl: kernel time "
           "incl. waits -> transfer)\n";
    for (const calib::PassClassRow& p : r.passes) {
      std::set<std::string> classes;
      for (const auto& [c, us] : p.measured_us) classes.insert(c);
      for (const auto& [c, us] : p.predicted_us) classes.insert(c);
      std::string row;
      for (const std::string& c : classes)
        row += fmt::format("  {} {:.1f}->{:.1f}", c, p.measured_us.count(c) ? p.measured_us.at(c) : 0.0,
                           p.predicted_us.count(c) ? p.predicted_us.at(c) : 0.0);
      out << fmt::format("{}\n {}\n  largest gap: {} ({:+.1f} us)\n", p.item, row, p.largest, p.largest_gap_us);
    }
  }
  for (const std::string& n : r.notes) out << "note: " << n << "\n";
  if (!r.collectives.empty()) {
    out << "\nNCCL calls: each rank's kernel = its wait for the last rank (skew, host gaps) + the transfer (us)\n";
    out << fmt::format("{:<48} {:>11} {:>11} {:>11} {:>11}\n", "call", "transfer", "predicted", "wait_mean",
                       "wait_share");
    for (const calib::CollectiveWaitRow& c : r.collectives)
      out << fmt::format("{:<48} {:>11.2f} {:>11} {:>11.2f} {:>10.0f}%\n", c.item, c.transfer_us,
                         c.predicted_us > 0 ? fmt::format("{:.2f}", c.predicted_us) : std::string("-"), c.wait_mean_us,
                         100 * c.wait_share);
  }
  if (!r.disagreements.empty()) {
    out << "\nlargest disagreements and what the prediction rests on\n";
    for (const calib::Disagreement& d : r.disagreements)
      out << fmt::format("{:<56} {:>+7.1f}%  {}\n", d.item, 100 * d.error, d.cause);
  }
}

nlohmann::json ProfileReportJson(const calib::ProfileReport& r) {
  nlohmann::json j;
  j["passes"] = nlohmann::json::array();
  for (const calib::PassClassRow& p : r.passes)
    j["passes"].push_back({{"item", p.item},
                           {"measured_us", p.measured_us},
                           {"predicted_us", p.predicted_us},
                           {"largest_gap_class", p.largest},
                           {"largest_gap_us", p.largest_gap_us}});
  j["collectives"] = nlohmann::json::array();
  for (const calib::CollectiveWaitRow& c : r.collectives)
    j["collectives"].push_back({{"item", c.item},
                                {"transfer_us", c.transfer_us},
                                {"predicted_us", c.predicted_us},
                                {"wait_mean_us", c.wait_mean_us},
                                {"wait_share", c.wait_share}});
  j["disagreements"] = nlohmann::json::array();
  for (const calib::Disagreement& d : r.disagreements)
    j["disagreements"].push_back({{"item", d.item}, {"error", d.error}, {"cause", d.cause}});
  j["notes"] = r.notes;
  return j;
}

}  // namespace specsim::tools

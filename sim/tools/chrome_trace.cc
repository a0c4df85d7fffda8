#include "sim/tools/chrome_trace.h"

#include <nlohmann/json.hpp>

#include "sim/net/transfer.h"

namespace specsim::tools {

using nlohmann::json;

void ChromeTraceWriter::AddRun(const std::string& name, const coll::FabricTrace& trace, SimTime duration_ps) {
  const int pid = next_pid_++;
  events_.push_back(json{{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"args", {{"name", name}}}}.dump());
  for (size_t n = 0; n < topology_->nodes.size(); ++n) {
    events_.push_back(json{{"ph", "M"},
                           {"name", "thread_name"},
                           {"pid", pid},
                           {"tid", n},
                           {"args", {{"name", "from " + topology_->nodes[n].name}}}}
                          .dump());
  }
  auto us = [&](SimTime ps) { return MicrosFromPicos(ps + offset_ps_); };
  for (const net::FlowRecord& f : trace.flows) {
    events_.push_back(json{
        {"ph", "X"},
        {"name", f.label},
        {"cat", net::MechanismName(f.mechanism)},
        {"pid", pid},
        {"tid", f.src_node},
        {"ts", us(f.start_ps)},
        {"dur", MicrosFromPicos(f.end_ps - f.start_ps)},
        {"args",
         {{"bytes", f.bytes}, {"src", topology_->nodes[f.src_node].name}, {"dst", topology_->nodes[f.dst_node].name}}}}
                          .dump());
  }
  for (const net::ResourceRateSample& s : trace.rates) {
    events_.push_back(json{{"ph", "C"},
                           {"name", trace.resource_names[s.resource] + " GB/s"},
                           {"pid", pid},
                           {"ts", us(s.time_ps)},
                           {"args", {{"GB/s", s.gbps}}}}
                          .dump());
  }
  offset_ps_ += duration_ps + duration_ps / 10 + kPicosPerMicro;
}

void ChromeTraceWriter::Write(std::ostream& out) const {
  out << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  for (size_t i = 0; i < events_.size(); ++i) out << events_[i] << (i + 1 < events_.size() ? ",\n" : "\n");
  out << "]}\n";
}

}  // namespace specsim::tools

#include "sim/tools/chrome_trace.h"

#include <sstream>

#include "sim/net/transfer.h"

namespace specsim::tools {

using nlohmann::json;

void TraceEventWriter::ProcessName(int pid, const std::string& name) {
  events_.push_back(json{{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"args", {{"name", name}}}}.dump());
}

void TraceEventWriter::ProcessSortIndex(int pid, int index) {
  events_.push_back(
      json{{"ph", "M"}, {"name", "process_sort_index"}, {"pid", pid}, {"args", {{"sort_index", index}}}}.dump());
}

void TraceEventWriter::ThreadName(int pid, int64_t tid, const std::string& name) {
  events_.push_back(
      json{{"ph", "M"}, {"name", "thread_name"}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}}.dump());
}

void TraceEventWriter::Slice(int pid, int64_t tid, const std::string& name, const std::string& category, double ts_us,
                             double dur_us, const json& args) {
  json e{{"ph", "X"}, {"name", name}, {"cat", category}, {"pid", pid}, {"tid", tid}, {"ts", ts_us}, {"dur", dur_us}};
  if (!args.is_null()) e["args"] = args;
  events_.push_back(e.dump());
}

void TraceEventWriter::Counter(int pid, const std::string& name, double ts_us, const std::string& series,
                               double value) {
  events_.push_back(json{{"ph", "C"}, {"name", name}, {"pid", pid}, {"ts", ts_us}, {"args", {{series, value}}}}.dump());
}

void TraceEventWriter::Write(std::ostream& out) const {
  out << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  for (size_t i = 0; i < events_.size(); ++i) out << events_[i] << (i + 1 < events_.size() ? ",\n" : "\n");
  out << "]}\n";
}

std::string TraceEventWriter::ToString() const {
  std::ostringstream out;
  Write(out);
  return out.str();
}

void ChromeTraceWriter::AddRun(const std::string& name, const coll::FabricTrace& trace, SimTime duration_ps) {
  const int pid = next_pid_++;
  events_.ProcessName(pid, name);
  for (size_t n = 0; n < topology_->nodes.size(); ++n)
    events_.ThreadName(pid, static_cast<int64_t>(n), "from " + topology_->nodes[n].name);
  auto us = [&](SimTime ps) { return MicrosFromPicos(ps + offset_ps_); };
  for (const net::FlowRecord& f : trace.flows) {
    events_.Slice(
        pid, f.src_node, f.label, net::MechanismName(f.mechanism), us(f.start_ps),
        MicrosFromPicos(f.end_ps - f.start_ps),
        {{"bytes", f.bytes}, {"src", topology_->nodes[f.src_node].name}, {"dst", topology_->nodes[f.dst_node].name}});
  }
  for (const net::ResourceRateSample& s : trace.rates)
    events_.Counter(pid, trace.resource_names[s.resource] + " GB/s", us(s.time_ps), "GB/s", s.gbps);
  offset_ps_ += duration_ps + duration_ps / 10 + kPicosPerMicro;
}

}  // namespace specsim::tools

#include "sim/tools/chrome_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "sim/net/transfer.h"

namespace specsim::tools {

using nlohmann::json;

namespace {
// The thread of lane `lane` of source node `node`: lanes of a node sort together.
int64_t LaneTid(int node, size_t lane) { return (int64_t{node} << 16) + static_cast<int64_t>(lane); }
}  // namespace

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

std::vector<std::string> PartialOverlaps(const std::string& trace_json) {
  const json j = json::parse(trace_json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.contains("traceEvents")) return {"not a trace-event JSON object"};
  struct S {
    double start, end;
    std::string name;
  };
  std::map<std::pair<int64_t, int64_t>, std::vector<S>> tracks;
  for (const json& e : j["traceEvents"])
    if (e.value("ph", "") == "X") {
      const double ts = e.value("ts", 0.0);
      tracks[{e.value("pid", int64_t{0}), e.value("tid", int64_t{0})}].push_back(
          {ts, ts + e.value("dur", 0.0), e.value("name", "")});
    }
  std::vector<std::string> bad;
  for (auto& [track, slices] : tracks) {
    std::stable_sort(slices.begin(), slices.end(), [](const S& a, const S& b) {
      return a.start < b.start || (a.start == b.start && a.end > b.end);  // parents before children
    });
    std::vector<const S*> open;  // the enclosing slices
    for (const S& s : slices) {
      // Times are us with ps resolution: within 1e-6 us two ends are one instant (JSON doubles
      // of ts + dur round; Perfetto reads integer ns).
      constexpr double kSameInstantUs = 1e-6;
      while (!open.empty() && open.back()->end <= s.start + kSameInstantUs) open.pop_back();
      if (!open.empty() && s.end > open.back()->end + kSameInstantUs) {
        bad.push_back("pid " + std::to_string(track.first) + " tid " + std::to_string(track.second) + ": " + s.name +
                      " [" + std::to_string(s.start) + ", " + std::to_string(s.end) + ") overlaps " +
                      open.back()->name + " [" + std::to_string(open.back()->start) + ", " +
                      std::to_string(open.back()->end) + ")");
        continue;
      }
      open.push_back(&s);
    }
  }
  return bad;
}

void ChromeTraceWriter::AddRun(const std::string& name, const coll::FabricTrace& trace, SimTime duration_ps) {
  const int pid = next_pid_++;
  events_.ProcessName(pid, name);
  auto us = [&](SimTime ps) { return MicrosFromPicos(ps + offset_ps_); };
  // Flows of one source run at once (a one-shot rank reads its n - 1 peers together): each goes on
  // the first lane of its node free at its start, so that no lane holds partly overlapping slices.
  std::vector<const net::FlowRecord*> flows;
  for (const net::FlowRecord& f : trace.flows) flows.push_back(&f);
  std::stable_sort(flows.begin(), flows.end(),
                   [](const net::FlowRecord* a, const net::FlowRecord* b) { return a->start_ps < b->start_ps; });
  std::map<int, std::vector<SimTime>> lane_ends;  // per source node, the end of each lane's last flow
  for (const net::FlowRecord* f : flows) {
    std::vector<SimTime>& ends = lane_ends[f->src_node];
    size_t lane = 0;
    while (lane < ends.size() && ends[lane] > f->start_ps) ++lane;
    if (lane == ends.size()) {
      ends.push_back(0);
      const std::string& node = topology_->nodes[f->src_node].name;
      events_.ThreadName(pid, LaneTid(f->src_node, lane),
                         lane == 0 ? "from " + node : fmt::format("from {} ({})", node, lane + 1));
    }
    ends[lane] = f->end_ps;
    events_.Slice(pid, LaneTid(f->src_node, lane), f->label, net::MechanismName(f->mechanism), us(f->start_ps),
                  MicrosFromPicos(f->end_ps - f->start_ps),
                  {{"bytes", f->bytes},
                   {"src", topology_->nodes[f->src_node].name},
                   {"dst", topology_->nodes[f->dst_node].name}});
  }
  for (const net::ResourceRateSample& s : trace.rates)
    events_.Counter(pid, trace.resource_names[s.resource] + " GB/s", us(s.time_ps), "GB/s", s.gbps);
  offset_ps_ += duration_ps + duration_ps / 10 + kPicosPerMicro;
}

}  // namespace specsim::tools

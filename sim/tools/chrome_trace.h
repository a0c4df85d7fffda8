// Chrome / Perfetto trace-event JSON (ui.perfetto.dev opens it).
//
// TraceEventWriter holds the events, one JSON object each: process and thread names, complete
// slices ("X") and counters ("C"); Write prints {"displayTimeUnit":"ns","traceEvents":[...]} with
// one event per line. Its users: ChromeTraceWriter (`specsim collective --trace`: one process per
// simulated run, per source node as many threads ("lanes") as it has flows at once, a slice for
// every flow, one counter track per link direction with its aggregate rate in GB/s) and the rank
// timelines of `specsim simulate --trace`.
//
// Perfetto draws a track's slices as a stack: two slices of one track may nest but never partly
// overlap (PartialOverlaps finds those; every trace the commands write is checked by a test).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "sim/coll/executor.h"
#include "sim/net/topology.h"

namespace specsim::tools {

class TraceEventWriter {
 public:
  void ProcessName(int pid, const std::string& name);
  void ProcessSortIndex(int pid, int index);
  void ThreadName(int pid, int64_t tid, const std::string& name);
  // A complete slice of dur_us from ts_us; `args` (a JSON object) when not null.
  void Slice(int pid, int64_t tid, const std::string& name, const std::string& category, double ts_us, double dur_us,
             const nlohmann::json& args = nullptr);
  // One sample of the counter track `name`: series `series` = value from ts_us on.
  void Counter(int pid, const std::string& name, double ts_us, const std::string& series, double value);
  void Write(std::ostream& out) const;
  std::string ToString() const;
  int num_events() const { return static_cast<int>(events_.size()); }

 private:
  std::vector<std::string> events_;  // serialised JSON objects
};

// The slices ("X") of `trace_json` that partly overlap an earlier slice of the same (pid, tid)
// track: each as "pid P tid T: NAME [a, b) overlaps NAME2 [c, d)"; empty when the trace is valid.
// An unparsable trace is one entry saying so.
std::vector<std::string> PartialOverlaps(const std::string& trace_json);

class ChromeTraceWriter {
 public:
  explicit ChromeTraceWriter(const net::Topology* topology) : topology_(topology) {}
  // Adds one run; its events are shifted to start after the previous run.
  void AddRun(const std::string& name, const coll::FabricTrace& trace, SimTime duration_ps);
  void Write(std::ostream& out) const { events_.Write(out); }
  int num_events() const { return events_.num_events(); }

 private:
  const net::Topology* topology_;
  TraceEventWriter events_;
  SimTime offset_ps_ = 0;
  int next_pid_ = 1;
};

}  // namespace specsim::tools

// Writes Chrome / Perfetto trace-event JSON (ui.perfetto.dev opens it): one process per simulated
// run, one thread per source node with a slice for every flow, and one counter track per link
// direction with its aggregate rate in GB/s.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "sim/coll/executor.h"
#include "sim/net/topology.h"

namespace specsim::tools {

class ChromeTraceWriter {
 public:
  explicit ChromeTraceWriter(const net::Topology* topology) : topology_(topology) {}
  // Adds one run; its events are shifted to start after the previous run.
  void AddRun(const std::string& name, const coll::FabricTrace& trace, SimTime duration_ps);
  void Write(std::ostream& out) const;
  int num_events() const { return static_cast<int>(events_.size()); }

 private:
  const net::Topology* topology_;
  std::vector<std::string> events_;  // serialised JSON objects
  SimTime offset_ps_ = 0;
  int next_pid_ = 1;
};

}  // namespace specsim::tools

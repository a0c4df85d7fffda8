// Semantic checks of a parsed config::Hardware (the rules are listed in hardware_loader.h).
// Internal to sim/io: hardware_loader.cc runs the field checks, converts, then runs the graph
// checks on the converted topology.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "sim/core/status.h"
#include "sim/net/topology.h"
#include "specsim/hardware.pb.h"

namespace specsim::io {

// Collects problems, one line each: "FILE: PATH = VALUE: RULE" or "FILE: TEXT".
class ValidationErrors {
 public:
  explicit ValidationErrors(std::string_view filename) : filename_(filename) {}

  void Add(const std::string& path, const std::string& value, const std::string& rule);
  void AddPlain(const std::string& text);
  // Adds every line of a status message whose lines already name the file (field_ranges.h).
  void AddLines(const Status& status);
  bool empty() const { return lines_.empty(); }
  // All lines joined by '\n'. REQUIRES: !empty().
  Status ToStatus(StatusCode code = StatusCode::kInvalidArgument) const;

 private:
  std::string filename_;
  std::vector<std::string> lines_;
};

// Name -> index of gpu_models and nodes (first occurrence wins), filled by CheckHardwareFields.
struct HardwareIndex {
  std::map<std::string, int> models;
  std::map<std::string, int> nodes;
};

// Every per-field rule on gpu_models, nodes and links.
void CheckHardwareFields(const config::Hardware& hardware, ValidationErrors* errors, HardwareIndex* index);

// Every HOST_MEMORY has a MEMORY link to a root complex of its socket.
void CheckHostMemory(const net::Topology& topology, ValidationErrors* errors);

// Every pair of GPUs has a route (net::Router: only switches and root complexes forward).
void CheckGpusConnected(const net::Topology& topology, ValidationErrors* errors);

}  // namespace specsim::io

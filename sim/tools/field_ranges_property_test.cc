// The ranges the schemas declare (proto/specsim/range.proto) hold end to end: every numeric field of
// the bundled configs (hardware, calibration, framework profiles, models, scenarios), set to each
// end of its range, still loads and simulates to finite figures (or is refused by a rule between
// fields, never for its own range); set one step past an end (for doubles the next representable
// value outside) it is exit 2 naming the field. One field of each kind is tested once, on the
// first bundled file that sets it (the rest of that file's elements share its schema field).
#include <fmt/format.h>
#include <google/protobuf/text_format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "sim/io/embedded_files.h"
#include "sim/io/field_ranges.h"
#include "sim/tools/collective_command.h"
#include "sim/tools/simulate_command.h"
#include "specsim/calibration.pb.h"
#include "specsim/framework.pb.h"
#include "specsim/hardware.pb.h"
#include "specsim/model.pb.h"
#include "specsim/scenario.pb.h"

namespace specsim::tools {
namespace {

namespace pb = google::protobuf;

const std::string kLlamaH200 = "configs/scenarios/llama-3.1-8b-eagle3-h200-2x.textproto";
const std::string kKimiMtp = "configs/scenarios/kimi-k2-mtp-rtxpro6000-8x.textproto";

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("specsim_ranges_" + std::to_string(::getpid()) + "_" + name + ".textproto"))
      .string();
}

// One command run: its exit code, standard output and error.
struct Run {
  int exit_code = 0;
  std::string out, err;
};
// A command run on a variant of a bundled file: the variant's path, the bundled file's.
using Command = std::function<Run(const std::string& variant, const std::string& bundled)>;

Run Simulate(SimulateFlags f) {
  f.json = true;
  std::ostringstream out, err;
  const int code = RunSimulate(f, out, err);
  return {code, out.str(), err.str()};
}

Run Collective(CollectiveFlags f) {
  f.json = true;
  f.sizes = "4K,16M";
  std::ostringstream out, err;
  const int code = RunCollective(f, out, err);
  return {code, out.str(), err.str()};
}

// Every number of a JSON document is finite.
bool AllFinite(const nlohmann::json& j) {
  if (j.is_number_float()) return std::isfinite(j.get<double>());
  if (j.is_structured())
    for (const auto& e : j)
      if (!AllFinite(e)) return false;
  return true;
}

// "links[3] (a<->b).latency_ns" -> "links[].latency_ns": one schema field of one kind of file.
std::string SchemaField(const std::string& path) {
  return std::regex_replace(path, std::regex(R"(\[[^\]]*\]( \([^)]*\))?)"), "[]");
}

// The values a field is tested at: inside (each end) and outside (one step past each end).
struct Probe {
  double value;
  bool inside;
};
std::vector<Probe> ProbesOf(const config::FieldRange& r, const pb::FieldDescriptor* field) {
  const bool integer = field->cpp_type() != pb::FieldDescriptor::CPPTYPE_DOUBLE &&
                       field->cpp_type() != pb::FieldDescriptor::CPPTYPE_FLOAT;
  std::vector<Probe> probes;
  if (r.has_min()) {
    const double lo = r.min_exclusive() ? (integer ? r.min() + 1 : std::nextafter(r.min(), HUGE_VAL)) : r.min();
    const double below = r.min_exclusive() ? r.min() : (integer ? r.min() - 1 : std::nextafter(r.min(), -HUGE_VAL));
    probes.push_back({lo, true});
    // 0 is accepted as "unset" whatever the range; an unsigned field has nothing below 0.
    const bool unsigned_field = field->cpp_type() == pb::FieldDescriptor::CPPTYPE_UINT32 ||
                                field->cpp_type() == pb::FieldDescriptor::CPPTYPE_UINT64;
    if (!(r.zero_is_unset() && below == 0) && !(unsigned_field && below < 0)) probes.push_back({below, false});
  }
  if (r.has_max()) {
    probes.push_back({r.max(), true});
    const double above = integer ? r.max() + 1 : std::nextafter(r.max(), HUGE_VAL);
    // An integer field whose range ends at its type's end has nothing past it.
    const double type_max = field->cpp_type() == pb::FieldDescriptor::CPPTYPE_INT32    ? 2147483647.0
                            : field->cpp_type() == pb::FieldDescriptor::CPPTYPE_UINT32 ? 4294967295.0
                            : field->cpp_type() == pb::FieldDescriptor::CPPTYPE_INT64  ? 9.2233720368547758e18
                            : field->cpp_type() == pb::FieldDescriptor::CPPTYPE_UINT64 ? 1.8446744073709552e19
                                                                                       : HUGE_VAL;
    if (above < type_max) probes.push_back({above, false});
  }
  return probes;
}

// Tests every schema field of `files` (bundled paths) not in `tested` with `commands`.
// How the runs inside the ranges ended: a figure, a refusal by another rule, does not fit.
struct Outcomes {
  int runs = 0, figures = 0, refused = 0, does_not_fit = 0;
};

template <typename Proto>
void ProbeFiles(const std::vector<std::string>& files, const std::vector<Command>& commands_for_any,
                std::set<std::string>* tested, Outcomes* outcomes) {
  for (const std::string& file : files) {
    const auto text = io::EmbeddedFile(file);
    ASSERT_TRUE(text.has_value()) << file;
    Proto base;
    ASSERT_TRUE(pb::TextFormat::ParseFromString(std::string(*text), &base)) << file;
    std::vector<io::RangedValue> values;
    io::ForEachRangedValue(base, [&](const io::RangedValue& v) { values.push_back(v); });
    for (size_t k = 0; k < values.size(); ++k) {
      const std::string kind = Proto::descriptor()->name() + ":" + SchemaField(values[k].path);
      if (!tested->insert(kind).second) continue;
      for (const Probe& probe : ProbesOf(*values[k].range, values[k].field)) {
        Proto variant = base;
        size_t index = 0;
        io::ForEachRangedValue(variant, [&](const io::RangedValue& v) {
          if (index++ == k) io::SetNumericValue(v, probe.value);
        });
        std::string printed;
        pb::TextFormat::PrintToString(variant, &printed);
        const std::string path = TempPath(Proto::descriptor()->name());
        std::ofstream(path) << printed;
        const std::string what = file + ": " + values[k].path + " = " + fmt::format("{}", probe.value);
        for (const Command& command : commands_for_any) {
          if (std::getenv("SPECSIM_PROBE_VERBOSE") != nullptr) std::cerr << "probe " << what << "\n";
          const Run r = command(path, file);
          ++outcomes->runs;
          const std::string range_error = values[k].path + " = ";
          if (!probe.inside) {
            EXPECT_EQ(r.exit_code, 2) << what << " (outside its range) was accepted";
            EXPECT_NE(r.err.find(range_error), std::string::npos) << what << ": the error does not name it: " << r.err;
            continue;
          }
          // 3: the configuration does not fit in GPU memory (a result, printed as such).
          ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 2 || r.exit_code == 3)
              << what << ": exit " << r.exit_code << ": " << r.err;
          if (r.exit_code == 3) {
            ++outcomes->does_not_fit;
            continue;
          }
          if (r.exit_code == 2) {
            ++outcomes->refused;
            if (std::getenv("SPECSIM_PROBE_VERBOSE") != nullptr) std::cerr << "  refused: " << r.err << "\n";
            // Another rule may refuse the value (a tensor-parallel degree past the box's GPUs, a
            // required MoE field at 0), or a derived duration past the clock: never its own range.
            const config::FieldRange& range = *values[k].range;
            const std::string own =
                fmt::format("{}{}: must be {}{}", range_error, probe.value,
                            range.has_min() && range.has_max() ? "in " : "", io::DescribeRange(range));
            EXPECT_EQ(r.err.find(own), std::string::npos)
                << what << " is inside its range but refused for it: " << r.err;
            continue;
          }
          const nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
          ASSERT_FALSE(j.is_discarded()) << what << ": not JSON: " << r.out.substr(0, 200);
          EXPECT_TRUE(AllFinite(j)) << what << ": a figure is not finite: " << r.out.substr(0, 400);
          ++outcomes->figures;
        }
        std::filesystem::remove(path);
      }
    }
  }
}

std::vector<std::string> Bundled(const std::string& dir) {
  std::vector<std::string> out;
  for (std::string_view name : io::EmbeddedFileNames())
    if (name.starts_with(dir) && name.ends_with(".textproto") && name.find('/', dir.size()) == std::string::npos)
      out.emplace_back(name);
  return out;
}

TEST(FieldRangesProperty, EveryBundledFieldAtAndPastTheEndsOfItsRange) {
  std::set<std::string> tested;
  Outcomes outcomes;
  // Hardware: the Llama scenario on two GPUs of the box, and collectives on them. The one-GPU box
  // last: its fields are the others' (a field is tested on the first file that has it).
  std::vector<std::string> boxes = Bundled("configs/hardware/");
  std::stable_partition(boxes.begin(), boxes.end(), [](const std::string& b) { return b.find("-1x") == b.npos; });
  ProbeFiles<config::Hardware>(boxes,
                               {[](const std::string& p, const std::string&) {
                                  SimulateFlags f;
                                  f.scenario = kLlamaH200;
                                  f.set = {"hardware=" + p, "parallelism.tensor_parallel=2"};
                                  return Simulate(f);
                                },
                                [](const std::string& p, const std::string&) {
                                  CollectiveFlags f;
                                  f.hardware = p;
                                  f.gpus = "0-1";
                                  return Collective(f);
                                }},
                               &tested, &outcomes);
  // The calibration of the 2x H200, on that box's scenario and collectives.
  ProbeFiles<config::Calibration>(Bundled("configs/calibration/"),
                                  {[](const std::string& p, const std::string&) {
                                     SimulateFlags f;
                                     f.scenario = kLlamaH200;
                                     f.calibration = p;
                                     return Simulate(f);
                                   },
                                   [](const std::string& p, const std::string&) {
                                     CollectiveFlags f;
                                     f.hardware = "configs/hardware/h200-2x-nvlink.textproto";
                                     f.calibration = p;
                                     return Collective(f);
                                   }},
                                  &tested, &outcomes);
  ProbeFiles<config::FrameworkProfile>(Bundled("configs/frameworks/"), {[](const std::string& p, const std::string&) {
                                         SimulateFlags f;
                                         f.scenario = kLlamaH200;
                                         f.set = {"framework=" + p};
                                         return Simulate(f);
                                       }},
                                       &tested, &outcomes);
  // Models as a target (speculation off), EAGLE-3 heads as the Llama scenario's draft, MTP layers
  // on the Kimi MTP scenario.
  ProbeFiles<config::Model>(Bundled("models/"), {[](const std::string& p, const std::string& bundled) {
                              SimulateFlags f;
                              if (bundled.find("eagle3-") != std::string::npos) {
                                f.scenario = kLlamaH200;
                                f.draft = p;
                              } else if (bundled.find("-mtp") != std::string::npos) {
                                f.scenario = kKimiMtp;
                                f.model = p;
                              } else {
                                f.scenario = kLlamaH200;
                                f.model = p;
                                f.set = {"speculation.method=NONE"};
                              }
                              return Simulate(f);
                            }},
                            &tested, &outcomes);
  ProbeFiles<config::Scenario>(Bundled("configs/scenarios/"), {[](const std::string& p, const std::string&) {
                                 SimulateFlags f;
                                 f.scenario = p;
                                 return Simulate(f);
                               }},
                               &tested, &outcomes);
  std::cout << tested.size() << " schema fields, " << outcomes.runs << " runs; inside the ranges: " << outcomes.figures
            << " figures, " << outcomes.refused << " refused by another rule or the clock, " << outcomes.does_not_fit
            << " do not fit\n";
  EXPECT_GT(tested.size(), 150u);
  // Most values at the ends of their ranges simulate: the test is not passing on refusals alone.
  EXPECT_GT(outcomes.figures, 2 * (outcomes.refused + outcomes.does_not_fit));
}

}  // namespace
}  // namespace specsim::tools

#include "sim/tools/collective_command.h"

#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>

#include "sim/calib/calibration_loader.h"
#include "sim/calib/params.h"
#include "sim/calib/predictors.h"
#include "sim/coll/collective_planner.h"
#include "sim/coll/executor.h"
#include "sim/coll/nccl_transport.h"
#include "sim/io/file_io.h"
#include "sim/io/hardware_loader.h"
#include "sim/net/peer_access.h"
#include "sim/tools/chrome_trace.h"
#include "sim/tools/nccl_tests_format.h"
#include "sim/tools/sizes.h"
#include "specsim/trace.pb.h"

namespace specsim::tools {

namespace {

// The planner's errors name CollectiveRequest fields ("algorithm tree: ..."); on the command line
// those are flags.
Status WithFlagNames(const Status& s) {
  static constexpr std::pair<const char*, const char*> kFlags[] = {
      {"gpus: ", "--gpus: "}, {"channels: ", "--channels: "}, {"algorithm ", "--algo "}, {"protocol: ", "--proto: "}};
  const std::string& m = s.message();
  for (const auto& [field, flag] : kFlags)
    if (m.rfind(field, 0) == 0) return Status(s.code(), flag + m.substr(std::string(field).size()));
  return s;
}

struct Row {
  std::string algorithm, protocol;
  int channels = 0;
  int64_t bytes = 0, count = 0;
  double time_us = 0, algbw = 0, busbw = 0;
  NcclTestsHalf in_place;  // the same call with the receive buffer as the send buffer
  std::string busiest_link;
  double busiest_utilisation = 0, busiest_bytes = 0;
  std::string choice;
  double range_low = 1, range_high = 1;  // the uncalibrated transport model's range around time_us
  uint64_t events = 0;
  std::vector<double> resource_bytes;
};

// Explains where one-shot stops beating the ring, from the simulated rows: the first size the ring
// wins, one-shot's busiest link there, the link where one-shot moves the most bytes relative to
// the ring, and how far the ring still is from its small-message (latency) floor.
std::string CrossoverNote(const std::vector<Row>& rows, const std::vector<std::string>& resource_names) {
  std::vector<const Row*> ring, oneshot;
  for (const Row& r : rows) {
    if (r.algorithm == "ring") ring.push_back(&r);
    if (r.algorithm == "oneshot") oneshot.push_back(&r);
  }
  if (ring.empty() || ring.size() != oneshot.size()) return "";
  int last_win = -1;
  for (size_t i = 0; i < ring.size(); ++i)
    if (oneshot[i]->time_us < ring[i]->time_us) last_win = static_cast<int>(i);
  if (last_win < 0)
    return "one-shot is slower than the ring at every size simulated: its first row already moves (n-1)*S into every "
           "GPU.";
  if (last_win + 1 == static_cast<int>(ring.size()))
    return fmt::format("one-shot beats the ring up to the largest size simulated ({}).",
                       FormatSize(ring.back()->bytes));
  const Row& o = *oneshot[last_win + 1];
  const Row& r = *ring[last_win + 1];
  int worst = -1;
  double worst_ratio = 0;
  for (size_t k = 0; k < o.resource_bytes.size() && k < r.resource_bytes.size(); ++k) {
    if (r.resource_bytes[k] <= 0) continue;
    double ratio = o.resource_bytes[k] / r.resource_bytes[k];
    if (ratio > worst_ratio) {
      worst_ratio = ratio;
      worst = static_cast<int>(k);
    }
  }
  std::string note = fmt::format(
      "crossover: one-shot beats the ring up to {} and loses from {} on. At {}, one-shot's busiest link is {} "
      "({:.1f} MB, {:.0f}% busy over its {:.1f} us)",
      FormatSize(ring[last_win]->bytes), FormatSize(r.bytes), FormatSize(r.bytes), o.busiest_link,
      o.busiest_bytes / 1e6, 100 * o.busiest_utilisation, o.time_us);
  if (worst >= 0) {
    note +=
        fmt::format("; on {} it moves {:.1f}x the ring's bytes ({:.1f} MB against {:.1f} MB)", resource_names[worst],
                    worst_ratio, o.resource_bytes[worst] / 1e6, r.resource_bytes[worst] / 1e6);
  }
  note += fmt::format(
      ". The ring takes {:.1f} us there, {:.1f}x its small-message floor of {:.1f} us ({}): its cost "
      "is still mostly its 2(n-1) per-step latencies, while one-shot's grows with the bytes it pulls.",
      r.time_us, r.time_us / ring.front()->time_us, ring.front()->time_us, FormatSize(ring.front()->bytes));
  return note;
}

// The request every size and algorithm starts from: the flags (op, protocol, channels, GPUs, P2P,
// custom-allreduce launch) and the calibration's NCCL costs (`calibration`: none when not given).
StatusOr<coll::CollectiveRequest> BaseRequest(const CollectiveFlags& flags,
                                              const std::optional<calib::LoadedCalibration>& calibration) {
  coll::CollectiveRequest base;
  if (calibration) base.protocol_overrides = calibration->nccl.protocol;
  auto collective = coll::ParseCollective(flags.op);
  if (!collective.ok()) return (collective.status().WithPrefix("--op"));
  base.collective = *collective;
  if (!flags.proto.empty()) {
    auto proto = coll::ParseNcclProto(flags.proto);
    if (!proto.ok()) return (proto.status().WithPrefix("--proto"));
    base.protocol = *proto;
  }
  // NCCL runs at most MAXCHANNELS = 64 channels (nccl src/include/device.h).
  for (auto [flag, v] : {std::pair<const char*, int>{"--channels", flags.channels},
                         {"--min-channels", flags.min_channels},
                         {"--max-channels", flags.max_channels}})
    if (v < 0 || v > 64)
      return (InvalidArgumentError(
          fmt::format("{} {}: must be in [0, 64] (0: NCCL's choice; NCCL runs at most MAXCHANNELS = 64)", flag, v)));
  base.channels = flags.channels;
  base.min_channels = flags.min_channels;
  base.max_channels = flags.max_channels;
  if (!flags.gpus.empty()) {
    auto gpus = ParseIndexList(flags.gpus);
    if (!gpus.ok()) return (gpus.status().WithPrefix("--gpus"));
    base.gpus = *gpus;
  }
  if (!flags.p2p_level.empty()) {
    auto level = coll::ParseP2pLevel(flags.p2p_level);
    if (!level.ok()) return (level.status().WithPrefix("--p2p-level"));
    base.p2p_level = *level;
  }
  base.p2p_disable = flags.p2p_disable;
  base.custom_blocks = flags.custom_blocks;
  if (!(flags.custom_launch_us >= 0 && flags.custom_launch_us <= 1e6))
    return (InvalidArgumentError(fmt::format("--custom-launch-us {}", flags.custom_launch_us) +
                                 ": must be in [0, 1000000] (us)"));
  base.custom_launch_ps = PicosFromMicros(flags.custom_launch_us);
  return base;
}

// --sizes, or nccl-tests' -b / -e / -f / -i (defaults as nccl-tests': 32M, 32M, no factor, 1M).
StatusOr<std::vector<int64_t>> SizesOf(const CollectiveFlags& flags) {
  const bool nccl_tests =
      !flags.min_bytes.empty() || !flags.max_bytes.empty() || flags.step_factor != 0 || !flags.step_bytes.empty();
  if (!nccl_tests) {
    auto sizes = ParseSizeList(flags.sizes);
    if (!sizes.ok()) return sizes.status().WithPrefix("--sizes");
    return sizes;
  }
  if (flags.sizes_given) return InvalidArgumentError("--sizes and -b/-e/-f/-i: give one way of naming the sizes");
  int64_t bytes[3] = {32 << 20, 32 << 20, 1 << 20};
  const std::pair<const char*, std::string> given[3] = {
      {"-b", flags.min_bytes}, {"-e", flags.max_bytes}, {"-i", flags.step_bytes}};
  for (int i = 0; i < 3; ++i) {
    if (given[i].second.empty()) continue;
    auto b = ParseNcclTestsBytes(given[i].second);
    if (!b.ok()) return b.status().WithPrefix(given[i].first);
    bytes[i] = *b;
  }
  if (!(flags.step_factor == 0 || flags.step_factor > 1))
    return InvalidArgumentError(fmt::format("-f {}: the step factor must be > 1", flags.step_factor));
  return NcclTestsSizeSweep(bytes[0], bytes[1], flags.step_factor, bytes[2]);
}

// --algo: one algorithm, or `all` of the collective's.
StatusOr<std::vector<coll::Algorithm>> AlgorithmsOf(const std::string& algo_flag, coll::Collective collective) {
  std::vector<coll::Algorithm> algorithms;
  if (algo_flag == "all") {
    if (collective == coll::Collective::kAllReduce)
      algorithms = {coll::Algorithm::kRing, coll::Algorithm::kTree, coll::Algorithm::kOneShot,
                    coll::Algorithm::kTwoShot};
    else if (collective == coll::Collective::kAllToAll)
      algorithms = {coll::Algorithm::kDirect};
    else
      algorithms = {coll::Algorithm::kRing};
  } else {
    auto algo = coll::ParseAlgorithm(algo_flag);
    if (!algo.ok()) return (InvalidArgumentError(algo.status().message() + ", all").WithPrefix("--algo"));
    algorithms = {*algo};
  }

  return algorithms;
}

// What the sizes x algorithms sweep gives: a row each, and what the table's header names.
struct CollectiveSweep {
  std::vector<Row> rows;
  std::string transport, ranks_text;
  std::string custom_path;              // how the custom allreduce ran (its plan's choice), when one did
  std::vector<std::string> step_costs;  // where NCCL's step costs came from, each once
  std::vector<std::string> resource_names;
  std::vector<int64_t> skipped;  // sizes below 16 bytes of elements per rank (nccl-tests: size 0)
};

// One rank: NCCL runs no transfer, it copies the send buffer into the receive buffer (nothing in
// place). Each half is what calib's predictor gives for the item nccl-tests times (an eager call:
// launch, NCCL's per-call cost and the copy kernel; params: the calibration's, else the box's
// defaults), so that a one-GPU run prints as nccl-tests measures it.
StatusOr<CollectiveSweep> SweepOneRank(const net::Topology& topology, const coll::CollectiveRequest& base,
                                       const std::vector<int64_t>& sizes, int dtype_bytes,
                                       const calib::CalibParams& params) {
  if (base.collective == coll::Collective::kAllReduce && base.algorithm != coll::Algorithm::kAuto &&
      base.algorithm != coll::Algorithm::kRing && base.algorithm != coll::Algorithm::kTree)
    return InvalidArgumentError("--algo: the custom allreduce needs at least 2 GPUs (one rank runs NCCL's local copy)");
  const int gpu = base.gpus.empty() ? 0 : base.gpus[0];
  if (gpu < 0 || gpu >= topology.num_gpus())
    return InvalidArgumentError(fmt::format("--gpus {}: the box has GPUs 0..{}", gpu, topology.num_gpus() - 1));
  CollectiveSweep sweep;
  sweep.transport = fmt::format(
      "local copy (one rank: NCCL copies the send buffer into the receive buffer; in place it launches nothing, "
      "and the call costs NCCL's host work, nccl.local_call_overhead_ns = {:.0f} ns{})",
      params.nccl.local_call_overhead_ns,
      params.nccl.local_call_overhead_ns > 0 ? ""
                                             : ": unset until a calibration fits it from one-rank calls, e.g. "
                                               "`specsim calibrate all_reduce_perf.log --hardware BOX`");
  sweep.ranks_text = std::to_string(gpu);
  const trace::Trace empty;
  const calib::Predictor predictor(empty, topology, params);
  for (int64_t requested : sizes) {
    const NcclTestsSize nt = NcclTestsSizeOf(base.collective, requested, dtype_bytes, 1);
    if (nt.size_bytes <= 0) {
      sweep.skipped.push_back(requested);
      continue;
    }
    Row row;
    row.algorithm = "copy";
    row.bytes = nt.size_bytes;
    row.count = nt.count;
    row.busiest_link = "-";
    row.choice = "one rank: NCCL's local copy";
    for (bool in_place : {false, true}) {
      trace::Item item;
      item.set_kind(trace::KIND_COLLECTIVE);
      trace::CollectiveParams* c = item.mutable_collective();
      c->set_implementation(trace::IMPL_NCCL);
      c->set_bytes(nt.size_bytes);
      c->set_nranks(1);
      c->add_gpus(gpu);
      c->set_in_place(in_place);
      const calib::Prediction p = predictor.Predict(item);
      if (!p.simulated) return InvalidArgumentError(fmt::format("one rank, {} B: {}", nt.size_bytes, p.reason));
      const double us = p.predicted_us;
      const double algbw = us > 0 ? static_cast<double>(nt.size_bytes) / (us * 1e3) : 0;  // GB/s
      if (in_place) {
        row.in_place = {us, algbw, 0};  // busbw: (n - 1) / n and 2 (n - 1) / n are 0 for one rank
      } else {
        row.time_us = us;
        row.algbw = algbw;
      }
    }
    sweep.rows.push_back(std::move(row));
  }
  return sweep;
}

// Plans and times every size with every algorithm on the fabric (into `trace` when given). One
// rank: SweepOneRank.
StatusOr<CollectiveSweep> SweepCollective(const net::Topology& topology, const net::Router& router,
                                          const coll::CollectiveRequest& base, const std::vector<int64_t>& sizes,
                                          const std::vector<coll::Algorithm>& algorithms, int dtype_bytes,
                                          const calib::CalibParams& params, ChromeTraceWriter* trace) {
  const int ranks = base.gpus.empty() ? topology.num_gpus() : static_cast<int>(base.gpus.size());
  if (ranks == 1) {
    coll::CollectiveRequest one = base;
    one.algorithm = algorithms.size() == 1 ? algorithms[0] : coll::Algorithm::kAuto;
    return SweepOneRank(topology, one, sizes, dtype_bytes, params);
  }
  CollectiveSweep sweep;
  coll::CollectivePlanner planner(router);
  coll::CollectiveTimer timer(router);
  for (int64_t requested : sizes) {
    // nccl-tests' size and count columns: the buffers it would run for this -b/-e value.
    const NcclTestsSize nt = NcclTestsSizeOf(base.collective, requested, dtype_bytes, ranks);
    if (nt.size_bytes <= 0) {
      sweep.skipped.push_back(requested);
      continue;
    }
    const int64_t bytes = nt.size_bytes;
    for (coll::Algorithm algorithm : algorithms) {
      coll::CollectiveRequest request = base;
      request.algorithm = algorithm;
      request.bytes = bytes;
      auto plan = planner.Plan(request);
      if (!plan.ok()) return WithFlagNames(plan.status());
      sweep.transport = plan->transport;
      coll::FabricTrace fabric_trace;
      coll::CollectiveTiming timing = timer.Time(plan->schedule, plan->rank_gpus, trace ? &fabric_trace : nullptr);
      // A saturated time is not a figure (time.h): some rate or latency is out of range.
      if (timing.duration_ps >= kMaxDurationPs)
        return InvalidArgumentError(fmt::format(
            "{} of {} ({}/{}): its simulated time passed {:.3g} s, specsim's clock range: a link rate, latency "
            "or calibrated NCCL cost of the box is out of any plausible range",
            coll::CollectiveName(base.collective), FormatSize(bytes), plan->algorithm,
            plan->protocol.empty() ? "-" : plan->protocol, SecondsFromPicos(kMaxDurationPs)));
      const int n = static_cast<int>(plan->rank_gpus.size());
      if (sweep.ranks_text.empty()) {
        for (int g : plan->rank_gpus) sweep.ranks_text += (sweep.ranks_text.empty() ? "" : ",") + std::to_string(g);
      }
      Row row;
      row.algorithm = plan->algorithm;
      row.protocol = plan->protocol;
      row.channels = plan->channels;
      row.bytes = bytes;
      row.count = nt.count;
      row.time_us = MicrosFromPicos(timing.duration_ps);
      row.algbw = row.time_us > 0 ? static_cast<double>(bytes) / (row.time_us * 1e3) : 0;  // GB/s
      row.busbw = row.algbw * coll::BusBandwidthFactor(base.collective, n);
      // In place, NCCL's ring and tree move the same bytes between the ranks (the first step reads
      // the send buffer, the rest the receive buffer): the same call (a stated simplification).
      row.in_place = {row.time_us, row.algbw, row.busbw};
      row.busiest_link = timing.busiest_resource;
      row.busiest_utilisation = timing.busiest_utilisation;
      row.busiest_bytes = timing.busiest_bytes;
      row.choice = plan->choice;
      row.range_low = plan->range_low;
      row.range_high = plan->range_high;
      if (!plan->step_costs.empty() &&
          std::find(sweep.step_costs.begin(), sweep.step_costs.end(), plan->step_costs) == sweep.step_costs.end())
        sweep.step_costs.push_back(plan->step_costs);
      if (sweep.custom_path.empty() && plan->protocol.empty() &&
          (plan->algorithm == "oneshot" || plan->algorithm == "twoshot"))
        sweep.custom_path = plan->choice.substr(plan->choice.find(", ") + 2);  // after "custom X allreduce"
      row.events = timing.events;
      row.resource_bytes = timing.resource_bytes;
      sweep.resource_names = timing.resource_names;
      if (trace) {
        trace->AddRun(fmt::format("{} {}/{}/{}ch {}", coll::CollectiveName(base.collective), row.algorithm,
                                  row.protocol, row.channels, FormatSize(bytes)),
                      fabric_trace, timing.duration_ps);
      }
      sweep.rows.push_back(std::move(row));
    }
  }

  return sweep;
}

// The type and redop columns, as nccl-tests names them.
struct Columns {
  std::string type, redop;
};

void PrintCollectiveJson(const net::Topology& topology, coll::Collective collective, const Columns& columns,
                         const CollectiveSweep& sweep, const std::string& crossover, std::ostream& out) {
  nlohmann::json j;
  j["hardware"] = topology.name;
  j["collective"] = coll::CollectiveName(collective);
  j["transport"] = sweep.transport;
  j["rows"] = nlohmann::json::array();
  for (const Row& r : sweep.rows) {
    j["rows"].push_back({{"op", coll::CollectiveName(collective)},
                         {"type", columns.type},
                         {"redop", columns.redop},
                         {"root", -1},
                         {"size", r.bytes},
                         {"algorithm", r.algorithm},
                         {"protocol", r.protocol},
                         {"channels", r.channels},
                         {"bytes", r.bytes},
                         {"count", r.count},
                         {"time_us", r.time_us},
                         {"algbw_gbps", r.algbw},
                         {"busbw_gbps", r.busbw},
                         {"in_place_time_us", r.in_place.time_us},
                         {"in_place_algbw_gbps", r.in_place.algbw_gbps},
                         {"in_place_busbw_gbps", r.in_place.busbw_gbps},
                         {"busiest_link", r.busiest_link},
                         {"busiest_link_utilisation", r.busiest_utilisation},
                         {"choice", r.choice},
                         {"time_range_us", {r.range_low * r.time_us, r.range_high * r.time_us}}});
  }
  j["nccl_step_costs"] = sweep.step_costs;
  if (!crossover.empty()) j["crossover"] = crossover;
  out << j.dump(1) << "\n";
}

void PrintCollectiveTable(const net::Topology& topology, coll::Collective collective, const Columns& columns,
                          const std::vector<coll::Algorithm>& algorithms, const CollectiveSweep& sweep,
                          const std::string& crossover, const CollectiveFlags& flags, std::ostream& out) {
  out << fmt::format("# specsim collective: {} on {} ({} GPUs: {}), {}\n", coll::CollectiveName(collective),
                     topology.name, std::count(sweep.ranks_text.begin(), sweep.ranks_text.end(), ',') + 1,
                     sweep.ranks_text, columns.type);
  // Every config file read and where from (a working-directory file shadows the compiled-in copy).
  out << fmt::format("# files: hardware {} ({})", flags.hardware, io::ConfigSourceOf(flags.hardware));
  if (!flags.calibration.empty())
    out << fmt::format(", calibration {} ({})", flags.calibration, io::ConfigSourceOf(flags.calibration));
  out << "\n";
  out << "# transport: " << sweep.transport << "\n";
  for (const std::string& c : sweep.step_costs) out << "# NCCL step costs: " << c << "\n";
  // The driver's PCIe P2P mode decides where the custom kernels' peer reads go (net::PeerAccessOf).
  if (!sweep.custom_path.empty())
    out << "# one-shot / two-shot: " << sweep.custom_path
        << (sweep.custom_path.find("driver") == std::string::npos
                ? std::string(" (driver PCIe P2P: ") + net::DriverP2pModeName(topology.driver_p2p_mode) + ")"
                : std::string())
        << "\n";
  out << "#\n";
  // nccl-tests' columns, both halves (#wrong N/A: nothing checked), then specsim's.
  out << NcclTestsHeader(fmt::format(" {:<18}  {:<24} {:>5}", "algo/proto/ch", "busiest link", "util"),
                         fmt::format(" {:<18}  {:<24} {:>5}", "", "", ""));
  std::vector<NcclTestsHalf> halves;
  for (const Row& r : sweep.rows) {
    std::string apc = r.algorithm + "/" + (r.protocol.empty() ? "-" : r.protocol) + "/" + std::to_string(r.channels);
    const NcclTestsHalf out_of_place{r.time_us, r.algbw, r.busbw};
    out << NcclTestsRow(r.bytes, r.count, columns.type, columns.redop, out_of_place, r.in_place,
                        fmt::format("  {:<18}  {:<24} {:>4.0f}%", apc, r.busiest_link, 100 * r.busiest_utilisation));
    halves.push_back(out_of_place);
    halves.push_back(r.in_place);
  }
  out << NcclTestsFooter(halves);
  for (int64_t s : sweep.skipped)
    out << fmt::format("# {}: below 16 bytes of {} per rank (nccl-tests runs size 0): not simulated\n", s,
                       columns.type);
  if (algorithms.size() == 1 && algorithms[0] == coll::Algorithm::kAuto) {
    out << "#\n# auto, per size:\n";
    for (const Row& r : sweep.rows) out << fmt::format("#   {:>6}: {}\n", FormatSize(r.bytes), r.choice);
  }
  if (!crossover.empty()) out << "#\n# " << crossover << "\n";
}

}  // namespace

int RunCollective(const CollectiveFlags& flags, std::ostream& out, std::ostream& err) {
  auto Fail = [&err](const Status& s) {
    err << "specsim collective: " << s.message() << "\n";
    return 2;
  };
  std::vector<std::string> warnings;
  auto topology_or = io::LoadHardwareFile(flags.hardware, &warnings);
  if (!topology_or.ok()) return Fail(topology_or.status());
  for (const std::string& w : warnings) err << w << "\n";
  std::optional<calib::LoadedCalibration> calibration;
  if (!flags.calibration.empty()) {
    auto loaded = calib::LoadCalibration(flags.calibration);
    if (!loaded.ok()) return Fail(loaded.status());
    calibration = std::move(*loaded);
    for (const std::string& w : calibration->warnings) err << w << "\n";
    calib::ApplyFabricCalibration(calibration->fabric(), &*topology_or);
  }
  const net::Topology& topology = *topology_or;
  net::Router router(topology);
  auto base = BaseRequest(flags, calibration);
  if (!base.ok()) return Fail(base.status());
  auto sizes = SizesOf(flags);
  if (!sizes.ok()) return Fail(sizes.status());
  auto type = ParseNcclTestsType(flags.dtype);
  if (!type.ok()) return Fail(type.status().WithPrefix("--dtype"));
  auto redop = NcclTestsRedop(base->collective, flags.redop);
  if (!redop.ok()) return Fail(redop.status().WithPrefix("--redop"));
  const Columns columns{type->name, *redop};
  const int dtype_bytes = type->bytes;
  auto algorithms = AlgorithmsOf(flags.algo, base->collective);
  if (!algorithms.ok()) return Fail(algorithms.status());

  std::unique_ptr<ChromeTraceWriter> trace;
  if (!flags.trace.empty()) trace = std::make_unique<ChromeTraceWriter>(&topology);
  const calib::CalibParams defaults = calib::DefaultParams(topology, 0);
  const calib::CalibParams params = calibration ? calib::CalibParamsOf(*calibration, defaults) : defaults;
  auto sweep = SweepCollective(topology, router, *base, *sizes, *algorithms, dtype_bytes, params, trace.get());
  if (!sweep.ok()) return Fail(sweep.status());
  if (trace) {
    std::ostringstream trace_out;
    trace->Write(trace_out);
    if (Status w = io::WriteFileAtomically(flags.trace, trace_out.str()); !w.ok()) {
      err << "specsim collective: --trace " << w.message() << "\n";
      return io::kWriteFailedExitCode;
    }
  }

  const std::string crossover = CrossoverNote(sweep->rows, sweep->resource_names);
  if (flags.json) {
    PrintCollectiveJson(topology, base->collective, columns, *sweep, crossover, out);
    return 0;
  }
  PrintCollectiveTable(topology, base->collective, columns, *algorithms, *sweep, crossover, flags, out);
  if (trace) out << "# trace: " << flags.trace << " (" << trace->num_events() << " events; open in ui.perfetto.dev)\n";
  return 0;
}

}  // namespace specsim::tools

#include "sim/calib/profile_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "sim/calib/loop_predictors.h"
#include "sim/profile/kernel_class.h"

namespace specsim::calib {
namespace {

void AddPassRow(const trace::Trace& trace, const trace::Item& it, const net::Topology& topology,
                const CalibParams& params, ProfileReport* r) {
  auto by_class = PredictPassDeviceTimeByClass(trace, it, topology, params);
  if (!by_class.ok()) {
    r->notes.push_back(it.name() + ": classes not predicted: " + by_class.status().message());
    return;
  }
  PassClassRow row;
  row.item = it.name();
  for (const auto& [c, us] : it.decode().busy_us_by_class()) row.measured_us[c] += us;
  for (const auto& [c, us] : *by_class) row.predicted_us[profile::ProfileClassOfSimulatorClass(c)] += us;
  std::set<std::string> classes;
  for (const auto& [c, us] : row.measured_us) classes.insert(c);
  for (const auto& [c, us] : row.predicted_us) classes.insert(c);
  for (const std::string& c : classes) {
    const double gap = (row.predicted_us.count(c) ? row.predicted_us.at(c) : 0.0) -
                       (row.measured_us.count(c) ? row.measured_us.at(c) : 0.0);
    if (row.largest.empty() || std::abs(gap) > std::abs(row.largest_gap_us)) {
      row.largest = c;
      row.largest_gap_us = gap;
    }
  }
  r->passes.push_back(std::move(row));
}

void AddCollectiveRow(const trace::Item& it, const std::map<std::string, const ItemResult*>& results,
                      ProfileReport* r) {
  CollectiveWaitRow row;
  row.item = it.name();
  row.transfer_us = it.stats().median_us();
  auto res = results.find(it.name());
  if (res != results.end() && res->second->simulated) row.predicted_us = res->second->predicted_us;
  double wait = 0, share = 0;
  for (const trace::RankTiming& rt : it.rank_timing()) {
    wait += rt.wait_mean_us();
    const double kernel = rt.wait_mean_us() + row.transfer_us;
    share += kernel > 0 ? rt.wait_mean_us() / kernel : 0;
  }
  row.wait_mean_us = wait / it.rank_timing_size();
  row.wait_share = share / it.rank_timing_size();
  r->collectives.push_back(row);
}

// What the prediction of `it` rests on, or the pass's class with the largest gap.
std::string CauseOf(const trace::Item& it, const ProfileReport& r) {
  for (const PassClassRow& p : r.passes)
    if (p.item == it.name())
      return fmt::format("{} kernels: {:.1f} us measured, {:.1f} predicted ({:+.1f} us)", p.largest,
                         p.measured_us.count(p.largest) ? p.measured_us.at(p.largest) : 0.0,
                         p.predicted_us.count(p.largest) ? p.predicted_us.at(p.largest) : 0.0, p.largest_gap_us);
  if (it.has_collective()) {
    const trace::CollectiveParams& c = it.collective();
    // What NCCL ran (the kernel's name and grid), else the variables the run forced.
    const std::string algo = !c.nccl_chosen_algo().empty() ? c.nccl_chosen_algo() : c.nccl_algo();
    const std::string proto = !c.nccl_chosen_proto().empty() ? c.nccl_chosen_proto() : c.nccl_proto();
    return fmt::format("NCCL's transfer model: {} bytes, {}/{}, {} channels", c.bytes(), algo.empty() ? "auto" : algo,
                       proto.empty() ? "auto" : proto, c.nccl_chosen_channels());
  }
  if (it.has_gemm())
    return fmt::format("GEMM cost of library '{}' at m={} n={} k={}", it.gemm().library(), it.gemm().m(), it.gemm().n(),
                       it.gemm().k());
  if (it.has_attention())
    return fmt::format("attention cost of '{}' at batch {}, q {}, {} keys", it.attention().implementation(),
                       it.attention().batch(), it.attention().query_tokens(), it.attention().context());
  if (it.has_rmsnorm()) return fmt::format("the streaming-kernel cost at {} tokens", it.rmsnorm().tokens());
  return "the item's own model";
}

}  // namespace

ProfileReport BuildProfileReport(const trace::Trace& trace, const net::Topology& topology, const CalibParams& params,
                                 const std::vector<ItemResult>& items) {
  ProfileReport r;
  std::map<std::string, const ItemResult*> results;
  for (const ItemResult& i : items) results[i.name] = &i;
  for (const ItemResult& i : items) {
    if (i.index < 0 || i.index >= trace.items_size()) continue;
    const trace::Item& it = trace.items(i.index);
    if (it.has_decode() && it.decode().gpu_busy_only() && it.decode().busy_us_by_class_size() > 0)
      AddPassRow(trace, it, topology, params, &r);
    else if (it.kind() == trace::KIND_COLLECTIVE && it.rank_timing_size() > 0)
      AddCollectiveRow(it, results, &r);
  }
  if (r.empty()) return r;
  std::vector<const ItemResult*> simulated;
  for (const ItemResult& i : items)
    if (i.simulated) simulated.push_back(&i);
  std::sort(simulated.begin(), simulated.end(), [](const ItemResult* a, const ItemResult* b) {
    return std::abs(a->error) > std::abs(b->error) || (std::abs(a->error) == std::abs(b->error) && a->name < b->name);
  });
  for (size_t k = 0; k < simulated.size() && k < 5; ++k)
    r.disagreements.push_back({simulated[k]->name, simulated[k]->error, CauseOf(trace.items(simulated[k]->index), r)});
  return r;
}

}  // namespace specsim::calib

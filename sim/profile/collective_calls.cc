#include "sim/profile/collective_calls.h"

#include <algorithm>
#include <climits>
#include <optional>
#include <utility>

#include "sim/profile/kernel_class.h"

namespace specsim::profile {
namespace {

// torch's dtype name for the dtype in an NCCL kernel's name ("" when unknown).
std::string TorchDtype(const std::string& nccl) {
  static const std::map<std::string, std::string> kNames = {
      {"bf16", "BFloat16"}, {"bfloat16", "BFloat16"},    {"f16", "Half"},          {"half", "Half"}, {"f32", "Float"},
      {"float", "Float"},   {"f64", "Double"},           {"i8", "Char"},           {"u8", "Byte"},   {"i32", "Int"},
      {"i64", "Long"},      {"f8e4m3", "Float8_e4m3fn"}, {"f8e5m2", "Float8_e5m2"}};
  auto it = kNames.find(nccl);
  return it == kNames.end() ? std::string() : it->second;
}

Status CheckSameNcclCallCount(const std::vector<KinetoTrace>& ranks, const std::vector<std::vector<NcclCall>>& nccl) {
  for (size_t r = 1; r < ranks.size(); ++r)
    if (nccl[r].size() != nccl[0].size())
      return InvalidArgumentError(ranks[r].path + ": " + std::to_string(nccl[r].size()) + " NCCL kernels, but " +
                                  ranks[0].path + " has " + std::to_string(nccl[0].size()) +
                                  ": the ranks' traces do not cover the same steps (profile every rank over the same "
                                  "window)");
  return OkStatus();
}

// Sizes of graph-replayed NCCL calls of unknown size taken from the eager passes (by pass), per
// call of rank 0, and the passes they were taken for.
struct NcclSizesFromPasses {
  std::vector<int64_t> elements;   // -1: not taken
  std::vector<std::string> dtype;  // "" alike
  std::set<std::string> notes;     // e.g. "3 verify passes of 125 kernels"
};

// A pass's NCCL calls: op, elements, dtype.
using NcclSequence = std::vector<std::tuple<std::string, int64_t, std::string>>;
// Eager passes by (phase, kernels, NCCL calls): the sequence every such pass agrees on, or none
// when they differ or one call has no size.
using EagerSequences = std::map<std::tuple<std::string, int, size_t>, std::optional<NcclSequence>>;

// Each pass's NCCL calls, in order (indices into `nccl`).
std::vector<std::vector<size_t>> NcclCallsOfPasses(size_t passes, const std::vector<NcclCall>& nccl) {
  std::vector<std::vector<size_t>> calls_of(passes);
  for (size_t i = 0; i < nccl.size(); ++i)
    if (nccl[i].pass >= 0) calls_of[nccl[i].pass].push_back(i);
  return calls_of;
}

EagerSequences AgreedEagerSequences(const std::vector<PassInstance>& passes, const std::vector<NcclCall>& nccl,
                                    const std::vector<std::vector<size_t>>& calls_of,
                                    const std::vector<std::string>& op_of) {
  EagerSequences eager_sequence;
  for (size_t e = 0; e < passes.size(); ++e) {
    const PassInstance& ep = passes[e];
    if (ep.graph) continue;
    std::optional<NcclSequence> sizes = NcclSequence{};
    for (size_t i : calls_of[e]) {
      const KinetoKernel& k = *nccl[i].kernel;
      if (k.in_elements <= 0) {
        sizes.reset();
        break;
      }
      sizes->emplace_back(op_of[i], std::max(k.in_elements, k.out_elements), k.dtype);
    }
    const auto key = std::make_tuple(ep.phase, ep.kernels, calls_of[e].size());
    auto [it, fresh] = eager_sequence.emplace(key, sizes);
    if (!fresh && it->second != sizes) it->second.reset();
  }
  return eager_sequence;
}

// The eager sequence graph pass `gp` replays (`calls`: its NCCL calls) when it needs one (a call of
// unknown size) and the eager passes of its phase and kernel count agree on one of the same ops;
// else null.
const NcclSequence* EagerTwinSequence(const PassInstance& gp, const std::vector<size_t>& calls,
                                      const std::vector<NcclCall>& nccl, const std::vector<std::string>& op_of,
                                      const EagerSequences& eager_sequence) {
  bool unknown = false;
  for (size_t i : calls) unknown = unknown || nccl[i].kernel->in_elements <= 0;
  if (!gp.graph || !unknown) return nullptr;
  auto it = eager_sequence.find(std::make_tuple(gp.phase, gp.kernels, calls.size()));
  if (it == eager_sequence.end() || !it->second) return nullptr;
  const NcclSequence& agreed = *it->second;
  bool same_ops = true;
  for (size_t j = 0; j < calls.size(); ++j) same_ops = same_ops && std::get<0>(agreed[j]) == op_of[calls[j]];
  return same_ops ? &agreed : nullptr;
}

// Graph replays of unknown size, first by their pass: a graph-replayed pass launches what an eager
// pass of the same phase and kernel count launched, so its i-th NCCL call has the size of the
// eager pass's i-th (op and dtype alike) when every such eager pass agrees (rank 0's passes).
NcclSizesFromPasses InferSizesFromEagerPasses(const std::vector<PassInstance>& passes,
                                              const std::vector<NcclCall>& nccl) {
  NcclSizesFromPasses sizes;
  sizes.elements.assign(nccl.size(), -1);
  sizes.dtype.resize(nccl.size());
  const std::vector<std::vector<size_t>> calls_of = NcclCallsOfPasses(passes.size(), nccl);
  std::vector<std::string> op_of(nccl.size());  // each call's NCCL op, parsed once
  for (size_t i = 0; i < nccl.size(); ++i) op_of[i] = ParseNcclKernelName(nccl[i].kernel->name).op;
  const EagerSequences eager_sequence = AgreedEagerSequences(passes, nccl, calls_of, op_of);
  std::map<std::string, int> by_sequence;
  for (size_t g = 0; g < passes.size(); ++g) {
    const NcclSequence* agreed = EagerTwinSequence(passes[g], calls_of[g], nccl, op_of, eager_sequence);
    if (agreed == nullptr) continue;
    for (size_t j = 0; j < calls_of[g].size(); ++j) {
      const size_t i = calls_of[g][j];
      if (nccl[i].kernel->in_elements > 0) continue;
      sizes.elements[i] = std::get<1>((*agreed)[j]);
      sizes.dtype[i] = std::get<2>((*agreed)[j]);
    }
    ++by_sequence[passes[g].phase + " passes of " + std::to_string(passes[g].kernels) + " kernels"];
  }
  for (const auto& [what, n] : by_sequence) sizes.notes.insert(std::to_string(n) + " " + what);
  return sizes;
}

// The ranks agree on the i-th call's op and size.
Status CheckSameCollective(const std::vector<KinetoTrace>& ranks, const std::vector<std::vector<NcclCall>>& nccl,
                           size_t i) {
  const KinetoKernel& k0 = *nccl[0][i].kernel;
  const std::string op = ParseNcclKernelName(k0.name).op;
  for (size_t r = 0; r < ranks.size(); ++r) {
    const KinetoKernel& k = *nccl[r][i].kernel;
    if (ParseNcclKernelName(k.name).op != op || k.in_elements != k0.in_elements)
      return InvalidArgumentError(ranks[r].path + ": its NCCL kernel #" + std::to_string(i + 1) + " (" + k.name + ", " +
                                  std::to_string(k.in_elements) + " elements) is not rank 0's (" + k0.name + ", " +
                                  std::to_string(k0.in_elements) + " elements)");
  }
  return OkStatus();
}

// The i-th call's timing: the last rank to start it sets the start of the transfer; per rank,
// wait = last start - own start; the transfer time is the last-arriving rank's kernel duration.
CollectiveInstance TimeCollective(const std::vector<std::vector<NcclCall>>& nccl, size_t i) {
  int64_t last_start = INT64_MIN;
  int last = 0;
  for (size_t r = 0; r < nccl.size(); ++r) {
    const int64_t start = nccl[r][i].kernel->start_ns;
    if (start > last_start) {
      last_start = start;
      last = static_cast<int>(r);
    }
  }
  CollectiveInstance inst;
  inst.phase = nccl[0][i].phase;
  inst.pass0 = nccl[0][i].pass;
  for (const std::vector<NcclCall>& rank : nccl) {
    const KinetoKernel& k = *rank[i].kernel;
    inst.duration_us.push_back(static_cast<double>(k.duration_ns) * 1e-3);
    inst.wait_us.push_back(static_cast<double>(last_start - k.start_ns) * 1e-3);
  }
  inst.transfer_us = inst.duration_us[last];
  return inst;
}

// Rank 0's call `c` (its kernel's name parsed into `name`) keyed by what it transferred; a size
// taken from its pass (`pass_elements` > 0, `pass_dtype`) stands in for one torch did not record.
CollectiveKey KeyOfCollective(const NcclCall& c, const NcclKernel& name, int64_t pass_elements,
                              const std::string& pass_dtype) {
  const KinetoKernel& k0 = *c.kernel;
  // torch records the message (elements, dtype) on eagerly launched collectives only; a graph
  // replay's kernel has its dtype in its name at most.
  const std::string dtype = !k0.dtype.empty() ? k0.dtype : !pass_dtype.empty() ? pass_dtype : TorchDtype(name.dtype);
  const int bytes_per = DtypeBytes(dtype);
  const int64_t elements = pass_elements > 0 ? pass_elements : std::max(k0.in_elements, k0.out_elements);
  const int64_t bytes = bytes_per > 0 && elements > 0 ? elements * bytes_per : 0;
  return {name.op,        bytes,
          dtype,          c.graph,
          name.algorithm, name.protocol,
          k0.grid_x,      bytes > 0 ? std::string() : c.run + (c.run.empty() ? "" : " ") + c.phase};
}

// The pass an allreduce of `elements` ran in learns its allreduce size (tokens per pass), unless it
// has one.
void LearnAllreduceElements(int pass, int64_t elements, std::vector<PassInstance>* passes) {
  if (pass >= 0 && (*passes)[pass].allreduce_elements < 0) (*passes)[pass].allreduce_elements = elements;
}

// Every rank's i-th NCCL kernels as one call, grouped by what they transferred; rank 0's passes
// (`passes0`) learn their allreduce size from sizes taken by pass.
StatusOr<CollectiveCalls> MatchCalls(const std::vector<KinetoTrace>& ranks,
                                     const std::vector<std::vector<NcclCall>>& nccl, const NcclSizesFromPasses& by_pass,
                                     std::vector<PassInstance>* passes0) {
  CollectiveCalls calls;
  for (size_t i = 0; i < nccl[0].size(); ++i) {
    RETURN_IF_ERROR(CheckSameCollective(ranks, nccl, i));
    const NcclKernel name = ParseNcclKernelName(nccl[0][i].kernel->name);
    CollectiveInstance inst = TimeCollective(nccl, i);
    // The pass learns its allreduce size (tokens per pass) from an inferred first allreduce too.
    if (by_pass.elements[i] > 0 && name.op == "AllReduce")
      LearnAllreduceElements(inst.pass0, by_pass.elements[i], passes0);
    calls[KeyOfCollective(nccl[0][i], name, by_pass.elements[i], by_pass.dtype[i])].push_back(std::move(inst));
  }
  return calls;
}

// The sizes (bytes, dtype) of the eager calls of known size with the op, algorithm, protocol and
// channels of `key` (and its dtype when it has one).
std::set<std::pair<int64_t, std::string>> EagerSizesLike(const CollectiveCalls& calls, const CollectiveKey& key) {
  const auto& [op, bytes, dtype, graph, algorithm, protocol, channels, where] = key;
  std::set<std::pair<int64_t, std::string>> sizes;
  for (const auto& [k, v] : calls) {
    const auto& [op2, bytes2, dtype2, graph2, algorithm2, protocol2, channels2, where2] = k;
    if (!graph2 && bytes2 > 0 && op2 == op && algorithm2 == algorithm && protocol2 == protocol &&
        channels2 == channels && (dtype.empty() || dtype2 == dtype))
      sizes.insert({bytes2, dtype2});
  }
  return sizes;
}

// Graph replays still of unknown size: NCCL picks the channels by size, so the eager calls of the
// same op, algorithm, protocol and channels tell it when they all have one size (and dtype). Rank
// 0's passes learn their allreduce size from them; returns what was taken, for the notes.
std::set<std::string> InferSizesFromEagerCalls(CollectiveCalls* calls, std::vector<PassInstance>* passes0) {
  std::set<std::string> inferred;
  for (auto it = calls->begin(); it != calls->end();) {
    const auto& [op, bytes, dtype, graph, algorithm, protocol, channels, where] = it->first;
    const auto sizes =
        bytes > 0 || !graph ? std::set<std::pair<int64_t, std::string>>() : EagerSizesLike(*calls, it->first);
    if (sizes.size() != 1) {
      ++it;
      continue;
    }
    auto key = it->first;
    std::get<1>(key) = sizes.begin()->first;
    std::get<2>(key) = sizes.begin()->second;
    std::get<7>(key).clear();
    inferred.insert(op + " " + algorithm + "/" + protocol + " on " + std::to_string(channels) +
                    " channels: " + std::to_string(sizes.begin()->first) + " B");
    auto& dst = (*calls)[key];
    const int64_t elements = sizes.begin()->first / std::max(1, DtypeBytes(sizes.begin()->second));
    for (CollectiveInstance& inst : it->second) {
      // The pass it ran in now knows its allreduce size (tokens per pass), on every rank alike.
      if (op == "AllReduce") LearnAllreduceElements(inst.pass0, elements, passes0);
      dst.push_back(std::move(inst));
    }
    it = calls->erase(it);
  }
  return inferred;
}

}  // namespace

StatusOr<MatchedCollectives> MatchCollectives(const std::vector<KinetoTrace>& ranks, RankScans* scans) {
  RETURN_IF_ERROR(CheckSameNcclCallCount(ranks, scans->nccl));
  MatchedCollectives m;
  const NcclSizesFromPasses by_pass = InferSizesFromEagerPasses(scans->passes[0], scans->nccl[0]);
  m.sizes_from_passes = by_pass.notes;
  ASSIGN_OR_RETURN(m.calls, MatchCalls(ranks, scans->nccl, by_pass, &scans->passes[0]));
  m.sizes_from_calls = InferSizesFromEagerCalls(&m.calls, &scans->passes[0]);
  return m;
}

}  // namespace specsim::profile

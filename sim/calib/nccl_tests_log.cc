#include "sim/calib/nccl_tests_log.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

namespace specsim::calib {
namespace {

std::vector<std::string> Tokens(std::string_view line) {
  std::istringstream in{std::string(line)};
  std::vector<std::string> out;
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

// A whole token as a non-negative integer below 2^62 (nccl-tests' sizes and counts), else -1.
int64_t NonNegativeInteger(const std::string& t) {
  if (t.empty() || t.size() > 18 || t.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::strtoll(t.c_str(), nullptr, 10);
}

// A whole token as a finite number, else NaN.
double Number(const std::string& t) {
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  return (end == t.c_str() + t.size() && std::isfinite(v)) ? v : std::nan("");
}

// The test each perf binary runs (its program name in "# Collective test starting:").
const std::map<std::string, trace::CollectiveOp>& TestOps() {
  static const std::map<std::string, trace::CollectiveOp> ops = {{"all_reduce_perf", trace::ALLREDUCE},
                                                                 {"all_gather_perf", trace::ALLGATHER},
                                                                 {"reduce_scatter_perf", trace::REDUCESCATTER},
                                                                 {"alltoall_perf", trace::ALLTOALL}};
  return ops;
}

// nccl-tests' type names (test_typenames) that the trace's dtypes cover.
trace::DType DTypeOf(const std::string& name) {
  if (name == "bfloat16") return trace::DTYPE_BF16;
  if (name == "half") return trace::DTYPE_FP16;
  if (name == "float") return trace::DTYPE_FP32;
  if (name == "uint8" || name == "int8") return trace::DTYPE_U8;
  return trace::DTYPE_UNSPECIFIED;
}

// "2.28.3" from NCCL's version code 22803 (major * 10000 + minor * 100 + patch).
std::string NcclVersionOf(int64_t code) { return fmt::format("{}.{}.{}", code / 10000, code / 100 % 100, code % 100); }

// The NCCL variables the collective predictor reads, by name, and the item field each sets.
void SetNcclVariable(const std::string& name, const std::string& value, trace::CollectiveParams* c) {
  if (name == "NCCL_ALGO") c->set_nccl_algo(value);
  if (name == "NCCL_PROTO") c->set_nccl_proto(value);
  if (name == "NCCL_MIN_NCHANNELS") c->set_nccl_min_nchannels(value);
  if (name == "NCCL_MAX_NCHANNELS") c->set_nccl_max_nchannels(value);
  if (name == "NCCL_P2P_LEVEL") c->set_nccl_p2p_level(value);
  if (name == "NCCL_P2P_DISABLE") c->set_nccl_p2p_disable(value);
  if (name == "NCCL_SHM_DISABLE") c->set_nccl_shm_disable(value);
}

struct Rank {
  int rank = 0;
  int device = 0;
  std::string host, gpu_name;
};

// What the header lines say, gathered before the rows are turned into items.
struct LogHeader {
  std::string test, tool_version;
  int64_t nccl_code = 0;
  int iterations = 0, agg_iterations = 1, graph_launches = 0;
  std::vector<Rank> ranks;
  std::map<std::string, std::string> nccl_env;
};

// One data row: size count type redop root, then time algbw busbw #wrong twice.
struct LogRow {
  int line = 0;
  int64_t size = 0, count = 0;
  std::string type;
  double time_us[2] = {0, 0};  // out-of-place, in-place
};

// "#  Rank  0 Group  0 Pid   1230 on         vm device  0 [0000:00:06] NVIDIA H200"
bool ParseRankLine(const std::vector<std::string>& t, Rank* r) {
  if (t.size() < 12 || t[0] != "#" || t[1] != "Rank" || t[3] != "Group" || t[5] != "Pid" || t[7] != "on" ||
      t[9] != "device")
    return false;
  const int64_t rank = NonNegativeInteger(t[2]), device = NonNegativeInteger(t[10]);
  if (rank < 0 || rank > 65535 || device < 0 || device > 1023) return false;
  r->rank = static_cast<int>(rank);
  r->device = static_cast<int>(device);
  r->host = t[8];
  for (size_t k = 12; k < t.size(); ++k) r->gpu_name += (k > 12 ? " " : "") + t[k];
  return true;
}

// The header's fields from one '#' line (or an NCCL INFO line); the rest are left alone.
void ReadHeaderLine(std::string_view line, LogHeader* h) {
  const std::vector<std::string> t = Tokens(line);
  if (t.size() >= 4 && t[1] == "nccl-tests" && t[2] == "version") {
    h->tool_version = t[3];
    for (const std::string& x : t)
      if (x.rfind("nccl-library=", 0) == 0) h->nccl_code = std::max<int64_t>(0, NonNegativeInteger(x.substr(13)));
  }
  if (t.size() >= 5 && t[1] == "Collective" && t[2] == "test" && t[3] == "starting:") h->test = t[4];
  if (t.size() >= 2 && t[1] == "nThread") {
    // "... warmup iters: 1 iters: 20 agg iters: 1 validation: 1 graph: 0 ...": "iters:" after
    // "warmup" or "agg" counts those.
    for (size_t k = 1; k + 1 < t.size(); ++k) {
      const int64_t v = NonNegativeInteger(t[k + 1]);
      if (v < 0 || v > 1000000) continue;
      if (t[k] == "iters:" && t[k - 1] == "agg") h->agg_iterations = std::max(1, static_cast<int>(v));
      if (t[k] == "iters:" && t[k - 1] != "agg" && t[k - 1] != "warmup") h->iterations = static_cast<int>(v);
      if (t[k] == "graph:") h->graph_launches = static_cast<int>(v);
    }
  }
  Rank r;
  if (ParseRankLine(t, &r)) h->ranks.push_back(r);
  // NCCL_DEBUG=INFO: "<host>:<pid>:<tid> [0] NCCL INFO NCCL_PROTO set by environment to LL"
  for (size_t k = 0; k + 5 < t.size(); ++k)
    if (t[k].rfind("NCCL_", 0) == 0 && t[k + 1] == "set" && t[k + 2] == "by" && t[k + 3] == "environment" &&
        t[k + 4] == "to") {
      std::string value = t[k + 5];
      if (!value.empty() && value.back() == '.') value.pop_back();
      h->nccl_env[t[k]] = value;
    }
}

// A data row, or nullopt for any other line. A launcher's "N: " prefix (srun) is skipped.
std::optional<LogRow> ParseDataRow(std::vector<std::string> t) {
  if (!t.empty() && t[0].size() > 1 && t[0].back() == ':' && NonNegativeInteger(t[0].substr(0, t[0].size() - 1)) >= 0)
    t.erase(t.begin());
  if (t.size() < 13 || NonNegativeInteger(t[0]) < 0 || NonNegativeInteger(t[1]) < 0) return std::nullopt;
  LogRow r;
  r.size = NonNegativeInteger(t[0]);
  r.count = NonNegativeInteger(t[1]);
  r.type = t[2];
  r.time_us[0] = Number(t[5]);
  r.time_us[1] = Number(t[9]);
  return r;
}

std::string SizeLabel(int64_t bytes) {
  if (bytes >= (int64_t{1} << 30) && bytes % (int64_t{1} << 30) == 0) return fmt::format("{}GiB", bytes >> 30);
  if (bytes >= (int64_t{1} << 20) && bytes % (int64_t{1} << 20) == 0) return fmt::format("{}MiB", bytes >> 20);
  if (bytes >= 1024 && bytes % 1024 == 0) return fmt::format("{}KiB", bytes >> 10);
  return fmt::format("{}B", bytes);
}

Status CheckHeader(const LogHeader& h, const std::string& path) {
  if (h.test.empty())
    return InvalidArgumentError(path + ": an nccl-tests log without '# Collective test starting: <test>'");
  if (!TestOps().count(h.test))
    return InvalidArgumentError(fmt::format(
        "{}: nccl-tests' {}: specsim reads all_reduce_perf, all_gather_perf, reduce_scatter_perf and alltoall_perf",
        path, h.test));
  if (h.ranks.empty())
    return InvalidArgumentError(path + ": no '#  Rank N ... device D [bus] GPU' line under '# Using devices'");
  if (h.ranks.size() > 1024) return InvalidArgumentError(path + ": more than 1024 ranks (a box of at most 1024 GPUs)");
  std::set<int> seen;
  for (const Rank& r : h.ranks) {
    if (!seen.insert(r.rank).second) return InvalidArgumentError(fmt::format("{}: rank {} listed twice", path, r.rank));
    if (r.rank >= static_cast<int>(h.ranks.size()))
      return InvalidArgumentError(fmt::format("{}: rank {} of {} listed: the ranks are 0..{}", path, r.rank,
                                              h.ranks.size(), h.ranks.size() - 1));
  }
  return OkStatus();
}

// The box's GPU of each rank: its device number when one host runs every rank, else the rank.
std::vector<int> RankGpus(const LogHeader& h) {
  std::set<std::string> hosts;
  std::set<int> devices;
  for (const Rank& r : h.ranks) {
    hosts.insert(r.host);
    devices.insert(r.device);
  }
  const bool by_device = hosts.size() == 1 && devices.size() == h.ranks.size();
  std::vector<int> gpus(h.ranks.size());  // CheckHeader: the ranks are 0..n-1, each once
  for (const Rank& r : h.ranks) gpus[r.rank] = by_device ? r.device : r.rank;
  return gpus;
}

// The log's header and data rows, line by line.
struct LogLines {
  LogHeader header;
  std::vector<LogRow> rows;
  int zero_size_rows = 0;
};

StatusOr<LogLines> ReadLogLines(std::string_view text, const std::string& path) {
  LogLines out;
  int line_no = 0;
  for (size_t pos = 0; pos < text.size();) {
    const size_t end = std::min(text.find('\n', pos), text.size());
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_no;
    const std::vector<std::string> t = Tokens(line);
    if (t.empty()) continue;  // blank by any of the stream's whitespace (\v and \f included)
    if (t[0][0] == '#' || line.find("NCCL INFO") != std::string_view::npos) {
      ReadHeaderLine(line, &out.header);
      continue;
    }
    std::optional<LogRow> row = ParseDataRow(t);
    if (!row) continue;
    row->line = line_no;
    if (std::isnan(row->time_us[0]) || std::isnan(row->time_us[1]) || row->time_us[0] < 0 || row->time_us[1] < 0)
      return InvalidArgumentError(fmt::format(
          "{}:{}: a data row whose time columns (6th and 10th) are not finite numbers >= 0", path, line_no));
    if (row->size == 0) {
      ++out.zero_size_rows;
      continue;
    }
    out.rows.push_back(*row);
  }
  return out;
}

// The run's host, NCCL version and variables, and each GPU the ranks ran on (once).
void FillEnvironment(const LogHeader& h, const std::vector<int>& gpus, trace::Environment* env) {
  env->set_hostname(h.ranks.front().host);
  if (h.nccl_code > 0) env->set_nccl_version(NcclVersionOf(h.nccl_code));
  for (const auto& [name, value] : h.nccl_env) (*env->mutable_nccl_env())[name] = value;
  std::set<int> listed;
  for (const Rank& r : h.ranks) {
    if (!listed.insert(gpus[r.rank]).second) continue;
    trace::Gpu* g = env->add_gpus();
    g->set_index(gpus[r.rank]);
    g->set_name(r.gpu_name);
  }
}

// One half of a row as a collective item.
void AddItem(const LogHeader& h, const std::vector<int>& gpus, const LogRow& row, trace::DType dtype, bool in_place,
             trace::Trace* t) {
  const bool graph = h.graph_launches > 0;
  trace::Item* item = t->add_items();
  item->set_suite(trace::SUITE_COLLECTIVES);
  item->set_kind(trace::KIND_COLLECTIVE);
  item->set_name(fmt::format("nccl-tests/{}/{}/{}/n{}/{}", h.test, in_place ? "in-place" : "out-of-place",
                             graph ? "graph" : "eager", gpus.size(), SizeLabel(row.size)));
  trace::CollectiveParams* c = item->mutable_collective();
  c->set_op(TestOps().at(h.test));
  c->set_implementation(trace::IMPL_NCCL);
  c->set_bytes(row.size);
  c->set_count(row.count);
  c->set_dtype(dtype);
  c->set_nranks(static_cast<int>(gpus.size()));
  for (int g : gpus) c->add_gpus(g);
  c->set_cuda_graph(graph);
  if (graph)
    c->set_ops_per_graph(
        static_cast<int>(std::min<int64_t>(65536, int64_t{std::max(1, h.iterations)} * h.agg_iterations)));
  c->set_in_place(in_place);
  for (const auto& [name, value] : h.nccl_env) SetNcclVariable(name, value, c);
  trace::Stats* s = item->mutable_stats();
  if (h.iterations > 0) s->set_iterations(h.iterations);
  s->set_median_us(row.time_us[in_place ? 1 : 0]);
  s->set_mean_us(row.time_us[in_place ? 1 : 0]);
  s->set_timer("nccl-tests");
}

}  // namespace

bool LooksLikeNcclTestsLog(std::string_view text) {
  const size_t start = text.find_first_not_of(" \t\r\n\v\f");
  if (start == std::string_view::npos) return false;
  const std::string_view head = text.substr(start, 64);
  return head.rfind("# nccl-tests version", 0) == 0 || head.rfind("# Collective test starting:", 0) == 0;
}

StatusOr<trace::Trace> ParseNcclTestsLog(std::string_view text, const std::string& path) {
  ASSIGN_OR_RETURN(const LogLines lines, ReadLogLines(text, path));
  RETURN_IF_ERROR(CheckHeader(lines.header, path));
  if (lines.rows.empty())
    return InvalidArgumentError(path + ": no data row of a size above 0 (size count type ... time)");
  trace::Trace t;
  t.set_schema_version(1);
  t.set_tool("nccl-tests");
  t.set_tool_version(lines.header.tool_version);
  const std::vector<int> gpus = RankGpus(lines.header);
  FillEnvironment(lines.header, gpus, t.mutable_environment());
  for (const LogRow& row : lines.rows) {
    const trace::DType dtype = DTypeOf(row.type);
    if (dtype == trace::DTYPE_UNSPECIFIED)
      return InvalidArgumentError(
          fmt::format("{}:{}: type {}: specsim's traces carry bfloat16, half, float and (u)int8 (nccl-tests -d)", path,
                      row.line, row.type));
    for (bool in_place : {false, true}) AddItem(lines.header, gpus, row, dtype, in_place, &t);
  }
  if (lines.zero_size_rows > 0) {
    trace::Note* n = t.add_notes();
    n->set_severity(trace::Note::INFO);
    n->set_suite("collectives");
    n->set_message(
        fmt::format("{} rows of size 0 (below 16 bytes of elements per rank) dropped", lines.zero_size_rows));
  }
  return t;
}

}  // namespace specsim::calib

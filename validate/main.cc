// specsim-validate: measures the GPUs of this machine and writes a measurement trace
// (proto/specsim/trace.proto). See validate/README.md and --help.
#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "validate/args.h"
#include "validate/cuda_util.h"
#include "validate/environment.h"
#include "validate/models.h"
#include "validate/nccl_log.h"
#include "validate/rank_threads.h"
#include "validate/suite.h"
#include "validate/summary.h"
#include "validate/trace_io.h"

using namespace specsim::validate;
namespace trace = specsim::trace;

namespace {

std::string NowUtc() {
  std::time_t now = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buf;
}

void FillOptions(const Options& o, trace::RunOptions* p) {
  for (const auto& s : o.suites) p->add_suites(s);
  p->set_quick(o.quick);
  for (const auto& m : o.models) p->add_models(m);
  for (const auto& m : o.draft_models) p->add_draft_models(m);
  p->set_tp(o.tp);
  for (int g : o.gpus) p->add_gpus(g);
  p->set_iterations(o.iterations);
  p->set_warmup(o.warmup);
  p->set_seed(o.seed);
  p->set_collective_timeout_s(o.collective_timeout_s);
  p->set_max_bytes(o.max_bytes);
  p->set_rank_threads(o.rank_threads);
  p->set_pacing_rounds(o.pacing_rounds);
}

// One CPU per rank near its GPU (rank_threads.h).
StatusOr<std::vector<int>> PinnedRankCpus(const trace::Environment& env) {
  ASSIGN_OR_RETURN(CpuTopology topology, ReadCpuTopology());
  std::vector<std::vector<int>> local;
  for (const auto& g : env.gpus()) local.push_back(LocalCpusOfPciDevice(g.pci_bus_id()));
  return ChooseRankCpus(local, topology);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  auto parsed = ParseArgs(args);
  if (!parsed.ok()) {
    std::fprintf(stderr, "specsim-validate: %s\n(see --help)\n", parsed.status().message().c_str());
    return 2;
  }
  Options opt = *parsed;
  if (opt.help) {
    std::fputs(Usage().c_str(), stdout);
    return 0;
  }
  EnsureNcclSafetyEnv();
  // --nccl-log: read now, so that a missing file stops the run before it measures anything; the picks
  // are written into the trace at the end.
  NcclPickTable nccl_picks;
  for (const auto& f : opt.nccl_logs) {
    Status st = nccl_picks.AddFile(f);
    if (!st.ok()) {
      std::fprintf(stderr, "specsim-validate: --nccl-log: %s\n", st.message().c_str());
      return 2;
    }
  }

  trace::Trace t;
  t.set_schema_version(1);
  t.set_tool("specsim-validate");
  t.set_tool_version("0.1");
  std::string cmd;
  for (int i = 0; i < argc; ++i) cmd += (i ? " " : "") + std::string(argv[i]);
  t.set_command_line(cmd);
  t.set_started_at_utc(NowUtc());
  FillOptions(opt, t.mutable_options());
  {
    const auto roots = DefaultModelRoots();
    std::vector<trace::ModelShape> models;
    for (const auto& name : opt.models) {
      auto m = LoadModel(name, roots);
      if (!m.ok()) {
        std::fprintf(stderr, "specsim-validate: --model: %s\n", m.status().message().c_str());
        return 2;
      }
      models.push_back(*m);
    }
    Status d = AttachDraftModels(opt.draft_models, roots, &models);
    if (!d.ok()) {
      std::fprintf(stderr, "specsim-validate: --draft-model: %s\n", d.message().c_str());
      return 2;
    }
    for (auto& m : models) *t.add_models() = std::move(m);
  }

  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    std::fprintf(stderr, "specsim-validate: no usable CUDA GPU: %s\n",
                 e != cudaSuccess ? (std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")").c_str()
                                  : "cudaGetDeviceCount found 0 devices");
    return 3;
  }
  Context ctx;
  ctx.opt = opt;
  ctx.trace = &t;
  if (opt.gpus.empty()) {
    for (int d = 0; d < std::min(count, 8); ++d) ctx.devices.push_back(d);
  } else {
    for (int d : opt.gpus) {
      if (d >= count) {
        std::fprintf(stderr, "specsim-validate: --gpus: GPU %d does not exist (%d visible)\n", d, count);
        return 2;
      }
      ctx.devices.push_back(d);
    }
  }
  // The kernels suite measures one GPU's kernel shapes of a TP-N deployment (weights and heads split
  // N ways): it needs one GPU whatever N. Every other suite runs N ranks.
  const bool kernels_only = opt.suites == std::vector<std::string>{"kernels"};
  if (ctx.tp() > ctx.n() && !kernels_only) {
    std::fprintf(stderr,
                 "specsim-validate: --tp %d needs %d GPUs, %d used (only --suites kernels measures a "
                 "TP-%d deployment's per-GPU shapes on fewer)\n",
                 ctx.tp(), ctx.tp(), ctx.n(), ctx.tp());
    return 2;
  }
  for (int d : ctx.devices) {
    cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, d) != cudaSuccess) {
      std::fprintf(stderr, "specsim-validate: cannot read GPU %d's properties\n", d);
      return 3;
    }
    ctx.props.push_back(p);
  }
  auto env = CollectEnvironment(ctx.devices);
  if (!env.ok()) {
    std::fprintf(stderr, "specsim-validate: collecting the environment: %s\n", env.status().ToString().c_str());
    return 3;
  }
  *t.mutable_environment() = *env;
  if (opt.rank_threads == "pinned") {
    auto cpus = PinnedRankCpus(*env);
    if (!cpus.ok()) {
      std::fprintf(stderr, "specsim-validate: %s\n", cpus.status().message().c_str());
      return 2;
    }
    ctx.rank_cpus = *cpus;
    std::string list;
    for (int r = 0; r < ctx.n(); ++r) {
      t.mutable_options()->add_rank_cpus(ctx.rank_cpus[r]);
      list += (r ? ", " : "") + std::to_string(r) + ":" + std::to_string(ctx.rank_cpus[r]);
    }
    std::fprintf(stderr, "specsim-validate: rank threads pinned (rank:cpu) %s\n", list.c_str());
  }
  std::fprintf(stderr, "specsim-validate: %d GPU(s), %s, NCCL %s; suites:", ctx.n(), ctx.props[0].name,
               env->nccl_version().c_str());
  for (const auto& s : opt.suites) std::fprintf(stderr, " %s", s.c_str());
  std::fprintf(stderr, "%s\n", opt.quick ? " (quick)" : "");

  auto t0 = std::chrono::steady_clock::now();
  int failed = 0;
  for (const auto& suite : opt.suites) {
    auto s0 = std::chrono::steady_clock::now();
    const int before = t.items_size();
    Status st;
    if (suite == "pcie")
      st = RunPcieSuite(ctx);
    else if (suite == "collectives")
      st = RunCollectivesSuite(ctx);
    else if (suite == "kernels")
      st = RunKernelsSuite(ctx);
    else if (suite == "decode")
      st = RunDecodeSuite(ctx);
    else if (suite == "pacing")
      st = RunPacingSuite(ctx);
    else if (suite == "host_staged")
      st = RunHostStagedSuite(ctx);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - s0).count();
    if (!st.ok()) {
      ++failed;
      ctx.Note(trace::Note::ERROR, suite, "suite stopped: " + st.ToString());
      // Leave the devices usable for the next suite when the error was not sticky.
      for (int d : ctx.devices) {
        cudaSetDevice(d);
        cudaGetLastError();
      }
    }
    std::fprintf(stderr, "specsim-validate: suite %s: %d items in %.1f s%s\n", suite.c_str(), t.items_size() - before,
                 secs, st.ok() ? "" : " (stopped early)");
  }
  t.set_wall_seconds(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  if (!opt.nccl_logs.empty()) {
    const NcclAnnotation a = AnnotateNcclPicks(nccl_picks, &t);
    std::string msg = "NCCL picks from " + std::to_string(nccl_picks.lines()) + " tuning lines (" +
                      std::to_string(nccl_picks.size()) + " distinct op/size) in " +
                      std::to_string(opt.nccl_logs.size()) + " log file(s): " + std::to_string(a.annotated) +
                      " NCCL collective items annotated, " + std::to_string(a.not_found) + " not found in the log";
    for (size_t i = 0; i < a.missing.size(); ++i) msg += (i ? ", " : " (e.g. ") + a.missing[i];
    if (!a.missing.empty()) msg += ")";
    ctx.Note(a.not_found > 0 || a.annotated == 0 ? trace::Note::WARNING : trace::Note::INFO, "nccl-log", msg);
  }

  Status w = WriteTrace(t, opt.out, !opt.no_json);
  std::fputs(SummaryTable(t).c_str(), stdout);
  if (!w.ok()) {
    std::fprintf(stderr, "specsim-validate: writing the trace: %s\n", w.ToString().c_str());
    return 1;
  }
  std::printf("trace: %s%s\n", opt.out.c_str(), opt.no_json ? "" : (" and " + JsonPathFor(opt.out)).c_str());
  return failed ? 1 : 0;
}

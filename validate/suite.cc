#include "validate/suite.h"

#include <cstdio>
#include <cstdlib>

namespace specsim::validate {

trace::PathClass Context::Path(int src, int dst) const {
  if (src == dst) return trace::PATH_SELF;
  for (const auto& p : trace->environment().peers())
    if (p.src() == devices[src] && p.dst() == devices[dst]) return p.path_class();
  return trace::PATH_CLASS_UNSPECIFIED;
}

bool Context::CanAccessPeer(int src, int dst) const {
  if (src == dst) return true;
  for (const auto& p : trace->environment().peers())
    if (p.src() == devices[src] && p.dst() == devices[dst]) return p.can_access_peer();
  return false;
}

void Context::Note(trace::Note::Severity sev, const std::string& suite, const std::string& msg) const {
  auto* n = trace->add_notes();
  n->set_severity(sev);
  n->set_suite(suite);
  n->set_message(msg);
  const char* tag = sev == trace::Note::ERROR ? "error" : sev == trace::Note::WARNING ? "warning" : "note";
  std::fprintf(stderr, "[%s] %s: %s\n", suite.c_str(), tag, msg.c_str());
}

trace::Item* Context::NewItem(trace::Suite suite, trace::Kind kind, const std::string& name) const {
  auto* it = trace->add_items();
  it->set_suite(suite);
  it->set_kind(kind);
  it->set_name(name);
  return it;
}

TimingConfig Context::Timing(int warmup, int iters) const {
  TimingConfig c;
  c.warmup = opt.warmup >= 0 ? opt.warmup : (opt.quick ? std::max(1, warmup / 2) : warmup);
  c.iters = opt.iterations > 0 ? opt.iterations : (opt.quick ? std::max(3, iters / 3) : iters);
  c.timeout_s = opt.collective_timeout_s;
  c.rank_cpus = rank_cpus;
  return c;
}

std::vector<int> Context::CpusOfRanks(const std::vector<int>& ranks) const {
  std::vector<int> out;
  if (rank_cpus.empty()) return out;
  for (int r : ranks) out.push_back(rank_cpus[r]);
  return out;
}

std::string Context::Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

void FillNcclEnv(trace::CollectiveParams* p) {
  p->set_nccl_algo(Context::Env("NCCL_ALGO"));
  p->set_nccl_proto(Context::Env("NCCL_PROTO"));
  p->set_nccl_min_nchannels(Context::Env("NCCL_MIN_NCHANNELS"));
  p->set_nccl_max_nchannels(Context::Env("NCCL_MAX_NCHANNELS"));
  p->set_nccl_p2p_level(Context::Env("NCCL_P2P_LEVEL"));
  p->set_nccl_p2p_disable(Context::Env("NCCL_P2P_DISABLE"));
  p->set_nccl_shm_disable(Context::Env("NCCL_SHM_DISABLE"));
}

void FillStats(const std::vector<double>& us, const TimingConfig& cfg, const char* timer, trace::Item* item) {
  ToProto(Summarize(us), cfg.warmup, item->mutable_stats());
  item->mutable_stats()->set_timer(timer);
}

}  // namespace specsim::validate

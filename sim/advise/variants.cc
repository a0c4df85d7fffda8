#include "sim/advise/variants.h"

namespace specsim::advise {
namespace {

// One allreduce variant and whether each command lists it.
struct AllreduceEntry {
  AllreduceVariant variant;
  bool compare_algos = true, advise = true;
};

AllreduceEntry Allreduce(std::string name, std::string family, std::string algorithm, std::string protocol,
                         int channels, std::string p2p_level = "", bool p2p_disable = false) {
  AllreduceEntry e;
  e.variant.name = std::move(name);
  e.variant.family = std::move(family);
  e.variant.algorithm = std::move(algorithm);
  e.variant.protocol = std::move(protocol);
  e.variant.channels = channels;
  e.variant.p2p_level = std::move(p2p_level);
  e.variant.p2p_disable = p2p_disable;
  return e;
}

AllreduceEntry CompareOnly(AllreduceEntry e) {
  e.advise = false;
  return e;
}

AllreduceEntry AdviseOnly(AllreduceEntry e) {
  e.compare_algos = false;
  return e;
}

// Every allreduce variant, in the order both commands print theirs. compare-algos varies the
// channel count under NCCL's protocol choice and tries P2P off; advise varies it under LL (the
// protocol of small allreduces, where the channel count matters) and tries ring LL at P2P level SYS.
std::vector<AllreduceEntry> AllreduceTable() {
  return {Allreduce("NCCL auto", "NCCL auto", "auto", "", 0),
          Allreduce("NCCL ring LL", "NCCL ring LL", "ring", "ll", 0),
          Allreduce("NCCL ring Simple", "NCCL ring Simple", "ring", "simple", 0),
          Allreduce("NCCL tree", "NCCL tree", "tree", "", 0),
          CompareOnly(Allreduce("NCCL ring, 1 channel", "NCCL channel count", "ring", "", 1)),
          CompareOnly(Allreduce("NCCL ring, 2 channels", "NCCL channel count", "ring", "", 2)),
          CompareOnly(Allreduce("NCCL ring, 4 channels", "NCCL channel count", "ring", "", 4)),
          AdviseOnly(Allreduce("NCCL ring LL, 1 channel", "NCCL channel count", "ring", "ll", 1)),
          AdviseOnly(Allreduce("NCCL ring LL, 2 channels", "NCCL channel count", "ring", "ll", 2)),
          AdviseOnly(Allreduce("NCCL ring LL, 4 channels", "NCCL channel count", "ring", "ll", 4)),
          Allreduce("NCCL auto, P2P level SYS", "NCCL P2P level SYS", "auto", "", 0, "sys"),
          CompareOnly(Allreduce("NCCL auto, P2P disabled", "NCCL P2P disabled", "auto", "", 0, "", true)),
          AdviseOnly(Allreduce("NCCL ring LL, P2P level SYS", "NCCL P2P level SYS", "ring", "ll", 0, "sys")),
          Allreduce("one-shot custom allreduce", "one-shot custom allreduce", "oneshot", "", 0),
          Allreduce("two-shot custom allreduce", "two-shot custom allreduce", "twoshot", "", 0)};
}

// One pacing variant and the label each command prints for it ("": the command does not try it).
struct PacingEntry {
  PacingVariant variant;
  std::string compare_algos, advise;
};

PacingEntry Pacing(std::string compare_algos, std::string advise, std::string family) {
  PacingEntry e;
  e.compare_algos = std::move(compare_algos);
  e.advise = std::move(advise);
  e.variant.family = std::move(family);
  return e;
}

PacingEntry EveryPhase(llm::CaptureMode mode, std::string compare_algos) {
  PacingEntry e = Pacing(compare_algos, "", compare_algos);
  e.variant.every_phase = mode;
  return e;
}

PacingEntry Verify(llm::CaptureMode mode, std::string compare_algos, std::string advise) {
  PacingEntry e = Pacing(compare_algos, std::move(advise), compare_algos);
  e.variant.verify = mode;
  return e;
}

PacingEntry HostSync(bool sync, std::string compare_algos, std::string advise, std::string family) {
  PacingEntry e = Pacing(std::move(compare_algos), std::move(advise), std::move(family));
  e.variant.host_sync = sync;
  return e;
}

// Every pacing variant, in the order both commands print theirs. Advise turns CUDA graphs off
// through serving.cuda_graphs (what a user's launch flag does); compare-algos tries each capture
// mode per phase on the profile instead.
std::vector<PacingEntry> PacingTable() {
  using llm::CaptureMode;
  PacingEntry graphs_off = Pacing("", "graphs off", "CUDA graphs off");
  graphs_off.variant.cuda_graphs = false;
  PacingEntry ahead = HostSync(false, "no host sync (host runs ahead)", "graphs on, host runs ahead (no syncs)",
                               "host runs ahead (no per-step / per-cycle sync)");
  ahead.variant.what_if = true;
  return {Pacing("as the profile says", "graphs on", "graphs as the profile says"),
          EveryPhase(CaptureMode::kFull, "every phase full graph"),
          graphs_off,
          Verify(CaptureMode::kPiecewise, "verify piecewise", "graphs on, verify piecewise"),
          Verify(CaptureMode::kEager, "verify eager", ""),
          EveryPhase(CaptureMode::kPiecewise, "every phase piecewise"),
          EveryPhase(CaptureMode::kEager, "every phase eager"),
          ahead,
          HostSync(true, "host sync every step and cycle", "", "host sync every step and cycle")};
}

config::CaptureMode ProtoMode(llm::CaptureMode mode) {
  switch (mode) {
    case llm::CaptureMode::kFull: return config::FULL;
    case llm::CaptureMode::kPiecewise: return config::PIECEWISE;
    case llm::CaptureMode::kEager: return config::EAGER;
  }
  return config::CAPTURE_MODE_UNSPECIFIED;
}

}  // namespace

config::Communication AllreduceVariant::Communication() const {
  config::Communication c;
  c.set_allreduce_algorithm(algorithm);
  c.set_protocol(protocol);
  c.set_channels(channels);
  c.set_p2p_level(p2p_level);
  c.set_p2p_disable(p2p_disable);
  c.set_driver_p2p_mode(driver_p2p_mode);
  return c;
}

std::vector<AllreduceVariant> AllreduceVariants(VariantList list) {
  std::vector<AllreduceVariant> out;
  for (AllreduceEntry& e : AllreduceTable())
    if (list == VariantList::kCompareAlgos ? e.compare_algos : e.advise) out.push_back(std::move(e.variant));
  return out;
}

AllreduceVariant WithBar1P2p(AllreduceVariant v) {
  v.name += ", BAR1 P2P";
  v.family = v.custom_allreduce() ? "custom allreduce with BAR1 P2P" : "NCCL P2P with BAR1 P2P";
  v.driver_p2p_mode = "bar1";
  return v;
}

void PacingVariant::ApplyTo(llm::DecodeSetup* setup) const {
  if (!setup->framework) {  // no profile: the capture that serving.cuda_graphs gives, no framework costs
    llm::FrameworkProfile f;
    f.name = "none";
    const llm::CaptureMode m = setup->cuda_graphs ? llm::CaptureMode::kFull : llm::CaptureMode::kEager;
    f.capture = {m, m, m, m};
    setup->framework = f;
  }
  llm::FrameworkProfile* f = &*setup->framework;
  if (!cuda_graphs) {
    setup->cuda_graphs = false;
    f->capture = {llm::CaptureMode::kEager, llm::CaptureMode::kEager, llm::CaptureMode::kEager,
                  llm::CaptureMode::kEager};
  }
  if (every_phase) f->capture = {*every_phase, *every_phase, *every_phase, *every_phase};
  if (verify) f->capture.verify = *verify;
  if (host_sync) f->sync_each_step = f->sync_each_cycle = *host_sync;
}

std::vector<std::pair<std::string, llm::CaptureMode>> PacingVariant::CaptureChanges() const {
  std::vector<std::pair<std::string, llm::CaptureMode>> out;
  if (every_phase)
    for (const char* phase : {"decode", "draft", "verify", "draft_extend"}) out.emplace_back(phase, *every_phase);
  if (verify) out.emplace_back("verify", *verify);
  return out;
}

void PacingVariant::ApplyTo(config::Scenario* scenario) const {
  scenario->mutable_serving()->set_cuda_graphs(cuda_graphs);
  config::FrameworkProfile* f = scenario->mutable_framework_overrides();
  for (const auto& [phase, mode] : CaptureChanges()) {
    config::PhaseCapture* capture = f->mutable_capture();
    const config::CaptureMode m = ProtoMode(mode);
    if (phase == "decode") capture->set_decode(m);
    if (phase == "draft") capture->set_draft(m);
    if (phase == "verify") capture->set_verify(m);
    if (phase == "draft_extend") capture->set_draft_extend(m);
  }
  if (host_sync) {
    f->set_sync_each_step(*host_sync);
    f->set_sync_each_cycle(*host_sync);
  }
}

std::vector<PacingVariant> PacingVariants(VariantList list) {
  std::vector<PacingVariant> out;
  for (PacingEntry& e : PacingTable()) {
    std::string& label = list == VariantList::kCompareAlgos ? e.compare_algos : e.advise;
    if (label.empty()) continue;
    e.variant.name = std::move(label);
    out.push_back(std::move(e.variant));
  }
  return out;
}

}  // namespace specsim::advise

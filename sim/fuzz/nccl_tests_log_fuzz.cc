// Fuzzes nccl-tests logs (sim/calib/nccl_tests_log.h) through what `compare LOG --hardware BOX`
// does: read the log as a trace, check its items as any trace's, and predict each on a box of
// 8 GPUs (a log may name up to 1024 ranks: those past the box are not simulated, not a crash).
#include <cstddef>
#include <cstdint>
#include <string>

#include "sim/calib/calib_inputs.h"
#include "sim/calib/compare.h"
#include "sim/calib/nccl_tests_log.h"
#include "sim/calib/params.h"
#include "sim/calib/trace_io.h"
#include "sim/core/check.h"
#include "sim/fuzz/fuzz_support.h"
#include "sim/io/hardware_loader.h"

namespace {
constexpr int kFuzzLogItems = 16;  // each item plans a collective: a few are enough per input
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace specsim;
  const std::string text(fuzz::AsText(data, size));
  (void)calib::LooksLikeNcclTestsLog(text);
  auto log = calib::ParseNcclTestsLog(text, "fuzz.log");
  if (!log.ok()) return 0;
  SPECSIM_CHECK_GT(log->items_size(), 0);
  auto* items = log->mutable_items();
  if (items->size() > kFuzzLogItems) items->DeleteSubrange(kFuzzLogItems, items->size() - kFuzzLogItems);
  if (!calib::ValidateTraceItems(*log, "fuzz.log").ok()) return 0;
  static const auto* box = new auto(io::LoadHardwareFile("configs/hardware/rtxpro6000-8x-pcie-switch.textproto"));
  SPECSIM_CHECK(box->ok()) << box->status().message();
  auto predicted = calib::Compare(*log, **box, calib::DefaultParams(**box, 0), {});
  if (!predicted.ok()) return 0;
  for (const auto& item : predicted->items) {
    SPECSIM_CHECK(!(item.predicted_us < 0)) << item.name << " predicted " << item.predicted_us << " us";
  }
  return 0;
}

// Fuzzes measurement traces (binary proto/specsim/trace.proto, as specsim-validate and
// import-profile write them) through what `calibrate` and `compare` do: load and check (hardware
// from the trace), fit, write the calibration, predict every item, and a held-out comparison.
// At most kFuzzTraceItems (8) items are kept after loading: a fit over a whole committed trace costs
// seconds per input, and the defects sought are per item.
#include <cstddef>
#include <cstdint>
#include <string>

#include <google/protobuf/text_format.h>

#include "sim/calib/calib_inputs.h"
#include "sim/calib/calibration_loader.h"
#include "sim/calib/compare.h"
#include "sim/calib/fit.h"
#include "sim/core/check.h"
#include "sim/fuzz/fuzz_support.h"
#include "sim/fuzz/textproto_mutator.h"
#include "sim/io/textproto.h"
#include "specsim/trace.pb.h"

namespace {
constexpr int kFuzzTraceItems = 8;
}

// Structure-aware: one field of the parsed trace set to an extreme (textproto_mutator.h).
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  return specsim::fuzz::MutateBinaryProto(specsim::trace::Trace(), data, size, max_size, seed);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace specsim;
  const std::string path = fuzz::WriteTempFile("trace", ".pb", fuzz::AsText(data, size));
  auto in = calib::LoadCalibInputs(path, "", "");
  if (!in.ok()) return 0;
  auto* items = in->trace.mutable_items();
  if (items->size() > kFuzzTraceItems) items->DeleteSubrange(kFuzzTraceItems, items->size() - kFuzzTraceItems);
  calib::FitOptions options;
  options.fix_undetermined = true;  // as `specsim calibrate` fits
  auto fit = calib::Fit(in->trace, {}, *in->topology, in->params, options);
  if (fit.ok()) {
    // What `calibrate` writes (a fit its reader accepts) must load back from its text.
    const config::Calibration calibration = calib::CalibrationFromFit(*fit, *in->topology, path);
    if (calib::CalibrationFromProto(calibration, "fitted").ok()) {
      std::string text;
      google::protobuf::TextFormat::PrintToString(calibration, &text);
      auto loaded = calib::LoadCalibration(fuzz::WriteTempFile("calibration", ".textproto", text));
      SPECSIM_CHECK(loaded.ok()) << "the fitted calibration does not load: " << loaded.status().message();
    }
    auto predicted = calib::Compare(in->trace, fit->topology, fit->params, {});
    if (predicted.ok()) {
      for (const auto& item : predicted->items) {
        SPECSIM_CHECK(!(item.predicted_us < 0)) << item.name << " predicted " << item.predicted_us << " us";
      }
    }
  }
  (void)calib::Compare(in->trace, *in->topology, in->params, {.holdout = 0.3, .seed = 1});
  return 0;
}

// Fuzzes calibration textprotos (proto/specsim/calibration.proto) as `--calibration` takes them:
// load and check, run the default scenario with it, and time collectives on a bundled box with its
// fabric and NCCL parts applied (as `specsim collective --calibration` does).
#include <cstddef>
#include <cstdint>

#include "sim/calib/calibration_loader.h"
#include "sim/core/check.h"
#include "sim/fuzz/fuzz_support.h"
#include "sim/fuzz/textproto_mutator.h"
#include "specsim/calibration.pb.h"
#include "sim/io/hardware_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace specsim;
  const std::string path = fuzz::WriteTempFile("calibration", ".textproto", fuzz::AsText(data, size));
  auto calibration = calib::LoadCalibration(path);
  if (!calibration.ok()) return 0;
  fuzz::EvaluateBounded(fuzz::DefaultScenario(), path);
  auto topology = io::LoadHardwareFile("configs/hardware/rtxpro6000-8x-dual-socket.textproto");
  SPECSIM_CHECK(topology.ok()) << topology.status().message();
  calib::ApplyFabricCalibration(calibration->fabric(), &*topology);
  for (int64_t bytes : {int64_t{64} << 10, int64_t{16} << 20})
    fuzz::TimeCollectivesBounded(*topology, bytes, calibration->nccl.protocol);
  return 0;
}

// Structure-aware: extreme values in the parsed config's fields (textproto_mutator.h).
extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  return specsim::fuzz::MutateTextProto(specsim::config::Calibration(), data, size, max_size, seed);
}

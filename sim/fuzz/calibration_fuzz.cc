// Fuzzes calibration textprotos (proto/specsim/calibration.proto) as `--calibration` takes them:
// load and check, run the default scenario with it, and time collectives on a bundled box with its
// fabric and NCCL parts applied (as `specsim collective --calibration` does).
#include <cstddef>
#include <cstdint>
#include <sstream>

#include "sim/core/check.h"
#include "sim/fuzz/fuzz_support.h"
#include "sim/tools/calib_setup.h"
#include "sim/tools/collective_command.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace specsim;
  const std::string path = fuzz::WriteTempFile("calibration", ".textproto", fuzz::AsText(data, size));
  if (!tools::LoadCalibrationFile(path).ok()) return 0;
  fuzz::EvaluateBounded(fuzz::DefaultScenario(), path);
  tools::CollectiveFlags flags;
  flags.calibration = path;
  flags.sizes = "64K,16M";
  std::ostringstream out, err;
  const int exit_code = tools::RunCollective(flags, out, err);
  SPECSIM_CHECK(exit_code == 0 || exit_code == 2) << "exit " << exit_code << ": " << err.str();
  return 0;
}

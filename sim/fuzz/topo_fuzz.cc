// Fuzzes `nvidia-smi topo -m` text (sim/io/nvidia_smi_topo.h) and, when a matrix is read, the
// hardware config hardware-from-topo builds from it for a GPU of the datasheet table, loaded as any
// hardware file is; also the nvidia-smi -q / --query-gpu reader on the same bytes.
#include <cstddef>
#include <cstdint>

#include "sim/core/check.h"
#include "sim/fuzz/fuzz_support.h"
#include "sim/io/hardware_from_topo.h"
#include "sim/io/hardware_loader.h"
#include "sim/io/nvidia_smi_topo.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace specsim;
  const std::string text(fuzz::AsText(data, size));
  (void)io::ParseNvidiaSmiGpus(text);
  auto matrix = io::ParseNvidiaSmiTopo(text);
  if (!matrix.ok()) return 0;
  io::TopoInputs in;
  in.matrix = *matrix;
  in.gpu_name = "NVIDIA H200";
  in.name = "fuzz";
  in.sources = "fuzz";
  auto config = io::HardwareConfigFromTopo(in);
  SPECSIM_CHECK(config.ok()) << config.status().message();
  // What it builds from an accepted matrix must load: an error here is a bug of the builder.
  auto box = io::ParseHardware(*config, "fuzz");
  SPECSIM_CHECK(box.ok()) << box.status().message();
  return 0;
}

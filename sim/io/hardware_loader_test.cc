// Hardware validation: every bad config fails with the file, the field path, the value and what
// is allowed; good configs convert to the expected topology.
#include "sim/io/hardware_loader.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/io/file_io.h"
#include "sim/io/test_matchers.h"

namespace specsim::io {
namespace {

using testing::Contains;

// Two GPUs on one root complex with its host memory: valid.
constexpr const char* kGood = R"txt(
  name: "tiny"
  gpu_models {
    name: "G" arch: "sm90" sm_count: 1 memory_gib: 1 memory_bandwidth_gbps: 1
    bf16_dense_tflops: 1 copy_engines_per_direction: 1 kernel_read_outstanding_bytes_per_sm: 1
  }
  nodes { name: "cpu0" kind: CPU_ROOT_COMPLEX forward_latency_ns: 500 }
  nodes { name: "mem0" kind: HOST_MEMORY }
  nodes { name: "gpu0" kind: GPU gpu_model: "G" }
  nodes { name: "gpu1" kind: GPU gpu_model: "G" }
  links { a: "gpu0" b: "cpu0" kind: PCIE bandwidth_gbps: 63 latency_ns: 275 payload_efficiency: 0.9 pcie_gen: 5 pcie_lanes: 16 }
  links { a: "gpu1" b: "cpu0" kind: PCIE bandwidth_gbps: 63 latency_ns: 275 payload_efficiency: 0.9 pcie_gen: 5 pcie_lanes: 16 }
  links { a: "cpu0" b: "mem0" kind: MEMORY bandwidth_gbps: 400 latency_ns: 0 payload_efficiency: 1 }
)txt";

// kGood with the first occurrence of `from` replaced by `to`.
std::string Edit(const std::string& from, const std::string& to) { return testing::ReplaceFirst(kGood, from, to); }

// The error message of parsing `text` as box.textproto; fails the test when it parses.
std::string ErrorOf(const std::string& text) {
  StatusOr<net::Topology> t = ParseHardware(text, "box.textproto");
  EXPECT_FALSE(t.ok());
  return t.ok() ? "" : t.status().message();
}

TEST(HardwareLoaderTest, GoodConfigConverts) {
  StatusOr<net::Topology> t = ParseHardware(kGood, "box.textproto");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->name, "tiny");
  EXPECT_EQ(t->cpu_vendor, net::CpuVendor::kUnknown);  // CPU_VENDOR_UNSPECIFIED is accepted
  ASSERT_EQ(t->num_gpus(), 2);
  EXPECT_EQ(t->gpus, (std::vector<int>{2, 3}));  // node indices, file order
  EXPECT_EQ(t->gpu_spec(1).name, "G");
  EXPECT_EQ(t->nodes[0].kind, net::NodeKind::kCpuRootComplex);
  EXPECT_EQ(t->nodes[0].gpu_spec, -1);
  EXPECT_DOUBLE_EQ(t->nodes[0].forward_latency_ns, 500);
  ASSERT_EQ(t->links.size(), 3u);
  EXPECT_EQ(t->links[0].a, 2);
  EXPECT_EQ(t->links[0].b, 0);
  EXPECT_EQ(t->links[2].kind, net::LinkKind::kMemory);
  EXPECT_DOUBLE_EQ(t->links[0].payload_gbps(), 63 * 0.9);
  EXPECT_EQ(t->links[0].pcie_gen, 5);
  EXPECT_EQ(t->HostMemoryOfSocket(0), 1);
  EXPECT_EQ(t->HostMemoryOfSocket(1), -1);
  EXPECT_EQ(t->FindNode("gpu1"), 3);
  EXPECT_EQ(t->FindNode("nope"), -1);
  EXPECT_EQ(t->LinkName(0), "gpu0<->cpu0");
  EXPECT_EQ(t->DirectedLinkName(0, 0), "gpu0->cpu0");
  EXPECT_EQ(t->DirectedLinkName(0, 1), "cpu0->gpu0");
}

TEST(HardwareLoaderTest, CpuVendorMaps) {
  StatusOr<net::Topology> t = ParseHardware(std::string(kGood) + "cpu_vendor: INTEL", "box.textproto");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->cpu_vendor, net::CpuVendor::kIntel);
}

TEST(HardwareLoaderTest, NegativeBandwidth) {
  const std::string m =
      ErrorOf(Edit("bandwidth_gbps: 63 latency_ns: 275 payload_efficiency: 0.9 pcie_gen: 5 "
                   "pcie_lanes: 16 }\n  links { a: \"gpu1\"",
                   "bandwidth_gbps: -5 latency_ns: 275 payload_efficiency: 0.9 pcie_gen: 5 "
                   "pcie_lanes: 16 }\n  links { a: \"gpu1\""));
  EXPECT_TRUE(
      Contains(m, "box.textproto: links[0] (gpu0<->cpu0).bandwidth_gbps = -5: must be in [0.001, 100000] GB/s"));
}

// More than kMaxHardwareGpus GPU nodes are refused before anything is built (the routing tables a
// command fills grow with the GPUs it uses, at most the box's squared).
TEST(HardwareLoaderTest, TooManyGpusAreRefusedBeforeTheTablesAreBuilt) {
  std::string many;
  for (int64_t g = 2; g <= kMaxHardwareGpus; ++g)
    many += "  nodes { name: \"gpu" + std::to_string(g) + "\" kind: GPU gpu_model: \"G\" }\n";
  const std::string m = ErrorOf(Edit("  links {", many + "  links {"));
  EXPECT_TRUE(Contains(m, "box.textproto: 4097 GPU nodes: at most 4096 per hardware file")) << m;
}

TEST(HardwareLoaderTest, UnknownFieldNamesFileFieldAndAllowedFields) {
  const std::string m = ErrorOf(Edit("bandwidth_gbps: 400", "bandwdith_gbps: 400"));
  EXPECT_TRUE(Contains(m, "box.textproto:13:"));
  EXPECT_TRUE(Contains(m, "bandwdith_gbps"));
  EXPECT_TRUE(Contains(m, "Did you mean \"bandwidth_gbps\"?"));
  EXPECT_TRUE(Contains(m, "Fields of specsim.config.Link: a, b, kind, bandwidth_gbps"));
}

TEST(HardwareLoaderTest, NoRouteBetweenTwoGpus) {
  StatusOr<net::Topology> t = ParseHardware(Edit("links { a: \"gpu1\" b: \"cpu0\" kind: PCIE bandwidth_gbps: 63 "
                                                 "latency_ns: 275 payload_efficiency: 0.9 pcie_gen: 5 pcie_lanes: 16 }",
                                                 ""),
                                            "box.textproto");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Contains(t.status().message(),
                       "box.textproto: no route between GPUs gpu0 and gpu1 (nodes[2] and nodes[3]): every pair"));
}

// Traffic never passes through a GPU (as net::Router routes it): a chain gpu0 - gpu1 - gpu2 of
// direct NVLinks leaves gpu0 and gpu2 without a route.
TEST(HardwareLoaderTest, NoRouteThroughAGpu) {
  const std::string chain = R"txt(
    gpu_models {
      name: "G" arch: "sm90" sm_count: 1 memory_gib: 1 memory_bandwidth_gbps: 1
      bf16_dense_tflops: 1 copy_engines_per_direction: 1 kernel_read_outstanding_bytes_per_sm: 1
    }
    nodes { name: "gpu0" kind: GPU gpu_model: "G" }
    nodes { name: "gpu1" kind: GPU gpu_model: "G" }
    nodes { name: "gpu2" kind: GPU gpu_model: "G" }
    nodes { name: "cpu0" kind: CPU_ROOT_COMPLEX }
    nodes { name: "mem0" kind: HOST_MEMORY }
    links { a: "gpu0" b: "gpu1" kind: NVLINK bandwidth_gbps: 450 payload_efficiency: 1 }
    links { a: "gpu1" b: "gpu2" kind: NVLINK bandwidth_gbps: 450 payload_efficiency: 1 }
    links { a: "cpu0" b: "mem0" kind: MEMORY bandwidth_gbps: 400 latency_ns: 0 payload_efficiency: 1 }
  )txt";
  const std::string m = ErrorOf(chain);
  EXPECT_TRUE(Contains(m, "no route between GPUs gpu0 and gpu2 (nodes[0] and nodes[2])"));
  EXPECT_FALSE(Contains(m, "gpu0 and gpu1"));
}

// A GPU on a socket without HOST_MEMORY is refused by the loader, naming the socket: the fabric
// stages host copies and SHM transfers through that socket's memory.
TEST(HardwareLoaderTest, AGpuSocketWithoutHostMemory) {
  const std::string m = ErrorOf(Edit("name: \"gpu1\" kind: GPU", "name: \"gpu1\" kind: GPU socket: 1"));
  EXPECT_TRUE(Contains(m, "(gpu1): socket 1 has no HOST_MEMORY node")) << m;
  EXPECT_TRUE(Contains(m, "add one (kind: HOST_MEMORY, socket: 1)")) << m;
}

// Found by hardware_config_fuzz: GPUs joined only through an NVSwitch, with no PCIe path to the
// host, loaded and failed a CHECK at their first SHM transfer (collective --p2p-disable).
TEST(HardwareLoaderTest, AGpuWithoutAPathToHostMemory) {
  const std::string nvswitch_only = testing::ReplaceFirst(
      testing::ReplaceFirst(kGood,
                            "links { a: \"gpu0\" b: \"cpu0\" kind: PCIE bandwidth_gbps: 63 latency_ns: 275 "
                            "payload_efficiency: 0.9 pcie_gen: 5 pcie_lanes: 16 }",
                            "nodes { name: \"nvs\" kind: NVSWITCH forward_latency_ns: 100 }\n"
                            "links { a: \"gpu0\" b: \"nvs\" kind: NVLINK bandwidth_gbps: 450 latency_ns: 275 "
                            "payload_efficiency: 1 nvlinks: 18 }"),
      "links { a: \"gpu1\" b: \"cpu0\" kind: PCIE",
      "links { a: \"gpu1\" b: \"nvs\" kind: NVLINK bandwidth_gbps: 450 latency_ns: 275 payload_efficiency: 1 "
      "nvlinks: 18 }\nlinks { a: \"gpu1\" b: \"cpu0\" kind: PCIE");
  // gpu1 keeps its PCIe link: only gpu0 has no way to the host.
  const std::string m = ErrorOf(nvswitch_only);
  EXPECT_TRUE(Contains(m, "no route from GPU gpu0 (nodes[2]) to host memory mem0 (nodes[1])")) << m;
  EXPECT_FALSE(Contains(m, "from GPU gpu1")) << m;
}

// Issue 15, item 2: values past any physical range (1e-300 GB/s, 1e300 ns) loaded and then
// overflowed the picosecond clock; they are refused with the range.
TEST(HardwareLoaderTest, ValuesPastAnyPhysicalRange) {
  EXPECT_TRUE(Contains(ErrorOf(Edit("bandwidth_gbps: 63", "bandwidth_gbps: 1e-300")),
                       "links[0] (gpu0<->cpu0).bandwidth_gbps = 1e-300: must be in [0.001, 100000]"));
  EXPECT_TRUE(Contains(ErrorOf(Edit("latency_ns: 275", "latency_ns: 1e300")),
                       "links[0] (gpu0<->cpu0).latency_ns = 1e+300: must be in [0, 1e+09] ns"));
  EXPECT_TRUE(Contains(ErrorOf(Edit("forward_latency_ns: 500", "forward_latency_ns: 1e300")),
                       "forward_latency_ns = 1e+300: must be in [0, 1e+09]"));
}

TEST(HardwareLoaderTest, ZeroGpus) {
  const std::string m = ErrorOf(R"txt(
    nodes { name: "cpu0" kind: CPU_ROOT_COMPLEX }
  )txt");
  EXPECT_TRUE(Contains(m, "box.textproto: zero GPUs"));
}

TEST(HardwareLoaderTest, EnumTypoListsAllowedKinds) {
  const std::string m = ErrorOf(Edit("name: \"gpu0\" kind: GPU", "name: \"gpu0\" kind: GPUU"));
  EXPECT_TRUE(Contains(m, "box.textproto:9:"));
  EXPECT_TRUE(Contains(m, "\"GPUU\""));
  EXPECT_TRUE(Contains(m, "GPU, PCIE_SWITCH, CPU_ROOT_COMPLEX, HOST_MEMORY, NVSWITCH"));
}

TEST(HardwareLoaderTest, UnsetKindListsAllowedKinds) {
  const std::string m = ErrorOf(Edit("name: \"gpu0\" kind: GPU", "name: \"gpu0\""));
  EXPECT_TRUE(Contains(m,
                       "box.textproto: nodes[2] (gpu0).kind = KIND_UNSPECIFIED: must be one of GPU, "
                       "PCIE_SWITCH, CPU_ROOT_COMPLEX, HOST_MEMORY, NVSWITCH"));
}

TEST(HardwareLoaderTest, UndefinedEnumNumberIsRejected) {
  const std::string m = ErrorOf(Edit("kind: MEMORY", "kind: 9"));
  EXPECT_TRUE(Contains(m,
                       "links[2] (cpu0<->mem0).kind = 9: must be one of PCIE, CPU_INTERCONNECT, "
                       "NVLINK, MEMORY"));
}

TEST(HardwareLoaderTest, MissingGpuModelListsDefinedModels) {
  const std::string m =
      ErrorOf(Edit("name: \"gpu1\" kind: GPU gpu_model: \"G\"", "name: \"gpu1\" kind: GPU gpu_model: \"H100\""));
  EXPECT_TRUE(Contains(m,
                       "box.textproto: nodes[3] (gpu1).gpu_model = \"H100\": must name a gpu_models "
                       "entry; defined gpu_models: \"G\""));
}

TEST(HardwareLoaderTest, GpuModelNumbers) {
  const std::string m = ErrorOf(Edit("sm_count: 1 memory_gib: 1", "sm_count: 0 memory_gib: -2"));
  EXPECT_TRUE(Contains(m, "gpu_models[0] (G).sm_count = 0: must be in [1, 100000] SMs"));
  EXPECT_TRUE(Contains(m, "gpu_models[0] (G).memory_gib = -2: must be in (0, 1e+06] GiB"));
  EXPECT_TRUE(Contains(ErrorOf(Edit("copy_engines_per_direction: 1", "copy_engines_per_direction: 0")),
                       "gpu_models[0] (G).copy_engines_per_direction = 0: must be in [1, 64]"));
  EXPECT_TRUE(Contains(ErrorOf(Edit("bf16_dense_tflops: 1", "bf16_dense_tflops: nan")),
                       "gpu_models[0] (G).bf16_dense_tflops = nan: must be in [0.001, 1e+06]"));
  EXPECT_TRUE(Contains(ErrorOf(Edit("memory_bandwidth_gbps: 1", "memory_bandwidth_gbps: inf")),
                       "memory_bandwidth_gbps = inf: must be in [0.001, 1e+06]"));
}

TEST(HardwareLoaderTest, DuplicateAndEmptyNames) {
  EXPECT_TRUE(Contains(ErrorOf(Edit("name: \"gpu1\"", "name: \"gpu0\"")),
                       "nodes[3] (gpu0).name = \"gpu0\": duplicates nodes[2]"));
  EXPECT_TRUE(
      Contains(ErrorOf(Edit("name: \"mem0\"", "name: \"\"")), "nodes[1] (unnamed).name = \"\": must be non-empty"));
}

TEST(HardwareLoaderTest, LinkChecks) {
  EXPECT_TRUE(
      Contains(ErrorOf(Edit("b: \"mem0\"", "b: \"mem9\"")), "links[2] (cpu0<->mem9).b = \"mem9\": must name a node"));
  EXPECT_TRUE(Contains(ErrorOf(Edit("a: \"gpu0\" b: \"cpu0\"", "a: \"gpu0\" b: \"gpu0\"")),
                       "links[0] (gpu0<->gpu0).b = \"gpu0\": a link must join two different nodes"));
  EXPECT_TRUE(Contains(ErrorOf(Edit("kind: PCIE ", "")),
                       "links[0] (gpu0<->cpu0).kind = KIND_UNSPECIFIED: must be one of PCIE, "
                       "CPU_INTERCONNECT, NVLINK, MEMORY"));
  EXPECT_TRUE(Contains(ErrorOf(Edit("latency_ns: 275", "latency_ns: -1")),
                       "links[0] (gpu0<->cpu0).latency_ns = -1: must be in [0, 1e+09] ns"));
  EXPECT_TRUE(Contains(ErrorOf(Edit("payload_efficiency: 0.9", "payload_efficiency: 1.5")),
                       "links[0] (gpu0<->cpu0).payload_efficiency = 1.5: must be in [0.01, 1]"));
  EXPECT_TRUE(Contains(ErrorOf(Edit("payload_efficiency: 0.9 ", "")),
                       "links[0] (gpu0<->cpu0).payload_efficiency = 0: must be in [0.01, 1]"));
  EXPECT_TRUE(
      Contains(ErrorOf(Edit("pcie_gen: 5", "pcie_gen: 7")), "links[0] (gpu0<->cpu0).pcie_gen = 7: must be in [0, 6]"));
  EXPECT_TRUE(Contains(ErrorOf(Edit("pcie_lanes: 16", "pcie_lanes: 3")),
                       "links[0] (gpu0<->cpu0).pcie_lanes = 3: PCIE links need one of 1, 2, 4, 8, 16"));
  EXPECT_TRUE(Contains(ErrorOf(Edit("payload_efficiency: 1 }", "payload_efficiency: 1 pcie_gen: 5 }")),
                       "links[2] (cpu0<->mem0).pcie_gen = 5: only allowed on PCIE links (this link is MEMORY)"));
  const std::string duplicate =
      R"txt(links { a: "cpu0" b: "gpu0" kind: PCIE bandwidth_gbps: 63 payload_efficiency: 1 pcie_gen: 5 pcie_lanes: 16 })txt";
  EXPECT_TRUE(
      Contains(ErrorOf(std::string(kGood) + duplicate), "links[3] (cpu0<->gpu0) = (cpu0, gpu0): duplicates links[0]"));
}

TEST(HardwareLoaderTest, LinkEndpointKinds) {
  EXPECT_TRUE(Contains(ErrorOf(Edit("a: \"gpu0\" b: \"cpu0\" kind: PCIE", "a: \"gpu0\" b: \"cpu0\" kind: NVLINK")),
                       "links[0] (gpu0<->cpu0).b = \"cpu0\" (CPU_ROOT_COMPLEX): NVLINK links join GPU or NVSWITCH "
                       "nodes"));
  EXPECT_TRUE(
      Contains(ErrorOf(Edit("a: \"cpu0\" b: \"mem0\" kind: MEMORY", "a: \"cpu0\" b: \"mem0\" kind: CPU_INTERCONNECT")),
               "links[2] (cpu0<->mem0).b = \"mem0\" (HOST_MEMORY): CPU_INTERCONNECT links "
               "join two CPU_ROOT_COMPLEX nodes"));
}

TEST(HardwareLoaderTest, P2pFieldsOnlyOnRootComplex) {
  EXPECT_TRUE(Contains(ErrorOf(Edit("name: \"mem0\" kind: HOST_MEMORY",
                                    "name: \"mem0\" kind: HOST_MEMORY p2p_forward_bandwidth_gbps: 10")),
                       "nodes[1] (mem0).p2p_forward_bandwidth_gbps = 10: only allowed on CPU_ROOT_COMPLEX "
                       "nodes (this node is HOST_MEMORY)"));
  EXPECT_TRUE(
      Contains(ErrorOf(Edit("forward_latency_ns: 500", "forward_latency_ns: 500 p2p_forward_collapse_per_flow: -1")),
               "nodes[0] (cpu0).p2p_forward_collapse_per_flow = -1: must be in [0, 1000]"));
  StatusOr<net::Topology> ok = ParseHardware(Edit("forward_latency_ns: 500",
                                                  "forward_latency_ns: 500 p2p_forward_bandwidth_gbps: 20 "
                                                  "p2p_forward_collapse_per_flow: 0.5"),
                                             "box.textproto");
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_DOUBLE_EQ(ok->nodes[0].p2p_forward_bandwidth_gbps, 20);
  EXPECT_DOUBLE_EQ(ok->nodes[0].p2p_forward_collapse_per_flow, 0.5);
}

TEST(HardwareLoaderTest, HostMemoryNeedsMemoryLinkOnItsSocket) {
  EXPECT_TRUE(Contains(ErrorOf(Edit("links { a: \"cpu0\" b: \"mem0\" kind: MEMORY bandwidth_gbps: "
                                    "400 latency_ns: 0 payload_efficiency: 1 }",
                                    "")),
                       "nodes[1] (mem0): HOST_MEMORY needs a MEMORY link to a CPU_ROOT_COMPLEX"));
  EXPECT_TRUE(Contains(ErrorOf(Edit("kind: HOST_MEMORY", "kind: HOST_MEMORY socket: 1")),
                       "nodes[1] (mem0).socket = 1: must equal the socket of its root complex cpu0 (0)"));
  EXPECT_TRUE(Contains(ErrorOf(std::string(kGood) + "nodes { name: \"mem1\" kind: HOST_MEMORY }"),
                       "nodes[4] (mem1).socket = 0: socket already has HOST_MEMORY nodes[1] (mem0)"));
}

TEST(HardwareLoaderTest, GpuModelOnlyOnGpus) {
  EXPECT_TRUE(Contains(ErrorOf(Edit("kind: HOST_MEMORY", "kind: HOST_MEMORY gpu_model: \"G\"")),
                       "nodes[1] (mem0).gpu_model = \"G\": only allowed on GPU nodes (this node is HOST_MEMORY)"));
}

TEST(HardwareLoaderTest, ReportsEveryFieldProblemAtOnce) {
  std::string text = Edit("latency_ns: 275", "latency_ns: -1");
  text.replace(text.find("pcie_lanes: 16"), 14, "pcie_lanes: 5");
  const std::string m = ErrorOf(text);
  EXPECT_TRUE(Contains(m, "latency_ns = -1"));
  EXPECT_TRUE(Contains(m, "pcie_lanes = 5"));
  EXPECT_TRUE(Contains(m, "\nbox.textproto: "));  // one line per problem
}

TEST(HardwareLoaderTest, LoadMissingFileIsNotFound) {
  StatusOr<net::Topology> t = LoadHardwareFile("no/such/dir/box.textproto");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Contains(t.status().message(), "no/such/dir/box.textproto: no such file"));
}

// Issue 12 item 3: the driver's PCIe P2P mode. Unset is the driver's own default; BAR1 is refused
// for GPUs without BAR1 P2P (before sm90), naming the field, the model and the allowed values.
TEST(HardwareLoaderTest, DriverP2pModeLoadsAndBar1NeedsHopperOrLater) {
  StatusOr<net::Topology> plain = ParseHardware(kGood, "box.textproto");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->driver_p2p_mode, net::DriverP2pMode::kDriverDefault);
  StatusOr<net::Topology> bar1 = ParseHardware(std::string(kGood) + "driver_p2p_mode: BAR1_FORCED", "box.textproto");
  ASSERT_TRUE(bar1.ok()) << bar1.status().ToString();
  EXPECT_EQ(bar1->driver_p2p_mode, net::DriverP2pMode::kBar1Forced);
  StatusOr<net::Topology> none = ParseHardware(std::string(kGood) + "driver_p2p_mode: NO_PCIE_P2P", "box.textproto");
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->driver_p2p_mode, net::DriverP2pMode::kNoPcieP2p);
  EXPECT_TRUE(Contains(ErrorOf(Edit("arch: \"sm90\"", "arch: \"sm89\"") + "driver_p2p_mode: BAR1_FORCED"),
                       "box.textproto: driver_p2p_mode = BAR1_FORCED: gpu_models[0] (G) is arch \"sm89\": the "
                       "driver has BAR1 P2P only for sm90 and later"));
  EXPECT_TRUE(
      Contains(ErrorOf(std::string(kGood) + "driver_p2p_mode: 7"),
               "box.textproto: driver_p2p_mode = 7: must be one of DRIVER_DEFAULT (the same as unset), BAR1_FORCED, "
               "NO_PCIE_P2P"));
}

}  // namespace
}  // namespace specsim::io

namespace specsim::io {
namespace {

// Issue 42 item 1: a PCIe link past the GPU's datasheet (a Gen6 link on an H200, whose host
// interface is Gen5 x16) draws a warning naming the link; the bundled boxes draw none.
TEST(HardwareLoaderTest, ALinkPastTheGpusDatasheetIsWarned) {
  auto text = ReadFileToString(std::string(SPECSIM_SOURCE_DIR) + "/configs/hardware/h200-2x-nvlink.textproto");
  ASSERT_TRUE(text.ok());
  std::vector<std::string> warnings;
  ASSERT_TRUE(ParseHardware(*text, "h200.textproto", &warnings).ok());
  for (const std::string& w : warnings) EXPECT_EQ(w.find("host interface"), std::string::npos) << w;
  std::string gen6 = *text;
  const std::string from = "pcie_gen: 5 pcie_lanes: 16 }";
  gen6.replace(gen6.find(from), from.size(), "pcie_gen: 6 pcie_lanes: 16 }");
  warnings.clear();
  ASSERT_TRUE(ParseHardware(gen6, "h200.textproto", &warnings).ok());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("h200.textproto: links["), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("PCIe Gen6 x16, past H200's Gen5 x16 host interface"), std::string::npos) << warnings[0];
}

}  // namespace
}  // namespace specsim::io

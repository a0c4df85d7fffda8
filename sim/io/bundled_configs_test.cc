// Every bundled configs/hardware/*.textproto loads, has the expected GPUs, connects every GPU
// pair, and its latencies add up to the figures its comments derive (docs/reference/pcie.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "sim/io/hardware_loader.h"
#include "sim/io/test_matchers.h"
#include "sim/net/routing.h"

namespace specsim::io {
namespace {

using testing::Contains;

std::string SourcePath(const std::string& relative) { return std::string(SPECSIM_SOURCE_DIR) + "/" + relative; }

net::Topology Load(const std::string& relative) {
  StatusOr<net::Topology> t = LoadHardwareFile(SourcePath(relative));
  SPECSIM_CHECK(t.ok()) << t.status().ToString();
  return std::move(t).value();
}

double GpuLatencyNs(const net::Router& router, int gpu_i, int gpu_j) {
  const net::Topology& t = router.topology();
  return router.Route(t.gpus[gpu_i], t.gpus[gpu_j]).latency_ns;
}

struct Expected {
  const char* file;
  int gpus;
  const char* gpu_model;
  net::CpuVendor vendor;
  int sockets;
};

constexpr Expected kBundled[] = {
    {"configs/hardware/rtxpro6000-8x-dual-socket.textproto", 8, "RTX PRO 6000 Blackwell Server Edition",
     net::CpuVendor::kAmd, 2},
    {"configs/hardware/rtxpro6000-8x-pcie-switch.textproto", 8, "RTX PRO 6000 Blackwell Server Edition",
     net::CpuVendor::kAmd, 1},
    {"configs/hardware/rtxpro6000-4x-pcie-switch.textproto", 4, "RTX PRO 6000 Blackwell Server Edition",
     net::CpuVendor::kAmd, 1},
    {"configs/hardware/h200-1x.textproto", 1, "H200", net::CpuVendor::kUnknown, 1},
    {"configs/hardware/h200-2x-nvlink.textproto", 2, "H200", net::CpuVendor::kIntel, 1},
    {"configs/hardware/h200-8x-nvlink.textproto", 8, "H200", net::CpuVendor::kIntel, 2},
};

class BundledConfigTest : public ::testing::TestWithParam<Expected> {};

TEST_P(BundledConfigTest, LoadsWithExpectedGpusAndRoutes) {
  const Expected& e = GetParam();
  const net::Topology t = Load(e.file);
  EXPECT_EQ(t.num_gpus(), e.gpus);
  EXPECT_EQ(t.cpu_vendor, e.vendor);
  EXPECT_FALSE(t.name.empty());
  for (int g = 0; g < t.num_gpus(); ++g) {
    EXPECT_EQ(t.gpu_spec(g).name, e.gpu_model);
    EXPECT_EQ(t.nodes[t.gpus[g]].name, "gpu" + std::to_string(g));  // file order
  }
  const net::Router router(t);
  for (int i = 0; i < t.num_gpus(); ++i) {
    for (int j = 0; j < t.num_gpus(); ++j) {
      if (i != j) EXPECT_TRUE(router.Reachable(t.gpus[i], t.gpus[j])) << i << "->" << j;
    }
  }
  for (int s = 0; s < e.sockets; ++s) {
    const int memory = t.HostMemoryOfSocket(s);
    ASSERT_GE(memory, 0) << "socket " << s;
    for (int g = 0; g < t.num_gpus(); ++g) {
      EXPECT_TRUE(router.Reachable(t.gpus[g], memory)) << "gpu" << g << " -> socket " << s;
    }
  }
}

// The per-node tables the fabric and the executor look up per flow agree with the O(nodes)
// searches they replace (a socket's first HOST_MEMORY node; a node's GPU index).
TEST_P(BundledConfigTest, PerNodeTablesAgreeWithTheSearches) {
  const net::Topology t = Load(GetParam().file);
  const std::vector<int> memory = net::HostMemoryOfEachNode(t);
  const std::vector<int> gpu = net::GpuIndexOfEachNode(t);
  ASSERT_EQ(memory.size(), t.nodes.size());
  ASSERT_EQ(gpu.size(), t.nodes.size());
  int gpus_seen = 0;
  for (int n = 0; n < static_cast<int>(t.nodes.size()); ++n) {
    EXPECT_EQ(memory[n], t.HostMemoryOfSocket(t.nodes[n].socket)) << t.nodes[n].name;
    const auto it = std::find(t.gpus.begin(), t.gpus.end(), n);
    EXPECT_EQ(gpu[n], it == t.gpus.end() ? -1 : static_cast<int>(it - t.gpus.begin())) << t.nodes[n].name;
    gpus_seen += gpu[n] >= 0;
  }
  EXPECT_EQ(gpus_seen, t.num_gpus());
}

TEST_P(BundledConfigTest, HasProtoHeaderAndCommentsOnNumbers) {
  std::ifstream in(SourcePath(GetParam().file));
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_TRUE(Contains(text.str(), "# proto-file: proto/specsim/hardware.proto\n"));
  EXPECT_TRUE(Contains(text.str(), "# proto-message: specsim.config.Hardware\n"));
  EXPECT_TRUE(Contains(text.str(), "[PLACEHOLDER]"));
}

INSTANTIATE_TEST_SUITE_P(AllBundled, BundledConfigTest, ::testing::ValuesIn(kBundled));

// Every configs/hardware file on disk is in the table above (so each one is tested).
TEST(BundledConfigsTest, TableCoversTheDirectory) {
  for (const auto& entry : std::filesystem::directory_iterator(SourcePath("configs/hardware"))) {
    if (entry.path().extension() != ".textproto") continue;
    const std::string relative = "configs/hardware/" + entry.path().filename().string();
    EXPECT_TRUE(
        std::any_of(std::begin(kBundled), std::end(kBundled), [&](const Expected& e) { return relative == e.file; }))
        << relative << " is not in kBundled";
  }
}

// docs/reference/pcie.md: ~0.65 us one-way through one switch, ~1.05 us through a root complex,
// +0.1 us per switch chip. The configs' comments derive their numbers from these; net::Router
// adds link latencies and the forward latency of intermediate nodes.
TEST(BundledConfigsTest, LatenciesAndPathClassesMatchReferenceFigures) {
  using net::PathClass;
  const net::Topology dual = Load("configs/hardware/rtxpro6000-8x-dual-socket.textproto");
  const net::Router dual_router(dual);
  EXPECT_DOUBLE_EQ(GpuLatencyNs(dual_router, 0, 1), 1050);  // one root complex
  EXPECT_DOUBLE_EQ(GpuLatencyNs(dual_router, 0, 4), 1550);  // two + xGMI (0, placeholder)
  EXPECT_EQ(dual_router.GpuPathClass(0, 1), PathClass::kPhb);
  EXPECT_EQ(dual_router.GpuPathClass(0, 4), PathClass::kSys);

  const net::Topology sw8 = Load("configs/hardware/rtxpro6000-8x-pcie-switch.textproto");
  const net::Router sw8_router(sw8);
  EXPECT_DOUBLE_EQ(GpuLatencyNs(sw8_router, 0, 1), 650);   // one switch
  EXPECT_DOUBLE_EQ(GpuLatencyNs(sw8_router, 0, 4), 1250);  // 1050 + 2 switches * 100
  EXPECT_EQ(sw8_router.GpuPathClass(0, 3), PathClass::kPix);
  EXPECT_EQ(sw8_router.GpuPathClass(0, 4), PathClass::kPhb);

  const net::Topology sw4 = Load("configs/hardware/rtxpro6000-4x-pcie-switch.textproto");
  const net::Router sw4_router(sw4);
  EXPECT_DOUBLE_EQ(GpuLatencyNs(sw4_router, 0, 3), 650);

  // NVLink links are listed first so hop-count ties (gpu0-sw0-gpu1) go to NVLink.
  const net::Topology nv = Load("configs/hardware/h200-8x-nvlink.textproto");
  const net::Router nv_router(nv);
  for (int j = 1; j < 8; ++j) {
    EXPECT_EQ(nv_router.GpuPathClass(0, j), PathClass::kNvLink) << "gpu0->gpu" << j;
    EXPECT_DOUBLE_EQ(GpuLatencyNs(nv_router, 0, j), 650);  // placeholder: as one PCIe switch
  }
}

TEST(BundledConfigsTest, PcieNumbersFollowTheSpecArithmetic) {
  for (const Expected& e : kBundled) {
    const net::Topology t = Load(e.file);
    for (const net::Link& l : t.links) {
      if (l.kind != net::LinkKind::kPcie) continue;
      // Gen5 x16: 32 GT/s * 16 * 128/130 / 8 = 63.015 GB/s; 256 B payload per 280 B TLP.
      EXPECT_NEAR(l.bandwidth_gbps, 32.0 * 16 * 128 / 130 / 8, 1e-3) << e.file;
      EXPECT_NEAR(l.payload_efficiency, 256.0 / 280, 1e-3) << e.file;
      EXPECT_EQ(l.pcie_gen, 5);
      EXPECT_EQ(l.pcie_lanes, 16);
    }
  }
}

}  // namespace
}  // namespace specsim::io

namespace specsim::io {
namespace {

// The scale benchmark's boxes (scripts/gen-scale-box.py) load, have the GPU count their name says,
// and every GPU reaches every other (sampled: each GPU to GPU 0 and to the last GPU).
TEST(ScaleBoxes, LoadWithTheirGpuCountAndRoutes) {
  for (int n : {16, 32, 64, 128, 256}) {
    const std::string path = (std::filesystem::path(SPECSIM_SOURCE_DIR) / "configs/hardware/scale" /
                              ("pcie-" + std::to_string(n) + "x.textproto"))
                                 .string();
    auto t = LoadHardwareFile(path);
    ASSERT_TRUE(t.ok()) << path << ": " << t.status().ToString();
    EXPECT_EQ(t->num_gpus(), n);
    const net::Router router(*t);
    for (int g = 0; g < n; ++g) {
      EXPECT_TRUE(router.Reachable(t->gpus[g], t->gpus[0]));
      EXPECT_TRUE(router.Reachable(t->gpus[g], t->gpus[n - 1]));
    }
  }
}

}  // namespace
}  // namespace specsim::io

#include "sim/io/hardware_from_topo.h"

#include <gtest/gtest.h>

#include <string>

#include "sim/io/file_io.h"
#include "sim/io/gpu_datasheets.h"
#include "sim/io/hardware_loader.h"
#include "sim/net/routing.h"

namespace specsim::io {
namespace {

std::string Read(const std::string& relative) {
  auto text = ReadFileToString(std::string(SPECSIM_SOURCE_DIR) + "/" + relative);
  EXPECT_TRUE(text.ok()) << relative;
  return text.ok() ? *text : "";
}

// The class specsim's router gives a pair of the generated box for nvidia-smi's class: PXB's
// bridge levels fold into one switch (PIX), NODE's host bridges into the socket's root complex (PHB).
net::PathClass Expected(TopoPath p) {
  switch (p) {
    case TopoPath::kNvlink: return net::PathClass::kNvLink;
    case TopoPath::kPix:
    case TopoPath::kPxb: return net::PathClass::kPix;
    case TopoPath::kPhb:
    case TopoPath::kNode: return net::PathClass::kPhb;
    default: return net::PathClass::kSys;
  }
}

// Issue 42 item 1: each topology (the GPU machine's own, and shapes written from nvidia-smi's
// documented legend) becomes a config that loads, whose every GPU pair has the path class the
// matrix says.
TEST(HardwareFromTopo, EveryPairKeepsItsPathClass) {
  struct Case {
    const char* file;
    const char* gpu;
    int gpus, sockets, switches;
  };
  const Case cases[] = {
      {"traces/topo/h200-1x-2026-12-04/topo-m.txt", "NVIDIA H200", 1, 1, 0},
      {"sim/io/testdata/topo/nv18-2x.txt", "NVIDIA H200", 2, 1, 0},
      {"sim/io/testdata/topo/hgx-8x-nv18.txt", "NVIDIA H200", 8, 2, 0},
      {"sim/io/testdata/topo/pcie-8x-dual-socket.txt", "NVIDIA RTX PRO 6000 Blackwell Server Edition", 8, 2, 4},
      {"sim/io/testdata/topo/phb-4x.txt", "NVIDIA RTX PRO 6000 Blackwell Workstation Edition", 4, 1, 0},
      {"sim/io/testdata/topo/pxb-4x.txt", "NVIDIA RTX PRO 6000 Blackwell Server Edition", 4, 1, 1},
      {"sim/io/testdata/topo/pcie-8x-dual-socket.txt", "NVIDIA L40S", 8, 2, 4},
      {"sim/io/testdata/topo/hgx-8x-nv18.txt", "NVIDIA H100 80GB HBM3", 8, 2, 0},
  };
  for (const Case& c : cases) {
    auto m = ParseNvidiaSmiTopo(Read(c.file));
    ASSERT_TRUE(m.ok()) << c.file << ": " << m.status().ToString();
    ASSERT_EQ(m->num_gpus, c.gpus) << c.file;
    TopoInputs in;
    in.matrix = *m;
    in.gpu_name = c.gpu;
    in.name = "t";
    in.sources = c.file;
    auto text = HardwareConfigFromTopo(in);
    ASSERT_TRUE(text.ok()) << c.file << ": " << text.status().ToString();
    auto box = ParseHardware(*text, c.file);
    ASSERT_TRUE(box.ok()) << c.file << ": " << box.status().ToString() << "\n" << *text;
    ASSERT_EQ(box->num_gpus(), c.gpus);
    int sockets = 0, switches = 0;
    for (const net::Node& n : box->nodes) {
      sockets += n.kind == net::NodeKind::kCpuRootComplex;
      switches += n.kind == net::NodeKind::kPcieSwitch;
    }
    EXPECT_EQ(sockets, c.sockets) << c.file;
    EXPECT_EQ(switches, c.switches) << c.file;
    net::Router router(*box);
    for (int i = 0; i < c.gpus; ++i)
      for (int j = 0; j < c.gpus; ++j)
        if (i != j)
          EXPECT_EQ(router.GpuPathClass(i, j), Expected(m->path[i][j]))
              << c.file << " GPU" << i << "-GPU" << j << ": " << TopoPathName(m->path[i][j]);
    EXPECT_NE(text->find("[GUESS]"), std::string::npos);
  }
}

// The GPU machine's own: the escape codes of the header stripped, NUMA 0, and nvidia-smi -q and the
// --query-gpu CSV both give the H200 at PCIe Gen5 x16.
TEST(HardwareFromTopo, TheGpuMachinesOwnOutput) {
  auto m = ParseNvidiaSmiTopo(Read("traces/topo/h200-1x-2026-12-04/topo-m.txt"));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->numa_node[0], 0);
  EXPECT_EQ(m->cpu_affinity[0], "0-15");
  for (const char* f : {"traces/topo/h200-1x-2026-12-04/smi-q.txt", "traces/topo/h200-1x-2026-12-04/query-gpu.csv"}) {
    auto gpus = ParseNvidiaSmiGpus(Read(f));
    ASSERT_TRUE(gpus.ok()) << f << ": " << gpus.status().ToString();
    ASSERT_EQ(gpus->size(), 1u) << f;
    EXPECT_EQ((*gpus)[0].name, "NVIDIA H200") << f;
    EXPECT_EQ((*gpus)[0].pcie_gen_max, 5) << f;
    EXPECT_EQ((*gpus)[0].pcie_width_max, 16) << f;
  }
  EXPECT_TRUE(FindGpuDatasheet("NVIDIA H200").has_value());
  EXPECT_TRUE(FindGpuDatasheet("h200").has_value());
  EXPECT_FALSE(FindGpuDatasheet("GeForce 256").has_value());
}

// Each GPU keeps its own reported link: a box whose GPU1 trained at Gen4 x8 (a riser, a bifurcated
// slot) gets that GPU's link at x8 Gen4's rate and the others at theirs; the switch above them takes
// the widest. A GPU list of another length than the matrix is refused.
TEST(HardwareFromTopo, EachGpuKeepsItsOwnLink) {
  auto m = ParseNvidiaSmiTopo(Read("sim/io/testdata/topo/pxb-4x.txt"));
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  auto gpus = ParseNvidiaSmiGpus(
      "name, pcie.link.gen.max, pcie.link.width.max\n"
      "NVIDIA RTX PRO 6000 Blackwell Server Edition, 5, 16\n"
      "NVIDIA RTX PRO 6000 Blackwell Server Edition, 4, 8\n"
      "NVIDIA RTX PRO 6000 Blackwell Server Edition, 5, 16\n"
      "NVIDIA RTX PRO 6000 Blackwell Server Edition, 5, 16\n");
  ASSERT_TRUE(gpus.ok()) << gpus.status().ToString();
  TopoInputs in;
  in.matrix = *m;
  in.gpus = *gpus;
  in.name = "mixed";
  in.sources = "test";
  auto text = HardwareConfigFromTopo(in);
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  auto box = ParseHardware(*text, "mixed");
  ASSERT_TRUE(box.ok()) << box.status().ToString() << "\n" << *text;
  // Gen4: 16 GT/s x 8 lanes x 128/130 / 8 = 15.754 GB/s; Gen5 x16: 63.015 GB/s.
  int gen4 = 0, gen5 = 0;
  for (const net::Link& l : box->links) {
    if (l.kind != net::LinkKind::kPcie) continue;
    if (l.pcie_gen == 4) {
      ++gen4;
      EXPECT_EQ(l.pcie_lanes, 8);
      EXPECT_NEAR(l.bandwidth_gbps, 15.754, 1e-3);
    } else {
      ++gen5;
      EXPECT_NEAR(l.bandwidth_gbps, 63.015, 1e-3);
    }
  }
  EXPECT_EQ(gen4, 1);  // GPU1's link alone
  EXPECT_EQ(gen5, 4);  // three GPU links and the switch's uplink (the widest below it)
  in.gpus.pop_back();
  auto short_list = HardwareConfigFromTopo(in);
  ASSERT_FALSE(short_list.ok());
  EXPECT_NE(short_list.status().message().find("names 3 GPU(s) and the topo -m matrix 4"), std::string::npos)
      << short_list.status().message();
}

// The config hardware-from-topo writes for four `gpu_name` GPUs of the PHB topology (Gen4 links).
std::string FourGen4GpusOf(const std::string& gpu_name) {
  auto m = ParseNvidiaSmiTopo(Read("sim/io/testdata/topo/phb-4x.txt"));
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  TopoInputs in;
  in.matrix = *m;
  in.gpu_name = gpu_name;
  in.name = "box";
  in.sources = "test";
  auto text = HardwareConfigFromTopo(in);
  EXPECT_TRUE(text.ok()) << text.status().ToString();
  return text.ok() ? *text : "";
}

// `text` loads without a warning; with every Gen4 link made Gen5, each of the 4 GPUs' links is
// warned, the first warning holding `expected`.
void ExpectGen5WarnedPerGpu(const std::string& text, const std::string& expected) {
  std::vector<std::string> warnings;
  ASSERT_TRUE(ParseHardware(text, "box.textproto", &warnings).ok());
  EXPECT_TRUE(warnings.empty()) << warnings.front();
  std::string gen5 = text;
  for (size_t at = gen5.find("pcie_gen: 4"); at != std::string::npos; at = gen5.find("pcie_gen: 4", at))
    gen5.replace(at, 11, "pcie_gen: 5");
  ASSERT_TRUE(ParseHardware(gen5, "box.textproto", &warnings).ok());
  ASSERT_EQ(warnings.size(), 4u);  // each GPU's link
  EXPECT_NE(warnings[0].find(expected), std::string::npos) << warnings[0];
}

// The example: an L40S box written from the RTX PRO 6000's (a Gen5 link left in place of
// the L40S's Gen4) draws the datasheet warning; the config hardware-from-topo writes draws none and
// says that the datasheet gives no L2 size.
TEST(HardwareFromTopo, AnL40sBoxAtGen5IsWarned) {
  const std::string text = FourGen4GpusOf("NVIDIA L40S");
  EXPECT_NE(text.find("pcie_gen: 4 pcie_lanes: 16"), std::string::npos) << text;
  EXPECT_NE(text.find("l2_cache_mib: 0   # not in the datasheet"), std::string::npos) << text;
  ExpectGen5WarnedPerGpu(text, "PCIe Gen5 x16, past L40S's Gen4 x16 host interface");
}

// The A100 SXM4 as nvidia-smi names it: its datasheet figures (docs/reference/hardware.md), no FP8
// (0: FP8 math at the BF16 rate), PCIe Gen4; a box of four built from the PHB topology loads, and
// left at Gen5 each GPU's link is warned.
TEST(HardwareFromTopo, AnA100BoxTakesItsDatasheet) {
  auto a100 = FindGpuDatasheet("NVIDIA A100-SXM4-80GB");
  ASSERT_TRUE(a100.has_value());
  EXPECT_EQ(a100->arch, "sm80");
  EXPECT_EQ(a100->sm_count, 108);
  EXPECT_DOUBLE_EQ(a100->memory_bandwidth_gbps, 2039);
  EXPECT_DOUBLE_EQ(a100->bf16_dense_tflops, 312);
  EXPECT_DOUBLE_EQ(a100->fp8_dense_tflops, 0);
  EXPECT_EQ(a100->pcie_gen, 4);
  EXPECT_DOUBLE_EQ(FindGpuDatasheet("NVIDIA A100-SXM4-40GB")->memory_bandwidth_gbps, 1555);
  EXPECT_FALSE(FindGpuDatasheet("NVIDIA A100 80GB PCIe").has_value());  // another card: not in the table
  ExpectGen5WarnedPerGpu(FourGen4GpusOf("NVIDIA A100-SXM4-80GB"), "past A100 SXM4 80GB's Gen4 x16 host interface");
}

TEST(HardwareFromTopo, BadInputIsNamed) {
  EXPECT_FALSE(ParseNvidiaSmiTopo("hello").ok());
  auto bad = ParseNvidiaSmiTopo("\tGPU0\tGPU1\nGPU0\t X \tQQQ\nGPU1\tPIX\t X \n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("QQQ"), std::string::npos) << bad.status().message();
  auto asym = ParseNvidiaSmiTopo("\tGPU0\tGPU1\nGPU0\t X \tPIX\nGPU1\tSYS\t X \n");
  ASSERT_FALSE(asym.ok());
  EXPECT_NE(asym.status().message().find("symmetric"), std::string::npos) << asym.status().message();
  TopoInputs in;
  in.matrix = *ParseNvidiaSmiTopo("\tGPU0\tGPU1\nGPU0\t X \tPIX\nGPU1\tPIX\t X \n");
  auto no_name = HardwareConfigFromTopo(in);
  ASSERT_FALSE(no_name.ok());
  EXPECT_NE(no_name.status().message().find("--gpu"), std::string::npos);
  in.gpu_name = "GeForce 256";
  auto unknown = HardwareConfigFromTopo(in);
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("not in the datasheet table"), std::string::npos);
  EXPECT_NE(unknown.status().message().find("H200"), std::string::npos);  // the table's names listed
}

}  // namespace
}  // namespace specsim::io

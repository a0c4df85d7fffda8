#include "validate/host_placement.h"

#include <dirent.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "validate/rank_threads.h"

namespace specsim::validate {
namespace {

// From <numaif.h> (libnuma-dev, not needed for the raw system calls).
constexpr int kMpolBind = 2;
constexpr unsigned kMpolMfStrict = 1u << 0;
constexpr unsigned kMpolMfMove = 1u << 1;
constexpr int kMpolFNode = 1 << 0;
constexpr int kMpolFAddr = 1 << 1;
constexpr int kMaxNode = 1023;

std::string Lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

StatusOr<std::vector<int>> ParseNodeList(const std::string& text) {
  auto nodes = ParseCpuList(text);
  if (!nodes.ok()) return InvalidArgument("NUMA node list '" + text + "': " + nodes.status().message());
  return nodes;
}

std::string IommuKernelParameters(const std::string& cmdline) {
  std::istringstream in(cmdline);
  std::string word, out;
  while (in >> word) {
    const bool iommu = word.rfind("intel_iommu=", 0) == 0 || word.rfind("amd_iommu=", 0) == 0 ||
                       word.rfind("iommu=", 0) == 0 || word.rfind("iommu.", 0) == 0;
    if (iommu) out += (out.empty() ? "" : " ") + word;
  }
  return out;
}

int FarNumaNode(int gpu_node, const std::vector<int>& nodes) {
  if (nodes.size() < 2) return -1;
  if (gpu_node < 0) return nodes[1];
  for (int n : nodes)
    if (n != gpu_node) return n;
  return -1;
}

std::vector<int> ReadOnlineNumaNodes() {
  std::ifstream in("/sys/devices/system/node/online");
  std::string line;
  if (!std::getline(in, line)) return {};
  auto nodes = ParseNodeList(line);
  return nodes.ok() ? *nodes : std::vector<int>{};
}

std::vector<std::string> ReadIommuUnits(bool* visible) {
  std::vector<std::string> units;
  DIR* d = opendir("/sys/class/iommu");
  *visible = d != nullptr;
  if (!d) return units;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") units.push_back(name);
  }
  closedir(d);
  std::sort(units.begin(), units.end());
  return units;
}

std::string ReadKernelCommandLine(bool* visible) {
  std::ifstream in("/proc/cmdline");
  std::string line;
  *visible = static_cast<bool>(std::getline(in, line));
  return line;
}

std::string IommuGroupTypeOfPciDevice(const std::string& pci_bus_id) {
  std::ifstream in("/sys/bus/pci/devices/" + Lower(pci_bus_id) + "/iommu_group/type");
  std::string line;
  std::getline(in, line);
  return line;
}

Status BindToNumaNode(void* addr, size_t bytes, int node) {
  if (node < 0 || node > kMaxNode) return InvalidArgument("NUMA node " + std::to_string(node) + " not in [0, 1023]");
  unsigned long mask[(kMaxNode + 1) / (8 * sizeof(unsigned long))] = {};
  mask[node / (8 * sizeof(unsigned long))] = 1UL << (node % (8 * sizeof(unsigned long)));
  const long rc = syscall(SYS_mbind, addr, bytes, kMpolBind, mask, 8 * sizeof(mask) + 1UL, kMpolMfStrict | kMpolMfMove);
  if (rc != 0) {
    const int e = errno;
    return Unavailable("mbind to NUMA node " + std::to_string(node) + " failed: " + std::strerror(e) + " (errno " +
                       std::to_string(e) + ")");
  }
  return Status::Ok();
}

int NumaNodeOfAddress(const void* addr) {
  int node = -1;
  const long rc = syscall(SYS_get_mempolicy, &node, nullptr, 0UL, const_cast<void*>(addr), kMpolFNode | kMpolFAddr);
  return rc == 0 ? node : -1;
}

}  // namespace specsim::validate

// Where host memory sits: the host's NUMA nodes and IOMMU state as Linux shows them (sysfs, procfs),
// and binding an address range to one NUMA node.
//
// A GPU reaching mapped host memory on its own socket crosses its PCIe link and that socket's root
// complex; memory on another node adds the socket link (UPI / xGMI) both ways of every read. The
// host-staged suite measures both by binding its mapped buffer's pages (mbind, MPOL_BIND, before the
// pages are touched and registered with CUDA) and then asking the kernel where the first page
// landed (get_mempolicy): an item records the node found, never the node asked for. The calls are
// made through syscall(2), so no libnuma is needed; where the kernel refuses them (a container's
// seccomp profile refuses mbind without CAP_SYS_NICE) the caller gets the error to report.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "validate/status.h"

namespace specsim::validate {

// "0-1" or "0,2-3" (sysfs node list, the cpulist format) -> the nodes, ascending. Error on junk.
StatusOr<std::vector<int>> ParseNodeList(const std::string& text);

// The IOMMU parameters of a kernel command line (intel_iommu=, amd_iommu=, iommu=, iommu.*=), in
// their order, space-separated; "" when there are none.
std::string IommuKernelParameters(const std::string& cmdline);

// The node to place a "far" buffer on for a GPU on `gpu_node`: the lowest listed node that is not
// gpu_node; with gpu_node unknown (-1), the second listed node (the first plays "near"). -1 when
// fewer than two nodes are listed.
int FarNumaNode(int gpu_node, const std::vector<int>& nodes);

// /sys/devices/system/node/online; empty when missing (no NUMA in the kernel, hidden sysfs).
std::vector<int> ReadOnlineNumaNodes();

// /sys/class/iommu entries, ascending; `visible` false when the directory cannot be read.
std::vector<std::string> ReadIommuUnits(bool* visible);

// The contents of /proc/cmdline; `visible` false when unreadable.
std::string ReadKernelCommandLine(bool* visible);

// /sys/bus/pci/devices/<bus id, lower case>/iommu_group/type ("identity", "DMA", "DMA-FQ"); "" when
// missing.
std::string IommuGroupTypeOfPciDevice(const std::string& pci_bus_id);

// mbind(addr, bytes, MPOL_BIND to {node}, MPOL_MF_STRICT | MPOL_MF_MOVE). REQUIRES addr page-aligned
// (mmap'd), node in [0, 1023]. Errors name the errno (EPERM under seccomp, EINVAL for an offline node).
Status BindToNumaNode(void* addr, size_t bytes, int node);

// The node holding the page at `addr` (get_mempolicy with MPOL_F_NODE | MPOL_F_ADDR); -1 when the
// kernel does not say (no NUMA support, the call refused). REQUIRES the page was touched.
int NumaNodeOfAddress(const void* addr);

}  // namespace specsim::validate

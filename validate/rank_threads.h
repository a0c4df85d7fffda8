// Where the ranks' host threads run (--rank-threads).
//
// specsim-validate drives rank r's GPU from a host thread of its own (ParallelFor in timing.h). By
// default ("free") the OS places those threads, and every rank loop starts fresh ones: a host-bound
// loop (the pacing suite's eager layer loops, decode's eager passes) then runs on whatever core, at
// whatever clock and wake-up latency, the scheduler picks that time. "pinned" runs rank r's threads
// on one core chosen once per run: a core local to GPU r's PCIe device (its sysfs local_cpulist),
// allowed for the process (sched_getaffinity), on a physical core no other rank uses (hyperthread
// siblings count as one core). The main thread, and with it NCCL's proxy threads (created by
// ncclCommInitAll on the main thread, which take the GPU's local CPUs), stays unpinned.
//
// ChooseRankCpus is the choice itself, a pure function tested without a GPU; ReadCpuTopology and
// LocalCpusOfPciDevice read Linux sysfs.
#pragma once

#include <sched.h>

#include <string>
#include <vector>

#include "validate/status.h"

namespace specsim::validate {

// "0-3,8,10-11" -> {0,1,2,3,8,10,11} (sysfs cpulist format; whitespace and a trailing newline are
// ignored). Error on junk, reversed ranges or CPUs above 65535.
StatusOr<std::vector<int>> ParseCpuList(const std::string& text);

// The logical CPUs of the machine and the physical core each belongs to (package and core id).
struct CpuTopology {
  std::vector<int> allowed;  // logical CPUs the process may run on, ascending
  std::vector<int> core_of;  // indexed by logical CPU: a key equal for hyperthread siblings
};

// For each rank, the CPUs local to its GPU (empty: unknown, any allowed CPU will do). Returns one
// logical CPU per rank, each on a physical core of its own: the first allowed CPU of the rank's
// local list whose core is unused, else the first allowed CPU on an unused core anywhere (a
// machine without enough local cores still runs, with the rank off its GPU's node). Error when the
// ranks outnumber the allowed physical cores.
StatusOr<std::vector<int>> ChooseRankCpus(const std::vector<std::vector<int>>& local_cpus_of_rank,
                                          const CpuTopology& topology);

// sched_getaffinity and /sys/devices/system/cpu/cpuN/topology/{physical_package_id,core_id}; a CPU
// whose topology files are missing is a core of its own.
StatusOr<CpuTopology> ReadCpuTopology();

// /sys/bus/pci/devices/<bus id, lower case>/local_cpulist; empty when the file is missing (VMs
// without a NUMA description, non-Linux sysfs).
std::vector<int> LocalCpusOfPciDevice(const std::string& pci_bus_id);

// Pins the calling thread to `cpu` for its lifetime and restores the earlier mask on destruction;
// cpu < 0 does nothing.
class ScopedCpuPin {
 public:
  explicit ScopedCpuPin(int cpu);
  ~ScopedCpuPin();
  ScopedCpuPin(const ScopedCpuPin&) = delete;
  ScopedCpuPin& operator=(const ScopedCpuPin&) = delete;
  Status status() const { return status_; }

 private:
  bool restore_ = false;
  cpu_set_t saved_;  // the earlier mask
  Status status_;
};

}  // namespace specsim::validate

#include "validate/rank_threads.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

namespace specsim::validate {
namespace {

constexpr int kMaxCpu = 65535;

std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  if (!f) return "";
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

StatusOr<int> ParseCpu(const std::string& text, const std::string& list) {
  if (text.empty() || !std::all_of(text.begin(), text.end(), [](char c) { return std::isdigit(c) != 0; }) ||
      text.size() > 5)
    return InvalidArgument("cpu list '" + list + "': '" + text + "' is not a CPU number");
  const int cpu = std::stoi(text);
  if (cpu > kMaxCpu)
    return InvalidArgument("cpu list '" + list + "': CPU " + text + " above " + std::to_string(kMaxCpu));
  return cpu;
}

}  // namespace

StatusOr<std::vector<int>> ParseCpuList(const std::string& text) {
  std::string s;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c))) s += c;
  std::vector<int> out;
  if (s.empty()) return out;
  std::stringstream parts(s);
  std::string part;
  while (std::getline(parts, part, ',')) {
    const size_t dash = part.find('-');
    if (dash == std::string::npos) {
      ASSIGN_OR_RETURN(int cpu, ParseCpu(part, text));
      out.push_back(cpu);
      continue;
    }
    ASSIGN_OR_RETURN(int lo, ParseCpu(part.substr(0, dash), text));
    ASSIGN_OR_RETURN(int hi, ParseCpu(part.substr(dash + 1), text));
    if (hi < lo) return InvalidArgument("cpu list '" + text + "': range " + part + " runs backwards");
    for (int c = lo; c <= hi; ++c) out.push_back(c);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

StatusOr<std::vector<int>> ChooseRankCpus(const std::vector<std::vector<int>>& local_cpus_of_rank,
                                          const CpuTopology& topology) {
  const std::set<int> allowed(topology.allowed.begin(), topology.allowed.end());
  auto core = [&](int cpu) {
    return cpu < static_cast<int>(topology.core_of.size()) ? topology.core_of[cpu] : -1 - cpu;
  };
  std::set<int> used_cores;
  std::vector<int> out;
  for (size_t r = 0; r < local_cpus_of_rank.size(); ++r) {
    int pick = -1;
    for (const std::vector<int>* list : {&local_cpus_of_rank[r], &topology.allowed}) {
      for (int cpu : *list) {
        if (allowed.count(cpu) == 0 || used_cores.count(core(cpu)) != 0) continue;
        pick = cpu;
        break;
      }
      if (pick >= 0) break;
    }
    if (pick < 0)
      return InvalidArgument("--rank-threads pinned: " + std::to_string(local_cpus_of_rank.size()) +
                             " ranks need a physical core each; the process may run on " +
                             std::to_string(used_cores.size()) + " (sched_getaffinity)");
    used_cores.insert(core(pick));
    out.push_back(pick);
  }
  return out;
}

StatusOr<CpuTopology> ReadCpuTopology() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0)
    return Internal(std::string("sched_getaffinity: ") + std::strerror(errno));
  CpuTopology t;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) t.allowed.push_back(c);
  if (t.allowed.empty()) return Internal("sched_getaffinity: the process may run on no CPU");
  t.core_of.assign(t.allowed.back() + 1, 0);
  for (int c = 0; c < static_cast<int>(t.core_of.size()); ++c) {
    const std::string dir = "/sys/devices/system/cpu/cpu" + std::to_string(c) + "/topology/";
    const std::string package = ReadFile(dir + "physical_package_id");
    const std::string core = ReadFile(dir + "core_id");
    // Without topology files a CPU is a core of its own (a negative key no real core has).
    t.core_of[c] =
        package.empty() || core.empty() ? -1 - c : std::atoi(package.c_str()) * 65536 + std::atoi(core.c_str());
  }
  return t;
}

std::vector<int> LocalCpusOfPciDevice(const std::string& pci_bus_id) {
  std::string id = pci_bus_id;
  for (char& c : id) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto cpus = ParseCpuList(ReadFile("/sys/bus/pci/devices/" + id + "/local_cpulist"));
  return cpus.ok() ? *cpus : std::vector<int>{};
}

ScopedCpuPin::ScopedCpuPin(int cpu) {
  if (cpu < 0) return;
  CPU_ZERO(&saved_);
  if (int e = pthread_getaffinity_np(pthread_self(), sizeof(saved_), &saved_); e != 0) {
    status_ = Internal("pthread_getaffinity_np: " + std::string(std::strerror(e)));
    return;
  }
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (int e = pthread_setaffinity_np(pthread_self(), sizeof(set), &set); e != 0) {
    status_ = Internal("pinning a rank thread to CPU " + std::to_string(cpu) + ": " + std::strerror(e));
    return;
  }
  restore_ = true;
}

ScopedCpuPin::~ScopedCpuPin() {
  if (restore_) pthread_setaffinity_np(pthread_self(), sizeof(saved_), &saved_);
}

}  // namespace specsim::validate

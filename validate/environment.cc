#include "validate/environment.h"

#include <dlfcn.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "validate/cuda_util.h"
#include "validate/host_placement.h"

extern char** environ;

namespace specsim::validate {
namespace {

// The few NVML entry points we use, declared here (nvml.h is not on every machine).
using nvmlDevice_t = void*;
using NvmlInit = int (*)();
using NvmlShutdown = int (*)();
using NvmlDriverVersion = int (*)(char*, unsigned);
using NvmlHandleByBusId = int (*)(const char*, nvmlDevice_t*);
using NvmlUint = int (*)(nvmlDevice_t, unsigned*);
using NvmlClock = int (*)(nvmlDevice_t, int, unsigned*);
using NvmlUuid = int (*)(nvmlDevice_t, char*, unsigned);
using NvmlTopo = int (*)(nvmlDevice_t, nvmlDevice_t, int*);
using NvmlP2P = int (*)(nvmlDevice_t, nvmlDevice_t, int, int*);

struct Nvml {
  void* lib = nullptr;
  NvmlInit init = nullptr;
  NvmlShutdown shutdown = nullptr;
  NvmlDriverVersion driver_version = nullptr;
  NvmlHandleByBusId handle = nullptr;
  NvmlUint cur_gen = nullptr, max_gen = nullptr, cur_width = nullptr, max_width = nullptr, power = nullptr;
  NvmlClock clock = nullptr, max_clock = nullptr;
  NvmlUuid uuid = nullptr;
  NvmlTopo topo = nullptr;
  NvmlP2P p2p = nullptr;
  bool ok = false;

  Nvml() {
    lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;
    auto sym = [&](const char* n) { return dlsym(lib, n); };
    init = reinterpret_cast<NvmlInit>(sym("nvmlInit_v2"));
    shutdown = reinterpret_cast<NvmlShutdown>(sym("nvmlShutdown"));
    driver_version = reinterpret_cast<NvmlDriverVersion>(sym("nvmlSystemGetDriverVersion"));
    handle = reinterpret_cast<NvmlHandleByBusId>(sym("nvmlDeviceGetHandleByPciBusId_v2"));
    cur_gen = reinterpret_cast<NvmlUint>(sym("nvmlDeviceGetCurrPcieLinkGeneration"));
    max_gen = reinterpret_cast<NvmlUint>(sym("nvmlDeviceGetMaxPcieLinkGeneration"));
    cur_width = reinterpret_cast<NvmlUint>(sym("nvmlDeviceGetCurrPcieLinkWidth"));
    max_width = reinterpret_cast<NvmlUint>(sym("nvmlDeviceGetMaxPcieLinkWidth"));
    power = reinterpret_cast<NvmlUint>(sym("nvmlDeviceGetPowerManagementLimit"));
    clock = reinterpret_cast<NvmlClock>(sym("nvmlDeviceGetClockInfo"));
    max_clock = reinterpret_cast<NvmlClock>(sym("nvmlDeviceGetMaxClockInfo"));
    uuid = reinterpret_cast<NvmlUuid>(sym("nvmlDeviceGetUUID"));
    topo = reinterpret_cast<NvmlTopo>(sym("nvmlDeviceGetTopologyCommonAncestor"));
    p2p = reinterpret_cast<NvmlP2P>(sym("nvmlDeviceGetP2PStatus"));
    ok = init && handle && init() == 0;
  }
  ~Nvml() {
    if (ok && shutdown) shutdown();
    if (lib) dlclose(lib);
  }
  nvmlDevice_t Handle(const std::string& bus) const {
    nvmlDevice_t d = nullptr;
    if (!ok || handle(bus.c_str(), &d) != 0) return nullptr;
    return d;
  }
};

std::string ReadFirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

int GenFromSpeed(const std::string& s) {
  double gts = std::atof(s.c_str());
  if (gts >= 60) return 6;
  if (gts >= 30) return 5;
  if (gts >= 15) return 4;
  if (gts >= 7) return 3;
  if (gts >= 4) return 2;
  if (gts > 0) return 1;
  return 0;
}

std::string Lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

trace::PathClass FromNvmlTopology(int level) {
  switch (level) {
    case 0: return trace::PATH_SELF;   // NVML_TOPOLOGY_INTERNAL
    case 10: return trace::PATH_PIX;   // SINGLE
    case 20: return trace::PATH_PXB;   // MULTIPLE
    case 30: return trace::PATH_PHB;   // HOSTBRIDGE
    case 40: return trace::PATH_NODE;  // NODE
    case 50: return trace::PATH_SYS;   // SYSTEM
    default: return trace::PATH_CLASS_UNSPECIFIED;
  }
}

}  // namespace

void EnsureNcclSafetyEnv() {
  if (!std::getenv("NCCL_NVLS_ENABLE")) setenv("NCCL_NVLS_ENABLE", "0", 1);
}

StatusOr<trace::Environment> CollectEnvironment(const std::vector<int>& devices) {
  trace::Environment env;
  char host[256] = {0};
  if (gethostname(host, sizeof(host) - 1) == 0) env.set_hostname(host);
  struct utsname u;
  if (uname(&u) == 0) env.set_kernel_release(u.release);
  {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
      if (line.rfind("model name", 0) == 0) {
        env.set_cpu_model(line.substr(line.find(':') + 2));
        break;
      }
    }
  }
  env.set_cpu_logical_cores(static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)));
  env.set_numa_nodes(static_cast<int>(ReadOnlineNumaNodes().size()));
  {
    trace::Iommu* iommu = env.mutable_iommu();
    bool visible = false;
    for (const std::string& u : ReadIommuUnits(&visible)) iommu->add_units(u);
    iommu->set_sysfs_visible(visible);
    const std::string cmdline = ReadKernelCommandLine(&visible);
    iommu->set_cmdline_visible(visible);
    iommu->set_kernel_parameters(IommuKernelParameters(cmdline));
  }
  {
    std::ifstream in("/proc/meminfo");
    std::string key;
    long long kb = 0;
    in >> key >> kb;
    if (key == "MemTotal:") env.set_host_memory_bytes(kb * 1024);
  }
  int v = 0;
  CUDA_RETURN_IF_ERROR(cudaDriverGetVersion(&v));
  env.set_cuda_driver_version(v);
  CUDA_RETURN_IF_ERROR(cudaRuntimeGetVersion(&v));
  env.set_cuda_runtime_version(v);
  int nv = 0;
  NCCL_RETURN_IF_ERROR(ncclGetVersion(&nv));
  env.set_nccl_version(std::to_string(nv / 10000) + "." + std::to_string(nv / 100 % 100) + "." +
                       std::to_string(nv % 100));
  int maj = 0, min = 0, pat = 0;
  cublasGetProperty(MAJOR_VERSION, &maj);
  cublasGetProperty(MINOR_VERSION, &min);
  cublasGetProperty(PATCH_LEVEL, &pat);
  env.set_cublas_version(maj * 10000 + min * 100 + pat);

  Nvml nvml;
  if (nvml.ok && nvml.driver_version) {
    char buf[96] = {0};
    if (nvml.driver_version(buf, sizeof(buf)) == 0) env.set_driver_version(buf);
  }
  std::vector<nvmlDevice_t> handles;
  for (int d : devices) {
    cudaDeviceProp p;
    CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&p, d));
    auto* g = env.add_gpus();
    g->set_index(d);
    g->set_name(p.name);
    char bus[32] = {0};
    CUDA_RETURN_IF_ERROR(cudaDeviceGetPCIBusId(bus, sizeof(bus), d));
    g->set_pci_bus_id(bus);
    g->set_compute_capability_major(p.major);
    g->set_compute_capability_minor(p.minor);
    g->set_sm_count(p.multiProcessorCount);
    g->set_memory_bytes(static_cast<int64_t>(p.totalGlobalMem));
    g->set_l2_cache_bytes(p.l2CacheSize);
    g->set_memory_bus_width_bits(p.memoryBusWidth);
    g->set_async_engine_count(p.asyncEngineCount);
    g->set_can_map_host_memory(p.canMapHostMemory != 0);
    std::string sys = "/sys/bus/pci/devices/" + Lower(bus);
    std::string numa = ReadFirstLine(sys + "/numa_node");
    g->set_numa_node(numa.empty() ? -1 : std::atoi(numa.c_str()));
    g->set_iommu_group_type(IommuGroupTypeOfPciDevice(bus));
    nvmlDevice_t h = nvml.Handle(bus);
    handles.push_back(h);
    unsigned x = 0;
    if (h) {
      char uuid[96] = {0};
      if (nvml.uuid && nvml.uuid(h, uuid, sizeof(uuid)) == 0) g->set_uuid(uuid);
      if (nvml.clock && nvml.clock(h, 1, &x) == 0) g->set_sm_clock_mhz(x);
      if (nvml.max_clock && nvml.max_clock(h, 1, &x) == 0) g->set_sm_clock_max_mhz(x);
      if (nvml.clock && nvml.clock(h, 2, &x) == 0) g->set_memory_clock_mhz(x);
      if (nvml.max_clock && nvml.max_clock(h, 2, &x) == 0) g->set_memory_clock_max_mhz(x);
      if (nvml.power && nvml.power(h, &x) == 0) g->set_power_limit_mw(x);
      bool got = false;
      if (nvml.cur_gen && nvml.cur_gen(h, &x) == 0) {
        g->set_pcie_generation_current(x);
        got = true;
      }
      if (nvml.max_gen && nvml.max_gen(h, &x) == 0) g->set_pcie_generation_max(x);
      if (nvml.cur_width && nvml.cur_width(h, &x) == 0) g->set_pcie_width_current(x);
      if (nvml.max_width && nvml.max_width(h, &x) == 0) g->set_pcie_width_max(x);
      if (got) g->set_pcie_source("nvml");
    }
    if (g->pcie_source().empty()) {
      std::string speed = ReadFirstLine(sys + "/current_link_speed");
      if (!speed.empty()) {
        g->set_pcie_source("sysfs");
        g->set_pcie_generation_current(GenFromSpeed(speed));
        g->set_pcie_generation_max(GenFromSpeed(ReadFirstLine(sys + "/max_link_speed")));
        g->set_pcie_width_current(std::atoi(ReadFirstLine(sys + "/current_link_width").c_str()));
        g->set_pcie_width_max(std::atoi(ReadFirstLine(sys + "/max_link_width").c_str()));
      } else {
        g->set_pcie_source("unknown");
      }
    }
    if (g->sm_clock_max_mhz() == 0) {
      int khz = 0;
      if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, d) == cudaSuccess) g->set_sm_clock_max_mhz(khz / 1000);
    }
  }
  for (size_t i = 0; i < devices.size(); ++i) {
    for (size_t j = 0; j < devices.size(); ++j) {
      if (i == j) continue;
      auto* pp = env.add_peers();
      pp->set_src(devices[i]);
      pp->set_dst(devices[j]);
      int can = 0;
      CUDA_RETURN_IF_ERROR(cudaDeviceCanAccessPeer(&can, devices[i], devices[j]));
      pp->set_can_access_peer(can != 0);
      int attr = 0;
      if (cudaDeviceGetP2PAttribute(&attr, cudaDevP2PAttrPerformanceRank, devices[i], devices[j]) == cudaSuccess)
        pp->set_performance_rank(attr);
      if (cudaDeviceGetP2PAttribute(&attr, cudaDevP2PAttrNativeAtomicSupported, devices[i], devices[j]) == cudaSuccess)
        pp->set_native_atomics(attr != 0);
      cudaGetLastError();
      trace::PathClass pc = trace::PATH_CLASS_UNSPECIFIED;
      if (handles[i] && handles[j]) {
        int st = 1;
        if (nvml.p2p && nvml.p2p(handles[i], handles[j], 2 /*NVML_P2P_CAPS_INDEX_NVLINK*/, &st) == 0 && st == 0)
          pc = trace::PATH_NVLINK;
        int level = -1;
        if (pc == trace::PATH_CLASS_UNSPECIFIED && nvml.topo && nvml.topo(handles[i], handles[j], &level) == 0)
          pc = FromNvmlTopology(level);
      }
      pp->set_path_class(pc);
    }
  }
  for (char** e = environ; e && *e; ++e) {
    std::string kv = *e;
    auto eq = kv.find('=');
    if (eq == std::string::npos) continue;
    std::string k = kv.substr(0, eq);
    if (k.rfind("NCCL_", 0) == 0 || k == "CUDA_VISIBLE_DEVICES" || k == "TORCH_SYMM_MEM_DISABLE_MULTICAST" ||
        k == "NVSHMEM_DISABLE_NVLS")
      (*env.mutable_nccl_env())[k] = kv.substr(eq + 1);
  }
  return env;
}

}  // namespace specsim::validate

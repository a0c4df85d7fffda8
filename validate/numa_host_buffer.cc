#include "validate/numa_host_buffer.h"

#include <cuda_runtime.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>

#include "validate/cuda_util.h"
#include "validate/host_placement.h"

namespace specsim::validate {

namespace {

constexpr int64_t kHugePage = int64_t{2} << 20;

// AnonHugePages (bytes) of the mapping that contains `p`, from /proc/self/smaps; -1 if not found.
int64_t AnonHugeBytesAt(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto a = reinterpret_cast<uintptr_t>(p);
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    unsigned long lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2 && line.find(':') != std::string::npos &&
        line.find('-') < line.find(' ')) {
      inside = a >= lo && a < hi;
      continue;
    }
    long kb = 0;
    if (inside && std::sscanf(line.c_str(), "AnonHugePages: %ld kB", &kb) == 1) return int64_t{kb} * 1024;
  }
  return -1;
}

}  // namespace

StatusOr<NumaHostBuffer> NumaHostBuffer::Create(int64_t bytes, int node, HostPages pages) {
  const bool huge = pages == HostPages::kTransparentHuge;
  const int64_t page = huge ? kHugePage : sysconf(_SC_PAGESIZE);
  NumaHostBuffer b;
  b.bytes_ = (std::max<int64_t>(bytes, 1) + page - 1) / page * page;
  b.map_bytes_ = b.bytes_ + (huge ? kHugePage : 0);  // room to align the start to 2 MiB
  void* m =
      mmap(nullptr, static_cast<size_t>(b.map_bytes_), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return OutOfMemory("mmap of " + std::to_string(b.map_bytes_) + " bytes failed");
  b.map_ = m;
  void* p = m;
  if (huge) {
    const auto a = reinterpret_cast<uintptr_t>(m);
    p = reinterpret_cast<void*>((a + kHugePage - 1) / kHugePage * kHugePage);
    madvise(p, static_cast<size_t>(b.bytes_), MADV_HUGEPAGE);  // refused: base pages, reported below
  }
  b.ptr_ = p;
  if (node >= 0) RETURN_IF_ERROR(BindToNumaNode(p, static_cast<size_t>(b.bytes_), node));
  std::memset(p, 0, static_cast<size_t>(b.bytes_));  // first touch: the pages are allocated now
  b.node_ = NumaNodeOfAddress(p);
  b.huge_bytes_ = AnonHugeBytesAt(p);
  CUDA_RETURN_IF_ERROR(
      cudaHostRegister(p, static_cast<size_t>(b.bytes_), cudaHostRegisterPortable | cudaHostRegisterMapped));
  b.registered_ = true;
  CUDA_RETURN_IF_ERROR(cudaHostGetDevicePointer(&b.dev_ptr_, p, 0));
  return b;
}

NumaHostBuffer& NumaHostBuffer::operator=(NumaHostBuffer&& o) noexcept {
  if (this != &o) {
    Reset();
    std::swap(map_, o.map_);
    std::swap(map_bytes_, o.map_bytes_);
    std::swap(huge_bytes_, o.huge_bytes_);
    std::swap(ptr_, o.ptr_);
    std::swap(dev_ptr_, o.dev_ptr_);
    std::swap(bytes_, o.bytes_);
    std::swap(node_, o.node_);
    std::swap(registered_, o.registered_);
  }
  return *this;
}

void NumaHostBuffer::Reset() {
  if (registered_) cudaHostUnregister(ptr_);
  if (map_) munmap(map_, static_cast<size_t>(map_bytes_));
  map_ = ptr_ = dev_ptr_ = nullptr;
  bytes_ = map_bytes_ = 0;
  huge_bytes_ = -1;
  node_ = -1;
  registered_ = false;
}

}  // namespace specsim::validate

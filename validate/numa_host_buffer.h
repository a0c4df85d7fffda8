// Mapped (zero-copy) host memory on a chosen NUMA node: mmap'd anonymous pages, bound to the node
// (host_placement.h BindToNumaNode) before they are touched, then registered with CUDA as portable
// and mapped (cudaHostRegister), so that every GPU can load and store them. `node` < 0 binds
// nothing (the pages land where the first touch puts them). numa_node() is where the first page
// actually is (get_mempolicy), -1 when the kernel does not say.
#pragma once

#include <cstdint>

#include "validate/status.h"

namespace specsim::validate {

// The pages asked for: the base page size, or transparent huge pages (the mapping aligned to 2 MiB
// and madvise(MADV_HUGEPAGE) before the first touch; whether the kernel gave them is
// huge_page_bytes(), read back from /proc/self/smaps).
enum class HostPages { kBase, kTransparentHuge };

class NumaHostBuffer {
 public:
  NumaHostBuffer() = default;
  // Errors: the mmap, the binding (kUnavailable, naming the errno: the caller reports and falls
  // back), the registration. A refused madvise is not an error: huge_page_bytes() is then 0.
  static StatusOr<NumaHostBuffer> Create(int64_t bytes, int node, HostPages pages = HostPages::kBase);
  NumaHostBuffer(NumaHostBuffer&& o) noexcept { *this = std::move(o); }
  NumaHostBuffer& operator=(NumaHostBuffer&& o) noexcept;
  NumaHostBuffer(const NumaHostBuffer&) = delete;
  NumaHostBuffer& operator=(const NumaHostBuffer&) = delete;
  ~NumaHostBuffer() { Reset(); }
  void Reset();
  void* data() const { return ptr_; }
  void* device_ptr() const { return dev_ptr_; }
  int64_t bytes() const { return bytes_; }
  int numa_node() const { return node_; }
  // Bytes of the buffer backed by huge pages (AnonHugePages of its mapping), -1 when not known.
  int64_t huge_page_bytes() const { return huge_bytes_; }

 private:
  void* map_ = nullptr;  // the mapping (ptr_ is inside it, aligned, for huge pages)
  int64_t map_bytes_ = 0;
  int64_t huge_bytes_ = -1;
  void* ptr_ = nullptr;
  void* dev_ptr_ = nullptr;
  int64_t bytes_ = 0;  // the mapping's length (whole pages)
  int node_ = -1;
  bool registered_ = false;
};

}  // namespace specsim::validate

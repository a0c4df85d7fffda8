// Mapped (zero-copy) host memory on a chosen NUMA node: mmap'd anonymous pages, bound to the node
// (host_placement.h BindToNumaNode) before they are touched, then registered with CUDA as portable
// and mapped (cudaHostRegister), so that every GPU can load and store them. `node` < 0 binds
// nothing (the pages land where the first touch puts them). numa_node() is where the first page
// actually is (get_mempolicy), -1 when the kernel does not say.
#pragma once

#include <cstdint>

#include "validate/status.h"

namespace specsim::validate {

class NumaHostBuffer {
 public:
  NumaHostBuffer() = default;
  // Errors: the mmap, the binding (kUnavailable, naming the errno: the caller reports and falls
  // back), the registration.
  static StatusOr<NumaHostBuffer> Create(int64_t bytes, int node);
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

 private:
  void* ptr_ = nullptr;
  void* dev_ptr_ = nullptr;
  int64_t bytes_ = 0;  // the mapping's length (whole pages)
  int node_ = -1;
  bool registered_ = false;
};

}  // namespace specsim::validate

#include "validate/numa_host_buffer.h"

#include <cuda_runtime.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <utility>

#include "validate/cuda_util.h"
#include "validate/host_placement.h"

namespace specsim::validate {

StatusOr<NumaHostBuffer> NumaHostBuffer::Create(int64_t bytes, int node) {
  const int64_t page = sysconf(_SC_PAGESIZE);
  NumaHostBuffer b;
  b.bytes_ = (std::max<int64_t>(bytes, 1) + page - 1) / page * page;
  void* p = mmap(nullptr, static_cast<size_t>(b.bytes_), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return OutOfMemory("mmap of " + std::to_string(b.bytes_) + " bytes failed");
  b.ptr_ = p;
  if (node >= 0) RETURN_IF_ERROR(BindToNumaNode(p, static_cast<size_t>(b.bytes_), node));
  std::memset(p, 0, static_cast<size_t>(b.bytes_));  // first touch: the pages are allocated now
  b.node_ = NumaNodeOfAddress(p);
  CUDA_RETURN_IF_ERROR(
      cudaHostRegister(p, static_cast<size_t>(b.bytes_), cudaHostRegisterPortable | cudaHostRegisterMapped));
  b.registered_ = true;
  CUDA_RETURN_IF_ERROR(cudaHostGetDevicePointer(&b.dev_ptr_, p, 0));
  return b;
}

NumaHostBuffer& NumaHostBuffer::operator=(NumaHostBuffer&& o) noexcept {
  if (this != &o) {
    Reset();
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
  if (ptr_) munmap(ptr_, static_cast<size_t>(bytes_));
  ptr_ = dev_ptr_ = nullptr;
  bytes_ = 0;
  node_ = -1;
  registered_ = false;
}

}  // namespace specsim::validate

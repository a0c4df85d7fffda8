// Pacing kernels: %globaltimer stamps around a captured collective, and a timed spin.
#include "validate/global_timer.cuh"
#include "validate/kernels.h"

namespace specsim::validate {
namespace {

__global__ void StampKernel(uint64_t* stamps, unsigned int* counter, int which, int capacity) {
  const unsigned int c = *counter;
  if (c < static_cast<unsigned int>(capacity)) stamps[2 * static_cast<uint64_t>(c) + which] = GlobalTimerNs();
  if (which == 1) *counter = c + 1;
}

__global__ void SpinKernel(uint64_t ns) {
  const uint64_t start = GlobalTimerNs();
  while (GlobalTimerNs() - start < ns) {
  }
}

}  // namespace

cudaError_t LaunchStampKernel(uint64_t* stamps, unsigned int* counter, int which, int capacity, cudaStream_t stream) {
  StampKernel<<<1, 1, 0, stream>>>(stamps, counter, which, capacity);
  return cudaGetLastError();
}

cudaError_t LaunchSpinKernel(uint64_t ns, cudaStream_t stream) {
  SpinKernel<<<1, 1, 0, stream>>>(ns);
  return cudaGetLastError();
}

}  // namespace specsim::validate

// The GPU's %globaltimer (nanoseconds, one clock for every GPU of the box), for device code.
#pragma once

#include <cstdint>

namespace specsim::validate {

__device__ __forceinline__ uint64_t GlobalTimerNs() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

}  // namespace specsim::validate

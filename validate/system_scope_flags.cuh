// Barrier flags at system scope, for device code: release stores and acquire loads (what vLLM's
// st_flag_release / ld_flag_acquire issue), so that every flag access reaches memory every GPU and
// the host see, mapped host memory included.
#pragma once

#include <cstdint>

namespace specsim::validate {

__device__ __forceinline__ void StoreRelease(uint32_t* p, uint32_t v) {
  asm volatile("st.release.sys.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

__device__ __forceinline__ uint32_t LoadAcquire(const uint32_t* p) {
  uint32_t v;
  asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

}  // namespace specsim::validate

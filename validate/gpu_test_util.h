// What the GPU tests share: how many CUDA GPUs this machine has (0 when the runtime finds none or
// fails), and a skip for tests that need more.
#pragma once

#include <cuda_runtime.h>
#include <gtest/gtest.h>

namespace specsim::validate {

inline int GpuCount() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky error of a machine without a driver
    return 0;
  }
  return n;
}

}  // namespace specsim::validate

// Skips the test (GTEST_SKIP) on a machine with fewer than k CUDA GPUs.
#define REQUIRE_GPUS(k)                                                                              \
  do {                                                                                               \
    if (::specsim::validate::GpuCount() < (k)) GTEST_SKIP() << "fewer than " << (k) << " CUDA GPUs"; \
  } while (0)

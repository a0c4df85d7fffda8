// Synthetic trace items for sim/calib's tests (calib_test.cc, compare_test.cc): pinned host copies
// and bf16 GEMMs named by their position, "measured" by the caller; and the 1x H200 config.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "sim/io/hardware_loader.h"
#include "sim/net/topology.h"
#include "specsim/trace.pb.h"

namespace specsim::calib::testing {

inline net::Topology H200() {
  auto t = io::LoadHardwareFile("configs/hardware/h200-1x.textproto");
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return *t;
}

inline trace::Item* AddCopy(trace::Trace* t, trace::Kind kind, trace::Direction dir, int64_t bytes, int streams = 1) {
  trace::Item* it = t->add_items();
  it->set_suite(trace::SUITE_PCIE);
  it->set_kind(kind);
  it->set_name("copy/" + std::to_string(t->items_size()));
  trace::TransferParams* p = it->mutable_transfer();
  p->set_bytes(bytes);
  p->set_direction(dir);
  p->set_host_memory(trace::HOST_PINNED);
  p->set_streams(streams);
  return it;
}

// A single-stream H2D or D2H copy.
inline trace::Item* AddCopy(trace::Trace* t, trace::Direction dir, int64_t bytes) {
  return AddCopy(t, dir == trace::DIRECTION_H2D ? trace::KIND_H2D_COPY : trace::KIND_D2H_COPY, dir, bytes);
}

inline trace::Item* AddGemm(trace::Trace* t, int64_t m, int64_t n, int64_t k) {
  trace::Item* it = t->add_items();
  it->set_suite(trace::SUITE_KERNELS);
  it->set_kind(trace::KIND_GEMM);
  it->set_name("gemm/" + std::to_string(t->items_size()));
  trace::GemmParams* g = it->mutable_gemm();
  g->set_m(m);
  g->set_n(n);
  g->set_k(k);
  g->set_dtype(trace::DTYPE_BF16);
  return it;
}

}  // namespace specsim::calib::testing

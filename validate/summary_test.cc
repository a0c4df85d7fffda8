#include "validate/summary.h"

#include <gtest/gtest.h>

namespace specsim::validate {
namespace {

TEST(Summary, ListsKeyFigures) {
  trace::Trace t;
  auto* g = t.mutable_environment()->add_gpus();
  g->set_index(0);
  g->set_name("NVIDIA H200");
  auto* a = t.add_items();
  a->set_kind(trace::KIND_H2D_COPY);
  a->set_name("pcie/h2d/pinned/gpu0/256MiB");
  a->mutable_transfer()->set_bytes(256 << 20);
  a->mutable_transfer()->set_gpu(0);
  a->set_gbps(55.5);
  auto* b = t.add_items();
  b->set_kind(trace::KIND_H2D_COPY);
  b->set_name("pcie/h2d/pinned/gpu0/4B");
  b->mutable_transfer()->set_bytes(4);
  b->mutable_transfer()->set_gpu(0);
  b->mutable_stats()->set_median_us(2.25);
  auto* d = t.add_items();
  d->set_kind(trace::KIND_DECODE_STEP);
  d->set_name("decode/llama-3.1-8b/tp1/plain/graph/b1");
  d->set_tokens_per_s(150);
  auto* m = t.add_items();
  m->set_kind(trace::KIND_HOST_COPIES_MULTI);
  m->set_name("pcie/multi/h2d/all/64MiB");
  m->mutable_transfer()->set_bytes(64 << 20);
  m->mutable_transfer()->set_gpu(-1);
  m->set_gbps(101.5);
  auto* c = m->mutable_transfer()->add_copies();
  c->set_gpu(1);
  c->set_direction(trace::DIRECTION_H2D);
  c->set_bytes(1000000);
  c->set_median_us(20);
  auto* k = t.add_items();
  k->set_kind(trace::KIND_COLLECTIVE_SKEW);
  k->set_name("pacing/skew/allreduce/n2/64KiB/exp10us/sync");
  k->mutable_stats()->set_median_us(21.5);
  k->add_rank_timing()->set_wait_mean_us(4.5);
  k->add_rank_timing()->set_wait_mean_us(5.25);
  auto* n = t.add_notes();
  n->set_severity(trace::Note::ERROR);
  n->set_suite("collectives");
  n->set_message("hung");
  std::string s = SummaryTable(t);
  EXPECT_NE(s.find("NVIDIA H200"), std::string::npos);
  EXPECT_NE(s.find("55.5 GB/s"), std::string::npos);
  EXPECT_NE(s.find("2.25 us median"), std::string::npos);
  EXPECT_NE(s.find("150 tok/s"), std::string::npos);
  EXPECT_NE(s.find("1 errors"), std::string::npos);
  EXPECT_NE(s.find("multi/h2d/all/64MiB: 101.5 GB/s total; gpu1 h2d 50.0 GB/s"), std::string::npos);
  EXPECT_NE(s.find("skew/allreduce/n2/64KiB/exp10us/sync: 21.5 us, wait 4.5 5.2 us"), std::string::npos) << s;
}

}  // namespace
}  // namespace specsim::validate

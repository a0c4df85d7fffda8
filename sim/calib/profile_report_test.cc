#include "sim/calib/profile_report.h"

#include <gtest/gtest.h>

#include <vector>

namespace specsim::calib {
namespace {

ItemResult Result(int index, const std::string& name, double error) {
  ItemResult r;
  r.index = index;
  r.name = name;
  r.simulated = true;
  r.error = error;
  r.predicted_us = 10;
  return r;
}

// An NCCL call timed on every rank: transfer = the item's median (the last rank's kernel); the
// ranks' waits for the last one, and their share of each rank's kernel time, averaged over ranks:
// rank 0 waited 30 us of 30 + 10, rank 1 none, so wait_mean = 15 us and wait_share = (0.75 + 0) / 2.
// The largest disagreements come first with what each prediction rests on.
TEST(ProfileReport, NcclWaitsAndDisagreements) {
  trace::Trace t;
  trace::Item* nccl = t.add_items();
  nccl->set_name("profile/nccl/allreduce/graph/n2/8KiB");
  nccl->set_kind(trace::KIND_COLLECTIVE);
  nccl->mutable_stats()->set_median_us(10);
  nccl->mutable_collective()->set_bytes(8192);
  nccl->mutable_collective()->set_nccl_chosen_algo("RING");
  nccl->mutable_collective()->set_nccl_chosen_proto("LL");
  nccl->mutable_collective()->set_nccl_chosen_channels(2);
  nccl->add_rank_timing()->set_wait_mean_us(30);
  nccl->add_rank_timing()->set_wait_mean_us(0);
  trace::Item* gemm = t.add_items();
  gemm->set_name("profile/gemm/qkv");
  gemm->set_kind(trace::KIND_GEMM);
  gemm->mutable_gemm()->set_m(8);
  gemm->mutable_gemm()->set_n(6144);
  gemm->mutable_gemm()->set_k(4096);
  const std::vector<ItemResult> items = {Result(0, nccl->name(), 0.05), Result(1, gemm->name(), -0.2)};
  const ProfileReport r = BuildProfileReport(t, net::Topology{}, CalibParams{}, items);
  ASSERT_FALSE(r.empty());
  EXPECT_TRUE(r.passes.empty());
  ASSERT_EQ(r.collectives.size(), 1u);
  EXPECT_DOUBLE_EQ(r.collectives[0].transfer_us, 10);
  EXPECT_DOUBLE_EQ(r.collectives[0].predicted_us, 10);
  EXPECT_DOUBLE_EQ(r.collectives[0].wait_mean_us, 15);
  EXPECT_DOUBLE_EQ(r.collectives[0].wait_share, 0.375);
  ASSERT_EQ(r.disagreements.size(), 2u);
  EXPECT_EQ(r.disagreements[0].item, gemm->name());
  EXPECT_EQ(r.disagreements[0].cause, "GEMM cost of library '' at m=8 n=6144 k=4096");
  EXPECT_EQ(r.disagreements[1].cause, "NCCL's transfer model: 8192 bytes, RING/LL, 2 channels");
}

// A trace with neither profile passes nor per-rank NCCL timings (specsim-validate's) has no report.
TEST(ProfileReport, EmptyWithoutProfileItems) {
  trace::Trace t;
  t.add_items()->set_kind(trace::KIND_GEMM);
  EXPECT_TRUE(BuildProfileReport(t, net::Topology{}, CalibParams{}, {Result(0, "gemm", 0.1)}).empty());
}

}  // namespace
}  // namespace specsim::calib

#include "validate/nccl_log.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

namespace specsim::validate {
namespace {

TEST(ParseNcclTuningLine, RealLines) {
  NcclTuningLine l;
  ASSERT_TRUE(ParseNcclTuningLine(
      "vm:2296:2532 [0] NCCL INFO AllReduce: 8388608 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..23}", &l));
  EXPECT_EQ(l.op, trace::ALLREDUCE);
  EXPECT_EQ(l.bytes, 8388608);
  EXPECT_EQ(l.pick.algo, "RING");
  EXPECT_EQ(l.pick.proto, "LL");
  EXPECT_EQ(l.pick.channels, 24);

  ASSERT_TRUE(ParseNcclTuningLine(
      "[2026-12-01 10:00:00] h200-box:77:81 [1] NCCL INFO ReduceScatter: 512 Bytes -> Algo PAT proto SIMPLE "
      "channel{Lo..Hi}={3..3}\r",
      &l));
  EXPECT_EQ(l.op, trace::REDUCESCATTER);
  EXPECT_EQ(l.bytes, 512);
  EXPECT_EQ(l.pick.algo, "PAT");
  EXPECT_EQ(l.pick.proto, "SIMPLE");
  EXPECT_EQ(l.pick.channels, 1);

  // Right-aligned op name, no channel range (older releases).
  ASSERT_TRUE(ParseNcclTuningLine("host:1:2 [0] NCCL INFO  AllGather: 4096 Bytes -> Algo TREE proto LL128", &l));
  EXPECT_EQ(l.op, trace::ALLGATHER);
  EXPECT_EQ(l.bytes, 4096);
  EXPECT_EQ(l.pick.proto, "LL128");
  EXPECT_EQ(l.pick.channels, 0);
}

TEST(ParseNcclTuningLine, RejectsEverythingElse) {
  NcclTuningLine l;
  for (const char* bad : {
           "",
           "vm:2296:2296 [0] NCCL INFO NCCL version 2.28.3+cuda13.0",
           "vm:2296:2532 [0] NCCL INFO Broadcast: 1024 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..1}",
           "vm:2296:2532 [0] NCCL INFO SendRecv: 1024 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..1}",
           "vm:2296:2532 [0] NCCL INFO AllReduce: Bytes -> Algo RING proto LL channel{Lo..Hi}={0..23}",
           "vm:2296:2532 [0] NCCL INFO AllReduce 1024 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..23}",
           "vm:2296:2532 [0] NCCL INFO AllReduce: 1024 Bytes -> Algo RING",
           "vm:2296:2532 [0] NCCL INFO AllReduce: 1024 Bytes -> Algo RING proto LL channel{Lo..Hi}={5..2}",
           "vm:2296:2532 [0] NCCL INFO AllReduce: 1024 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..",
           "vm:2296:2532 [0] NCCL INFO NotAllReduce: 1024 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..1}",
           "vm:2296:2532 [0] NCCL INFO xAllReduce: 1024 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..1}",
           "vm:2296:2532 [0] NCCL INFO AllReduce: 99999999999999999999999 Bytes -> Algo RING proto LL",
           "garbage ### Bytes -> Algo",
       }) {
    EXPECT_FALSE(ParseNcclTuningLine(bad, &l)) << bad;
  }
}

constexpr const char* kLog = R"(vm:2296:2296 [0] NCCL INFO Bootstrap: Using eth0:10.0.0.2<0>
vm:2296:2296 [0] NCCL INFO NCCL version 2.28.3+cuda13.0
vm:2296:2532 [0] NCCL INFO Channel 00/24 : 0 1
vm:2296:2532 [0] NCCL INFO AllReduce: 1024 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}
vm:2296:2532 [0] NCCL INFO AllReduce: 1024 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}
vm:2296:2532 [0] NCCL INFO AllReduce: 1024 Bytes -> Algo TREE proto LL channel{Lo..Hi}={0..0}
vm:2296:2532 [0] NCCL INFO AllGather: 1024 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..15}
vm:2296:2533 [1] NCCL WARN Cuda failure 'out of memory'
vm:2296:2532 [0] NCCL INFO ReduceScatter: 2048 Bytes -> Algo RING proto LL128 channel{Lo..Hi}={0..7}
ragged line without newline)";

TEST(NcclPickTable, MostFrequentPickWins) {
  NcclPickTable t;
  EXPECT_EQ(t.AddText(kLog), 5);
  EXPECT_EQ(t.lines(), 5);
  EXPECT_EQ(t.size(), 3u);
  const NcclPick* p = t.Find(trace::ALLREDUCE, 1024);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->algo, "RING");  // 2 RING against 1 TREE
  EXPECT_EQ(p->channels, 1);
  EXPECT_EQ(t.Find(trace::ALLGATHER, 1024)->channels, 16);
  EXPECT_EQ(t.Find(trace::REDUCESCATTER, 2048)->proto, "LL128");
  EXPECT_EQ(t.Find(trace::ALLGATHER, 2048), nullptr);
  EXPECT_EQ(t.Find(trace::ALLREDUCE, 4096), nullptr);
}

TEST(NcclPickTable, SeveralRanksAndFilesAddUp) {
  // A second process's log (NCCL_DEBUG_FILE=x.%p): its rank-0 lines out-vote the first file's pick.
  const std::string other =
      "vm:3001:3010 [1] NCCL INFO AllReduce: 1024 Bytes -> Algo TREE proto LL channel{Lo..Hi}={0..0}\n"
      "vm:3001:3010 [1] NCCL INFO AllReduce: 1024 Bytes -> Algo TREE proto LL channel{Lo..Hi}={0..0}\n";
  const std::string a = testing::TempDir() + "/nccl_a.log", b = testing::TempDir() + "/nccl_b.log";
  std::ofstream(a) << kLog;
  std::ofstream(b) << other;
  NcclPickTable t;
  ASSERT_TRUE(t.AddFile(a).ok());
  ASSERT_TRUE(t.AddFile(b).ok());
  EXPECT_EQ(t.lines(), 7);
  EXPECT_EQ(t.Find(trace::ALLREDUCE, 1024)->algo, "TREE");  // 3 TREE against 2 RING
  std::remove(a.c_str());
  std::remove(b.c_str());
  Status missing = t.AddFile(testing::TempDir() + "/no-such-nccl.log");
  EXPECT_EQ(missing.code(), StatusCode::kNotFound);
}

TEST(NcclPickTable, TieKeepsTheFirstSeen) {
  NcclPickTable t;
  t.AddText(
      "h:1:1 [0] NCCL INFO AllReduce: 64 Bytes -> Algo TREE proto LL channel{Lo..Hi}={0..1}\n"
      "h:1:1 [0] NCCL INFO AllReduce: 64 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..1}\n");
  EXPECT_EQ(t.Find(trace::ALLREDUCE, 64)->algo, "TREE");
}

TEST(NcclLoggedBytes, CountArgumentTimesDtype) {
  trace::CollectiveParams p;
  p.set_dtype(trace::DTYPE_BF16);
  p.set_nranks(2);
  p.set_op(trace::ALLREDUCE);
  p.set_count(4096);
  EXPECT_EQ(NcclLoggedBytes(p), 8192);
  p.set_op(trace::ALLGATHER);  // sendcount
  p.set_count(512);
  EXPECT_EQ(NcclLoggedBytes(p), 1024);
  p.set_op(trace::REDUCESCATTER);  // recvcount = send count / nranks
  p.set_count(1024);
  EXPECT_EQ(NcclLoggedBytes(p), 1024);
  p.set_count(1025);
  EXPECT_EQ(NcclLoggedBytes(p), 0);
  p.set_dtype(trace::DTYPE_FP32);
  p.set_op(trace::ALLREDUCE);
  p.set_count(10);
  EXPECT_EQ(NcclLoggedBytes(p), 40);
}

TEST(AnnotateNcclPicks, SetsEveryNcclCollective) {
  NcclPickTable table;
  table.AddText(
      "h:1:1 [0] NCCL INFO AllReduce: 65536 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..7}\n"
      "h:1:1 [0] NCCL INFO AllGather: 512 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..1}\n"
      "h:1:1 [0] NCCL INFO AllReduce: 8192 Bytes -> Algo TREE proto LL128 channel{Lo..Hi}={2..5}\n");
  trace::Trace t;
  auto coll = [](trace::CollectiveParams* p, trace::CollectiveOp op, int64_t bytes, int64_t count) {
    p->set_op(op);
    p->set_implementation(trace::IMPL_NCCL);
    p->set_bytes(bytes);
    p->set_count(count);
    p->set_dtype(trace::DTYPE_BF16);
    p->set_nranks(2);
  };
  auto* a = t.add_items();  // allreduce 64 KiB: found
  a->set_kind(trace::KIND_COLLECTIVE);
  coll(a->mutable_collective(), trace::ALLREDUCE, 65536, 32768);
  auto* g = t.add_items();  // all-gather of size 1 KiB over 2 ranks: NCCL logs sendcount 256 * 2 B
  g->set_kind(trace::KIND_COLLECTIVE);
  coll(g->mutable_collective(), trace::ALLGATHER, 1024, 256);
  auto* custom = t.add_items();  // custom kernel: not NCCL, untouched
  custom->set_kind(trace::KIND_CUSTOM_ALLREDUCE);
  coll(custom->mutable_collective(), trace::ALLREDUCE, 65536, 32768);
  custom->mutable_collective()->set_implementation(trace::IMPL_ONE_SHOT);
  auto* skew = t.add_items();
  skew->set_kind(trace::KIND_COLLECTIVE_SKEW);
  coll(skew->mutable_skew()->mutable_collective(), trace::ALLREDUCE, 65536, 32768);
  auto* loop = t.add_items();
  loop->set_kind(trace::KIND_LAYER_LOOP);
  loop->mutable_layer_loop()->set_allreduce_bytes(8192);
  coll(loop->mutable_layer_loop()->mutable_collective(), trace::ALLREDUCE, 8192, 4096);
  auto* gemm_only = t.add_items();  // no allreduce: not counted
  gemm_only->set_kind(trace::KIND_LAYER_LOOP);
  gemm_only->mutable_layer_loop()->set_gemm(true);
  auto* missing = t.add_items();
  missing->set_kind(trace::KIND_COLLECTIVE);
  missing->set_name("collectives/nccl/reducescatter/eager/n2/1MiB");
  coll(missing->mutable_collective(), trace::REDUCESCATTER, 1 << 20, 1 << 19);

  const NcclAnnotation r = AnnotateNcclPicks(table, &t);
  EXPECT_EQ(r.annotated, 4);
  EXPECT_EQ(r.not_found, 1);
  ASSERT_EQ(r.missing.size(), 1u);
  EXPECT_EQ(r.missing[0], "collectives/nccl/reducescatter/eager/n2/1MiB");
  EXPECT_EQ(t.items(0).collective().nccl_chosen_algo(), "RING");
  EXPECT_EQ(t.items(0).collective().nccl_chosen_proto(), "LL");
  EXPECT_EQ(t.items(0).collective().nccl_chosen_channels(), 8);
  EXPECT_EQ(t.items(1).collective().nccl_chosen_proto(), "SIMPLE");
  EXPECT_EQ(t.items(2).collective().nccl_chosen_algo(), "");
  EXPECT_EQ(t.items(3).skew().collective().nccl_chosen_channels(), 8);
  EXPECT_EQ(t.items(4).layer_loop().collective().nccl_chosen_algo(), "TREE");
  EXPECT_EQ(t.items(4).layer_loop().collective().nccl_chosen_channels(), 4);
  EXPECT_EQ(t.items(6).collective().nccl_chosen_algo(), "");
}

}  // namespace
}  // namespace specsim::validate

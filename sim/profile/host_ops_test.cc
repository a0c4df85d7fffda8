#include "sim/profile/host_ops.h"

#include <gtest/gtest.h>

#include <string>

#include "sim/profile/profile_import.h"

namespace specsim::profile {
namespace {

const std::string kFixture = std::string(SPECSIM_SOURCE_DIR) + "/sim/profile/testdata/eager_passes.kineto.json";

// The hand-written trace: a decode pass [1000, 1200] us and a verify pass [2000, 2300] us, each
// rms_norm, matmul (with its aten::mm inside), add, then the read-back (aten::to, synchronizing).
TEST(HostOpsTest, TopLevelOperatorsCountNestedCallsOnce) {
  auto t = ReadKinetoTrace(kFixture);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  const HostCallIndex index(*t);
  const EagerPassOps pass = index.PassOps(1, 1000000, 1200000, 1150000);
  ASSERT_EQ(pass.ops.size(), 3u);
  EXPECT_EQ(pass.ops[0].name, "aten::rms_norm");
  EXPECT_EQ(pass.ops[1].name, "aten::matmul");  // aten::mm inside it is not an operator of its own
  EXPECT_EQ(pass.ops[2].name, "aten::add");
  // Each op's host cost: to the next top-level op's start.
  EXPECT_EQ(pass.ops[0].host_ns, 30000);
  EXPECT_EQ(pass.ops[1].host_ns, 40000);
  EXPECT_EQ(pass.ops[2].host_ns, 40000);  // the last before the read-back: to its start
  // Kernels by the launches inside each op (the GEMM's through the nested aten::mm).
  EXPECT_EQ(pass.ops[1].kernels, 1);
  EXPECT_EQ(pass.ops[1].device_ns, 14000);
  // The read-back: the range's end (1200) - max(its start 1120, the last kernel's end 1150).
  ASSERT_TRUE(pass.has_sync);
  EXPECT_EQ(pass.sync.name, "sync");
  EXPECT_EQ(pass.sync.host_ns, 50000);
  EXPECT_EQ(pass.tokens, 1);
  EXPECT_EQ(pass.head_ns, 10000);
}

TEST(HostOpsTest, ImportWritesHostOpAndLoopItemsPerKind) {
  auto t = ReadKinetoTrace(kFixture);
  ASSERT_TRUE(t.ok());
  auto r = ImportProfile({*t});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // The pytorch words give the kinds; nccl:all_reduce is ignored, MyStep is listed as unmatched.
  ASSERT_EQ(r->passes.size(), 2u);
  for (const PassGroup& g : r->passes) {
    EXPECT_FALSE(g.graph);
    EXPECT_EQ(g.kind, g.phase == "verify_pass" ? "verify" : "decode") << g.phase;
    EXPECT_NE(g.rule.find("pytorch #"), std::string::npos) << g.rule;
  }
  EXPECT_EQ(r->unmatched_ranges.size(), 1u);
  EXPECT_EQ(r->unmatched_ranges.count("MyStep"), 1u);
  ASSERT_EQ(r->host_loops.size(), 2u);
  const HostLoopGroup& decode = r->host_loops[0].kind == "decode" ? r->host_loops[0] : r->host_loops[1];
  EXPECT_EQ(decode.tokens, 1);
  EXPECT_EQ(decode.ops, (std::vector<std::string>{"aten::rms_norm", "aten::matmul", "aten::add", "sync"}));
  int op_items = 0, loop_items = 0;
  for (const trace::Item& it : r->trace.items()) {
    if (it.kind() == trace::KIND_HOST_OP) {
      ++op_items;
      if (it.name() == "profile/host_op/verify/aten::matmul/q4/rank0") {
        EXPECT_EQ(it.host_op().op_class(), "library");
        EXPECT_EQ(it.host_op().tokens(), 4);
        EXPECT_DOUBLE_EQ(it.host_op().host_quantiles_us(50), 50.0);
      }
    }
    if (it.kind() == trace::KIND_HOST_LOOP) ++loop_items;
  }
  EXPECT_EQ(op_items, 8);  // 3 ops + sync, per kind
  EXPECT_EQ(loop_items, 2);
}

}  // namespace
}  // namespace specsim::profile

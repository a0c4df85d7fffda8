#include "sim/profile/profile_import.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "sim/io/field_ranges.h"

namespace specsim::profile {
namespace {

// Two ranks, each: a "verify" range launching a GEMM eagerly and an allreduce from a graph
// replay, then a "draft" range with one kernel. Rank 1 reaches the allreduce 30 us after rank 0.
KinetoTrace Rank(int rank, int64_t allreduce_start_ns, int64_t allreduce_ns) {
  KinetoTrace t;
  t.path = "rank" + std::to_string(rank) + ".json";
  t.rank = rank;
  t.world_size = 2;
  t.ranges = {
      {"specsim.run/spec.graph/n4", 0, 1000000, 1, 1}, {"verify", 1000, 200000, 1, 2}, {"draft", 300000, 50000, 1, 3}};
  t.launches = {{"cudaLaunchKernel", 2000, 5000, 1, 10},
                {"cudaGraphLaunch", 10000, 8000, 1, 11},
                {"cudaLaunchKernel", 301000, 5000, 1, 12}};
  KinetoKernel gemm;
  gemm.name = "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_NNT";
  gemm.start_ns = 20000;
  gemm.duration_ns = 12000;
  gemm.correlation = 10;
  gemm.device = rank;
  KinetoKernel ar;
  ar.name = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
  ar.start_ns = allreduce_start_ns;
  ar.duration_ns = allreduce_ns;
  ar.correlation = 11;
  ar.device = rank;
  ar.grid_x = 2;
  ar.collective = "allreduce";
  ar.in_elements = ar.out_elements = 4096;
  ar.dtype = "BFloat16";
  KinetoKernel norm;
  norm.name = "void flashinfer::norm::RMSNormKernel<8, __nv_bfloat16>";
  norm.start_ns = 310000;
  norm.duration_ns = 3000;
  norm.correlation = 12;
  KinetoKernel orphan = norm;  // no launch in the trace (e.g. the window cut its launch off)
  orphan.correlation = 99;
  orphan.start_ns = 400000;
  t.kernels = {gemm, ar, norm, orphan};
  return t;
}

TEST(ProfileImportTest, PassesByPhaseAndCollectivesWithEachRanksWait) {
  // Rank 0 arrives at 40 us and its kernel lasts until 40 + 38 = 78 us; rank 1 arrives at 70 us
  // and lasts 8 us: the transfer is rank 1's 8 us, rank 0 waited 30 us.
  auto r = ImportProfile({Rank(1, 70000, 8000), Rank(0, 40000, 38000)});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->ranks, 2);
  EXPECT_EQ(r->kernels, 8);
  EXPECT_EQ(r->kernels_in_passes, 6);
  EXPECT_EQ(r->kernels_without_launch, 2);
  ASSERT_EQ(r->passes.size(), 2u);  // draft, verify (each over both ranks)
  const PassGroup* verify = r->passes[0].phase == "verify" ? &r->passes[0] : &r->passes[1];
  EXPECT_EQ(verify->run, "spec.graph/n4");
  EXPECT_TRUE(verify->graph);  // one of its kernels came from a graph replay
  EXPECT_EQ(verify->kernels, 2);
  EXPECT_EQ(verify->passes, 2);
  EXPECT_DOUBLE_EQ(verify->busy_us.at("gemm"), 12);
  EXPECT_DOUBLE_EQ(verify->busy_us.at("nccl"), 0.5 * (38 + 8));  // median of the two ranks
  // GPU span: from the GEMM's start (20 us) to the allreduce's end (78 us on both ranks).
  EXPECT_DOUBLE_EQ(verify->gpu_span_us, 58);
  // Idle: GEMM 20..32 us, allreduce from 40 (rank 0) or 70 (rank 1) to 78: 8 or 38 us idle.
  EXPECT_DOUBLE_EQ(verify->gpu_idle_us, 0.5 * (8 + 38));
  EXPECT_DOUBLE_EQ(verify->host_span_us, 200);
  EXPECT_EQ(verify->Key(), "verify [spec.graph/n4] graph, 2 kernels");

  ASSERT_EQ(r->collectives.size(), 1u);
  const CollectiveGroup& c = r->collectives[0];
  EXPECT_EQ(c.name, "profile/nccl/allreduce/graph/n2/8KiB");
  EXPECT_EQ(c.bytes, 8192);
  EXPECT_DOUBLE_EQ(c.transfer_us, 8);
  EXPECT_DOUBLE_EQ(c.wait_us_max, 30);
  EXPECT_DOUBLE_EQ(c.wait_us_mean, 15);
  EXPECT_EQ(c.phases.at("verify"), 1);

  ASSERT_EQ(r->trace.items_size(), 1);
  const trace::Item& it = r->trace.items(0);
  EXPECT_EQ(it.kind(), trace::KIND_COLLECTIVE);
  EXPECT_EQ(it.collective().op(), trace::ALLREDUCE);
  EXPECT_EQ(it.collective().bytes(), 8192);
  EXPECT_EQ(it.collective().count(), 4096);
  EXPECT_EQ(it.collective().dtype(), trace::DTYPE_BF16);
  EXPECT_TRUE(it.collective().cuda_graph());
  EXPECT_TRUE(it.collective().kernel_time_only());
  EXPECT_EQ(it.collective().nccl_chosen_algo(), "RING");
  EXPECT_EQ(it.collective().nccl_chosen_proto(), "LL");
  EXPECT_EQ(it.collective().nccl_chosen_channels(), 2);
  EXPECT_DOUBLE_EQ(it.stats().median_us(), 8);
  ASSERT_EQ(it.rank_timing_size(), 2);
  EXPECT_FLOAT_EQ(it.rank_timing(0).wait_us(0), 30);
  EXPECT_FLOAT_EQ(it.rank_timing(1).wait_us(0), 0);
  EXPECT_FLOAT_EQ(it.rank_timing(0).duration_us(0), 38);
  EXPECT_EQ(r->trace.environment().gpus_size(), 2);
}

// A kernel launched inside an outer phase range after many inner ranges have ended belongs to the
// outer one, however many siblings came before it.
TEST(ProfileImportTest, AKernelAfterManyInnerRangesBelongsToTheEnclosingOne) {
  KinetoTrace t;
  t.path = "one.json";
  t.ranges.push_back({"verify", 0, 10000000, 1, 1});
  for (int i = 0; i < 200; ++i) t.ranges.push_back({"draft", 1000 + 10000 * i, 5000, 1, 2 + i});
  t.launches = {{"cudaLaunchKernel", 5000000, 1000, 1, 7}, {"cudaLaunchKernel", 1500, 100, 1, 8}};
  KinetoKernel late, early;
  late.name = early.name = "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_NNT";
  late.correlation = 7;
  late.start_ns = 5001000;
  late.duration_ns = 10000;
  early.correlation = 8;
  early.start_ns = 2000;
  early.duration_ns = 1000;
  t.kernels = {early, late};
  auto r = ImportProfile({t});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->kernels_in_passes, 2);
  std::map<std::string, int> passes;
  for (const PassGroup& g : r->passes) passes[g.phase] += g.passes;
  EXPECT_EQ(passes["verify"], 1);
  EXPECT_EQ(passes["draft"], 1);
}

TEST(ProfileImportTest, RefusesMissingRanksAndRanksThatRanOtherCollectives) {
  auto missing = ImportProfile({Rank(0, 1, 1)});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("missing rank(s) 1 of world size 2"), std::string::npos)
      << missing.status().message();
  auto twice = ImportProfile({Rank(0, 1, 1), Rank(0, 1, 1)});
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(twice.status().message().find("rank(s) 0 given more than once"), std::string::npos);
  KinetoTrace other = Rank(1, 1, 1);
  other.kernels[1].in_elements = 8192;
  auto differ = ImportProfile({Rank(0, 1, 1), other});
  ASSERT_FALSE(differ.ok());
  EXPECT_NE(differ.status().message().find("is not rank 0's"), std::string::npos) << differ.status().message();
  KinetoTrace fewer = Rank(1, 1, 1);
  fewer.kernels.erase(fewer.kernels.begin() + 1);
  auto cut = ImportProfile({Rank(0, 1, 1), fewer});
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.status().message().find("0 NCCL kernels, but rank0.json has 1"), std::string::npos)
      << cut.status().message();
}

TEST(ProfileImportTest, AHugeWorldSizeIsABoundedMessage) {
  // The campaign's world_size of 1e9 listed every missing rank (4 GB, then bad_alloc); the reader
  // refuses a world past kMaxTraceWorldSize, and within it the message lists 16 and counts the rest.
  KinetoTrace t = Rank(0, 40000, 38000);
  t.world_size = kMaxTraceWorldSize;
  auto r = ImportProfile({t});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("missing rank(s) 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 and "
                                      "65519 more of world size 65536 (distributedInfo.world_size of rank0.json)"),
            std::string::npos)
      << r.status().message();
  EXPECT_LT(r.status().message().size(), 300u);
}

TEST(ProfileImportTest, DroppedEventsAreSummedOverRanks) {
  KinetoTrace a = Rank(0, 40000, 38000), b = Rank(1, 70000, 8000);
  a.dropped["kernel"]["duration not a finite number in [0, 8.64e+10] us (dur)"] = 2;
  b.dropped["kernel"]["duration not a finite number in [0, 8.64e+10] us (dur)"] = 3;
  b.dropped["cpu_op"]["thread missing (tid)"] = 1;
  auto r = ImportProfile({a, b});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->dropped.at("kernel").at("duration not a finite number in [0, 8.64e+10] us (dur)"), 5);
  EXPECT_EQ(r->dropped.at("cpu_op").at("thread missing (tid)"), 1);
}

TEST(ProfileImportTest, TheCommittedTwoRankProfile) {
  const std::string dir = std::string(SPECSIM_SOURCE_DIR) + "/traces/profiles/torch-tp2-h200-2026-11-30/default/";
  std::vector<KinetoTrace> ranks;
  for (const char* f : {"rank0.trace.json.gz", "rank1.trace.json.gz"}) {
    auto t = ReadKinetoTrace(dir + f);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    ranks.push_back(std::move(*t));
  }
  // Without phase names (a framework that records no ranges): every graph replay is a pass.
  {
    ImportOptions unnamed;
    unnamed.names = {};  // no rule: no range is a pass
    auto u = ImportProfile(ranks, unnamed);
    ASSERT_TRUE(u.ok()) << u.status().ToString();
    std::map<std::string, const PassGroup*> by;
    for (const PassGroup& g : u->passes) {
      EXPECT_EQ(g.phase, kGraphReplayPhase);
      EXPECT_TRUE(g.graph);
      by[g.run + "|" + std::to_string(g.kernels)] = &g;
    }
    // The decode graph: 116 kernels, 4 layers' allreduce pairs, one token (4096 elements).
    ASSERT_TRUE(by.count("decode.graph|116")) << u->passes.size();
    EXPECT_EQ(by["decode.graph|116"]->allreduces, 8);
    EXPECT_EQ(by["decode.graph|116"]->allreduce_elements, 4096);
    EXPECT_EQ(by["decode.graph|116"]->passes, 6);  // 3 steps x 2 ranks
    ASSERT_TRUE(by.count("spec.graph/n8|125"));
    EXPECT_EQ(by["spec.graph/n8|125"]->allreduce_elements, 8 * 4096);
    // Eager kernels belong to no pass.
    for (const PassGroup& g : u->passes) EXPECT_EQ(g.run.find("eager"), std::string::npos) << g.Key();
  }
  auto r = ImportProfile(std::move(ranks));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  // validate/scripts/torch_tp_decode.py's runs: decode eager / graph, verify of 4 and 8 tokens.
  std::map<std::string, const PassGroup*> by;
  for (const PassGroup& g : r->passes) by[g.phase + "|" + g.run] = &g;
  ASSERT_TRUE(by.count("decode|decode.eager") && by.count("decode|decode.graph"));
  ASSERT_TRUE(by.count("verify|spec.graph/n4") && by.count("verify|spec.graph/n8"));
  // Tokens per pass from the allreduce size: eager passes from torch's arguments, graph replays
  // through the eager calls of the same channel count (8 tokens x 4096 hidden), 2 per layer.
  EXPECT_EQ(by["verify|spec.graph/n8"]->allreduce_elements, 8 * 4096);
  EXPECT_EQ(by["verify|spec.graph/n4"]->allreduce_elements, 4 * 4096);
  EXPECT_EQ(by["verify|spec.graph/n8"]->allreduces, 8);
  const PassGroup& eager = *by["decode|decode.eager"];
  const PassGroup& graph = *by["decode|decode.graph"];
  EXPECT_FALSE(eager.graph);
  EXPECT_TRUE(graph.graph);
  EXPECT_EQ(eager.passes, 6);  // 3 steps x 2 ranks
  // Both launch the same kernels: 4 layers x 2 allreduces, and the logits' all-gather.
  EXPECT_EQ(eager.kernels, graph.kernels);
  EXPECT_GT(eager.busy_us.at("gemm"), 0);
  EXPECT_GT(eager.busy_us.at("attention"), 0);
  // A graph replay packs the same kernels tighter than eager launches under the profiler.
  EXPECT_LT(graph.gpu_span_us, eager.gpu_span_us);
  // Collectives: the 8 KiB allreduce of batch 1 x 4096 bf16, eager and in graphs.
  std::map<std::string, const CollectiveGroup*> calls;
  for (const CollectiveGroup& c : r->collectives) calls[c.name] = &c;
  ASSERT_TRUE(calls.count("profile/nccl/allreduce/eager/n2/8KiB")) << r->collectives.size();
  ASSERT_TRUE(calls.count("profile/nccl/allreduce/graph/n2/8KiB"));
  const CollectiveGroup& g8 = *calls["profile/nccl/allreduce/graph/n2/8KiB"];
  EXPECT_EQ(g8.algorithm, "RING");
  EXPECT_EQ(g8.protocol, "LL");
  EXPECT_GT(g8.transfer_us, 2);  // an NVLink LL allreduce of 8 KiB: a few us
  EXPECT_LT(g8.transfer_us, 30);
  EXPECT_GE(g8.wait_us_mean, 0);
  EXPECT_GT(r->trace.items_size(), 0);
}

// GEMM items: the kernels of one aten::mm / addmm call (split-K: main + reduce) are one call of the
// operator's shape; calls of one shape are pooled over ranks; graph-replayed kernels (no operator)
// and calls without shapes are not GEMM items, the latter counted.
TEST(ProfileImportTest, EagerGemmCallsBecomeGemmItemsOfTheirShape) {
  std::vector<KinetoTrace> ranks;
  for (int rank : {0, 1}) {
    KinetoTrace t = Rank(rank, 40000, 8000);
    t.kernels[0].external_id = 50;  // the verify range's GEMM: aten::mm [4, 4096] x [4096, 3072]
    KinetoKernel reduce = t.kernels[0];
    reduce.name = "void cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16>";
    reduce.start_ns = 33000;
    reduce.duration_ns = 2000;
    reduce.correlation = 13;
    t.launches.push_back({"cudaLaunchKernel", 2500, 1000, 1, 13});
    t.kernels.push_back(reduce);
    KinetoOp mm{"aten::mm", 1500, 9000, 1, 50, {{4, 4096}, {4096, 3072}}, {"c10::BFloat16", "c10::BFloat16"}};
    t.ops.push_back(mm);
    // The draft range's kernel: an addmm with a bias, 2 us longer on rank 1.
    t.kernels[2].external_id = 60;
    t.kernels[2].duration_ns = 3000 + 2000 * rank;
    t.ops.push_back({"aten::addmm",
                     300500,
                     6000,
                     1,
                     60,
                     {{2048}, {1, 4096}, {4096, 2048}},
                     {"c10::BFloat16", "c10::BFloat16", "c10::BFloat16"}});
    // A shapeless call (record_shapes off): its kernel is the orphan.
    t.kernels[3].external_id = 70;
    t.ops.push_back({"aten::mm", 390000, 1000, 1, 70, {}, {}});
    ranks.push_back(std::move(t));
  }
  auto r = ImportProfile(std::move(ranks));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->gemms.size(), 2u);
  std::map<std::string, const GemmGroup*> by;
  for (const GemmGroup& g : r->gemms) by[g.name] = &g;
  ASSERT_TRUE(by.count("profile/gemm/aten/m4/n3072/k4096"));
  const GemmGroup& mm = *by["profile/gemm/aten/m4/n3072/k4096"];
  EXPECT_EQ(mm.calls, 2);  // one per rank
  EXPECT_EQ(mm.kernels_per_call, 2);
  EXPECT_DOUBLE_EQ(mm.median_us, 12 + 2);  // main kernel + split-K reduce
  EXPECT_EQ(mm.main_kernel, "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_NNT");
  ASSERT_TRUE(by.count("profile/gemm/aten/m1/n2048/k4096/addmm"));
  EXPECT_DOUBLE_EQ(by["profile/gemm/aten/m1/n2048/k4096/addmm"]->median_us, 0.5 * (3 + 5));
  EXPECT_EQ(r->gemms_skipped.at("aten::mm without its input shapes (profile with record_shapes=True)"), 2);
  // The trace items: kernel time only, in the library of a profile's matmuls.
  const trace::Item* item = nullptr;
  for (const trace::Item& it : r->trace.items())
    if (it.name() == mm.name) item = &it;
  ASSERT_NE(item, nullptr);
  EXPECT_EQ(item->kind(), trace::KIND_GEMM);
  EXPECT_EQ(item->suite(), trace::SUITE_KERNELS);
  EXPECT_EQ(item->gemm().m(), 4);
  EXPECT_EQ(item->gemm().n(), 3072);
  EXPECT_EQ(item->gemm().k(), 4096);
  EXPECT_EQ(item->gemm().dtype(), trace::DTYPE_BF16);
  EXPECT_EQ(item->gemm().library(), kTorchGemmLibrary);
  EXPECT_TRUE(item->gemm().kernel_time_only());
  EXPECT_DOUBLE_EQ(item->stats().median_us(), 14);
  EXPECT_EQ(item->stats().iterations(), 2);
}

// A graph-replayed pass launches what an eager pass of the same phase and kernel count launched: its
// NCCL calls take that pass's sizes call by call, even where the channel count (here 5, which no
// eager call used) cannot tell; the pass learns its tokens from them.
// Eager pointwise and copy calls become elementwise items whose bytes follow kernel_calls.h: a
// broadcast add reads both inputs and writes the broadcast shape, a copy_ reads its (fp32) source
// and writes its (bf16) destination, a cat reads and writes its list, a fill_ of a 0-dim tensor
// writes one element, a where writes the values' dtype. --call-ranges keeps only the calls inside
// matching host ranges.
TEST(ProfileImportTest, EagerElementwiseCallsBecomeItemsOfTheirBytes) {
  auto ranks = [] {
    std::vector<KinetoTrace> out;
    for (int rank : {0, 1}) {
      KinetoTrace t = Rank(rank, 40000, 8000);
      for (int i : {0, 2, 3}) t.kernels[i].external_id = 80 + i;
      t.kernels[0].name =
          "void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::BFloat16>>";
      KinetoKernel fill = t.kernels[2];
      fill.external_id = 84;
      fill.correlation = 12;
      t.kernels.push_back(fill);
      KinetoKernel where = fill;
      where.external_id = 85;
      t.kernels.push_back(where);
      t.ops.push_back({"aten::add",
                       1500,
                       900,
                       1,
                       80,
                       {{4, 4096}, {4096}, {}},
                       {"c10::BFloat16", "c10::BFloat16", "Scalar"},
                       {}});  // in "verify"
      t.ops.push_back({"aten::copy_",
                       300500,
                       900,
                       1,
                       82,
                       {{4, 8, 128}, {4, 8, 128}, {}},
                       {"c10::BFloat16", "float", "Scalar"},
                       {}});  // in "draft"
      t.ops.push_back({"aten::cat", 390000, 900, 1, 83, {{}, {}}, {"TensorList", "Scalar"}, {512, 0}});
      t.ops.push_back({"aten::fill_", 391000, 900, 1, 84, {{}, {}}, {"c10::BFloat16", "Scalar"}, {}});
      // The mask turned into a bias: a bool [4, 1026] condition, a Python scalar, a 0-dim bf16 tensor.
      t.ops.push_back(
          {"aten::where", 392000, 900, 1, 85, {{4, 1026}, {}, {}}, {"bool", "Scalar", "c10::BFloat16"}, {}});
      out.push_back(std::move(t));
    }
    return out;
  };
  auto r = ImportProfile(ranks());
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::map<std::string, const ElementwiseGroup*> by;
  for (const ElementwiseGroup& g : r->kernel_call_groups.elementwise) by[g.op] = &g;
  ASSERT_EQ(by.size(), 5u);
  EXPECT_EQ(by["aten::where"]->bytes, 4 * 1026 * (1 + 2));  // reads the condition, writes bf16
  EXPECT_EQ(by["aten::where"]->dtype, "BFloat16");
  EXPECT_EQ(by["aten::add"]->elements, 4 * 4096);
  EXPECT_EQ(by["aten::add"]->bytes, (4 * 4096 + 4096 + 4 * 4096) * 2);
  EXPECT_EQ(by["aten::copy_"]->bytes, 4 * 8 * 128 * (2 + 4));
  EXPECT_EQ(by["aten::cat"]->bytes, 2 * 512 * 2);
  EXPECT_EQ(by["aten::fill_"]->bytes, 2);
  EXPECT_EQ(by["aten::add"]->calls, 2);  // both ranks
  // The kernel decides the kind: PyTorch's vectorized kernel, or another (strided) one.
  EXPECT_FALSE(by["aten::add"]->strided);
  EXPECT_TRUE(by["aten::copy_"]->strided);
  EXPECT_EQ(by["aten::copy_"]->name, "profile/elementwise/copy_/e4096/b24576/strided");
  int items = 0;
  for (const trace::Item& it : r->trace.items())
    if (it.kind() == trace::KIND_ELEMENTWISE) {
      ++items;
      EXPECT_TRUE(it.elementwise().kernel_time_only());
      EXPECT_EQ(it.elementwise().strided(), it.elementwise().op() != "aten::add") << it.name();
    }
  EXPECT_EQ(items, 5);
  ImportOptions only_verify;
  only_verify.call_ranges = "^verify$";
  auto v = ImportProfile(ranks(), only_verify);
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  ASSERT_EQ(v->kernel_call_groups.elementwise.size(), 1u);
  EXPECT_EQ(v->kernel_call_groups.elementwise[0].op, "aten::add");
  only_verify.call_ranges = "(";
  EXPECT_FALSE(ImportProfile(ranks(), only_verify).ok());
}

TEST(ProfileImportTest, GraphReplaySizesFromTheEagerPassOfTheSamePhase) {
  std::vector<KinetoTrace> ranks;
  for (int rank : {0, 1}) {
    KinetoTrace t;
    t.path = "rank" + std::to_string(rank) + ".json";
    t.rank = rank;
    t.world_size = 2;
    t.ranges = {{"verify", 0, 100000, 1, 1}, {"verify", 200000, 100000, 1, 2}};
    t.launches = {{"cudaLaunchKernel", 1000, 2000, 1, 10},
                  {"cudaLaunchKernel", 4000, 2000, 1, 11},
                  {"cudaGraphLaunch", 201000, 5000, 1, 20}};
    auto kernel = [](const char* name, int64_t start, int64_t corr) {
      KinetoKernel k;
      k.name = name;
      k.start_ns = start;
      k.duration_ns = 5000;
      k.correlation = corr;
      return k;
    };
    const char* gemm = "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_NNT";
    const char* ar = "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
    KinetoKernel eager_ar = kernel(ar, 20000, 11);
    eager_ar.in_elements = eager_ar.out_elements = 4 * 4096;
    eager_ar.dtype = "BFloat16";
    eager_ar.grid_x = 2;
    KinetoKernel graph_ar = kernel(ar, 220000, 20);
    graph_ar.grid_x = 5;
    t.kernels = {kernel(gemm, 10000, 10), eager_ar, kernel(gemm, 210000, 20), graph_ar};
    ranks.push_back(std::move(t));
  }
  auto r = ImportProfile(std::move(ranks));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::map<std::string, const CollectiveGroup*> calls;
  for (const CollectiveGroup& c : r->collectives) calls[c.name] = &c;
  ASSERT_TRUE(calls.count("profile/nccl/allreduce/graph/n2/32KiB")) << r->collectives.size();
  EXPECT_EQ(calls["profile/nccl/allreduce/graph/n2/32KiB"]->channels, 5);
  for (const PassGroup& g : r->passes) {
    if (g.graph) {
      EXPECT_EQ(g.allreduce_elements, 4 * 4096) << g.Key();
    }
  }
  bool noted = false;
  for (const trace::Note& n : r->trace.notes())
    noted = noted || n.message().find("taken for 1 verify passes of 2 kernels") != std::string::npos;
  EXPECT_TRUE(noted);
}

}  // namespace
}  // namespace specsim::profile

namespace specsim::profile {
namespace {

// The committed fused profile at batch 8, 4K context (torch_tp_decode.py --fused --batch 8
// --context 4096 --verify-widths 2,4,8,16 on 2x H200; Llama-3.1-8B heads at TP2: 16 query, 4 KV
// heads of 128 per GPU). cuDNN's SDPA ran its split 16-row kernel (main + lean reduction) for the
// q = 1 decode and draft steps and its unsplit 64x128 prefill kernel for every verify / extend width;
// the residual-add RMSNorm moves three [tokens, hidden] tensors, the plain one two.
TEST(ProfileImportTest, EagerAttentionAndNormCallsOfTheCommittedFusedProfile) {
  const std::string dir =
      std::string(SPECSIM_SOURCE_DIR) + "/traces/profiles/torch-tp2-h200-fused-2026-11-30/fused-b8/";
  std::vector<KinetoTrace> ranks;
  for (const char* f : {"rank0.trace.json.gz", "rank1.trace.json.gz"}) {
    auto t = ReadKinetoTrace(dir + f);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    ranks.push_back(std::move(*t));
  }
  auto r = ImportProfile(std::move(ranks));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->kernel_call_groups.attention.size(), 5u);  // q = 1, 2, 4, 8, 16
  for (const AttentionGroup& a : r->kernel_call_groups.attention) {
    EXPECT_EQ(a.batch, 8);
    EXPECT_EQ(a.q_heads, 16);
    EXPECT_EQ(a.kv_heads, 4);
    EXPECT_EQ(a.head_dim, 128);
    EXPECT_EQ(a.keys, 4096 + a.query_tokens);
    EXPECT_EQ(a.op, "aten::_cudnn_attention_forward");
    if (a.query_tokens == 1) {
      EXPECT_EQ(a.implementation, "cudnn_sdpa_sm80/16x128+split");
      EXPECT_EQ(a.kernels_per_call, 2);
      EXPECT_GT(a.main_median_us, 0.8 * a.median_us);
      EXPECT_LT(a.main_median_us, a.median_us);
    } else {
      EXPECT_EQ(a.implementation, "cudnn_sdpa_sm90/64x128");
      EXPECT_EQ(a.kernels_per_call, 1);
      EXPECT_EQ(a.main_median_us, 0);
      EXPECT_GT(a.median_us,
                3 * r->kernel_call_groups.attention.front().median_us);  // the prefill kernel's step at q > 1
    }
  }
  std::map<std::string, const NormGroup*> norms;
  for (const NormGroup& n : r->kernel_call_groups.norms) norms[n.name] = &n;
  ASSERT_TRUE(norms.count("profile/rmsnorm/t8/h4096/residual"));
  ASSERT_TRUE(norms.count("profile/rmsnorm/t8/h4096"));
  EXPECT_TRUE(norms["profile/rmsnorm/t8/h4096/residual"]->fused_residual);
  EXPECT_GT(norms["profile/rmsnorm/t8/h4096/residual"]->calls, norms["profile/rmsnorm/t8/h4096"]->calls);
  // Greedy sampling: aten::argmax over the gathered [rows, 128256] logits, ~28 us whatever the rows
  // up to 64 (a row per block: the sampling row limit of compute/kernel_cost.h).
  ASSERT_FALSE(r->kernel_call_groups.sampling.empty());
  for (const SamplingGroup& s : r->kernel_call_groups.sampling) {
    EXPECT_EQ(s.vocab, 128256);
    EXPECT_EQ(s.op, "aten::argmax");
    if (s.rows <= 64) {
      EXPECT_NEAR(s.median_us, 28, 2) << s.name;
    }
  }
  EXPECT_TRUE(r->kernel_calls_skipped.empty());
  // Their items: device time, with the implementation and the main kernel for the split call.
  int attention_items = 0, norm_items = 0;
  for (const trace::Item& it : r->trace.items()) {
    if (it.kind() == trace::KIND_ATTENTION) {
      ++attention_items;
      EXPECT_TRUE(it.attention().kernel_time_only());
      EXPECT_EQ(it.attention().kv_bytes(), int64_t{8} * 4 * it.attention().context() * 256 * 2);
      EXPECT_EQ(it.attention().main_kernel_median_us() > 0, it.attention().query_tokens() == 1);
    } else if (it.kind() == trace::KIND_RMSNORM) {
      ++norm_items;
      EXPECT_TRUE(it.rmsnorm().kernel_time_only());
    } else if (it.kind() == trace::KIND_SAMPLING) {
      EXPECT_TRUE(it.sampling().kernel_time_only());
      EXPECT_EQ(it.sampling().vocab(), 128256);
    }
  }
  EXPECT_EQ(attention_items, 5);
  EXPECT_EQ(norm_items, static_cast<int>(r->kernel_call_groups.norms.size()));
}

}  // namespace
}  // namespace specsim::profile

namespace specsim::profile {
namespace {

// Every committed profile (traces/profiles/RUN/CONFIG/rank*.trace.json.gz) imports to a trace whose
// numbers are in the ranges trace.proto declares (what calib::LoadTrace checks), none implausible.
TEST(ProfileImportTest, EveryCommittedProfileImportsToATraceInRange) {
  int runs = 0;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(std::string(SPECSIM_SOURCE_DIR) + "/traces/profiles")) {
    if (entry.path().filename() != "rank0.trace.json.gz") continue;
    ++runs;
    const std::filesystem::path dir = entry.path().parent_path();
    SCOPED_TRACE(dir.string());
    std::vector<KinetoTrace> ranks;
    for (int r = 0; std::filesystem::exists(dir / ("rank" + std::to_string(r) + ".trace.json.gz")); ++r) {
      auto t = ReadKinetoTrace((dir / ("rank" + std::to_string(r) + ".trace.json.gz")).string());
      ASSERT_TRUE(t.ok()) << t.status().ToString();
      ranks.push_back(std::move(*t));
    }
    auto imported = ImportProfile(std::move(ranks));
    ASSERT_TRUE(imported.ok()) << imported.status().ToString();
    EXPECT_GT(imported->trace.items_size(), 0);
    std::vector<std::string> warnings;
    const Status s = io::CheckFieldRanges(imported->trace, dir.string(), &warnings);
    EXPECT_TRUE(s.ok()) << s.ToString();
    EXPECT_TRUE(warnings.empty()) << warnings.front();
  }
  EXPECT_GE(runs, 4);
}

}  // namespace
}  // namespace specsim::profile

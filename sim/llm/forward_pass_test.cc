#include "sim/llm/forward_pass.h"

#include <gtest/gtest.h>

#include <cmath>

#include "sim/compute/kernel_cost.h"
#include "sim/llm/experts.h"
#include "sim/llm/test_models.h"
#include "sim/net/topology.h"

namespace specsim::llm {
namespace {

using compute::DType;
using compute::KernelClass;
using namespace specsim::llm::testing;  // NOLINT

PassShape Decode(int batch = 1, int context = 0) {
  PassShape s;
  s.batch = batch;
  s.tokens_per_sequence = 1;
  s.context_length = context;
  return s;
}

ForwardPass Build(const ModelSpec& m, ParallelSpec p, PassShape s) {
  auto pass = BuildForwardPass(m, p, s);
  EXPECT_TRUE(pass.ok()) << pass.status().ToString();
  return std::move(pass).value();
}

const compute::Kernel* FindKernel(const ForwardPass& p, const std::string& name) {
  for (const PassStep& s : p.steps) {
    if (s.kind == PassStep::kKernel && s.kernel.name == name) return &s.kernel;
  }
  return nullptr;
}

double GroupedGemmBytes(const ForwardPass& p) {
  double b = 0;
  for (const compute::Kernel& k : p.kernels()) {
    if (k.kernel_class == KernelClass::kGroupedGemm) b += k.bytes;
  }
  return b;
}

// PyTorch's unfused layer (KernelInventory all separate) against the frameworks' fused one, Llama-8B
// at TP 1, batch 1, context 1024: per layer the fused pass has input_norm, rope_kv_store, act (3
// small kernels besides GEMMs and attention); the unfused one has the 2 norms, 2 residual adds, 5
// rotary kernels per tensor (q, k) and 2 cache writes in place of rope_kv_store, silu and mul in
// place of act (18), and at q > 1 a K/V expansion and a merge copy (20). The bytes are the header's: residual add
// 3*T*h*2, rotary 2*T*heads*d*2, K/V expansion 2*b*L*(KVl + Hl)*d*2.
TEST(ForwardPassTest, TheUnfusedInventoryLaunchesPyTorchsSeparateKernels) {
  const ModelSpec m = Llama31_8B();
  auto smalls = [](const ForwardPass& p) {
    int n = 0;
    for (const PassStep& s : p.steps)
      if (s.kind == PassStep::kKernel && s.layer == 0 &&
          (s.kernel.kernel_class == KernelClass::kElementwise || s.kernel.kernel_class == KernelClass::kNorm))
        ++n;
    return n;
  };
  PassShape fused = Decode(1, 1024);
  PassShape unfused = fused;
  unfused.inventory = {false, false, 5, true, 2, false, false, true, true};
  EXPECT_FALSE(unfused.inventory.Fused());
  EXPECT_TRUE(fused.inventory.Fused());
  const ForwardPass f1 = Build(m, {}, fused), u1 = Build(m, {}, unfused);
  EXPECT_EQ(smalls(f1), 4);  // input_norm, rope_kv_store, post_attention_norm, act
  EXPECT_EQ(smalls(u1), 18);
  const compute::Kernel* add = FindKernel(u1, "layer0.input_norm_residual_add");
  ASSERT_NE(add, nullptr);
  EXPECT_DOUBLE_EQ(add->bytes, 3.0 * 1 * 4096 * 2);
  ASSERT_NE(FindKernel(u1, "layer0.rotary_q4"), nullptr);
  EXPECT_DOUBLE_EQ(FindKernel(u1, "layer0.rotary_k0")->bytes, 2.0 * 1 * 8 * 128 * 2);
  EXPECT_EQ(FindKernel(u1, "layer0.mask_bias"), nullptr);  // q = 1: no mask
  EXPECT_EQ(FindKernel(f1, "layer0.input_norm_residual_add"), nullptr);
  PassShape wide = unfused;
  wide.tokens_per_sequence = 4;
  const ForwardPass u4 = Build(m, {}, wide);
  EXPECT_EQ(smalls(u4), 22);  // + the mask's where and two fills, + the merge-heads copy
  // The [q, L] = [4, 1028] mask: a where reading 1 B and writing 2 B per position, fills of the bias
  // padded to 1040 keys.
  const compute::Kernel* bias = FindKernel(u4, "layer0.mask_bias");
  ASSERT_NE(bias, nullptr);
  EXPECT_DOUBLE_EQ(bias->bytes, 4.0 * (1024 + 4) * 3);
  ASSERT_NE(FindKernel(u4, "layer0.mask_bias_fill1"), nullptr);
  EXPECT_DOUBLE_EQ(FindKernel(u4, "layer0.mask_bias_fill0")->bytes, 4.0 * 1040 * 2);
  ASSERT_NE(FindKernel(u4, "layer0.merge_heads"), nullptr);
  // On views (PyTorch's strided kernels): the rotary kernels but the last, which only above one
  // token; the cache writes, the mask's where, SiLU and mul above one token; never the residual add.
  PassShape views1 = unfused, views4 = wide;
  views1.inventory.strided_views = views4.inventory.strided_views = true;
  const ForwardPass v1 = Build(m, {}, views1), v4 = Build(m, {}, views4);
  EXPECT_TRUE(FindKernel(v1, "layer0.rotary_q0")->strided);
  EXPECT_FALSE(FindKernel(v1, "layer0.rotary_q4")->strided);
  EXPECT_TRUE(FindKernel(v4, "layer0.rotary_q4")->strided);
  EXPECT_TRUE(FindKernel(v1, "layer0.cache_write_k")->strided);
  EXPECT_FALSE(FindKernel(v1, "layer0.silu")->strided);
  EXPECT_TRUE(FindKernel(v4, "layer0.silu")->strided);
  EXPECT_TRUE(FindKernel(v4, "layer0.mask_bias")->strided);
  EXPECT_FALSE(FindKernel(v4, "layer0.mask_bias_fill0")->strided);
  EXPECT_FALSE(FindKernel(v4, "layer0.input_norm_residual_add")->strided);
  EXPECT_FALSE(FindKernel(u4, "layer0.silu")->strided);  // not on views unless the inventory says so
  // An inventory of no rotary kernel or three KV-store kernels is an error, not a pass without them.
  PassShape bad = unfused;
  bad.inventory.rotary_kernels = 0;
  EXPECT_FALSE(BuildForwardPass(m, {}, bad).ok());
  bad = unfused;
  bad.inventory.kv_store_kernels = 3;
  EXPECT_FALSE(BuildForwardPass(m, {}, bad).ok());
  // The GEMMs, attention and communication are the same passes either way.
  EXPECT_EQ(u1.weight_bytes_per_gpu, f1.weight_bytes_per_gpu);
  EXPECT_EQ(u1.kv_bytes_read_per_gpu, f1.kv_bytes_read_per_gpu);
}

TEST(ForwardPassTest, CommPointsAtTp8AreOneEmbeddingTwoPerLayerOneGather) {
  for (const ModelSpec& m : {Llama31_8B(), KimiK2(), DeepseekV3(), Qwen3_235B(), GptOss120B()}) {
    ForwardPass p = Build(m, {8, 1}, Decode());
    EXPECT_EQ(p.num_comms(CommKind::kAllReduce), 1 + 2 * m.num_layers) << m.name;
    EXPECT_EQ(p.num_comms(CommKind::kAllGather), 1) << m.name;
    EXPECT_EQ(p.num_comms(CommKind::kAllToAll), 0) << m.name;
    EXPECT_EQ(p.comms().back().name, "logits_allgather");
    EXPECT_EQ(p.comms().front().name, "embed_allreduce");
  }
  // docs/reference/case.md: Kimi-K2 at TP8: 122 layer allreduces + 1 after the embedding.
  EXPECT_EQ(Build(KimiK2(), {8, 1}, Decode()).num_comms(CommKind::kAllReduce), 123);
}

TEST(ForwardPassTest, NoCommunicationAtTp1) {
  ForwardPass p = Build(KimiK2(), {1, 1}, Decode(4, 1000));
  EXPECT_EQ(p.num_comms(), 0);
  EXPECT_GT(p.num_kernels(), 61 * 8);
}

TEST(ForwardPassTest, AllReducePayloadIsTokensTimesHiddenTimesTwo) {
  // Decode: hidden 7168 -> 14336 B per token (docs/reference/speculative-decoding.md).
  for (const CommPoint& c : Build(KimiK2(), {8, 1}, Decode()).comms()) {
    if (c.kind == CommKind::kAllReduce) {
      EXPECT_EQ(c.bytes, 14336) << c.name;
    }
  }
  // Verify of 4 tokens for 8 sequences: T = 32.
  PassShape verify = Decode(8, 2048);
  verify.tokens_per_sequence = 4;
  for (const CommPoint& c : Build(KimiK2(), {8, 1}, verify).comms()) {
    if (c.kind == CommKind::kAllReduce) {
      EXPECT_EQ(c.bytes, 32 * 14336) << c.name;
    }
  }
  // Logits all-gather: T * ceil(V/8) * 8 * 2 B (bf16).
  ForwardPass p = Build(Llama31_8B(), {8, 1}, Decode(2));
  EXPECT_EQ(p.comms().back().bytes, 2LL * 16032 * 8 * 2);
}

// A ragged verify (vLLM's n-gram, ngram.h): of 8 sequences, 3 verify 4 tokens and 5 their own
// token, T = 3 x 4 + 5 = 17 tokens through the GEMMs and the allreduces (17 x 4096 x 2 B); the
// attention call stays at the full width, 8 sequences of 4 (PassShape::narrow_sequences).
TEST(ForwardPassTest, ARaggedBatchRunsItsOwnTokensAndAttentionAtFullWidth) {
  PassShape ragged = Decode(8, 2048);
  ragged.tokens_per_sequence = 4;
  ragged.narrow_sequences = 5;
  PassShape full = ragged;
  full.narrow_sequences = 0;
  const ForwardPass r = Build(Llama31_8B(), {2, 1}, ragged);
  const ForwardPass f = Build(Llama31_8B(), {2, 1}, full);
  EXPECT_EQ(r.tokens, 17);
  EXPECT_EQ(f.tokens, 32);
  EXPECT_DOUBLE_EQ(FindKernel(r, "layer0.qkv_proj")->m, 17);
  EXPECT_DOUBLE_EQ(FindKernel(r, "layer31.down_proj")->m, 17);
  for (const CommPoint& c : r.comms())
    if (c.kind == CommKind::kAllReduce) EXPECT_EQ(c.bytes, 17 * 4096 * 2) << c.name;
  const compute::Kernel* ra = FindKernel(r, "layer0.attention");
  const compute::Kernel* fa = FindKernel(f, "layer0.attention");
  ASSERT_NE(ra, nullptr);
  EXPECT_EQ(ra->attention.seqs, 8);
  EXPECT_EQ(ra->attention.query_tokens, 4);
  EXPECT_DOUBLE_EQ(ra->flops, fa->flops);
  EXPECT_DOUBLE_EQ(ra->bytes, fa->bytes);
  ragged.narrow_sequences = 9;
  auto bad = BuildForwardPass(Llama31_8B(), {2, 1}, ragged);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("narrow_sequences = 9"), std::string::npos) << bad.status().message();
}

TEST(ForwardPassTest, Llama8BBf16WeightsAreAbout16GB) {
  // Llama-3.1-8B: 8.03e9 parameters (model card) * 2 B.
  ForwardPass p = Build(Llama31_8B(), {1, 1}, Decode());
  EXPECT_NEAR(p.weight_bytes_per_gpu / 16.06e9, 1.0, 0.01);
  // Dense decode reads every weight once except the embedding table (only T rows).
  EXPECT_NEAR(p.weight_bytes_read_per_gpu, p.weight_bytes_per_gpu - 128256.0 * 4096 * 2, 1e6);
  // TP8 splits everything except norms and replicated kv heads (8 kv heads: none here).
  ForwardPass p8 = Build(Llama31_8B(), {8, 1}, Decode());
  EXPECT_NEAR(p8.weight_bytes_per_gpu * 8 / p.weight_bytes_per_gpu, 1.0, 0.01);
}

TEST(ForwardPassTest, KimiK2Int4AtTp8IsParamsTimesFourAndAHalfBitsOverEight) {
  // Kimi-K2: 1.03e12 parameters (Hugging Face's count of the safetensors); INT4 = 4 bits plus a
  // bf16 scale per 32 values (weight_format.h ConventionalFormat) = 0.5625 B: the default Kimi
  // scenario's own arithmetic (~594 GB, ~69 GiB per GPU at TP8).
  PassShape s = Decode();
  s.weight_dtype = DType::kInt4;
  ForwardPass p = Build(KimiK2(), {8, 1}, s);
  const double expected = 1.03e12 * 0.5625 / 8;
  EXPECT_NEAR(p.weight_bytes_per_gpu / expected, 1.0, 0.03) << p.weight_bytes_per_gpu;
  // Expert parallelism holds the same routed-expert bytes (E/8 whole experts vs 1/8 of every
  // expert) but replicates the shared expert on every GPU: + 60 layers * 3*7168*2048 * 0.5625 B *
  // 7/8 (2048/8 = 256 inputs per GPU for down_proj: whole groups of 32 either way).
  ForwardPass ep = Build(KimiK2(), {8, 8}, s);
  EXPECT_NEAR(ep.weight_bytes_per_gpu - p.weight_bytes_per_gpu, 60.0 * 3 * 7168 * 2048 * 0.5625 * 7 / 8, 1e3);
}

TEST(ForwardPassTest, MoeVerifyReadsMoreExpertWeightsThanDecode) {
  const ModelSpec m = KimiK2();
  ForwardPass decode = Build(m, {8, 1}, Decode(1, 4096));
  PassShape verify = Decode(1, 4096);
  verify.tokens_per_sequence = 4;
  ForwardPass ver = Build(m, {8, 1}, verify);
  EXPECT_NEAR(decode.expected_distinct_experts, 8, 1e-12);
  EXPECT_NEAR(ver.expected_distinct_experts, ExpectedDistinctExperts(384, 8, 4), 1e-9);
  EXPECT_GT(ver.expected_distinct_experts, 31);
  EXPECT_GT(ver.weight_bytes_read_per_gpu, 2.5 * decode.weight_bytes_read_per_gpu);
  // Expert weight bytes scale with distinct experts (token bytes are small next to weights).
  EXPECT_NEAR(GroupedGemmBytes(ver) / GroupedGemmBytes(decode),
              ver.expected_distinct_experts / decode.expected_distinct_experts, 0.05);
  // A dense model reads the same weights either way.
  ForwardPass d1 = Build(Llama31_8B(), {1, 1}, Decode());
  PassShape v4 = Decode();
  v4.tokens_per_sequence = 4;
  EXPECT_DOUBLE_EQ(Build(Llama31_8B(), {1, 1}, v4).weight_bytes_read_per_gpu, d1.weight_bytes_read_per_gpu);
}

TEST(ForwardPassTest, KvBytesGrowLinearlyWithContext) {
  auto kv = [](int ctx) { return Build(Llama31_8B(), {1, 1}, Decode(1, ctx)).kv_bytes_read_per_gpu; };
  // Llama-3.1-8B bf16: 2 (K,V) * 8 heads * 128 * 2 B = 4096 B per token per layer, 32 layers.
  EXPECT_DOUBLE_EQ(kv(1000), 1001.0 * 4096 * 32);
  EXPECT_DOUBLE_EQ(kv(4000) - kv(2000), 2 * (kv(2000) - kv(1000)));
  // Batch multiplies it; a verify of N tokens reads each sequence's KV once (+ its N tokens).
  EXPECT_DOUBLE_EQ(Build(Llama31_8B(), {1, 1}, Decode(4, 1000)).kv_bytes_read_per_gpu, 4 * kv(1000));
  PassShape v = Decode(1, 1000);
  v.tokens_per_sequence = 4;
  EXPECT_DOUBLE_EQ(Build(Llama31_8B(), {1, 1}, v).kv_bytes_read_per_gpu, 1004.0 * 4096 * 32);
  // TP8: one kv head per GPU.
  EXPECT_DOUBLE_EQ(Build(Llama31_8B(), {8, 1}, Decode(1, 1000)).kv_bytes_read_per_gpu, kv(1000) / 8);
  EXPECT_DOUBLE_EQ(KvCacheBytesPerGpu(Llama31_8B(), {1, 1}, DType::kBf16, 1, 1000), 1000.0 * 4096 * 32);
}

TEST(ForwardPassTest, MlaLatentCacheIsNotSplitOverTp) {
  // (512 + 64) values per token per layer; fp8 KV: 576 B.
  PassShape s = Decode(1, 9999);
  s.kv_dtype = DType::kFp8;
  const double tp1 = Build(KimiK2(), {1, 1}, s).kv_bytes_read_per_gpu;
  EXPECT_DOUBLE_EQ(tp1, 10000.0 * 576 * 61);
  EXPECT_DOUBLE_EQ(Build(KimiK2(), {8, 1}, s).kv_bytes_read_per_gpu, tp1);
}

TEST(ForwardPassTest, KvHeadsReplicatedWhenFewerThanTp) {
  // Qwen3-235B: 4 kv heads at TP8: one per GPU.
  ForwardPass p = Build(Qwen3_235B(), {8, 1}, Decode());
  const compute::Kernel* qkv = FindKernel(p, "layer0.qkv_proj");
  ASSERT_NE(qkv, nullptr);
  EXPECT_EQ(qkv->n, (64 / 8 + 2 * 1) * 128);
  EXPECT_EQ(qkv->k, 4096);
}

TEST(ForwardPassTest, SlidingWindowLayersAttendOverTheWindow) {
  const ModelSpec m = GptOss120B();
  ForwardPass p = Build(m, {1, 1}, Decode(1, 10000));
  const compute::Kernel* sliding = FindKernel(p, "layer0.attention");
  const compute::Kernel* full = FindKernel(p, "layer1.attention");
  ASSERT_TRUE(sliding && full);
  const double per_token = 2.0 * 8 * 64 * 2;
  const double q_out = 2.0 * 64 * 64 * 2;
  EXPECT_DOUBLE_EQ(sliding->bytes, (128 + 1) * per_token + q_out);
  EXPECT_DOUBLE_EQ(full->bytes, (10000 + 1) * per_token + q_out);
  EXPECT_DOUBLE_EQ(KvCacheBytesPerGpu(m, {1, 1}, DType::kBf16, 1, 10000),
                   18 * 128 * per_token + 18 * 10000 * per_token);
}

TEST(ForwardPassTest, DenseFlopsAreTwiceActiveParamsPerToken) {
  // FLOPs per token ~ 2 * parameters used as GEMM weights (all but the embedding table) when the
  // context is short: Llama-3.1-8B 8.03e9 - 128256*4096 embedding = 7.505e9; Llama-3.1-70B
  // 70.55e9 - 128256*8192 = 69.5e9 (model cards).
  struct Case {
    ModelSpec m;
    double gemm_params;
  };
  for (const Case& c : {Case{Llama31_8B(), 8.03e9 - 128256.0 * 4096}, Case{Llama31_70B(), 70.55e9 - 128256.0 * 8192}}) {
    for (int tp : {1, 8}) {
      ForwardPass p = Build(c.m, {tp, 1}, Decode(16, 16));
      EXPECT_NEAR(p.flops_per_gpu() * tp / (2 * c.gemm_params * 16), 1.0, 0.02) << c.m.name << tp;
    }
  }
}

TEST(ForwardPassTest, ExpertParallelReplacesMoeAllReduceWithAllToAll) {
  const ModelSpec m = KimiK2();  // 1 dense layer, 60 MoE layers
  ForwardPass p = Build(m, {8, 8}, Decode(16));
  EXPECT_EQ(p.num_comms(CommKind::kAllToAll), 2 * 60);
  EXPECT_EQ(p.num_comms(CommKind::kAllReduce), 1 + 61 + 1);
  EXPECT_EQ(p.num_comms(CommKind::kAllGather), 60 + 1);
  for (const CommPoint& c : p.comms()) {
    // 16 tokens over 8 GPUs: 2 tokens per GPU, 8 experts each, 7168 * 2 B.
    if (c.kind == CommKind::kAllToAll) {
      EXPECT_EQ(c.bytes, 2 * 8 * 7168 * 2) << c.name;
    }
  }
  // Same expected expert bytes read per GPU as TP (D/8 whole experts vs D experts / 8).
  ForwardPass tp = Build(m, {8, 1}, Decode(16));
  EXPECT_NEAR(GroupedGemmBytes(p) / GroupedGemmBytes(tp), 1.0, 0.02);
}

TEST(ForwardPassTest, Eagle3DraftPass) {
  const ModelSpec draft = Eagle3Llama31_8B();
  const ModelSpec target = Llama31_8B();
  PassShape s = Decode(4, 1000);
  auto p = BuildEagle3DraftPass(draft, target, {8, 1}, s);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  // Embedding allreduce, attention and MLP allreduces, logits gather.
  EXPECT_EQ(p->num_comms(CommKind::kAllReduce), 3);
  EXPECT_EQ(p->num_comms(CommKind::kAllGather), 1);
  const compute::Kernel* qkv = FindKernel(*p, "eagle3.layer0.qkv_proj");
  const compute::Kernel* fc = FindKernel(*p, "eagle3.fc");
  const compute::Kernel* head = FindKernel(*p, "eagle3.lm_head");
  ASSERT_TRUE(qkv && fc && head);
  EXPECT_EQ(qkv->k, 2 * 4096);
  EXPECT_EQ(fc->k, 3 * 4096);
  EXPECT_EQ(fc->n, 4096);
  EXPECT_EQ(head->n, 32000 / 8);
  // Resident: fc (replicated) + layer / 8 + draft LM head / 8 (+ norms); no embedding.
  const double h = 4096;
  const double layer = (32 + 16) * 128 * 2 * h + h * h + 3 * h * 14336;
  const double expected = (3 * h * h + layer / 8 + 32000 * h / 8) * 2;
  EXPECT_NEAR(p->weight_bytes_per_gpu / expected, 1.0, 0.001);
  // Later draft steps skip the FC.
  auto later = BuildEagle3DraftPass(draft, target, {8, 1}, s, /*apply_fc=*/false);
  ASSERT_TRUE(later.ok());
  EXPECT_EQ(FindKernel(*later, "eagle3.fc"), nullptr);
  // TP1: no communication.
  EXPECT_EQ(BuildEagle3DraftPass(draft, target, {1, 1}, s)->num_comms(), 0);
  // With a target served TP8 EP8 the head still runs TP8.
  auto with_ep = BuildEagle3DraftPass(draft, target, {8, 8}, s);
  ASSERT_TRUE(with_ep.ok()) << with_ep.status().ToString();
  EXPECT_DOUBLE_EQ(with_ep->weight_bytes_per_gpu, p->weight_bytes_per_gpu);
  // A non-EAGLE-3 draft is refused.
  EXPECT_FALSE(BuildEagle3DraftPass(target, target, {8, 1}, s).ok());
}

TEST(ForwardPassTest, MtpDraftPassIsOneMoeLayer) {
  const ModelSpec m = DeepseekV3();
  auto p = BuildMtpDraftPass(m, {8, 1}, Decode(2, 100));
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_EQ(p->num_comms(CommKind::kAllReduce), 3);
  EXPECT_EQ(p->num_comms(CommKind::kAllGather), 1);
  EXPECT_NE(FindKernel(*p, "mtp.eh_proj"), nullptr);
  EXPECT_NE(FindKernel(*p, "mtp.layer61.experts_gate_up"), nullptr);
  EXPECT_NE(FindKernel(*p, "mtp.lm_head"), nullptr);
  // Resident: eh_proj (2h x h, replicated) + one MoE layer; DeepSeek-V3's MTP module is ~11.5B
  // parameters without its embedding and head (14B in total incl. the 2 * 0.93B shared tables).
  ForwardPass target = Build(m, {8, 1}, Decode(2, 100));
  EXPECT_GT(p->weight_bytes_per_gpu, 11e9 * 2 / 8);
  EXPECT_LT(p->weight_bytes_per_gpu, 13e9 * 2 / 8);
  EXPECT_LT(p->weight_bytes_per_gpu, target.weight_bytes_per_gpu / 40);
}

TEST(ForwardPassTest, InvalidParallelismIsAnError) {
  auto bad_tp = BuildForwardPass(Llama31_8B(), {3, 1}, Decode());
  ASSERT_FALSE(bad_tp.ok());
  EXPECT_NE(bad_tp.status().message().find("num_attention_heads"), std::string::npos);
  auto bad_ep = BuildForwardPass(KimiK2(), {8, 2}, Decode());
  ASSERT_FALSE(bad_ep.ok());
  EXPECT_NE(bad_ep.status().message().find("ParallelSpec.ep"), std::string::npos);
  EXPECT_FALSE(BuildForwardPass(Llama31_8B(), {8, 8}, Decode()).ok());
  PassShape s = Decode();
  s.batch = 0;
  EXPECT_FALSE(BuildForwardPass(Llama31_8B(), {1, 1}, s).ok());
}

TEST(ForwardPassTest, DecodeTimeOnH200IsWeightBandwidthBound) {
  // Llama-3.1-8B bf16 decode at batch 1 on one H200: the kernels' device time lies between the
  // weight bytes at full bandwidth (16 GB / 4.8 TB/s = 3.3 ms) and twice that.
  net::GpuSpec g;
  g.name = "h200";
  g.memory_bandwidth_gbps = 4800;
  g.bf16_dense_tflops = 989;
  g.fp8_dense_tflops = 1979;
  compute::KernelCostModel model(g, compute::ComputeParams{});
  ForwardPass p = Build(Llama31_8B(), {1, 1}, Decode(1, 1024));
  SimTime t = 0;
  for (const compute::Kernel& k : p.kernels()) t += model.KernelTime(k);
  const double lower_ms = p.weight_bytes_read_per_gpu / 4800e9 * 1e3;
  EXPECT_GT(MillisFromPicos(t), lower_ms);
  EXPECT_LT(MillisFromPicos(t), 2 * lower_ms);
}

}  // namespace
}  // namespace specsim::llm

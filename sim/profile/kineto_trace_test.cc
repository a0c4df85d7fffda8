#include "sim/profile/kineto_trace.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <string>

namespace specsim::profile {
namespace {

// A minimal Kineto trace: metadata, a host range, a launch and its kernel (an NCCL one with
// torch's collective arguments), a GPU range, an event of a category that is not kept.
const char* kTrace = R"json({
  "schemaVersion": 1,
  "deviceProperties": [{"id": 0, "name": "NVIDIA H200", "totalGlobalMem": 150109880320, "computeMajor": 9,
                        "computeMinor": 0, "numSms": 132}],
  "distributedInfo": {"backend": "nccl", "rank": 1, "world_size": 2, "nccl_version": "2.28.9"},
  "traceEvents": [
    {"name": "process_name", "ph": "M", "ts": 1.0, "pid": 7, "tid": 0, "args": {"name": "python"}},
    {"ph": "X", "cat": "user_annotation", "name": "verify", "pid": 7, "tid": 7, "ts": 100.5, "dur": 50.25,
     "args": {"External id": 3}},
    {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 7, "tid": 7, "ts": 110.0, "dur": 4.5,
     "args": {"correlation": 42, "External id": 4}},
    {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
     "pid": 0, "tid": 7, "ts": 120.001, "dur": 6.5,
     "args": {"device": 0, "stream": 7, "correlation": 42, "External id": 4, "grid": [3, 1, 1], "block": [512, 1, 1],
              "Collective name": "allreduce", "In msg nelems": 4096, "Out msg nelems": 4096, "dtype": "BFloat16",
              "Group size": 2}},
    {"ph": "X", "cat": "gpu_user_annotation", "name": "verify", "pid": 0, "tid": 7, "ts": 120.0, "dur": 7.0,
     "args": {"External id": 3}},
    {"ph": "f", "id": 42, "pid": 0, "tid": 7, "ts": 120.0, "cat": "ac2g", "name": "ac2g", "bp": "e"},
    {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 7, "tid": 7, "ts": 105.0, "dur": 2.0,
     "args": {"External id": 4, "Input Dims": [[8, 4096], [4096, 3072]],
              "Input type": ["c10::BFloat16", "c10::BFloat16"], "Input Strides": [[4096, 1], [3072, 1]]}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::cat", "pid": 7, "tid": 7, "ts": 106.0, "dur": 1.0,
     "args": {"External id": 5, "Input Dims": [[[1, 16], [1, 16]], []]}}
  ]
})json";

TEST(KinetoTraceTest, KeepsKernelsRangesAndLaunchesAndCountsTheRest) {
  auto t = ParseKinetoTrace(kTrace, "t.json");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->rank, 1);
  EXPECT_EQ(t->world_size, 2);
  EXPECT_EQ(t->nccl_version, "2.28.9");
  ASSERT_EQ(t->devices.size(), 1u);
  EXPECT_EQ(t->devices[0].name, "NVIDIA H200");
  EXPECT_EQ(t->devices[0].sm_count, 132);
  ASSERT_EQ(t->kernels.size(), 1u);
  const KinetoKernel& k = t->kernels[0];
  EXPECT_EQ(k.start_ns, 120001);  // us with three decimals -> integer ns
  EXPECT_EQ(k.duration_ns, 6500);
  EXPECT_EQ(k.correlation, 42);
  EXPECT_EQ(k.grid_x, 3);
  EXPECT_EQ(k.collective, "allreduce");
  EXPECT_EQ(k.in_elements, 4096);
  EXPECT_EQ(k.dtype, "BFloat16");
  EXPECT_EQ(k.group_size, 2);
  ASSERT_EQ(t->ranges.size(), 1u);
  EXPECT_EQ(t->ranges[0].name, "verify");
  EXPECT_EQ(t->ranges[0].start_ns, 100500);
  EXPECT_EQ(t->ranges[0].duration_ns, 50250);
  EXPECT_EQ(t->gpu_ranges.size(), 1u);
  ASSERT_EQ(t->launches.size(), 1u);
  EXPECT_EQ(t->launches[0].correlation, 42);
  EXPECT_EQ(t->events, 8);
  EXPECT_EQ(t->ignored.at("metadata"), 1);
  EXPECT_EQ(t->ignored.at("ac2g"), 1);
  EXPECT_EQ(t->ignored.count("cpu_op"), 0u);  // every operator is a host call; aten::cat has no shapes read
  ASSERT_EQ(t->cpu_ops.size(), 2u);
  EXPECT_EQ(t->cpu_ops[1].name, "aten::cat");
  EXPECT_EQ(t->cpu_ops[1].start_ns, 106000);
  // aten::mm is kept with its shapes, and its kernel points back to it.
  ASSERT_EQ(t->ops.size(), 1u);
  EXPECT_EQ(t->ops[0].name, "aten::mm");
  EXPECT_EQ(t->ops[0].external_id, 4);
  EXPECT_EQ(t->kernels[0].external_id, 4);
  ASSERT_EQ(t->ops[0].input_dims.size(), 2u);
  EXPECT_EQ(t->ops[0].input_dims[0], (std::vector<int64_t>{8, 4096}));
  EXPECT_EQ(t->ops[0].input_dims[1], (std::vector<int64_t>{4096, 3072}));
  EXPECT_EQ(t->ops[0].input_types, (std::vector<std::string>{"c10::BFloat16", "c10::BFloat16"}));
}

TEST(KinetoTraceTest, ClearErrorsForWhatIsNotAKinetoTrace) {
  const std::string text = kTrace;
  auto cut = ParseKinetoTrace(text.substr(0, text.size() / 2), "cut.json");
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.status().message().find("cut.json: the JSON text stops at byte"), std::string::npos)
      << cut.status().message();
  auto garbage = ParseKinetoTrace("PK\x03\x04 not json", "x.zip");
  ASSERT_FALSE(garbage.ok());
  EXPECT_NE(garbage.status().message().find("x.zip: not JSON at byte"), std::string::npos)
      << garbage.status().message();
  auto other = ParseKinetoTrace(R"({"events": []})", "other.json");
  ASSERT_FALSE(other.ok());
  EXPECT_NE(other.status().message().find("no \"traceEvents\" array"), std::string::npos);
  auto cpu_only = ParseKinetoTrace(R"({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "a", "ts": 1, "dur": 1}]})",
                                   "cpu.json");
  ASSERT_FALSE(cpu_only.ok());
  EXPECT_NE(cpu_only.status().message().find("no GPU kernels"), std::string::npos);
  EXPECT_EQ(ReadKinetoTrace("/nonexistent/trace.json").status().code(), StatusCode::kNotFound);
}

std::string TempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("specsim_kineto_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

TEST(KinetoTraceTest, ReadsGzipAndPlainFilesAndRefusesATruncatedGzip) {
  const std::string text = kTrace;
  const std::string gz = TempPath("t.json.gz"), plain = TempPath("t.json"), cut = TempPath("cut.json.gz");
  {
    gzFile f = gzopen(gz.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
    gzclose(f);
    FILE* p = std::fopen(plain.c_str(), "wb");
    std::fwrite(text.data(), 1, text.size(), p);
    std::fclose(p);
  }
  for (const std::string& path : {gz, plain}) {
    auto t = ReadKinetoTrace(path);
    ASSERT_TRUE(t.ok()) << path << ": " << t.status().ToString();
    EXPECT_EQ(t->kernels.size(), 1u);
    EXPECT_EQ(t->path, path);
  }
  {
    const auto size = std::filesystem::file_size(gz);
    std::filesystem::copy_file(gz, cut, std::filesystem::copy_options::overwrite_existing);
    std::filesystem::resize_file(cut, size / 2);
  }
  auto t = ReadKinetoTrace(cut);
  EXPECT_FALSE(t.ok());
  for (const std::string& path : {gz, plain, cut}) std::filesystem::remove(path);
}

TEST(KinetoTraceTest, ReadsTheCommittedProfilerTrace) {
  auto t = ReadKinetoTrace(std::string(SPECSIM_SOURCE_DIR) +
                           "/traces/profiles/torch-tp2-h200-2026-11-30/default/rank0.trace.json.gz");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->rank, 0);
  EXPECT_EQ(t->world_size, 2);
  EXPECT_EQ(t->kernels.size(), 3780u);  // traces/README.md
  EXPECT_GT(t->launches.size(), 3000u);
  // Kept (IsShapeOp): 273 aten::mm, 153 aten::rms_norm and their 153 aten::_fused_rms_norm, 60
  // aten::_cudnn_attention_forward, 33 aten::argmax; every other cpu_op is counted.
  EXPECT_EQ(t->ops.size(), 273u + 153 + 153 + 60 + 33);
  EXPECT_EQ(static_cast<int64_t>(t->cpu_ops.size()), 6210);
}

}  // namespace
}  // namespace specsim::profile

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
  EXPECT_EQ(t->ignored.count("cpu_op"), 0u);  // every operator is a host call
  ASSERT_EQ(t->cpu_ops.size(), 2u);
  EXPECT_EQ(t->cpu_ops[1].name, "aten::cat");
  EXPECT_EQ(t->cpu_ops[1].start_ns, 106000);
  // aten::mm and aten::cat are kept with their shapes, and the GEMM's kernel points back to it; cat's
  // TensorList input is read as its tensors' summed elements (2 x 16), the scalar after it as 0.
  ASSERT_EQ(t->ops.size(), 2u);
  EXPECT_EQ(t->ops[1].name, "aten::cat");
  EXPECT_EQ(t->ops[1].input_list_elements, (std::vector<int64_t>{32, 0}));
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

// A trace of one valid kernel (start 10 us, 2 us) and the events of `more` (JSON objects, each
// followed by a comma).
std::string TraceWith(const std::string& more, const std::string& info = R"("rank": 0, "world_size": 1)") {
  return R"({"distributedInfo": {)" + info + R"(}, "traceEvents": [)" + more +
         R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 10, "dur": 2, "args": {"device": 0, "stream": 7,
             "correlation": 1, "grid": [4, 1, 1]}}]})";
}

std::string Kernel(const std::string& times, const std::string& args = R"("args": {"device": 0, "correlation": 2})") {
  return R"({"ph": "X", "cat": "kernel", "name": "gemm", )" + times + (args.empty() ? "" : ", " + args) + "},";
}

TEST(KinetoTraceTest, DropsKernelsWhoseDurationIsNotAFiniteNumberAtLeastZero) {
  // The campaign's -5, "nan", "inf" and 1e300 printed negative or -9.2e15 us times, exit 0.
  std::string more;
  for (const char* dur : {"-5", "\"nan\"", "\"inf\"", "1e300", "\"abc\"", "null"})
    more += Kernel(std::string(R"("ts": 5, "dur": )") + dur);
  auto t = ParseKinetoTrace(TraceWith(more), "t.json");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->kernels.size(), 1u);  // only the valid one
  EXPECT_EQ(t->kernels[0].duration_ns, 2000);
  EXPECT_EQ(t->dropped.at("kernel").at("duration not a finite number in [0, 8.64e+10] us (dur)"), 6);
}

TEST(KinetoTraceTest, DropsEventsWhoseStartIsMissingOrBroken) {
  // The campaign's traces without "ts", or with a non-numeric, negative or huge one, piled every
  // kernel at one instant.
  std::string more = Kernel(R"("dur": 3)");
  for (const char* ts : {"\"soon\"", "-1", "1e300", "true"}) more += Kernel(std::string(R"("dur": 3, "ts": )") + ts);
  more += R"({"ph": "X", "cat": "cpu_op", "name": "aten::add", "tid": 1, "dur": 1},)";
  more += R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "tid": 1, "ts": "x", "dur": 1},)";
  more += R"({"ph": "X", "cat": "user_annotation", "name": "decode", "tid": 1, "ts": -3, "dur": 1},)";
  auto t = ParseKinetoTrace(TraceWith(more), "t.json");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->kernels.size(), 1u);
  EXPECT_EQ(t->kernels[0].start_ns, 10000);
  EXPECT_EQ(t->dropped.at("kernel").at("start time missing (ts)"), 1);
  EXPECT_EQ(t->dropped.at("kernel").at("start time not a finite number in [0, 4e+15] us (ts)"), 4);
  EXPECT_EQ(t->dropped.at("cpu_op").at("start time missing (ts)"), 1);
  EXPECT_EQ(t->dropped.at("cuda_runtime").at("start time not a finite number in [0, 4e+15] us (ts)"), 1);
  EXPECT_EQ(t->dropped.at("user_annotation").at("start time not a finite number in [0, 4e+15] us (ts)"), 1);
  EXPECT_TRUE(t->cpu_ops.empty());
  EXPECT_TRUE(t->launches.empty());
  EXPECT_TRUE(t->ranges.empty());
  // Epoch microseconds (1.79e15) are a valid start.
  auto epoch = ParseKinetoTrace(TraceWith(Kernel(R"("ts": 1790857026000000, "dur": 1)")), "t.json");
  ASSERT_TRUE(epoch.ok());
  EXPECT_EQ(epoch->kernels[0].start_ns, 1790857026000000000);
}

TEST(KinetoTraceTest, DropsKernelsWithoutArgsAndNcclKernelsWithoutTheirGrid) {
  // The campaign's kernels without "args" printed a channel count of -1.
  const std::string nccl = R"j({"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(x)",
                               "ts": 5, "dur": 1, )j";
  const std::string more = Kernel(R"("ts": 5, "dur": 1)", "") + nccl + R"("args": {"correlation": 3}},)" + nccl +
                           R"("args": {"correlation": 4, "grid": [0, 1, 1]}},)" +
                           Kernel(R"("ts": 6, "dur": 1)", R"("args": {"correlation": 5})");
  auto t = ParseKinetoTrace(TraceWith(more), "t.json");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->kernels.size(), 2u);  // the non-NCCL kernel without a grid is kept (its grid is not read)
  EXPECT_EQ(t->kernels[0].grid_x, -1);
  EXPECT_EQ(t->kernels[1].grid_x, 4);
  const auto& dropped = t->dropped.at("kernel");
  EXPECT_EQ(dropped.at("no args (the kernel's device, stream, correlation, grid)"), 1);
  EXPECT_EQ(dropped.at("grid x (an NCCL kernel's channels) missing (args.grid)"), 1);
  EXPECT_EQ(dropped.at("grid x (an NCCL kernel's channels) not an integer in [1, 2147483647] (args.grid)"), 1);
  for (const auto& [why, n] : dropped) EXPECT_EQ(why.find("-1"), std::string::npos) << why;
}

TEST(KinetoTraceTest, DropsEventsWhoseIdsAreNotIntegers) {
  std::string more = Kernel(R"("ts": 5, "dur": 1)", R"("args": {"correlation": 1.5})");
  more += Kernel(R"("ts": 5, "dur": 1)", R"("args": {"External id": "abc"})");
  more += Kernel(R"("ts": 5, "dur": 1)", R"("args": {"In msg nelems": 1e300})");
  more += Kernel(R"("ts": 5, "dur": 1)", R"("args": {"Group size": 0})");
  more += R"({"ph": "X", "cat": "cpu_op", "name": "aten::add", "ts": 1, "dur": 1},)";  // no thread
  more += R"({"ph": "X", "cat": "kernel", "ts": 1, "dur": 1, "args": {}},)";           // no name
  more += R"({"ph": "X", "cat": "kernel", "name": 7, "ts": 1, "dur": 1, "args": {}},)";
  more += R"({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "tid": 1, "ts": 1, "dur": 1,
              "args": {"correlation": -2}},)";
  // An operator whose shape is read, with a dimension of 1e300: its host call is kept, its shape not.
  more += R"({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "tid": 1, "ts": 1, "dur": 1,
              "args": {"Input Dims": [[1e300, 4096], [4096, 8]]}},)";
  auto t = ParseKinetoTrace(TraceWith(more), "t.json");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->kernels.size(), 1u);
  const auto& k = t->dropped.at("kernel");
  EXPECT_EQ(k.at("correlation id not an integer in [0, 9007199254740992] (args.correlation)"), 1);
  EXPECT_EQ(k.at("External id not an integer in [0, 9007199254740992] (args.External id)"), 1);
  EXPECT_EQ(k.at("elements not an integer in [0, 1099511627776] (args.In msg nelems)"), 1);
  EXPECT_EQ(k.at("group size not an integer in [1, 65536] (args.Group size)"), 1);
  EXPECT_EQ(k.at("name missing or not text (name)"), 2);
  EXPECT_EQ(t->dropped.at("cpu_op").at("thread missing (tid)"), 1);
  EXPECT_EQ(
      t->dropped.at("cuda_runtime").at("correlation id not an integer in [0, 9007199254740992] (args.correlation)"), 1);
  EXPECT_EQ(t->dropped.at("cpu_op (shapes)").at("a dimension not an integer in [0, 2147483647] (args.Input Dims)"), 1);
  ASSERT_EQ(t->cpu_ops.size(), 1u);
  EXPECT_EQ(t->cpu_ops[0].name, "aten::mm");
  EXPECT_TRUE(t->ops.empty());
}

TEST(KinetoTraceTest, AFileWhoseKernelsAreAllDroppedSaysWhy) {
  auto t = ParseKinetoTrace(R"({"traceEvents": [)" + Kernel(R"("ts": 1, "dur": -5)") +
                                R"({"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": "nan"}]})",
                            "bad.json");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("bad.json: 2 events but no GPU kernels"), std::string::npos)
      << t.status().message();
  EXPECT_NE(t.status().message().find("all 2 kernel events dropped: duration not a finite number in [0, 8.64e+10] us "
                                      "(dur) (2)"),
            std::string::npos)
      << t.status().message();
}

TEST(KinetoTraceTest, RefusesAWorldSizeOrRankOutOfRange) {
  // The campaign's world_size of 1e9 built a billion-rank message (4 GB, then bad_alloc).
  for (const char* world : {"1e9", "0", "-2", "2.5", "\"many\""}) {
    auto t = ParseKinetoTrace(TraceWith("", std::string(R"("rank": 0, "world_size": )") + world), "w.json");
    ASSERT_FALSE(t.ok()) << world;
    EXPECT_NE(t.status().message().find("w.json: distributedInfo.world_size = "), std::string::npos)
        << t.status().message();
    EXPECT_NE(t.status().message().find("must be an integer in [1, 65536]"), std::string::npos) << t.status().message();
  }
  auto rank = ParseKinetoTrace(TraceWith("", R"("rank": -1, "world_size": 2)"), "r.json");
  ASSERT_FALSE(rank.ok());
  EXPECT_NE(rank.status().message().find("r.json: distributedInfo.rank = -1"), std::string::npos);
  auto device =
      ParseKinetoTrace(R"({"deviceProperties": [{"id": 0, "numSms": "lots"}], )" + TraceWith("").substr(1), "d.json");
  ASSERT_FALSE(device.ok());
  EXPECT_NE(device.status().message().find("d.json: deviceProperties[0].numSms = lots"), std::string::npos)
      << device.status().message();
}

void WriteGzip(const std::string& path, const std::string& text, int level = 6) {
  gzFile f = gzopen(path.c_str(), ("wb" + std::to_string(level)).c_str());
  ASSERT_NE(f, nullptr);
  gzwrite(f, text.data(), static_cast<unsigned>(text.size()));
  gzclose(f);
}

TEST(KinetoTraceTest, RefusesAFileOrItsTextPastTheBounds) {
  const std::string text = kTrace, plain = TempPath("big.json"), gz = TempPath("big.json.gz"),
                    bomb = TempPath("bomb.json.gz");
  {
    FILE* p = std::fopen(plain.c_str(), "wb");
    std::fwrite(text.data(), 1, text.size(), p);
    std::fclose(p);
  }
  WriteGzip(gz, text);
  // A gzip bomb: a valid start, then 8 MiB of spaces (compresses about 1000x).
  WriteGzip(bomb, R"({"traceEvents": [)" + std::string(8 << 20, ' ') + "]}", 9);
  TraceLimits limits;
  limits.max_file_bytes = 100;
  auto file = ReadKinetoTrace(plain, limits);
  ASSERT_FALSE(file.ok());
  EXPECT_NE(file.status().message().find(plain + ": " + std::to_string(text.size()) +
                                         " bytes, past the bound of 100 bytes on a trace file"),
            std::string::npos)
      << file.status().message();
  limits = {};
  limits.max_text_bytes = 1000;
  for (const std::string& path : {plain, gz}) {
    auto t = ReadKinetoTrace(path, limits);
    ASSERT_FALSE(t.ok()) << path;
    EXPECT_NE(t.status().message().find(path + ": its JSON text runs past 1000 bytes"), std::string::npos)
        << t.status().message();
  }
  limits = {};
  limits.expansion_allowance_bytes = 1 << 20;
  auto b = ReadKinetoTrace(bomb, limits);
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find(bomb + ": gzip expands"), std::string::npos) << b.status().message();
  EXPECT_NE(b.status().message().find("past the bound of 100x"), std::string::npos) << b.status().message();
  // The default bounds read both (the bomb's text is under 64 MiB: it parses, and has no kernels).
  EXPECT_TRUE(ReadKinetoTrace(gz).ok());
  EXPECT_NE(ReadKinetoTrace(bomb).status().message().find("no GPU kernels"), std::string::npos);
  for (const std::string& path : {plain, gz, bomb}) std::filesystem::remove(path);
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
  // aten::_cudnn_attention_forward, 33 aten::argmax and 1116 elementwise operators (IsElementwiseOp);
  // every other cpu_op is counted.
  EXPECT_EQ(t->ops.size(), 273u + 153 + 153 + 60 + 33 + 1116);
  EXPECT_EQ(static_cast<int64_t>(t->cpu_ops.size()), 6210);
  EXPECT_TRUE(t->dropped.empty());  // a real profile passes every check
}

}  // namespace
}  // namespace specsim::profile

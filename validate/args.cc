#include "validate/args.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <limits>
#include <sstream>

namespace specsim::validate {
namespace {

StatusOr<int64_t> ParseInt64(const std::string& flag, const std::string& text, int64_t lo, int64_t hi) {
  if (text.empty()) return InvalidArgument(flag + ": empty value");
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str() || *end != '\0')
    return InvalidArgument(flag + ": '" + text + "' is not an integer");
  if (v < lo || v > hi)
    return InvalidArgument(flag + ": " + text + " is outside [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return static_cast<int64_t>(v);
}

StatusOr<double> ParseDouble(const std::string& flag, const std::string& text, double lo, double hi) {
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || errno != 0 || end == text.c_str() || *end != '\0')
    return InvalidArgument(flag + ": '" + text + "' is not a number");
  if (!(v >= lo && v <= hi))
    return InvalidArgument(flag + ": " + text + " is outside [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return v;
}

}  // namespace

std::vector<std::string> SplitCommaList(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  std::istringstream in(text);
  while (std::getline(in, cur, ',')) {
    if (!cur.empty()) out.push_back(cur);
  }
  return out;
}

StatusOr<int64_t> ParseSize(const std::string& text) {
  size_t i = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  if (i == 0) return InvalidArgument("size '" + text + "' must start with digits");
  if (i > 18) return InvalidArgument("size '" + text + "' is too large");
  int64_t number = std::stoll(text.substr(0, i));
  std::string unit = text.substr(i);
  std::string u;
  for (char c : unit) u += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  int64_t mult = 0;
  if (u.empty() || u == "b")
    mult = 1;
  else if (u == "k" || u == "kb")
    mult = 1000;
  else if (u == "kib")
    mult = 1024;
  else if (u == "m" || u == "mb")
    mult = 1000000;
  else if (u == "mib")
    mult = 1LL << 20;
  else if (u == "g" || u == "gb")
    mult = 1000000000;
  else if (u == "gib")
    mult = 1LL << 30;
  else
    return InvalidArgument("size '" + text + "': unknown unit '" + unit + "' (B, K, KB, KiB, M, MB, MiB, G, GB, GiB)");
  if (number > std::numeric_limits<int64_t>::max() / mult) return InvalidArgument("size '" + text + "' overflows");
  return number * mult;
}

StatusOr<std::vector<int>> ParseIntList(const std::string& text) {
  std::vector<int> out;
  auto parts = SplitCommaList(text);
  if (parts.empty()) return InvalidArgument("empty list '" + text + "'");
  for (const auto& p : parts) {
    ASSIGN_OR_RETURN(int64_t v, ParseInt64("list", p, 0, 1 << 20));
    out.push_back(static_cast<int>(v));
  }
  return out;
}

std::string Usage() {
  return R"(usage: specsim-validate [options]
Measures the GPUs present (PCIe transfers, NCCL and custom collectives, GEMM/attention/RMSNorm
kernels, a synthetic decode loop, multi-rank host pacing, flag round trips and small reads through
mapped host memory) and writes a measurement trace
(proto/specsim/trace.proto).

  --suites LIST      pcie,collectives,kernels,decode,pacing,host_staged (default: all but host_staged,
                     which runs only when named until a GPU run has checked it)
  --out FILE.pb      trace file (default specsim-trace.pb); FILE.json is written beside it
  --no-json          do not write FILE.json
  --quick            a ~30 s run: fewer sizes, shapes and iterations
  --model LIST       models/*.textproto files (e.g. models/kimi-k2.textproto), or short names NAME for
                     models/NAME.textproto in the current directory, its parents or the source tree
                     (default llama-3.1-8b)
  --draft-model LIST EAGLE-3 heads (models/eagle3-*.textproto): each drafts for the --model its
                     eagle3.target names; other models use an approximate head (validate/README.md)
  --tp N             tensor-parallel degree for kernel shapes and decode (default: GPUs used; with
                     --suites kernels alone it may exceed them: one GPU's shapes of a TP-N deployment)
  --gpus LIST        CUDA device ordinals to use (default: all visible, at most 8)
  --iters N          timed iterations per item (default: per suite)
  --warmup N         untimed warm-up iterations per item (default: per suite)
  --max-bytes SIZE   largest transfer / collective size (default 256MiB)
  --timeout SECONDS  a collective running longer is reported as hung (default 60)
  --batch LIST       decode batch sizes (default 1,8,32)
  --context N        decode KV tokens per sequence (default 2048)
  --draft-steps S    speculative draft depth, verify N = S+1 tokens (default 3)
  --accept P         per-position draft acceptance probability (default 0.7)
  --verify-widths L  query tokens per sequence of the verify-width sweeps: attention in kernels, one
                     target forward in decode (default 1,2,4,8,16,32,64,128; each in [1, 256])
  --verify-batch L   batch sizes of the verify-width sweeps (default 1,8)
  --seed N           seed for data, weights, acceptance draws and host-cost draws (default 1234)
  --nccl-log LIST    NCCL logs (comma-separated files) of an earlier run with NCCL_DEBUG=INFO
                     NCCL_DEBUG_SUBSYS=TUNING NCCL_DEBUG_FILE=...: the algorithm, protocol and channels
                     NCCL picked for each op and size are recorded on the NCCL collective items
  --rank-threads M   free (default): the OS places the ranks' host threads; pinned: rank r's threads
                     run on one core local to GPU r (sysfs local_cpulist), a physical core per rank
  --pacing-rounds N  the pacing suite's layer loops run as N interleaved rounds, in [1, 64] (default
                     4): each round times every loop for its share of --iters, in order in even
                     rounds and in reverse in odd ones, on newly started rank threads, so that a slow
                     drift of the host's speed or one thread placement falls on every loop alike
  --custom-sizes L   host_staged: sizes of the custom allreduce rank-group items (default
                     1KiB,16KiB,64KiB,256KiB; each a multiple of 16 bytes in [16, 4MiB])
  --custom-variants L host_staged: which custom allreduce variants run (default all): packed,
                     flagline, vllmflags, thp, hostalloc, nc, hostalloc-nc, fence, fence-flagline
  --help             this text
NCCL variables (NCCL_ALGO, NCCL_PROTO, NCCL_MIN_NCHANNELS, NCCL_MAX_NCHANNELS, NCCL_P2P_LEVEL,
NCCL_P2P_DISABLE, ...) are taken from the environment and recorded; NCCL_NVLS_ENABLE=0 is set when unset.
)";
}

namespace {

// The list-valued options (comma-separated); false when `flag` is not one of them.
StatusOr<bool> ApplyListFlag(const std::string& flag, const std::string& value, Options& o) {
  if (flag == "--suites") {
    o.suites = SplitCommaList(value);
    if (o.suites.empty()) return InvalidArgument("--suites: empty list");
    for (const auto& s : o.suites) {
      if (const auto& all = AllSuites(); std::find(all.begin(), all.end(), s) == all.end())
        return InvalidArgument("--suites: unknown suite '" + s +
                               "' (pcie, collectives, kernels, decode, pacing, host_staged)");
    }
  } else if (flag == "--model") {
    o.models = SplitCommaList(value);
    if (o.models.empty()) return InvalidArgument("--model: empty list");
  } else if (flag == "--draft-model") {
    o.draft_models = SplitCommaList(value);
    if (o.draft_models.empty()) return InvalidArgument("--draft-model: empty list");
  } else if (flag == "--gpus") {
    auto l = ParseIntList(value);
    if (!l.ok()) return l.status().Annotate("--gpus");
    o.gpus = *l;
    if (o.gpus.size() > 8) return InvalidArgument("--gpus: at most 8 GPUs");
    std::vector<int> sorted = o.gpus;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end())
      return InvalidArgument("--gpus: a GPU is listed twice");
  } else if (flag == "--batch") {
    auto l = ParseIntList(value);
    if (!l.ok()) return l.status().Annotate("--batch");
    for (int b : *l)
      if (b < 1 || b > 1024) return InvalidArgument("--batch: each in [1, 1024]");
    o.decode_batches = *l;
  } else if (flag == "--verify-widths" || flag == "--verify-batch") {
    auto l = ParseIntList(value);
    if (!l.ok()) return l.status().Annotate(flag);
    const int hi = flag == "--verify-widths" ? 256 : 1024;
    for (int v : *l)
      if (v < 1 || v > hi)
        return InvalidArgument(flag + ": each in [1, " + std::to_string(hi) + "], got " + std::to_string(v));
    (flag == "--verify-widths" ? o.verify_widths : o.verify_batches) = *l;
  } else if (flag == "--custom-sizes") {
    o.custom_sizes.clear();
    for (const std::string& item : SplitCommaList(value)) {
      auto size = ParseSize(item);
      if (!size.ok()) return size.status().Annotate("--custom-sizes");
      if (*size < 16 || *size > (4 << 20) || *size % 16 != 0)
        return InvalidArgument("--custom-sizes: " + item + " is not a multiple of 16 bytes in [16, 4MiB]");
      o.custom_sizes.push_back(*size);
    }
    if (o.custom_sizes.empty()) return InvalidArgument("--custom-sizes: empty list");
    std::sort(o.custom_sizes.begin(), o.custom_sizes.end());
    o.custom_sizes.erase(std::unique(o.custom_sizes.begin(), o.custom_sizes.end()), o.custom_sizes.end());
  } else if (flag == "--custom-variants") {
    o.custom_variants = SplitCommaList(value);
    if (o.custom_variants.empty()) return InvalidArgument("--custom-variants: empty list");
    for (const std::string& v : o.custom_variants) {
      const auto& all = CustomVariantNames();
      if (std::find(all.begin(), all.end(), v) == all.end()) {
        std::string allowed;
        for (const std::string& a : all) allowed += (allowed.empty() ? "" : ", ") + a;
        return InvalidArgument("--custom-variants: unknown variant '" + v + "' (" + allowed + ")");
      }
    }
  } else if (flag == "--nccl-log") {
    o.nccl_logs = SplitCommaList(value);
    if (o.nccl_logs.empty()) return InvalidArgument("--nccl-log: empty list");
  } else {
    return false;
  }
  return true;
}

// The single-valued options.
Status ApplyScalarFlag(const std::string& flag, const std::string& value, Options& o) {
  if (flag == "--out") {
    if (value.empty()) return InvalidArgument("--out: empty file name");
    o.out = value;
  } else if (flag == "--tp") {
    ASSIGN_OR_RETURN(int64_t v, ParseInt64(flag, value, 0, 8));
    o.tp = static_cast<int>(v);
  } else if (flag == "--iters") {
    ASSIGN_OR_RETURN(int64_t v, ParseInt64(flag, value, 1, 100000));
    o.iterations = static_cast<int>(v);
  } else if (flag == "--warmup") {
    ASSIGN_OR_RETURN(int64_t v, ParseInt64(flag, value, 0, 10000));
    o.warmup = static_cast<int>(v);
  } else if (flag == "--seed") {
    ASSIGN_OR_RETURN(int64_t v, ParseInt64(flag, value, 0, std::numeric_limits<int64_t>::max()));
    o.seed = static_cast<uint64_t>(v);
  } else if (flag == "--max-bytes") {
    auto s = ParseSize(value);
    if (!s.ok()) return s.status().Annotate("--max-bytes");
    if (*s < 1024) return InvalidArgument("--max-bytes: at least 1KiB");
    o.max_bytes = *s;
  } else if (flag == "--timeout") {
    ASSIGN_OR_RETURN(o.collective_timeout_s, ParseDouble(flag, value, 0.1, 3600));
  } else if (flag == "--context") {
    ASSIGN_OR_RETURN(o.decode_context, ParseInt64(flag, value, 1, 1 << 20));
  } else if (flag == "--draft-steps") {
    ASSIGN_OR_RETURN(int64_t v, ParseInt64(flag, value, 1, 16));
    o.draft_steps = static_cast<int>(v);
  } else if (flag == "--accept") {
    ASSIGN_OR_RETURN(o.acceptance_p, ParseDouble(flag, value, 0.0, 1.0));
  } else if (flag == "--rank-threads") {
    if (value != "free" && value != "pinned")
      return InvalidArgument("--rank-threads: '" + value + "' is not free or pinned");
    o.rank_threads = value;
  } else if (flag == "--pacing-rounds") {
    ASSIGN_OR_RETURN(int64_t v, ParseInt64(flag, value, 1, 64));
    o.pacing_rounds = static_cast<int>(v);
  }
  return Status::Ok();
}

}  // namespace

StatusOr<Options> ParseArgs(const std::vector<std::string>& args) {
  Options o;
  const std::vector<std::string> bool_flags{"--quick", "--help", "-h", "--no-json"};
  const std::vector<std::string> value_flags{"--suites",
                                             "--out",
                                             "--model",
                                             "--draft-model",
                                             "--tp",
                                             "--gpus",
                                             "--iters",
                                             "--warmup",
                                             "--seed",
                                             "--max-bytes",
                                             "--timeout",
                                             "--batch",
                                             "--context",
                                             "--draft-steps",
                                             "--accept",
                                             "--nccl-log",
                                             "--verify-widths",
                                             "--verify-batch",
                                             "--rank-threads",
                                             "--pacing-rounds",
                                             "--custom-sizes",
                                             "--custom-variants"};
  auto contains = [](const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  for (size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i];
    std::string value;
    bool has_value = false;
    if (auto eq = flag.find('='); flag.rfind("--", 0) == 0 && eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
      has_value = true;
    }
    if (contains(bool_flags, flag)) {
      if (has_value) return InvalidArgument(flag + " takes no value");
      if (flag == "--quick")
        o.quick = true;
      else if (flag == "--no-json")
        o.no_json = true;
      else
        o.help = true;
      continue;
    }
    if (!contains(value_flags, flag)) return InvalidArgument("unknown option '" + flag + "' (see --help)");
    if (!has_value) {
      if (i + 1 >= args.size()) return InvalidArgument(flag + " needs a value");
      value = args[++i];
    }
    ASSIGN_OR_RETURN(bool listed, ApplyListFlag(flag, value, o));
    if (!listed) RETURN_IF_ERROR(ApplyScalarFlag(flag, value, o));
  }
  return o;
}

}  // namespace specsim::validate

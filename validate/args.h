// Command-line options of specsim-validate and their parser (no CLI library on the GPU machine).
//
// Syntax: `--name value` or `--name=value`; boolean flags take no value. Lists are comma
// separated. Sizes take a unit: B, K/KB (1e3), KiB (1024), M/MB, MiB, G/GB, GiB; a bare number is
// bytes. Unknown flags, missing values and out-of-range numbers are errors naming the flag.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "validate/status.h"

namespace specsim::validate {

inline const std::vector<std::string>& AllSuites() {
  static const std::vector<std::string> k{"pcie", "collectives", "kernels", "decode", "pacing", "host_staged"};
  return k;
}

// What runs without --suites: every suite but host_staged, which has not run on a GPU yet (its
// kernels spin on flags in host memory: it runs when asked for until a run has checked it).
inline std::vector<std::string> DefaultSuites() { return {"pcie", "collectives", "kernels", "decode", "pacing"}; }

struct Options {
  std::vector<std::string> suites = DefaultSuites();  // --suites
  std::string out = "specsim-trace.pb";               // --out; FILE.json is written beside it
  bool quick = false;                                 // --quick: ~30 s run
  // --model: models/*.textproto paths or short names (NAME = models/NAME.textproto, validate/models.h)
  std::vector<std::string> models{"llama-3.1-8b"};
  std::vector<std::string> draft_models;      // --draft-model: EAGLE-3 heads (models/eagle3-*.textproto)
  int tp = 0;                                 // --tp; 0 = every GPU used
  std::vector<int> gpus;                      // --gpus; empty = every visible GPU (max 8)
  int iterations = 0;                         // --iters; 0 = per-suite default
  int warmup = -1;                            // --warmup; -1 = per-suite default
  uint64_t seed = 1234;                       // --seed
  int64_t max_bytes = 256LL << 20;            // --max-bytes: largest transfer / collective
  double collective_timeout_s = 60.0;         // --timeout: a collective taking longer hangs
  std::vector<int> decode_batches{1, 8, 32};  // --batch
  int64_t decode_context = 2048;              // --context: KV tokens per sequence
  int draft_steps = 3;                        // --draft-steps (EAGLE topk=1: N = S + 1)
  // Verify-width sweeps (kernels: attention; decode: one target forward over batch x q tokens):
  // query tokens per sequence and the batches they run at.
  std::vector<int> verify_widths{1, 2, 4, 8, 16, 32, 64, 128};  // --verify-widths
  std::vector<int> verify_batches{1, 8};                        // --verify-batch
  double acceptance_p = 0.7;                                    // --accept: per-position acceptance
  // --nccl-log: NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING logs of an earlier run with the same NCCL
  // environment and sizes; their picks are written into the NCCL collective items (nccl_log.h).
  std::vector<std::string> nccl_logs;
  // --rank-threads: "free" (the OS places the ranks' host threads) or "pinned" (rank r's threads on
  // one core local to GPU r, rank_threads.h).
  std::string rank_threads = "free";
  // --pacing-rounds: the pacing suite's layer loops are timed in this many interleaved rounds
  // (pacing.h PlanRounds): every case a block of iterations per round, on freshly started threads.
  int pacing_rounds = 4;
  // host_staged: sizes of the custom allreduce rank-group items (--custom-sizes; empty: 1K, 16K,
  // 64K, 256K) and which variants run (--custom-variants; empty: all, kCustomVariants).
  std::vector<int64_t> custom_sizes;
  std::vector<std::string> custom_variants;
  bool no_json = false;  // --no-json
  bool help = false;     // --help
};

// REQUIRES: args excludes the program name.
StatusOr<Options> ParseArgs(const std::vector<std::string>& args);
std::string Usage();

// "64KiB" -> 65536, "1MB" -> 1000000, "4" -> 4. Error on junk, negative or overflow.
StatusOr<int64_t> ParseSize(const std::string& text);
// The host_staged suite's custom allreduce variants, by the name --custom-variants takes.
inline const std::vector<std::string>& CustomVariantNames() {
  static const std::vector<std::string> names{"packed", "flagline",     "vllmflags", "thp",           "hostalloc",
                                              "nc",     "hostalloc-nc", "fence",     "fence-flagline"};
  return names;
}
StatusOr<std::vector<int>> ParseIntList(const std::string& text);
std::vector<std::string> SplitCommaList(const std::string& text);

}  // namespace specsim::validate

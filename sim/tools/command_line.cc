// Every command's flags, registered with CLI11, and the command line that runs one of them. The
// only translation units that compile CLI11 are this one and specsim_main.cc (its inline code
// costs seconds per file).
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <unistd.h>

#include <iostream>
#include <memory>
#include <string>

#include "sim/core/check.h"
#include "sim/io/hardware_loader.h"
#include "sim/tools/simulate_command.h"
#include "sim/tools/sweep_command.h"
#include "sim/tools/collective_command.h"
#include "sim/scenario/scenario.h"
#include "sim/tools/advise_command.h"
#include "sim/tools/calibrate_command.h"
#include "sim/tools/compare_command.h"
#include "sim/tools/hardware_from_topo_command.h"
#include "sim/tools/hardware_from_trace_command.h"
#include "sim/tools/nccl_transport_command.h"
#include "sim/tools/import_profile_command.h"
#include "specsim/model.pb.h"
#include "specsim/range.pb.h"
#include "specsim/scenario.pb.h"

namespace specsim::tools {
namespace {

// The most a config field's range (its proto annotation) allows, e.g. model.proto num_layers.
std::string MaxOf(const google::protobuf::Descriptor* message, const char* field) {
  const google::protobuf::FieldDescriptor* f = message->FindFieldByName(field);
  SPECSIM_CHECK(f != nullptr && f->options().HasExtension(config::range)) << message->name() << "." << field;
  return fmt::format("{:.0f}", f->options().GetExtension(config::range).max());
}

// What any input may ask for, as the loaders and commands bound it (work and memory grow with each):
// the help footer of the commands that read configs. Past a bound: exit 2 naming the field or flag.
std::string InputBounds() {
  return fmt::format(
      "Bounds on the work an input may ask for (past one: exit 2 naming the file and field, or the flag): a "
      "hardware file at most {} GPUs (what a command does grows with the GPUs it uses); a model at most {} layers; "
      "tensor_parallel at most {}; speculation at most {} steps, topk {}, {} draft tokens and {} simulated cycles; "
      "a sweep at most {} points; compare --seeds at most {}. Every config field's range is its annotation in "
      "proto/specsim/*.proto.",
      io::kMaxHardwareGpus, MaxOf(config::Model::descriptor(), "num_layers"),
      MaxOf(config::Parallelism::descriptor(), "tensor_parallel"),
      MaxOf(config::Speculation::descriptor(), "num_steps"), MaxOf(config::Speculation::descriptor(), "topk"),
      MaxOf(config::Speculation::descriptor(), "num_draft_tokens"), MaxOf(config::Speculation::descriptor(), "cycles"),
      kSweepPointsMax, kMaxCompareSeeds);
}

}  // namespace

void AddSimulateCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<SimulateFlags>();
  CLI::App* cmd = app.add_subcommand(
      "simulate",
      "Predict baseline and speculative tokens/s of a scenario (hardware + model + serving + speculation + "
      "allreduce choice), tau, speedup and where the cycle's time goes. Without SCENARIO: the embedded default " +
          std::string(scenario::kDefaultScenario) + ".");
  cmd->add_option("scenario", flags->scenario, "scenario textproto (configs/scenarios/...)");
  cmd->add_option("--set", flags->set, "override a scenario field: --set serving.batch_size=8 (repeatable)");
  cmd->add_option("--model", flags->model,
                  "target model: a models/*.textproto or a Hugging Face config.json (llama, mistral, mixtral, qwen2, "
                  "qwen2_moe, qwen3, qwen3_moe, deepseek_v2, deepseek_v3, kimi_k2, gpt_oss, glm4_moe), in the formats "
                  "its checkpoint stores unless --set serving.weight_dtype / expert_weight_dtype / weight_source is "
                  "given");
  cmd->add_option("--draft", flags->draft,
                  "draft: an EAGLE-3 head or a standalone draft model (speculation.method DRAFT_MODEL), a "
                  "models/*.textproto or its Hugging Face config.json (replaces speculation.draft_model)");
  cmd->add_option("--calibration", flags->calibration, "calibration textproto (overrides the scenario's)");
  cmd->add_flag("--json", flags->json, "print JSON");
  cmd->add_flag("--compare-algos", flags->compare_algos,
                "add a row per allreduce choice, and a row per capture mode (full, piecewise, eager per phase) and "
                "host-sync choice");
  cmd->add_flag("--memory", flags->memory, "print the per-GPU memory plan and exit (exit code 3 if it does not fit)");
  cmd->add_option("--trace", flags->trace,
                  "write a Perfetto timeline of one cycle (one step without speculation): every rank's host "
                  "thread and GPU stream");
  cmd->footer(InputBounds());
  cmd->callback([flags, exit_code] { *exit_code = RunSimulate(*flags, std::cout, std::cerr); });
}

void AddSweepCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<SweepFlags>();
  CLI::App* cmd = app.add_subcommand(
      "sweep", "Simulate the cross product of --vary'd scenario fields on all cores; write CSV and optionally an SVG.");
  cmd->add_option("scenario", flags->scenario, "scenario textproto (default: the embedded default scenario)");
  cmd->add_option("--vary", flags->vary, "field.path=v1,v2,... (repeatable; the cross product is simulated)");
  cmd->add_option("--vary-together", flags->vary_together,
                  "field.path=v1,v2,... field2.path=w1,w2,...: fields varied in lockstep, one axis (repeatable), "
                  "e.g. speculation.num_steps=1,2,3 speculation.num_draft_tokens=2,3,4")
      ->expected(2, 16);
  cmd->add_option("--set", flags->set, "fixed override field.path=value (repeatable)");
  cmd->add_option("--calibration", flags->calibration, "calibration textproto");
  cmd->add_option("--out", flags->out, "CSV file (default: stdout); JSON with --json");
  cmd->add_flag("--json", flags->json, "print the rows as JSON instead of CSV");
  cmd->add_option("--svg", flags->svg, "draw tokens/s against a varied field into this SVG file");
  cmd->add_option("--x", flags->x, "the varied field on the SVG's x axis (default: the first --vary)");
  cmd->add_option("--threads", flags->threads, "worker threads (default: all cores)");
  cmd->add_flag("!--no-progress", flags->progress, "no progress bar on stderr (it shows only on a terminal)");
  cmd->add_flag("--yes", flags->yes, "run more than 10000 points (at most 1000000 per process, --yes or not)");
  cmd->add_option("--shard", flags->shard,
                  "I/N: run block I of N (0 <= I < N) of the points, in their fixed order, for a job array; "
                  "join the shards' CSVs with --merge");
  cmd->add_option("--merge", flags->merge,
                  "shard CSVs (from --shard) to check and join into the unsharded sweep's CSV (with --out)")
      ->expected(1, -1);
  cmd->footer(InputBounds());
  cmd->callback([flags, exit_code] {
    // A progress bar redraws its line with '\r': only on a terminal, never into a log.
    flags->progress = flags->progress && ::isatty(STDERR_FILENO);
    *exit_code = RunSweep(*flags, std::cout, std::cerr);
  });
}

void AddCollectiveCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<CollectiveFlags>();
  CLI::App* cmd = app.add_subcommand(
      "collective",
      "Simulate a collective on a hardware config: time, algbw and busbw per size (nccl-tests units), the "
      "algorithm/protocol/channels used, and the busiest link.");
  cmd->add_option("--hardware", flags->hardware, "hardware textproto (bundled configs/... paths work anywhere)")
      ->capture_default_str();
  cmd->add_option("--op", flags->op, "allreduce | allgather | reducescatter | alltoall")->capture_default_str();
  cmd->add_option("--algo", flags->algo,
                  "ring | tree | oneshot | twoshot | direct (alltoall) | auto (NCCL's pick) | all (every algorithm)")
      ->capture_default_str();
  cmd->add_option("--proto", flags->proto, "ll | simple (NCCL_PROTO); default: NCCL's choice");
  cmd->add_option("--channels", flags->channels, "channels (rings) to use; default: NCCL's choice");
  cmd->add_option("--min-channels", flags->min_channels, "NCCL_MIN_NCHANNELS");
  cmd->add_option("--max-channels", flags->max_channels, "NCCL_MAX_NCHANNELS");
  cmd->add_option("--gpus", flags->gpus, "GPU indices, e.g. 0,1,2,3 or 0-3; default: all");
  cmd->add_option("--p2p-level", flags->p2p_level, "pix | pxb | phb | sys (NCCL_P2P_LEVEL); default: NCCL's");
  cmd->add_flag("--p2p-disable", flags->p2p_disable, "NCCL_P2P_DISABLE=1: SHM through host memory everywhere");
  CLI::Option* sizes =
      cmd->add_option("--sizes", flags->sizes, "sizes: 1K:256M (powers of 2), or a list 4K,1M")->capture_default_str();
  cmd->add_option("-b,--minbytes", flags->min_bytes, "nccl-tests' minimum size (e.g. 8, 1K, 32M); with -e, -f or -i");
  cmd->add_option("-e,--maxbytes", flags->max_bytes, "nccl-tests' maximum size");
  cmd->add_option("-f,--stepfactor", flags->step_factor, "nccl-tests' multiplication factor between sizes");
  cmd->add_option("-i,--stepbytes", flags->step_bytes, "nccl-tests' fixed increment between sizes (default 1M)");
  cmd->add_option("-d,--dtype", flags->dtype,
                  "element type, nccl-tests' names: int8 uint8 int32 uint32 int64 uint64 half float double bfloat16 "
                  "f8e4m3 f8e5m2 (aliases fp32 bf16 fp16 fp8)")
      ->capture_default_str();
  cmd->add_option("--redop", flags->redop,
                  "reduction printed in the redop column: sum prod max min avg (nccl-tests' -o; the time does "
                  "not depend on it)")
      ->capture_default_str();
  cmd->add_option("--custom-blocks", flags->custom_blocks,
                  "one-shot/two-shot thread blocks (0: vLLM's rule, min(36, 16-byte packs / 512))")
      ->capture_default_str();
  cmd->add_option("--custom-launch-us", flags->custom_launch_us,
                  "one-shot/two-shot kernel launch time before the barrier (0: inside a CUDA graph)")
      ->capture_default_str();
  cmd->add_flag("--json", flags->json, "print JSON: {\"rows\":[...]}");
  cmd->add_option("--calibration", flags->calibration,
                  "calibration textproto (specsim calibrate): its fabric and NCCL parts");
  cmd->add_option("--trace", flags->trace, "write a Chrome/Perfetto trace of every flow and link");
  cmd->footer(InputBounds());
  cmd->callback([flags, sizes, exit_code] {
    flags->sizes_given = sizes->count() > 0;
    *exit_code = RunCollective(*flags, std::cout, std::cerr);
  });
}

void AddAdviseCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<AdviseFlags>();
  CLI::App* cmd = app.add_subcommand("advise",
                                     "Search speculation settings, allreduce choice, CUDA graphs / capture mode / host "
                                     "syncs and TP/EP for the fastest configuration of a model "
                                     "on a box; print the top configurations, why each family of alternatives loses, "
                                     "and SGLang flags for the winner.");
  cmd->add_option("--scenario", flags->scenario, "base scenario (the other flags override it)");
  cmd->add_option("--hardware", flags->hardware, "hardware textproto");
  cmd->add_option("--model", flags->model, "model textproto or Hugging Face config.json");
  cmd->add_option("--draft", flags->draft,
                  "draft: an EAGLE-3 head (models/eagle3-*.textproto) or a standalone draft model (e.g. "
                  "models/llama-3.2-1b.textproto: searched as DRAFT_MODEL chains), or a Hugging Face config.json");
  CLI::Option* tp = cmd->add_option("--tp", flags->tp, "tensor-parallel degree (default: every GPU)");
  CLI::Option* batch = cmd->add_option("--batch", flags->batch, "concurrent sequences (default 1)");
  CLI::Option* context =
      cmd->add_option("--context", flags->context, "tokens in each sequence's KV cache (default 4096)");
  cmd->add_option("--weight-dtype", flags->weight_dtype,
                  "BF16 | FP8 | FP4 | INT4 (none of the dtype flags: the formats the model's checkpoint stores)");
  cmd->add_option("--expert-weight-dtype", flags->expert_weight_dtype, "routed experts: BF16 | FP8 | FP4 | INT4");
  cmd->add_option("--kv-dtype", flags->kv_dtype, "BF16 | FP8");
  cmd->add_option("--acceptance", flags->acceptance,
                  "per-position acceptance of the draft's top-1 token, e.g. 0.85,0.75,0.65");
  cmd->add_option("--accept-lengths", flags->accept_lengths,
                  "accept-length histogram measured with the scenario's speculation shape: counts of cycles that "
                  "accepted 0, 1, ..., num_steps draft tokens");
  cmd->add_option("--calibration", flags->calibration, "calibration textproto");
  cmd->add_flag("--exhaustive", flags->exhaustive, "evaluate the whole space instead of pruning");
  cmd->add_option("--threads", flags->threads, "worker threads (default: all cores)");
  cmd->add_option("--top", flags->top, "configurations to list")->capture_default_str();
  cmd->add_flag("--json", flags->json, "print JSON");
  cmd->add_flag("!--no-progress", flags->progress, "no progress on stderr (it shows only on a terminal)");
  cmd->footer(InputBounds());
  cmd->callback([flags, exit_code, tp, batch, context] {
    // The progress line redraws itself with '\r': only on a terminal, never into a log.
    flags->progress = flags->progress && ::isatty(STDERR_FILENO);
    flags->tp_given = tp->count() > 0;
    flags->batch_given = batch->count() > 0;
    flags->context_given = context->count() > 0;
    *exit_code = RunAdvise(*flags, std::cout, std::cerr);
  });
}

void AddCalibrateCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<CalibrateFlags>();
  CLI::App* cmd = app.add_subcommand("calibrate", "fit the simulator's parameters to measurement traces of one box");
  cmd->add_option("traces", flags->traces, "traces written by specsim-validate (.pb), all of one box: fitted together")
      ->required();
  cmd->add_option("-o,--output", flags->output, "calibration textproto to write");
  cmd->add_option("--hardware", flags->hardware, "hardware textproto; default: built from the trace");
  cmd->add_flag("--json", flags->json, "print the fitted values as JSON");
  cmd->add_option("--exclude", flags->exclude,
                  "leave out of the fit the items whose name matches this regular expression (ECMAScript, searched; "
                  "names as compare prints them, prefixed with the file's stem when several traces are given), "
                  "e.g. '/q(16|32|64)/' to hold out wide verify passes");
  cmd->footer(InputBounds());
  cmd->callback([flags, exit_code] { *exit_code = RunCalibrate(*flags, std::cout, std::cerr); });
}

void AddCompareCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<CompareFlags>();
  CLI::App* cmd = app.add_subcommand("compare", "re-simulate every item of a trace: predicted against measured");
  cmd->add_option("trace", flags->trace, "trace written by specsim-validate (.pb)")->required();
  cmd->add_option("--calibration", flags->calibration, "calibration textproto (specsim calibrate)");
  cmd->add_option("--hardware", flags->hardware, "hardware textproto; default: built from the trace");
  cmd->add_option("--holdout", flags->holdout,
                  "fit on the rest, report errors on this fraction of the items (median over seeds 1..--seeds)");
  cmd->add_option("--holdout-by", flags->holdout_by,
                  "what --holdout sets apart: item (single items) or family (whole families: an item's name "
                  "without its last component, e.g. one GEMM weight over every m)")
      ->check(CLI::IsMember({"item", "family"}))
      ->capture_default_str();
  CLI::Option* seed = cmd->add_option("--seed", flags->seed, "one hold-out split of this seed instead of seeds 1..N");
  CLI::Option* seeds = cmd->add_option("--seeds", flags->seeds, "hold-out summary over split seeds 1..N (N <= 1000)")
                           ->capture_default_str();
  seed->excludes(seeds);
  cmd->add_option("--svg", flags->svg, "write predicted against measured (log-log) to this SVG file");
  auto max_error = std::make_shared<double>(0);
  CLI::Option* max_error_opt = cmd->add_option(
      "--max-error", *max_error,
      "exit 1 when a suite's median absolute error (median over the seeds) exceeds this fraction (0: any error; "
      "finite, >= 0)");
  cmd->add_flag("--json", flags->json, "print JSON");
  cmd->footer(InputBounds());
  cmd->callback([flags, seed, max_error, max_error_opt, exit_code] {
    flags->seed_given = seed->count() > 0;
    if (max_error_opt->count() > 0) flags->max_error = *max_error;
    *exit_code = RunCompare(*flags, std::cout, std::cerr);
  });
}

void AddHardwareFromTopoCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<HardwareFromTopoFlags>();
  CLI::App* cmd = app.add_subcommand(
      "hardware-from-topo",
      "write a hardware config from `nvidia-smi topo -m` (and `nvidia-smi -q` for the GPU and its link)");
  cmd->add_option("topo", flags->topo, "the output of `nvidia-smi topo -m`, saved to a file")->required();
  cmd->add_option("--smi", flags->smi,
                  "the output of `nvidia-smi -q`, or of `nvidia-smi --query-gpu=name,pcie.link.gen.max,"
                  "pcie.link.width.max --format=csv`: the GPUs' name and each GPU's PCIe link (one line or block per "
                  "GPU, in topo -m's order)");
  cmd->add_option("--gpu", flags->gpu, "the GPU's name as nvidia-smi prints it (replaces --smi's)");
  cmd->add_option("--name", flags->name, "config name (default: <gpu>-<n>x-topo)");
  cmd->add_option("-o,--output", flags->output, "hardware textproto to write (default: print)");
  cmd->footer(InputBounds());
  cmd->callback([flags, exit_code] { *exit_code = RunHardwareFromTopo(*flags, std::cout, std::cerr); });
}

void AddHardwareFromTraceCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<HardwareFromTraceFlags>();
  CLI::App* cmd =
      app.add_subcommand("hardware-from-trace", "write a hardware config for the box a trace was measured on");
  cmd->add_option("trace", flags->trace, "trace written by specsim-validate (.pb)")->required();
  cmd->add_option("-o,--output", flags->output, "hardware textproto to write (default: print)");
  cmd->add_option("--name", flags->name, "config name (default: <gpu>-<n>x)");
  cmd->add_flag("--json", flags->json,
                "print the config as JSON (protobuf's JSON mapping; with -o, also what was written)");
  cmd->callback([flags, exit_code] { *exit_code = RunHardwareFromTrace(*flags, std::cout, std::cerr); });
}

void AddNcclTransportCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<NcclTransportFlags>();
  CLI::App* cmd = app.add_subcommand(
      "nccl-transport",
      "fit NCCL's per-step protocol work on measured calls by transport, and check it predicts a transport it was "
      "not fitted on");
  cmd->add_option("traces", flags->traces,
                  "traces written by specsim-validate (.pb) of one box, with NCCL calls over several transports "
                  "(e.g. NVLink, and NCCL_P2P_DISABLE=1 for SHM)")
      ->required();
  cmd->add_option("--hardware", flags->hardware, "hardware textproto; default: built from the trace");
  cmd->add_option("--calibration", flags->calibration,
                  "the box's calibration (its host costs); its nccl.protocols are dropped, as on an uncalibrated box");
  cmd->add_option("--max-bytes", flags->max_bytes,
                  "largest call fitted and checked (the latency regime), e.g. 16K, 64K, 1M")
      ->capture_default_str();
  cmd->add_option("--max-error", flags->max_error,
                  "exit 1 when a transfer's median absolute error exceeds this fraction (default: no limit)");
  cmd->add_flag("--json", flags->json, "print JSON");
  cmd->callback([flags, exit_code] { *exit_code = RunNcclTransport(*flags, std::cout, std::cerr); });
}

void AddImportProfileCommand(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<ImportProfileFlags>();
  CLI::App* cmd = app.add_subcommand(
      "import-profile", "read PyTorch profiler (Kineto) traces of every rank: passes, kernel classes, NCCL waits");
  cmd->add_option("paths", flags->paths, "trace files (.json / .json.gz, one per rank) or directories holding them")
      ->required();
  cmd->add_option("-o,--output", flags->output, "write the measurement trace (.pb) for compare / calibrate");
  cmd->add_flag("--json", flags->json, "print JSON");
  cmd->add_option("--names", flags->names,
                  "built-in pass name map: sglang, vllm, pytorch, auto (default: vllm's scopes, then "
                  "pytorch's words decode / verify / draft / draft_extend / extend), none");
  cmd->add_option("--name-map", flags->name_map,
                  "PassNameMap textproto (proto/specsim/pass_names.proto): rules tried before the built-in map");
  cmd->add_option("--phases", flags->phases,
                  "exact host range names that mark passes, instead of --names' map (none: no range; "
                  "every CUDA-graph replay is a pass, as are replays outside the ranges anyway)");
  cmd->add_option("--nccl-env", flags->nccl_env,
                  "NCCL_NAME=value: an NCCL variable the run had (the profile does not record them), e.g. "
                  "NCCL_P2P_DISABLE=1; repeatable. The variables the predictors read are checked: NCCL_ALGO "
                  "ring|tree, NCCL_PROTO ll|ll128|simple, NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS 1..64, "
                  "NCCL_P2P_LEVEL pix|pxb|phb|sys, NCCL_P2P_DISABLE / NCCL_SHM_DISABLE 0|1");
  cmd->add_option("--scenario", flags->scenario, "predict every pass group from this scenario (textproto)");
  cmd->add_option("--set", flags->set, "field.path=value: override a scenario field (repeatable)");
  cmd->add_option("--calibration", flags->calibration, "calibration textproto replacing the scenario's");
  cmd->add_option("--run-prefix", flags->run_prefix, "prefix of host ranges that name a run (default specsim.run/)");
  cmd->add_option("--call-ranges", flags->call_ranges,
                  "turn only the eager calls made inside host ranges whose name matches this regular expression "
                  "(ECMAScript, searched) into kernel items (GEMM, attention, norm, argmax, elementwise), e.g. "
                  "'q(1|2|4|8)$' to fit on narrow verify passes and hold out the rest");
  cmd->footer(
      "Bounds on each trace file: 1 GiB as stored, 2 GiB of JSON text after gunzip, and a gzip file's text at "
      "most 100x the compressed bytes read once past its first 64 MiB (Kineto's JSON compresses 10-20x): past "
      "one, exit 2 naming the file and the bound. Every field read is checked; an event whose field fails "
      "(a time not a finite number >= 0, an id not an integer, a kernel without args) is dropped and counted: "
      "'dropped N kernel events: <reason> (<field>)', in --json under dropped_events.");
  cmd->callback([flags, exit_code] { *exit_code = RunImportProfile(*flags, std::cout, std::cerr); });
}

}  // namespace specsim::tools

// `specsim import-profile PATH... [-o trace.pb] [--json] [--nccl-env NCCL_X=v]`: reads PyTorch profiler (Kineto) traces,
// one per rank (files, or directories holding *.json / *.json.gz), and prints what the run did:
// per pass group (phase, run, graph or eager) the GPU span, host span and busy time by kernel
// class; per NCCL call the transfer time and each rank's wait for the last rank
// (sim/profile/profile_import.h). With -o it writes the measurement trace (trace.proto: one
// collectives-suite item per distinct NCCL call, timed as the last-arriving rank's kernel, with
// every rank's durations and waits), which `specsim compare` and `calibrate` read like
// specsim-validate's (`--hardware` names the box: an imported trace does not describe its links).
// With --scenario S, every pass group of a phase the simulator has (decode, verify, draft,
// draft_extend) is also predicted from the scenario (sim/scenario/profile_passes.h): the tokens per sequence from the pass's first
// allreduce (elements / hidden / batch) when torch recorded it, else 1 for decode and draft and the
// scenario's num_draft_tokens for verify and draft extend; the target's layers from the pass's
// allreduces (two per dense layer); graph groups as full graphs, eager ones eager. It prints the
// measured GPU busy time (the union of the pass's kernels) against the predicted compute plus
// communication of the pass (decode_simulator.h PassTiming), and the GPU idle time against the
// predicted launch / sync time; with -o the graph-captured target forwards (decode, verify) are
// written as decode items (DecodeParams.gpu_busy_only) with the scenario's model in the trace.
// Passes are the ranges the pass name map (--names, --name-map, --phases) gives a kind; the report
// prints each group's rule and the range names no rule matched. Eager pass groups are also
// predicted operator by operator from their host costs, held out by kind
// (sim/scenario/eager_passes.h), and written with -o as host-op / host-loop items.
// Exit 2 on unreadable or inconsistent input, with the file and the reason.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace CLI {
class App;  // <CLI/CLI.hpp>, included where the flags are registered
}  // namespace CLI

namespace specsim::tools {

struct ImportProfileFlags {
  std::vector<std::string> paths;
  std::string output;
  bool json = false;
  // Which host ranges are passes (sim/profile/pass_names.h): the rules of --name-map FILE first,
  // then the exact names of --phases when given (the old option; "none": no range is a pass),
  // else the built-in map --names (sglang, vllm, pytorch, auto, none; default auto).
  std::vector<std::string> phases;
  std::string names = "auto";
  std::string name_map;
  std::string run_prefix = "specsim.run/";
  std::string call_ranges;            // --call-ranges: eager calls only from inside host ranges matching this regex
  std::vector<std::string> nccl_env;  // "NCCL_X=value": the run's NCCL variables
  // The scenario the run is meant to be (its box, model, batch, context, speculation, calibration):
  // each pass group is predicted with it (`--set` overrides fields, `--calibration` replaces the
  // scenario's calibration).
  std::string scenario;
  std::vector<std::string> set;
  std::string calibration;
};

int RunImportProfile(const ImportProfileFlags& flags, std::ostream& out, std::ostream& err);
void AddImportProfileCommand(CLI::App& app, int* exit_code);

}  // namespace specsim::tools

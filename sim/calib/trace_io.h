// Reading measurement traces (proto/specsim/trace.proto, binary specsim.trace.Trace as written by
// specsim-validate) with errors that name the file; merging several traces of one box into one for
// a joint fit; and the provenance a calibration records about the box it was fitted on, with the
// check that a calibration is applied to the box it came from.
//
// Merge (`specsim calibrate T1 T2 ...`): the traces must come from the same box, i.e. the same GPU
// count and the same GPU name at every index (the NCCL environment may differ: every collective
// item records its own). Items are appended in the order given; with more than one trace each
// item's name becomes "<file stem>/<name>" so names stay unique. The environment, options and
// run metadata are the first trace's; `models` are merged by name (a model listed by two traces
// must be identical); notes are appended with "<file stem>: " before their message.
//
// Box match (`specsim compare --calibration`, later `simulate`): a calibration whose provenance
// names a GPU or a GPU count other than the box's gets a warning; so does one with no provenance.
// GPU names from traces are CUDA device names ("NVIDIA H200"); hardware configs name GPU models
// ("H200"): the model-name variant compares both through KnownGpus (hardware_from_trace.h).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "sim/core/status.h"
#include "specsim/calibration.pb.h"
#include "specsim/trace.pb.h"

namespace specsim::calib {

// Reads and parses `path`: a binary Trace, or one in protobuf's JSON mapping when the name ends in
// ".json". NotFound when the file does not exist; InvalidArgument when it is not a Trace, has
// schema_version other than 1, has no items, or fails ValidateTraceItems.
// Implausible values (outside a field's plausible range) add a line each to `warnings` when given.
StatusOr<trace::Trace> LoadTrace(const std::string& path, std::vector<std::string>* warnings = nullptr);

// The checks LoadTrace makes (`path` for messages): every numeric field in the unit and range
// proto/specsim/trace.proto declares beside it (sim/io/field_ranges.h: "x.pb: items[3] (name).
// attention.batch = -1: must be in [1, 1000000] sequences"; a median time is 0, not measured, or 1 ns
// to 1000 s; sizes at most 2^40 bytes; shape dimensions the item needs at least 1); the
// environment's GPUs at most 1024, each index once; a collective's GPUs each once.
// InvalidArgument naming the file, the field and the range; warnings as LoadTrace's.
Status ValidateTraceItems(const trace::Trace& t, const std::string& path, std::vector<std::string>* warnings = nullptr);

// Merges (path, trace) pairs as described above. InvalidArgument, naming both files, when the
// boxes differ (GPU count or a GPU's name), when a model of one name differs between two traces,
// or when two items end up with one name (two traces with one file stem); and for an empty list.
// One trace comes back unchanged.
StatusOr<trace::Trace> MergeTraces(const std::vector<std::pair<std::string, trace::Trace>>& traces);

// "h200-1x-2026-11-29" for "traces/h200-1x-2026-11-29.pb".
std::string FileStem(const std::string& path);

// The box of `trace` as a calibration records it: traces = `trace_paths`, gpu_name = the first
// GPU's name, gpu_count, hostname, nccl_version and driver_version from the environment.
config::CalibrationProvenance ProvenanceFromTrace(const trace::Trace& trace,
                                                  const std::vector<std::string>& trace_paths);

// True when `calibration` records the box it was fitted on (a GPU name or a GPU count).
bool HasProvenance(const config::Calibration& calibration);

// What differs between the box `calibration` was fitted on and the box of `trace` ("GPU count: 1
// in the calibration, 2 in the trace", "GPU: NVIDIA H200 in the calibration, NVIDIA H100 80GB
// HBM3 in the trace"); empty when they agree or when the calibration has no provenance.
std::vector<std::string> CalibrationMismatches(const config::Calibration& calibration, const trace::Trace& trace);
// The same against a hardware config's box: `gpu_model_name` a GpuModel name ("H200") or a CUDA
// device name, `gpu_count` its GPUs.
std::vector<std::string> CalibrationMismatches(const config::Calibration& calibration,
                                               const std::string& gpu_model_name, int gpu_count);

// The warning to print (one line, no "\n"), or "" when there is nothing to warn about:
//   warning: calibration C was fitted on 1x NVIDIA H200 (traces/a.pb); this trace is from
//   2x NVIDIA H200: GPU count: 1 in the calibration, 2 in the trace
//   warning: calibration C records no provenance (written before provenance existed): cannot
//   check it was fitted on this box
std::string CalibrationWarning(const config::Calibration& calibration, const std::string& calibration_path,
                               const trace::Trace& trace);
std::string CalibrationWarning(const config::Calibration& calibration, const std::string& calibration_path,
                               const std::string& gpu_model_name, int gpu_count);

// "pcie", "collectives", "kernels", "decode", "pacing" (the trace's own suite names), "unspecified".
const char* SuiteName(trace::Suite suite);
// "PIX", "PXB", "PHB", "NODE", "SYS", "NV", "SELF", "" for unspecified.
const char* PathClassName(trace::PathClass path_class);

}  // namespace specsim::calib

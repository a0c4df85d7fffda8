// A calibration file (proto/specsim/calibration.proto: what `specsim calibrate` writes, or a file
// written by hand) read, parsed and checked once, and turned into the model's values: one struct
// per kind of value, each with one converter into the model.
//
//   compute  compute::ComputeParams: the compute model's defaults with the file's values (the
//            kernel cost model takes it as is)
//   fabric   the file's fabric block, checked: ApplyFabricCalibration (params.h) puts it on a
//            topology (copy engines, copy setup, outstanding read bytes, host-link rate);
//            CalibParamsOf on the transfer classes `specsim compare` predicts with
//   nccl     NcclParams (params.h): NCCL's per-call costs and its per-step costs per transport,
//            protocol and op (coll::ProtocolOverrides, which the collective planner takes)
//   host     llm::HostCosts: the ranks' host costs (llm::HostModelOf)
//   custom   CustomAllreduceParams and bench BenchParams: compare's predictors of our own kernels
//            and of micro-benchmarks
//
// Every command that reads a calibration (simulate, sweep, advise, collective, compare, calibrate,
// hardware-from-trace, import-profile) and a scenario's `calibration` field go through
// LoadCalibration. Every number is checked against the unit and range calibration.proto declares
// beside it (sim/io/field_ranges.h), then names (NCCL transports, protocols and ops, P2P path
// classes, custom-allreduce transports, under-load keys) and the compute model's own rules. Every
// error names the file, the field's path and its value; a part with a bad entry is an error,
// never dropped.
//
// The NCCL block's older all-transport fields (base_latency_ll_us, ..., ll_wire_efficiency) are
// read as an entry per transport for their protocol, under the file's own per-transport entries:
// the planner sees one form.
#pragma once

#include <string>
#include <vector>

#include "sim/calib/params.h"
#include "sim/core/status.h"
#include "sim/llm/host_costs.h"
#include "specsim/calibration.pb.h"

namespace specsim::calib {

struct LoadedCalibration {
  std::string source;         // the file as messages name it
  config::Calibration proto;  // as read: provenance, fitted values, the fabric block
  compute::ComputeParams compute;
  NcclParams nccl;
  llm::HostCosts host;
  CustomAllreduceParams custom;
  BenchParams bench;
  std::vector<std::string> warnings;  // values no hardware of today has (field_ranges.h)
  const config::FabricCalibration& fabric() const { return proto.fabric(); }
};

// Reads, parses and checks the file at `path` (bundled paths work as in io::ReadConfigFile).
StatusOr<LoadedCalibration> LoadCalibration(const std::string& path);

// Checks `calibration` and converts it; errors start with `source` (a file name, or what the
// calibration is, e.g. "the fitted calibration").
StatusOr<LoadedCalibration> CalibrationFromProto(config::Calibration calibration, const std::string& source);

// `defaults` (DefaultParams of the box the calibration is applied to) with the calibration's
// values: its compute, NCCL, host, custom-allreduce and benchmark parts replace the defaults'; its
// fabric block's transfer classes and scalars that are set (non-zero) override the defaults'.
CalibParams CalibParamsOf(const LoadedCalibration& calibration, CalibParams defaults);

}  // namespace specsim::calib

// The box validate's rank-group emulation runs on (host_staged suite, custom allreduce items with
// rank_groups_on_one_gpu = n): n ranks as n groups of thread blocks in one launch on one GPU, every
// exchange buffer and flag in mapped host memory. As a topology: the GPU's node becomes the far end
// of its own link (a forwarding node with no latency), and n GPUs hang off it on links of no
// latency and no bandwidth limit (1e6 GB/s). Every rank's host-memory traffic then crosses the one
// real link, as it does on the GPU, with no second link and no socket hop.
#pragma once

#include "sim/core/status.h"
#include "sim/net/topology.h"

namespace specsim::calib {

// `box` with GPU `gpu` replaced by `ranks` virtual GPUs behind its link (GPU indices 0..ranks-1;
// the box's other GPUs are dropped). InvalidArgument for a GPU out of range or ranks < 2.
StatusOr<net::Topology> RankGroupBox(const net::Topology& box, int gpu, int ranks);

}  // namespace specsim::calib

// Transfer mechanisms. Real hardware moves bytes between GPUs and host memory in ways that share
// the fabric differently, so every transfer names its mechanism:
//
//   kCopyEngine  DMA copy (cudaMemcpyAsync / cudaMemcpyPeerAsync). Each GPU has a few copy engines
//                per direction; copies assigned to one engine run one after another (FIFO), they
//                do not share bandwidth. Each copy pays the engine's setup time.
//   kKernelWrite SM stores into peer or host-mapped memory: posted writes, limited only by links.
//   kKernelRead  SM loads from peer or host-mapped memory: non-posted, so the rate is also bounded
//                by outstanding bytes / round-trip latency (Little's law):
//                rate <= sms * outstanding_bytes_per_sm / (2 * one-way path latency).
//   kHostStaged  NCCL's SHM transport: the sender's kernel writes a host-memory buffer and the
//                receiver's kernel reads it. Modelled as one pipelined flow over the path
//                src -> host memory -> dst, so it loads both PCIe paths and the memory link.
#pragma once

#include <cstdint>

namespace specsim::net {

enum class Mechanism : uint8_t { kCopyEngine, kKernelWrite, kKernelRead, kHostStaged };  // one byte: per op

const char* MechanismName(Mechanism m);

}  // namespace specsim::net

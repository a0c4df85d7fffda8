#include "sim/net/transfer.h"

namespace specsim::net {

const char* MechanismName(Mechanism m) {
  switch (m) {
    case Mechanism::kCopyEngine: return "copy_engine";
    case Mechanism::kKernelWrite: return "kernel_write";
    case Mechanism::kKernelRead: return "kernel_read";
    case Mechanism::kHostStaged: return "host_staged";
  }
  return "?";
}

}  // namespace specsim::net

// Parsing of size lists as nccl-tests users write them: "1K:256M" is every power-of-two multiple
// from 1 KiB to 256 MiB (nccl-tests' -b 1K -e 256M -f 2), "4K,1M,3M" a list, "64" one size.
// Suffixes K, M, G are binary (KiB, MiB, GiB) as in nccl-tests; B is optional.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/core/status.h"

namespace specsim::tools {

StatusOr<int64_t> ParseSizeBytes(const std::string& text);
StatusOr<std::vector<int64_t>> ParseSizeList(const std::string& text);
// "1K", "256M", "1.5M" style for tables.
std::string FormatSize(int64_t bytes);

// "0,1,4-7" -> {0,1,4,5,6,7}.
StatusOr<std::vector<int>> ParseIndexList(const std::string& text);

}  // namespace specsim::tools

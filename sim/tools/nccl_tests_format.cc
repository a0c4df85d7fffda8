#include "sim/tools/nccl_tests_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace specsim::tools {
namespace {

// nccl-tests' getFloatStr (src/util.cu): %.2f in `width`, else %.1f, %.0f, then exponent form.
std::string FloatStr(double value, int width) {
  for (int digits : {2, 1, 0}) {
    std::string s = fmt::format("{:>{}.{}f}", value, width, digits);
    if (static_cast<int>(s.size()) <= width) return s;
  }
  return fmt::format("{:>{}.{}e}", value, width, width >= 7 ? 1 : 0);
}

}  // namespace

StatusOr<NcclTestsType> ParseNcclTestsType(const std::string& name) {
  static const std::pair<const char*, NcclTestsType> kTypes[] = {
      {"int8", {"int8", 1}},     {"uint8", {"uint8", 1}},       {"int32", {"int32", 4}},   {"uint32", {"uint32", 4}},
      {"int64", {"int64", 8}},   {"uint64", {"uint64", 8}},     {"half", {"half", 2}},     {"float", {"float", 4}},
      {"double", {"double", 8}}, {"bfloat16", {"bfloat16", 2}}, {"f8e4m3", {"f8e4m3", 1}}, {"f8e5m2", {"f8e5m2", 1}},
      {"fp32", {"float", 4}},    {"bf16", {"bfloat16", 2}},     {"fp16", {"half", 2}},     {"fp8", {"f8e4m3", 1}},
      {"int", {"int32", 4}},     {"char", {"int8", 1}}};
  for (const auto& [n, t] : kTypes)
    if (name == n) return t;
  return InvalidArgumentError("'" + name +
                              "': allowed values are nccl-tests' int8, uint8, int32, uint32, int64, uint64, half, "
                              "float, double, bfloat16, f8e4m3, f8e5m2 (aliases fp32, bf16, fp16, fp8, int, char)");
}

StatusOr<std::string> NcclTestsRedop(coll::Collective collective, const std::string& redop) {
  static const char* const kOps[] = {"sum", "prod", "max", "min", "avg"};
  if (std::find_if(std::begin(kOps), std::end(kOps), [&](const char* o) { return redop == o; }) == std::end(kOps))
    return InvalidArgumentError("'" + redop + "': allowed values are nccl-tests' sum, prod, max, min, avg");
  const bool reduces = collective == coll::Collective::kAllReduce || collective == coll::Collective::kReduceScatter;
  return reduces ? redop : std::string("none");
}

NcclTestsSize NcclTestsSizeOf(coll::Collective collective, int64_t requested_bytes, int element_bytes, int ranks) {
  NcclTestsSize s;
  const int64_t count = requested_bytes / element_bytes;
  if (collective == coll::Collective::kAllReduce) {
    s.count = count;
    s.size_bytes = count * element_bytes;
    return s;
  }
  // (count / nranks) & ~(16 / eltSize - 1): whole 16-byte groups of elements per rank.
  const int64_t align = std::max<int64_t>(1, 16 / element_bytes);
  const int64_t base = (count / std::max(1, ranks)) / align * align;
  s.count = base;
  s.size_bytes = base * ranks * element_bytes;
  return s;
}

StatusOr<int64_t> ParseNcclTestsBytes(const std::string& text) {
  double value = 0;
  char unit = 0;
  const int n = std::sscanf(text.c_str(), "%lf%c", &value, &unit);
  int64_t scale = 1;
  if (n == 2) {
    switch (unit) {
      case 'G':
      case 'g': scale = int64_t{1} << 30; break;
      case 'M':
      case 'm': scale = int64_t{1} << 20; break;
      case 'K':
      case 'k': scale = int64_t{1} << 10; break;
      default: scale = 0;  // parsesize: any other suffix is an invalid size
    }
  }
  if (n < 1 || scale == 0 || !(value >= 0) || value * static_cast<double>(scale) > 1e15)
    return InvalidArgumentError("'" + text +
                                "': a size in bytes, with an optional K, M or G (1024-based), at most 1e15");
  return static_cast<int64_t>(std::llround(value * static_cast<double>(scale)));
}

StatusOr<std::vector<int64_t>> NcclTestsSizeSweep(int64_t min_bytes, int64_t max_bytes, double factor,
                                                  int64_t step_bytes) {
  if (min_bytes < 1 || max_bytes < min_bytes)
    return InvalidArgumentError(fmt::format("-b {} / -e {}: need 1 <= minbytes <= maxbytes", min_bytes, max_bytes));
  if (factor <= 1 && step_bytes < 1)
    return InvalidArgumentError("-f must be > 1 or -i >= 1: the sizes would not advance");
  std::vector<int64_t> sizes;
  for (int64_t s = min_bytes; s <= max_bytes;) {
    sizes.push_back(s);
    if (sizes.size() > 10000) return InvalidArgumentError("-b/-e/-f/-i: more than 10000 sizes");
    const double next_d = factor > 1 ? static_cast<double>(s) * factor : static_cast<double>(s) + step_bytes;
    if (next_d > static_cast<double>(max_bytes)) break;  // past -e (and never cast past int64's range)
    const int64_t next = static_cast<int64_t>(next_d);
    if (next <= s) {
      if (s >= max_bytes) break;  // the last size: nothing beyond it is lost
      // A factor too close to 1 for the size: the next size rounds down to this one. nccl-tests
      // would repeat it forever; stopping here would drop every larger size without a word.
      return InvalidArgumentError(fmt::format(
          "-f {}: at {} bytes the next size rounds down to {} again; the sizes up to -e {} need a factor of at "
          "least {} here",
          factor, s, s, max_bytes, 1.0 + 1.0 / static_cast<double>(s)));
    }
    s = next;
  }
  return sizes;
}

std::string NcclTestsHeader(const std::string& extra_names, const std::string& extra_units) {
  // writeResultHeader (src/util.cu), both halves, no timestamp column: the lines end as nccl-tests'
  // do (the names line with "#wrong ", the units line with nine blanks), then specsim's columns.
  return fmt::format(
             "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}           out-of-place                       in-place   "
             "       \n",
             "", "", "", "", "") +
         fmt::format(
             "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6} {}\n",
             "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw",
             "#wrong", extra_names) +
         fmt::format(
             "# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6} {}\n",
             "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "",
             extra_units);
}

std::string NcclTestsRow(int64_t size_bytes, int64_t count, const std::string& type, const std::string& redop,
                         const NcclTestsHalf& out_of_place, const NcclTestsHalf& in_place, const std::string& extra) {
  // writeBenchmarkLinePreamble (root -1: no rooted collectives here), then writeBenchmarkLineBody
  // for each half without checking (#wrong N/A).
  std::string row = fmt::format("{:>12}  {:>12}  {:>8}  {:>6}  {:>6}", size_bytes, count, type, redop, -1);
  for (const NcclTestsHalf* h : {&out_of_place, &in_place})
    row += fmt::format("  {:>7}  {:>6}  {:>6}    N/A", FloatStr(h->time_us, 7), FloatStr(h->algbw_gbps, 6),
                       FloatStr(h->busbw_gbps, 6));
  return row + extra + "\n";
}

std::string NcclTestsFooter(const std::vector<NcclTestsHalf>& halves) {
  // writeResultFooter: the mean busbw over every half of every row (common.cu adds each printed
  // busbw to bw[0] and counts it), "%g" as printf prints it; nothing checked, so no value is out of
  // bounds (as with -c 0).
  double sum = 0;
  for (const NcclTestsHalf& h : halves) sum += h.busbw_gbps;
  const double average = halves.empty() ? 0 : sum / static_cast<double>(halves.size());
  return fmt::format("# {:<20} : {} {}\n", "Out of bounds values", 0, "OK") +
         fmt::format("# {:<20} : {:g} {}\n", "Avg bus bandwidth", average, "") + "#\n";
}

}  // namespace specsim::tools

#include "sim/io/nvidia_smi_topo.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <sstream>

namespace specsim::io {
namespace {

// The text without ANSI escape sequences (nvidia-smi underlines the header: ESC [ 4 m ... ESC [ 0 m).
std::string WithoutEscapes(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\x1b' && i + 1 < text.size() && text[i + 1] == '[') {
      i += 2;
      while (i < text.size() && !std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
      continue;
    }
    out += text[i];
  }
  return out;
}

std::string Trim(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

std::vector<std::string> SplitTabs(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  std::stringstream ss(line);
  while (std::getline(ss, cell, '\t')) cells.push_back(Trim(cell));
  return cells;
}

// The value of a run of at most 6 digits, else -1 (no std::stoi overflow on hostile input).
int SmallNumber(const std::string& digits) {
  if (digits.empty() || digits.size() > 6 ||
      !std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    return -1;
  return std::stoi(digits);
}

bool IsGpuLabel(const std::string& s) {
  return s.size() > 3 && s.rfind("GPU", 0) == 0 &&
         std::all_of(s.begin() + 3, s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

StatusOr<std::pair<TopoPath, int>> PathOf(const std::string& cell) {
  if (cell == "X") return std::make_pair(TopoPath::kSelf, 0);
  if (cell == "PIX") return std::make_pair(TopoPath::kPix, 0);
  if (cell == "PXB") return std::make_pair(TopoPath::kPxb, 0);
  if (cell == "PHB") return std::make_pair(TopoPath::kPhb, 0);
  if (cell == "NODE") return std::make_pair(TopoPath::kNode, 0);
  if (cell == "SYS") return std::make_pair(TopoPath::kSys, 0);
  if (cell.size() > 2 && cell.rfind("NV", 0) == 0 && SmallNumber(cell.substr(2)) >= 1 &&
      SmallNumber(cell.substr(2)) <= 64)
    return std::make_pair(TopoPath::kNvlink, SmallNumber(cell.substr(2)));
  return InvalidArgumentError("'" + cell + "': not a path class (X, NV# with 1-64 links, PIX, PXB, PHB, NODE, SYS)");
}

int NumberBefore(const std::string& value) {  // "16x" -> 16, "5" -> 5, "N/A" -> 0
  size_t i = 0;
  while (i < value.size() && std::isdigit(static_cast<unsigned char>(value[i]))) ++i;
  return std::max(0, SmallNumber(value.substr(0, i)));
}

}  // namespace

const char* TopoPathName(TopoPath p) {
  switch (p) {
    case TopoPath::kSelf: return "X";
    case TopoPath::kNvlink: return "NV#";
    case TopoPath::kPix: return "PIX";
    case TopoPath::kPxb: return "PXB";
    case TopoPath::kPhb: return "PHB";
    case TopoPath::kNode: return "NODE";
    case TopoPath::kSys: return "SYS";
  }
  return "?";
}

StatusOr<TopoMatrix> ParseNvidiaSmiTopo(const std::string& raw) {
  std::stringstream lines(WithoutEscapes(raw));
  std::string line;
  std::vector<std::string> header;
  int line_no = 0;
  TopoMatrix m;
  std::vector<size_t> gpu_columns;
  std::vector<bool> seen;  // GPU rows read
  size_t numa_column = std::string::npos, cpu_column = std::string::npos;
  while (std::getline(lines, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::vector<std::string> cells = SplitTabs(line);
    if (cells.empty()) continue;
    if (header.empty()) {
      // The header: an empty first cell, then GPU0 GPU1 ... [NIC0 ...] CPU Affinity NUMA Affinity ...
      if (std::none_of(cells.begin(), cells.end(), IsGpuLabel)) continue;
      header = cells;
      for (size_t c = 0; c < header.size(); ++c) {
        if (IsGpuLabel(header[c])) gpu_columns.push_back(c);
        if (header[c] == "NUMA Affinity") numa_column = c;
        if (header[c] == "CPU Affinity") cpu_column = c;
      }
      m.num_gpus = static_cast<int>(gpu_columns.size());
      if (m.num_gpus > 4096)
        return InvalidArgumentError(
            fmt::format("line {}: {} GPU columns: at most 4096 (a hardware file's limit)", line_no, m.num_gpus));
      m.path.assign(m.num_gpus, std::vector<TopoPath>(m.num_gpus, TopoPath::kSelf));
      m.nvlinks.assign(m.num_gpus, std::vector<int>(m.num_gpus, 0));
      m.numa_node.assign(m.num_gpus, -1);
      m.cpu_affinity.assign(m.num_gpus, "");
      seen.assign(m.num_gpus, false);
      continue;
    }
    if (!IsGpuLabel(cells[0])) {
      if (cells[0] == "Legend:") break;
      continue;  // NIC rows
    }
    const int row = SmallNumber(cells[0].substr(3));
    if (row >= 0 && row < m.num_gpus && seen[row])
      return InvalidArgumentError(fmt::format("line {}: {} again", line_no, cells[0]));
    if (row >= 0 && row < m.num_gpus) seen[row] = true;
    if (row < 0 || row >= m.num_gpus)
      return InvalidArgumentError(
          fmt::format("line {}: {} is not one of the header's {} GPUs", line_no, cells[0], m.num_gpus));
    // A row's cells line up with the header's (the header's first cell is the empty corner).
    for (int j = 0; j < m.num_gpus; ++j) {
      const size_t c = gpu_columns[j];
      if (c >= cells.size())
        return InvalidArgumentError(
            fmt::format("line {}: {} has {} cells, the header {}", line_no, cells[0], cells.size(), header.size()));
      auto p = PathOf(cells[c]);
      if (!p.ok())
        return InvalidArgumentError(
            fmt::format("line {}, {} to GPU{}: {}", line_no, cells[0], j, p.status().message()));
      if ((p->first == TopoPath::kSelf) != (j == row))
        return InvalidArgumentError(fmt::format("line {}, {} to GPU{}: '{}' ('X' belongs on the diagonal only)",
                                                line_no, cells[0], j, cells[c]));
      m.path[row][j] = p->first;
      m.nvlinks[row][j] = p->second;
    }
    if (numa_column < cells.size()) {
      const std::string& n = cells[numa_column];
      const bool digits = !n.empty() && std::all_of(n.begin(), n.end(),
                                                    [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
      m.numa_node[row] = digits ? SmallNumber(n) : -1;
    }
    if (cpu_column < cells.size()) m.cpu_affinity[row] = cells[cpu_column];
  }
  if (m.num_gpus == 0) return InvalidArgumentError("no GPU matrix found (expected the output of `nvidia-smi topo -m`)");
  for (int i = 0; i < m.num_gpus; ++i)
    if (!seen[i])
      return InvalidArgumentError(fmt::format("no row for GPU{} (the header names {} GPUs)", i, m.num_gpus));
  for (int i = 0; i < m.num_gpus; ++i)
    for (int j = 0; j < m.num_gpus; ++j)
      if (m.path[i][j] != m.path[j][i] || m.nvlinks[i][j] != m.nvlinks[j][i])
        return InvalidArgumentError(fmt::format("GPU{} to GPU{} is {} but GPU{} to GPU{} is {}: not a symmetric matrix",
                                                i, j, TopoPathName(m.path[i][j]), j, i, TopoPathName(m.path[j][i])));
  return m;
}

StatusOr<std::vector<GpuLinkInfo>> ParseNvidiaSmiGpus(const std::string& text) {
  std::vector<GpuLinkInfo> gpus;
  std::stringstream lines(text);
  std::string line;
  std::getline(lines, line);
  if (line.find("pcie.link.gen.max") != std::string::npos || line.rfind("name", 0) == 0) {
    // --query-gpu CSV: the header names the columns.
    std::vector<std::string> columns;
    {
      std::stringstream h(line);
      for (std::string c; std::getline(h, c, ',');) columns.push_back(Trim(c));
    }
    auto index_of = [&](const std::string& prefix) -> int {
      for (size_t c = 0; c < columns.size(); ++c)
        if (columns[c].rfind(prefix, 0) == 0) return static_cast<int>(c);
      return -1;
    };
    const int name = index_of("name"), gen = index_of("pcie.link.gen.max"), width = index_of("pcie.link.width.max");
    while (std::getline(lines, line)) {
      if (Trim(line).empty()) continue;
      std::vector<std::string> cells;
      std::stringstream r(line);
      for (std::string c; std::getline(r, c, ',');) cells.push_back(Trim(c));
      GpuLinkInfo g;
      if (name >= 0 && name < static_cast<int>(cells.size())) g.name = cells[name];
      if (gen >= 0 && gen < static_cast<int>(cells.size())) g.pcie_gen_max = NumberBefore(cells[gen]);
      if (width >= 0 && width < static_cast<int>(cells.size())) g.pcie_width_max = NumberBefore(cells[width]);
      gpus.push_back(g);
    }
    return gpus;
  }
  // nvidia-smi -q: "GPU 00000000:..." starts a GPU; keys are "Name : value" lines, nested by indent.
  std::string section;
  lines.clear();
  lines.seekg(0);
  while (std::getline(lines, line)) {
    if (line.rfind("GPU ", 0) == 0) {
      gpus.push_back({});
      continue;
    }
    if (gpus.empty()) continue;
    const size_t colon = line.find(" : ");
    const std::string key = Trim(colon == std::string::npos ? line : line.substr(0, colon));
    if (colon == std::string::npos) {
      section = key;  // the heading the following keys belong to
      continue;
    }
    const std::string value = Trim(line.substr(colon + 3));
    if (key == "Product Name") gpus.back().name = value;
    if (key == "Max" && section == "PCIe Generation") gpus.back().pcie_gen_max = NumberBefore(value);
    if (key == "Max" && section == "Link Width") gpus.back().pcie_width_max = NumberBefore(value);
  }
  if (gpus.empty())
    return InvalidArgumentError(
        "neither `nvidia-smi -q` nor `nvidia-smi --query-gpu=name,pcie.link.gen.max,pcie.link.width.max "
        "--format=csv` output");
  return gpus;
}

}  // namespace specsim::io

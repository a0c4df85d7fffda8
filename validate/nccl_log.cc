#include "validate/nccl_log.h"

#include <cctype>
#include <fstream>
#include <sstream>

namespace specsim::validate {
namespace {

bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool IsAlpha(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }

trace::CollectiveOp OpFromNcclName(std::string_view name) {
  if (name == "AllReduce") return trace::ALLREDUCE;
  if (name == "AllGather") return trace::ALLGATHER;
  if (name == "ReduceScatter") return trace::REDUCESCATTER;
  return trace::COLLECTIVE_OP_UNSPECIFIED;
}

// Reads a non-negative decimal at s[*i]; false when there is none or it overflows.
bool ReadNumber(std::string_view s, size_t* i, int64_t* out) {
  size_t j = *i;
  int64_t v = 0;
  while (j < s.size() && IsDigit(s[j])) {
    if (v > (INT64_MAX - 9) / 10) return false;
    v = v * 10 + (s[j] - '0');
    ++j;
  }
  if (j == *i) return false;
  *i = j;
  *out = v;
  return true;
}

// The next space-delimited token at s[*i] (after skipping spaces).
std::string_view ReadToken(std::string_view s, size_t* i) {
  while (*i < s.size() && s[*i] == ' ') ++*i;
  const size_t b = *i;
  while (*i < s.size() && s[*i] != ' ' && s[*i] != '\r' && s[*i] != '\n') ++*i;
  return s.substr(b, *i - b);
}

bool Expect(std::string_view s, size_t* i, std::string_view word) {
  while (*i < s.size() && s[*i] == ' ') ++*i;
  if (s.substr(*i, word.size()) != word) return false;
  *i += word.size();
  return true;
}

int DtypeBytes(trace::DType d) {
  switch (d) {
    case trace::DTYPE_BF16:
    case trace::DTYPE_FP16: return 2;
    case trace::DTYPE_FP32: return 4;
    case trace::DTYPE_U8: return 1;
    default: return 0;
  }
}

}  // namespace

bool ParseNcclTuningLine(std::string_view line, NcclTuningLine* out) {
  static constexpr std::string_view kMarker = " Bytes -> Algo ";
  const size_t k = line.find(kMarker);
  if (k == std::string_view::npos) return false;
  // Backwards from the marker: "<Op>:<spaces><digits>".
  size_t d = k;
  while (d > 0 && IsDigit(line[d - 1])) --d;
  if (d == k) return false;
  size_t p = d;
  while (p > 0 && line[p - 1] == ' ') --p;
  if (p == d || p == 0 || line[p - 1] != ':') return false;
  const size_t op_end = p - 1;
  size_t op_begin = op_end;
  while (op_begin > 0 && IsAlpha(line[op_begin - 1])) --op_begin;
  if (op_begin > 0 && line[op_begin - 1] != ' ') return false;  // part of a longer word
  NcclTuningLine l;
  l.op = OpFromNcclName(line.substr(op_begin, op_end - op_begin));
  if (l.op == trace::COLLECTIVE_OP_UNSPECIFIED) return false;
  size_t i = d;
  if (!ReadNumber(line, &i, &l.bytes)) return false;
  i = k + kMarker.size();
  std::string_view algo = ReadToken(line, &i);
  if (algo.empty() || !Expect(line, &i, "proto ")) return false;
  std::string_view proto = ReadToken(line, &i);
  if (proto.empty()) return false;
  l.pick.algo = std::string(algo);
  l.pick.proto = std::string(proto);
  // Optional " channel{Lo..Hi}={lo..hi}".
  if (Expect(line, &i, "channel{Lo..Hi}={")) {
    int64_t lo = 0, hi = 0;
    if (!ReadNumber(line, &i, &lo) || line.substr(i, 2) != "..") return false;
    i += 2;
    if (!ReadNumber(line, &i, &hi) || i >= line.size() || line[i] != '}' || hi < lo) return false;
    l.pick.channels = static_cast<int>(hi - lo + 1);
  }
  *out = std::move(l);
  return true;
}

void NcclPickTable::Add(const NcclTuningLine& line) {
  auto& seen = counts_[{static_cast<int>(line.op), line.bytes}];
  ++lines_;
  for (auto& s : seen) {
    if (s.pick == line.pick) {
      ++s.count;
      return;
    }
  }
  seen.push_back({line.pick, 1});
}

int64_t NcclPickTable::AddText(std::string_view text) {
  int64_t used = 0;
  size_t b = 0;
  while (b < text.size()) {
    size_t e = text.find('\n', b);
    if (e == std::string_view::npos) e = text.size();
    NcclTuningLine l;
    if (ParseNcclTuningLine(text.substr(b, e - b), &l)) {
      Add(l);
      ++used;
    }
    b = e + 1;
  }
  return used;
}

Status NcclPickTable::AddFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(StatusCode::kNotFound, path + ": cannot open the NCCL log");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return DataLoss(path + ": read error");
  AddText(ss.str());
  return Status::Ok();
}

const NcclPick* NcclPickTable::Find(trace::CollectiveOp op, int64_t bytes) const {
  auto it = counts_.find({static_cast<int>(op), bytes});
  if (it == counts_.end() || it->second.empty()) return nullptr;
  const Seen* best = &it->second.front();
  for (const auto& s : it->second)
    if (s.count > best->count) best = &s;  // strictly more: ties keep the first seen
  return &best->pick;
}

int64_t NcclLoggedBytes(const trace::CollectiveParams& p) {
  const int64_t dt = DtypeBytes(p.dtype());
  if (dt == 0) return 0;
  switch (p.op()) {
    case trace::ALLREDUCE:
    case trace::ALLGATHER: return p.count() * dt;
    case trace::REDUCESCATTER:
      if (p.nranks() <= 0 || p.count() % p.nranks() != 0) return 0;
      return p.count() / p.nranks() * dt;
    default: return 0;
  }
}

NcclAnnotation AnnotateNcclPicks(const NcclPickTable& table, trace::Trace* t) {
  NcclAnnotation a;
  for (auto& it : *t->mutable_items()) {
    trace::CollectiveParams* p = nullptr;
    if (it.kind() == trace::KIND_COLLECTIVE && it.has_collective() &&
        it.collective().implementation() == trace::IMPL_NCCL)
      p = it.mutable_collective();
    else if (it.kind() == trace::KIND_COLLECTIVE_SKEW && it.has_skew() && it.skew().has_collective())
      p = it.mutable_skew()->mutable_collective();
    else if (it.kind() == trace::KIND_LAYER_LOOP && it.has_layer_loop() && it.layer_loop().allreduce_bytes() > 0 &&
             it.layer_loop().has_collective())
      p = it.mutable_layer_loop()->mutable_collective();
    if (!p) continue;
    const NcclPick* pick = table.Find(p->op(), NcclLoggedBytes(*p));
    if (!pick) {
      ++a.not_found;
      if (a.missing.size() < 5) a.missing.push_back(it.name());
      continue;
    }
    p->set_nccl_chosen_algo(pick->algo);
    p->set_nccl_chosen_proto(pick->proto);
    p->set_nccl_chosen_channels(pick->channels);
    ++a.annotated;
  }
  return a;
}

}  // namespace specsim::validate

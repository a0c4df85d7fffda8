#include "sim/profile/kineto_trace.h"

#include <zlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <istream>
#include <limits>
#include <memory>
#include <set>
#include <nlohmann/json.hpp>
#include <sstream>
#include <streambuf>
#include <variant>

#include "sim/profile/kernel_class.h"

namespace specsim::profile {
namespace {

// A std::streambuf over a gzip file (zlib's gzread also passes plain files through unchanged),
// stopping at the bounds of TraceLimits: the text read, and for a gzip file the text per
// compressed byte read (a bomb's ratio).
class GzStreamBuf : public std::streambuf {
 public:
  GzStreamBuf(gzFile f, const TraceLimits& limits) : file_(f), limits_(limits) {}
  ~GzStreamBuf() override {
    if (file_ != nullptr) gzclose(file_);
  }
  GzStreamBuf(const GzStreamBuf&) = delete;
  GzStreamBuf& operator=(const GzStreamBuf&) = delete;
  bool failed() const { return failed_; }
  // Why the text stopped short of its end ("" when it did not): the bound it passed.
  const std::string& over_bound() const { return over_bound_; }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    if (!over_bound_.empty()) return traits_type::eof();
    const int n = gzread(file_, buffer_, sizeof(buffer_));
    if (n < 0) failed_ = true;
    if (n <= 0) return traits_type::eof();
    text_bytes_ += n;
    if (PastBound()) return traits_type::eof();
    setg(buffer_, buffer_, buffer_ + n);
    return traits_type::to_int_type(*gptr());
  }

 private:
  bool PastBound() {
    if (text_bytes_ > limits_.max_text_bytes) {
      over_bound_ = "its JSON text runs past " + std::to_string(limits_.max_text_bytes) +
                    " bytes (the bound on a trace's text after decompression)";
      return true;
    }
    if (gzdirect(file_) != 0) return false;  // plain text: the file's own size is bounded
    const int64_t compressed = gzoffset(file_);
    if (compressed > 0 && text_bytes_ > limits_.expansion_allowance_bytes &&
        text_bytes_ > compressed * limits_.max_expansion) {
      over_bound_ = "gzip expands " + std::to_string(compressed) + " compressed bytes to " +
                    std::to_string(text_bytes_) + " bytes of text: past the bound of " +
                    std::to_string(limits_.max_expansion) + "x, which applies after the first " +
                    std::to_string(limits_.expansion_allowance_bytes) +
                    " bytes (a gzip bomb? Kineto's JSON compresses 10-20x)";
      return true;
    }
    return false;
  }

  gzFile file_;
  TraceLimits limits_;
  char buffer_[1 << 16];
  int64_t text_bytes_ = 0;
  bool failed_ = false;
  std::string over_bound_;
};

int64_t NanosFromMicros(double us) { return std::llround(us * 1e3); }

using Scalar = std::variant<std::string, double>;
using Fields = std::map<std::string, Scalar>;

// A bound as messages print it: 4e+15, 86400000000 -> 8.64e+10, 1023.
std::string BoundText(double v) {
  std::ostringstream o;
  o << v;
  return o.str();
}

// A value as a number: a JSON number, or a string holding exactly one (as some exporters write
// them); NaN for anything else (text, null, true / false).
double NumberOfScalar(const Scalar& s) {
  if (const double* d = std::get_if<double>(&s)) return *d;
  const std::string& t = std::get<std::string>(s);
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  return !t.empty() && end == t.c_str() + t.size() ? v : std::nan("");
}

std::string TextOf(const Scalar& s) {
  if (const std::string* t = std::get_if<std::string>(&s)) return *t;
  std::ostringstream o;
  o << std::get<double>(s);
  return o.str();
}

std::string FieldText(const Fields& m, const char* k) {
  auto it = m.find(k);
  return it == m.end() ? std::string() : TextOf(it->second);
}

bool IsIntegerIn(double v, double lo, double hi) {
  return std::isfinite(v) && v == std::floor(v) && v >= lo && v <= hi;
}

// One event's fields, each read against its bound: the first that fails is why the event is
// dropped (why() not empty), e.g. "duration not a finite number in [0, 8.64e+10] us (dur)".
class EventFields {
 public:
  EventFields(const Fields& event, const Fields& args) : event_(event), args_(args) {}

  // A time Kineto writes in microseconds (ts, dur): required, in [0, max_us]; integer ns.
  int64_t TimeNs(const char* key, const char* what, double max_us) {
    auto it = event_.find(key);
    if (it == event_.end()) return Failed(std::string(what) + " missing (" + key + ")");
    const double us = NumberOfScalar(it->second);
    if (!std::isfinite(us) || us < 0 || us > max_us)
      return Failed(std::string(what) + " not a finite number in [0, " + BoundText(max_us) + "] us (" + key + ")");
    return NanosFromMicros(us);
  }
  // An integer in [lo, hi] of the event (`in_args` false) or of its args; `absent` when missing
  // and not `required`. `label` names the field in the reason ("tid", "args.correlation").
  int64_t Integer(bool in_args, const std::string& key, const std::string& label, const char* what, int64_t lo,
                  int64_t hi, int64_t absent, bool required = false) {
    const Fields& m = in_args ? args_ : event_;
    auto it = m.find(key);
    if (it == m.end()) return required ? Failed(std::string(what) + " missing (" + label + ")") : absent;
    const double v = NumberOfScalar(it->second);
    if (!IsIntegerIn(v, static_cast<double>(lo), static_cast<double>(hi)))
      return Failed(std::string(what) + " not an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                    "] (" + label + ")");
    return static_cast<int64_t>(v);
  }
  void Fail(std::string why) {
    if (why_.empty()) why_ = std::move(why);
  }
  const std::string& why() const { return why_; }

 private:
  int64_t Failed(std::string why) {
    Fail(std::move(why));
    return 0;
  }
  const Fields& event_;
  const Fields& args_;
  std::string why_;
};

// The SAX handler: keeps the fields of one event at a time (and its "args"), hands the event over
// at its end, and reads distributedInfo's scalars. A file-level field that fails its check stops
// the parse (invalid()).
class Handler : public nlohmann::json::json_sax_t {
 public:
  explicit Handler(KinetoTrace* out) : out_(out) {}

  bool null() override { return Value(Scalar(std::string())); }
  // Not a number anywhere a number is read: kept as text.
  bool boolean(bool v) override { return Value(Scalar(std::string(v ? "true" : "false"))); }
  bool number_integer(number_integer_t v) override { return Value(Scalar(static_cast<double>(v))); }
  bool number_unsigned(number_unsigned_t v) override { return Value(Scalar(static_cast<double>(v))); }
  bool number_float(number_float_t v, const string_t&) override { return Value(Scalar(static_cast<double>(v))); }
  bool string(string_t& v) override { return Value(Scalar(v)); }
  bool binary(binary_t&) override { return true; }

  bool start_object(std::size_t) override {
    stack_.push_back({true, key_});
    if ((InEvent() || InDevices()) && Depth() == 3) {
      event_ = {};
      args_ = {};
      has_args_ = false;
      dims_.clear();
      lists_.clear();
      types_.clear();
    }
    if (InEvent() && Depth() == 4 && stack_[3].key == "args") has_args_ = true;
    key_.clear();
    return true;
  }
  bool end_object() override {
    if (InEvent() && Depth() == 3) Emit();
    if (InDevices() && Depth() == 3 && !EmitDevice()) return false;
    stack_.pop_back();
    key_.clear();
    return true;
  }
  bool start_array(std::size_t) override {
    // An inner shape of an operator's "Input Dims": [[1, 4096], [4096, 3072]].
    if (InEvent() && Depth() == 5 && stack_[3].key == "args" && stack_[4].key == "Input Dims") {
      dims_.emplace_back();
      lists_.emplace_back();
    }
    // A tensor of a TensorList input (aten::cat's): [[[1, 64], [1, 64]], ...].
    if (InEvent() && Depth() == 6 && stack_[3].key == "args" && stack_[4].key == "Input Dims" && !lists_.empty())
      lists_.back().emplace_back();
    stack_.push_back({false, key_});
    if (Depth() == 2 && key_ == "traceEvents") saw_events_ = true;
    key_.clear();
    return true;
  }
  bool end_array() override {
    stack_.pop_back();
    key_.clear();
    return true;
  }
  bool key(string_t& k) override {
    key_ = k;
    return true;
  }
  bool parse_error(std::size_t position, const std::string& last_token, const nlohmann::json::exception& e) override {
    error_position_ = position;
    error_ = e.what();
    error_token_ = last_token;
    return false;
  }

  bool saw_events() const { return saw_events_; }
  std::size_t error_position() const { return error_position_; }
  const std::string& error() const { return error_; }
  const std::string& error_token() const { return error_token_; }
  // The file-level field that failed its check ("" when none), e.g. "distributedInfo.world_size = 1e+09: ...".
  const std::string& invalid() const { return invalid_; }

 private:
  struct Frame {
    bool object;
    std::string key;  // the key this container was the value of ("" in arrays)
  };
  int Depth() const { return static_cast<int>(stack_.size()); }
  // Inside traceEvents: [root object, traceEvents array, event object, ...].
  bool InEvent() const { return Depth() >= 3 && !stack_[1].object && stack_[1].key == "traceEvents"; }
  bool InDevices() const { return Depth() >= 3 && !stack_[1].object && stack_[1].key == "deviceProperties"; }

  bool Value(Scalar v) {
    bool ok = true;
    if (InDevices()) {
      if (Depth() == 3) event_[key_] = std::move(v);
    } else if (InEvent()) {
      if (Depth() == 3)
        event_[key_] = std::move(v);
      else if (Depth() == 4 && stack_[3].key == "args")
        args_[key_] = std::move(v);
      else if (Depth() == 5 && stack_[3].key == "args" && stack_[4].key == "grid" && !args_.count("grid.x"))
        args_["grid.x"] = std::move(v);  // a kernel's grid: [x, y, z]
      else if (Depth() == 5 && stack_[3].key == "args" && stack_[4].key == "Input type")
        types_.push_back(TextOf(v));
      else if (Depth() == 6 && stack_[3].key == "args" && stack_[4].key == "Input Dims" && !dims_.empty())
        dims_.back().push_back(NumberOfScalar(v));
      else if (Depth() == 7 && stack_[3].key == "args" && stack_[4].key == "Input Dims" && !lists_.empty() &&
               !lists_.back().empty())
        lists_.back().back().push_back(NumberOfScalar(v));
    } else if (Depth() == 2 && stack_[1].object && stack_[1].key == "distributedInfo") {
      ok = DistributedInfo(v);
    }
    key_.clear();
    return ok;
  }

  // A file-level integer: in [lo, hi], or the file is unusable (invalid_ names the field).
  bool FileInteger(const Scalar& v, const std::string& field, int64_t lo, int64_t hi, int64_t* out) {
    const double d = NumberOfScalar(v);
    if (IsIntegerIn(d, static_cast<double>(lo), static_cast<double>(hi))) {
      *out = static_cast<int64_t>(d);
      return true;
    }
    invalid_ =
        field + " = " + TextOf(v) + ": must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
    return false;
  }

  // distributedInfo's rank and world size (a world of at most kMaxTraceWorldSize ranks), NCCL's version.
  bool DistributedInfo(const Scalar& v) {
    int64_t n = 0;
    if (key_ == "rank") {
      if (!FileInteger(v, "distributedInfo.rank", 0, kMaxTraceWorldSize - 1, &n)) return false;
      out_->rank = static_cast<int>(n);
    } else if (key_ == "world_size") {
      if (!FileInteger(v, "distributedInfo.world_size", 1, kMaxTraceWorldSize, &n)) return false;
      out_->world_size = static_cast<int>(n);
    } else if (key_ == "nccl_version") {
      out_->nccl_version = TextOf(v);
    }
    return true;
  }

  // One deviceProperties entry; each field read, when present, an integer in its range.
  bool EmitDevice() {
    KinetoDevice d;
    d.name = FieldText(event_, "name");
    const std::string at = "deviceProperties[" + std::to_string(out_->devices.size()) + "].";
    auto field = [&](const char* key, int64_t lo, int64_t hi, int64_t absent, int64_t* out) {
      auto it = event_.find(key);
      if (it == event_.end()) {
        *out = absent;
        return true;
      }
      return FileInteger(it->second, at + key, lo, hi, out);
    };
    int64_t id = -1, sms = 0, major = 0, minor = 0;
    if (!field("id", 0, 1023, -1, &id) || !field("numSms", 0, 1 << 20, 0, &sms) ||
        !field("totalGlobalMem", 0, kMaxTraceId, 0, &d.memory_bytes) || !field("computeMajor", 0, 1000, 0, &major) ||
        !field("computeMinor", 0, 1000, 0, &minor) || !field("l2CacheSize", 0, kMaxTraceId, 0, &d.l2_cache_bytes))
      return false;
    d.id = static_cast<int>(id);
    d.sm_count = static_cast<int>(sms);
    d.compute_major = static_cast<int>(major);
    d.compute_minor = static_cast<int>(minor);
    out_->devices.push_back(std::move(d));
    return true;
  }

  void Drop(const std::string& category, const std::string& why) { ++out_->dropped[category][why]; }

  void Emit() {
    ++out_->events;
    const std::string ph = FieldText(event_, "ph");
    const std::string cat = FieldText(event_, "cat");
    if (ph != "X") {
      ++out_->ignored[ph == "M" ? "metadata" : cat];
      return;
    }
    if (cat != "kernel" && cat != "cpu_op" && cat != "user_annotation" && cat != "gpu_user_annotation" &&
        cat != "cuda_runtime" && cat != "cuda_driver") {
      ++out_->ignored[cat];
      return;
    }
    EventFields f(event_, args_);
    auto named = event_.find("name");
    if (named == event_.end() || !std::holds_alternative<std::string>(named->second) ||
        std::get<std::string>(named->second).empty())
      f.Fail("name missing or not text (name)");
    const std::string name = FieldText(event_, "name");
    const int64_t start = f.TimeNs("ts", "start time", kMaxTraceStartUs);
    const int64_t duration = f.TimeNs("dur", "duration", kMaxTraceDurationUs);
    if (cat == "kernel")
      EmitKernel(name, start, duration, &f);
    else
      EmitHostEvent(cat, name, start, duration, &f);
  }

  // A kernel: its args (Kineto writes device, stream, correlation and grid for every kernel); an
  // NCCL kernel's grid is its channels.
  void EmitKernel(const std::string& name, int64_t start, int64_t duration, EventFields* f) {
    if (!has_args_) f->Fail("no args (the kernel's device, stream, correlation, grid)");
    KinetoKernel k;
    k.name = name;
    k.start_ns = start;
    k.duration_ns = duration;
    k.device = static_cast<int>(f->Integer(true, "device", "args.device", "device", 0, 1023, -1));
    k.stream = f->Integer(true, "stream", "args.stream", "stream", 0, kMaxTraceId, -1);
    k.correlation = f->Integer(true, "correlation", "args.correlation", "correlation id", 0, kMaxTraceId, -1);
    k.grid_x = static_cast<int>(f->Integer(true, "grid.x", "args.grid", "grid x (an NCCL kernel's channels)", 1,
                                           std::numeric_limits<int>::max(), -1, ParseNcclKernelName(name).ok));
    k.collective = FieldText(args_, "Collective name");
    k.in_elements = f->Integer(true, "In msg nelems", "args.In msg nelems", "elements", 0, kMaxTraceElements, -1);
    k.out_elements = f->Integer(true, "Out msg nelems", "args.Out msg nelems", "elements", 0, kMaxTraceElements, -1);
    k.dtype = FieldText(args_, "dtype");
    k.group_size =
        static_cast<int>(f->Integer(true, "Group size", "args.Group size", "group size", 1, kMaxTraceWorldSize, -1));
    k.external_id = f->Integer(true, "External id", "args.External id", "External id", 0, kMaxTraceId, -1);
    if (!f->why().empty()) return Drop("kernel", f->why());
    out_->kernels.push_back(std::move(k));
  }

  // A host event: an operator call, a host range, a launch call (each on its thread, required), or
  // a host range's GPU span (its "tid" the stream, not read by the import).
  void EmitHostEvent(const std::string& cat, const std::string& name, int64_t start, int64_t duration, EventFields* f) {
    const int64_t tid =
        f->Integer(false, "tid", "tid", "thread", 0, kMaxTraceId, -1, /*required=*/cat != "gpu_user_annotation");
    const bool launch = cat == "cuda_runtime" || cat == "cuda_driver";
    const int64_t id = launch
                           ? f->Integer(true, "correlation", "args.correlation", "correlation id", 0, kMaxTraceId, -1)
                           : f->Integer(true, "External id", "args.External id", "External id", 0, kMaxTraceId, -1);
    if (!f->why().empty()) return Drop(cat, f->why());
    if (cat == "cpu_op") {
      out_->cpu_ops.push_back({name, start, duration, tid});
      if (IsShapeOp(name)) EmitShapeOp(name, start, duration, tid, id);
    } else if (launch) {
      out_->launches.push_back({name, start, duration, tid, id});
    } else {
      (cat == "user_annotation" ? out_->ranges : out_->gpu_ranges).push_back({name, start, duration, tid, id});
    }
  }

  // An operator whose shapes the importer reads: each of its Input Dims a dimension in [0, kMaxTraceDim].
  void EmitShapeOp(const std::string& name, int64_t start, int64_t duration, int64_t tid, int64_t external_id) {
    KinetoOp o{name, start, duration, tid, external_id, {}, std::move(types_), {}};
    types_.clear();
    const std::string why = "a dimension not an integer in [0, " + std::to_string(kMaxTraceDim) + "] (args.Input Dims)";
    for (const std::vector<double>& shape : dims_) {
      std::vector<int64_t>& dims = o.input_dims.emplace_back();
      for (double d : shape) {
        if (!IsIntegerIn(d, 0, static_cast<double>(kMaxTraceDim))) return Drop("cpu_op (shapes)", why);
        dims.push_back(static_cast<int64_t>(d));
      }
    }
    for (const std::vector<std::vector<double>>& list : lists_) {
      double elements = 0;
      for (const std::vector<double>& shape : list) {
        double n = 1;
        for (double d : shape) {
          if (!IsIntegerIn(d, 0, static_cast<double>(kMaxTraceDim))) return Drop("cpu_op (shapes)", why);
          n *= d;
        }
        elements += n;
      }
      if (elements > static_cast<double>(kMaxTraceListElements))
        return Drop("cpu_op (shapes)",
                    "a TensorList input past " + std::to_string(kMaxTraceListElements) + " elements (args.Input Dims)");
      o.input_list_elements.push_back(list.empty() ? 0 : static_cast<int64_t>(elements));
    }
    out_->ops.push_back(std::move(o));
  }

  KinetoTrace* out_;
  std::vector<std::vector<double>> dims_;  // the event's "Input Dims" (NaN: not a number)
  // Per input, the shapes of a TensorList input's tensors (empty for a tensor or scalar input).
  std::vector<std::vector<std::vector<double>>> lists_;
  std::vector<std::string> types_;  // its "Input type"
  std::vector<Frame> stack_;
  std::string key_;
  Fields event_, args_;
  bool has_args_ = false;
  bool saw_events_ = false;
  std::size_t error_position_ = 0;
  std::string error_, error_token_, invalid_;
};

// "N kernel events dropped: R1 (n1), R2 (n2)" for the messages of a trace without usable kernels.
std::string DroppedKernels(const KinetoTrace& t) {
  auto it = t.dropped.find("kernel");
  if (it == t.dropped.end()) return "";
  int64_t n = 0;
  std::string why;
  for (const auto& [reason, count] : it->second) {
    n += count;
    why += (why.empty() ? "" : "; ") + reason + " (" + std::to_string(count) + ")";
  }
  return "; all " + std::to_string(n) + " kernel events dropped: " + why;
}

StatusOr<KinetoTrace> Parse(std::istream& in, const std::string& name, const GzStreamBuf* gz) {
  KinetoTrace t;
  t.path = name;
  Handler h(&t);
  const bool ok = nlohmann::json::sax_parse(in, &h, nlohmann::json::input_format_t::json, /*strict=*/true);
  if (gz != nullptr && !gz->over_bound().empty()) return InvalidArgumentError(name + ": " + gz->over_bound());
  if (gz != nullptr && gz->failed())
    return InvalidArgumentError(name + ": the gzip stream is corrupt or truncated (after byte " +
                                std::to_string(h.error_position()) + " of the uncompressed text)");
  if (!h.invalid().empty()) return InvalidArgumentError(name + ": " + h.invalid());
  if (!ok) {
    // The parser stopped with nothing left to read: the text ended before the JSON did.
    const bool truncated =
        h.error().find("unexpected end of input") != std::string::npos ||
        std::istream::traits_type::eq_int_type(in.rdbuf()->sgetc(), std::istream::traits_type::eof());
    if (truncated)
      return InvalidArgumentError(name + ": the JSON text stops at byte " + std::to_string(h.error_position()) +
                                  " (a truncated trace: was the profiler stopped before it finished writing?)");
    return InvalidArgumentError(name + ": not JSON at byte " + std::to_string(h.error_position()) + " (near '" +
                                h.error_token() + "'): a Kineto trace is Chrome-trace JSON");
  }
  if (!h.saw_events())
    return InvalidArgumentError(name + ": no \"traceEvents\" array at the top level: not a Chrome-trace (Kineto) file");
  if (t.kernels.empty())
    return InvalidArgumentError(
        name + ": " + std::to_string(t.events) + " events but no GPU kernels (category \"kernel\") kept" +
        DroppedKernels(t) + (t.dropped.count("kernel") ? "" : ": was the profiler run with ProfilerActivity.CUDA?"));
  return t;
}

}  // namespace

bool IsGemmOp(const std::string& name) { return name == "aten::mm" || name == "aten::addmm"; }

bool IsAttentionOp(const std::string& name) {
  return name == "aten::_cudnn_attention_forward" || name == "aten::_flash_attention_forward" ||
         name == "aten::_efficient_attention_forward";
}

bool IsNormOp(const std::string& name) {
  return name.find("rms_norm") != std::string::npos || name.find("rmsnorm") != std::string::npos ||
         (name.rfind("triton_", 0) == 0 && name.find("rsqrt") != std::string::npos);
}

bool IsElementwiseOp(const std::string& name) {
  static const std::set<std::string> kOps = {"aten::add",   "aten::add_",    "aten::sub",   "aten::mul",
                                             "aten::mul_",  "aten::div",     "aten::neg",   "aten::silu",
                                             "aten::gelu",  "aten::sigmoid", "aten::exp",   "aten::cat",
                                             "aten::copy_", "aten::where",   "aten::fill_", "aten::masked_fill_"};
  return kOps.count(name) > 0;
}

bool IsShapeOp(const std::string& name) {
  return IsGemmOp(name) || IsAttentionOp(name) || IsNormOp(name) || IsElementwiseOp(name) || name == "aten::argmax";
}

StatusOr<KinetoTrace> ParseKinetoTrace(const std::string& json_text, const std::string& name) {
  std::istringstream in(json_text);
  return Parse(in, name, nullptr);
}

StatusOr<KinetoTrace> ReadKinetoTrace(const std::string& path, const TraceLimits& limits) {
  {
    std::ifstream probe(path, std::ios::binary);
    if (!probe) return NotFoundError(path + ": cannot open");
  }
  std::error_code ec;
  const auto file_bytes = std::filesystem::file_size(path, ec);
  if (!ec && file_bytes > static_cast<std::uintmax_t>(limits.max_file_bytes))
    return InvalidArgumentError(path + ": " + std::to_string(file_bytes) + " bytes, past the bound of " +
                                std::to_string(limits.max_file_bytes) + " bytes on a trace file");
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) return NotFoundError(path + ": cannot open");
  gzbuffer(f, 1 << 17);
  GzStreamBuf buf(f, limits);
  std::istream in(&buf);
  return Parse(in, path, &buf);
}

}  // namespace specsim::profile

#include "sim/profile/kineto_trace.h"

#include <zlib.h>

#include <cmath>
#include <fstream>
#include <istream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <streambuf>
#include <variant>

namespace specsim::profile {
namespace {

// A std::streambuf over a gzip file (zlib's gzread also passes plain files through unchanged).
class GzStreamBuf : public std::streambuf {
 public:
  explicit GzStreamBuf(gzFile f) : file_(f) {}
  ~GzStreamBuf() override {
    if (file_ != nullptr) gzclose(file_);
  }
  bool failed() const { return failed_; }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    const int n = gzread(file_, buffer_, sizeof(buffer_));
    if (n < 0) failed_ = true;
    if (n <= 0) return traits_type::eof();
    setg(buffer_, buffer_, buffer_ + n);
    return traits_type::to_int_type(*gptr());
  }

 private:
  gzFile file_;
  char buffer_[1 << 16];
  bool failed_ = false;
};

int64_t NanosFromMicros(double us) { return std::llround(us * 1e3); }

using Scalar = std::variant<std::string, double>;

// The SAX handler: keeps the fields of one event at a time (and its "args"), hands the event over
// at its end, and reads distributedInfo's scalars.
class Handler : public nlohmann::json::json_sax_t {
 public:
  explicit Handler(KinetoTrace* out) : out_(out) {}

  bool null() override { return Value(Scalar(std::string())); }
  bool boolean(bool v) override { return Value(Scalar(v ? 1.0 : 0.0)); }
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
      dims_.clear();
      types_.clear();
    }
    key_.clear();
    return true;
  }
  bool end_object() override {
    if (InEvent() && Depth() == 3) Emit();
    if (InDevices() && Depth() == 3) EmitDevice();
    stack_.pop_back();
    key_.clear();
    return true;
  }
  bool start_array(std::size_t) override {
    // An inner shape of an operator's "Input Dims": [[1, 4096], [4096, 3072]].
    if (InEvent() && Depth() == 5 && stack_[3].key == "args" && stack_[4].key == "Input Dims") dims_.emplace_back();
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
        types_.push_back(Text(v));
      else if (Depth() == 6 && stack_[3].key == "args" && stack_[4].key == "Input Dims" && !dims_.empty())
        dims_.back().push_back(static_cast<int64_t>(Number(v)));
    } else if (Depth() == 2 && stack_[1].object && stack_[1].key == "distributedInfo") {
      info_[key_] = std::move(v);
      if (key_ == "rank") out_->rank = static_cast<int>(Number(info_["rank"]));
      if (key_ == "world_size") out_->world_size = static_cast<int>(Number(info_["world_size"]));
      if (key_ == "nccl_version") out_->nccl_version = Text(info_["nccl_version"]);
    }
    key_.clear();
    return true;
  }

  static double Number(const Scalar& s) {
    if (const double* d = std::get_if<double>(&s)) return *d;
    try {
      return std::stod(std::get<std::string>(s));
    } catch (...) {
      return -1;
    }
  }
  static std::string Text(const Scalar& s) {
    if (const std::string* t = std::get_if<std::string>(&s)) return *t;
    std::ostringstream o;
    o << std::get<double>(s);
    return o.str();
  }
  double Field(const std::map<std::string, Scalar>& m, const char* k, double missing) const {
    auto it = m.find(k);
    return it == m.end() ? missing : Number(it->second);
  }
  std::string FieldText(const std::map<std::string, Scalar>& m, const char* k) const {
    auto it = m.find(k);
    return it == m.end() ? std::string() : Text(it->second);
  }

  void EmitDevice() {
    KinetoDevice d;
    d.id = static_cast<int>(Field(event_, "id", -1));
    d.name = FieldText(event_, "name");
    d.sm_count = static_cast<int>(Field(event_, "numSms", 0));
    d.memory_bytes = static_cast<int64_t>(Field(event_, "totalGlobalMem", 0));
    d.compute_major = static_cast<int>(Field(event_, "computeMajor", 0));
    d.compute_minor = static_cast<int>(Field(event_, "computeMinor", 0));
    d.l2_cache_bytes = static_cast<int64_t>(Field(event_, "l2CacheSize", 0));
    out_->devices.push_back(std::move(d));
  }

  void Emit() {
    ++out_->events;
    const std::string ph = FieldText(event_, "ph");
    const std::string cat = FieldText(event_, "cat");
    if (ph != "X") {
      ++out_->ignored[ph == "M" ? "metadata" : cat];
      return;
    }
    const std::string name = FieldText(event_, "name");
    const int64_t start = NanosFromMicros(Field(event_, "ts", 0));
    const int64_t duration = NanosFromMicros(Field(event_, "dur", 0));
    const auto tid = static_cast<int64_t>(Field(event_, "tid", -1));
    if (cat == "kernel") {
      KinetoKernel k;
      k.name = name;
      k.start_ns = start;
      k.duration_ns = duration;
      k.device = static_cast<int>(Field(args_, "device", -1));
      k.stream = static_cast<int64_t>(Field(args_, "stream", -1));
      k.correlation = static_cast<int64_t>(Field(args_, "correlation", -1));
      k.grid_x = static_cast<int>(Field(args_, "grid.x", -1));
      k.collective = FieldText(args_, "Collective name");
      k.in_elements = static_cast<int64_t>(Field(args_, "In msg nelems", -1));
      k.out_elements = static_cast<int64_t>(Field(args_, "Out msg nelems", -1));
      k.dtype = FieldText(args_, "dtype");
      k.group_size = static_cast<int>(Field(args_, "Group size", -1));
      k.external_id = static_cast<int64_t>(Field(args_, "External id", -1));
      out_->kernels.push_back(std::move(k));
    } else if (cat == "cpu_op") {
      out_->cpu_ops.push_back({name, start, duration, tid});
      if (!IsShapeOp(name)) return;
      KinetoOp o;
      o.name = name;
      o.start_ns = start;
      o.duration_ns = duration;
      o.tid = tid;
      o.external_id = static_cast<int64_t>(Field(args_, "External id", -1));
      o.input_dims = std::move(dims_);
      o.input_types = std::move(types_);
      dims_.clear();
      types_.clear();
      out_->ops.push_back(std::move(o));
    } else if (cat == "user_annotation" || cat == "gpu_user_annotation") {
      KinetoRange r{name, start, duration, tid, static_cast<int64_t>(Field(args_, "External id", -1))};
      (cat == "user_annotation" ? out_->ranges : out_->gpu_ranges).push_back(std::move(r));
    } else if (cat == "cuda_runtime" || cat == "cuda_driver") {
      out_->launches.push_back({name, start, duration, tid, static_cast<int64_t>(Field(args_, "correlation", -1))});
    } else {
      ++out_->ignored[cat];
    }
  }

  KinetoTrace* out_;
  std::vector<std::vector<int64_t>> dims_;  // the event's "Input Dims"
  std::vector<std::string> types_;          // its "Input type"
  std::vector<Frame> stack_;
  std::string key_;
  std::map<std::string, Scalar> event_, args_, info_;
  bool saw_events_ = false;
  std::size_t error_position_ = 0;
  std::string error_, error_token_;
};

StatusOr<KinetoTrace> Parse(std::istream& in, const std::string& name, const GzStreamBuf* gz) {
  KinetoTrace t;
  t.path = name;
  Handler h(&t);
  const bool ok = nlohmann::json::sax_parse(in, &h, nlohmann::json::input_format_t::json, /*strict=*/true);
  if (gz != nullptr && gz->failed())
    return InvalidArgumentError(name + ": the gzip stream is corrupt or truncated (after byte " +
                                std::to_string(h.error_position()) + " of the uncompressed text)");
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
    return InvalidArgumentError(name + ": " + std::to_string(t.events) +
                                " events but no GPU kernels (category \"kernel\"): was the profiler run with "
                                "ProfilerActivity.CUDA?");
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

bool IsShapeOp(const std::string& name) {
  return IsGemmOp(name) || IsAttentionOp(name) || IsNormOp(name) || name == "aten::argmax";
}

StatusOr<KinetoTrace> ParseKinetoTrace(const std::string& json_text, const std::string& name) {
  std::istringstream in(json_text);
  return Parse(in, name, nullptr);
}

StatusOr<KinetoTrace> ReadKinetoTrace(const std::string& path) {
  {
    std::ifstream probe(path, std::ios::binary);
    if (!probe) return NotFoundError(path + ": cannot open");
  }
  gzFile f = gzopen(path.c_str(), "rb");
  if (f == nullptr) return NotFoundError(path + ": cannot open");
  gzbuffer(f, 1 << 17);
  GzStreamBuf buf(f);
  std::istream in(&buf);
  return Parse(in, path, &buf);
}

}  // namespace specsim::profile

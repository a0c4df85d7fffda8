#include "validate/trace_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <google/protobuf/util/json_util.h>

namespace specsim::validate {

std::string JsonPathFor(const std::string& pb_path) {
  const std::string ext = ".pb";
  if (pb_path.size() > ext.size() && pb_path.compare(pb_path.size() - ext.size(), ext.size(), ext) == 0)
    return pb_path.substr(0, pb_path.size() - ext.size()) + ".json";
  return pb_path + ".json";
}

Status WriteFileAtomically(const std::string& path, const std::string& contents) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Unavailable("cannot create " + tmp + ": " + std::strerror(errno));
  size_t done = 0;
  while (done < contents.size()) {
    ssize_t w = ::write(fd, contents.data() + done, contents.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      std::string err = std::strerror(errno);
      ::close(fd);
      ::unlink(tmp.c_str());
      return Unavailable("cannot write " + tmp + ": " + err);
    }
    done += static_cast<size_t>(w);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    std::string err = std::strerror(errno);
    ::unlink(tmp.c_str());
    return Unavailable("cannot flush " + tmp + ": " + err);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    std::string err = std::strerror(errno);
    ::unlink(tmp.c_str());
    return Unavailable("cannot rename " + tmp + " to " + path + ": " + err);
  }
  return Status::Ok();
}

StatusOr<std::string> TraceToJson(const trace::Trace& t) {
  std::string json;
  google::protobuf::util::JsonPrintOptions opts;
  opts.add_whitespace = true;
  opts.preserve_proto_field_names = true;
  opts.always_print_primitive_fields = true;
  auto st = google::protobuf::util::MessageToJsonString(t, &json, opts);
  if (!st.ok()) return Internal("trace to JSON: " + std::string(st.message()));
  return json;
}

Status WriteTrace(const trace::Trace& t, const std::string& pb_path, bool write_json) {
  std::string bytes;
  if (!t.SerializeToString(&bytes)) return Internal("cannot serialize the trace");
  RETURN_IF_ERROR(WriteFileAtomically(pb_path, bytes));
  if (write_json) {
    ASSIGN_OR_RETURN(std::string json, TraceToJson(t));
    RETURN_IF_ERROR(WriteFileAtomically(JsonPathFor(pb_path), json + "\n"));
  }
  return Status::Ok();
}

StatusOr<trace::Trace> ReadTrace(const std::string& pb_path) {
  std::ifstream in(pb_path, std::ios::binary);
  if (!in) return Status(StatusCode::kNotFound, "cannot open " + pb_path);
  std::stringstream ss;
  ss << in.rdbuf();
  trace::Trace t;
  if (!t.ParseFromString(ss.str())) return DataLoss(pb_path + " is not a specsim.trace.Trace");
  return t;
}

}  // namespace specsim::validate

#include "sim/io/file_io.h"

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>
#include <system_error>

#include "sim/io/embedded_files.h"

namespace specsim::io {
namespace {

// A temporary name beside `target` that no other write uses: this process's id and a count of
// its writes (two runs writing one path, or two threads of one run, each get their own, so that
// neither renames the other's half-written file into place).
std::string TemporaryNameFor(const std::string& target) {
  static std::atomic<uint64_t> writes{0};
  return target + ".tmp-specsim-" + std::to_string(static_cast<long long>(::getpid())) + "-" +
         std::to_string(writes.fetch_add(1));
}

std::string_view StripDotSlash(std::string_view path) {
  while (path.size() >= 2 && path.substr(0, 2) == "./") path.remove_prefix(2);
  return path;
}

std::string DirectoryOf(std::string_view path) {
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? std::string() : std::string(path.substr(0, slash + 1));
}

}  // namespace

StatusOr<std::string> ReadFileToString(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) return NotFoundError(path + ": no such file");
  if (!std::filesystem::is_regular_file(status)) {
    return InvalidArgumentError(path + ": not a regular file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return InvalidArgumentError(path + ": cannot open for reading");
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) return InvalidArgumentError(path + ": read error");
  return contents.str();
}

namespace {

// Opens `file` (truncating), writes `contents`, flushes and closes it, each step checked; errors
// name `path`, the file the user asked for.
Status WriteWhole(const std::string& file, const std::string& path, const std::string& contents) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  if (!out) return InternalError(path + ": cannot write (cannot create " + file + ")");
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  out.flush();
  if (!out) return InternalError(path + ": cannot write (the device is full or the write failed)");
  out.close();
  if (out.fail()) return InternalError(path + ": cannot write (closing the file failed)");
  return OkStatus();
}

}  // namespace

Status WriteFileAtomically(const std::string& path, const std::string& contents) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);  // follows symbolic links
  // Not a regular file (/dev/null, /dev/stdout, a pipe): renaming a file over it would replace the
  // device node itself (as root, --out /dev/null once did), so it is written in place.
  if (!ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    return WriteWhole(path, path, contents);
  // A symbolic link to a regular file: the file it names is replaced, the link stays.
  std::string target = path;
  if (std::filesystem::is_symlink(std::filesystem::symlink_status(path, ec))) {
    const std::filesystem::path resolved = std::filesystem::canonical(path, ec);
    if (!ec) target = resolved.string();
  }
  const std::string tmp = TemporaryNameFor(target);
  Status written = WriteWhole(tmp, path, contents);
  if (written.ok()) {
    std::filesystem::rename(tmp, target, ec);
    if (ec) written = InternalError(path + ": cannot write (" + ec.message() + ")");
  }
  if (!written.ok()) {
    std::error_code ignored;
    std::filesystem::remove(tmp, ignored);
  }
  return written;
}

std::string ConfigSourceOf(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec))
    return std::filesystem::path(path).is_absolute() ? "file" : "working directory";
  return EmbeddedFile(StripDotSlash(path)) ? "compiled-in" : "missing";
}

StatusOr<ConfigText> ReadConfigFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
    return ConfigText{std::move(text), path, false};
  }
  const std::string_view relative = StripDotSlash(path);
  if (std::optional<std::string_view> embedded = EmbeddedFile(relative)) {
    return ConfigText{std::string(*embedded), std::string(relative) + " (embedded copy)", true};
  }
  std::string message = path + ": no such file, and no embedded copy of that name";
  const std::string dir = DirectoryOf(relative);
  std::string same_dir;
  for (std::string_view name : EmbeddedFileNames()) {
    if (DirectoryOf(name) == dir) same_dir += (same_dir.empty() ? "" : ", ") + std::string(name);
  }
  if (!same_dir.empty()) message += " (embedded files there: " + same_dir + ")";
  return NotFoundError(message);
}

std::string CommittedPath(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path p(path);
  if (std::filesystem::exists(p, ec) || !p.is_relative()) return path;
  const std::string rel(StripDotSlash(path));
  if (rel.rfind("traces/", 0) != 0) return path;
  const std::filesystem::path in_source = std::filesystem::path(SPECSIM_SOURCE_DIR) / rel;
  return std::filesystem::exists(in_source, ec) ? in_source.string() : path;
}

}  // namespace specsim::io

// Reading input files, with a fallback to the copies embedded in the binary.
//
// ReadFileToString reads one file from disk. ReadConfigFile applies the embedded fallback rule:
//   1. if `path` names an existing file on disk, that file is read (the disk always wins);
//   2. otherwise, if `path` with any leading "./" removed equals the relative path of an embedded
//      file (e.g. "configs/hardware/h200-1x.textproto", see embedded_files.h), the embedded copy is
//      used, and its display name says so: "configs/hardware/h200-1x.textproto (embedded copy)",
//      so every error message and report shows where the text came from;
//   3. otherwise NotFound naming the path and listing the embedded files of the same directory.
// So `specsim --hardware configs/hardware/x.textproto` works from any working directory, and a
// local edit of the file takes effect when run from the repository root.
//
// Committed traces (traces/..., binary measurement traces and profiler traces, too large to embed)
// follow a like rule, CommittedPath: a relative path under traces/ that does not exist from the
// working directory names the same file in the source tree specsim was built from.
#pragma once

#include <string>

#include "sim/core/status.h"

namespace specsim::io {

// The whole file. NotFound "PATH: no such file" when absent; InvalidArgument when not a regular
// file or unreadable.
StatusOr<std::string> ReadFileToString(const std::string& path);

struct ConfigText {
  std::string text;
  std::string display_name;  // the path, or "<relative path> (embedded copy)"
  bool embedded = false;     // true when the embedded copy was used
};

// The disk file, else the embedded copy (rule above).
StatusOr<ConfigText> ReadConfigFile(const std::string& path);

// Where ReadConfigFile(path) reads `path` from, for reports: "compiled-in" (the embedded copy),
// "working directory" (a relative path found there: it shadows a compiled-in copy of that name),
// "file" (an absolute path), "missing".
std::string ConfigSourceOf(const std::string& path);

// `path`, or for a relative "traces/..." (or "./traces/...") path absent from the working directory
// and present in the source tree specsim was built from, that file's path there.
std::string CommittedPath(const std::string& path);

// Writes `contents` to `path` whole or not at all: into a temporary file beside it (a name of its
// own per process and write, so that concurrent writers of one path do not share it), flushed and
// closed, then renamed over `path` (over the file a symbolic link names, the link kept). A path
// that exists and is not a regular file (/dev/null, /dev/stdout, a FIFO) is written in place, the
// write checked. kInternal "PATH: cannot write (...)" when any step fails (the temporary file is
// removed); commands exit 1 on it (kWriteFailedExitCode).
Status WriteFileAtomically(const std::string& path, const std::string& contents);
inline constexpr int kWriteFailedExitCode = 1;

}  // namespace specsim::io

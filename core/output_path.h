// The rules every command and front end applies to the files it writes, in one place: an output
// can be created where the run will write it (checked before the run, not found out after it),
// it never destroys an input or another output of the same run, opening it never hangs, and a
// lost standard output is an error, not a success.
#ifndef HOGWILD_CORE_OUTPUT_PATH_H_
#define HOGWILD_CORE_OUTPUT_PATH_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace hogwild {

// OK when `path` is not a directory and its parent directory exists ("" parent: the working
// directory). Else kInvalidArgument "<name>=<path>: is a directory; give a file path" or
// "<name>=<path>: the directory <parent> does not exist; create it first". Reads metadata only;
// thread-safe.
absl::Status CheckOutputFilePath(const std::string& name, const std::string& path);

// CheckOutputFilePath(), for a file the run replaces whole (core/atomic_file.h), plus: an
// existing `path` must be a regular file (or a symlink to one), since the rename would put a
// regular file in the place of a device or a pipe. Else kInvalidArgument "<name>=<path> is not a
// regular file (a device, a pipe or a socket), which this run would replace; give a file path".
absl::Status CheckReplacedFilePath(const std::string& name, const std::string& path);

// A file a run reads or writes, as the user named it: `option`=`value`, and `file`, the file
// itself when the option names something else (--checkpoint_dir=D: D/checkpoint.hwckpt).
struct RunFile {
  std::string option;  // "--log", "TrainerOptions::log_path"
  std::string value;   // what the user gave
  std::string file;    // the file; empty: `value`
  bool output = false;
};

// OK when no output in `files` is the same file as another entry (output or input) of the same
// run: writing it would destroy that file. Entries with an empty path, and inputs that do not
// exist (nothing to destroy; "synthetic" is a dataset's name, not a file), are skipped. The same
// file: one (device, inode) where both exist, symlinks followed; else the same absolute path once
// symlinks in its existing part are resolved and "." and ".." removed. Character devices
// (/dev/null) are never the same file as anything. Errors: kInvalidArgument, e.g.
// "--log=d/checkpoint.hwckpt is the same file as --checkpoint_dir=d (its file
// d/checkpoint.hwckpt); give --log another path". Reads metadata only; thread-safe.
absl::Status CheckDistinctFiles(absl::Span<const RunFile> files);

// Opens (creating or truncating) a file the run streams rows into (a convergence log), for
// writing, without ever blocking: a pipe that no process reads would block open(2) until one
// does, so it is refused. A pipe with a reader, a device and a regular file are accepted.
// Returns the descriptor (O_CLOEXEC, blocking writes). Errors: kFailedPrecondition
// "<name>=<path> is a pipe that no process reads, so nothing could be written to it; start its
// reader first, or give a file path", kInvalidArgument "<name>=<path>: cannot create it
// (<strerror>)". Thread-safe.
absl::StatusOr<int> OpenOutputStream(const std::string& name, const std::string& path);

// Flushes the standard output and returns `code`, or 1 (when `code` is 0) after printing
// "error: cannot write to standard output (<strerror>)" to standard error when the output was
// lost (a full disk, /dev/full, a closed pipe): a command's summary is part of its result, and
// a lost one must not look like a success. Every command's main() returns through it.
int CheckedExitCode(int code);

// Ends a command's process with `code`, to be called once main's own objects are gone (their
// destructors, MPI's finalization among them, have run): `int main(...) { return
// EndCommand(Main(...)); }`. Flushes the standard streams; then, under an address-space limit
// (RLIMIT_AS, `ulimit -v`), ends the process with _Exit(code), without the exit handlers, and
// otherwise returns `code` for main to return. Why: OpenBLAS's pthread build starts a server
// thread as it loads, before main, and that thread maps its 128 MiB buffer as it starts; under
// such a limit the mapping can fail, the thread then retries it forever, and OpenBLAS's exit
// handler joins it, so a command that had already said its error would never end. Without a
// limit the handlers run as usual (a leak checker's among them). Call from the main thread.
int EndCommand(int code);

// Under `bazel run` a command starts in its runfiles tree, so a relative path the user typed
// (--log=run.csv, --output=p.csv) would land there; Bazel names the directory `bazel run` was
// typed in as BUILD_WORKING_DIRECTORY, and this makes it the working directory. Does nothing
// when that variable is unset (a binary started directly, a test). Call it once at the start of
// main(), before any path is used. Errors: kFailedPrecondition naming the directory when it
// cannot be entered. Not thread-safe (changes the process's working directory).
absl::Status EnterBuildWorkingDirectory();

}  // namespace hogwild

#endif  // HOGWILD_CORE_OUTPUT_PATH_H_

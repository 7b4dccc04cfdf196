// Checks that an output file can be created where a run will write it at the end, so that a bad
// path fails before the run rather than after it.
#ifndef HOGWILD_CORE_OUTPUT_PATH_H_
#define HOGWILD_CORE_OUTPUT_PATH_H_

#include <string>

#include "absl/status/status.h"

namespace hogwild {

// OK when `path` is not a directory and its parent directory exists ("" parent: the working
// directory). Else kInvalidArgument "<name>=<path>: is a directory; give a file path" or
// "<name>=<path>: the directory <parent> does not exist; create it first". Reads metadata only;
// thread-safe.
absl::Status CheckOutputFilePath(const std::string& name, const std::string& path);

// Under `bazel run` a command starts in its runfiles tree, so a relative path the user typed
// (--log=run.csv, --output=p.csv) would land there; Bazel names the directory `bazel run` was
// typed in as BUILD_WORKING_DIRECTORY, and this makes it the working directory. Does nothing
// when that variable is unset (a binary started directly, a test). Call it once at the start of
// main(), before any path is used. Errors: kFailedPrecondition naming the directory when it
// cannot be entered. Not thread-safe (changes the process's working directory).
absl::Status EnterBuildWorkingDirectory();

}  // namespace hogwild

#endif  // HOGWILD_CORE_OUTPUT_PATH_H_

// The one way this project replaces a file whole (a checkpoint, a predictions CSV, a study
// record or table, a staleness histogram): readers see the previous complete file or the new
// complete one, never a partial one, and no other file is touched.
//
// How: the bytes go to a temporary file created exclusively (mkostemp, O_EXCL) in the
// destination's folder, named `.<name>.tmp.XXXXXX` (six random characters), which is written,
// fsync'ed and renamed over the destination; then the folder is fsync'ed. The exclusive creation
// is what makes the name safe: a fixed `<path>.tmp` would truncate and rename away a file the
// user keeps at that name, and follow a symlink planted there. The temporary file is removed on
// every failure, and by RemovePendingTempFiles() when a signal ends the process mid-write; only
// SIGKILL or a power loss can leave one behind (hidden, never read back).
#ifndef HOGWILD_CORE_ATOMIC_FILE_H_
#define HOGWILD_CORE_ATOMIC_FILE_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace hogwild {

// Replaces `path` with `bytes` atomically (above). `path`'s folder must exist. The new file has
// mode 0644 (less the umask); an existing symlink at `path` is replaced by the file, not followed.
// Errors: "<path>: cannot <step> (<strerror>)" for step in "create a temporary file in <folder>",
// "write it", "fsync it", "close it", "rename it into place", "fsync <folder>": kInternal, or
// kResourceExhausted for a full disk (ENOSPC, EDQUOT). On an error `path` is untouched (except
// after a failed folder fsync: the new file is in place but may not survive a power loss).
// Thread-safe; concurrent writers of one path end with one of their files whole.
absl::Status WriteFileAtomically(const std::string& path, absl::string_view bytes);

// Removes the temporary files of the WriteFileAtomically() calls under way. Async-signal-safe
// (unlink(2) only): a signal handler that ends the process calls it first
// (InstallTempFileCleanupOnSignals(), trainer/cli/stop_signal.h's second signal).
void RemovePendingTempFiles();

// For commands that let SIGINT/SIGTERM/SIGHUP end the process (no handler of their own): installs
// a handler for each such signal whose disposition is the default one that removes the pending
// temporary files and then ends the process by the same signal (so the exit status still says
// "killed by SIGTERM"). A signal the process ignores stays ignored. Call once at the start of
// main(), before any thread starts. Not thread-safe.
void InstallTempFileCleanupOnSignals();

}  // namespace hogwild

#endif  // HOGWILD_CORE_ATOMIC_FILE_H_

// The project's two logging needs, in one place: reporting an error that cannot be returned
// (a destructor releasing a resource: destructors never throw and have no status to return),
// and checking an invariant whose failure is a programmer error (never a user error: those are
// statuses). Both write one line to stderr without allocating, so they are safe at any point,
// including in a destructor during stack unwinding.
#ifndef HOGWILD_CORE_LOGGING_H_
#define HOGWILD_CORE_LOGGING_H_

#include "absl/base/internal/raw_logging.h"
#include "absl/status/status.h"

namespace hogwild {

// Writes "<where>: <status>" to stderr at ERROR when `status` is not OK; nothing otherwise.
// `where` names the object or call that failed (e.g. "CudaBackend"). Thread-safe.
void LogIfError(const char* where, const absl::Status& status);

}  // namespace hogwild

// Aborts with `message` (a string literal) and the file:line when `condition` is false. For
// broken invariants only: input from a user or a file is validated and returned as a status.
#define HOGWILD_CHECK(condition, message) ABSL_RAW_CHECK(condition, message)

#endif  // HOGWILD_CORE_LOGGING_H_

// Status plumbing shared by every layer. Abseil 20220623 has no ABSL_RETURN_IF_ERROR, so the
// project defines its own two macros, used everywhere instead of hand-written early returns.
#ifndef HOGWILD_CORE_STATUS_MACROS_H_
#define HOGWILD_CORE_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define HOGWILD_STATUS_CONCAT_INNER_(a, b) a##b
#define HOGWILD_STATUS_CONCAT_(a, b) HOGWILD_STATUS_CONCAT_INNER_(a, b)

// Evaluates `expr` (an absl::Status) once and returns it from the enclosing function if not OK.
#define HOGWILD_RETURN_IF_ERROR(expr)                         \
  do {                                                        \
    ::absl::Status hogwild_status_ = (expr);                  \
    if (!hogwild_status_.ok()) return hogwild_status_;        \
  } while (0)

// `HOGWILD_ASSIGN_OR_RETURN(T x, F())` or `HOGWILD_ASSIGN_OR_RETURN(x, F())`: evaluates the
// absl::StatusOr<T> once; on error returns its status, else moves the value into the lhs.
#define HOGWILD_ASSIGN_OR_RETURN(lhs, expr) \
  HOGWILD_ASSIGN_OR_RETURN_IMPL_(HOGWILD_STATUS_CONCAT_(hogwild_statusor_, __LINE__), lhs, expr)

#define HOGWILD_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                   \
  if (!statusor.ok()) return std::move(statusor).status();  \
  lhs = std::move(statusor).value()

#endif  // HOGWILD_CORE_STATUS_MACROS_H_

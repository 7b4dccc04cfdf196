// MPI return codes as absl::Status, converted in one place.
//
// The communicator's error handler must be MPI_ERRORS_RETURN (MpiCluster sets it on
// MPI_COMM_WORLD and on its windows); with the default MPI_ERRORS_ARE_FATAL an error aborts the
// job inside the call and never returns here.
//
//   HOGWILD_MPI_RETURN_IF_ERROR(MPI_Barrier(comm));
//
// returns, on failure, kInternal (MPI error classes do not map portably onto status codes) with
// the message
//   "MPI_Barrier(comm) failed at mpi/mpi_cluster.cc:42 on rank 1: MPI_ERR_COMM: invalid
//   communicator"
// naming the call, the source line, the rank and MPI's own error string.
#ifndef HOGWILD_MPI_MPI_STATUS_H_
#define HOGWILD_MPI_MPI_STATUS_H_

#include "absl/status/status.h"

namespace hogwild {

// OK for MPI_SUCCESS; otherwise the error described above. `expr` is the call's text, `file`
// and `line` where it was made. Safe from any thread that may call MPI. Pure apart from asking
// MPI for the rank and the error string (answered locally).
absl::Status MpiCallStatus(int rc, const char* expr, const char* file, int line);

}  // namespace hogwild

#define HOGWILD_MPI_RETURN_IF_ERROR(expr)                                          \
  do {                                                                             \
    const int hogwild_mpi_rc_ = (expr);                                            \
    if (hogwild_mpi_rc_ != 0) {                                                    \
      return ::hogwild::MpiCallStatus(hogwild_mpi_rc_, #expr, __FILE__, __LINE__); \
    }                                                                              \
  } while (false)

#endif  // HOGWILD_MPI_MPI_STATUS_H_

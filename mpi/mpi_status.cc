#include "mpi/mpi_status.h"

#include <mpi.h>

#include "absl/strings/str_format.h"

namespace hogwild {

absl::Status MpiCallStatus(int rc, const char* expr, const char* file, int line) {
  if (rc == MPI_SUCCESS) return absl::OkStatus();
  int rank = -1;
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(rc, text, &length) != MPI_SUCCESS) length = 0;
  return absl::InternalError(absl::StrFormat("%s failed at %s:%d on rank %d: %s (MPI error %d)",
                                             expr, file, line, rank,
                                             absl::string_view(text, length), rc));
}

}  // namespace hogwild

// The capabilities table: which cells of workload x update policy x substrate run, and for each
// one that does not, the one sentence that says why and what to use instead. Every engine and
// front end asks this table (CheckSupported) instead of keeping its own list of refusals, so a
// refusal reads the same wherever it is met and a new capability is one edited line in
// capabilities.cc. The capabilities table of docs/design.md is rendered from it
// (CapabilitiesMarkdown).
//
//   Workload   what is trained: dense networks (trainer/: mlp, cnn, cnn_bn, dense logreg), the
//              sparse linear models (sparse/sparse_train.h: logreg, svm), matrix factorization
//              (sparse/matrix_factorization.h)
//   Mode       the update policy (core/mode.h)
//   Substrate  where the workers run: threads of one process, simulated workers (sim/), MPI
//              processes each with its own threads (mpi/), GPU workers (one thread per GPU
//              worker)
#ifndef HOGWILD_CORE_CAPABILITIES_H_
#define HOGWILD_CORE_CAPABILITIES_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/mode.h"

namespace hogwild {

enum class WorkloadKind { kDense, kSparseLinear, kMatrixFactorization };
enum class Substrate { kThreads, kSimulated, kProcesses, kGpu };

inline constexpr WorkloadKind kAllWorkloadKinds[] = {
    WorkloadKind::kDense, WorkloadKind::kSparseLinear, WorkloadKind::kMatrixFactorization};
inline constexpr Substrate kAllSubstrates[] = {Substrate::kThreads, Substrate::kSimulated,
                                               Substrate::kProcesses, Substrate::kGpu};

// "dense", "sparse_linear", "matrix_factorization"; "unknown" for a value that names none. Pure.
const char* WorkloadKindName(WorkloadKind workload);
// "threads", "simulated", "processes", "gpu"; "unknown" for a value that names none. Pure.
const char* SubstrateName(Substrate substrate);

// The inverses of the names. Errors: kInvalidArgument naming the value and the allowed ones.
absl::StatusOr<WorkloadKind> ParseWorkloadKind(absl::string_view name);
absl::StatusOr<Substrate> ParseSubstrate(absl::string_view name);

// OK when `workload` trains under `mode` on `substrate`; otherwise kInvalidArgument with the
// cell's one sentence: what is refused, why, and what runs instead (the modes this workload runs
// on this substrate, the substrates this workload runs this mode on, the workloads that run this
// mode here). The sentence starts with the mode's name, so a front end prefixes its own spelling
// of the option: "--mode: " + message, "TrainerOptions::mode: " + message. Pure.
absl::Status CheckSupported(WorkloadKind workload, Mode mode, Substrate substrate);

// CheckSupported with the front end's name of the mode option before the sentence:
// "<option>: <sentence>" (option "--mode" gives "--mode: ssp is not available for ..."). Pure.
absl::Status CheckSupported(WorkloadKind workload, Mode mode, Substrate substrate,
                            absl::string_view option);

// Whether a run of `workload` under `mode` writes and resumes checkpoints (wherever the cell runs
// outside the simulator, which keeps no checkpoints). Pure.
bool SupportsCheckpoints(WorkloadKind workload, Mode mode);

// OK when SupportsCheckpoints(workload, mode); otherwise kInvalidArgument with one sentence that
// starts with the mode's name and names the modes with checkpoints. Pure.
absl::Status CheckCheckpointsSupported(WorkloadKind workload, Mode mode);
// The same with the front end's name of the checkpoint option before the sentence. Pure.
absl::Status CheckCheckpointsSupported(WorkloadKind workload, Mode mode, absl::string_view option);

// The whole table as Markdown: one row per workload and mode, a column per substrate and one for
// checkpoints, each refused cell marked with the letter of its reason, the reasons below. The
// capabilities table of docs/design.md holds this text (tests/capabilities_matrix_test.cc checks
// it).
std::string CapabilitiesMarkdown();

}  // namespace hogwild

#endif  // HOGWILD_CORE_CAPABILITIES_H_

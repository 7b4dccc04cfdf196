#include "core/capabilities.h"

#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace hogwild {
namespace {

// What a cell is: kRuns, or the reason it is refused. Each reason is one clause of the refusal's
// sentence (Why) and one letter of the legend in docs/design.md.
enum class Cell {
  kRuns,
  kNotAcrossProcesses,
  kNoGpuPolicy,
  kOneProcess,
  kCpuOnly,
  kSparseOnly,
  kNotSimulated,
  kLinearOnly,
  kNoSuchCell,  // a value cast from an integer that names no workload, mode or substrate
};
constexpr int kNumCells = static_cast<int>(Cell::kNoSuchCell) + 1;

const char* Why(Cell cell) {
  switch (cell) {
    case Cell::kRuns:
      return "it runs";
    case Cell::kNotAcrossProcesses:
      return "it has no policy across MPI ranks yet (mpi/mpi_cluster.h)";
    case Cell::kNoGpuPolicy:
      return "it has no GPU update policy yet (sync/gpu_policy_factory.h)";
    case Cell::kOneProcess:
      return "the sparse trainers run in one process";
    case Cell::kCpuOnly:
      return "the sparse trainers run on CPU threads only";
    case Cell::kSparseOnly:
      return "it schedules per-example updates by the coordinates they touch, and a network's "
             "step touches every parameter (sparse/cyclades.h)";
    case Cell::kNotSimulated:
      return "the simulator runs the update policies on float32 parameters, and this mode runs on "
             "the sparse trainers' threads only (sparse/cyclades.h, sparse/buckwild.h)";
    case Cell::kLinearOnly:
      return "its fixed-point model is the sparse linear models' weights (sparse/buckwild.h); "
             "networks and factor matrices stay float32";
    case Cell::kNoSuchCell:
      return "no such workload, mode or substrate";
  }
  return "unknown";
}

struct Row {
  WorkloadKind workload;
  Mode mode;
  bool checkpoints;                    // SupportsCheckpoints
  Cell on[std::size(kAllSubstrates)];  // indexed by Substrate: threads, simulated, processes, gpu
};

// Short names, so that each row of the table fits on one line.
constexpr WorkloadKind kDense = WorkloadKind::kDense;
constexpr WorkloadKind kSparse = WorkloadKind::kSparseLinear;
constexpr WorkloadKind kMf = WorkloadKind::kMatrixFactorization;
constexpr Cell kRuns = Cell::kRuns;
constexpr Cell kNoMpi = Cell::kNotAcrossProcesses;
constexpr Cell kNoGpu = Cell::kNoGpuPolicy;
constexpr Cell kOneProc = Cell::kOneProcess;
constexpr Cell kCpuOnly = Cell::kCpuOnly;
constexpr Cell kSparseOnly = Cell::kSparseOnly;
constexpr Cell kNoSim = Cell::kNotSimulated;
constexpr Cell kLinear = Cell::kLinearOnly;

// The table: one row per workload and mode. Flipping a cell (a new policy, a new substrate for a
// workload, checkpoints for a mode) is an edit of its row.
// clang-format off
constexpr Row kTable[] = {
    // workload mode             ckpt   threads     simulated  processes  gpu
    {kDense,  Mode::kAsync,      true,  {kRuns,      kRuns,     kRuns,     kRuns}},
    {kDense,  Mode::kSync,       true,  {kRuns,      kRuns,     kRuns,     kRuns}},
    {kDense,  Mode::kSsp,        true,  {kRuns,      kRuns,     kNoMpi,    kNoGpu}},
    {kDense,  Mode::kBackup,     true,  {kRuns,      kRuns,     kNoMpi,    kNoGpu}},
    {kDense,  Mode::kLocalSgd,   true,  {kRuns,      kRuns,     kNoMpi,    kNoGpu}},
    {kDense,  Mode::kLocked,     true,  {kRuns,      kRuns,     kNoMpi,    kNoGpu}},
    {kDense,  Mode::kRoundRobin, false, {kRuns,      kRuns,     kNoMpi,    kNoGpu}},
    {kDense,  Mode::kAsyncLocalSgd, true,  {kRuns,   kRuns,     kNoMpi,    kNoGpu}},
    {kDense,  Mode::kCyclades,   false, {kSparseOnly, kSparseOnly, kSparseOnly, kSparseOnly}},
    {kDense,  Mode::kBuckwild,   false, {kLinear,    kLinear,   kLinear,   kLinear}},
    {kSparse, Mode::kAsync,      true,  {kRuns,      kRuns,     kOneProc,  kCpuOnly}},
    {kSparse, Mode::kSync,       true,  {kRuns,      kRuns,     kOneProc,  kCpuOnly}},
    {kSparse, Mode::kSsp,        true,  {kRuns,      kRuns,     kOneProc,  kCpuOnly}},
    {kSparse, Mode::kBackup,     true,  {kRuns,      kRuns,     kOneProc,  kCpuOnly}},
    {kSparse, Mode::kLocalSgd,   true,  {kRuns,      kRuns,     kOneProc,  kCpuOnly}},
    {kSparse, Mode::kLocked,     true,  {kRuns,      kRuns,     kOneProc,  kCpuOnly}},
    {kSparse, Mode::kRoundRobin, true,  {kRuns,      kRuns,     kOneProc,  kCpuOnly}},
    {kSparse, Mode::kAsyncLocalSgd, true,  {kRuns,   kRuns,     kOneProc,  kCpuOnly}},
    {kSparse, Mode::kCyclades,   true,  {kRuns,      kNoSim,    kOneProc,  kCpuOnly}},
    {kSparse, Mode::kBuckwild,   true,  {kRuns,      kNoSim,    kOneProc,  kCpuOnly}},
    {kMf,     Mode::kAsync,      true,  {kRuns,      kRuns,     kOneProc,  kCpuOnly}},
    {kMf,     Mode::kSync,       true,  {kRuns,      kRuns,     kOneProc,  kCpuOnly}},
    {kMf,     Mode::kSsp,        true,  {kRuns,      kRuns,     kOneProc,  kCpuOnly}},
    {kMf,     Mode::kBackup,     true,  {kRuns,      kRuns,     kOneProc,  kCpuOnly}},
    {kMf,     Mode::kLocalSgd,   true,  {kRuns,      kRuns,     kOneProc,  kCpuOnly}},
    {kMf,     Mode::kLocked,     true,  {kRuns,      kRuns,     kOneProc,  kCpuOnly}},
    {kMf,     Mode::kRoundRobin, true,  {kRuns,      kRuns,     kOneProc,  kCpuOnly}},
    {kMf,     Mode::kAsyncLocalSgd, true,  {kRuns,   kRuns,     kOneProc,  kCpuOnly}},
    {kMf,     Mode::kCyclades,   true,  {kRuns,      kNoSim,    kOneProc,  kCpuOnly}},
    {kMf,     Mode::kBuckwild,   true,  {kLinear,    kLinear,   kLinear,   kLinear}},
};
// clang-format on

const Row* FindRow(WorkloadKind workload, Mode mode) {
  for (const Row& row : kTable) {
    if (row.workload == workload && row.mode == mode) return &row;
  }
  return nullptr;
}

Cell CellOf(WorkloadKind workload, Mode mode, Substrate substrate) {
  const Row* row = FindRow(workload, mode);
  const int s = static_cast<int>(substrate);
  if (row == nullptr || s < 0 || s >= static_cast<int>(std::size(kAllSubstrates))) {
    return Cell::kNoSuchCell;
  }
  return row->on[s];
}

bool Runs(WorkloadKind workload, Mode mode, Substrate substrate) {
  return CellOf(workload, mode, substrate) == Cell::kRuns;
}

// "a", "a or b", "a, b or c" (`last` "and" for "a, b and c").
std::string JoinList(const std::vector<std::string>& items, const char* last = "or") {
  if (items.size() <= 1) return absl::StrJoin(items, "");
  std::vector<std::string> head(items.begin(), items.end() - 1);
  return absl::StrCat(absl::StrJoin(head, ", "), " ", last, " ", items.back());
}

const char* WorkloadPhrase(WorkloadKind workload) {
  switch (workload) {
    case WorkloadKind::kDense:
      return "dense networks";
    case WorkloadKind::kSparseLinear:
      return "sparse linear models";
    case WorkloadKind::kMatrixFactorization:
      return "matrix factorization";
  }
  return "an unknown workload";
}

const char* SubstratePhrase(Substrate substrate) {
  switch (substrate) {
    case Substrate::kThreads:
      return "on threads";
    case Substrate::kSimulated:
      return "in the simulator";
    case Substrate::kProcesses:
      return "across processes";
    case Substrate::kGpu:
      return "on GPUs";
  }
  return "on an unknown substrate";
}

absl::Status Prefixed(absl::string_view option, const absl::Status& status) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(option, ": ", status.message()));
}

char Letter(Cell cell) { return static_cast<char>('a' + static_cast<int>(cell) - 1); }

}  // namespace

const char* WorkloadKindName(WorkloadKind workload) {
  switch (workload) {
    case WorkloadKind::kDense:
      return "dense";
    case WorkloadKind::kSparseLinear:
      return "sparse_linear";
    case WorkloadKind::kMatrixFactorization:
      return "matrix_factorization";
  }
  return "unknown";
}

const char* SubstrateName(Substrate substrate) {
  switch (substrate) {
    case Substrate::kThreads:
      return "threads";
    case Substrate::kSimulated:
      return "simulated";
    case Substrate::kProcesses:
      return "processes";
    case Substrate::kGpu:
      return "gpu";
  }
  return "unknown";
}

absl::StatusOr<WorkloadKind> ParseWorkloadKind(absl::string_view name) {
  for (WorkloadKind workload : kAllWorkloadKinds) {
    if (name == WorkloadKindName(workload)) return workload;
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "unknown workload \"%s\"; the workloads are dense, sparse_linear and matrix_factorization",
      name));
}

absl::StatusOr<Substrate> ParseSubstrate(absl::string_view name) {
  for (Substrate substrate : kAllSubstrates) {
    if (name == SubstrateName(substrate)) return substrate;
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "unknown substrate \"%s\"; the substrates are threads, simulated, processes and gpu", name));
}

absl::Status CheckSupported(WorkloadKind workload, Mode mode, Substrate substrate) {
  const Cell cell = CellOf(workload, mode, substrate);
  if (cell == Cell::kRuns) return absl::OkStatus();
  // What runs instead: other modes here, this mode elsewhere, other workloads with this mode.
  std::vector<std::string> modes, substrates, workloads;
  for (Mode m : kAllModes) {
    if (Runs(workload, m, substrate)) modes.push_back(ModeName(m));
  }
  for (Substrate s : kAllSubstrates) {
    if (s != substrate && Runs(workload, mode, s)) substrates.push_back(SubstratePhrase(s));
  }
  for (WorkloadKind w : kAllWorkloadKinds) {
    if (w != workload && Runs(w, mode, substrate)) workloads.push_back(WorkloadPhrase(w));
  }
  std::vector<std::string> instead;
  if (!modes.empty()) instead.push_back(absl::StrCat("use ", JoinList(modes)));
  if (!substrates.empty()) {
    instead.push_back(absl::StrCat("run ", ModeName(mode), " ", JoinList(substrates)));
  }
  if (!workloads.empty()) {
    instead.push_back(absl::StrCat("train ", JoinList(workloads), " with ", ModeName(mode)));
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("%s is not available for %s %s: %s%s%s", ModeName(mode),
                      WorkloadPhrase(workload), SubstratePhrase(substrate), Why(cell),
                      instead.empty() ? "" : "; ", absl::StrJoin(instead, ", or ")));
}

absl::Status CheckSupported(WorkloadKind workload, Mode mode, Substrate substrate,
                            absl::string_view option) {
  return Prefixed(option, CheckSupported(workload, mode, substrate));
}

bool SupportsCheckpoints(WorkloadKind workload, Mode mode) {
  const Row* row = FindRow(workload, mode);
  return row != nullptr && row->checkpoints;
}

absl::Status CheckCheckpointsSupported(WorkloadKind workload, Mode mode) {
  if (SupportsCheckpoints(workload, mode)) return absl::OkStatus();
  std::vector<std::string> with;
  for (Mode m : kAllModes) {
    if (SupportsCheckpoints(workload, m)) with.push_back(ModeName(m));
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s writes no checkpoints for %s yet (its state has no checkpoint format); checkpoints are "
      "for %s",
      ModeName(mode), WorkloadPhrase(workload), JoinList(with, "and")));
}

absl::Status CheckCheckpointsSupported(WorkloadKind workload, Mode mode, absl::string_view option) {
  return Prefixed(option, CheckCheckpointsSupported(workload, mode));
}

std::string CapabilitiesMarkdown() {
  std::string out = "| workload | mode |";
  for (Substrate s : kAllSubstrates) absl::StrAppend(&out, " ", SubstrateName(s), " |");
  absl::StrAppend(&out, " checkpoints |\n|---|---|");
  for (size_t i = 0; i < std::size(kAllSubstrates); ++i) absl::StrAppend(&out, "---|");
  absl::StrAppend(&out, "---|\n");
  bool used[kNumCells] = {};
  for (WorkloadKind w : kAllWorkloadKinds) {
    for (Mode m : kAllModes) {
      absl::StrAppend(&out, "| ", WorkloadKindName(w), " | ", ModeName(m), " |");
      for (Substrate s : kAllSubstrates) {
        const Cell cell = CellOf(w, m, s);
        used[static_cast<int>(cell)] = true;
        if (cell == Cell::kRuns) {
          absl::StrAppend(&out, " yes |");
        } else {
          absl::StrAppend(&out, " no (", std::string(1, Letter(cell)), ") |");
        }
      }
      absl::StrAppend(&out, SupportsCheckpoints(w, m) ? " yes |\n" : " no |\n");
    }
  }
  absl::StrAppend(&out, "\n");
  for (int c = static_cast<int>(Cell::kRuns) + 1; c < kNumCells; ++c) {
    if (!used[c]) continue;
    absl::StrAppend(&out, "- (", std::string(1, Letter(static_cast<Cell>(c))), ") ",
                    Why(static_cast<Cell>(c)), "\n");
  }
  return out;
}

}  // namespace hogwild

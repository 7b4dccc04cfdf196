// The capabilities table (core/capabilities.h) against the engines: every cell of workload x mode
// on threads and in the simulator either trains (a few steps on a tiny set lower the training
// loss) or is refused with exactly the table's status; the processes and GPU cells are refused or
// accepted by the front ends' checks exactly as the table says. The copy of the table in
// docs/design.md is the table's rendering.
#include <cmath>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "core/capabilities.h"
#include "core/status_macros.h"
#include "gtest/gtest.h"
#include "sim/simulator.h"
#include "sparse/matrix_factorization.h"
#include "sparse/ratings.h"
#include "sparse/sparse_train.h"
#include "sparse/synthetic.h"
#include "tests/test_data.h"
#include "trainer/trainer.h"
#include "trainer/trainer_options.h"
#include "trainer/workloads/mf_workload.h"
#include "trainer/workloads/sparse_linear.h"

namespace hogwild {
namespace {

// The learning rate of the "before" run: small enough that the parameters stay at their
// initialization, so the engine's own evaluation of that run is the loss before training.
constexpr float kNoLr = 1e-30f;

// Trains `mode` on a tiny set with learning rate `lr` and returns the training loss at the end
// (the engine's own evaluation on the training set), or the engine's refusal.
using Runner = std::function<absl::StatusOr<double>(Mode mode, float lr)>;

const Dataset& DenseData() {
  static const Dataset* data = new Dataset(testing::SyntheticDataset(256, 8, 3, 7));
  return *data;
}

TrainerOptions DenseOptions(Mode mode, float lr) {
  TrainerOptions o;
  o.mode = mode;
  o.num_workers = 2;
  o.batch_size = 8;
  o.epochs = 2;
  o.seed = 5;
  o.model = ModelSpec{.name = "mlp", .hidden = {8}};
  o.lr = LrSchedule{.base_lr = lr};
  o.eval_every_epochs = 0;
  return o;
}

absl::StatusOr<double> TrainDense(Mode mode, float lr) {
  absl::StatusOr<TrainResult> result = Train(DenseOptions(mode, lr), DenseData(), DenseData());
  if (!result.ok()) return result.status();
  return result->final_test_loss;
}

absl::StatusOr<double> SimulateDense(Mode mode, float lr) {
  absl::StatusOr<SimResult> result =
      Simulate(SimOptions{.trainer = DenseOptions(mode, lr)}, DenseData(), DenseData());
  if (!result.ok()) return result.status();
  return result->final_test_loss;
}

const sparse::SparseDataset& SparseData() {
  static const sparse::SparseDataset* data = new sparse::SparseDataset(
      sparse::GenerateRcv1Like({.num_examples = 400, .num_features = 100, .mean_nnz = 8})->data);
  return *data;
}

absl::StatusOr<double> TrainSparseLinear(Mode mode, float lr) {
  const sparse::SparseDataset* data = &SparseData();
  absl::StatusOr<sparse::SparseTrainResult> result =
      sparse::TrainSparse({.mode = mode,
                           .num_workers = 2,
                           .batch_size = SplitsGlobalBatch(mode) || mode == Mode::kCyclades ? 8 : 1,
                           .epochs = 2,
                           .lr = lr},
                          *data, nullptr);
  if (!result.ok()) return result.status();
  return result->epochs.back().train_loss;
}

// A planted rank-2 matrix around 3, 30 users x 20 items, half observed.
const sparse::Ratings& Ratings() {
  static const sparse::Ratings* ratings = [] {
    std::mt19937_64 rng(3);
    std::normal_distribution<float> normal;
    std::vector<float> a(30 * 2), b(20 * 2);
    for (float& x : a) x = normal(rng);
    for (float& x : b) x = normal(rng);
    auto* r = new sparse::Ratings{.num_users = 30, .num_items = 20};
    for (int u = 0; u < 30; ++u) {
      for (int i = 0; i < 20; ++i) {
        if ((u + i) % 2 == 1) continue;
        r->users.push_back(u);
        r->items.push_back(i);
        r->values.push_back(3.0f + a[u * 2] * b[i * 2] + a[u * 2 + 1] * b[i * 2 + 1]);
      }
    }
    return r;
  }();
  return *ratings;
}

absl::StatusOr<double> TrainMf(Mode mode, float lr) {
  absl::StatusOr<sparse::MfResult> result =
      sparse::TrainMatrixFactorization({.rank = 4,
                                        .mode = mode,
                                        .num_workers = 2,
                                        .batch_size = SplitsGlobalBatch(mode) || mode == Mode::kCyclades ? 4 : 1,
                                        .epochs = 2,
                                        .lr = lr,
                                        .weight_decay = 0.0f},
                                       Ratings(), nullptr);
  if (!result.ok()) return result.status();
  return result->epochs.back().train_loss;
}

// The simulation of `workload` (sim/simulator.h SimulateWorkload) with the dense runs' settings,
// batch 1 per worker (global: 1 per worker) as the sparse trainers'; the training loss at the end.
absl::StatusOr<double> SimulateWorkloadLoss(const Workload& workload, Mode mode, float lr) {
  TrainerOptions o = DenseOptions(mode, lr);
  o.batch_size = SplitsGlobalBatch(mode) ? o.num_workers : 1;
  absl::StatusOr<SimResult> result = SimulateWorkload(SimOptions{.trainer = o}, workload);
  if (!result.ok()) return result.status();
  absl::StatusOr<EvalResult> eval = workload.Evaluate(result->params, Workload::Split::kTrain);
  if (!eval.ok()) return eval.status();
  return eval->loss;
}

absl::StatusOr<double> SimulateSparseLinear(Mode mode, float lr) {
  HOGWILD_ASSIGN_OR_RETURN(
      std::unique_ptr<SparseLinearWorkload> workload,
      SparseLinearWorkload::Create(sparse::LinearModel::kLogistic, &SparseData(), nullptr, 0.0f));
  return SimulateWorkloadLoss(*workload, mode, lr);
}

absl::StatusOr<double> SimulateMf(Mode mode, float lr) {
  HOGWILD_ASSIGN_OR_RETURN(std::unique_ptr<MfWorkload> workload,
                           MfWorkload::Create(4, &Ratings(), nullptr, 0.0f));
  return SimulateWorkloadLoss(*workload, mode, lr);
}

// The engines this test runs, one per workload and substrate, with the name of the mode option
// the engine's refusals start with. A cell the table says runs needs an entry here.
struct Engine {
  WorkloadKind workload;
  Substrate substrate;
  const char* mode_option;
  Runner run;
};
const Engine kEngines[] = {
    {WorkloadKind::kDense, Substrate::kThreads, "TrainerOptions::mode", TrainDense},
    {WorkloadKind::kDense, Substrate::kSimulated, "TrainerOptions::mode", SimulateDense},
    {WorkloadKind::kSparseLinear, Substrate::kThreads, "--mode", TrainSparseLinear},
    {WorkloadKind::kMatrixFactorization, Substrate::kThreads, "--mode", TrainMf},
    {WorkloadKind::kSparseLinear, Substrate::kSimulated, "TrainerOptions::mode",
     SimulateSparseLinear},
    {WorkloadKind::kMatrixFactorization, Substrate::kSimulated, "TrainerOptions::mode", SimulateMf},
};

const Engine* FindEngine(WorkloadKind workload, Substrate substrate) {
  for (const Engine& engine : kEngines) {
    if (engine.workload == workload && engine.substrate == substrate) return &engine;
  }
  return nullptr;
}

std::string CellName(WorkloadKind workload, Mode mode, Substrate substrate) {
  return absl::StrFormat("%s x %s x %s", WorkloadKindName(workload), ModeName(mode),
                         SubstrateName(substrate));
}

TEST(CapabilitiesMatrix, EveryCellOnThreadsAndSimulatedTrainsOrIsRefusedByTheTable) {
  int trained = 0;
  for (WorkloadKind workload : kAllWorkloadKinds) {
    for (Substrate substrate : {Substrate::kThreads, Substrate::kSimulated}) {
      const Engine* engine = FindEngine(workload, substrate);
      for (Mode mode : kAllModes) {
        SCOPED_TRACE(CellName(workload, mode, substrate));
        const absl::Status cell = CheckSupported(workload, mode, substrate);
        EXPECT_FALSE(absl::StrContains(cell.message(), "no such workload"))
            << "the table has no row for it: " << cell;
        if (engine == nullptr) {
          // No engine takes this workload on this substrate, so nothing can offer the cell.
          EXPECT_FALSE(cell.ok()) << "the table says it runs, but this test has no engine for "
                                     "it: add one to kEngines";
          continue;
        }
        absl::StatusOr<double> after = engine->run(mode, 0.1f);
        if (!cell.ok()) {
          EXPECT_EQ(after.status(), CheckSupported(workload, mode, substrate, engine->mode_option));
          continue;
        }
        ASSERT_TRUE(after.ok()) << after.status();
        absl::StatusOr<double> before = engine->run(mode, kNoLr);
        ASSERT_TRUE(before.ok()) << before.status();
        EXPECT_TRUE(std::isfinite(*after));
        EXPECT_LT(*after, *before);
        ++trained;
      }
    }
  }
  EXPECT_GT(trained, 0);
}

TEST(CapabilitiesMatrix, ProcessAndGpuCellsAreRefusedOrAcceptedByTheTable) {
  for (Mode mode : kAllModes) {
    SCOPED_TRACE(ModeName(mode));
    // Across processes: the check every multi-process run passes (trainer/trainer.h).
    const absl::Status processes = CheckClusterOptions(DenseOptions(mode, 0.1f), /*num_ranks=*/2);
    if (CheckSupported(WorkloadKind::kDense, mode, Substrate::kProcesses).ok()) {
      EXPECT_TRUE(processes.ok()) << processes;
    } else {
      EXPECT_EQ(processes, CheckSupported(WorkloadKind::kDense, mode, Substrate::kProcesses,
                                          "TrainerOptions::mode"));
    }
    // On GPUs: the options' check, which needs no device.
    TrainerOptions gpu = DenseOptions(mode, 0.1f);
    gpu.num_workers = 1;
    gpu.devices = {DeviceSpec::Gpu(0)};
    const absl::Status on_gpu = ValidateOptions(gpu);
    if (CheckSupported(WorkloadKind::kDense, mode, Substrate::kGpu).ok()) {
      EXPECT_TRUE(on_gpu.ok()) << on_gpu;
    } else {
      EXPECT_EQ(on_gpu, CheckSupported(WorkloadKind::kDense, mode, Substrate::kGpu,
                                       "TrainerOptions::mode"));
    }
    // The sparse trainers have no multi-process or GPU front end: the table refuses every cell.
    for (WorkloadKind workload :
         {WorkloadKind::kSparseLinear, WorkloadKind::kMatrixFactorization}) {
      for (Substrate substrate : {Substrate::kProcesses, Substrate::kGpu}) {
        EXPECT_FALSE(CheckSupported(workload, mode, substrate).ok())
            << CellName(workload, mode, substrate);
      }
    }
  }
}

TEST(CapabilitiesMatrix, ARefusalSaysWhyAndWhatRunsInstead) {
  EXPECT_EQ(CheckSupported(WorkloadKind::kDense, Mode::kSsp, Substrate::kProcesses, "--mode"),
            absl::InvalidArgumentError(
                "--mode: ssp is not available for dense networks across processes: it has no "
                "policy across MPI ranks yet (mpi/mpi_cluster.h); use async or sync, or run ssp "
                "on threads or in the simulator"));
  EXPECT_EQ(CheckSupported(WorkloadKind::kSparseLinear, Mode::kSsp, Substrate::kProcesses),
            absl::InvalidArgumentError(
                "ssp is not available for sparse linear models across processes: the sparse "
                "trainers run in one process; run ssp on threads or in the simulator"));
  EXPECT_EQ(CheckSupported(WorkloadKind::kMatrixFactorization, Mode::kSync, Substrate::kGpu),
            absl::InvalidArgumentError(
                "sync is not available for matrix factorization on GPUs: the sparse trainers run "
                "on CPU threads only; run sync on threads or in the simulator, or train dense "
                "networks with sync"));
  EXPECT_EQ(CheckCheckpointsSupported(WorkloadKind::kDense, Mode::kRoundRobin),
            absl::InvalidArgumentError(
                "round_robin writes no checkpoints for dense networks yet (its state has no "
                "checkpoint format); checkpoints are for async, sync, ssp, backup, local_sgd, "
                "locked and async_local_sgd"));
  // The sparse trainers checkpoint at epoch ends, where every worker has joined and each epoch's
  // policy has finished: a consistent cut in every mode.
  for (Mode mode : kAllModes) {
    EXPECT_TRUE(SupportsCheckpoints(WorkloadKind::kSparseLinear, mode)) << ModeName(mode);
    EXPECT_TRUE(SupportsCheckpoints(WorkloadKind::kMatrixFactorization, mode)) << ModeName(mode);
  }
}

TEST(CapabilitiesMatrix, NamesParseBack) {
  for (WorkloadKind workload : kAllWorkloadKinds) {
    EXPECT_EQ(*ParseWorkloadKind(WorkloadKindName(workload)), workload);
  }
  for (Substrate substrate : kAllSubstrates) {
    EXPECT_EQ(*ParseSubstrate(SubstrateName(substrate)), substrate);
  }
  EXPECT_EQ(ParseWorkloadKind("svm").status(),
            absl::InvalidArgumentError("unknown workload \"svm\"; the workloads are dense, "
                                       "sparse_linear and matrix_factorization"));
  EXPECT_EQ(ParseSubstrate("mpi").status(),
            absl::InvalidArgumentError("unknown substrate \"mpi\"; the substrates are threads, "
                                       "simulated, processes and gpu"));
}

TEST(CapabilitiesMatrix, TheDesignDocHoldsTheTable) {
  std::ifstream in("docs/design.md");
  ASSERT_TRUE(in) << "docs/design.md is not in the test's runfiles";
  std::stringstream text;
  text << in.rdbuf();
  const std::string readme = text.str();
  const std::string begin = "<!-- capabilities table: begin -->\n";
  const std::string end = "<!-- capabilities table: end -->\n";
  const size_t from = readme.find(begin);
  const size_t to = readme.find(end);
  ASSERT_NE(from, std::string::npos) << "docs/design.md has no '" << begin << "' marker";
  ASSERT_NE(to, std::string::npos) << "docs/design.md has no '" << end << "' marker";
  EXPECT_EQ(readme.substr(from + begin.size(), to - from - begin.size()), CapabilitiesMarkdown())
      << "docs/design.md's capabilities table is stale; regenerate it with "
         "`bazel run //core:capabilities_markdown -- --write`";
}

}  // namespace
}  // namespace hogwild

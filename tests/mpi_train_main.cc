// The trainer library under mpirun, in either mode, for the multi-process tests (tests/mpi_*.sh):
// the `train` command fixes its mode at build time; this program takes it as a flag and writes
// what the tests compare.
//
//   mpirun -np 2 mpi_train --mode=sync --workers=2 --params_out=/tmp/p   # rank 0 writes /tmp/p
//   mpi_train --mode=sync --workers=4 --params_out=/tmp/q                # one process
//   mpi_train --compare=/tmp/p,/tmp/q --tolerance=1e-5                   # max |p - q| <= tol?
//
//   mpirun -np 2 mpi_train_gpu --mode=sync --devices=gpu:0 ...            # NCCL across ranks
//
// Data: --data=synthetic (tests/test_data.h, 8 features, 4 classes, or 1x6x6 images of 3
// classes with --model=cnn_bn; tested on its first 500 examples) or fashion_mnist (the
// first --train_examples images). Prints, on rank 0, "accuracy A" and the summary; every rank
// prints "rank R examples E params H" (H: a hash of its final parameters).
// Checkpoints and stops: --checkpoint_dir, --resume, --checkpoint_every_steps as the train
// command's; --stop_rank=R --stop_step=S: rank R alone asks for an orderly stop before its step S;
// --stop_on_signals: SIGINT/SIGTERM ask for one (exit status 128 + signal).
// The recipe: --optimizer, --clip_global_norm, --weight_decay, --weight_decay_biases,
// --lr_scaling, --ema_decay (the EMA weights go to --params_out.ema), --model=cnn_bn.
// Exit codes: 0 ok; 1 a failed run (the job is aborted when it has several ranks, unless every
// rank refused together); 2 a comparison beyond the tolerance; 130/143 stopped by a signal.
#include <atomic>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/mode.h"
#include "core/status_macros.h"
#include "kernels/optimizer_name.h"
#include "mpi/mpi_cluster.h"
#include "mpi/mpi_status.h"
#include "tests/test_data.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/cli/stop_signal.h"
#include "trainer/data/mnist.h"
#include "trainer/device.h"
#include "trainer/gpu_runtime.h"
#include "trainer/model/lr_schedule.h"
#include "trainer/trainer.h"

ABSL_FLAG(std::string, mode, "async", "async or sync");
ABSL_FLAG(std::string, data, "synthetic", "synthetic or fashion_mnist");
ABSL_FLAG(int32_t, workers, 1, "workers per process (with GPU --devices: per GPU)");
ABSL_FLAG(std::string, devices, "cpu",
          "cpu, or gpu:I,J,... as the train command's (needs the GPU build, mpi_train_gpu; under "
          "mpirun each rank takes its own GPUs: trainer/rank_gpus.h)");
ABSL_FLAG(bool, gpu_count, false,
          "print the number of CUDA devices this process sees and exit 0, or the reason there "
          "are none and exit 1");
ABSL_FLAG(int64_t, batch_size, 16, "as the train command's");
ABSL_FLAG(int64_t, epochs, 2, "passes over the training set");
ABSL_FLAG(int64_t, train_examples, 2000, "training examples");
ABSL_FLAG(double, lr, 0.05, "learning rate");
ABSL_FLAG(double, momentum, 0.0, "momentum");
ABSL_FLAG(int64_t, exchange_every, 8, "async across processes: local steps per exchange");
ABSL_FLAG(std::string, hidden, "32", "mlp hidden size (one layer)");
ABSL_FLAG(std::string, params_out, "", "rank 0 writes the final parameters here (float32)");
ABSL_FLAG(std::string, log, "", "convergence log (rank 0 writes it), a row every 10 steps");
ABSL_FLAG(int32_t, fail_rank, -1, "this rank's worker 0 fails at --fail_step");
ABSL_FLAG(int64_t, fail_step, 10, "see --fail_rank");
ABSL_FLAG(int32_t, bad_mpi_call_rank, -1,
          "this rank makes an invalid MPI call (MPI_Bcast from a root outside the job) before "
          "training, to show how MPI errors are reported");
ABSL_FLAG(std::string, checkpoint_dir, "", "as the train command's");
ABSL_FLAG(bool, resume, false, "continue from --checkpoint_dir's checkpoint");
ABSL_FLAG(int64_t, checkpoint_every_steps, 0, "a checkpoint every N global steps (0: none)");
ABSL_FLAG(int32_t, stop_rank, -1,
          "this rank alone asks for an orderly stop before its step --stop_step (as a SIGTERM "
          "reaching one rank first would)");
ABSL_FLAG(int64_t, stop_step, 10, "see --stop_rank");
ABSL_FLAG(bool, stop_on_signals, false,
          "SIGINT/SIGTERM ask for an orderly stop, as in the train command; the exit status is "
          "then 128 + the signal");
ABSL_FLAG(std::string, started_dir, "",
          "DIR: each rank creates DIR/rank<R> when its worker 0 has finished its first step, so "
          "that a test acts on a job known to be training (not one still starting, nor ended)");
ABSL_FLAG(std::string, compare, "", "A,B: compare two parameter files and exit");
ABSL_FLAG(double, tolerance, 0.0, "largest allowed |A - B| for --compare");
ABSL_FLAG(std::string, optimizer, "sgd", "as the train command's --optimizer");
ABSL_FLAG(double, clip_global_norm, 0.0, "as the train command's");
ABSL_FLAG(double, weight_decay, 0.0, "as the train command's");
ABSL_FLAG(bool, weight_decay_biases, true, "as the train command's");
ABSL_FLAG(std::string, lr_scaling, "none", "none, linear or sqrt (reference batch 16)");
ABSL_FLAG(double, ema_decay, 0.0,
          "as the train command's; rank 0 writes the EMA weights to --params_out.ema");
ABSL_FLAG(int64_t, average_every, 8, "local_sgd: local steps between averagings");
ABSL_FLAG(std::string, model, "mlp",
          "mlp, or cnn_bn on synthetic 1x6x6 images of 3 classes (batch norm's moving stats)");
ABSL_FLAG(std::string, checkpoint_params, "",
          "DIR: write the parameters of DIR's checkpoint to --params_out, print its global step "
          "and every worker's data position, and exit (no training)");

namespace hogwild {
namespace {

absl::StatusOr<std::vector<float>> ReadFloats(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrFormat("cannot open %s", path));
  std::vector<float> v;
  float x;
  while (in.read(reinterpret_cast<char*>(&x), sizeof(x))) v.push_back(x);
  return v;
}

int Compare(const std::string& spec, double tolerance) {
  const std::vector<std::string> paths = absl::StrSplit(spec, ',');
  if (paths.size() != 2) return 1;
  const absl::StatusOr<std::vector<float>> a = ReadFloats(paths[0]);
  const absl::StatusOr<std::vector<float>> b = ReadFloats(paths[1]);
  if (!a.ok() || !b.ok() || a->size() != b->size() || a->empty()) {
    std::printf("compare: unreadable or different sizes\n");
    return 1;
  }
  double max_diff = 0.0;
  for (size_t i = 0; i < a->size(); ++i) {
    max_diff = std::max(max_diff, std::fabs(static_cast<double>((*a)[i]) - (*b)[i]));
  }
  std::printf("compare: %zu parameters, max |a - b| = %.3g (tolerance %.3g)\n", a->size(), max_diff,
              tolerance);
  return max_diff <= tolerance ? 0 : 2;
}

// --checkpoint_params: the checkpoint's parameters and positions, for the tests to compare.
int DumpCheckpoint(const std::string& dir, const std::string& out) {
  const absl::StatusOr<std::optional<Checkpoint>> c = ReadLatestCheckpoint(dir);
  if (!c.ok() || !c->has_value()) {
    std::fprintf(stderr, "error: no readable checkpoint in %s\n", dir.c_str());
    return 1;
  }
  const Checkpoint& checkpoint = **c;
  std::printf("checkpoint global_step %ld ranks %d next_step %s buffers %zu\n",
              static_cast<long>(checkpoint.global_step), checkpoint.signature.num_ranks,
              absl::StrJoin(checkpoint.next_step, ",").c_str(), checkpoint.optimizer_state.size());
  std::ofstream f(out, std::ios::binary);
  f.write(reinterpret_cast<const char*>(checkpoint.params.data()),
          static_cast<std::streamsize>(checkpoint.params.size() * sizeof(float)));
  return f ? 0 : 1;
}

absl::Status BadMpiCall(int num_ranks) {
  int value = 0;
  HOGWILD_MPI_RETURN_IF_ERROR(MPI_Bcast(&value, 1, MPI_INT, num_ranks, MPI_COMM_WORLD));
  return absl::OkStatus();
}

// The stop request of --stop_rank, or of a signal (--stop_on_signals).
std::atomic<bool> stop_requested{false};

absl::StatusOr<TrainResult> Run(Cluster* cluster, const std::atomic<bool>* signal_stop) {
  if (cluster != nullptr && cluster->rank() == absl::GetFlag(FLAGS_bad_mpi_call_rank)) {
    HOGWILD_RETURN_IF_ERROR(BadMpiCall(cluster->num_ranks()));
  }
  Dataset train, test;
  if (absl::GetFlag(FLAGS_data) == "fashion_mnist") {
    HOGWILD_ASSIGN_OR_RETURN(DatasetInfo info, LookupDataset("fashion_mnist"));
    HOGWILD_ASSIGN_OR_RETURN(
        TrainTestSplits splits,
        LoadTrainTest(info, info.default_dir, absl::GetFlag(FLAGS_train_examples), "n"));
    train = std::move(splits.train);
    test = std::move(splits.test);
  } else if (absl::GetFlag(FLAGS_model) == "cnn_bn") {
    train = testing::SyntheticDataset(absl::GetFlag(FLAGS_train_examples), 36, 3, /*seed=*/7);
    train.example_shape = {1, 6, 6};
    test = train.Head(500);
  } else {
    train = testing::SyntheticDataset(absl::GetFlag(FLAGS_train_examples), 8, 4, /*seed=*/7);
    // Another seed would draw another labelling map: evaluate on the first training examples.
    test = train.Head(500);
  }
  TrainerOptions options;
  HOGWILD_ASSIGN_OR_RETURN(options.mode, ParseMode(absl::GetFlag(FLAGS_mode)));
  options.cluster = cluster;
  HOGWILD_ASSIGN_OR_RETURN(options.devices, ResolveDevices(absl::GetFlag(FLAGS_devices)));
  if (options.devices[0].is_gpu()) {
    options.workers_per_device = absl::GetFlag(FLAGS_workers);
  } else {
    options.num_workers = absl::GetFlag(FLAGS_workers);
  }
  options.batch_size = absl::GetFlag(FLAGS_batch_size);
  options.epochs = absl::GetFlag(FLAGS_epochs);
  options.lr.base_lr = static_cast<float>(absl::GetFlag(FLAGS_lr));
  options.sgd.momentum = static_cast<float>(absl::GetFlag(FLAGS_momentum));
  options.exchange_every = absl::GetFlag(FLAGS_exchange_every);
  options.model = {.name = "mlp", .hidden = {std::stoi(absl::GetFlag(FLAGS_hidden))}};
  if (absl::GetFlag(FLAGS_model) != "mlp") options.model = {.name = absl::GetFlag(FLAGS_model)};
  HOGWILD_ASSIGN_OR_RETURN(options.sgd.optimizer, ParseOptimizer(absl::GetFlag(FLAGS_optimizer)));
  options.sgd.clip_global_norm = static_cast<float>(absl::GetFlag(FLAGS_clip_global_norm));
  options.sgd.weight_decay = static_cast<float>(absl::GetFlag(FLAGS_weight_decay));
  options.weight_decay_biases = absl::GetFlag(FLAGS_weight_decay_biases);
  HOGWILD_ASSIGN_OR_RETURN(options.lr.scaling, ParseLrScaling(absl::GetFlag(FLAGS_lr_scaling)));
  if (options.lr.scaling != LrSchedule::Scaling::kNone) options.lr.reference_batch = 16;
  options.ema_decay = static_cast<float>(absl::GetFlag(FLAGS_ema_decay));
  options.average_every = absl::GetFlag(FLAGS_average_every);
  options.eval_every_epochs = 0;
  options.log_path = absl::GetFlag(FLAGS_log);
  options.log_every_steps = 10;
  options.checkpoint_dir = absl::GetFlag(FLAGS_checkpoint_dir);
  options.resume = absl::GetFlag(FLAGS_resume);
  options.checkpoint_every_steps = absl::GetFlag(FLAGS_checkpoint_every_steps);
  options.checkpoint_every_seconds = 0;
  options.stop_requested = signal_stop != nullptr ? signal_stop : &stop_requested;
  const int rank = cluster != nullptr ? cluster->rank() : 0;
  const int fail_rank = absl::GetFlag(FLAGS_fail_rank);
  const int64_t fail_step = absl::GetFlag(FLAGS_fail_step);
  const bool stops = absl::GetFlag(FLAGS_stop_rank) == rank;
  const int64_t stop_step = absl::GetFlag(FLAGS_stop_step);
  const std::string started_dir = absl::GetFlag(FLAGS_started_dir);
  if (fail_rank == rank || stops || !started_dir.empty()) {
    options.step_hook = [=](int worker, int64_t step) {
      // The hook runs before the step: step 1 begins once step 0 is done.
      if (worker == 0 && step == 1 && !started_dir.empty()) {
        std::ofstream(absl::StrFormat("%s/rank%d", started_dir, rank)).put('1');
      }
      if (worker == 0 && step == fail_step && fail_rank == rank) {
        return absl::DataLossError(absl::StrFormat("injected failure at step %d", step));
      }
      if (worker == 0 && step == stop_step && stops) stop_requested.store(true);
      return absl::OkStatus();
    };
  }
  return Train(options, train, test);
}

}  // namespace
}  // namespace hogwild

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  if (absl::GetFlag(FLAGS_gpu_count)) {
    const absl::StatusOr<int> count = [&]() -> absl::StatusOr<int> {
      HOGWILD_ASSIGN_OR_RETURN(const hogwild::GpuRuntime* gpu, hogwild::GpuRuntimeOrError());
      return gpu->DeviceCount();
    }();
    if (!count.ok()) {
      std::printf("%s\n", std::string(count.status().message()).c_str());
      return 1;
    }
    std::printf("%d\n", *count);
    return 0;
  }
  if (const std::string dir = absl::GetFlag(FLAGS_checkpoint_params); !dir.empty()) {
    return hogwild::DumpCheckpoint(dir, absl::GetFlag(FLAGS_params_out));
  }
  if (!absl::GetFlag(FLAGS_compare).empty()) {
    return hogwild::Compare(absl::GetFlag(FLAGS_compare), absl::GetFlag(FLAGS_tolerance));
  }
  // The handlers go in before MPI starts, as in the train command: a signal during MPI_Init
  // (seconds on a busy machine) is then a stop request, not the default action's death.
  std::unique_ptr<hogwild::StopOnSignals> signals;
  if (absl::GetFlag(FLAGS_stop_on_signals)) {
    absl::StatusOr<std::unique_ptr<hogwild::StopOnSignals>> installed =
        hogwild::StopOnSignals::Install(/*exit_on_second=*/true, nullptr);
    if (!installed.ok()) {
      std::fprintf(stderr, "error: %s\n", std::string(installed.status().message()).c_str());
      return 1;
    }
    signals = std::move(*installed);
  }
  absl::StatusOr<std::unique_ptr<hogwild::MpiCluster>> mpi =
      hogwild::MpiCluster::InitIfLaunched(&argc, &argv);
  if (!mpi.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(mpi.status().message()).c_str());
    return 1;
  }
  hogwild::MpiCluster* cluster = mpi->get();
  const int rank = cluster != nullptr ? cluster->rank() : 0;
  const bool several = cluster != nullptr && cluster->num_ranks() > 1;
  absl::StatusOr<hogwild::TrainResult> result =
      hogwild::Run(cluster, signals != nullptr ? &signals->stop_requested() : nullptr);
  if (!result.ok() && several && hogwild::IsJobWide(result.status())) {
    // Refused together on every rank (Cluster::AgreeOnStatus): rank 0 says it once.
    if (rank == 0) {
      std::fprintf(stderr, "error: %s\n", std::string(result.status().message()).c_str());
    }
    return 1;
  }
  if (!result.ok()) {
    std::fprintf(stderr, "error: rank %d: %s\n", rank,
                 std::string(result.status().message()).c_str());
    std::fflush(stderr);
    if (several) cluster->Abort(1);
    return 1;
  }
  // FNV-1a of the parameters' bytes: the ranks' final parameters must agree.
  uint64_t hash = 1469598103934665603ull;
  for (const float x : result->params) {
    const auto* bytes = reinterpret_cast<const unsigned char*>(&x);
    for (size_t i = 0; i < sizeof(x); ++i) hash = (hash ^ bytes[i]) * 1099511628211ull;
  }
  std::printf("rank %d examples %ld params %016lx steps %ld%s\n", rank,
              static_cast<long>(result->examples), static_cast<unsigned long>(hash),
              static_cast<long>(result->steps), result->stopped_early ? " stopped" : "");
  if (rank == 0) {
    std::printf("accuracy %.4f\n%s\n", result->final_test_accuracy,
                hogwild::FormatSummary(*result).c_str());
    if (const std::string out = absl::GetFlag(FLAGS_params_out); !out.empty()) {
      std::ofstream f(out, std::ios::binary);
      f.write(reinterpret_cast<const char*>(result->params.data()),
              static_cast<std::streamsize>(result->params.size() * sizeof(float)));
      if (!f) {
        std::fprintf(stderr, "error: cannot write %s\n", out.c_str());
        return 1;
      }
      if (!result->ema_params.empty()) {
        std::ofstream e(out + ".ema", std::ios::binary);
        e.write(reinterpret_cast<const char*>(result->ema_params.data()),
                static_cast<std::streamsize>(result->ema_params.size() * sizeof(float)));
        if (!e) {
          std::fprintf(stderr, "error: cannot write %s.ema\n", out.c_str());
          return 1;
        }
      }
    }
  }
  std::fflush(stdout);
  if (result->stopped_early && signals != nullptr) {
    // The signal any rank received: every rank of the job ends alike.
    int signo = signals->signal();
    if (several) {
      const absl::StatusOr<int> job_signal = cluster->MaxOverRanks(signo);
      if (!job_signal.ok()) cluster->Abort(1);
      signo = *job_signal;
    }
    return 128 + signo;
  }
  return 0;
}

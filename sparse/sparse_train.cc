#include "sparse/sparse_train.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <new>
#include <numeric>
#include <random>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/capabilities.h"
#include "core/mode.h"
#include "core/splitmix64.h"
#include "core/status_macros.h"
#include "kernels/functors.h"
#include "sparse/sparse_sgd.h"
#include "sync/parameter_store.h"
#include "sync/step_barrier.h"
#include "trainer/finite_check.h"

namespace hogwild::sparse {
namespace {

absl::Status OutOfRange(const char* name, double value, const char* range) {
  return absl::InvalidArgumentError(
      absl::StrFormat("--%s=%g is out of range %s", name, value, range));
}

// What one epoch's workers share.
struct Epoch {
  const SparseTrainOptions* options;
  const SparseDataset* data;
  const std::vector<int64_t>* order;  // [N], this epoch's permutation
  SgdMomentumFn sgd;
  float* shared;                                            // [D], the ParameterStore's array
  std::vector<std::unique_ptr<SparseGradient>>* gradients;  // [W] (+1: sync's sum), or empty
  std::mutex* lock;                                         // locked mode
  StepBarrier* barrier;                                     // sync mode
  class TurnGate* gate;                                     // round-robin mode
  std::atomic<int64_t>* updates;
};

// Round-robin order of the workers' updates: worker w applies an update only when the turn is
// w, then hands the turn to the next worker (in index order) that has updates left. A mutex and
// a condition variable rather than a spin, so that a waiting worker gives its core away on a
// machine with fewer free cores than workers (as this 2-vCPU one).
class TurnGate {
 public:
  explicit TurnGate(int workers) : done_(workers, false) {}

  void Wait(int w) {
    std::unique_lock<std::mutex> lock(mu_);
    turn_changed_.wait(lock, [&] { return turn_ == w; });
  }
  void Pass(int w) { Hand(w, false); }
  // Worker w has no update left; called once, after its last Pass (or instead of any).
  void Done(int w) { Hand(w, true); }

 private:
  void Hand(int w, bool done) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (done) done_[w] = true;
      if (turn_ == w) {
        const int n = static_cast<int>(done_.size());
        for (int i = 1; i <= n; ++i) {
          if (!done_[(w + i) % n]) {
            turn_ = (w + i) % n;
            break;
          }
        }
      }
    }
    turn_changed_.notify_all();
  }

  std::mutex mu_;
  std::condition_variable turn_changed_;
  int turn_ = 0;            // guarded by mu_
  std::vector<bool> done_;  // guarded by mu_
};

// async and locked: the worker's contiguous shard, batch by batch.
template <bool kLocked>
void RunShard(const Epoch& e, int w) {
  const int64_t n = e.data->num_examples();
  const int num_workers = e.options->num_workers;
  const int64_t begin = n * w / num_workers;
  const int64_t end = n * (w + 1) / num_workers;
  const int64_t batch = e.options->batch_size;
  const LinearModel model = e.options->model;
  const int64_t* order = e.order->data();
  int64_t updates = 0;
  std::unique_lock<std::mutex> guard(*e.lock, std::defer_lock);
  if (batch == 1) {
    const int64_t* offsets = e.data->row_offsets.data();
    for (int64_t k = begin; k < end; ++k) {
      // The rows are visited in a random order, so the next row's first cache lines are a
      // memory miss the hardware prefetcher cannot foresee; ask for them one step ahead.
      // Two steps ahead for the row offset, one for the row itself (which needs the offset).
      if (k + 2 < end) __builtin_prefetch(offsets + order[k + 2]);
      if (k + 1 < end) {
        // The whole row (76 non-zeros: 5 cache lines of indices, 5 of values): its lines are
        // needed at once by the margin, faster than the hardware prefetcher ramps up.
        const int64_t row = order[k + 1];
        for (int64_t z = offsets[row]; z < offsets[row + 1]; z += 16) {
          __builtin_prefetch(e.data->indices.data() + z);
          __builtin_prefetch(e.data->values.data() + z);
        }
      }
      if constexpr (kLocked) guard.lock();
      SparseSgdStep(model, e.sgd, *e.data, order[k], e.shared);
      if constexpr (kLocked) guard.unlock();
    }
    updates = end - begin;
  } else {
    SparseGradient& gradient = *(*e.gradients)[w];
    for (int64_t k = begin; k < end; k += batch) {
      const int64_t stop = std::min(end, k + batch);
      const float scale = 1.0f / static_cast<float>(stop - k);
      if constexpr (kLocked) guard.lock();
      gradient.Clear();
      for (int64_t q = k; q < stop; ++q) {
        AddExample(model, *e.data, order[q], scale, e.shared, gradient);
      }
      ApplySparseGradient(e.sgd, gradient, e.shared);
      if constexpr (kLocked) guard.unlock();
      ++updates;
    }
  }
  e.updates->fetch_add(updates, std::memory_order_relaxed);
}

// round robin: async's shards and batches, each gradient computed concurrently from the current
// weights, but applied in the workers' turn (Langford, Smola, Zinkevich, "Slow learners are
// fast", NIPS 2009; the RR baseline of the Hogwild! paper).
void RunRoundRobin(const Epoch& e, int w) {
  const int64_t n = e.data->num_examples();
  const int num_workers = e.options->num_workers;
  const int64_t end = n * (w + 1) / num_workers;
  const int64_t batch = e.options->batch_size;
  SparseGradient& gradient = *(*e.gradients)[w];
  int64_t updates = 0;
  for (int64_t k = n * w / num_workers; k < end; k += batch) {
    const int64_t stop = std::min(end, k + batch);
    const float scale = 1.0f / static_cast<float>(stop - k);
    gradient.Clear();
    for (int64_t q = k; q < stop; ++q) {
      AddExample(e.options->model, *e.data, (*e.order)[q], scale, e.shared, gradient);
    }
    e.gate->Wait(w);
    ApplySparseGradient(e.sgd, gradient, e.shared);
    e.gate->Pass(w);
    ++updates;
  }
  e.gate->Done(w);
  e.updates->fetch_add(updates, std::memory_order_relaxed);
}

// sync: every worker takes its part of each global batch; worker 0 sums and applies.
void RunSync(const Epoch& e, int w) {
  const int64_t n = e.data->num_examples();
  const int num_workers = e.options->num_workers;
  const int64_t batch = e.options->batch_size;
  std::vector<std::unique_ptr<SparseGradient>>& gradients = *e.gradients;
  SparseGradient& mine = *gradients[w];
  for (int64_t start = 0; start < n; start += batch) {
    const int64_t global = std::min(n, start + batch) - start;
    const float scale = 1.0f / static_cast<float>(global);
    mine.Clear();
    for (int64_t q = start + global * w / num_workers; q < start + global * (w + 1) / num_workers;
         ++q) {
      AddExample(e.options->model, *e.data, (*e.order)[q], scale, e.shared, mine);
    }
    // Nothing cancels this barrier: the workers have no failure to report.
    (void)e.barrier->ArriveAndWait();
    if (w == 0) {
      SparseGradient& sum = *gradients[num_workers];
      sum.Clear();
      for (int v = 0; v < num_workers; ++v) sum.Add(*gradients[v]);
      ApplySparseGradient(e.sgd, sum, e.shared);
      e.updates->fetch_add(1, std::memory_order_relaxed);
    }
    (void)e.barrier->ArriveAndWait();
  }
}

// The run's identity in a checkpoint (sparse_checkpoint.h's table).
CheckpointSignature LinearSignature(const SparseTrainOptions& o, const SparseDataset& train) {
  CheckpointSignature s;
  s.model_name = o.model == LinearModel::kHinge ? "sparse_svm" : "sparse_logreg";
  s.input_shape = {train.num_features};
  s.num_classes = 2;
  s.layers = {absl::StrCat("mode=", ModeName(o.mode)), absl::StrCat("shuffle=", o.shuffle ? 1 : 0)};
  s.num_params = train.num_features;
  s.mode = o.mode == Mode::kSync ? Mode::kSync : Mode::kAsync;
  s.num_workers = o.num_workers;
  s.batch_size = o.batch_size;
  s.seed = o.seed;
  s.train_examples = train.num_examples();
  s.dataset = SparseDatasetId(train);
  s.optimizer = "sgd";
  return s;
}

}  // namespace

DatasetId SparseDatasetId(const SparseDataset& train) {
  uint32_t crc = ExtendFingerprint(0, &train.num_features, sizeof(train.num_features));
  crc = ExtendFingerprint(crc, train.row_offsets.data(), train.row_offsets.size() * 8);
  crc = ExtendFingerprint(crc, train.indices.data(), train.indices.size() * 4);
  crc = ExtendFingerprint(crc, train.values.data(), train.values.size() * 4);
  crc = ExtendFingerprint(crc, train.labels.data(), train.labels.size() * 4);
  return DatasetId{.name = "sparse training set", .fingerprint = crc};
}

absl::StatusOr<LinearModel> ParseLinearModel(const std::string& name) {
  if (name == "logreg") return LinearModel::kLogistic;
  if (name == "svm") return LinearModel::kHinge;
  return absl::InvalidArgumentError(
      absl::StrFormat("--model=%s is not a sparse model: logreg or svm", name));
}

absl::Status ValidateSparseData(const SparseDataset& train, const SparseDataset* test) {
  HOGWILD_RETURN_IF_ERROR(ValidateSparseDataset(train));
  if (test != nullptr) {
    HOGWILD_RETURN_IF_ERROR(ValidateSparseDataset(*test));
    if (test->num_features > train.num_features) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "the test set has %d features, the training set %d: read both with --num_features",
          test->num_features, train.num_features));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateSparseOptions(const SparseTrainOptions& options, const SparseDataset& train,
                                   const SparseDataset* test) {
  HOGWILD_RETURN_IF_ERROR(ValidateSparseData(train, test));
  HOGWILD_RETURN_IF_ERROR(
      CheckSupported(WorkloadKind::kSparseLinear, options.mode, Substrate::kThreads, "--mode"));
  if (options.num_workers < 1 || options.num_workers > 256) {
    return OutOfRange("workers", options.num_workers, "[1, 256]");
  }
  if (options.batch_size < 1 || options.batch_size > train.num_examples()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--batch_size=%d is out of range [1, %d] (the training set's examples)",
                        options.batch_size, train.num_examples()));
  }
  // Outside sync mode the batch is per worker, drawn from the worker's shard: a larger one would
  // be cut to the shard without a word (as //trainer:train refuses it).
  if (const int64_t largest_shard =
          (train.num_examples() + options.num_workers - 1) / options.num_workers;
      options.mode != Mode::kSync && options.batch_size > largest_shard) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--batch_size=%d is larger than a worker's share of the training set (%d examples = %d "
        "examples / %d workers); in %s mode it is the batch per worker, so it must be in [1, %d]",
        options.batch_size, largest_shard, train.num_examples(), options.num_workers,
        ModeName(options.mode), largest_shard));
  }
  if (options.epochs < 1 || options.epochs > 100000) {
    return OutOfRange("epochs", options.epochs, "[1, 100000]");
  }
  if (!(options.lr > 0.0f) || !std::isfinite(options.lr)) {
    return OutOfRange("lr", options.lr, "(0, float32 max]");
  }
  if (!(options.lr_decay > 0.0f && options.lr_decay <= 1.0f)) {
    return OutOfRange("lr_decay", options.lr_decay, "(0, 1]");
  }
  if (!(options.weight_decay >= 0.0f) || !std::isfinite(options.weight_decay)) {
    return OutOfRange("weight_decay", options.weight_decay, "[0, float32 max]");
  }
  return absl::OkStatus();
}

absl::Status CheckSparseEpochFinite(absl::Span<const float> params, const SparseEpochReport& report,
                                    absl::string_view loss_name) {
  HOGWILD_RETURN_IF_ERROR(
      CheckFinite(params, "parameter", report.updates, report.lr, kSparseDivergenceRemedy));
  // Finite weights can still be large enough that the predictions overflow.
  auto loss = [&](absl::string_view split, double value) {
    return std::isfinite(value) ? absl::OkStatus()
                                : DivergedError(absl::StrFormat("the %s %s is %s", split, loss_name,
                                                                FormatNonFinite(value)),
                                                report.updates, report.lr, kSparseDivergenceRemedy);
  };
  HOGWILD_RETURN_IF_ERROR(loss("train", report.train_loss));
  return report.test_loss ? loss("test", *report.test_loss) : absl::OkStatus();
}

absl::Status RunSparseEpochs(
    const SparseEpochLoop& loop, int first_epoch, absl::Span<const float> params,
    const std::function<int64_t(const std::vector<int64_t>& order, float lr)>& run_epoch,
    const std::function<void(SparseEpochReport& report)>& evaluate, SparseRunTotals& totals) {
  std::vector<int64_t> order(static_cast<size_t>(loop.examples));
  for (int epoch = first_epoch; epoch < loop.epochs; ++epoch) {
    std::iota(order.begin(), order.end(), int64_t{0});
    if (loop.shuffle) {
      std::mt19937_64 rng(SplitMix64(loop.seed) + static_cast<uint64_t>(epoch));
      std::shuffle(order.begin(), order.end(), rng);
    }
    const float lr = static_cast<float>(static_cast<double>(loop.lr) *
                                        std::pow(static_cast<double>(loop.lr_decay), epoch));
    const auto start = std::chrono::steady_clock::now();
    totals.updates = run_epoch(order, lr);
    totals.train_time_s +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    totals.examples += loop.examples;
    SparseEpochReport report{.epoch = epoch + 1,
                             .lr = lr,
                             .train_time_s = totals.train_time_s,
                             .examples = totals.examples,
                             .updates = totals.updates,
                             .run_updates = totals.updates - totals.resumed_updates};
    evaluate(report);
    HOGWILD_RETURN_IF_ERROR(CheckSparseEpochFinite(params, report, loop.loss_name));
    totals.epochs.push_back(report);
    if (!loop.checkpoint_dir.empty()) {
      HOGWILD_RETURN_IF_ERROR(WriteSparseCheckpoint(loop.checkpoint_dir, loop.signature, epoch + 1,
                                                    totals.updates, params));
    }
    if (loop.on_epoch) HOGWILD_RETURN_IF_ERROR(loop.on_epoch(report));
  }
  return absl::OkStatus();
}

absl::StatusOr<SparseTrainResult> TrainSparse(const SparseTrainOptions& options,
                                              const SparseDataset& train,
                                              const SparseDataset* test) {
  HOGWILD_RETURN_IF_ERROR(ValidateSparseOptions(options, train, test));
  const int num_workers = options.num_workers;
  HOGWILD_ASSIGN_OR_RETURN(std::unique_ptr<ParameterStore> store,
                           ParameterStore::Create(train.num_features));
  std::vector<std::unique_ptr<SparseGradient>> gradients;
  const bool sync = options.mode == Mode::kSync;
  if (options.batch_size > 1 || sync || options.mode == Mode::kRoundRobin) {
    try {
      for (int w = 0; w < num_workers + (sync ? 1 : 0); ++w) {
        gradients.push_back(std::make_unique<SparseGradient>(train.num_features));
      }
    } catch (const std::bad_alloc&) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "cannot allocate %d sparse gradients of %d features (%d bytes each)",
          num_workers + (sync ? 1 : 0), train.num_features, 8 * train.num_features));
    }
  }
  const std::string& checkpoint_dir = options.checkpoint.dir;
  const CheckpointSignature signature =
      checkpoint_dir.empty() ? CheckpointSignature{} : LinearSignature(options, train);
  HOGWILD_ASSIGN_OR_RETURN(std::optional<SparseResumePoint> resume,
                           PrepareSparseCheckpoint(options.checkpoint, signature, options.epochs));
  std::mutex lock;
  StepBarrier barrier(num_workers);
  std::atomic<int64_t> updates{0};
  SparseTrainResult result;
  SparseRunTotals totals;
  if (resume) {
    // CheckSignature matched num_params = D, so the sizes agree.
    std::copy(resume->params.begin(), resume->params.end(), store->unsafe_values().begin());
    result.resumed_epochs = static_cast<int>(resume->epochs_done);
    totals.examples = resume->epochs_done * train.num_examples();
    totals.updates = totals.resumed_updates = resume->updates;
    updates.store(resume->updates);
  }
  const SparseEpochLoop loop{.epochs = options.epochs,
                             .lr = options.lr,
                             .lr_decay = options.lr_decay,
                             .seed = options.seed,
                             .shuffle = options.shuffle,
                             .examples = train.num_examples(),
                             .checkpoint_dir = checkpoint_dir,
                             .signature = signature,
                             .loss_name = "loss",
                             .on_epoch = options.on_epoch};
  auto run_epoch = [&](const std::vector<int64_t>& order, float lr) {
    Epoch e{.options = &options,
            .data = &train,
            .order = &order,
            .sgd = {.lr = lr, .momentum = 0.0f, .weight_decay = options.weight_decay},
            .shared = store->unsafe_values().data(),
            .gradients = &gradients,
            .lock = &lock,
            .barrier = &barrier,
            .gate = nullptr,
            .updates = &updates};
    TurnGate gate(num_workers);
    e.gate = &gate;
    std::vector<std::jthread> workers;
    for (int w = 0; w < num_workers; ++w) {
      workers.emplace_back([&e, w, mode = options.mode] {
        switch (mode) {
          case Mode::kAsync:
            RunShard<false>(e, w);
            break;
          case Mode::kLocked:
            RunShard<true>(e, w);
            break;
          case Mode::kSync:
            RunSync(e, w);
            break;
          case Mode::kRoundRobin:
            RunRoundRobin(e, w);
            break;
          case Mode::kSsp:
          case Mode::kBackup:
          case Mode::kLocalSgd:
            break;  // refused by ValidateSparseOptions
        }
      });
    }
    workers.clear();  // joined
    return updates.load();
  };
  // The join ordered every worker's writes before the evaluation's plain reads.
  auto evaluate = [&](SparseEpochReport& report) {
    const LinearEvaluation on_train = EvaluateLinear(options.model, store->unsafe_values(), train);
    report.train_loss = on_train.mean_loss;
    report.train_accuracy = on_train.accuracy;
    if (test != nullptr) {
      const LinearEvaluation on_test = EvaluateLinear(options.model, store->unsafe_values(), *test);
      report.test_loss = on_test.mean_loss;
      report.test_accuracy = on_test.accuracy;
    }
  };
  HOGWILD_RETURN_IF_ERROR(RunSparseEpochs(loop, result.resumed_epochs, store->unsafe_values(),
                                          run_epoch, evaluate, totals));
  result.epochs = std::move(totals.epochs);
  result.train_time_s = totals.train_time_s;
  result.examples = totals.examples;
  result.updates = totals.updates;
  const auto values = store->unsafe_values();
  result.weights.assign(values.begin(), values.end());
  return result;
}

}  // namespace hogwild::sparse

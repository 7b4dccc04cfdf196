// The input pipeline: per-epoch shuffling with a seed, one shard per worker, and prefetching.
//
// Every worker's batch sequence is a pure function of (seed, mode, number of workers, batch
// size, epochs) — BatchPlan below — so the same settings give the same data order per worker.
//
// async (Hogwild) and ssp modes (core/mode.h SplitsGlobalBatch false), batch_size per worker:
//   epoch e: permutation π_e of [0, N) (seed, e); worker w's shard is π_e[N·w/W, N·(w+1)/W);
//   the worker walks its shard in batches of batch_size (the last one smaller). Every example
//   is visited exactly once per epoch, by exactly one worker.
// sync (tower) mode (SplitsGlobalBatch true), batch_size global:
//   epoch e: global batch s is π_e[s·B, min((s+1)·B, N)) of b examples; worker w's shard of it
//   is rows [b·w/W, b·(w+1)/W) — uneven splits and empty shards (b < W) included. All workers
//   see the same number of steps. Batch::global_size is b, except in local_sgd mode, where each
//   worker's gradient is the mean over its own rows: there it is the worker's own rows.
// drop_last (PyTorch's DataLoader drop_last, TensorFlow's drop_remainder): a worker's last batch
//   of an epoch (async, ssp) or the epoch's last global batch (sync modes) is left out when it
//   is smaller than batch_size, so every step has a full batch; the left-out examples (fewer
//   than batch_size per worker, or per epoch in sync modes) are in other batches of another
//   epoch's permutation. A shard smaller than batch_size then gives no steps.
//
// Prefetching: one producer thread per worker assembles that worker's batches (gathering the
// rows into contiguous memory) into a bounded queue of `prefetch` batches (CancellableQueue, whose
// Cancel() cannot lose a wake-up), so a worker never waits for its input while its queue is
// non-empty.
//
// Thread-safety: Next(w) is called by worker w's thread only; Cancel() from any thread.
#ifndef HOGWILD_TRAINER_DATA_INPUT_PIPELINE_H_
#define HOGWILD_TRAINER_DATA_INPUT_PIPELINE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "core/mode.h"
#include "trainer/data/dataset.h"

namespace hogwild {

struct Batch {
  int64_t epoch = 0;
  int64_t step = 0;         // index of this batch in the worker's sequence (= global step in sync)
  int64_t global_size = 0;  // the gradient's divisor: the step's global batch in sync mode
  std::vector<int64_t> indices;  // [size] dataset rows of this batch
  std::vector<float> features;   // [size, D]
  std::vector<int32_t> labels;   // [size]

  int64_t size() const { return static_cast<int64_t>(indices.size()); }
};

struct PipelineOptions {
  Mode mode = Mode::kAsync;
  int num_workers = 1;
  int64_t batch_size = 64;  // per worker (async) or global (sync); >= 1
  int64_t epochs = 1;       // >= 1
  uint64_t seed = 1;
  bool drop_last = false;  // leave out each epoch's short last batches (see above)
  int prefetch = 4;        // batches queued per worker, >= 1
  // A job of several processes (trainer/cluster.h): the plan is that of `total_workers` workers
  // (0: num_workers), and this pipeline feeds the num_workers of them that start at
  // `first_worker`: its worker w is the plan's worker first_worker + w, so each process reads
  // its own part of every epoch. Needs first_worker + num_workers <= total_workers.
  int first_worker = 0;
  int total_workers = 0;
  // Per worker: the index in its batch sequence of the first batch to produce, to resume from a
  // checkpoint (batches keep their step numbers; earlier epochs are skipped without shuffling).
  // Empty: every worker starts at 0.
  std::vector<int64_t> start_step;
};

// The pure batch plan, without data: which rows worker w gets at each of its steps.
class BatchPlan {
 public:
  BatchPlan(int64_t num_examples, const PipelineOptions& options);

  // Permutation of [0, N) for `epoch` (deterministic in seed and epoch; Fisher-Yates with
  // std::mt19937_64 so it does not depend on the standard library's shuffle).
  std::vector<int64_t> EpochPermutation(int64_t epoch) const;

  // Steps worker w (of the plan's workers) takes in one epoch.
  int64_t StepsPerEpoch(int worker) const;

  // Worker w's batches of one epoch, given that epoch's permutation. Each entry is the batch's
  // rows; the pair's second is the step's global batch size.
  std::vector<std::pair<std::vector<int64_t>, int64_t>> EpochBatches(
      int worker, const std::vector<int64_t>& permutation) const;

 private:
  int64_t num_examples_;
  PipelineOptions options_;
};

class InputPipeline {
 public:
  // `dataset` must outlive the pipeline. Producers start immediately.
  InputPipeline(const Dataset* dataset, PipelineOptions options);
  ~InputPipeline();  // cancels and joins the producers
  InputPipeline(const InputPipeline&) = delete;
  InputPipeline& operator=(const InputPipeline&) = delete;

  // Worker w's next batch, blocking until it is ready; std::nullopt after its last batch.
  // Errors: kCancelled once Cancel() was called (also when called while blocked); kInternal
  // when worker w's producer failed (e.g. std::bad_alloc), instead of a batch.
  absl::StatusOr<std::optional<Batch>> Next(int worker);

  // Hands a batch that worker w has finished with back to its producer, which refills its
  // buffers for a later batch instead of allocating new ones: in the steady state no malloc, no
  // zero fill of the features (Batch::features.resize of a fresh vector) and no first-touch page
  // faults per batch. Optional: a caller that never recycles gets freshly allocated batches, and
  // the batches' contents are the same either way. At most `prefetch` + 2 spares are kept
  // (the batches in circulation), so a worker that recycles each batch before its next Next()
  // causes at most `prefetch` + 2 allocations in all.
  // Thread-safety: worker w's thread (as Next(w)); the spares are guarded by a mutex shared with
  // the producer only.
  void Recycle(int worker, Batch batch);

  // Wakes every blocked Next() and producer; later Next() calls return kCancelled. Idempotent.
  void Cancel();

  const BatchPlan& plan() const { return plan_; }

  // Index of worker w's first batch (PipelineOptions::start_step).
  int64_t start_step(int worker) const;

  // The plan's index of this pipeline's worker w (PipelineOptions::first_worker + w).
  int plan_worker(int worker) const { return options_.first_worker + worker; }

 private:
  struct WorkerQueue;
  void Produce(int worker);
  // A recycled batch of worker w if there is one, else an empty one.
  Batch TakeSpare(int worker);

  const Dataset* dataset_;
  PipelineOptions options_;
  BatchPlan plan_;
  std::vector<std::unique_ptr<WorkerQueue>> queues_;
  std::vector<std::thread> producers_;
  std::atomic<bool> cancelled_{false};
};

}  // namespace hogwild

#endif  // HOGWILD_TRAINER_DATA_INPUT_PIPELINE_H_

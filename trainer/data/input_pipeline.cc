#include "trainer/data/input_pipeline.h"

#include <algorithm>
#include <exception>
#include <mutex>
#include <random>

#include "absl/strings/str_format.h"
#include "core/logging.h"
#include "trainer/data/cancellable_queue.h"

namespace hogwild {

BatchPlan::BatchPlan(int64_t num_examples, const PipelineOptions& options)
    : num_examples_(num_examples), options_(options) {
  HOGWILD_CHECK(options.num_workers >= 1 && options.batch_size >= 1, "BatchPlan: bad options");
  if (options.total_workers > 0) {
    HOGWILD_CHECK(options.first_worker >= 0 &&
                      options.first_worker + options.num_workers <= options.total_workers,
                  "BatchPlan: first_worker + num_workers > total_workers");
    options_.num_workers = options.total_workers;
  }
}

std::vector<int64_t> BatchPlan::EpochPermutation(int64_t epoch) const {
  std::vector<int64_t> perm(num_examples_);
  for (int64_t i = 0; i < num_examples_; ++i) perm[i] = i;
  // Mix the epoch into the seed (splitmix64 constant) so epochs are decorrelated.
  std::mt19937_64 rng(options_.seed ^ (0x9e3779b97f4a7c15ull * static_cast<uint64_t>(epoch + 1)));
  for (int64_t i = num_examples_ - 1; i > 0; --i) {
    // Modulo bias is < 2^-40 for N < 2^24: irrelevant to SGD, and keeps the plan portable.
    const int64_t j = static_cast<int64_t>(rng() % static_cast<uint64_t>(i + 1));
    std::swap(perm[i], perm[j]);
  }
  return perm;
}

int64_t BatchPlan::StepsPerEpoch(int worker) const {
  const int64_t w = options_.num_workers;
  const int64_t b = options_.batch_size;
  // Batches of b in n examples: the short last one counts unless drop_last leaves it out.
  const auto batches = [&](int64_t n) { return options_.drop_last ? n / b : (n + b - 1) / b; };
  if (SplitsGlobalBatch(options_.mode)) return batches(num_examples_);
  return batches(num_examples_ * (worker + 1) / w - num_examples_ * worker / w);
}

std::vector<std::pair<std::vector<int64_t>, int64_t>> BatchPlan::EpochBatches(
    int worker, const std::vector<int64_t>& perm) const {
  const int64_t w_count = options_.num_workers;
  const int64_t b = options_.batch_size;
  std::vector<std::pair<std::vector<int64_t>, int64_t>> batches;
  if (!SplitsGlobalBatch(options_.mode)) {
    const int64_t begin = num_examples_ * worker / w_count;
    const int64_t end = num_examples_ * (worker + 1) / w_count;
    for (int64_t s = 0; s < StepsPerEpoch(worker); ++s) {
      const int64_t lo = begin + s * b;
      const int64_t hi = std::min(lo + b, end);
      batches.emplace_back(std::vector<int64_t>(perm.begin() + lo, perm.begin() + hi), hi - lo);
    }
  } else {
    for (int64_t s = 0; s < StepsPerEpoch(worker); ++s) {
      const int64_t lo = s * b;
      const int64_t size = std::min(b, num_examples_ - lo);
      const int64_t shard_lo = lo + size * worker / w_count;
      const int64_t shard_hi = lo + size * (worker + 1) / w_count;
      // local_sgd: each worker's gradient is the mean over its own part (its local batch).
      batches.emplace_back(std::vector<int64_t>(perm.begin() + shard_lo, perm.begin() + shard_hi),
                           options_.mode == Mode::kLocalSgd ? shard_hi - shard_lo : size);
    }
  }
  return batches;
}

// std::nullopt in the queue marks the end of a worker's data, or, when `error` is set, that
// its producer failed.
struct InputPipeline::WorkerQueue {
  explicit WorkerQueue(int capacity) : queue(static_cast<size_t>(capacity)) {}
  CancellableQueue<std::optional<Batch>> queue;
  std::mutex mu;
  absl::Status error;         // guarded by mu
  std::vector<Batch> spares;  // guarded by mu: batches handed back by Recycle()
};

InputPipeline::InputPipeline(const Dataset* dataset, PipelineOptions options)
    : dataset_(dataset), options_(options), plan_(dataset->size(), options) {
  HOGWILD_CHECK(options_.start_step.empty() ||
                    static_cast<int>(options_.start_step.size()) == options_.num_workers,
                "InputPipeline: start_step needs one entry per worker");
  for (int w = 0; w < options_.num_workers; ++w) {
    queues_.push_back(std::make_unique<WorkerQueue>(std::max(1, options_.prefetch)));
  }
  for (int w = 0; w < options_.num_workers; ++w) {
    producers_.emplace_back([this, w] { Produce(w); });
  }
}

InputPipeline::~InputPipeline() {
  Cancel();
  for (std::thread& t : producers_) t.join();
}

void InputPipeline::Cancel() {
  if (cancelled_.exchange(true)) return;
  // Releases every producer blocked in Push() and every worker blocked in Pop(), now or later.
  for (auto& q : queues_) q->queue.Cancel();
}

void InputPipeline::Produce(int worker) {
  const int64_t dim = dataset_->feature_dim();
  auto& queue = queues_[worker]->queue;
  const int64_t start = start_step(worker);
  const int64_t per_epoch = plan_.StepsPerEpoch(plan_worker(worker));
  try {
    int64_t step = 0;
    for (int64_t epoch = 0; epoch < options_.epochs && per_epoch > 0; ++epoch) {
      if (step + per_epoch <= start) {  // resumed past this epoch: skip it without shuffling
        step += per_epoch;
        continue;
      }
      const std::vector<int64_t> perm = plan_.EpochPermutation(epoch);
      for (auto& [rows, global_size] : plan_.EpochBatches(plan_worker(worker), perm)) {
        if (cancelled_.load(std::memory_order_relaxed)) return;
        if (step < start) {
          ++step;
          continue;
        }
        Batch batch = TakeSpare(worker);
        batch.epoch = epoch;
        batch.step = step++;
        batch.global_size = global_size;
        batch.indices = std::move(rows);
        // A spare of the same size is not zero-filled again: every element is written below.
        batch.features.resize(batch.indices.size() * dim);
        batch.labels.resize(batch.indices.size());
        for (size_t i = 0; i < batch.indices.size(); ++i) {
          const int64_t row = batch.indices[i];
          std::copy_n(dataset_->features.data() + row * dim, dim, batch.features.data() + i * dim);
          batch.labels[i] = dataset_->labels[row];
        }
        if (!queue.Push(std::move(batch))) return;  // cancelled
      }
    }
    queue.Push(std::nullopt);
  } catch (const std::exception& e) {
    // An exception must not end the process (std::terminate) or leave the worker waiting
    // forever: hand the worker an error instead of its next batch.
    {
      std::lock_guard<std::mutex> lock(queues_[worker]->mu);
      queues_[worker]->error = absl::InternalError(
          absl::StrFormat("input pipeline of worker %d failed: %s", worker, e.what()));
    }
    queue.Push(std::nullopt);
  }
}

Batch InputPipeline::TakeSpare(int worker) {
  WorkerQueue& q = *queues_[worker];
  std::lock_guard<std::mutex> lock(q.mu);
  if (q.spares.empty()) return Batch();
  Batch batch = std::move(q.spares.back());
  q.spares.pop_back();
  return batch;
}

void InputPipeline::Recycle(int worker, Batch batch) {
  WorkerQueue& q = *queues_[worker];
  std::lock_guard<std::mutex> lock(q.mu);
  // Bounded by the batches in circulation: the queue's `prefetch`, the worker's and the
  // producer's, so none is dropped in the steady state.
  if (q.spares.size() < static_cast<size_t>(std::max(1, options_.prefetch)) + 2) {
    q.spares.push_back(std::move(batch));
  }
}

int64_t InputPipeline::start_step(int worker) const {
  return options_.start_step.empty() ? 0 : options_.start_step[worker];
}

absl::StatusOr<std::optional<Batch>> InputPipeline::Next(int worker) {
  if (cancelled_.load(std::memory_order_relaxed)) {
    return absl::CancelledError("input pipeline cancelled");
  }
  // The queue holds std::optional<Batch>: an empty outer optional means cancelled, an empty
  // inner one the end of this worker's data (or its producer's error).
  std::optional<std::optional<Batch>> item = queues_[worker]->queue.Pop();
  if (!item) return absl::CancelledError("input pipeline cancelled");
  std::optional<Batch> batch = std::move(*item);
  if (!batch) {
    std::lock_guard<std::mutex> lock(queues_[worker]->mu);
    if (!queues_[worker]->error.ok()) return queues_[worker]->error;
  }
  return batch;
}

}  // namespace hogwild

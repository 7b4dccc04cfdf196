#include "mpi/mpi_tower_average.h"

#include <algorithm>

#include "core/status_macros.h"
#include "mpi/mpi_status.h"
#include "sync/tower_sum.h"

namespace hogwild {

MpiTowerAverage::MpiTowerAverage(ParameterStore* store, int num_workers, SgdOptions options,
                                 MPI_Comm comm)
    : UpdatePolicy(Mode::kSync, store, num_workers, options),
      comm_(comm),
      barrier_(num_workers),
      tower_grads_(num_workers, nullptr),
      partial_(store->size()),
      global_(store->size()),
      update_(options, store->size(), num_workers) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &num_ranks_);
  const int64_t p = store->size();
  for (int q = 0; q < num_ranks_; ++q) {
    offsets_.push_back(static_cast<int>(p * q / num_ranks_));
    counts_.push_back(static_cast<int>(p * (q + 1) / num_ranks_ - p * q / num_ranks_));
  }
  received_.resize(static_cast<size_t>(counts_[rank_]) * num_ranks_);
}

int MpiTowerAverage::num_optimizer_buffers() const { return update_.num_buffers(); }

int MpiTowerAverage::num_optimizer_steps() const { return update_.num_steps(); }

std::vector<uint64_t> MpiTowerAverage::DoSaveOptimizerSteps() const { return update_.SaveSteps(); }

void MpiTowerAverage::DoRestoreOptimizerSteps(const std::vector<uint64_t>& steps) {
  update_.RestoreSteps(steps);
}

absl::Status MpiTowerAverage::DoReadParams(absl::Span<float> out) const {
  store()->Read(out);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::vector<float>>> MpiTowerAverage::DoSaveOptimizerState() const {
  return update_.SaveBuffers();
}

absl::Status MpiTowerAverage::DoRestoreOptimizerState(
    const std::vector<std::vector<float>>& momentum) {
  update_.RestoreBuffers(momentum);
  return absl::OkStatus();
}

absl::StatusOr<DeviceSpan<const float>> MpiTowerAverage::DoBeginStep(int /*worker*/) {
  // As TowerAverage: nobody writes the array between the closing barrier of the last step and
  // the opening barrier of this one.
  return DeviceSpan<const float>(store()->unsafe_values());
}

void MpiTowerAverage::AddLocalTowers(int64_t lo, int64_t hi) {
  // Worker order 0..W-1 per element, as TowerAverage (sync/tower_sum.h).
  SumTowers(absl::MakeConstSpan(tower_grads_), lo, hi - lo, partial_.data() + lo);
}

absl::Status MpiTowerAverage::Exchange() {
  // Reduce-scatter: rank q receives every rank's part of its slice q.
  std::vector<int> receive_counts(num_ranks_, counts_[rank_]);
  std::vector<int> receive_offsets(num_ranks_);
  for (int q = 0; q < num_ranks_; ++q) receive_offsets[q] = q * counts_[rank_];
  HOGWILD_MPI_RETURN_IF_ERROR(MPI_Alltoallv(partial_.data(), counts_.data(), offsets_.data(),
                                            MPI_FLOAT, received_.data(), receive_counts.data(),
                                            receive_offsets.data(), MPI_FLOAT, comm_));
  // The owner adds the parts in rank order: the one place where ranks' numbers are added.
  // In rank order, with the same arithmetic as the towers' sum (sync/tower_sum.h).
  const int n = counts_[rank_];
  std::vector<const float*> parts;
  for (int q = 0; q < num_ranks_; ++q)
    parts.push_back(received_.data() + static_cast<size_t>(q) * n);
  SumTowers(absl::MakeConstSpan(parts), 0, n, global_.data() + offsets_[rank_]);
  HOGWILD_MPI_RETURN_IF_ERROR(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_FLOAT, global_.data(),
                                             counts_.data(), offsets_.data(), MPI_FLOAT, comm_));
  const int64_t to_others = (store()->size() - n) + static_cast<int64_t>(num_ranks_ - 1) * n;
  bytes_moved_.fetch_add(to_others * static_cast<int64_t>(sizeof(float)),
                         std::memory_order_relaxed);
  exchanges_.fetch_add(1, std::memory_order_relaxed);
  // The log's count (UpdatePolicy::communication): one all-reduce of every local worker's [P]
  // gradient, as TowerAverage's.
  RecordExchanges(1, int64_t{num_workers()} * store()->size() * int64_t{sizeof(float)});
  return absl::OkStatus();
}

absl::StatusOr<StepStats> MpiTowerAverage::DoFinishStep(int worker, DeviceSpan<const float> grad,
                                                        float lr) {
  const int64_t p = store()->size();
  tower_grads_[worker] = grad.data();
  // This update's step count, read before the barrier (as TowerAverage): worker 0 advances it
  // after the update, and the previous step's closing barrier ordered that write before this.
  const uint64_t step = update_.step() + 1;
  HOGWILD_RETURN_IF_ERROR(barrier_.ArriveAndWait());
  AddLocalTowers(p * worker / num_workers(), p * (worker + 1) / num_workers());
  HOGWILD_RETURN_IF_ERROR(barrier_.ArriveAndWait());
  if (worker == 0) {
    const absl::Status exchanged = Exchange();
    if (!exchanged.ok()) {
      // The peers wait at the next barrier: release them before returning the error.
      barrier_.Cancel();
      return exchanged;
    }
  }
  HOGWILD_RETURN_IF_ERROR(barrier_.ArriveAndWait());
  // global_ is the same on every rank: the same update (optimizer, clipping by the averaged
  // gradient's norm, moving statistics) as one process's, applied by every rank.
  HOGWILD_RETURN_IF_ERROR(update_.UpdateSlice(
      worker, lr, step,
      [this](int64_t lo, int64_t n, float* sum) { std::copy_n(global_.data() + lo, n, sum); },
      barrier_, store()->unsafe_values().data()));
  if (worker == 0) {
    store()->CompleteUpdate();
    update_.set_step(step);
  }
  HOGWILD_RETURN_IF_ERROR(barrier_.ArriveAndWait());
  return StepStats{.staleness = 0, .applied_lr = lr};
}

}  // namespace hogwild

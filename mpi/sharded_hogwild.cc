#include "mpi/sharded_hogwild.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/str_format.h"
#include "core/status_macros.h"
#include "kernels/functors.h"
#include "mpi/mpi_status.h"

namespace hogwild {

absl::StatusOr<std::unique_ptr<ShardedHogwild>> ShardedHogwild::Create(ParameterStore* store,
                                                                       int num_workers,
                                                                       SgdOptions options,
                                                                       int64_t exchange_every,
                                                                       MPI_Comm comm) {
  if (exchange_every < 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "TrainerOptions::exchange_every=%d is out of range; it must be >= 1", exchange_every));
  }
  std::unique_ptr<ShardedHogwild> policy(
      new ShardedHogwild(store, num_workers, options, exchange_every, comm));
  HOGWILD_RETURN_IF_ERROR(policy->OpenWindows());
  policy->progress_ = std::thread([p = policy.get()] { p->Progress(); });
  return policy;
}

ShardedHogwild::ShardedHogwild(ParameterStore* store, int num_workers, SgdOptions options,
                               int64_t exchange_every, MPI_Comm comm)
    : UpdatePolicy(Mode::kAsync, store, num_workers, options),
      local_(store, num_workers, options),
      exchange_every_(exchange_every),
      comm_(comm),
      next_exchange_at_(static_cast<uint64_t>(exchange_every)) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &num_ranks_);
  const int64_t p = store->size();
  for (int q = 0; q < num_ranks_; ++q) {
    offsets_.push_back(static_cast<int>(p * q / num_ranks_));
    counts_.push_back(static_cast<int>(p * (q + 1) / num_ranks_ - p * q / num_ranks_));
  }
  base_.assign(store->unsafe_values().begin(), store->unsafe_values().end());
  snapshot_.resize(p);
  scratch_.resize(p);
  pulled_.resize(p);
}

absl::Status ShardedHogwild::OpenWindows() {
  const int n = counts_[rank_];
  MPI_Info info;
  HOGWILD_MPI_RETURN_IF_ERROR(MPI_Info_create(&info));
  // Only MPI_SUM and MPI_NO_OP reach the window: lets the implementation use hardware atomics.
  MPI_Info_set(info, "accumulate_ops", "same_op_no_op");
  const int allocated = MPI_Win_allocate(static_cast<MPI_Aint>(n) * sizeof(float), sizeof(float),
                                         info, comm_, &shard_, &params_win_);
  MPI_Info_free(&info);
  if (allocated != MPI_SUCCESS) {
    return MpiCallStatus(allocated, "MPI_Win_allocate(shard, info, comm)", __FILE__, __LINE__);
  }
  HOGWILD_MPI_RETURN_IF_ERROR(MPI_Win_set_errhandler(params_win_, MPI_ERRORS_RETURN));
  std::copy_n(base_.data() + offsets_[rank_], n, shard_);
  HOGWILD_MPI_RETURN_IF_ERROR(MPI_Win_allocate(rank_ == 0 ? sizeof(int64_t) : 0, sizeof(int64_t),
                                               MPI_INFO_NULL, comm_, &counter_, &counter_win_));
  HOGWILD_MPI_RETURN_IF_ERROR(MPI_Win_set_errhandler(counter_win_, MPI_ERRORS_RETURN));
  if (rank_ == 0) *counter_ = 0;
  // Every shard and the counter are initialized before any rank's first access.
  HOGWILD_MPI_RETURN_IF_ERROR(MPI_Barrier(comm_));
  HOGWILD_MPI_RETURN_IF_ERROR(MPI_Win_lock_all(MPI_MODE_NOCHECK, params_win_));
  HOGWILD_MPI_RETURN_IF_ERROR(MPI_Win_lock_all(MPI_MODE_NOCHECK, counter_win_));
  return absl::OkStatus();
}

void ShardedHogwild::Progress() {
  // 1 ms: an exchange waits at most about that long for each owner's answer, and the thread
  // costs a few microseconds of a core per millisecond.
  while (!stop_progress_.load(std::memory_order_acquire)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::unique_lock<std::mutex> lock(exchange_mu_, std::try_to_lock);
    if (!lock.owns_lock()) continue;  // an exchange is making progress itself
    int flag = 0;
    // Errors surface in the next exchange, which makes real calls.
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm_, &flag, MPI_STATUS_IGNORE);
  }
}

void ShardedHogwild::StopProgress() {
  stop_progress_.store(true, std::memory_order_release);
  if (progress_.joinable()) progress_.join();
}

ShardedHogwild::~ShardedHogwild() {
  StopProgress();
  // Closing the epochs and freeing the windows are collective: after a failed run the other
  // ranks would never join, and this rank would hang here instead of reaching MPI_Abort. So only
  // a finished run (every rank passed Finish()) frees them; a failed one leaves them to the
  // job's end. Errors cannot be returned from here.
  if (!finished_) return;
  MPI_Win_unlock_all(counter_win_);
  MPI_Win_unlock_all(params_win_);
  MPI_Win_free(&counter_win_);
  MPI_Win_free(&params_win_);
}

int ShardedHogwild::num_optimizer_buffers() const { return local_.num_optimizer_buffers(); }

double ShardedHogwild::remote_staleness_mean() const {
  const int64_t n = exchanges();
  return n > 0 ? static_cast<double>(stale_total_.load(std::memory_order_relaxed)) / n : 0.0;
}

absl::Status ShardedHogwild::DoReadParams(absl::Span<float> out) const {
  return local_.ReadParams(out);
}

absl::StatusOr<DeviceSpan<const float>> ShardedHogwild::DoBeginStep(int worker) {
  return local_.BeginStep(worker);
}

absl::StatusOr<StepStats> ShardedHogwild::DoFinishStep(int worker, DeviceSpan<const float> grad,
                                                       float lr) {
  HOGWILD_ASSIGN_OR_RETURN(StepStats stats, local_.FinishStep(worker, grad, lr));
  const uint64_t version = store()->version();
  if (version >= next_exchange_at_.load(std::memory_order_relaxed)) {
    // One exchange at a time; a worker that finds one running goes on training.
    std::unique_lock<std::mutex> lock(exchange_mu_, std::try_to_lock);
    if (lock.owns_lock() && version >= next_exchange_at_.load(std::memory_order_relaxed)) {
      next_exchange_at_.store((version / exchange_every_ + 1) * exchange_every_,
                              std::memory_order_relaxed);
      HOGWILD_ASSIGN_OR_RETURN(stats.remote_staleness, Exchange());
    }
  }
  return stats;
}

absl::StatusOr<std::vector<std::vector<float>>> ShardedHogwild::DoSaveOptimizerState() const {
  HOGWILD_ASSIGN_OR_RETURN(PolicyState state, local_.SaveState());
  return state.optimizer_state;
}

absl::Status ShardedHogwild::DoRestoreOptimizerState(const std::vector<std::vector<float>>& /*m*/) {
  return absl::UnimplementedError(
      "checkpoints of a job of several processes are not supported yet");
}

absl::StatusOr<int64_t> ShardedHogwild::Push() {
  store()->Read(absl::MakeSpan(snapshot_));
  const int64_t p = store()->size();
  for (int64_t i = 0; i < p; ++i) scratch_[i] = snapshot_[i] - base_[i];
  for (int q = 0; q < num_ranks_; ++q) {
    if (counts_[q] == 0) continue;
    HOGWILD_MPI_RETURN_IF_ERROR(MPI_Accumulate(scratch_.data() + offsets_[q], counts_[q], MPI_FLOAT,
                                               q, 0, counts_[q], MPI_FLOAT, MPI_SUM, params_win_));
  }
  const int64_t one = 1;
  int64_t pushes_before = 0;
  HOGWILD_MPI_RETURN_IF_ERROR(
      MPI_Fetch_and_op(&one, &pushes_before, MPI_INT64_T, 0, 0, MPI_SUM, counter_win_));
  HOGWILD_MPI_RETURN_IF_ERROR(MPI_Win_flush_all(params_win_));
  HOGWILD_MPI_RETURN_IF_ERROR(MPI_Win_flush(0, counter_win_));
  const int64_t remote = pushes_before - pushes_seen_;
  pushes_seen_ = pushes_before + 1;
  bytes_moved_.fetch_add(
      static_cast<int64_t>(p - counts_[rank_]) * static_cast<int64_t>(sizeof(float)),
      std::memory_order_relaxed);
  return remote;
}

absl::Status ShardedHogwild::Pull() {
  for (int q = 0; q < num_ranks_; ++q) {
    if (counts_[q] == 0) continue;
    HOGWILD_MPI_RETURN_IF_ERROR(
        MPI_Get_accumulate(nullptr, 0, MPI_FLOAT, pulled_.data() + offsets_[q], counts_[q],
                           MPI_FLOAT, q, 0, counts_[q], MPI_FLOAT, MPI_NO_OP, params_win_));
  }
  HOGWILD_MPI_RETURN_IF_ERROR(MPI_Win_flush_all(params_win_));
  bytes_moved_.fetch_add(
      static_cast<int64_t>(store()->size() - counts_[rank_]) * static_cast<int64_t>(sizeof(float)),
      std::memory_order_relaxed);
  return absl::OkStatus();
}

absl::StatusOr<int64_t> ShardedHogwild::Exchange() {
  HOGWILD_ASSIGN_OR_RETURN(const int64_t remote, Push());
  HOGWILD_RETURN_IF_ERROR(Pull());
  // local += G - S as one Hogwild update of the store (lr 1, no momentum, no decay: p - (S - G)),
  // so local updates made since S are kept; not counted as a step.
  const int64_t p = store()->size();
  for (int64_t i = 0; i < p; ++i) scratch_[i] = snapshot_[i] - pulled_[i];
  store()->SgdUpdateAndRead(SgdMomentumFn{1.0f, 0.0f, 0.0f}, scratch_, absl::Span<float>(),
                            absl::MakeSpan(snapshot_));
  base_ = pulled_;
  exchanges_.fetch_add(1, std::memory_order_relaxed);
  stale_total_.fetch_add(remote, std::memory_order_relaxed);
  int64_t max = stale_max_.load(std::memory_order_relaxed);
  while (remote > max && !stale_max_.compare_exchange_weak(max, remote)) {
  }
  return remote;
}

absl::Status ShardedHogwild::Finish() {
  // From here on this thread is in MPI until the end (the barrier progresses everything).
  StopProgress();
  std::lock_guard<std::mutex> lock(exchange_mu_);
  HOGWILD_RETURN_IF_ERROR(Push().status());
  // Every rank's last push has landed (flushed before the barrier) before anyone's last pull.
  HOGWILD_MPI_RETURN_IF_ERROR(MPI_Barrier(comm_));
  HOGWILD_RETURN_IF_ERROR(Pull());
  std::copy(pulled_.begin(), pulled_.end(), store()->unsafe_values().begin());
  base_ = pulled_;
  finished_ = true;
  return absl::OkStatus();
}

}  // namespace hogwild

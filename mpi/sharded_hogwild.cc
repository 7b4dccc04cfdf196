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

absl::Status ShardedHogwild::DoRestoreOptimizerState(
    const std::vector<std::vector<float>>& momentum) {
  if (momentum.empty()) return absl::OkStatus();
  // This rank's workers' buffers (the trainer passes this rank's slice of the job's).
  PolicyState state;
  state.global_step = store()->version();
  state.params.assign(store()->unsafe_values().begin(), store()->unsafe_values().end());
  state.optimizer_state = momentum;
  return local_.RestoreState(state);
}

absl::Status ShardedHogwild::DoRestoreParams() {
  std::lock_guard<std::mutex> lock(exchange_mu_);
  start_version_ = store()->version();
  next_exchange_at_.store((start_version_ / exchange_every_ + 1) * exchange_every_,
                          std::memory_order_relaxed);
  base_.assign(store()->unsafe_values().begin(), store()->unsafe_values().end());
  std::copy_n(base_.data() + offsets_[rank_], counts_[rank_], shard_);
  // Every shard holds the restored parameters before any rank's first push.
  HOGWILD_MPI_RETURN_IF_ERROR(MPI_Barrier(comm_));
  return absl::OkStatus();
}

absl::Status ShardedHogwild::StartRound(uint32_t bits) {
  std::lock_guard<std::mutex> lock(exchange_mu_);
  if (round_ != MPI_REQUEST_NULL) {
    return absl::FailedPreconditionError("ShardedHogwild::StartRound: a round is pending");
  }
  round_mine_ = bits;
  round_all_ = 0;
  HOGWILD_MPI_RETURN_IF_ERROR(
      MPI_Iallreduce(&round_mine_, &round_all_, 1, MPI_UINT32_T, MPI_BOR, comm_, &round_));
  return absl::OkStatus();
}

absl::StatusOr<std::optional<uint32_t>> ShardedHogwild::TestRound() {
  std::lock_guard<std::mutex> lock(exchange_mu_);
  if (round_ == MPI_REQUEST_NULL) return std::nullopt;
  int done = 0;
  HOGWILD_MPI_RETURN_IF_ERROR(MPI_Test(&round_, &done, MPI_STATUS_IGNORE));
  if (done == 0) return std::nullopt;
  return round_all_;
}

absl::StatusOr<uint32_t> ShardedHogwild::WaitRound() {
  std::lock_guard<std::mutex> lock(exchange_mu_);
  if (round_ == MPI_REQUEST_NULL) return 0u;
  HOGWILD_MPI_RETURN_IF_ERROR(MPI_Wait(&round_, MPI_STATUS_IGNORE));
  return round_all_;
}

absl::StatusOr<ShardedHogwild::Cut> ShardedHogwild::CheckpointCut(
    const std::vector<int64_t>& next_step) {
  if (static_cast<int>(next_step.size()) != num_workers()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("ShardedHogwild::CheckpointCut: %d data positions for %d workers",
                        next_step.size(), num_workers()));
  }
  std::lock_guard<std::mutex> lock(exchange_mu_);
  // As Finish(), without ending: every rank's pending update reaches the owners (flushed)
  // before any rank pulls, so every rank holds x = x0 + every update.
  HOGWILD_RETURN_IF_ERROR(Push().status());
  HOGWILD_MPI_RETURN_IF_ERROR(MPI_Barrier(comm_));
  HOGWILD_RETURN_IF_ERROR(Pull());
  std::copy(pulled_.begin(), pulled_.end(), store()->unsafe_values().begin());
  base_ = pulled_;

  Cut cut;
  const int w = num_workers();
  if (rank_ == 0) cut.next_step.resize(static_cast<size_t>(num_ranks_) * w);
  HOGWILD_MPI_RETURN_IF_ERROR(
      MPI_Gather(next_step.data(), w, MPI_INT64_T, cut.next_step.data(), w, MPI_INT64_T, 0, comm_));
  const int64_t mine = static_cast<int64_t>(store()->version() - start_version_);
  int64_t since = 0;
  HOGWILD_MPI_RETURN_IF_ERROR(MPI_Allreduce(&mine, &since, 1, MPI_INT64_T, MPI_SUM, comm_));
  cut.global_step = static_cast<int64_t>(start_version_) + since;
  if (num_optimizer_buffers() > 0) {
    HOGWILD_ASSIGN_OR_RETURN(PolicyState state, local_.SaveState());
    const int64_t p = store()->size();
    std::vector<float> packed;
    packed.reserve(static_cast<size_t>(w * p));
    for (const std::vector<float>& m : state.optimizer_state) {
      packed.insert(packed.end(), m.begin(), m.end());
    }
    std::vector<float> all(rank_ == 0 ? static_cast<size_t>(num_ranks_) * packed.size() : 0);
    const int count = static_cast<int>(packed.size());
    HOGWILD_MPI_RETURN_IF_ERROR(
        MPI_Gather(packed.data(), count, MPI_FLOAT, all.data(), count, MPI_FLOAT, 0, comm_));
    for (size_t b = 0; b < all.size() / static_cast<size_t>(p); ++b) {
      cut.momentum.emplace_back(all.begin() + b * p, all.begin() + (b + 1) * p);
    }
  }
  return cut;
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
  // The log's count (UpdatePolicy::communication): one exchange of this rank's [P] update.
  RecordExchanges(1, store()->size() * int64_t{sizeof(float)});
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

// How a worker's gradient becomes a parameter update: the one seam between the training modes.
// Worker w runs, every step:
//
//   DeviceSpan<const float> params = policy.BeginStep(w);     // [P] the parameters to read
//   ... compute grad ([P]) on its batch from `params` ...
//   StatusOr<StepStats> stats = policy.FinishStep(w, grad, lr);
//
// or, for a gradient that is zero outside a few coordinates (sync/sparse_gradient.h), the same
// step as BeginSparseStep / FinishSparseStep: one policy per mode for every gradient kind.
//
// with policy.SetStepExamples(w, examples, step_examples) before BeginStep, and, when its data
// is used up, policy.WorkerDone(w).
//
// Implementations: Hogwild (async, sync/hogwild.h), TowerAverage (sync, sync/tower_average.h),
// StaleSynchronous (ssp, sync/stale_synchronous.h), BackupSync (backup, sync/backup_sync.h),
// LocalSgd (local_sgd, sync/local_sgd.h), Locked (locked, sync/locked.h) and RoundRobin
// (round_robin, sync/round_robin.h) for host memory (CPU workers); DeviceHogwild
// (sync/device_hogwild.h) and NcclTowerAverage (sync/nccl_tower_average.h) for GPU workers. The
// CPU policies apply every optimizer of kernels/optimizer.h (the SGD family with the vectorized
// kernels/functors.h SgdMomentumFn); the GPU policies SGD with momentum only. sync/policy_factory.h
// picks one for a mode and a device list. A new policy derives from UpdatePolicy and implements the
// Do* hooks below; the argument checks, the cancellation flag, the global step and the checkpoint
// state's validation live here, once.
//
// Memory: the spans of BeginStep/FinishStep live in the memory of the device of worker w
// (kernels/device_span.h): host memory for the CPU policies, memory of the worker's GPU (the
// backend it passed to AttachWorker) for the GPU policies.
//
// Gradient scaling is the caller's: the gradient handed to FinishStep is the gradient of the
// loss *sum* over the worker's examples divided by the number of examples of the step's batch
// (the worker's own batch in async mode, the global batch in sync mode), so that summing the
// workers' gradients in sync mode gives the example-weighted average.
#ifndef HOGWILD_SYNC_UPDATE_POLICY_H_
#define HOGWILD_SYNC_UPDATE_POLICY_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/mode.h"
#include "kernels/backend.h"
#include "kernels/device_span.h"
#include "kernels/optimizer.h"
#include "sync/mode_state.h"
#include "sync/parameter_store.h"
#include "sync/sparse_gradient.h"

namespace hogwild {

// Optimizer hyper-parameters other than the learning rate (which follows a schedule and is
// passed per step). Defaults give plain SGD. The rules of every optimizer, with their sources and
// PyTorch's defaults, are in kernels/optimizer.h.
struct SgdOptions {
  OptimizerKind optimizer = OptimizerKind::kSgd;
  float momentum = 0.0f;      // in [0, 1); sgd, momentum and nesterov (> 0), rmsprop
  float weight_decay = 0.0f;  // L2 coefficient (adamw: decoupled), >= 0
  float beta1 = 0.9f;         // adam, adamw; in [0, 1)
  float beta2 = 0.999f;       // adam, adamw; in [0, 1)
  float alpha = 0.99f;        // rmsprop; in [0, 1)
  float eps = 0.0f;           // adam, adamw, rmsprop, adagrad; >= 0; 0 = PyTorch's default
  // Async (Hogwild) on CPU workers only: one optimizer state shared by every worker and updated
  // lock-free like the parameters (A3C's shared Adam), instead of one per worker (PyTorch's Hogwild
  // example). What races may lose: sync/hogwild.h.
  bool shared_optimizer_state = false;
  // Async only: divide the learning rate by max(1, staleness) (Zhang et al., IJCAI 2016).
  bool staleness_aware_lr = false;
  // Async only, not with staleness_aware_lr: the delay-adaptive step size, lr * min(1, W / tau)
  // for an update of staleness tau with W workers: the full rate for the delays that W
  // concurrent workers make anyway, scaled down only beyond them (AsyncStepStats).
  bool delay_adaptive_lr = false;
  // Async only: drop an update whose staleness exceeds this bound instead of applying it
  // (Ringmaster ASGD's threshold R; AsyncStepStats). 0 = no bound; >= 0.
  int64_t max_delay = 0;
  // Clip the gradient to this global L2 norm before the update (sync/grad_clip.h: sync and
  // backup the averaged gradient, the other modes each worker's); 0 = no clipping; >= 0.
  float clip_global_norm = 0.0f;
  // [begin, end) ranges of the parameters exempt from weight_decay (biases), sorted and
  // disjoint; empty: every parameter decays. Train() fills it from the model
  // (Model::BiasRanges) when TrainerOptions::weight_decay_biases is false.
  std::vector<std::pair<int64_t, int64_t>> no_decay;
  // [begin, end) ranges of the parameters that are moving statistics, not trained (batch norm;
  // Model::StatRanges, filled by Train()), sorted and disjoint: their gradient slots hold batch
  // statistics, and the update there is p += moving_stats_momentum * (s - p)
  // (sync/moving_stats.h), never the optimizer, weight decay or clipping.
  std::vector<std::pair<int64_t, int64_t>> moving_stats;
  float moving_stats_momentum = 0.1f;  // in (0, 1]; PyTorch's momentum (TF's decay = 1 - it)

  // The functor's hyper-parameters. Pure.
  OptimizerParams optimizer_params() const {
    return OptimizerParams{.kind = optimizer,
                           .momentum = momentum,
                           .weight_decay = weight_decay,
                           .beta1 = beta1,
                           .beta2 = beta2,
                           .alpha = alpha,
                           .eps = eps};
  }
  // Whether the optimizer is plain SGD with or without momentum, which the policies update with
  // the vectorized SgdMomentumFn kernels (bitwise the same as OptimizerFn for these). Pure.
  bool is_sgd_momentum() const {
    return optimizer == OptimizerKind::kSgd || optimizer == OptimizerKind::kMomentum;
  }
  // Whether the update leaves a parameter whose gradient is 0 unchanged but for its weight decay
  // (the SGD family with momentum 0, no clipping, no moving statistics), so that a sparse
  // gradient's update may visit its touched coordinates only (ApplySparseSgd,
  // sync/sparse_gradient.h). The one condition of every policy's fast sparse step. Pure.
  bool updates_touched_only() const {
    return is_sgd_momentum() && momentum == 0.0f && clip_global_norm <= 0.0f &&
           moving_stats.empty();
  }
};

struct StepStats {
  // Updates applied by other workers between this worker's read and its update (0 in sync).
  uint64_t staleness = 0;
  // The learning rate actually applied (after staleness scaling).
  float applied_lr = 0.0f;
  // The gradient was dropped, not applied (backup: it arrived after the step's first
  // W - backup_workers gradients; async: its staleness exceeded SgdOptions::max_delay).
  bool dropped = false;
  // Async across processes (mpi/sharded_hogwild.h): this step's update triggered an exchange
  // with the other ranks, whose remote staleness this is (pushes by other ranks since this
  // rank's previous pull); -1 when the step made no exchange (always, in one process).
  int64_t remote_staleness = -1;
};

// Everything a policy needs to continue a run exactly where it stopped (checkpoints): the
// parameters, the global step and the optimizer state. The optimizer state has an owner per
// worker in async mode with per-worker state (each worker owns its optimizer, as in PyTorch's
// Hogwild recipe), ssp and local_sgd, and one owner in sync and backup mode (replicated policies
// keep identical copies and save one) and in async mode with shared state. Each owner has
// NumStateSlots(optimizer) [P] buffers (kernels/optimizer.h: SGD's momentum; Adam's two moments;
// none for SGD without momentum), saved owner-major, and, for Adam and AdamW, a step count.
struct PolicyState {
  uint64_t global_step = 0;
  std::vector<float> params;                        // [P]
  std::vector<std::vector<float>> optimizer_state;  // [num_optimizer_buffers()][P], host memory
  // [owners] with adam and adamw (the updates each owner's state has taken), else empty.
  std::vector<uint64_t> optimizer_steps;
  // [W] or empty: the steps each worker has taken since the run began (the index of its next
  // batch; a checkpoint's next_step). SaveState leaves it empty (the step boundary records the
  // positions); RestoreState hands it to the policies that pace the workers by it (ssp's clocks),
  // and the others ignore it. Empty: every worker at 0.
  std::vector<int64_t> worker_steps;
  // The policy's own state beyond the above (sync/mode_state.h), in the layout its header
  // documents: async_local_sgd's replicas, anchors, rounds and outer state. Empty in the other
  // policies; empty on restore: the policy starts its own state afresh from the parameters.
  ModeState mode_state;
};

// What a policy's workers have communicated so far in this run (UpdatePolicy::communication;
// the convergence log's exchanges, bytes_per_worker and outer_step_norm columns,
// docs/convergence_log.md). The count starts at 0 when the policy is built, so a resumed run
// counts from the resume.
struct CommunicationStats {
  // Communication rounds: sync, backup (and their GPU and MPI forms): one all-reduce per global
  // step; local_sgd: one per averaging (with Streaming DiLoCo, one per fragment exchanged);
  // async_local_sgd: one per push; async across processes: one per push/pull exchange of this
  // rank. 0 where workers share memory (async, ssp, locked, round_robin in one process).
  int64_t exchanges = 0;
  // The logical payload the workers sent in them, summed over the workers, in bytes: 4 bytes
  // per float32 each worker hands over (its [P] gradient per sync step, its [P] replica per
  // averaging, its fragment per Streaming DiLoCo exchange, its [P] pseudo-gradient per push). Not
  // the bytes on the wire: a ring all-reduce sends 2 (W - 1) / W times its payload.
  int64_t bytes_sent = 0;
  // bytes_sent / W: what one worker sent, on average.
  double bytes_per_worker = 0.0;
  // local_sgd and async_local_sgd: ||theta_after - theta_before||_2 over the P shared
  // parameters at the last outer step (averaging, fragment exchange or push), accumulated in
  // float64; nullopt before the first one and in the other modes.
  std::optional<double> last_outer_step_norm;
};

// The statistics of one asynchronous update: staleness tau = updates applied by other workers
// between this worker's read (at version `read_version`) and now (`version_now`; the worker's own
// previous update completed before its read, so only others' updates count), the learning rate
// to apply, and whether the update is dropped. By `options`:
//   staleness_aware_lr  lr / tau when tau > 1 (Zhang, Gupta, Lian, Liu, IJCAI 2016, eq. 4);
//   delay_adaptive_lr   lr * min(1, W / tau), W = `num_workers`: a step size of the form
//                       min(eta, c / tau) (Koloskova, Stich, Jaggi, NeurIPS 2022, section 4;
//                       Mishchenko, Bach, Even, Woodworth, NeurIPS 2022), with c = eta * W so
//                       that the delays of W concurrent workers (tau <= W) keep the full rate;
//   max_delay R > 0     dropped (not applied) when tau > R (Ringmaster ASGD, Maranjyan, Tyurin,
//                       Richtarik, ICML 2025, Algorithm 1: a gradient older than R is ignored).
// Shared by the host and device Hogwild policies. Pure.
inline StepStats AsyncStepStats(uint64_t version_now, uint64_t read_version, float lr,
                                const SgdOptions& options, int num_workers) {
  StepStats stats;
  stats.staleness = version_now - read_version;
  stats.applied_lr = lr;
  if (options.staleness_aware_lr && stats.staleness > 1) {
    stats.applied_lr = lr / static_cast<float>(stats.staleness);
  }
  if (options.delay_adaptive_lr && stats.staleness > static_cast<uint64_t>(num_workers)) {
    stats.applied_lr = lr * (static_cast<float>(num_workers) / static_cast<float>(stats.staleness));
  }
  stats.dropped =
      options.max_delay > 0 && stats.staleness > static_cast<uint64_t>(options.max_delay);
  return stats;
}

class UpdatePolicy {
 public:
  UpdatePolicy(const UpdatePolicy&) = delete;
  UpdatePolicy& operator=(const UpdatePolicy&) = delete;
  virtual ~UpdatePolicy() = default;

  Mode mode() const { return mode_; }
  int num_workers() const { return num_workers_; }
  // P, the number of float32 parameters.
  int64_t num_params() const { return store_->size(); }
  const SgdOptions& sgd_options() const { return options_; }

  // Updates applied to the parameters so far (sync: steps; async: every worker's updates). The
  // learning-rate schedule and the checkpoints' step count follow it. Thread-safe (acquire
  // load; a worker that reads it after its own FinishStep sees at least its own update).
  uint64_t global_step() const { return store_->version(); }

  // Called once by worker `worker` on its own thread, before its first BeginStep, with the backend
  // it computes on (which must outlive its last FinishStep). GPU policies allocate the worker's
  // device-side state here and enqueue their copies and update kernels on the backend's stream.
  // The CPU policies need nothing.
  // Errors: kInvalidArgument for a worker outside [0, W) or a backend of the wrong kind;
  // allocation/CUDA errors.
  absl::Status AttachWorker(int worker, Backend* backend);

  // Copies the current parameters into `out` ([P] float32, host memory), for evaluation and the
  // final result. Async: a Hogwild snapshot (each element one that some worker wrote); sync:
  // exact when no step is between its two barriers. Thread-safe; may be called from any thread,
  // including after the workers have stopped. Errors: kInvalidArgument when out is not [P];
  // device errors of the GPU policies.
  absl::Status ReadParams(absl::Span<float> out) const;

  // Returns the parameters worker `worker` reads this step: [P] float32 in the worker's device
  // memory, valid and unchanged by this worker's peers' updates (async: a private snapshot;
  // sync: the shared array or this GPU's replica, which the step barrier keeps unchanged until
  // FinishStep) until FinishStep. GPU policies may return before the snapshot copy has run: it
  // is enqueued on the worker's stream, ahead of the worker's own ops.
  // Errors: kCancelled after Cancel(); kInvalidArgument for a worker outside [0, W);
  // kFailedPrecondition when a GPU worker did not attach.
  absl::StatusOr<DeviceSpan<const float>> BeginStep(int worker);

  // Applies (async) or contributes to (sync) the update from `grad` ([P] float32 in the
  // worker's device memory, owned by the caller and unchanged until this returns; on a GPU,
  // written by ops enqueued on the worker's stream) with learning rate `lr` (> 0). GPU async:
  // the update kernel is enqueued on the worker's stream and may still run after this returns.
  // Errors: kCancelled after Cancel() (sync: also when a peer cancels while this one waits);
  // kInvalidArgument for a worker outside [0, W) or a gradient that is not [P].
  absl::StatusOr<StepStats> FinishStep(int worker, DeviceSpan<const float> grad, float lr);

  // The same step with a sparse gradient (sync/sparse_gradient.h), for the workloads whose
  // gradient is zero outside a few coordinates (sparse linear models, matrix factorization).
  // Host-memory (CPU) policies only; a policy whose DenseOnly() names it (the GPU policies)
  // returns kUnimplemented: "<its name> takes dense gradients only; train the sparse workloads
  // on CPU workers".
  //
  // BeginSparseStep returns the parameters ([P] float32, host memory) worker `worker` reads this
  // step. Unlike BeginStep's, they may be the live shared array, which peers update while it is
  // read (async, locked, round_robin, ssp: no O(P) snapshot per step, the Hogwild! paper's
  // Algorithm 1): read its elements with cpu::SharedLoad (kernels/cpu/shared_element.h) only,
  // each a value some update wrote. The other policies return the view BeginStep does. Valid
  // until FinishSparseStep. Errors: as BeginStep's.
  absl::StatusOr<const float*> BeginSparseStep(int worker);

  // Applies (or contributes) `grad` as FinishStep applies its dense form grad.dense(): the same
  // rule, ordering and statistics. Where the rule leaves a coordinate with a zero gradient
  // unchanged, the update writes the touched coordinates only (O(touched), not O(P)): plain SGD
  // without momentum, clipping or moving statistics (SgdOptions::updates_touched_only, through
  // ApplySparseSgd of sync/sparse_gradient.h) under every CPU policy (backup: the rescaled sum
  // of the contributors'; local_sgd: on the worker's replica). Weight decay
  // (SgdOptions::weight_decay) then decays the touched coordinates only; with the other
  // optimizers the policy applies grad.dense() and weight decay reaches every parameter, as
  // FinishStep's does. `grad` is owned by the caller
  // and unchanged until this returns. Errors: as FinishStep's (a gradient of size != P).
  absl::StatusOr<StepStats> FinishSparseStep(int worker, const SparseGradient& grad, float lr);

  // The examples behind worker `worker`'s next gradient: `examples` of its own and
  // `step_examples` in the step's whole batch (the gradient's divisor, see the top of this file).
  // Policies that weight gradients by the examples actually used read it (backup); the others
  // ignore it. Call from the worker's thread before its BeginStep; without it the counts are 0.
  // Errors: kInvalidArgument for a worker outside [0, W) or counts that are negative or with
  // examples > step_examples.
  absl::Status SetStepExamples(int worker, int64_t examples, int64_t step_examples);

  // Worker `worker` has taken its last step (its data is used up; not called on errors or
  // orderly stops, which cancel instead). A policy that waits for its peers stops waiting for
  // this one (ssp: a finished worker no longer holds the others back; local_sgd: averages the
  // last, shorter round, waiting for the other workers); the others need nothing.
  // Call from the worker's thread, after its last FinishStep, at most once.
  // Errors: kCancelled after Cancel() (also while waiting); kInvalidArgument for a worker
  // outside [0, W).
  absl::Status WorkerDone(int worker);

  // Releases every worker blocked in this policy and makes later BeginStep/FinishStep calls
  // return kCancelled. Thread-safe, idempotent, never blocks.
  void Cancel();
  bool cancelled() const { return cancelled_.load(std::memory_order_acquire); }

  // Number of optimizer-state buffers of PolicyState: owners x NumStateSlots (see PolicyState),
  // e.g. 0 for SGD without momentum, W with momentum in async mode, 2 for Adam in sync mode.
  virtual int num_optimizer_buffers() const = 0;
  // Number of step counts of PolicyState: owners for adam and adamw, else 0.
  virtual int num_optimizer_steps() const { return 0; }

  // Workers blocked right now in a wait that only another worker's progress can end (ssp: on the
  // staleness bound), not counting those whose wait is already over but who have not woken yet.
  // The step boundary (trainer/checkpoint/step_boundary.h) counts them as parked: a blocked
  // worker touches no state until a running worker releases it, so when every other worker is
  // parked or blocked the state is a consistent cut. The policies without such waits, and those
  // whose cuts are taken where no worker waits (sync, backup, local_sgd: the step boundary's
  // lockstep cut), return 0. Thread-safe.
  virtual int num_blocked_workers() const { return 0; }

  // Gradients computed but not applied so far, every worker's (StepStats::dropped): backup's late
  // ones, async's too stale ones (SgdOptions::max_delay); 0 in the policies that drop none.
  // Thread-safe.
  virtual int64_t num_dropped() const { return 0; }

  // The communication so far (CommunicationStats). The counts of one exchange appear together:
  // a snapshot never holds an exchange's count without its bytes or its norm. Thread-safe (a
  // mutex taken once per exchange by the policy and once per call here).
  CommunicationStats communication() const;

  // The state to checkpoint (see PolicyState), copied to host memory. Call only while no
  // worker is inside a step (before the first BeginStep, between steps at a step boundary where
  // every worker is parked, or after the workers have stopped); GPU policies wait for their
  // devices' queued work first. Errors: device errors of the GPU policies.
  absl::StatusOr<PolicyState> SaveState() const;

  // Continues from `state` (a SaveState() of a run with the same model, mode, workers and
  // optimizer, with the workers' positions in worker_steps): parameters, global step, optimizer
  // state, the mode's own state and, where the policy paces the workers by them, their step
  // counts. Call before any worker starts. GPU workers' optimizer state is uploaded when they
  // attach. Errors: kFailedPrecondition, naming what differs, when the number of parameters, of
  // optimizer-state buffers (with or without momentum, another optimizer or worker count), of
  // step counts or of worker positions (neither 0 nor W), or the mode's state's layout does not
  // match this policy (checked before anything changes); device errors of the GPU policies.
  absl::Status RestoreState(const PolicyState& state);

 protected:
  // `store` holds the initial parameters and counts the updates (for the GPU policies, which
  // keep the parameters on the devices, only the count); it must outlive this object.
  // num_workers >= 1.
  UpdatePolicy(Mode mode, ParameterStore* store, int num_workers, SgdOptions options);

  // The hooks behind the public calls, which have checked the worker index, the sizes and the
  // cancellation flag already. Contracts as the public calls.
  virtual absl::Status DoAttachWorker(int /*worker*/, Backend* /*backend*/) {
    return absl::OkStatus();
  }
  virtual absl::Status DoReadParams(absl::Span<float> out) const = 0;
  virtual absl::StatusOr<DeviceSpan<const float>> DoBeginStep(int worker) = 0;
  virtual absl::StatusOr<StepStats> DoFinishStep(int worker, DeviceSpan<const float> grad,
                                                 float lr) = 0;
  // The sparse step's hooks (contracts as BeginSparseStep/FinishSparseStep). The defaults run
  // the dense step: DoBeginStep's view (which must be host memory) and DoFinishStep on
  // grad.dense(). A policy overrides them where it can read live or update the touched
  // coordinates only.
  virtual absl::StatusOr<const float*> DoBeginSparseStep(int worker);
  virtual absl::StatusOr<StepStats> DoFinishSparseStep(int worker, const SparseGradient& grad,
                                                       float lr);
  // The policy's name and mode in the sparse steps' refusal ("DeviceHogwild (async on GPU
  // workers)") when it takes dense gradients only (its memory is not the host's); null, the
  // default, when it takes sparse steps.
  virtual const char* DenseOnly() const { return nullptr; }
  virtual absl::Status DoWorkerDone(int /*worker*/) { return absl::OkStatus(); }
  virtual void DoSetStepExamples(int /*worker*/, int64_t /*examples*/, int64_t /*step_examples*/) {}
  // Called once by the first Cancel(), to release waiters (the sync barrier).
  virtual void DoCancel() {}
  // Optimizer-state buffers to and from host memory; sizes are checked by the caller
  // ([num_optimizer_buffers()][P]).
  virtual absl::StatusOr<std::vector<std::vector<float>>> DoSaveOptimizerState() const = 0;
  virtual absl::Status DoRestoreOptimizerState(const std::vector<std::vector<float>>& momentum) = 0;
  // The step counts ([num_optimizer_steps()]); policies without any keep the defaults.
  virtual std::vector<uint64_t> DoSaveOptimizerSteps() const { return {}; }
  virtual void DoRestoreOptimizerSteps(const std::vector<uint64_t>& /*steps*/) {}
  // PolicyState::worker_steps ([W], checked by the caller; empty: all 0), for the policies that
  // pace the workers by their step counts.
  virtual void DoRestoreWorkerSteps(const std::vector<int64_t>& /*steps*/) {}
  // PolicyState::mode_state. RestoreState calls DoCheckModeState before it changes anything
  // (kFailedPrecondition naming what does not fit this policy; the default accepts only an
  // empty state) and DoRestoreModeState last, after the optimizer state. Buffers are [P]
  // (checked by the caller).
  virtual ModeState DoSaveModeState() const { return {}; }
  virtual absl::Status DoCheckModeState(const ModeState& state) const;
  virtual void DoRestoreModeState(const ModeState& /*state*/) {}
  // Called first by SaveState: waits until every update enqueued so far has landed (the GPU
  // policies' kernels on the workers' streams). The CPU policies apply updates synchronously.
  virtual absl::Status DoWaitForUpdates() const { return absl::OkStatus(); }
  // Called by RestoreState after the store holds the restored parameters and step: the GPU
  // policies copy them to their devices. The CPU policies read the store directly.
  virtual absl::Status DoRestoreParams() { return absl::OkStatus(); }

  ParameterStore* store() const { return store_; }

  // Counts `exchanges` communication rounds in which the workers sent `bytes_sent` bytes in all
  // (CommunicationStats), and, when given, sets the last outer step's norm. Thread-safe; call
  // once per exchange, from one of its workers, before any of them returns from it (so that a
  // log row written after the exchange counts it).
  void RecordExchanges(int64_t exchanges, int64_t bytes_sent,
                       std::optional<double> outer_step_norm = std::nullopt);

 private:
  const Mode mode_;
  ParameterStore* const store_;
  const int num_workers_;
  const SgdOptions options_;
  std::atomic<bool> cancelled_{false};
  mutable std::mutex communication_mu_;
  CommunicationStats communication_;  // guarded by communication_mu_; bytes_per_worker unset
};

}  // namespace hogwild

#endif  // HOGWILD_SYNC_UPDATE_POLICY_H_

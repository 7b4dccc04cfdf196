#include "sync/update_policy.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "core/logging.h"
#include "core/status_macros.h"

namespace hogwild {
namespace {

absl::Status CheckWorker(const char* call, int worker, int num_workers) {
  if (worker >= 0 && worker < num_workers) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrFormat("UpdatePolicy::%s: worker %d is outside [0, %d)", call, worker, num_workers));
}

absl::Status CheckSize(const char* call, const char* what, int64_t size, int64_t num_params) {
  if (size == num_params) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrFormat("UpdatePolicy::%s: %s has %d elements, the model %d parameters", call, what,
                      size, num_params));
}

absl::Status Cancelled() { return absl::CancelledError("training was cancelled"); }

absl::Status DenseGradientsOnly(const char* policy) {
  return absl::UnimplementedError(absl::StrFormat(
      "%s takes dense gradients only; train the sparse workloads on CPU workers", policy));
}

}  // namespace

UpdatePolicy::UpdatePolicy(Mode mode, ParameterStore* store, int num_workers, SgdOptions options)
    : mode_(mode), store_(store), num_workers_(num_workers), options_(options) {
  HOGWILD_CHECK(store != nullptr, "UpdatePolicy: no parameter store");
  HOGWILD_CHECK(num_workers >= 1, "UpdatePolicy: num_workers must be >= 1");
}

CommunicationStats UpdatePolicy::communication() const {
  std::lock_guard<std::mutex> lock(communication_mu_);
  CommunicationStats stats = communication_;
  stats.bytes_per_worker = static_cast<double>(stats.bytes_sent) / num_workers_;
  return stats;
}

void UpdatePolicy::RecordExchanges(int64_t exchanges, int64_t bytes_sent,
                                   std::optional<double> outer_step_norm) {
  std::lock_guard<std::mutex> lock(communication_mu_);
  communication_.exchanges += exchanges;
  communication_.bytes_sent += bytes_sent;
  if (outer_step_norm) communication_.last_outer_step_norm = outer_step_norm;
}

absl::Status UpdatePolicy::AttachWorker(int worker, Backend* backend) {
  HOGWILD_RETURN_IF_ERROR(CheckWorker("AttachWorker", worker, num_workers_));
  return DoAttachWorker(worker, backend);
}

absl::Status UpdatePolicy::ReadParams(absl::Span<float> out) const {
  HOGWILD_RETURN_IF_ERROR(
      CheckSize("ReadParams", "the output", static_cast<int64_t>(out.size()), num_params()));
  return DoReadParams(out);
}

absl::StatusOr<DeviceSpan<const float>> UpdatePolicy::BeginStep(int worker) {
  if (cancelled()) return Cancelled();
  HOGWILD_RETURN_IF_ERROR(CheckWorker("BeginStep", worker, num_workers_));
  return DoBeginStep(worker);
}

absl::StatusOr<StepStats> UpdatePolicy::FinishStep(int worker, DeviceSpan<const float> grad,
                                                   float lr) {
  if (cancelled()) return Cancelled();
  HOGWILD_RETURN_IF_ERROR(CheckWorker("FinishStep", worker, num_workers_));
  HOGWILD_RETURN_IF_ERROR(CheckSize("FinishStep", "the gradient", grad.size(), num_params()));
  return DoFinishStep(worker, grad, lr);
}

absl::StatusOr<const float*> UpdatePolicy::BeginSparseStep(int worker) {
  if (cancelled()) return Cancelled();
  HOGWILD_RETURN_IF_ERROR(CheckWorker("BeginSparseStep", worker, num_workers_));
  if (const char* policy = DenseOnly()) return DenseGradientsOnly(policy);
  return DoBeginSparseStep(worker);
}

absl::StatusOr<StepStats> UpdatePolicy::FinishSparseStep(int worker, const SparseGradient& grad,
                                                         float lr) {
  if (cancelled()) return Cancelled();
  HOGWILD_RETURN_IF_ERROR(CheckWorker("FinishSparseStep", worker, num_workers_));
  HOGWILD_RETURN_IF_ERROR(CheckSize("FinishSparseStep", "the gradient", grad.size(), num_params()));
  if (const char* policy = DenseOnly()) return DenseGradientsOnly(policy);
  return DoFinishSparseStep(worker, grad, lr);
}

absl::StatusOr<const float*> UpdatePolicy::DoBeginSparseStep(int worker) {
  HOGWILD_ASSIGN_OR_RETURN(DeviceSpan<const float> params, DoBeginStep(worker));
  return params.data();
}

absl::StatusOr<StepStats> UpdatePolicy::DoFinishSparseStep(int worker, const SparseGradient& grad,
                                                           float lr) {
  const absl::Span<const float> dense = grad.dense();
  return DoFinishStep(worker, DeviceSpan<const float>(dense.data(), dense.size()), lr);
}

absl::Status UpdatePolicy::SetStepExamples(int worker, int64_t examples, int64_t step_examples) {
  HOGWILD_RETURN_IF_ERROR(CheckWorker("SetStepExamples", worker, num_workers_));
  if (examples < 0 || examples > step_examples) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "UpdatePolicy::SetStepExamples: %d examples of a step of %d; they must be in [0, %d]",
        examples, step_examples, std::max<int64_t>(0, step_examples)));
  }
  DoSetStepExamples(worker, examples, step_examples);
  return absl::OkStatus();
}

absl::Status UpdatePolicy::WorkerDone(int worker) {
  if (cancelled()) return Cancelled();
  HOGWILD_RETURN_IF_ERROR(CheckWorker("WorkerDone", worker, num_workers_));
  return DoWorkerDone(worker);
}

void UpdatePolicy::Cancel() {
  if (!cancelled_.exchange(true, std::memory_order_acq_rel)) DoCancel();
}

absl::StatusOr<PolicyState> UpdatePolicy::SaveState() const {
  HOGWILD_RETURN_IF_ERROR(DoWaitForUpdates());
  PolicyState state;
  state.params.resize(static_cast<size_t>(num_params()));
  HOGWILD_RETURN_IF_ERROR(ReadParams(absl::MakeSpan(state.params)));
  state.global_step = global_step();
  HOGWILD_ASSIGN_OR_RETURN(state.optimizer_state, DoSaveOptimizerState());
  state.optimizer_steps = DoSaveOptimizerSteps();
  state.mode_state = DoSaveModeState();
  return state;
}

absl::Status UpdatePolicy::DoCheckModeState(const ModeState& state) const {
  if (state.empty()) return absl::OkStatus();
  return absl::FailedPreconditionError(
      absl::StrFormat("cannot resume: the checkpoint holds state of a mode's own (%d buffers, %d "
                      "counters) that %s mode does not keep",
                      state.buffers.size(), state.counters.size(), ModeName(mode_)));
}

absl::Status UpdatePolicy::RestoreState(const PolicyState& state) {
  if (static_cast<int64_t>(state.params.size()) != num_params()) {
    return absl::FailedPreconditionError(
        absl::StrFormat("cannot resume: the checkpoint has %d parameters, this model %d",
                        state.params.size(), num_params()));
  }
  const int want = num_optimizer_buffers();
  const int have = static_cast<int>(state.optimizer_state.size());
  if ((want == 0) != (have == 0)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "cannot resume: the optimizer state differs: the checkpoint was written %s, this run "
        "uses %s; resume with the checkpoint's --optimizer and --momentum",
        have > 0 ? "with optimizer state (momentum or moments)" : "without optimizer state",
        want > 0 ? "some" : "none"));
  }
  if (want != have) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "cannot resume: the checkpoint has %d optimizer-state buffers, this run %d: it was "
        "written with another --optimizer_state (per_worker keeps a state per worker, shared "
        "one for all) or another worker count; resume with the checkpoint's --optimizer_state "
        "and --workers",
        have, want));
  }
  if (static_cast<int>(state.optimizer_steps.size()) != num_optimizer_steps()) {
    return absl::FailedPreconditionError(
        absl::StrFormat("cannot resume: the checkpoint has %d optimizer step counts, this run %d",
                        state.optimizer_steps.size(), num_optimizer_steps()));
  }
  if (!state.worker_steps.empty() && static_cast<int>(state.worker_steps.size()) != num_workers_) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "cannot resume: the checkpoint has the positions of %d workers, this run %d",
        state.worker_steps.size(), num_workers_));
  }
  for (const std::vector<float>& buffer : state.optimizer_state) {
    if (static_cast<int64_t>(buffer.size()) != num_params()) {
      return absl::FailedPreconditionError(
          absl::StrFormat("cannot resume: an optimizer-state buffer of the checkpoint has %d "
                          "elements, the model %d "
                          "parameters",
                          buffer.size(), num_params()));
    }
  }
  for (const std::vector<float>& buffer : state.mode_state.buffers) {
    if (static_cast<int64_t>(buffer.size()) != num_params()) {
      return absl::FailedPreconditionError(
          absl::StrFormat("cannot resume: a buffer of the mode's state in the checkpoint has %d "
                          "elements, the model %d parameters",
                          buffer.size(), num_params()));
    }
  }
  HOGWILD_RETURN_IF_ERROR(DoCheckModeState(state.mode_state));
  std::copy(state.params.begin(), state.params.end(), store_->unsafe_values().begin());
  store_->RestoreVersion(state.global_step);
  HOGWILD_RETURN_IF_ERROR(DoRestoreParams());
  DoRestoreOptimizerSteps(state.optimizer_steps);
  DoRestoreWorkerSteps(state.worker_steps);
  HOGWILD_RETURN_IF_ERROR(DoRestoreOptimizerState(state.optimizer_state));
  DoRestoreModeState(state.mode_state);
  return absl::OkStatus();
}

}  // namespace hogwild

#include "sim/sim_context.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/status_macros.h"
#include "trainer/finite_check.h"

namespace hogwild {
float SimContext::LrNow() const { return trainer().lr.At(metrics->steps()); }

double SimContext::ExchangeS(double fraction, bool all_reduce) const {
  if (options->bandwidth_bytes_per_s == 0.0) return options->allreduce_time_s * fraction;
  const double bytes = 4.0 * static_cast<double>(num_params()) * fraction;
  const double w = trainer().num_workers;
  const double wire = all_reduce ? 2.0 * (w - 1.0) / w * bytes : 2.0 * bytes;
  return options->latency_s + wire / options->bandwidth_bytes_per_s;
}

absl::StatusOr<double> SimContext::Gradient(const std::vector<int64_t>& rows, int64_t denominator,
                                            const float* at, absl::Span<float> grad) {
  HOGWILD_ASSIGN_OR_RETURN(
      double loss_sum,
      gradient->Gradient(absl::MakeConstSpan(at, static_cast<size_t>(num_params())),
                         WorkerBatch{.rows = rows, .denominator = denominator}, grad));
  const int64_t global_step = metrics->steps();
  const float lr_now = LrNow();
  if (!std::isfinite(loss_sum)) {
    return DivergedError(absl::StrCat("the loss is ", FormatNonFinite(loss_sum)), global_step,
                         lr_now);
  }
  HOGWILD_RETURN_IF_ERROR(CheckFinite(grad, "gradient element", global_step, lr_now));
  return loss_sum;
}

absl::Status SimContext::MaybeEvaluate(double time_s) {
  if (!workload->has_test_set() || eval_every_steps <= 0 || metrics->steps() < next_eval) {
    return absl::OkStatus();
  }
  while (next_eval <= metrics->steps()) next_eval += eval_every_steps;
  return Evaluate(time_s);
}

absl::Status SimContext::Evaluate(double time_s) {
  HOGWILD_RETURN_IF_ERROR(ReadPolicyParams());
  HOGWILD_ASSIGN_OR_RETURN(EvalResult eval, workload->Evaluate(params, Workload::Split::kTest));
  std::optional<EvalResult> ema_eval;
  if (ema != nullptr) {
    ema_params.resize(params.size());
    ema->Read(absl::MakeSpan(ema_params));
    HOGWILD_ASSIGN_OR_RETURN(ema_eval, workload->Evaluate(ema_params, Workload::Split::kTest));
  }
  return metrics->RecordEval(eval, LrNow(), time_s, ema_eval);
}

absl::Status SimContext::ReadPolicyParams() {
  if (policy == nullptr) return absl::OkStatus();
  return policy->ReadParams(absl::MakeSpan(params));
}

absl::Status SimContext::UpdateEma() {
  if (ema == nullptr) return absl::OkStatus();
  HOGWILD_RETURN_IF_ERROR(ReadPolicyParams());
  ema->Update(params, static_cast<uint64_t>(metrics->steps()));
  return absl::OkStatus();
}

ShardedBatches::ShardedBatches(const SimContext* ctx)
    : ctx_(ctx), positions_(static_cast<size_t>(ctx->trainer().num_workers)) {}

const std::pair<std::vector<int64_t>, int64_t>* ShardedBatches::Next(int w) {
  Position& p = positions_[w];
  while (p.next >= p.batches.size()) {
    if (++p.epoch >= ctx_->trainer().epochs) return nullptr;
    auto it = permutations_.find(p.epoch);
    if (it == permutations_.end()) {
      it = permutations_.emplace(p.epoch, std::make_pair(ctx_->plan->EpochPermutation(p.epoch), 0))
               .first;
    }
    p.batches = ctx_->plan->EpochBatches(w, it->second.first);
    p.next = 0;
    if (++it->second.second == ctx_->trainer().num_workers) permutations_.erase(it);
  }
  return &p.batches[p.next++];
}

const std::pair<std::vector<int64_t>, int64_t>& SyncSplitBatches::Part(int w, int64_t step) {
  const int64_t steps_per_epoch = ctx_->plan->StepsPerEpoch(0);
  const int64_t epoch = step / steps_per_epoch;
  auto it = epochs_.find(epoch);
  if (it == epochs_.end()) {
    const std::vector<int64_t> permutation = ctx_->plan->EpochPermutation(epoch);
    std::vector<EpochBatches> parts;
    for (int v = 0; v < ctx_->trainer().num_workers; ++v) {
      parts.push_back(ctx_->plan->EpochBatches(v, permutation));
    }
    it = epochs_.emplace(epoch, std::move(parts)).first;
  }
  return it->second[static_cast<size_t>(w)][static_cast<size_t>(step % steps_per_epoch)];
}

void SyncSplitBatches::Release(int64_t epoch) {
  epochs_.erase(epochs_.begin(), epochs_.lower_bound(epoch));
}

}  // namespace hogwild

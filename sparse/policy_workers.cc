#include "sparse/policy_workers.h"

#include <limits>
#include <mutex>
#include <new>
#include <thread>

#include "absl/strings/str_format.h"
#include "trainer/trainer_options.h"

namespace hogwild::sparse {

absl::Status ValidateSparseBatch(Mode mode, int64_t batch_size, int64_t num_examples,
                                 int num_workers, const char* what) {
  if (batch_size < 1 || batch_size > num_examples) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--batch_size=%d is out of range [1, %d] (the training set's %s)",
                        batch_size, num_examples, what));
  }
  if (mode == Mode::kCyclades) {
    if (batch_size < num_workers) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--batch_size=%d is out of range [%d, %d] in cyclades mode: it is the updates each "
          "round samples and splits into conflict-free components over the workers (at least "
          "one per worker; thousands keep the rounds' barriers cheap)",
          batch_size, num_workers, num_examples));
    }
    return absl::OkStatus();
  }
  if (mode == Mode::kBuckwild && batch_size != 1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--batch_size=%d: buckwild mode steps one example at a time (the Hogwild! paper's "
        "Algorithm 1 in fixed point); leave --batch_size out or set it to 1",
        batch_size));
  }
  // Outside the global-batch modes the batch is per worker, drawn from the worker's shard: a
  // larger one would be cut to the shard without a word (as //trainer:train refuses it).
  if (const int64_t largest_shard = (num_examples + num_workers - 1) / num_workers;
      !SplitsGlobalBatch(mode) && batch_size > largest_shard) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--batch_size=%d is larger than a worker's share of the training set (%d %s = %d "
        "%s / %d workers); in %s mode it is the batch per worker, so it must be in [1, %d]",
        batch_size, largest_shard, what, num_examples, what, num_workers, ModeName(mode),
        largest_shard));
  }
  if (mode == Mode::kLocalSgd && batch_size < num_workers) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--batch_size=%d is out of range [%d, %d] in local_sgd mode (at least one example per "
        "worker: the global batch is split into the workers' local batches)",
        batch_size, num_workers, num_examples));
  }
  return absl::OkStatus();
}

absl::Status ValidateSparseModeOptions(Mode mode, const ModeOptions& o, int num_workers) {
  const ModeOptions defaults;
  struct Option {
    const char* flag;
    int64_t value, lo, hi, default_value;
    Mode reader;
  };
  for (const Option& option : {
           Option{"staleness_bound", o.staleness_bound, 0, kMaxStalenessBound,
                  defaults.staleness_bound, Mode::kSsp},
           Option{"backup_workers", o.backup_workers, 0, num_workers - 1, defaults.backup_workers,
                  Mode::kBackup},
           Option{"average_every", o.average_every, 1, kMaxAverageEvery, defaults.average_every,
                  Mode::kLocalSgd},
           Option{"delayed_nesterov", o.delayed_nesterov, 1, kMaxDelayedNesterov,
                  defaults.delayed_nesterov, Mode::kAsyncLocalSgd},
       }) {
    // average_every is read by both modes with local rounds.
    const bool reads =
        option.reader == Mode::kLocalSgd ? HasLocalRounds(mode) : mode == option.reader;
    if (option.value != option.default_value && !reads) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--%s=%d has no effect in %s mode; it is for %s mode (--mode=%s)", option.flag,
          option.value, ModeName(mode), ModeName(option.reader), ModeName(option.reader)));
    }
    if (option.value < option.lo || option.value > option.hi) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--%s=%d is out of range [%d, %d]%s", option.flag, option.value, option.lo, option.hi,
          option.reader == Mode::kBackup ? " (fewer than the workers)" : ""));
    }
  }
  if (!(o.outer == defaults.outer) && !HasLocalRounds(mode)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the outer optimizer (--outer_lr, --outer_momentum, --outer_nesterov) has no effect in %s "
        "mode; it is for local_sgd and async_local_sgd modes (--mode=local_sgd)",
        ModeName(mode)));
  }
  if (o.dynamic_local_updates && mode != Mode::kAsyncLocalSgd) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--dynamic_local_updates has no effect in %s mode; it is for async_local_sgd mode "
        "(--mode=async_local_sgd)",
        ModeName(mode)));
  }
  if ((o.fixed_point_bits != defaults.fixed_point_bits ||
       o.fixed_point_range != defaults.fixed_point_range) &&
      mode != Mode::kBuckwild) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the fixed-point model (--fixed_point_bits, --fixed_point_range) has no effect in %s "
        "mode; it is for buckwild mode (--mode=buckwild)",
        ModeName(mode)));
  }
  HOGWILD_RETURN_IF_ERROR(ValidateFixedPointFormat(
      FixedPointFormat{.bits = o.fixed_point_bits, .range = o.fixed_point_range}));
  HOGWILD_RETURN_IF_ERROR(CheckOuterOptimizer(o.outer, "--outer_"));
  HOGWILD_RETURN_IF_ERROR(
      CheckDelayedNesterov(o.delayed_nesterov, o.outer, "--delayed_nesterov", "--outer_momentum"));
  if (!(o.streaming == defaults.streaming) && mode != Mode::kLocalSgd) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "Streaming DiLoCo's fragments (--fragments, --overlap_steps, --mix_alpha) have no effect "
        "in %s mode; they are for local_sgd mode (--mode=local_sgd)",
        ModeName(mode)));
  }
  return CheckStreamingOptions(o.streaming, o.average_every, /*num_params=*/0, "--");
}

std::string ModeOptionsLayer(Mode mode, const ModeOptions& o) {
  switch (mode) {
    case Mode::kSsp:
      return absl::StrFormat("staleness_bound=%d", o.staleness_bound);
    case Mode::kBackup:
      return absl::StrFormat("backup_workers=%d", o.backup_workers);
    case Mode::kLocalSgd:
      // The outer optimizer only when it is not plain averaging: earlier checkpoints stay valid.
      return absl::StrFormat("average_every=%d", o.average_every) +
             (o.outer == OuterOptimizer{}
                  ? ""
                  : absl::StrFormat(" outer_lr=%g outer_momentum=%g outer_nesterov=%d", o.outer.lr,
                                    o.outer.momentum, o.outer.nesterov ? 1 : 0)) +
             (o.streaming.is_default()
                  ? ""
                  : absl::StrFormat(" fragments=%d overlap_steps=%d mix_alpha=%g",
                                    o.streaming.fragments, o.streaming.overlap_steps,
                                    o.streaming.mix_alpha));
    case Mode::kAsyncLocalSgd:
      return absl::StrFormat(
          "average_every=%d outer_lr=%g outer_momentum=%g outer_nesterov=%d "
          "delayed_nesterov=%d dynamic_local_updates=%d",
          o.average_every, o.outer.lr, o.outer.momentum, o.outer.nesterov ? 1 : 0,
          o.delayed_nesterov, o.dynamic_local_updates ? 1 : 0);
    case Mode::kBuckwild:
      return absl::StrFormat("fixed_point_bits=%d fixed_point_range=%g", o.fixed_point_bits,
                             o.fixed_point_range);
    default:
      return "";
  }
}

int64_t SparseEpochUpdates(const SparseWorkerPlan& plan, int64_t n) {
  if (plan.mode == Mode::kCyclades || plan.mode == Mode::kBuckwild) return n;  // one per example
  const int64_t batch = plan.batch_size;
  if (SplitsGlobalBatch(plan.mode)) return (n + batch - 1) / batch;
  int64_t updates = 0;
  for (int w = 0; w < plan.num_workers; ++w) {
    const int64_t shard = n * (w + 1) / plan.num_workers - n * w / plan.num_workers;
    updates += (shard + batch - 1) / batch;
  }
  return updates;
}

absl::StatusOr<std::vector<std::unique_ptr<SparseGradient>>> AllocateSparseGradients(
    const SparseWorkerPlan& plan, int64_t num_params) {
  std::vector<std::unique_ptr<SparseGradient>> gradients;
  if (UsesFusedPath(plan)) return gradients;
  if (num_params < 1 || num_params > std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%d parameters: a sparse gradient holds [1, 2^31 - 1] (int32 coordinates)", num_params));
  }
  try {
    for (int w = 0; w < plan.num_workers; ++w) {
      gradients.push_back(std::make_unique<SparseGradient>(num_params));
    }
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("cannot allocate %d sparse gradients of %d parameters (%d bytes each)",
                        plan.num_workers, num_params, 5 * num_params));
  }
  return gradients;
}

namespace internal {

absl::Status RunWorkerThreads(int num_workers, UpdatePolicy* policy,
                              const std::function<absl::Status(int)>& body) {
  std::mutex mu;
  absl::Status first;  // guarded by mu
  {
    std::vector<std::jthread> threads;
    threads.reserve(num_workers);
    for (int w = 0; w < num_workers; ++w) {
      threads.emplace_back([&, w] {
        absl::Status status = body(w);
        if (status.ok()) return;
        {
          std::lock_guard<std::mutex> lock(mu);
          // The first error is the cause; the kCancelled of the workers it released follow it.
          if (first.ok()) first = std::move(status);
        }
        if (policy != nullptr) policy->Cancel();
      });
    }
  }  // joined: every worker's writes are ordered before the caller's reads
  return first;
}

absl::StatusOr<std::unique_ptr<UpdatePolicy>> CreateSparsePolicy(const SparseWorkerPlan& plan,
                                                                 ParameterStore* store) {
  SgdOptions sgd;
  sgd.weight_decay = plan.weight_decay;
  return CreateUpdatePolicy(plan.mode, store, PolicyPlacement{.num_cpu_workers = plan.num_workers},
                            sgd, plan.mode_options);
}

}  // namespace internal
}  // namespace hogwild::sparse

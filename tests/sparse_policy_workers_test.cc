// The sparse trainers' worker loop (sparse/policy_workers.h): a worker's error cancels the
// policy, so that the workers waiting in it for the failed one return, and the error (not the
// kCancelled of the released workers) reaches the caller; the split of the data over the workers.
#include <atomic>
#include <memory>
#include <vector>

#include "gtest/gtest.h"
#include "sparse/policy_workers.h"
#include "sync/parameter_store.h"
#include "sync/sparse_gradient.h"

namespace hogwild::sparse {
namespace {

TEST(SparsePolicyWorkers, AWorkersErrorReleasesThePeersWaitingForItAndIsReturned) {
  for (Mode mode : {Mode::kSync, Mode::kBackup, Mode::kLocalSgd, Mode::kSsp, Mode::kRoundRobin}) {
    SCOPED_TRACE(ModeName(mode));
    std::unique_ptr<ParameterStore> store = *ParameterStore::Create(8);
    // ssp with bound 0: the healthy workers' second step waits for the failed worker's first.
    absl::StatusOr<std::unique_ptr<UpdatePolicy>> policy =
        internal::CreateSparsePolicy(SparseWorkerPlan{.mode = mode,
                                                      .num_workers = 3,
                                                      .batch_size = 3,
                                                      .mode_options = {.staleness_bound = 0}},
                                     store.get());
    ASSERT_TRUE(policy.ok()) << policy.status();
    std::vector<SparseGradient> grads(3, SparseGradient(8));
    std::atomic<int> cancelled{0};
    const absl::Status status =
        internal::RunWorkerThreads(3, policy->get(), [&](int w) -> absl::Status {
          if (w == 0) return absl::DataLossError("worker 0 failed");
          // Steps until the policy is cancelled: each waits for worker 0 (the barrier, the
          // staleness bound, the turn) sooner or later.
          for (int step = 0;; ++step) {
            absl::Status s = (*policy)->SetStepExamples(w, 1, 3);
            absl::StatusOr<const float*> params = (*policy)->BeginSparseStep(w);
            if (!params.ok()) s = params.status();
            if (s.ok()) {
              grads[w].Clear();
              grads[w].Accumulate(w, 1.0f);
              s = (*policy)->FinishSparseStep(w, grads[w], 0.1f).status();
            }
            if (!s.ok()) {
              if (absl::IsCancelled(s)) ++cancelled;
              return s;
            }
          }
        });
    EXPECT_EQ(status, absl::DataLossError("worker 0 failed"));
    EXPECT_EQ(cancelled.load(), 2);
  }
}

TEST(SparsePolicyWorkers, EveryExampleIsInExactlyOneStepOfOneWorker) {
  for (Mode mode : kPolicyModes) {
    for (int workers : {1, 3, 7}) {
      for (int64_t batch : {1, 4, 7}) {
        const int64_t n = 23;
        const SparseWorkerPlan plan{.mode = mode, .num_workers = workers, .batch_size = batch};
        std::vector<int> seen(n, 0);
        int64_t steps = 0;
        for (int w = 0; w < workers; ++w) {
          ASSERT_TRUE(internal::ForEachWorkerStep(
                          plan, n, w,
                          [&](int64_t lo, int64_t hi, int64_t step_examples, float scale) {
                            for (int64_t q = lo; q < hi; ++q) ++seen[q];
                            EXPECT_LE(hi - lo, step_examples);
                            EXPECT_GT(scale, 0.0f);
                            ++steps;
                            return absl::OkStatus();
                          })
                          .ok());
        }
        EXPECT_EQ(seen, std::vector<int>(n, 1)) << ModeName(mode) << " " << workers << " " << batch;
        // A global batch is one update, whatever its parts.
        EXPECT_EQ(SplitsGlobalBatch(mode) ? steps / workers : steps, SparseEpochUpdates(plan, n));
      }
    }
  }
}

}  // namespace
}  // namespace hogwild::sparse

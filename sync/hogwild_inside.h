// The base of the policies that run Hogwild's updates (sync/hogwild.h) inside an ordering of
// their own (ssp: the staleness bound, sync/stale_synchronous.h; locked: one lock over each step,
// sync/locked.h; round_robin: updates in turn, sync/round_robin.h): it owns the Hogwild object and
// forwards to it what the ordering does not change: the parameter reads, the optimizer state and
// its checkpoint form (as Hogwild's, so a PolicyState moves between them unchanged).
//
// Thread-safety: as Hogwild's.
#ifndef HOGWILD_SYNC_HOGWILD_INSIDE_H_
#define HOGWILD_SYNC_HOGWILD_INSIDE_H_

#include <cstdint>
#include <vector>

#include "sync/hogwild.h"
#include "sync/parameter_store.h"
#include "sync/update_policy.h"

namespace hogwild {

class HogwildInside : public UpdatePolicy {
 public:
  // As Hogwild's: owners (W per-worker, 1 shared) x state slots; owners with adam and adamw.
  int num_optimizer_buffers() const override;
  int num_optimizer_steps() const override;

 protected:
  // `store` must outlive this object. num_workers >= 1.
  HogwildInside(Mode mode, ParameterStore* store, int num_workers, SgdOptions options,
                Hogwild::ReadPoint read_point);

  absl::Status DoReadParams(absl::Span<float> out) const override;
  // Cancels the inner Hogwild too; a derived policy releases its own waiters, then calls this.
  void DoCancel() override;
  absl::StatusOr<std::vector<std::vector<float>>> DoSaveOptimizerState() const override;
  absl::Status DoRestoreOptimizerState(const std::vector<std::vector<float>>& buffers) override;
  std::vector<uint64_t> DoSaveOptimizerSteps() const override;
  void DoRestoreOptimizerSteps(const std::vector<uint64_t>& steps) override;

  Hogwild& updates() { return updates_; }
  const Hogwild& updates() const { return updates_; }

 private:
  Hogwild updates_;
  std::vector<uint64_t> restored_steps_;  // from DoRestoreOptimizerSteps to DoRestoreOptimizerState
};

}  // namespace hogwild

#endif  // HOGWILD_SYNC_HOGWILD_INSIDE_H_

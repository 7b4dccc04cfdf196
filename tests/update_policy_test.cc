// The UpdatePolicy seam, for every CPU policy through the factory (sync/policy_factory.h):
// - the checks that live once in the base class: worker index, gradient and output sizes,
//   cancellation;
// - checkpoint state: SaveState() then RestoreState() into a fresh policy continues exactly
//   (bitwise) like the original, with and without momentum; mismatched states are refused
//   naming what differs.
// (GPU policies: tests/gpu_trainer_test.cc resumes GPU runs through the trainer.)
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "sync/parameter_store.h"
#include "sync/policy_factory.h"
#include "sync/update_policy.h"

namespace hogwild {
namespace {

constexpr int64_t kParams = 37;

struct Case {
  Mode mode;
  int workers;
  float momentum;
};

std::string Name(const ::testing::TestParamInfo<Case>& info) {
  return absl::StrFormat("%s_W%d_%s", ModeName(info.param.mode), info.param.workers,
                         info.param.momentum != 0.0f ? "momentum" : "plain");
}

std::vector<float> Gradient(int step, int worker) {
  std::mt19937 rng(static_cast<uint32_t>(1000 * step + worker));
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> g(kParams);
  for (float& x : g) x = u(rng);
  return g;
}

// A policy over its own store, with the store initialized to a fixed ramp.
struct PolicyRun {
  std::unique_ptr<ParameterStore> store;
  std::unique_ptr<UpdatePolicy> policy;
};

PolicyRun Make(const Case& c) {
  PolicyRun r;
  r.store = std::make_unique<ParameterStore>(kParams);
  for (int64_t i = 0; i < kParams; ++i) r.store->unsafe_values()[i] = 0.01f * static_cast<float>(i);
  PolicyPlacement placement{.num_cpu_workers = c.workers};
  SgdOptions sgd{.momentum = c.momentum, .weight_decay = 1e-3f};
  auto policy = CreateUpdatePolicy(c.mode, r.store.get(), placement, sgd);
  EXPECT_TRUE(policy.ok()) << policy.status();
  r.policy = std::move(*policy);
  return r;
}

// Steps [first, last) with every worker on its own thread (sync needs all of them at the
// barrier); async workers take turns so the result does not depend on the interleaving.
void Steps(UpdatePolicy& policy, int first, int last) {
  const int workers = policy.num_workers();
  if (policy.mode() == Mode::kAsync) {
    for (int step = first; step < last; ++step) {
      for (int w = 0; w < workers; ++w) {
        ASSERT_TRUE(policy.BeginStep(w).ok());
        ASSERT_TRUE(policy.FinishStep(w, Gradient(step, w), 0.1f).ok());
      }
    }
    return;
  }
  std::vector<std::thread> threads;
  std::vector<absl::Status> errors(workers);
  for (int w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      for (int step = first; step < last && errors[w].ok(); ++step) {
        const std::vector<float> g = Gradient(step, w);
        auto begin = policy.BeginStep(w);
        if (!begin.ok()) errors[w] = begin.status();
        auto finish = policy.FinishStep(w, g, 0.1f);
        if (!finish.ok()) errors[w] = finish.status();
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const absl::Status& e : errors) ASSERT_TRUE(e.ok()) << e;
}

std::vector<float> Params(const UpdatePolicy& policy) {
  std::vector<float> out(kParams);
  EXPECT_TRUE(policy.ReadParams(absl::MakeSpan(out)).ok());
  return out;
}

class PolicySeam : public ::testing::TestWithParam<Case> {};

TEST_P(PolicySeam, SaveThenRestoreContinuesBitwiseLikeTheOriginal) {
  const Case c = GetParam();
  PolicyRun original = Make(c);
  Steps(*original.policy, 0, 5);
  auto state = original.policy->SaveState();
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(state->global_step, original.policy->global_step());
  EXPECT_EQ(state->optimizer_state.size(),
            static_cast<size_t>(original.policy->num_optimizer_buffers()));

  PolicyRun resumed = Make(c);
  ASSERT_TRUE(resumed.policy->RestoreState(*state).ok());
  EXPECT_EQ(resumed.policy->global_step(), state->global_step);
  Steps(*original.policy, 5, 9);
  Steps(*resumed.policy, 5, 9);
  EXPECT_EQ(Params(*resumed.policy), Params(*original.policy));
  EXPECT_EQ(resumed.policy->global_step(), original.policy->global_step());

  // Not vacuous: with momentum, a restore that drops it diverges from the original.
  if (c.momentum != 0.0f) {
    PolicyRun no_momentum = Make(c);
    PolicyState zeroed = *state;
    for (std::vector<float>& m : zeroed.optimizer_state) m.assign(m.size(), 0.0f);
    ASSERT_TRUE(no_momentum.policy->RestoreState(zeroed).ok());
    Steps(*no_momentum.policy, 5, 9);
    EXPECT_NE(Params(*no_momentum.policy), Params(*original.policy));
  }
}

TEST_P(PolicySeam, MismatchedStatesAreRefusedNamingWhatDiffers) {
  const Case c = GetParam();
  PolicyRun run = Make(c);
  auto state = run.policy->SaveState();
  ASSERT_TRUE(state.ok());

  PolicyState wrong_size = *state;
  wrong_size.params.pop_back();
  absl::Status s = run.policy->RestoreState(wrong_size);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("parameters"), std::string::npos) << s;

  PolicyState flipped = *state;
  if (c.momentum != 0.0f) {
    flipped.optimizer_state.clear();
  } else {
    flipped.optimizer_state.assign(1, std::vector<float>(kParams, 0.0f));
  }
  s = run.policy->RestoreState(flipped);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("momentum"), std::string::npos) << s;
}

TEST_P(PolicySeam, EveryPolicyChecksItsArgumentsTheSameWay) {
  const Case c = GetParam();
  PolicyRun run = Make(c);
  UpdatePolicy& p = *run.policy;
  EXPECT_EQ(p.BeginStep(c.workers).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(p.BeginStep(-1).status().code(), absl::StatusCode::kInvalidArgument);
  const std::vector<float> short_grad(kParams - 1, 0.0f);
  const absl::Status s = p.FinishStep(0, short_grad, 0.1f).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find(absl::StrFormat("%d", kParams - 1)), std::string::npos) << s;
  std::vector<float> short_out(kParams + 1);
  EXPECT_EQ(p.ReadParams(absl::MakeSpan(short_out)).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(p.AttachWorker(c.workers, nullptr).code(), absl::StatusCode::kInvalidArgument);
  p.Cancel();
  p.Cancel();  // idempotent
  EXPECT_TRUE(p.cancelled());
  EXPECT_EQ(p.BeginStep(0).status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(p.FinishStep(0, Gradient(0, 0), 0.1f).status().code(), absl::StatusCode::kCancelled);
}

INSTANTIATE_TEST_SUITE_P(CpuPolicies, PolicySeam,
                         ::testing::Values(Case{Mode::kAsync, 1, 0.0f}, Case{Mode::kAsync, 3, 0.9f},
                                           Case{Mode::kSync, 1, 0.0f}, Case{Mode::kSync, 3, 0.9f},
                                           Case{Mode::kAsync, 2, 0.0f}, Case{Mode::kSync, 2, 0.0f}),
                         Name);

TEST(ParameterStore, CreateRefusesAnImpossibleSizeWithTheBytesAsked) {
  // 2^60 floats: no allocator can satisfy it, whatever the overcommit policy.
  auto store = ParameterStore::Create(int64_t{1} << 60);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(store.status().message().find("bytes"), std::string::npos) << store.status();
  EXPECT_EQ(ParameterStore::Create(-1).status().code(), absl::StatusCode::kInvalidArgument);
  auto ok = ParameterStore::Create(5);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ((*ok)->size(), 5);
}

}  // namespace
}  // namespace hogwild

// The optimizers inside the CPU update policies: every policy applies every optimizer's rule
// (bitwise the functor with one worker), saves and restores its state (moments and step counts)
// so that a restored policy continues bitwise, and Hogwild's two kinds of optimizer state
// (sync/hogwild.h): per worker, each worker's own step count; shared, one step count that equals
// the number of updates applied, concurrent workers included (the bug users of shared Adam
// reported: bias correction from one worker's count).
#include <bit>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "kernels/optimizer.h"
#include "sync/hogwild.h"
#include "sync/optimizer_slots.h"
#include "sync/parameter_store.h"
#include "sync/policy_factory.h"

namespace hogwild {
namespace {

constexpr int64_t kParams = 37;

std::vector<float> Gradient(int seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> g(kParams);
  for (float& x : g) x = normal(rng);
  return g;
}

std::vector<float> Params(const UpdatePolicy& policy) {
  std::vector<float> p(kParams);
  EXPECT_TRUE(policy.ReadParams(absl::MakeSpan(p)).ok());
  return p;
}

bool BitwiseEqual(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::bit_cast<uint32_t>(a[i]) != std::bit_cast<uint32_t>(b[i])) return false;
  }
  return true;
}

// One step of worker w with gradient Gradient(seed).
void Step(UpdatePolicy& policy, int w, int seed, float lr) {
  ASSERT_TRUE(policy.BeginStep(w).ok());
  const std::vector<float> g = Gradient(seed);
  ASSERT_TRUE(policy.FinishStep(w, g, lr).ok());
}

struct PolicyCase {
  Mode mode;
  OptimizerKind optimizer;
  float momentum;
};

std::string CaseName(const ::testing::TestParamInfo<PolicyCase>& info) {
  const char* names[] = {"sgd", "momentum", "nesterov", "adam", "adamw", "rmsprop", "adagrad"};
  return absl::StrFormat("%s_%s", ModeName(info.param.mode),
                         names[static_cast<int>(info.param.optimizer)]);
}

SgdOptions OptionsFor(const PolicyCase& c) {
  return SgdOptions{.optimizer = c.optimizer, .momentum = c.momentum, .weight_decay = 1e-2f};
}

struct PolicyRun {
  std::unique_ptr<ParameterStore> store = std::make_unique<ParameterStore>(kParams);
  std::unique_ptr<UpdatePolicy> policy;
};

PolicyRun Make(const PolicyCase& c) {
  PolicyRun run;
  const std::vector<float> init = Gradient(100);
  std::copy(init.begin(), init.end(), run.store->unsafe_values().begin());
  auto policy = CreateUpdatePolicy(c.mode, run.store.get(), PolicyPlacement{.num_cpu_workers = 1},
                                   OptionsFor(c), ModeOptions{.average_every = 1});
  EXPECT_TRUE(policy.ok()) << policy.status();
  run.policy = std::move(*policy);
  return run;
}

class OptimizerInPolicy : public ::testing::TestWithParam<PolicyCase> {};

// With one worker every policy is sequential minibatch training: 4 updates equal the functor
// applied 4 times with steps 1..4, bitwise.
TEST_P(OptimizerInPolicy, OneWorkerIsBitwiseTheFunctor) {
  const PolicyCase& c = GetParam();
  PolicyRun run = Make(c);
  std::vector<float> expected = Gradient(100), s0(kParams, 0.0f), s1(kParams, 0.0f);
  const float lr = 0.01f;
  for (int step = 1; step <= 4; ++step) {
    Step(*run.policy, 0, step, lr);
    const OptimizerFn fn = MakeOptimizerFn(OptionsFor(c).optimizer_params(), lr, step);
    const std::vector<float> g = Gradient(step);
    for (int64_t i = 0; i < kParams; ++i) expected[i] = fn(expected[i], g[i], s0[i], s1[i]);
  }
  EXPECT_TRUE(BitwiseEqual(Params(*run.policy), expected));
}

// Save after 3 steps, restore into a fresh policy, 3 more steps each: bitwise equal. Restoring
// without the state (zeroed moments, step counts 0) diverges, so the state matters.
TEST_P(OptimizerInPolicy, RestoredStateContinuesBitwise) {
  const PolicyCase& c = GetParam();
  PolicyRun original = Make(c);
  for (int s = 1; s <= 3; ++s) Step(*original.policy, 0, s, 0.01f);
  absl::StatusOr<PolicyState> state = original.policy->SaveState();
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(state->optimizer_state.size(),
            static_cast<size_t>(NumStateSlots(OptionsFor(c).optimizer_params())));
  EXPECT_EQ(state->optimizer_steps,
            UsesStepCount(c.optimizer) ? std::vector<uint64_t>{3} : std::vector<uint64_t>{});

  PolicyRun restored = Make(c);
  ASSERT_TRUE(restored.policy->RestoreState(*state).ok());
  PolicyState blank = *state;
  for (std::vector<float>& b : blank.optimizer_state) b.assign(b.size(), 0.0f);
  for (uint64_t& t : blank.optimizer_steps) t = 0;
  PolicyRun forgetful = Make(c);
  ASSERT_TRUE(forgetful.policy->RestoreState(blank).ok());
  for (int s = 4; s <= 6; ++s) {
    Step(*original.policy, 0, s, 0.01f);
    Step(*restored.policy, 0, s, 0.01f);
    Step(*forgetful.policy, 0, s, 0.01f);
  }
  EXPECT_TRUE(BitwiseEqual(Params(*restored.policy), Params(*original.policy)));
  if (!state->optimizer_state.empty()) {
    EXPECT_FALSE(BitwiseEqual(Params(*forgetful.policy), Params(*original.policy)));
  }
}

std::vector<PolicyCase> PolicyCases() {
  std::vector<PolicyCase> cases;
  for (Mode mode : {Mode::kAsync, Mode::kSync, Mode::kSsp, Mode::kBackup, Mode::kLocalSgd}) {
    cases.push_back({mode, OptimizerKind::kSgd, 0.0f});
    cases.push_back({mode, OptimizerKind::kMomentum, 0.9f});
    cases.push_back({mode, OptimizerKind::kNesterov, 0.9f});
    cases.push_back({mode, OptimizerKind::kAdam, 0.0f});
    cases.push_back({mode, OptimizerKind::kAdamW, 0.0f});
    cases.push_back({mode, OptimizerKind::kRmsprop, 0.5f});
    cases.push_back({mode, OptimizerKind::kAdagrad, 0.0f});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(AllPolicies, OptimizerInPolicy, ::testing::ValuesIn(PolicyCases()),
                         CaseName);

// Weight decay with biases exempt (SgdOptions::no_decay, from --noweight_decay_biases): with a
// zero gradient, one update leaves every exempt parameter bitwise unchanged and moves every
// other one exactly as the functor with weight decay does.
TEST_P(OptimizerInPolicy, ExemptParametersAreNotDecayed) {
  const PolicyCase& c = GetParam();
  SgdOptions options = OptionsFor(c);
  options.weight_decay = 0.1f;
  options.no_decay = {{5, 9}, {20, kParams}};
  ParameterStore store(kParams);
  const std::vector<float> init = Gradient(100);
  std::copy(init.begin(), init.end(), store.unsafe_values().begin());
  auto policy = CreateUpdatePolicy(c.mode, &store, PolicyPlacement{.num_cpu_workers = 1}, options,
                                   ModeOptions{.average_every = 1});
  ASSERT_TRUE(policy.ok()) << policy.status();
  ASSERT_TRUE((*policy)->BeginStep(0).ok());
  const std::vector<float> zero(kParams, 0.0f);
  ASSERT_TRUE((*policy)->FinishStep(0, zero, 0.01f).ok());
  const std::vector<float> after = Params(**policy);
  const OptimizerFn fn = MakeOptimizerFn(options.optimizer_params(), 0.01f, 1);
  for (int64_t i = 0; i < kParams; ++i) {
    const bool exempt = (i >= 5 && i < 9) || i >= 20;
    float s0 = 0.0f, s1 = 0.0f;
    const float decayed = fn(init[i], 0.0f, s0, s1);
    ASSERT_NE(decayed, init[i]) << i;  // the test can tell the two apart
    EXPECT_EQ(after[i], exempt ? init[i] : decayed) << CaseName({c, 0}) << " element " << i;
  }
}

TEST(OptimizerSlots, DecayPiecesCoverTheRangeInOrder) {
  SgdOptions o{.weight_decay = 0.1f, .no_decay = {{3, 5}, {8, 12}}};
  std::vector<std::tuple<int64_t, int64_t, bool>> pieces;
  ForEachDecayPiece(o, 4, 6, [&](int64_t b, int64_t n, bool d) { pieces.emplace_back(b, n, d); });
  EXPECT_EQ(pieces, (std::vector<std::tuple<int64_t, int64_t, bool>>{
                        {4, 1, false}, {5, 3, true}, {8, 2, false}}));
  pieces.clear();
  o.weight_decay = 0.0f;  // nothing decays: one piece
  ForEachDecayPiece(o, 0, 20, [&](int64_t b, int64_t n, bool d) { pieces.emplace_back(b, n, d); });
  EXPECT_EQ(pieces, (std::vector<std::tuple<int64_t, int64_t, bool>>{{0, 20, false}}));
}

SgdOptions Adam(bool shared) {
  return SgdOptions{.optimizer = OptimizerKind::kAdam, .shared_optimizer_state = shared};
}

// Two workers taking turns on one thread: with shared state they are one Adam (steps 1..6 on the
// one state), bitwise a single worker with the same gradients. Per-worker state is two Adams,
// each counting its own 3 steps: different parameters (this test could tell the two apart).
TEST(HogwildOptimizerState, SharedAdamTakingTurnsIsOneAdam) {
  ParameterStore single_store(kParams), shared_store(kParams), per_worker_store(kParams);
  Hogwild single(&single_store, 1, Adam(false));
  Hogwild shared(&shared_store, 2, Adam(true));
  Hogwild per_worker(&per_worker_store, 2, Adam(false));
  for (int s = 0; s < 6; ++s) {
    Step(single, 0, s, 1e-2f);
    Step(shared, s % 2, s, 1e-2f);
    Step(per_worker, s % 2, s, 1e-2f);
  }
  EXPECT_TRUE(BitwiseEqual(Params(shared), Params(single)));
  EXPECT_FALSE(BitwiseEqual(Params(per_worker), Params(single)));

  absl::StatusOr<PolicyState> s = shared.SaveState();
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->optimizer_steps, std::vector<uint64_t>{6});
  EXPECT_EQ(s->optimizer_state.size(), 2u);  // one m, one v
  absl::StatusOr<PolicyState> p = per_worker.SaveState();
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->optimizer_steps, (std::vector<uint64_t>{3, 3}));
  EXPECT_EQ(p->optimizer_state.size(), 4u);  // m and v per worker
}

// Four workers updating concurrently with shared Adam: the step count used for bias correction
// is one atomic counter, so once they stop it equals the updates applied (the store's version),
// 4 x 300, not one worker's 300; and it continues from a restored count.
TEST(HogwildOptimizerState, SharedAdamStepCountIsTheNumberOfUpdatesApplied) {
  constexpr int kWorkers = 4, kSteps = 300;
  ParameterStore store(kParams);
  Hogwild policy(&store, kWorkers, Adam(true));
  std::vector<std::thread> threads;
  std::vector<absl::Status> errors(kWorkers);
  for (int w = 0; w < kWorkers; ++w) {
    threads.emplace_back([&, w] {
      const std::vector<float> g = Gradient(w);
      for (int s = 0; s < kSteps; ++s) {
        if (auto p = policy.BeginStep(w); !p.ok()) return void(errors[w] = p.status());
        if (auto r = policy.FinishStep(w, g, 1e-3f); !r.ok()) return void(errors[w] = r.status());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  for (const absl::Status& e : errors) ASSERT_TRUE(e.ok()) << e;
  absl::StatusOr<PolicyState> state = policy.SaveState();
  ASSERT_TRUE(state.ok());
  EXPECT_EQ(state->global_step, uint64_t{kWorkers * kSteps});
  EXPECT_EQ(state->optimizer_steps, std::vector<uint64_t>{kWorkers * kSteps});

  ParameterStore resumed_store(kParams);
  Hogwild resumed(&resumed_store, kWorkers, Adam(true));
  ASSERT_TRUE(resumed.RestoreState(*state).ok());
  Step(resumed, 2, 1, 1e-3f);
  absl::StatusOr<PolicyState> after = resumed.SaveState();
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->optimizer_steps, std::vector<uint64_t>{kWorkers * kSteps + 1});
}

// A checkpoint of per-worker state does not restore into shared state (another number of
// buffers), with a message that names the optimizer state.
TEST(HogwildOptimizerState, PerWorkerStateDoesNotRestoreIntoSharedState) {
  ParameterStore a_store(kParams), b_store(kParams);
  Hogwild per_worker(&a_store, 2, Adam(false));
  Hogwild shared(&b_store, 2, Adam(true));
  Step(per_worker, 0, 1, 1e-3f);
  absl::StatusOr<PolicyState> state = per_worker.SaveState();
  ASSERT_TRUE(state.ok());
  const absl::Status s = shared.RestoreState(*state);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("optimizer-state buffers"), std::string::npos) << s;
}

}  // namespace
}  // namespace hogwild

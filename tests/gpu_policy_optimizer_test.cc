// The GPU update policies against the CPU ones for every optimizer (issue 15: "in both modes and
// on both backends"): DeviceHogwild (async, one worker, per-worker state) against Hogwild, and
// NcclTowerAverage (sync, three workers on GPU 0) against TowerAverage, on the same parameters
// and gradients, with weight decay, a bias range exempt from it (SgdOptions::no_decay) and a
// range of batch-norm moving statistics (SgdOptions::moving_stats). Then a checkpoint taken
// mid-run on the GPU (optimizer state and Adam's step count) resumes bitwise. Sparse steps are
// refused by both, naming the policy.
// Skips with "no CUDA device: <reason>" where there is no GPU.
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/optimizer.h"
#include "kernels/optimizer_name.h"
#include "sync/device_hogwild.h"
#include "sync/hogwild.h"
#include "sync/nccl_tower_average.h"
#include "sync/parameter_store.h"
#include "sync/sparse_gradient.h"
#include "sync/tower_average.h"
#include "tests/gpu_vs_cpu_fixture.h"

namespace hogwild {
namespace {

using testing::ExpectAllNear;
using testing::RandomFloats;

constexpr int64_t kParams = 1000;
constexpr int kSteps = 6;

SgdOptions OptionsFor(OptimizerKind kind) {
  SgdOptions o;
  o.optimizer = kind;
  o.momentum = kind == OptimizerKind::kMomentum || kind == OptimizerKind::kNesterov ||
                       kind == OptimizerKind::kRmsprop
                   ? 0.9f
                   : 0.0f;
  o.weight_decay = 0.01f;
  o.no_decay = {{100, 200}};       // a bias
  o.moving_stats = {{900, 1000}};  // batch norm's moving mean and variance
  o.moving_stats_momentum = 0.1f;
  return o;
}

const OptimizerKind kAllOptimizers[] = {
    OptimizerKind::kSgd,   OptimizerKind::kMomentum, OptimizerKind::kNesterov, OptimizerKind::kAdam,
    OptimizerKind::kAdamW, OptimizerKind::kRmsprop,  OptimizerKind::kAdagrad};

class GpuPolicyOptimizerTest : public testing::GpuVsCpuTest,
                               public ::testing::WithParamInterface<OptimizerKind> {
 protected:
  // grads[step][worker]: [kParams] each, deterministic.
  static std::vector<std::vector<std::vector<float>>> Gradients(int workers) {
    std::vector<std::vector<std::vector<float>>> grads(kSteps);
    for (int s = 0; s < kSteps; ++s) {
      for (int w = 0; w < workers; ++w) {
        grads[s].push_back(RandomFloats(kParams, 100 + 10 * s + w, -0.1f, 0.1f));
      }
    }
    return grads;
  }

  static std::unique_ptr<ParameterStore> InitialStore() {
    auto store = std::make_unique<ParameterStore>(kParams);
    const std::vector<float> init = RandomFloats(kParams, 7);
    std::copy(init.begin(), init.end(), store->unsafe_values().begin());
    return store;
  }

  // Steps [first, last) of every worker (one thread each, as the trainer runs them), with the
  // gradients on `backends[w]` (uploaded to the GPU for a CUDA backend). Learning rate
  // 0.01 * (step + 1), so the steps differ.
  void RunSteps(UpdatePolicy& policy, const std::vector<Backend*>& backends,
                const std::vector<std::vector<std::vector<float>>>& grads, int first, int last,
                bool on_gpu) {
    const int workers = static_cast<int>(backends.size());
    std::vector<std::vector<const float*>> device_grads(kSteps, std::vector<const float*>(workers));
    for (int s = first; s < last; ++s) {
      for (int w = 0; w < workers; ++w) {
        device_grads[s][w] = on_gpu ? Upload(grads[s][w]) : grads[s][w].data();
      }
    }
    std::vector<absl::Status> results(workers);
    std::vector<std::thread> threads;
    for (int w = 0; w < workers; ++w) {
      threads.emplace_back([&, w] {
        results[w] = policy.AttachWorker(w, backends[w]);
        for (int s = first; s < last && results[w].ok(); ++s) {
          absl::StatusOr<DeviceSpan<const float>> params = policy.BeginStep(w);
          if (!params.ok()) {
            results[w] = params.status();
            break;
          }
          results[w] = policy
                           .FinishStep(w, DeviceSpan<const float>(device_grads[s][w], kParams),
                                       0.01f * static_cast<float>(s + 1))
                           .status();
        }
      });
    }
    for (std::thread& t : threads) t.join();
    for (const absl::Status& r : results) ASSERT_TRUE(r.ok()) << r;
  }

  // The CUDA backends of the GPU workers: worker 0 uses the fixture's, the others their own
  // (one stream each, all on GPU 0).
  std::vector<Backend*> GpuBackends(int workers) {
    std::vector<Backend*> out = {gpu_.get()};
    for (int w = 1; w < workers; ++w) {
      absl::StatusOr<std::unique_ptr<CudaBackend>> backend = CudaBackend::Create(0);
      EXPECT_TRUE(backend.ok()) << backend.status();
      extra_.push_back(std::move(*backend));
      out.push_back(extra_.back().get());
    }
    return out;
  }

  static std::vector<float> Params(const UpdatePolicy& policy) {
    absl::StatusOr<PolicyState> state = policy.SaveState();  // waits for the device
    EXPECT_TRUE(state.ok()) << state.status();
    return state.ok() ? state->params : std::vector<float>();
  }

  std::vector<std::unique_ptr<CudaBackend>> extra_;
};

TEST_P(GpuPolicyOptimizerTest, DeviceHogwildMatchesHogwild) {
  const SgdOptions options = OptionsFor(GetParam());
  const auto grads = Gradients(1);
  auto cpu_store = InitialStore();
  Hogwild cpu_policy(cpu_store.get(), 1, options);
  RunSteps(cpu_policy, {&cpu_}, grads, 0, kSteps, /*on_gpu=*/false);

  auto gpu_store = InitialStore();
  auto gpu_policy = DeviceHogwild::Create(gpu_store.get(), {0}, options);
  ASSERT_TRUE(gpu_policy.ok()) << gpu_policy.status();
  RunSteps(**gpu_policy, {gpu_.get()}, grads, 0, kSteps, /*on_gpu=*/true);

  const std::vector<float> cpu_params = Params(cpu_policy);
  const std::vector<float> gpu_params = Params(**gpu_policy);
  ExpectAllNear(gpu_params, cpu_params, 1e-5, "params");
  EXPECT_NE(gpu_params, std::vector<float>(InitialStore()->unsafe_values().begin(),
                                           InitialStore()->unsafe_values().end()));
  absl::StatusOr<PolicyState> gpu_state = (*gpu_policy)->SaveState();
  absl::StatusOr<PolicyState> cpu_state = cpu_policy.SaveState();
  ASSERT_TRUE(gpu_state.ok() && cpu_state.ok());
  ASSERT_EQ(gpu_state->optimizer_state.size(), cpu_state->optimizer_state.size());
  for (size_t b = 0; b < cpu_state->optimizer_state.size(); ++b) {
    ExpectAllNear(gpu_state->optimizer_state[b], cpu_state->optimizer_state[b], 1e-5,
                  "optimizer state " + std::to_string(b));
  }
  EXPECT_EQ(gpu_state->optimizer_steps, cpu_state->optimizer_steps);
}

TEST_P(GpuPolicyOptimizerTest, NcclTowerAverageMatchesTowerAverage) {
  constexpr int kWorkers = 3;
  const SgdOptions options = OptionsFor(GetParam());
  const auto grads = Gradients(kWorkers);
  auto cpu_store = InitialStore();
  TowerAverage cpu_policy(cpu_store.get(), kWorkers, options);
  RunSteps(cpu_policy, {&cpu_, &cpu_, &cpu_}, grads, 0, kSteps, /*on_gpu=*/false);

  auto gpu_store = InitialStore();
  auto gpu_policy = NcclTowerAverage::Create(gpu_store.get(), {0, 0, 0}, options);
  ASSERT_TRUE(gpu_policy.ok()) << gpu_policy.status();
  RunSteps(**gpu_policy, GpuBackends(kWorkers), grads, 0, kSteps, /*on_gpu=*/true);

  ExpectAllNear(Params(**gpu_policy), Params(cpu_policy), 1e-5, "params");
  absl::StatusOr<PolicyState> gpu_state = (*gpu_policy)->SaveState();
  absl::StatusOr<PolicyState> cpu_state = cpu_policy.SaveState();
  ASSERT_TRUE(gpu_state.ok() && cpu_state.ok());
  ASSERT_EQ(gpu_state->optimizer_state.size(), cpu_state->optimizer_state.size());
  EXPECT_EQ(gpu_state->optimizer_steps, cpu_state->optimizer_steps);
}

// Stopped after 3 steps, saved, restored into a new policy and continued: bitwise the
// uninterrupted run (optimizer state and step count restored), in both modes.
TEST_P(GpuPolicyOptimizerTest, ResumedGpuPoliciesAreBitwiseUninterruptedOnes) {
  const SgdOptions options = OptionsFor(GetParam());
  for (const bool sync : {false, true}) {
    SCOPED_TRACE(sync ? "sync" : "async");
    const int workers = sync ? 2 : 1;
    const auto grads = Gradients(workers);
    const std::vector<Backend*> backends = GpuBackends(workers);
    auto create = [&](ParameterStore* store) -> absl::StatusOr<std::unique_ptr<UpdatePolicy>> {
      if (sync) return NcclTowerAverage::Create(store, std::vector<int>(workers, 0), options);
      return DeviceHogwild::Create(store, {0}, options);
    };
    auto whole_store = InitialStore();
    auto whole = create(whole_store.get());
    ASSERT_TRUE(whole.ok()) << whole.status();
    RunSteps(**whole, backends, grads, 0, kSteps, /*on_gpu=*/true);

    auto first_store = InitialStore();
    auto first = create(first_store.get());
    ASSERT_TRUE(first.ok()) << first.status();
    RunSteps(**first, backends, grads, 0, 3, /*on_gpu=*/true);
    absl::StatusOr<PolicyState> saved = (*first)->SaveState();
    ASSERT_TRUE(saved.ok()) << saved.status();

    auto second_store = std::make_unique<ParameterStore>(kParams);
    auto second = create(second_store.get());
    ASSERT_TRUE(second.ok()) << second.status();
    ASSERT_TRUE((*second)->RestoreState(*saved).ok());
    RunSteps(**second, backends, grads, 3, kSteps, /*on_gpu=*/true);
    EXPECT_EQ(Params(**second), Params(**whole));
  }
}

INSTANTIATE_TEST_SUITE_P(Optimizers, GpuPolicyOptimizerTest, ::testing::ValuesIn(kAllOptimizers),
                         [](const ::testing::TestParamInfo<OptimizerKind>& info) {
                           return std::string(OptimizerName(info.param));
                         });

using GpuPolicySparseTest = testing::GpuVsCpuTest;

TEST_F(GpuPolicySparseTest, SparseStepsAreRefusedNamingThePolicy) {
  auto store = std::make_unique<ParameterStore>(kParams);
  SparseGradient grad(kParams);
  grad.Accumulate(3, 1.0f);
  auto device_hogwild = DeviceHogwild::Create(store.get(), {0}, SgdOptions{});
  ASSERT_TRUE(device_hogwild.ok()) << device_hogwild.status();
  auto nccl = NcclTowerAverage::Create(store.get(), {0}, SgdOptions{});
  ASSERT_TRUE(nccl.ok()) << nccl.status();
  const std::pair<UpdatePolicy*, std::string> policies[] = {
      {device_hogwild->get(),
       "DeviceHogwild (async on GPU workers) takes dense gradients only; train the sparse "
       "workloads on CPU workers"},
      {nccl->get(),
       "NcclTowerAverage (sync on GPU workers) takes dense gradients only; train the sparse "
       "workloads on CPU workers"}};
  for (const auto& [policy, message] : policies) {
    const absl::Status begin = policy->BeginSparseStep(0).status();
    EXPECT_EQ(begin.code(), absl::StatusCode::kUnimplemented);
    EXPECT_EQ(begin.message(), message);
    const absl::Status finish = policy->FinishSparseStep(0, grad, 0.1f).status();
    EXPECT_EQ(finish.code(), absl::StatusCode::kUnimplemented);
    EXPECT_EQ(finish.message(), message);
  }
  EXPECT_EQ(store->version(), 0u);
}

}  // namespace
}  // namespace hogwild

// Throughput of the pieces of a train step, each next to its hardware limit:
//   `bazel run -c opt //benchmarks:train_step_benchmark`
//
// - BM_TrainStep/B: one Hogwild step of W1 (MLP 784-256-256-10, softmax cross-entropy, SGD) at
//   batch B on one worker: forward, backward, fused update + snapshot. Counters: examples/s and
//   GFLOP/s (the step's GEMM FLOPs: forward 2P, backward 2P for the weight gradients plus 2x
//   the weights of every layer but the first for the input gradients: 1,211,392 per example).
// - BM_PolicyStep/B: the same step as the worker's loop takes it, less the input pipeline:
//   through the Hogwild policy (BeginStep, FinishStep: clipping's factor, the staleness, the
//   fused update) and with the divergence guard's scan of the gradient (trainer/finite_check.h).
//   Its gap to BM_TrainStep is what the policy and the guard cost per step.
// - BM_GemmLimit/B: the same eight GEMM calls with the same shapes straight into OpenBLAS on
//   the same core, nothing else: the practical limit of BM_TrainStep.
// - BM_HogwildUpdate/momentum:M: ParameterStore::SgdUpdateAndRead over P = 269,322 floats
//   (reads params and gradient, writes params and the snapshot: 16 bytes per element; with
//   momentum also the velocity: 24), against
//   BM_Memcpy of the same array (8 bytes per element moved).
// - BM_SyncReduction/threads:W: TowerAverage::FinishStep with W threads (barrier, reduction of
//   W gradients over the worker's slice, SGD on the slice, barrier): bytes of gradients and
//   parameters touched per second.
// - BM_Train/mode/W: hogwild::Train for one epoch of Fashion-MNIST (no evaluation): the
//   scaling with workers in both modes (skipped when the dataset is not installed).
#include <cblas.h>

#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "benchmark/benchmark.h"
#include "kernels/cpu/cpu_backend.h"
#include "sync/hogwild.h"
#include "sync/parameter_store.h"
#include "sync/tower_average.h"
#include "trainer/data/mnist.h"
#include "trainer/finite_check.h"
#include "trainer/model/model.h"
#include "trainer/model/tower.h"
#include "trainer/trainer.h"

namespace hogwild {
namespace {

constexpr int64_t kInput = 784, kHidden = 256, kClasses = 10;
// GEMM FLOPs per example of one train step (see the file comment).
constexpr double kFlopsPerExample =
    2.0 * (kInput * kHidden + kHidden * kHidden + kHidden * kClasses) * 2.0 +
    2.0 * (kHidden * kHidden + kHidden * kClasses);

std::unique_ptr<Model> MakeW1Model() {
  ModelSpec spec;
  spec.name = "mlp";
  spec.hidden = {kHidden, kHidden};
  spec.input_shape = {1, 28, 28};
  spec.num_classes = kClasses;
  return std::move(Model::Create(spec).value());
}

std::vector<float> RandomVector(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal;
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

void BM_TrainStep(benchmark::State& state) {
  const int64_t batch = state.range(0);
  auto model = MakeW1Model();
  CpuBackend backend;
  auto tower = Tower::Create(model.get(), &backend, batch).value();
  ParameterStore store(model->num_params());
  model->InitParams(1, store.unsafe_values());
  std::vector<float> snapshot(model->num_params()), grad(model->num_params());
  store.Read(absl::MakeSpan(snapshot));
  const std::vector<float> features = RandomVector(batch * kInput, 2);
  std::vector<int32_t> labels(batch);
  for (int64_t i = 0; i < batch; ++i) labels[i] = static_cast<int32_t>(i % kClasses);
  for (auto _ : state) {
    auto loss = tower->ForwardBackward(snapshot.data(), batch, features.data(), labels.data(),
                                       1.0f / batch, grad.data());
    benchmark::DoNotOptimize(loss);
    store.SgdUpdateAndRead(SgdMomentumFn{1e-3f, 0.0f, 0.0f}, grad, {}, absl::MakeSpan(snapshot));
    store.CompleteUpdate();
  }
  state.counters["examples/s"] =
      benchmark::Counter(static_cast<double>(batch), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["GFLOP/s"] = benchmark::Counter(kFlopsPerExample * batch * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_TrainStep)->Arg(16)->Arg(64)->Arg(256);

void BM_PolicyStep(benchmark::State& state) {
  const int64_t batch = state.range(0);
  auto model = MakeW1Model();
  CpuBackend backend;
  auto tower = Tower::Create(model.get(), &backend, batch).value();
  ParameterStore store(model->num_params());
  model->InitParams(1, store.unsafe_values());
  Hogwild policy(&store, /*num_workers=*/1, SgdOptions{});
  std::vector<float> grad(model->num_params());
  const std::vector<float> features = RandomVector(batch * kInput, 2);
  std::vector<int32_t> labels(batch);
  for (int64_t i = 0; i < batch; ++i) labels[i] = static_cast<int32_t>(i % kClasses);
  for (auto _ : state) {
    DeviceSpan<const float> params = policy.BeginStep(0).value();
    auto loss = tower->ForwardBackward(params.data(), batch, features.data(), labels.data(),
                                       1.0f / batch, grad.data());
    benchmark::DoNotOptimize(loss);
    if (FirstNonFinite(grad) >= 0) {
      state.SkipWithError("non-finite gradient");
      return;
    }
    auto stats = policy.FinishStep(0, DeviceSpan<const float>(grad.data(), grad.size()), 1e-3f);
    benchmark::DoNotOptimize(stats);
  }
  state.counters["examples/s"] =
      benchmark::Counter(static_cast<double>(batch), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_PolicyStep)->Arg(64);

void BM_GemmLimit(benchmark::State& state) {
  const int b = static_cast<int>(state.range(0));
  const int d = kInput, h = kHidden, k = kClasses;
  CpuBackend backend;  // pins OpenBLAS to one thread, as in training
  const std::vector<float> x = RandomVector(b * d, 3), w1 = RandomVector(d * h, 4),
                           w2 = RandomVector(h * h, 5), w3 = RandomVector(h * k, 6);
  std::vector<float> a1(b * h), a2(b * h), logits(b * k), dw1(d * h), dw2(h * h), dw3(h * k),
      dh(b * h);
  const auto nn = [](int m, int n, int kk, const float* a, const float* bb, float* c) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, kk, 1.0f, a, kk, bb, n, 0.0f, c,
                n);
  };
  const auto tn = [](int m, int n, int kk, const float* a, const float* bb, float* c) {
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, m, n, kk, 1.0f, a, m, bb, n, 0.0f, c, n);
  };
  const auto nt = [](int m, int n, int kk, const float* a, const float* bb, float* c) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, n, kk, 1.0f, a, kk, bb, kk, 0.0f, c, n);
  };
  for (auto _ : state) {
    nn(b, h, d, x.data(), w1.data(), a1.data());        // forward, layer 1
    nn(b, h, h, a1.data(), w2.data(), a2.data());       // layer 2
    nn(b, k, h, a2.data(), w3.data(), logits.data());   // layer 3
    tn(h, k, b, a2.data(), logits.data(), dw3.data());  // dW3 = a2^T dlogits
    nt(b, h, k, logits.data(), w3.data(), dh.data());   // da2 = dlogits W3^T
    tn(h, h, b, a1.data(), dh.data(), dw2.data());      // dW2
    nt(b, h, h, dh.data(), w2.data(), a2.data());       // da1
    tn(d, h, b, x.data(), a2.data(), dw1.data());       // dW1 (no input gradient)
    benchmark::ClobberMemory();
  }
  state.counters["examples/s"] =
      benchmark::Counter(static_cast<double>(b), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["GFLOP/s"] = benchmark::Counter(kFlopsPerExample * b * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_GemmLimit)->Arg(16)->Arg(64)->Arg(256);

int64_t W1Params() { return MakeW1Model()->num_params(); }

void BM_HogwildUpdate(benchmark::State& state) {
  const int64_t p = W1Params();
  const float momentum = state.range(0) != 0 ? 0.9f : 0.0f;
  ParameterStore store(p);
  const std::vector<float> grad = RandomVector(p, 7);
  std::vector<float> snapshot(p), velocity(momentum != 0.0f ? p : 0);
  for (auto _ : state) {
    store.SgdUpdateAndRead(SgdMomentumFn{1e-3f, momentum, 0.0f}, grad, absl::MakeSpan(velocity),
                           absl::MakeSpan(snapshot));
    benchmark::ClobberMemory();
  }
  // Momentum reads and writes the velocity too: 24 bytes per element.
  state.counters["bytes/s"] = benchmark::Counter((momentum != 0.0f ? 24.0 : 16.0) * p,
                                                 benchmark::Counter::kIsIterationInvariantRate,
                                                 benchmark::Counter::kIs1024);
}
BENCHMARK(BM_HogwildUpdate)->ArgName("momentum")->Arg(0)->Arg(1);

void BM_Memcpy(benchmark::State& state) {
  const int64_t p = W1Params();
  const std::vector<float> src = RandomVector(p, 8);
  std::vector<float> dst(p);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), p * sizeof(float));
    benchmark::ClobberMemory();
  }
  state.counters["bytes/s"] = benchmark::Counter(
      8.0 * p, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1024);
}
BENCHMARK(BM_Memcpy);

// Shared by the threads of one BM_SyncReduction run; created and destroyed by thread 0
// outside the timed loop (Google Benchmark starts and ends the loop of all threads together).
std::unique_ptr<ParameterStore> sync_store;
std::unique_ptr<TowerAverage> sync_policy;
std::vector<std::vector<float>> sync_grads;

void BM_SyncReduction(benchmark::State& state) {
  const int workers = state.threads();
  const int64_t p = W1Params();
  if (state.thread_index() == 0) {
    sync_store = std::make_unique<ParameterStore>(p);
    sync_policy = std::make_unique<TowerAverage>(sync_store.get(), workers, SgdOptions{});
    sync_grads.assign(workers, RandomVector(p, 9));
  }
  for (auto _ : state) {
    auto stats =
        sync_policy->FinishStep(state.thread_index(), sync_grads[state.thread_index()], 1e-3f);
    benchmark::DoNotOptimize(stats);
  }
  // Per worker: its slice of every tower's gradient read, its slice of the parameters read
  // and written.
  const double bytes = (workers + 2.0) * 4.0 * p / workers;
  state.counters["bytes/s"] = benchmark::Counter(
      bytes, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1024);
  if (state.thread_index() == 0) {
    sync_policy.reset();
    sync_store.reset();
  }
}
BENCHMARK(BM_SyncReduction)->Threads(1)->Threads(2)->UseRealTime();

const Dataset* FashionMnist() {
  static const Dataset* dataset = [] {
    auto info = LookupDataset("fashion_mnist");
    auto train = LoadMnistSplit(*info, info->default_dir, "train");
    if (!train.ok()) return static_cast<Dataset*>(nullptr);
    Dataset test;
    auto* d = new Dataset(std::move(*train));
    Normalize(*d, test);
    return d;
  }();
  return dataset;
}

void BM_Train(benchmark::State& state) {
  const Dataset* train = FashionMnist();
  if (train == nullptr) {
    state.SkipWithError("Fashion-MNIST is not installed (tools/setup.sh)");
    return;
  }
  TrainerOptions options;
  options.mode = state.range(0) == 0 ? Mode::kAsync : Mode::kSync;
  options.num_workers = static_cast<int>(state.range(1));
  options.epochs = 1;
  options.eval_every_epochs = 0;
  double examples_per_s = 0;
  for (auto _ : state) {
    auto result = Train(options, *train, Dataset());
    if (!result.ok()) {
      state.SkipWithError(std::string(result.status().message()).c_str());
      return;
    }
    examples_per_s += result->examples_per_s;
  }
  state.counters["examples/s"] = examples_per_s / state.iterations();
  state.SetLabel(ModeName(options.mode));
}
BENCHMARK(BM_Train)
    ->ArgNames({"sync", "workers"})
    ->Args({0, 1})
    ->Args({0, 2})
    ->Args({1, 1})
    ->Args({1, 2})
    ->Iterations(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace hogwild

BENCHMARK_MAIN();

// GPU train-step throughput of the MLP 784-256-256-10 (ReLU, softmax cross-entropy, SGD), for
// the GPU check (tools/gpu_check.sh). Three measurements:
//
//   step   W worker threads on GPU 0, each with its own CudaBackend (stream, cuBLAS handle) and
//          Tower, sharing one DeviceHogwild master on the GPU: per step BeginStep (snapshot
//          copy), ForwardBackward (with the loss read back, as the trainer does), FinishStep
//          (update kernel). Batches are resident on the GPU, so this is the compute path
//          alone. examples/s over --seconds_per_case after a warm-up.
//   gemm   the cuBLAS limit for the batch's shapes: only the 8 GEMMs of one step (3 forward,
//          3 weight gradients, 2 input gradients), back to back on one stream; examples/s =
//          batch / (time per step's GEMMs), and the GEMM GFLOP/s.
//   train  the whole trainer (hogwild::Train) for one epoch of 60,000 random examples with
//          --devices=gpu:0: input pipeline, pinned double-buffered uploads, no evaluation.
//
// Not here: CUDA-graph capture of the steady-state step (issue 3 welcomes it where it measurably
// helps). It was left out because nothing could be measured on the GPU-less build machine; the
// "step" vs "gemm" rows at batch 64 show how much launch overhead there is to win.
//
// Output: a human-readable line per case, and a line "RESULT {json}" per case for scripts.
// Exit status 2 with "no CUDA device: <reason>" where there is no GPU.
//
//   bazel run -c opt //benchmarks:gpu_mlp_benchmark -- --seconds_per_case=5
#include <atomic>
#include <chrono>
#include <cstdio>
#include <latch>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "core/status_macros.h"
#include "kernels/buffer.h"
#include "kernels/cuda/cuda_backend.h"
#include "kernels/cuda/devices.h"
#include "sync/device_hogwild.h"
#include "sync/parameter_store.h"
#include "trainer/model/model.h"
#include "trainer/model/tower.h"
#include "trainer/trainer.h"

ABSL_FLAG(double, seconds_per_case, 5.0, "timed seconds of each step-throughput case");
ABSL_FLAG(std::string, batches, "64,1024", "batch sizes (per worker), comma-separated");
ABSL_FLAG(std::string, workers, "1,4", "worker threads on GPU 0, comma-separated");
ABSL_FLAG(bool, train, true, "also time the whole trainer for one epoch per case");

namespace hogwild {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int64_t kInputs = 784;
constexpr int64_t kHidden = 256;
constexpr int64_t kClasses = 10;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

std::vector<float> RandomFloats(size_t n, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, scale);
  std::vector<float> v(n);
  for (float& x : v) x = normal(rng);
  return v;
}

absl::StatusOr<std::unique_ptr<Model>> Mlp() {
  return Model::Create(ModelSpec{.name = "mlp",
                                 .hidden = {kHidden, kHidden},
                                 .input_shape = {kInputs},
                                 .num_classes = kClasses});
}

// One worker of the step benchmark, on its own thread.
absl::Status StepWorker(const Model& model, DeviceHogwild& policy, int worker, int64_t batch,
                        std::latch& ready, const std::atomic<bool>& go,
                        const std::atomic<bool>& stop, std::atomic<int64_t>& steps) {
  absl::Status status = [&]() -> absl::Status {
    HOGWILD_ASSIGN_OR_RETURN(std::unique_ptr<CudaBackend> backend, CudaBackend::Create(0));
    HOGWILD_RETURN_IF_ERROR(policy.AttachWorker(worker, backend.get()));
    HOGWILD_ASSIGN_OR_RETURN(auto tower, Tower::Create(&model, backend.get(), batch));
    HOGWILD_ASSIGN_OR_RETURN(auto grad, BackendBuffer<float>::Create(backend.get(),
                                                                     model.num_params()));
    HOGWILD_ASSIGN_OR_RETURN(auto features,
                             BackendBuffer<float>::Create(backend.get(), batch * kInputs));
    HOGWILD_ASSIGN_OR_RETURN(auto labels, BackendBuffer<int32_t>::Create(backend.get(), batch));
    const std::vector<float> x = RandomFloats(batch * kInputs, 7 + worker, 1.0f);
    std::vector<int32_t> y(batch);
    for (int64_t i = 0; i < batch; ++i) y[i] = static_cast<int32_t>((i * 7 + worker) % kClasses);
    HOGWILD_RETURN_IF_ERROR(backend->CopyToDevice(features.data(), x.data(), features.bytes()));
    HOGWILD_RETURN_IF_ERROR(backend->CopyToDevice(labels.data(), y.data(), labels.bytes()));
    const float scale = 1.0f / static_cast<float>(batch);
    auto step = [&]() -> absl::Status {
      HOGWILD_ASSIGN_OR_RETURN(DeviceSpan<const float> params, policy.BeginStep(worker));
      HOGWILD_ASSIGN_OR_RETURN(double loss, tower->ForwardBackward(params.data(), batch,
                                                                   features.data(), labels.data(),
                                                                   scale, grad.data()));
      (void)loss;
      return policy.FinishStep(worker, DeviceSpan<const float>(grad.data(), grad.size()), 0.01f)
          .status();
    };
    for (int i = 0; i < 20; ++i) HOGWILD_RETURN_IF_ERROR(step());  // warm-up (cuBLAS heuristics)
    HOGWILD_RETURN_IF_ERROR(backend->Synchronize());
    ready.count_down();
    while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
    int64_t mine = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      HOGWILD_RETURN_IF_ERROR(step());
      ++mine;
    }
    HOGWILD_RETURN_IF_ERROR(backend->Synchronize());
    steps.fetch_add(mine);
    return absl::OkStatus();
  }();
  if (!status.ok()) ready.count_down();  // never leave the main thread waiting
  return status;
}

absl::StatusOr<double> StepThroughput(const Model& model, int64_t batch, int workers,
                                      double seconds) {
  ParameterStore store(model.num_params());
  model.InitParams(1, store.unsafe_values());
  HOGWILD_ASSIGN_OR_RETURN(auto policy,
                           DeviceHogwild::Create(&store, std::vector<int>(workers, 0), {}));
  std::latch ready(workers);
  std::atomic<bool> go{false};
  std::atomic<bool> stop{false};
  std::atomic<int64_t> steps{0};
  std::vector<absl::Status> statuses(workers);
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      statuses[w] = StepWorker(model, *policy, w, batch, ready, go, stop, steps);
    });
  }
  ready.wait();
  const Clock::time_point start = Clock::now();
  go.store(true, std::memory_order_release);
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop.store(true);
  for (std::thread& t : threads) t.join();
  const double elapsed = Seconds(start, Clock::now());
  for (const absl::Status& s : statuses) HOGWILD_RETURN_IF_ERROR(s);
  return static_cast<double>(steps.load() * batch) / elapsed;
}

struct GemmLimit {
  double examples_per_s = 0.0;
  double gflop_per_s = 0.0;
};

// The 8 GEMMs of one step, exactly as trainer/dense.cc issues them.
absl::StatusOr<GemmLimit> GemmOnly(int64_t batch) {
  HOGWILD_ASSIGN_OR_RETURN(std::unique_ptr<CudaBackend> gpu, CudaBackend::Create(0));
  Backend* b = gpu.get();
  const int64_t widths[] = {kInputs, kHidden, kHidden, kClasses};
  std::vector<BackendBuffer<float>> act, dact, w, dw;
  for (int l = 0; l < 4; ++l) {
    HOGWILD_ASSIGN_OR_RETURN(auto a, BackendBuffer<float>::Create(b, batch * widths[l]));
    HOGWILD_ASSIGN_OR_RETURN(auto d, BackendBuffer<float>::Create(b, batch * widths[l]));
    HOGWILD_RETURN_IF_ERROR(b->Fill(a.size(), 0.5f, a.data()));
    HOGWILD_RETURN_IF_ERROR(b->Fill(d.size(), 0.25f, d.data()));
    act.push_back(std::move(a));
    dact.push_back(std::move(d));
  }
  for (int l = 0; l < 3; ++l) {
    HOGWILD_ASSIGN_OR_RETURN(auto p, BackendBuffer<float>::Create(b, widths[l] * widths[l + 1]));
    HOGWILD_ASSIGN_OR_RETURN(auto g, BackendBuffer<float>::Create(b, widths[l] * widths[l + 1]));
    HOGWILD_RETURN_IF_ERROR(b->Fill(p.size(), 0.01f, p.data()));
    w.push_back(std::move(p));
    dw.push_back(std::move(g));
  }
  auto one_step = [&]() -> absl::Status {
    for (int l = 0; l < 3; ++l) {
      HOGWILD_RETURN_IF_ERROR(b->Gemm(Transpose::kNo, Transpose::kNo, batch, widths[l + 1],
                                      widths[l], 1.0f, act[l].data(), w[l].data(), 0.0f,
                                      act[l + 1].data()));
    }
    for (int l = 2; l >= 0; --l) {
      HOGWILD_RETURN_IF_ERROR(b->Gemm(Transpose::kYes, Transpose::kNo, widths[l], widths[l + 1],
                                      batch, 1.0f, act[l].data(), dact[l + 1].data(), 0.0f,
                                      dw[l].data()));
      if (l > 0) {
        HOGWILD_RETURN_IF_ERROR(b->Gemm(Transpose::kNo, Transpose::kYes, batch, widths[l],
                                        widths[l + 1], 1.0f, dact[l + 1].data(), w[l].data(),
                                        0.0f, dact[l].data()));
      }
    }
    return absl::OkStatus();
  };
  for (int i = 0; i < 20; ++i) HOGWILD_RETURN_IF_ERROR(one_step());
  HOGWILD_RETURN_IF_ERROR(b->Synchronize());
  constexpr int kIterations = 500;
  const Clock::time_point start = Clock::now();
  for (int i = 0; i < kIterations; ++i) HOGWILD_RETURN_IF_ERROR(one_step());
  HOGWILD_RETURN_IF_ERROR(b->Synchronize());
  const double per_step_s = Seconds(start, Clock::now()) / kIterations;
  const double flops =
      2.0 * batch *
      (2.0 * (kInputs * kHidden + kHidden * kHidden + kHidden * kClasses) +
       (kHidden * kHidden + kHidden * kClasses));
  return GemmLimit{.examples_per_s = batch / per_step_s, .gflop_per_s = flops / per_step_s / 1e9};
}

absl::StatusOr<double> TrainerThroughput(int64_t batch, int workers) {
  static const Dataset* const data = [] {
    auto* d = new Dataset();
    d->name = "random";
    d->example_shape = {kInputs};
    d->num_classes = kClasses;
    constexpr int64_t kExamples = 60000;
    d->features = RandomFloats(kExamples * kInputs, 3, 1.0f);
    d->labels.resize(kExamples);
    for (int64_t i = 0; i < kExamples; ++i) d->labels[i] = static_cast<int32_t>(i % kClasses);
    return d;
  }();
  TrainerOptions o;
  o.mode = Mode::kAsync;
  o.devices = {DeviceSpec::Gpu(0)};
  o.workers_per_device = workers;
  o.batch_size = batch;
  o.epochs = 1;
  o.lr.base_lr = 0.01f;
  o.model = ModelSpec{.name = "mlp", .hidden = {kHidden, kHidden}};
  o.eval_every_epochs = 0;
  HOGWILD_ASSIGN_OR_RETURN(TrainResult r, Train(o, *data, Dataset()));
  return r.examples_per_s;
}

void Report(const char* kind, int64_t batch, int workers, double examples_per_s,
            const std::string& extra_json = "") {
  std::printf("%-5s batch %5d  workers %d  %12.0f examples/s\n", kind, static_cast<int>(batch),
              workers, examples_per_s);
  std::printf("RESULT {\"kind\": \"%s\", \"batch\": %d, \"workers\": %d, \"examples_per_s\": %.1f%s}\n",
              kind, static_cast<int>(batch), workers, examples_per_s, extra_json.c_str());
  std::fflush(stdout);
}

int Run() {
  const absl::StatusOr<int> count = CudaDeviceCount();
  if (!count.ok()) {
    std::fprintf(stderr, "no CUDA device: %s\n", std::string(count.status().message()).c_str());
    return 2;
  }
  std::vector<int64_t> batches;
  std::vector<int> workers;
  for (absl::string_view s : absl::StrSplit(absl::GetFlag(FLAGS_batches), ',')) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(s, &v) || v < 1) {
      std::fprintf(stderr, "error: --batches: '%s' is not a positive integer\n", std::string(s).c_str());
      return 1;
    }
    batches.push_back(v);
  }
  for (absl::string_view s : absl::StrSplit(absl::GetFlag(FLAGS_workers), ',')) {
    int v = 0;
    if (!absl::SimpleAtoi(s, &v) || v < 1 || v > 64) {
      std::fprintf(stderr, "error: --workers: '%s' is not in [1, 64]\n", std::string(s).c_str());
      return 1;
    }
    workers.push_back(v);
  }
  absl::StatusOr<std::unique_ptr<Model>> model = Mlp();
  if (!model.ok()) {
    std::fprintf(stderr, "error: %s\n", model.status().ToString().c_str());
    return 1;
  }
  const double seconds = absl::GetFlag(FLAGS_seconds_per_case);
  int failures = 0;
  auto fail = [&](const char* what, const absl::Status& s) {
    std::fprintf(stderr, "error: %s: %s\n", what, s.ToString().c_str());
    ++failures;
  };
  for (int64_t batch : batches) {
    for (int w : workers) {
      absl::StatusOr<double> r = StepThroughput(**model, batch, w, seconds);
      if (r.ok()) Report("step", batch, w, *r); else fail("step", r.status());
    }
    absl::StatusOr<GemmLimit> g = GemmOnly(batch);
    if (g.ok()) {
      Report("gemm", batch, 1, g->examples_per_s,
             absl::StrFormat(", \"gflop_per_s\": %.1f", g->gflop_per_s));
    } else {
      fail("gemm", g.status());
    }
    if (absl::GetFlag(FLAGS_train)) {
      for (int w : workers) {
        absl::StatusOr<double> r = TrainerThroughput(batch, w);
        if (r.ok()) Report("train", batch, w, *r); else fail("train", r.status());
      }
    }
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace hogwild

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return hogwild::Run();
}

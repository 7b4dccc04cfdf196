// Towers on different threads share only the read-only model: running them concurrently must
// give bitwise the results of running them one after another. This catches thread-unsafe
// kernels, such as Debian's serial OpenBLAS, whose sgemm scratch buffers are shared between
// threads (that build failed here; third_party/system.BUILD uses the pthread build).
#include <random>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/cpu_backend.h"
#include "trainer/model/model.h"
#include "trainer/model/tower.h"

namespace hogwild {
namespace {

// The race this test hunts is in the BLAS library, which ThreadSanitizer does not instrument
// (only the bitwise comparison can see it), so the normal build runs the full 300 rounds and the
// TSan build, whose instrumented loops run about 10x slower, 40 rounds to stay within seconds.
#if defined(__SANITIZE_THREAD__)
constexpr int kIterations = 40;
#else
constexpr int kIterations = 300;
#endif

TEST(Tower, ConcurrentTowersMatchSequentialBitwise) {
  ModelSpec spec{.name = "mlp", .hidden = {256, 256}, .input_shape = {784}, .num_classes = 10};
  auto model = Model::Create(spec).value();
  std::vector<float> params(model->num_params());
  model->InitParams(7, absl::MakeSpan(params));
  constexpr int kBatch = 64;
  // The two threads use different batch sizes so their GEMMs have different shapes.
  constexpr int kBatches[2] = {64, 23};
  std::mt19937 rng(3);
  std::normal_distribution<float> normal;
  std::vector<float> x(kBatch * 784);
  std::vector<int32_t> y(kBatch);
  for (float& v : x) v = normal(rng);
  for (int32_t& v : y) v = rng() % 10;

  CpuBackend backend;
  auto tower = Tower::Create(model.get(), &backend, kBatch).value();
  std::vector<float> ref_grad[2];
  double ref_loss[2];
  for (int t = 0; t < 2; ++t) {
    ref_grad[t].resize(params.size());
    ref_loss[t] = tower->ForwardBackward(params.data(), kBatches[t], x.data(), y.data(),
                                         1.0f / kBatch, ref_grad[t].data()).value();
  }

  std::vector<int> mismatches(2, 0);
  auto run = [&](int t) {
    CpuBackend my_backend;
    auto my_tower = Tower::Create(model.get(), &my_backend, kBatch).value();
    std::vector<float> grad(params.size());
    for (int it = 0; it < kIterations; ++it) {
      const double loss = my_tower->ForwardBackward(params.data(), kBatches[t], x.data(),
                                                    y.data(), 1.0f / kBatch, grad.data()).value();
      if (loss != ref_loss[t] || grad != ref_grad[t]) ++mismatches[t];
    }
  };
  std::thread a(run, 0), b(run, 1);
  a.join();
  b.join();
  EXPECT_EQ(mismatches[0], 0);
  EXPECT_EQ(mismatches[1], 0);
}

}  // namespace
}  // namespace hogwild

// The CUDA backend's batch-norm ops (cuDNN) against the CPU backend's (kernels/cpu/batch_norm.h,
// itself checked against float64 and finite differences in batch_norm_test), on conv and dense
// shapes, outputs poisoned with NaN first; then cnn_bn's whole tower (training forward,
// backward, the statistics slots, and the inference forward) on both backends. Tolerances:
// float32 sums over N * S values in another order.
//
// Every test skips with "no CUDA device: <reason>" where there is no GPU.
#include <cmath>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/cuda/cuda_backend.h"
#include "tests/gpu_vs_cpu_fixture.h"
#include "trainer/model/model.h"
#include "trainer/model/tower.h"

namespace hogwild {
namespace {

using testing::ExpectAllNear;
using testing::RandomFloats;

class CudnnBatchNormTest : public testing::GpuVsCpuTest {};

TEST_F(CudnnBatchNormTest, OpsMatchTheCpuBackend) {
  for (const BatchNormShape& s : {BatchNormShape{.batch = 16, .channels = 32, .spatial = 784},
                                  BatchNormShape{.batch = 7, .channels = 256, .spatial = 1},
                                  BatchNormShape{.batch = 2, .channels = 3, .spatial = 5}}) {
    SCOPED_TRACE(::testing::Message()
                 << "N=" << s.batch << " C=" << s.channels << " S=" << s.spatial);
    const size_t n = s.size(), c = s.channels;
    const std::vector<float> x = RandomFloats(n, 1), dy = RandomFloats(n, 2),
                             gamma = RandomFloats(c, 3), beta = RandomFloats(c, 4),
                             mean = RandomFloats(c, 5);
    std::vector<float> var = RandomFloats(c, 6);
    for (float& v : var) v = v * v + 0.5f;
    std::vector<float> y(n), z(n), dx(n), dg(c), db(c), sm(c), sv(c);
    ASSERT_TRUE(
        cpu_.BatchNormForwardTraining(s, x.data(), gamma.data(), beta.data(), y.data()).ok());
    ASSERT_TRUE(cpu_.BatchNormForwardInference(s, x.data(), gamma.data(), beta.data(), mean.data(),
                                               var.data(), z.data())
                    .ok());
    ASSERT_TRUE(cpu_.BatchNormBackward(s, x.data(), dy.data(), gamma.data(), dx.data(), dg.data(),
                                       db.data())
                    .ok());
    ASSERT_TRUE(cpu_.BatchNormStatistics(s, x.data(), 0.25f, sm.data(), sv.data()).ok());

    float *x_d = Upload(x), *dy_d = Upload(dy), *g_d = Upload(gamma), *b_d = Upload(beta),
          *m_d = Upload(mean), *v_d = Upload(var);
    float *y_d = Poisoned(n), *z_d = Poisoned(n), *dx_d = Poisoned(n), *dg_d = Poisoned(c),
          *db_d = Poisoned(c), *sm_d = Poisoned(c), *sv_d = Poisoned(c);
    ASSERT_TRUE(gpu_->BatchNormForwardTraining(s, x_d, g_d, b_d, y_d).ok());
    ASSERT_TRUE(gpu_->BatchNormForwardInference(s, x_d, g_d, b_d, m_d, v_d, z_d).ok());
    ASSERT_TRUE(gpu_->BatchNormBackward(s, x_d, dy_d, g_d, dx_d, dg_d, db_d).ok());
    ASSERT_TRUE(gpu_->BatchNormStatistics(s, x_d, 0.25f, sm_d, sv_d).ok());
    const double terms = static_cast<double>(s.per_channel());
    ExpectAllNear(Download(y_d, n), y, 1e-5, "y (training)");
    ExpectAllNear(Download(z_d, n), z, 1e-5, "y (inference)");
    ExpectAllNear(Download(dx_d, n), dx, 1e-6 * terms + 1e-5, "dx");
    ExpectAllNear(Download(dg_d, c), dg, 1e-6 * terms, "dgamma");
    ExpectAllNear(Download(db_d, c), db, 1e-6 * terms, "dbeta");
    ExpectAllNear(Download(sm_d, c), sm, 1e-5, "weighted mean");
    ExpectAllNear(Download(sv_d, c), sv, 1e-5, "weighted unbiased variance");
  }
}

// cnn_bn through the Tower on both backends: loss, gradient (statistics slots included) and the
// inference logits agree.
TEST_F(CudnnBatchNormTest, CnnBnTowerMatchesTheCpuBackend) {
  auto model = Model::Create(ModelSpec{.name = "cnn_bn", .input_shape = {1, 28, 28}});
  ASSERT_TRUE(model.ok()) << model.status();
  const int64_t batch = 8, p = (*model)->num_params();
  std::vector<float> params(p);
  (*model)->InitParams(3, absl::MakeSpan(params));
  const std::vector<float> features = RandomFloats(batch * 784, 7);
  std::vector<int32_t> labels(batch);
  for (int64_t i = 0; i < batch; ++i) labels[i] = static_cast<int32_t>(i % 10);
  auto cpu_tower = Tower::Create(model->get(), &cpu_, batch);
  ASSERT_TRUE(cpu_tower.ok());
  std::vector<float> cpu_grad(p);
  auto cpu_loss = (*cpu_tower)
                      ->ForwardBackward(params.data(), batch, features.data(), labels.data(),
                                        1.0f / 16, cpu_grad.data());
  ASSERT_TRUE(cpu_loss.ok()) << cpu_loss.status();
  auto cpu_logits = (*cpu_tower)->Forward(params.data(), batch, features.data());
  ASSERT_TRUE(cpu_logits.ok());
  const std::vector<float> cpu_out(*cpu_logits, *cpu_logits + batch * 10);

  auto gpu_tower = Tower::Create(model->get(), gpu_.get(), batch);
  ASSERT_TRUE(gpu_tower.ok());
  float* params_d = Upload(params);
  float* features_d = Upload(features);
  const int32_t* labels_d = Upload(labels);
  float* grad_d = Poisoned(p);
  auto gpu_loss =
      (*gpu_tower)->ForwardBackward(params_d, batch, features_d, labels_d, 1.0f / 16, grad_d);
  ASSERT_TRUE(gpu_loss.ok()) << gpu_loss.status();
  EXPECT_NEAR(*gpu_loss, *cpu_loss, 1e-4 * std::abs(*cpu_loss));
  ExpectAllNear(Download(grad_d, p), cpu_grad, 1e-4, "gradient");
  auto gpu_logits = (*gpu_tower)->Forward(params_d, batch, features_d);
  ASSERT_TRUE(gpu_logits.ok());
  ExpectAllNear(Download(*gpu_logits, batch * 10), cpu_out, 1e-4, "inference logits");
}

}  // namespace
}  // namespace hogwild

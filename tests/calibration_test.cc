// Calibration of the simulator's time model (sim/calibration.h): the fit recovers the parameters
// of step times drawn from the model itself (ComputeTimeSampler: 20,000 steps per worker, mean
// within 2%, jitter within 3%, a straggler's factor within 3%, the others' within 3% of 1),
// the log reader takes each worker's consecutive train rows' differences, and bad input is
// refused with one line naming it.
#include "sim/calibration.h"

#include <cmath>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "sim/compute_time.h"
#include "tests/expect_error.h"

namespace hogwild {
namespace {

TEST(Calibration, RecoversTheModelsParameters) {
  for (const double jitter : {0.0, 0.3, 1.0}) {
    const ComputeTimeOptions truth{
        .step_time_s = 0.010, .jitter = jitter, .stragglers = {{1, 2.5}}};
    ComputeTimeSampler sampler(truth, 3, /*seed=*/7);
    std::vector<std::vector<double>> times(3);
    for (int k = 0; k < 20000; ++k) {
      for (int w = 0; w < 3; ++w) times[w].push_back(sampler.Next(w));
    }
    absl::StatusOr<ComputeTimeOptions> fit = FitComputeTimes(times);
    ASSERT_TRUE(fit.ok()) << fit.status();
    SCOPED_TRACE(::testing::Message() << "jitter " << jitter);
    EXPECT_NEAR(fit->step_time_s, 0.010, 0.02 * 0.010);
    EXPECT_NEAR(fit->jitter, jitter, 0.03 * jitter + 1e-12);
    double factor1 = 0.0;
    for (const auto& [w, factor] : fit->stragglers) {
      if (w == 1) {
        factor1 = factor;
      } else {
        EXPECT_NEAR(factor, 1.0, 0.03) << "worker " << w;
      }
    }
    EXPECT_NEAR(factor1, 2.5, 0.03 * 2.5);
    EXPECT_TRUE(ValidateComputeTimeOptions(*fit, 3).ok());
  }
}

TEST(Calibration, ReadsEachWorkersStepTimesFromALog) {
  const std::string csv =
      "wall_time_s,kind,epoch,step,worker,train_loss\n"
      "0.50,train,0,1,0,2.3\n"
      "0.52,train,0,2,1,2.3\n"
      "0.60,train,0,3,0,2.2\n"
      "0.70,eval,0,3,-1,\n"
      "0.72,train,0,4,1,2.1\n"
      "0.75,train,0,5,0,2.0\n";
  absl::StatusOr<std::vector<std::vector<double>>> times = StepTimesFromLog(csv, "run.csv");
  ASSERT_TRUE(times.ok()) << times.status();
  ASSERT_EQ(times->size(), 2u);
  ASSERT_EQ((*times)[0].size(), 2u);
  EXPECT_NEAR((*times)[0][0], 0.10, 1e-12);
  EXPECT_NEAR((*times)[0][1], 0.15, 1e-12);
  ASSERT_EQ((*times)[1].size(), 1u);
  EXPECT_NEAR((*times)[1][0], 0.20, 1e-12);
}

TEST(Calibration, RefusesWhatItCannotFit) {
  testing::ExpectError(StepTimesFromLog("", "a.csv").status(), absl::StatusCode::kInvalidArgument,
                       {"a.csv: empty"});
  testing::ExpectError(StepTimesFromLog("x,y\n1,2\n", "a.csv").status(),
                       absl::StatusCode::kInvalidArgument, {"a.csv: not a CSV convergence log"});
  testing::ExpectError(
      StepTimesFromLog("wall_time_s,kind,step,worker\n1,train,1\n", "a.csv").status(),
      absl::StatusCode::kInvalidArgument, {"a.csv:2: 3 fields, the header has 4"});
  testing::ExpectError(
      StepTimesFromLog("wall_time_s,kind,step,worker\nabc,train,1,0\n", "a.csv").status(),
      absl::StatusCode::kInvalidArgument, {"a.csv:2: wall_time_s 'abc'", "is not a number"});
  testing::ExpectError(
      StepTimesFromLog("wall_time_s,kind,step,worker\n1,eval,1,-1\n", "a.csv").status(),
      absl::StatusCode::kInvalidArgument, {"a.csv: no train rows"});
  testing::ExpectError(
      StepTimesFromLog("wall_time_s,kind,step,worker\n1,train,1,1\n2,train,2,1\n", "a.csv")
          .status(),
      absl::StatusCode::kInvalidArgument, {"a.csv: worker 0 has no train rows"});
  // One worker's rows 100 steps apart: a log written with --log_every=100.
  testing::ExpectError(
      StepTimesFromLog("wall_time_s,kind,step,worker\n1,train,100,0\n2,train,200,0\n"
                       "3,train,300,0\n",
                       "a.csv")
          .status(),
      absl::StatusCode::kInvalidArgument,
      {"a.csv: 3 train rows over 201 global steps, a worker's rows 100 steps apart (median): the "
       "log was not written every step; rerun the real run with --log_every=1"});
  // Two async workers logging every second step: half as many rows as steps.
  testing::ExpectError(
      StepTimesFromLog("wall_time_s,kind,step,worker\n1,train,2,0\n1,train,4,1\n2,train,6,0\n"
                       "2,train,8,1\n3,train,10,0\n3,train,12,1\n",
                       "a.csv")
          .status(),
      absl::StatusCode::kInvalidArgument, {"6 train rows over 11 global steps"});
  // Logged every step, both pass.
  EXPECT_TRUE(StepTimesFromLog("wall_time_s,kind,step,worker\n1,train,1,0\n1,train,2,1\n"
                               "2,train,3,0\n2,train,4,1\n3,train,5,0\n3,train,6,1\n",
                               "a.csv")
                  .ok());
  EXPECT_TRUE(StepTimesFromLog("wall_time_s,kind,step,worker\n1,train,1,0\n1,train,1,1\n"
                               "2,train,2,0\n2,train,2,1\n3,train,3,0\n3,train,3,1\n",
                               "a.csv")
                  .ok());
  testing::ExpectError(FitComputeTimes({{0.1, 0.2}, {0.3}}).status(),
                       absl::StatusCode::kInvalidArgument,
                       {"worker 1 has 1 step times; calibration needs at least 2 per worker"});
  testing::ExpectError(FitComputeTimes({{0.1, -0.2}}).status(), absl::StatusCode::kInvalidArgument,
                       {"worker 0 has a step time of -0.2 s"});
  testing::ExpectError(FitComputeTimes({}).status(), absl::StatusCode::kInvalidArgument,
                       {"no worker's step times"});
}

}  // namespace
}  // namespace hogwild

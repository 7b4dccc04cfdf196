// Prediction (trainer/predict): the model rebuilt from a checkpoint's signature, predictions
// that agree with the trainer's own evaluation of the same checkpoint (raw and EMA weights), the
// CSV file, and each bad input refused with one line before anything is written.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/expect_error.h"
#include "tests/idx_files.h"
#include "tests/test_data.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/data/mnist.h"
#include "trainer/predict/checkpoint_model.h"
#include "trainer/predict/prediction_csv.h"
#include "trainer/predict/prediction_run.h"
#include "trainer/predict/predictor.h"
#include "trainer/trainer.h"

namespace hogwild {
namespace {

using ::hogwild::testing::ExpectError;
using ::hogwild::testing::FreshDir;

// The signature Train() would store for `spec`: the model's layers and parameter count.
CheckpointSignature SignatureOf(const ModelSpec& spec) {
  auto model = Model::Create(spec);
  EXPECT_TRUE(model.ok()) << model.status();
  CheckpointSignature s;
  s.model_name = spec.name;
  s.input_shape = spec.input_shape;
  s.num_classes = spec.num_classes;
  for (const auto& layer : (*model)->layers()) s.layers.push_back(layer->name());
  s.num_params = (*model)->num_params();
  s.num_workers = 1;
  s.batch_size = 10;
  return s;
}

TEST(CheckpointModel, RebuildsEveryModelFromItsSignature) {
  for (const ModelSpec& spec :
       {ModelSpec{.name = "mlp", .hidden = {32, 16}}, ModelSpec{.name = "logreg", .hidden = {}},
        ModelSpec{.name = "cnn", .hidden = {}, .input_shape = {3, 32, 32}}}) {
    const CheckpointSignature signature = SignatureOf(spec);
    auto model = ModelFromSignature(signature, "ckpt");
    ASSERT_TRUE(model.ok()) << model.status();
    EXPECT_EQ((*model)->num_params(), signature.num_params) << spec.name;
    EXPECT_EQ((*model)->spec().hidden, spec.hidden) << spec.name;
    EXPECT_EQ((*model)->spec().input_shape, spec.input_shape) << spec.name;
  }
}

TEST(CheckpointModel, RefusesAModelThisBuildCannotRebuild) {
  CheckpointSignature signature = SignatureOf(ModelSpec{.name = "mlp", .hidden = {32}});
  signature.num_params += 1;
  ExpectError(ModelFromSignature(signature, "ckpt").status(), absl::StatusCode::kFailedPrecondition,
              {"ckpt", "dense 784->32", std::to_string(signature.num_params),
               std::to_string(signature.num_params - 1)});
  signature = SignatureOf(ModelSpec{.name = "mlp", .hidden = {32}});
  signature.model_name = "resnet";
  ExpectError(ModelFromSignature(signature, "ckpt").status(), absl::StatusCode::kInvalidArgument,
              {"ckpt", "resnet"});
  // A checkpoint of //sparse:train names the program that reads it, not "unknown model".
  for (const char* sparse_model : {"sparse_logreg", "sparse_svm", "mf"}) {
    signature = SignatureOf(ModelSpec{.name = "mlp", .hidden = {32}});
    signature.model_name = sparse_model;
    ExpectError(ModelFromSignature(signature, "ckpt").status(),
                absl::StatusCode::kFailedPrecondition, {"ckpt", sparse_model, "//sparse:train"});
  }
  signature = SignatureOf(ModelSpec{.name = "mlp", .hidden = {32}});
  signature.layers[0] = "dense 784 to 32";
  ExpectError(ModelFromSignature(signature, "ckpt").status(), absl::StatusCode::kInvalidArgument,
              {"ckpt", "'dense 784 to 32'"});
}

TEST(Predictor, ProbabilitiesAreASoftmaxWhoseArgmaxIsThePrediction) {
  const Dataset data = testing::SyntheticDataset(37, 5, 4, 1);
  auto model = Model::Create({.name = "mlp", .hidden = {7}, .input_shape = {5}, .num_classes = 4});
  ASSERT_TRUE(model.ok());
  std::vector<float> params((*model)->num_params());
  (*model)->InitParams(3, absl::MakeSpan(params));
  auto p = Predict(**model, params, data, /*batch=*/8);  // chunks of 8, the last of 5
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->size(), 37);
  int64_t correct = 0;
  for (int64_t i = 0; i < 37; ++i) {
    const float* row = p->probabilities.data() + i * 4;
    double sum = 0;
    for (int k = 0; k < 4; ++k) {
      EXPECT_GT(row[k], 0.0f);
      EXPECT_LE(row[k], row[p->predicted[i]]);
      sum += row[k];
    }
    EXPECT_NEAR(sum, 1.0, 1e-6);
    correct += p->predicted[i] == data.labels[i];
  }
  EXPECT_EQ(p->correct, correct);
}

TEST(Predictor, RefusesExamplesOfAnotherShape) {
  auto model = Model::Create({.name = "cnn", .hidden = {}, .input_shape = {3, 32, 32}});
  ASSERT_TRUE(model.ok());
  std::vector<float> params((*model)->num_params(), 0.0f);
  Dataset data = testing::SyntheticDataset(2, 784, 10, 1);
  data.example_shape = {1, 28, 28};
  ExpectError(Predict(**model, params, data).status(), absl::StatusCode::kFailedPrecondition,
              {"1x28x28", "3x32x32", "cnn"});
}

// A small learnable dataset in Fashion-MNIST's IDX files: the label's band of rows is bright.
void WriteIdxDataset(const std::string& dir, const std::string& split, int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string pixels, labels;
  for (int i = 0; i < n; ++i) {
    const int label = static_cast<int>(rng() % 10);
    labels.push_back(static_cast<char>(label));
    for (int j = 0; j < 784; ++j) {
      const bool band = j / 28 / 3 == label;
      pixels.push_back(static_cast<char>(rng() % 160 + (band ? 90 : 0)));
    }
  }
  testing::WriteFile(dir + "/" + split + "-images-idx3-ubyte", testing::Idx3(n, 28, 28, pixels));
  testing::WriteFile(dir + "/" + split + "-labels-idx1-ubyte",
                     testing::Idx(0x801, {static_cast<uint32_t>(n)}, labels));
}

struct TrainedRun {
  std::string data_dir;
  std::string checkpoint_dir;
  TrainResult result;
};

// A short run of both modes' kind on the small IDX dataset with a checkpoint at the end.
TrainedRun TrainWithCheckpoint(Mode mode, float ema_decay) {
  TrainedRun run;
  const std::string root = FreshDir();
  run.data_dir = root + "/data";
  run.checkpoint_dir = root + "/ckpt";
  std::filesystem::create_directories(run.data_dir);
  WriteIdxDataset(run.data_dir, "train", 400, 1);
  WriteIdxDataset(run.data_dir, "t10k", 150, 2);
  auto info = LookupDataset("fashion_mnist");
  EXPECT_TRUE(info.ok());
  auto splits = LoadTrainTest(*info, run.data_dir, /*train_examples=*/300, "train_examples");
  EXPECT_TRUE(splits.ok()) << splits.status();
  TrainerOptions o;
  o.mode = mode;
  o.num_workers = 2;
  o.batch_size = 20;
  o.epochs = 2;
  o.model = ModelSpec{.name = "mlp", .hidden = {16, 8}};
  o.lr.base_lr = 0.05f;
  o.eval_every_epochs = 0;
  o.ema_decay = ema_decay;
  o.checkpoint_dir = run.checkpoint_dir;
  auto result = Train(o, splits->train, splits->test);
  EXPECT_TRUE(result.ok()) << result.status();
  if (result.ok()) run.result = *result;
  return run;
}

TEST(PredictionRun, EqualsTheTrainersTestAccuracyForRawAndEmaWeights) {
  for (Mode mode : {Mode::kAsync, Mode::kSync}) {
    const TrainedRun run = TrainWithCheckpoint(mode, 0.9f);
    ASSERT_GT(run.result.final_test_accuracy, 0.2) << "the run learned nothing";
    for (const bool ema : {false, true}) {
      auto p = RunPrediction(
          {.checkpoint_dir = run.checkpoint_dir, .data_dir = run.data_dir, .ema = ema});
      ASSERT_TRUE(p.ok()) << p.status();
      EXPECT_TRUE(p->warning.empty()) << p->warning;
      EXPECT_EQ(p->predictions.size(), 150);
      EXPECT_EQ(p->predictions.accuracy(),
                ema ? run.result.final_ema_test_accuracy : run.result.final_test_accuracy)
          << ModeName(mode) << (ema ? " EMA" : " raw");
      EXPECT_EQ(p->global_step, run.result.steps);
    }
    // The training split is the 300 examples the run used.
    auto train = RunPrediction(
        {.checkpoint_dir = run.checkpoint_dir, .data_dir = run.data_dir, .split = "train"});
    ASSERT_TRUE(train.ok()) << train.status();
    EXPECT_EQ(train->predictions.size(), 300);
  }
}

TEST(PredictionRun, RefusesEachBadInputWithOneLine) {
  const TrainedRun run = TrainWithCheckpoint(Mode::kSync, 0.0f);
  const std::string root = std::filesystem::path(run.checkpoint_dir).parent_path().string();
  const std::string empty = root + "/empty";
  std::filesystem::create_directories(empty);
  ExpectError(RunPrediction({.checkpoint_dir = empty + "/nope"}).status(),
              absl::StatusCode::kNotFound, {"--checkpoint_dir=" + empty + "/nope"});
  ExpectError(RunPrediction({.checkpoint_dir = empty}).status(), absl::StatusCode::kNotFound,
              {"--checkpoint_dir=" + empty, "no checkpoint"});
  ExpectError(
      RunPrediction({.checkpoint_dir = run.checkpoint_dir, .data_dir = run.data_dir, .ema = true})
          .status(),
      absl::StatusCode::kFailedPrecondition, {"--weights=ema", "--ema_decay"});
  ExpectError(RunPrediction({.checkpoint_dir = run.checkpoint_dir, .data_dir = empty}).status(),
              absl::StatusCode::kNotFound, {empty, "train-images-idx3-ubyte"});
  ExpectError(
      RunPrediction(
          {.checkpoint_dir = run.checkpoint_dir, .data_dir = run.data_dir, .split = "validation"})
          .status(),
      absl::StatusCode::kInvalidArgument, {"--split=validation"});
  // Images of another shape: a cnn checkpoint for 3x32x32 images, data of 28x28.
  Checkpoint other;
  other.signature = SignatureOf(ModelSpec{.name = "cnn", .hidden = {}, .input_shape = {3, 32, 32}});
  other.signature.dataset = DatasetId{.name = "fashion_mnist", .fingerprint = 0};
  other.signature.train_examples = 300;
  other.next_step = {0};
  other.params.assign(other.signature.num_params, 0.0f);
  const std::string other_dir = root + "/other";
  ASSERT_TRUE(WriteCheckpoint(other_dir, other).ok());
  // (Its fingerprint is not this data's: allowed, so that the shape is what is refused.)
  auto shape = RunPrediction(
      {.checkpoint_dir = other_dir, .data_dir = run.data_dir, .allow_other_dataset = true});
  ExpectError(shape.status(), absl::StatusCode::kFailedPrecondition, {"1x28x28", "3x32x32"});
}

TEST(PredictionRun, RefusesAnotherDatasetUnlessAllowed) {
  const TrainedRun run = TrainWithCheckpoint(Mode::kAsync, 0.0f);
  const std::string origin = run.checkpoint_dir + "/checkpoint.hwckpt";
  const std::string hint =
      "leave out --dataset and give the --data_dir of its training set, or pass "
      "--allow_other_dataset to predict on this one anyway";
  auto named = RunPrediction(
      {.checkpoint_dir = run.checkpoint_dir, .data_dir = run.data_dir, .dataset = "mnist"});
  EXPECT_EQ(named.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(named.status().message(),
            "--dataset=mnist: " + origin + " was trained on fashion_mnist; " + hint);
  // The same name, other files: the fingerprint tells them apart.
  const std::string other = std::filesystem::path(run.data_dir).parent_path().string() + "/other";
  std::filesystem::create_directories(other);
  WriteIdxDataset(other, "train", 400, 3);
  WriteIdxDataset(other, "t10k", 150, 2);
  auto found = RunPrediction({.checkpoint_dir = run.checkpoint_dir, .data_dir = other});
  EXPECT_EQ(found.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StartsWith(found.status().message(), "the fashion_mnist training set in " +
                                                             other + " is not the one " + origin +
                                                             " was trained on (fingerprint 0x"))
      << found.status();
  EXPECT_TRUE(absl::EndsWith(found.status().message(), "); " + hint)) << found.status();
  auto allowed = RunPrediction(
      {.checkpoint_dir = run.checkpoint_dir, .data_dir = other, .allow_other_dataset = true});
  ASSERT_TRUE(allowed.ok()) << allowed.status();
  EXPECT_FALSE(allowed->warning.empty());
}

TEST(PredictionRun, RefusesAModelWhoseOutputsAreNotFinite) {
  const TrainedRun run = TrainWithCheckpoint(Mode::kAsync, 0.0f);
  auto read = ReadLatestCheckpoint(run.checkpoint_dir);
  ASSERT_TRUE(read.ok() && read->has_value()) << read.status();
  // Finite weights whose products overflow (as the last step of a diverged run leaves them).
  Checkpoint huge = **read;
  huge.params.assign(huge.params.size(), 3e38f);
  for (size_t i = 0; i < huge.params.size(); i += 2) huge.params[i] = -3e38f;
  const std::string dir =
      std::filesystem::path(run.checkpoint_dir).parent_path().string() + "/huge";
  ASSERT_TRUE(WriteCheckpoint(dir, huge).ok());
  auto p = RunPrediction({.checkpoint_dir = dir, .data_dir = run.data_dir});
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(p.status().message(),
            absl::StrFormat("%s/checkpoint.hwckpt: training diverged: class probability 0 is nan "
                            "at global step %d; lower --lr (or --weight_decay or --momentum)",
                            dir, huge.global_step));
}

TEST(PredictionCsv, WritesAHeaderAndOneRowPerExampleAndRefusesToOverwrite) {
  Predictions p;
  p.num_classes = 3;
  p.predicted = {2, 0};
  p.probabilities = {0.25f, 0.25f, 0.5f, 0.7f, 0.2f, 0.1f};
  const std::string path = FreshDir() + "/predictions.csv";
  ASSERT_TRUE(WritePredictionsFile(p, path, /*overwrite=*/false).ok());
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(),
            "index,predicted_class,p0,p1,p2\n0,2,0.25,0.25,0.5\n"
            "1,0,0.699999988,0.200000003,0.100000001\n");
  ExpectError(WritePredictionsFile(p, path, false), absl::StatusCode::kAlreadyExists,
              {"--output=" + path, "--overwrite"});
  p.predicted = {1, 1};
  ASSERT_TRUE(WritePredictionsFile(p, path, /*overwrite=*/true).ok());
  std::ifstream again(path);
  std::string header, row;
  std::getline(again, header);
  std::getline(again, row);
  EXPECT_EQ(row.substr(0, 4), "0,1,");
  // No temporary file is left beside it.
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(folder),
                          std::filesystem::directory_iterator()),
            1);
}

TEST(PredictionCsv, AFolderWhereNoFileCanBeCreatedIsRefusedUpFrontNamingThePath) {
  // /proc takes no new files, even for root (a read-only or permission-less folder alike).
  ExpectError(CheckPredictionOutput("--output", "/proc/p.csv", /*overwrite=*/false),
              absl::StatusCode::kPermissionDenied,
              {"--output=/proc/p.csv: cannot create a file in /proc", "choose a folder"});
  // Nothing says the temporary name, and nothing is left behind.
  const std::string dir = FreshDir();
  ASSERT_TRUE(CheckPredictionOutput("--output", dir + "/p.csv", false).ok());
  EXPECT_TRUE(std::filesystem::is_empty(dir));
}

}  // namespace
}  // namespace hogwild

#include "trainer/memory_estimate.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "kernels/optimizer.h"

namespace hogwild {
namespace {

// The products below can pass 2^63 for absurd options (thousands of 65536-wide layers times
// thousands of workers): add and multiply in double, then saturate.
int64_t Saturate(double bytes) {
  constexpr double kMax = static_cast<double>(std::numeric_limits<int64_t>::max());
  return bytes >= kMax ? std::numeric_limits<int64_t>::max() : static_cast<int64_t>(bytes);
}

std::string Bytes(int64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (b >= 1024.0 * 1024 * 1024) return absl::StrFormat("%.1f GiB", b / (1024.0 * 1024 * 1024));
  if (b >= 1024.0 * 1024) return absl::StrFormat("%.1f MiB", b / (1024.0 * 1024));
  return absl::StrFormat("%.1f KiB", b / 1024.0);
}

// The evaluator's chunk (trainer/metrics/evaluator.h's default batch).
constexpr double kEvalBatch = 1000;

// Per-example floats of one tower: every layer's output, two backward buffers of the widest
// width, and the im2col column of the largest convolution (CPU backend, one example at a time).
struct TowerFloats {
  double per_example = 0;
  double fixed = 0;
};

TowerFloats TowerSize(const Model& model) {
  double sum = 0;
  double widest = static_cast<double>(model.input_features());
  double column = 0;
  for (const auto& layer : model.layers()) {
    const Shape out = layer->output_shape();
    const double width = static_cast<double>(NumElements(out));
    sum += width;
    widest = std::max(widest, width);
    // A layer with parameters and a [C, H, W] output is a convolution: its weights are
    // [C, C_in, kh, kw] plus a bias [C], so its im2col column is (P/C - 1) x H x W floats.
    if (out.size() == 3 && layer->num_params() > 0 && out[0] > 0) {
      const double channels = static_cast<double>(out[0]);
      const double rows = static_cast<double>(layer->num_params()) / channels - 1;
      column = std::max(column, rows * static_cast<double>(out[1] * out[2]));
    }
  }
  return {.per_example = sum + 2 * widest, .fixed = column};
}

}  // namespace

int64_t MemoryEstimate::total_bytes() const {
  return Saturate(static_cast<double>(parameters_bytes) + snapshots_bytes + optimizer_bytes +
                  gradients_bytes + activations_bytes + input_bytes + evaluation_bytes +
                  checkpoint_bytes);
}

std::string MemoryEstimate::ToString() const {
  std::vector<std::string> parts;
  const std::pair<const char*, int64_t> named[] = {
      {"parameters", parameters_bytes},     {"parameter snapshots", snapshots_bytes},
      {"optimizer state", optimizer_bytes}, {"gradients", gradients_bytes},
      {"activations", activations_bytes},   {"input batches", input_bytes},
      {"evaluation", evaluation_bytes},     {"checkpoints", checkpoint_bytes}};
  for (const auto& [name, bytes] : named) {
    if (bytes > 0) parts.push_back(absl::StrCat(name, " ", Bytes(bytes)));
  }
  return absl::StrFormat("%s (%s)", Bytes(total_bytes()), absl::StrJoin(parts, ", "));
}

MemoryEstimate EstimateTrainingMemory(const TrainerOptions& options, const Model& model,
                                      int64_t train_examples, bool has_test_set) {
  constexpr double kFloat = sizeof(float);
  const double p = static_cast<double>(model.num_params());
  const double w = std::max(1, WorkerCount(options));
  const double b = static_cast<double>(std::max<int64_t>(1, options.batch_size));
  const double d = static_cast<double>(model.input_features());
  // Optimizer-state buffers per owner (kernels/optimizer.h: 1 for momentum, 2 for Adam).
  const double slots = NumStateSlots(options.sgd.optimizer_params());
  // ssp, locked and round_robin keep async's per-worker state (they run Hogwild) and its
  // per-worker data.
  const bool async = !SplitsGlobalBatch(options.mode);
  const TowerFloats tower = TowerSize(model);

  MemoryEstimate e;
  e.parameters_bytes = Saturate(2 * p * kFloat);
  // Async (sync/hogwild.h): a snapshot per worker, and the optimizer state per worker (once
  // when shared). Sync (sync/tower_average.h): one optimizer state; the average is written into
  // a [P] buffer. Backup (sync/backup_sync.h): a snapshot per worker and one optimizer state.
  // Local SGD (sync/local_sgd.h): a replica and optimizer state per worker, as async.
  const bool per_worker = async || options.mode == Mode::kLocalSgd;
  const double owners = per_worker && !options.sgd.shared_optimizer_state ? w : 1;
  const bool snapshots = per_worker || options.mode == Mode::kBackup;
  e.snapshots_bytes = Saturate((snapshots ? w : 0) * p * kFloat);
  e.optimizer_bytes = Saturate((per_worker ? owners : 1) * slots * p * kFloat);
  e.gradients_bytes = Saturate((w + (snapshots ? 0 : 1)) * p * kFloat);
  // Every worker's tower is sized for options.batch_size examples, in sync mode too.
  e.activations_bytes = Saturate(w * (b * tower.per_example + tower.fixed) * kFloat);
  // A worker's queue holds `prefetch` batches, its producer builds one more and the worker holds
  // one: features [rows, D] floats, labels and row indices. Sync shards the global batch.
  const double rows = async ? b : std::ceil(b / w);
  const double batch_bytes = rows * (d * kFloat + sizeof(int32_t) + sizeof(int64_t));
  const double orders = 2 * static_cast<double>(std::max<int64_t>(0, train_examples)) * 8;
  e.input_bytes = Saturate(w * ((options.prefetch + 2) * batch_bytes + orders));
  if (has_test_set) {
    // The evaluator's own tower, parameters and feature chunk, and one snapshot (the queue of
    // snapshots behind a slow evaluator, trainer/metrics/eval_runner.h, is not counted).
    e.evaluation_bytes =
        Saturate((kEvalBatch * (tower.per_example + d) + tower.fixed + 2 * p) * kFloat);
  }
  if (!options.checkpoint_dir.empty()) {
    // The captured state (parameters and optimizer state) and its serialized image.
    const double state_copies = slots * (async && !options.sgd.shared_optimizer_state ? w : 1);
    e.checkpoint_bytes = Saturate(2 * (1 + state_copies) * p * kFloat);
  }
  return e;
}

std::optional<int64_t> AvailableMemoryBytes(int threads) {
  std::optional<int64_t> available;
  std::ifstream meminfo("/proc/meminfo");
  for (std::string line; std::getline(meminfo, line);) {
    absl::string_view rest = line;
    int64_t kib = 0;
    if (absl::ConsumePrefix(&rest, "MemAvailable:") && absl::ConsumeSuffix(&rest, " kB") &&
        absl::SimpleAtoi(absl::StripAsciiWhitespace(rest), &kib)) {
      available = kib * 1024;
      break;
    }
  }
  if (!available) {
    const long pages = sysconf(_SC_AVPHYS_PAGES);
    const long page_size = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page_size > 0) available = static_cast<int64_t>(pages) * page_size;
  }
  // A container's limit is lower than the machine's free memory, and /proc/meminfo shows the
  // machine's. cgroup v2 only; "max" means no limit.
  std::ifstream max_file("/sys/fs/cgroup/memory.max");
  std::ifstream current_file("/sys/fs/cgroup/memory.current");
  std::string max_text, current_text;
  int64_t max = 0, current = 0;
  if (max_file >> max_text && current_file >> current_text && absl::SimpleAtoi(max_text, &max) &&
      absl::SimpleAtoi(current_text, &current)) {
    const int64_t headroom = std::max<int64_t>(0, max - current);
    available = available ? std::min(*available, headroom) : headroom;
  }
  // Under `ulimit -v` every mapping counts, touched or not: what is mapped already and what the
  // run's threads will map besides the estimate's heap.
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    int64_t mapped = 0;
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);) {
      absl::string_view rest = line;
      int64_t kib = 0;
      if (absl::ConsumePrefix(&rest, "VmSize:") && absl::ConsumeSuffix(&rest, " kB") &&
          absl::SimpleAtoi(absl::StripAsciiWhitespace(rest), &kib)) {
        mapped = kib * 1024;
        break;
      }
    }
    const int64_t cap =
        static_cast<int64_t>(std::min<rlim_t>(limit.rlim_cur, std::numeric_limits<int64_t>::max()));
    const int64_t headroom =
        std::max<int64_t>(0, cap - mapped - std::max(0, threads) * kAddressSpacePerThreadBytes);
    available = available ? std::min(*available, headroom) : headroom;
  }
  return available;
}

absl::Status CheckMemoryFits(const MemoryEstimate& estimate,
                             std::optional<int64_t> available_bytes) {
  if (!available_bytes || estimate.total_bytes() <= *available_bytes) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrFormat(
      "the run needs about %s of memory but only %s is available; use a smaller model, batch "
      "or fewer workers",
      estimate.ToString(), Bytes(*available_bytes)));
}

}  // namespace hogwild

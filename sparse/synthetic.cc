#include "sparse/synthetic.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>

#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "core/splitmix64.h"
#include "core/status_macros.h"

namespace hogwild::sparse {
namespace {

// Draws from SplitMix64 of (key, counter): independent streams per row and per feature.
class Stream {
 public:
  explicit Stream(uint64_t key) : key_(SplitMix64(key)) {}
  uint64_t Next() { return SplitMix64(key_ + 0x9e3779b97f4a7c15ull * ++count_); }
  // Uniform in [0, 1) with 53 random bits.
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }
  // Standard normal (Box-Muller; 1 - u keeps the logarithm's argument in (0, 1]).
  double Normal() {
    const double u = 1.0 - Uniform();
    const double v = Uniform();
    return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * std::numbers::pi * v);
  }

 private:
  uint64_t key_;
  uint64_t count_ = 0;
};

// Separate key spaces for the rows and the planted weights.
uint64_t RowKey(uint64_t seed, int64_t i) {
  return SplitMix64(seed) ^ (2 * static_cast<uint64_t>(i));
}
uint64_t FeatureKey(uint64_t seed, int64_t j) {
  return SplitMix64(seed) ^ (2 * static_cast<uint64_t>(j) + 1);
}

// "--flag=value" for a flag, "field = value" for a field.
absl::Status OutOfRange(const char* name, double value, const std::string& range) {
  const bool flag = absl::string_view(name).substr(0, 2) == "--";
  return absl::InvalidArgumentError(absl::StrFormat("synthetic data: %s%s%g is out of range %s",
                                                    name, flag ? "=" : " = ", value, range));
}

}  // namespace

absl::Status ValidateSyntheticOptions(const SyntheticOptions& options,
                                      const SyntheticOptionNames& names) {
  const int64_t n = options.num_examples;
  const int64_t d = options.num_features;
  if (n < 1 || n >= (int64_t{1} << 31)) return OutOfRange(names.num_examples, n, "[1, 2^31)");
  if (d < 1 || d > (int64_t{1} << 27)) return OutOfRange(names.num_features, d, "[1, 2^27]");
  if (options.mean_nnz < 1 || options.mean_nnz > std::max<int64_t>(1, d / 2)) {
    return OutOfRange(names.mean_nnz, options.mean_nnz,
                      absl::StrFormat("[1, %s / 2]", names.num_features));
  }
  if (options.first_example < 0 || options.first_example > (int64_t{1} << 40)) {
    return OutOfRange(names.first_example, static_cast<double>(options.first_example), "[0, 2^40]");
  }
  if (!(options.noise_std >= 0.0 && options.noise_std <= 100.0)) {
    return OutOfRange(names.noise_std, options.noise_std, "[0, 100]");
  }
  return absl::OkStatus();
}

absl::StatusOr<SyntheticData> GenerateRcv1Like(const SyntheticOptions& options) {
  HOGWILD_RETURN_IF_ERROR(ValidateSyntheticOptions(options));
  const int64_t n = options.num_examples;
  const int64_t d = options.num_features;
  SyntheticData out;
  out.planted_weights.resize(d);
  for (int64_t j = 0; j < d; ++j) {
    out.planted_weights[j] = static_cast<float>(Stream(FeatureKey(options.seed, j)).Normal());
  }
  SparseDataset& data = out.data;
  data.num_features = d;
  data.labels.resize(n);
  data.row_offsets.resize(n + 1);
  data.indices.reserve(n * options.mean_nnz);
  data.values.reserve(n * options.mean_nnz);
  std::vector<int32_t> row;
  for (int64_t i = 0; i < n; ++i) {
    Stream stream(RowKey(options.seed, options.first_example + i));
    const int64_t k = 1 + static_cast<int64_t>(stream.Next() % (2 * options.mean_nnz - 1));
    // Distinct indices: draw, sort, drop repeats, draw again for the missing ones.
    row.clear();
    while (static_cast<int64_t>(row.size()) < k) {
      while (static_cast<int64_t>(row.size()) < k) {
        const double u = stream.Uniform();
        row.push_back(static_cast<int32_t>(std::min<double>(d - 1, std::floor(d * u * u))));
      }
      std::sort(row.begin(), row.end());
      row.erase(std::unique(row.begin(), row.end()), row.end());
    }
    const size_t start = data.values.size();
    double norm2 = 0.0;
    for (int32_t j : row) {
      const double v = -std::log(1.0 - stream.Uniform()) + 0.1;
      data.indices.push_back(j);
      data.values.push_back(static_cast<float>(v));
      norm2 += v * v;
    }
    const double scale = 1.0 / std::sqrt(norm2);
    double margin = 0.0;
    for (size_t z = start; z < data.values.size(); ++z) {
      data.values[z] = static_cast<float>(data.values[z] * scale);
      margin += static_cast<double>(data.values[z]) * out.planted_weights[data.indices[z]];
    }
    data.labels[i] = margin + options.noise_std * stream.Normal() > 0.0 ? 1.0f : -1.0f;
    data.row_offsets[i + 1] = static_cast<int64_t>(data.indices.size());
  }
  return out;
}

absl::StatusOr<SyntheticSplit> GenerateSyntheticSplit(SyntheticOptions options,
                                                      int64_t test_examples,
                                                      SyntheticOptionNames names,
                                                      const char* test_examples_name) {
  HOGWILD_RETURN_IF_ERROR(ValidateSyntheticOptions(options, names));
  SyntheticSplit out;
  HOGWILD_ASSIGN_OR_RETURN(SyntheticData train, GenerateRcv1Like(options));
  out.train = std::move(train.data);
  if (test_examples != 0) {
    options.first_example += options.num_examples;
    options.num_examples = test_examples;
    names.num_examples = test_examples_name;
    HOGWILD_RETURN_IF_ERROR(ValidateSyntheticOptions(options, names));
    HOGWILD_ASSIGN_OR_RETURN(SyntheticData test, GenerateRcv1Like(options));
    out.test = std::move(test.data);
  }
  return out;
}

}  // namespace hogwild::sparse

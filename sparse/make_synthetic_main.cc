// The `//sparse:make_synthetic` command: writes the RCV1-like synthetic set (sparse/synthetic.h)
// as a LIBSVM file, gzip-compressed for a path ending in .gz, for other tools (scikit-learn in
// benchmarks/sparse_vs_sklearn.py); or, with --mail, a mail corpus's hashed vectors
// (sparse/mail_corpus.h), its training split to --out and its test split to --test_out, so that
// other tools train on the very rows //sparse:train --dataset=spam does
// (benchmarks/spam_vs_sklearn.py):
//   bazel run //sparse:make_synthetic -- --out=/tmp/synthetic.svm
//   bazel run //sparse:make_synthetic -- --mail=spam --out=/tmp/spam.svm --test_out=/tmp/spam_test.svm
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_format.h"
#include "core/output_path.h"
#include "core/status_macros.h"
#include "sparse/libsvm_writer.h"
#include "sparse/mail_corpus.h"
#include "sparse/synthetic.h"
#include "trainer/cli/flags_parse.h"

ABSL_FLAG(std::string, out, "", "the LIBSVM file to write (.gz: gzip-compressed)");
ABSL_FLAG(int64_t, examples, 100000, "examples N");
ABSL_FLAG(int64_t, features, 47236, "features D");
ABSL_FLAG(int64_t, first_example, 0,
          "index of the first row: a test set of the same planted model is a later range");
ABSL_FLAG(int32_t, nnz, 76, "mean non-zeros per example");
ABSL_FLAG(double, noise, 0.1, "label noise (std of the margin's noise)");
ABSL_FLAG(std::string, mail, "",
          "instead of the synthetic set: 'spam' (the SpamAssassin corpus, tools/setup.sh --spam) "
          "or a directory of mails laid out like it; needs --test_out");
ABSL_FLAG(std::string, test_out, "", "with --mail: the LIBSVM file of the test split");
ABSL_FLAG(std::string, seed, "1",
          "seed, in [0, 2^64 - 1]; the same as //sparse:train's gives its set");

namespace {

absl::Status WriteMail(const std::string& mail, const std::string& out) {
  const std::string test_out = absl::GetFlag(FLAGS_test_out);
  if (test_out.empty()) return absl::InvalidArgumentError("--mail needs --test_out");
  HOGWILD_RETURN_IF_ERROR(hogwild::CheckOutputFilePath("--test_out", test_out));
  HOGWILD_ASSIGN_OR_RETURN(
      const hogwild::sparse::MailSplit split,
      hogwild::sparse::ReadMailCorpus(mail == "spam" ? hogwild::sparse::kSpamAssassinDir : mail));
  HOGWILD_RETURN_IF_ERROR(hogwild::sparse::WriteLibsvmFile(split.train, out));
  HOGWILD_RETURN_IF_ERROR(hogwild::sparse::WriteLibsvmFile(split.test, test_out));
  absl::PrintF("%s: %d train mails, %s: %d test mails (%d spam, %d ham), %d hashed features\n",
               out, split.train.num_examples(), test_out, split.test.num_examples(), split.spam,
               split.ham, split.train.num_features);
  return absl::OkStatus();
}

absl::Status Run() {
  const std::string out = absl::GetFlag(FLAGS_out);
  if (out.empty()) return absl::InvalidArgumentError("--out is required");
  HOGWILD_RETURN_IF_ERROR(hogwild::CheckOutputFilePath("--out", out));
  if (const std::string mail = absl::GetFlag(FLAGS_mail); !mail.empty()) return WriteMail(mail, out);
  if (!absl::GetFlag(FLAGS_test_out).empty()) {
    return absl::InvalidArgumentError("--test_out is for --mail; a synthetic test set is a "
                                      "later range (--first_example) written to its own --out");
  }
  HOGWILD_ASSIGN_OR_RETURN(const uint64_t seed, hogwild::ParseSeed(absl::GetFlag(FLAGS_seed)));
  const hogwild::sparse::SyntheticOptions options{
      .num_examples = absl::GetFlag(FLAGS_examples),
      .num_features = absl::GetFlag(FLAGS_features),
      .mean_nnz = absl::GetFlag(FLAGS_nnz),
      .noise_std = absl::GetFlag(FLAGS_noise),
      .seed = seed,
      .first_example = absl::GetFlag(FLAGS_first_example)};
  HOGWILD_RETURN_IF_ERROR(
      hogwild::sparse::ValidateSyntheticOptions(options, {.num_examples = "--examples",
                                                          .num_features = "--features",
                                                          .mean_nnz = "--nnz",
                                                          .noise_std = "--noise",
                                                          .first_example = "--first_example"}));
  HOGWILD_ASSIGN_OR_RETURN(hogwild::sparse::SyntheticData data,
                           hogwild::sparse::GenerateRcv1Like(options));
  HOGWILD_RETURN_IF_ERROR(hogwild::sparse::WriteLibsvmFile(data.data, out));
  absl::PrintF("%s: %d examples, %d features, %d non-zeros\n", out, data.data.num_examples(),
               data.data.num_features, data.data.nnz());
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Writes the RCV1-like synthetic set as a LIBSVM file.\n"
      "  bazel run //sparse:make_synthetic -- --out=/tmp/synthetic.svm");
  const std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  // Relative paths mean the directory `bazel run` was typed in, not the runfiles tree.
  if (const absl::Status cwd = hogwild::EnterBuildWorkingDirectory(); !cwd.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(cwd.message()).c_str());
    return 1;
  }
  if (positional.size() > 1) {
    std::fprintf(stderr, "error: unexpected argument '%s' (flags are --name=value)\n",
                 positional[1]);
    return 1;
  }
  if (const absl::Status status = Run(); !status.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  return std::fflush(stdout) == 0 ? 0 : 1;
}

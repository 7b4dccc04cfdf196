// Replays the fuzzers' seed corpus and every input that once crashed a parser
// (tests/fuzz/regressions/) through the fuzz target bodies, in the normal test suite, so the
// sanitizer builds (--config=asan_ubsan) cover them on every change.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "tests/fuzz/fuzz_targets.h"

namespace hogwild {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(FuzzRegression, EveryCorpusAndRegressionInputIsHandled) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  ASSERT_NE(srcdir, nullptr);
  const fs::path root = fs::path(srcdir) / "hogwild/tests/fuzz";
  int inputs = 0;
  for (const char* sub : {"corpus", "regressions"}) {
    if (!fs::exists(root / sub)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root / sub)) {
      if (!entry.is_regular_file()) continue;
      SCOPED_TRACE(entry.path().string());
      const std::string bytes = ReadFile(entry.path());
      const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
      // Both targets on every input: a crash aborts the test with the path in the trace.
      fuzz::FuzzIdx(data, bytes.size());
      fuzz::FuzzCheckpoint(data, bytes.size());
      fuzz::FuzzLibsvm(data, bytes.size());
      fuzz::FuzzCifar10(data, bytes.size());
      ++inputs;
    }
  }
  EXPECT_GE(inputs, 5);  // the seed corpus is there
}

TEST(FuzzRegression, ValidSeedsAreAccepted) {
  // Mutating valid files is what reaches deep parser paths; a seed the parser refuses (after a
  // format change) would silently weaken the fuzzers.
  const fs::path root = fs::path(std::getenv("TEST_SRCDIR")) / "hogwild/tests/fuzz/corpus";
  for (const char* name : {"checkpoint/valid_async_momentum.hwckpt",
                           "checkpoint/valid_sync_plain.hwckpt"}) {
    EXPECT_TRUE(ParseCheckpoint(ReadFile(root / name), name).ok()) << name;
  }
  EXPECT_TRUE(ParseIdx(ReadFile(root / "idx/images_2x3x2.idx3"), 3, "images").ok());
  EXPECT_TRUE(ParseIdx(ReadFile(root / "idx/labels_3.idx1"), 1, "labels").ok());
  EXPECT_TRUE(ReadIdxFile((root / "idx/images_2x3x2.idx3.gz").string(), 3).ok());
  Dataset cifar;
  cifar.example_shape = {3, 32, 32};
  cifar.num_classes = 10;
  EXPECT_TRUE(ParseCifar10Records(ReadFile(root / "cifar10/two_records.bin"), "seed", cifar).ok());
  EXPECT_EQ(cifar.size(), 2);
  for (const char* name : {"libsvm/syntax.svm", "libsvm/two_lines.svm", "libsvm/syntax.svm.gz"}) {
    EXPECT_TRUE(sparse::ReadLibsvmFile((root / name).string(), {}).ok()) << name;
  }
}

}  // namespace
}  // namespace hogwild

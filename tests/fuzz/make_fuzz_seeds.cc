// Writes the fuzzers' seed corpus: small valid inputs from which libFuzzer mutates.
//   bazel run //tests:make_fuzz_seeds -- $PWD/tests/fuzz/corpus
// Valid seeds matter most: the checksums and magic numbers are hard for a fuzzer to guess, and
// mutations of a valid file reach the parser's deep paths.
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "trainer/checkpoint/checkpoint.h"

namespace {

void Write(const std::filesystem::path& path, const std::string& bytes) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  out.close();  // a seed cut short by a full disk would fail SeedCorpusCheckpointStillParses
  if (!out) {
    std::fprintf(stderr, "make_fuzz_seeds: cannot write %s\n", path.c_str());
    std::exit(1);
  }
  std::printf("%s (%zu bytes)\n", path.c_str(), bytes.size());
}

void WriteGzip(const std::filesystem::path& path, const std::string& bytes) {
  gzFile file = gzopen(path.c_str(), "wb9");
  const bool ok = file != nullptr &&
                  gzwrite(file, bytes.data(), static_cast<unsigned>(bytes.size())) ==
                      static_cast<int>(bytes.size()) &&
                  gzclose(file) == Z_OK;
  if (!ok) {
    std::fprintf(stderr, "make_fuzz_seeds: cannot write %s\n", path.c_str());
    std::exit(1);
  }
  std::printf("%s (gzip of %zu bytes)\n", path.c_str(), bytes.size());
}

std::string BigEndian32(uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}

hogwild::Checkpoint Small(hogwild::Mode mode, int workers, bool momentum) {
  hogwild::Checkpoint c;
  c.signature = {.model_name = "mlp",
                 .input_shape = {1, 2, 2},
                 .num_classes = 2,
                 .layers = {"dense 4->2", "relu 2", "dense 2->2"},
                 .num_params = 16,
                 .mode = mode,
                 .num_workers = workers,
                 .batch_size = 4,
                 .seed = 1,
                 .train_examples = 10,
                 .dataset = hogwild::DatasetId{.name = "fashion_mnist", .fingerprint = 0xfeed}};
  c.global_step = 7;
  c.epoch = 1;
  c.next_step.assign(workers, 5);
  for (int i = 0; i < 16; ++i) c.params.push_back(0.125f * i);
  const int buffers = !momentum ? 0 : (mode == hogwild::Mode::kSync ? 1 : workers);
  for (int b = 0; b < buffers; ++b) c.optimizer_state.emplace_back(16, 0.5f);
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_fuzz_seeds <corpus dir>\n");
    return 2;
  }
  const std::filesystem::path dir = argv[1];
  Write(dir / "checkpoint/valid_async_momentum.hwckpt",
        hogwild::SerializeCheckpoint(Small(hogwild::Mode::kAsync, 2, true)));
  // Adam with per-worker state: two moments and a step count per worker.
  hogwild::Checkpoint adam = Small(hogwild::Mode::kAsync, 2, true);
  adam.signature.optimizer = "adam";
  adam.optimizer_state.emplace_back(16, 0.25f);
  adam.optimizer_state.emplace_back(16, 0.75f);
  adam.optimizer_steps = {3, 4};
  adam.ema.assign(16, 0.0625f);
  adam.signature.constants =
      hogwild::OptimizerConstants{.beta1 = 0.8f, .eps = 1e-8f, .ema_decay = 0.999f};
  Write(dir / "checkpoint/valid_async_adam.hwckpt", hogwild::SerializeCheckpoint(adam));
  Write(dir / "checkpoint/valid_sync_plain.hwckpt",
        hogwild::SerializeCheckpoint(Small(hogwild::Mode::kSync, 3, false)));
  // async_local_sgd (format 8): a mode state of replicas, anchors, outer momentum, counters and
  // seconds (sync/async_local_sgd.h), and its options in the signature.
  hogwild::Checkpoint local = Small(hogwild::Mode::kAsyncLocalSgd, 2, true);
  local.signature.average_every = 4;
  local.signature.outer = {.lr = 0.7f, .momentum = 0.9f, .nesterov = true};
  local.signature.delayed_nesterov = 2;
  local.signature.dynamic_local_updates = true;
  for (int b = 0; b < 6; ++b) local.mode_state.buffers.emplace_back(16, 0.125f * b);
  local.mode_state.counters = {3, 1, 2, 4, 1, 2, 1, 1, 4, 2, 1};
  local.mode_state.seconds = {0.5, 1.0, 0.75, 0.25};
  Write(dir / "checkpoint/valid_async_local_sgd.hwckpt", hogwild::SerializeCheckpoint(local));
  // IDX: 2 images of 3x2 pixels, 3 labels, and a header-only file.
  std::string images = BigEndian32(0x803) + BigEndian32(2) + BigEndian32(3) + BigEndian32(2);
  for (int i = 0; i < 12; ++i) images.push_back(static_cast<char>(i * 20));
  Write(dir / "idx/images_2x3x2.idx3", images);
  Write(dir / "idx/labels_3.idx1", BigEndian32(0x801) + BigEndian32(3) + std::string("\x01\x00\x09", 3));
  Write(dir / "idx/header_only.idx1", BigEndian32(0x801) + BigEndian32(1));
  // A header that promises far more than the file holds (1000 28x28 images, 12 bytes): the
  // streaming reader must stop at the end of the file, not allocate what the header says.
  Write(dir / "idx/counts_exceed_payload.idx3", BigEndian32(0x803) + BigEndian32(1000) +
                                                    BigEndian32(28) + BigEndian32(28) +
                                                    images.substr(16));
  // The images gzipped: the streaming reader's gzip path (ReadIdxFile) from a valid stream.
  WriteGzip(dir / "idx/images_2x3x2.idx3.gz", images);
  // LIBSVM: every feature of the syntax (qid, comments, CRLF, blank lines, signs, exponents),
  // a file without a final newline, and the gzip path.
  const std::string libsvm =
      "# comment\n+1 qid:2 1:0.5 3:-1e-2 40:7 # tail\r\n\n-1\t2:1\n0 \n1.5 4:+0.25 49:3";
  Write(dir / "libsvm/syntax.svm", libsvm);
  Write(dir / "libsvm/two_lines.svm", "1 1:1 2:1\n-1 3:0.5\n");
  WriteGzip(dir / "libsvm/syntax.svm.gz", libsvm);
  // CIFAR-10: two records (labels 3 and 9; 3072 pixel bytes each), and one cut inside its
  // second record.
  std::string cifar;
  for (const char label : {3, 9}) {
    cifar.push_back(label);
    for (int i = 0; i < 3072; ++i) cifar.push_back(static_cast<char>(i * 7 + label));
  }
  Write(dir / "cifar10/two_records.bin", cifar);
  Write(dir / "cifar10/truncated.bin", cifar.substr(0, 3073 + 10));
  return 0;
}

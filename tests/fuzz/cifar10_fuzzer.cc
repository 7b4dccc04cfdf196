// libFuzzer target: the CIFAR-10 binary batch parser (hogwild::ParseCifar10Records).
// Built and run by tools/fuzz.sh.
#include "tests/fuzz/fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hogwild::fuzz::FuzzCifar10(data, size);
  return 0;
}

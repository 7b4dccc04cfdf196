// libFuzzer target: the checkpoint parser (hogwild::ParseCheckpoint). Built and run by
// tools/fuzz.sh.
#include "tests/fuzz/fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hogwild::fuzz::FuzzCheckpoint(data, size);
  return 0;
}

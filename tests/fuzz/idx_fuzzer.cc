// libFuzzer target: the IDX parser (hogwild::ParseIdx) and the streaming reader (ReadIdxFile).
// Built and run by tools/fuzz.sh.
#include "tests/fuzz/fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hogwild::fuzz::FuzzIdx(data, size);
  return 0;
}

// libFuzzer target: the LIBSVM parser (hogwild::sparse::ParseLibsvm) and the streaming file
// reader (ReadLibsvmFile). Built and run by tools/fuzz.sh.
#include "tests/fuzz/fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hogwild::fuzz::FuzzLibsvm(data, size);
  return 0;
}

// The functions of libhogwild.so's public headers (install/BUILD, PUBLIC_HEADERS). The linker
// takes an object of the project's libraries into a shared library only when something refers
// to it, so this table is what puts each public function, and everything it calls, into
// libhogwild.so. A function added to a public header gets its entry here.
#include "core/mode.h"
#include "trainer/data/cifar10.h"
#include "trainer/data/dataset.h"
#include "trainer/data/mnist.h"
#include "trainer/optimizer_options.h"
#include "trainer/trainer.h"
#include "trainer/trainer_options.h"

namespace hogwild {

extern const void* const kPublicFunctions[];
const void* const kPublicFunctions[] = {
    // core/mode.h
    reinterpret_cast<const void*>(&ModeName),
    reinterpret_cast<const void*>(&ParseMode),
    reinterpret_cast<const void*>(&SplitsGlobalBatch),
    reinterpret_cast<const void*>(&SupportsCheckpoints),
    // trainer/trainer.h
    reinterpret_cast<const void*>(&Train),
    reinterpret_cast<const void*>(&FormatSummary),
    reinterpret_cast<const void*>(&CheckOutputs),
    reinterpret_cast<const void*>(&CheckClusterOptions),
    // trainer/trainer_options.h, trainer/optimizer_options.h
    reinterpret_cast<const void*>(&WorkerCount),
    reinterpret_cast<const void*>(&GlobalBatch),
    reinterpret_cast<const void*>(&ValidateOptions),
    reinterpret_cast<const void*>(&ValidateOptionsForDataset),
    reinterpret_cast<const void*>(&UnreadSettings),
    reinterpret_cast<const void*>(&ValidateOptimizerOptions),
    // trainer/data/dataset.h, mnist.h, cifar10.h
    reinterpret_cast<const void*>(&FirstExamples),
    reinterpret_cast<const void*>(&LookupDataset),
    reinterpret_cast<const void*>(&LoadMnistSplit),
    reinterpret_cast<const void*>(&Normalize),
    reinterpret_cast<const void*>(&LoadTrainTest),
    reinterpret_cast<const void*>(&ParseCifar10Records),
    reinterpret_cast<const void*>(&LoadCifar10Split),
};

}  // namespace hogwild

// The Python side of option errors: the library names a bad option by its field
// (`TrainerOptions::num_workers=0 is out of range ...`) or, in a few loaders, by the command
// line's flag (`--dataset=x is unknown`); Python users typed a keyword argument of
// hogwild.train() (`workers=0`).
#ifndef HOGWILD_PYTHON_KEYWORD_NAMES_H_
#define HOGWILD_PYTHON_KEYWORD_NAMES_H_

#include <string>

#include "absl/strings/string_view.h"

namespace hogwild::python {

// `message` with every option field it names (TrainerOptions::*, LrSchedule::*) and every flag
// spelling of a keyword (`--data_dir`) replaced by the hogwild.train() keyword that sets it
// (`data_dir`). Pure.
std::string WithKeywordNames(absl::string_view message);

}  // namespace hogwild::python

#endif  // HOGWILD_PYTHON_KEYWORD_NAMES_H_

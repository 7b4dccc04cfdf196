#include "core/logging.h"

#include <string>

namespace hogwild {

void LogIfError(const char* where, const absl::Status& status) {
  if (status.ok()) return;
  ABSL_RAW_LOG(ERROR, "%s: %s", where, std::string(status.ToString()).c_str());
}

}  // namespace hogwild

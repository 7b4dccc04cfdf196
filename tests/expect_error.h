// ExpectError: the house check for a bad-input status (STYLE.md): the code, one line, and every
// given fragment (the bad value, the field or flag, what to do) in the message.
#ifndef HOGWILD_TESTS_EXPECT_ERROR_H_
#define HOGWILD_TESTS_EXPECT_ERROR_H_

#include <initializer_list>
#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"

namespace hogwild::testing {

// Expects `status` to have `code` and a single-line message containing every one of `parts`.
inline void ExpectError(const absl::Status& status, absl::StatusCode code,
                        std::initializer_list<std::string> parts) {
  EXPECT_EQ(status.code(), code) << status;
  const std::string message(status.message());
  EXPECT_EQ(message.find('\n'), std::string::npos) << "not one line: " << message;
  for (const std::string& part : parts) {
    EXPECT_NE(message.find(part), std::string::npos)
        << "message does not mention '" << part << "': " << message;
  }
}

}  // namespace hogwild::testing

#endif  // HOGWILD_TESTS_EXPECT_ERROR_H_

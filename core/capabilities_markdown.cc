// Prints the capabilities table as Markdown (core/capabilities.h CapabilitiesMarkdown), or with
// --write replaces the copy in docs/design.md between its two markers:
//
//   bazel run //core:capabilities_markdown             (print)
//   bazel run //core:capabilities_markdown -- --write  (rewrite docs/design.md in the workspace)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/atomic_file.h"
#include "core/capabilities.h"
#include "core/output_path.h"

namespace {

constexpr char kBegin[] = "<!-- capabilities table: begin -->\n";
constexpr char kEnd[] = "<!-- capabilities table: end -->\n";

int Write() {
  const char* workspace = std::getenv("BUILD_WORKSPACE_DIRECTORY");
  const std::string path = absl::StrCat(workspace != nullptr ? workspace : ".", "/docs/design.md");
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::string doc = text.str();
  const size_t begin = doc.find(kBegin);
  const size_t end = doc.find(kEnd);
  if (!in || begin == std::string::npos || end == std::string::npos || end < begin) {
    std::fprintf(stderr,
                 "capabilities_markdown: %s has no '%s' ... '%s' section; add the two "
                 "markers where the table goes\n",
                 path.c_str(), "<!-- capabilities table: begin -->",
                 "<!-- capabilities table: end -->");
    return 1;
  }
  doc.replace(begin + std::strlen(kBegin), end - begin - std::strlen(kBegin),
              hogwild::CapabilitiesMarkdown());
  // Atomically: a failed write (a full disk) leaves the file as it was.
  if (const absl::Status written = hogwild::WriteFileAtomically(path, doc); !written.ok()) {
    std::fprintf(stderr, "capabilities_markdown: %s\n", std::string(written.message()).c_str());
    return 1;
  }
  std::printf("capabilities_markdown: rewrote the table in %s\n", path.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--write") == 0) return Write();
  if (argc != 1) {
    std::fprintf(stderr, "usage: capabilities_markdown [--write]\n");
    return 2;
  }
  std::fputs(hogwild::CapabilitiesMarkdown().c_str(), stdout);
  return hogwild::CheckedExitCode(0);  // a failed write to standard output is not a success
}

#include "trainer/metrics/convergence_log.h"

#include <cerrno>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"

namespace hogwild {

const char* ConvergenceLog::Header() {
  return "wall_time_s,kind,epoch,step,examples_seen,worker,train_loss,test_loss,test_accuracy,"
         "staleness_mean,staleness_max,lr";
}

absl::StatusOr<std::unique_ptr<ConvergenceLog>> ConvergenceLog::Open(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--log=%s: cannot create the convergence log (%s)", path, std::strerror(errno)));
  }
  const bool json = absl::EndsWith(path, ".jsonl");
  if (!json) absl::FPrintF(file, "%s\n", Header());
  std::fflush(file);
  return std::unique_ptr<ConvergenceLog>(new ConvergenceLog(file, json));
}

ConvergenceLog::~ConvergenceLog() {
  std::lock_guard<std::mutex> lock(mu_);
  std::fclose(file_);
}

void ConvergenceLog::Write(const LogRow& r) {
  const char* kind = r.eval ? "eval" : "train";
  std::lock_guard<std::mutex> lock(mu_);
  if (json_) {
    auto opt = [](const std::optional<double>& v) {
      return v ? absl::StrFormat("%.6g", *v) : std::string("null");
    };
    absl::FPrintF(file_,
                  "{\"wall_time_s\":%.4f,\"kind\":\"%s\",\"epoch\":%.4f,\"step\":%d,"
                  "\"examples_seen\":%d,\"worker\":%d,\"train_loss\":%.6g,\"test_loss\":%s,"
                  "\"test_accuracy\":%s,\"staleness_mean\":%.4g,\"staleness_max\":%d,"
                  "\"lr\":%.6g}\n",
                  r.wall_time_s, kind, r.epoch, r.step, r.examples_seen, r.worker, r.train_loss,
                  opt(r.test_loss), opt(r.test_accuracy), r.staleness_mean, r.staleness_max, r.lr);
  } else {
    auto opt = [](const std::optional<double>& v) {
      return v ? absl::StrFormat("%.6g", *v) : std::string();
    };
    absl::FPrintF(file_, "%.4f,%s,%.4f,%d,%d,%d,%.6g,%s,%s,%.4g,%d,%.6g\n", r.wall_time_s, kind,
                  r.epoch, r.step, r.examples_seen, r.worker, r.train_loss, opt(r.test_loss),
                  opt(r.test_accuracy), r.staleness_mean, r.staleness_max, r.lr);
  }
  std::fflush(file_);
}

}  // namespace hogwild

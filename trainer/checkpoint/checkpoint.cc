// Serialization and validation of the checkpoint format (the file I/O is in checkpoint_file.cc).
#include "trainer/checkpoint/checkpoint.h"

#include <zlib.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "core/logging.h"
#include "core/status_macros.h"
#include "trainer/finite_check.h"

namespace hogwild {
namespace {

static_assert(std::endian::native == std::endian::little,
              "the checkpoint format is little-endian; add byte swapping for this host");

constexpr char kMagic[8] = {'H', 'W', 'C', 'K', 'P', 'T', '\r', '\n'};
constexpr uint32_t kHeaderSize = 32;
// Sanity bounds that a real checkpoint never reaches; they keep a forged count from looping or
// allocating before the "larger than the remaining bytes" check can apply.
constexpr uint32_t kMaxString = 4096;
constexpr uint32_t kMaxListItems = 1 << 16;

uint32_t Crc32(absl::string_view bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  // zlib takes uInt lengths: feed large payloads in chunks.
  while (!bytes.empty()) {
    const size_t n = std::min<size_t>(bytes.size(), 1u << 30);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(n));
    bytes.remove_prefix(n);
  }
  return static_cast<uint32_t>(crc);
}

class Writer {
 public:
  template <typename T>
  void Pod(T value) {
    out_.append(reinterpret_cast<const char*>(&value), sizeof(T));
  }
  void Str(const std::string& s) {
    Pod<uint32_t>(static_cast<uint32_t>(s.size()));
    out_.append(s);
  }
  void Floats(const std::vector<float>& v) {
    Pod<uint64_t>(v.size());
    out_.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
  }
  std::string& bytes() { return out_; }

 private:
  std::string out_;
};

// Bounds-checked reader: every read names the field, so a damaged file says what was cut.
class Reader {
 public:
  Reader(absl::string_view bytes, absl::string_view origin) : rest_(bytes), origin_(origin) {}

  template <typename T>
  absl::Status Pod(const char* field, T* value) {
    if (rest_.size() < sizeof(T)) return Truncated(field);
    std::memcpy(value, rest_.data(), sizeof(T));
    rest_.remove_prefix(sizeof(T));
    return absl::OkStatus();
  }

  absl::Status Str(const char* field, std::string* value) {
    uint32_t n = 0;
    HOGWILD_RETURN_IF_ERROR(Pod(field, &n));
    if (n > kMaxString) return Corrupt(field, absl::StrFormat("length %d is implausible", n));
    if (rest_.size() < n) return Truncated(field);
    value->assign(rest_.data(), n);
    rest_.remove_prefix(n);
    return absl::OkStatus();
  }

  // A count of items of `item_bytes` each: rejected before allocation when the bytes that
  // remain cannot hold that many.
  absl::Status Count(const char* field, uint64_t max_items, size_t item_bytes, uint64_t* n) {
    uint64_t count = 0;
    if (max_items <= std::numeric_limits<uint32_t>::max()) {
      uint32_t c = 0;
      HOGWILD_RETURN_IF_ERROR(Pod(field, &c));
      count = c;
    } else {
      HOGWILD_RETURN_IF_ERROR(Pod(field, &count));
    }
    if (count > max_items || count > rest_.size() / item_bytes) {
      return Corrupt(
          field, absl::StrFormat("count %d exceeds the %d bytes that remain", count, rest_.size()));
    }
    *n = count;
    return absl::OkStatus();
  }

  absl::Status Floats(const char* field, std::vector<float>* v) {
    uint64_t n = 0;
    HOGWILD_RETURN_IF_ERROR(Count(field, std::numeric_limits<uint64_t>::max(), sizeof(float), &n));
    v->resize(n);
    // memcpy from/to a null pointer is undefined even for 0 bytes (an empty vector's data() may
    // be null): found by the checkpoint fuzzer, tests/fuzz/regressions/checkpoint/.
    if (n > 0) std::memcpy(v->data(), rest_.data(), n * sizeof(float));
    rest_.remove_prefix(n * sizeof(float));
    return absl::OkStatus();
  }

  size_t remaining() const { return rest_.size(); }

  absl::Status Corrupt(const char* field, const std::string& why) const {
    return absl::DataLossError(
        absl::StrFormat("%s: corrupt checkpoint: field %s: %s", origin_, field, why));
  }

 private:
  absl::Status Truncated(const char* field) const {
    return absl::DataLossError(absl::StrFormat(
        "%s: corrupt checkpoint: the payload ends inside field %s", origin_, field));
  }

  absl::string_view rest_;
  absl::string_view origin_;
};

// The constants in file order, with the flag that sets each (for CheckSignature's messages).
constexpr const char* kConstantFlags[] = {"--momentum",      "--adam_beta1", "--adam_beta2",
                                          "--rmsprop_alpha", "--eps",        "--weight_decay",
                                          "--ema_decay"};

std::array<float, 7> ConstantValues(const OptimizerConstants& c) {
  return {c.momentum, c.beta1, c.beta2, c.alpha, c.eps, c.weight_decay, c.ema_decay};
}

std::array<float*, 7> ConstantFields(OptimizerConstants& c) {
  return {&c.momentum, &c.beta1, &c.beta2, &c.alpha, &c.eps, &c.weight_decay, &c.ema_decay};
}

void WriteSignature(const CheckpointSignature& s, uint32_t version, Writer& w) {
  w.Str(s.model_name);
  w.Pod<uint32_t>(static_cast<uint32_t>(s.input_shape.size()));
  for (int64_t d : s.input_shape) w.Pod<int64_t>(d);
  w.Pod<int64_t>(s.num_classes);
  w.Pod<uint32_t>(static_cast<uint32_t>(s.layers.size()));
  for (const std::string& l : s.layers) w.Str(l);
  w.Pod<int64_t>(s.num_params);
  w.Str(ModeName(s.mode));
  w.Pod<int32_t>(s.num_workers);
  w.Pod<int64_t>(s.batch_size);
  w.Pod<uint64_t>(s.seed);
  w.Pod<int64_t>(s.train_examples);
  if (version >= 2) {
    w.Pod<uint8_t>(s.dataset.has_value() ? 1 : 0);
    if (s.dataset) {
      w.Str(s.dataset->name);
      w.Pod<uint32_t>(s.dataset->fingerprint);
    }
  }
  if (version >= 3) w.Str(s.optimizer);
  if (version >= 4) {
    w.Pod<uint8_t>(s.constants.has_value() ? 1 : 0);
    if (s.constants) {
      for (float v : ConstantValues(*s.constants)) w.Pod<float>(v);
    }
  }
  if (version >= 5) w.Pod<int32_t>(s.num_ranks);
  if (version >= 6) {
    w.Pod<int64_t>(s.staleness_bound);
    w.Pod<int64_t>(s.backup_workers);
    w.Pod<int64_t>(s.average_every);
  }
  if (version >= 7) {
    w.Pod<float>(s.outer.lr);
    w.Pod<float>(s.outer.momentum);
    w.Pod<uint8_t>(s.outer.nesterov ? 1 : 0);
  }
  if (version >= 8) {
    w.Pod<int64_t>(s.delayed_nesterov);
    w.Pod<uint8_t>(s.dynamic_local_updates ? 1 : 0);
    w.Pod<int32_t>(s.streaming.fragments);
    w.Pod<int64_t>(s.streaming.overlap_steps);
    w.Pod<float>(s.streaming.mix_alpha);
  }
}

absl::Status ReadSignature(Reader& r, uint32_t version, CheckpointSignature* s) {
  HOGWILD_RETURN_IF_ERROR(r.Str("model_name", &s->model_name));
  uint64_t n = 0;
  HOGWILD_RETURN_IF_ERROR(r.Count("input_shape", 16, sizeof(int64_t), &n));
  s->input_shape.resize(n);
  for (int64_t& d : s->input_shape) HOGWILD_RETURN_IF_ERROR(r.Pod("input_shape", &d));
  HOGWILD_RETURN_IF_ERROR(r.Pod("num_classes", &s->num_classes));
  HOGWILD_RETURN_IF_ERROR(r.Count("layers", kMaxListItems, sizeof(uint32_t), &n));
  s->layers.resize(n);
  for (std::string& l : s->layers) HOGWILD_RETURN_IF_ERROR(r.Str("layers", &l));
  HOGWILD_RETURN_IF_ERROR(r.Pod("num_params", &s->num_params));
  std::string mode;
  HOGWILD_RETURN_IF_ERROR(r.Str("mode", &mode));
  HOGWILD_RETURN_IF_ERROR(r.Pod("num_workers", &s->num_workers));
  HOGWILD_RETURN_IF_ERROR(r.Pod("batch_size", &s->batch_size));
  HOGWILD_RETURN_IF_ERROR(r.Pod("seed", &s->seed));
  HOGWILD_RETURN_IF_ERROR(r.Pod("train_examples", &s->train_examples));
  uint8_t has_dataset = 0;
  if (version >= 2) HOGWILD_RETURN_IF_ERROR(r.Pod("has_dataset", &has_dataset));
  if (has_dataset > 1) {
    return r.Corrupt("has_dataset", absl::StrFormat("%d is neither 0 nor 1", has_dataset));
  }
  if (has_dataset == 1) {
    DatasetId dataset;
    HOGWILD_RETURN_IF_ERROR(r.Str("dataset_name", &dataset.name));
    HOGWILD_RETURN_IF_ERROR(r.Pod("dataset_fingerprint", &dataset.fingerprint));
    s->dataset = std::move(dataset);
  }
  if (version >= 3) {
    HOGWILD_RETURN_IF_ERROR(r.Str("optimizer", &s->optimizer));
  } else {
    s->optimizer = "sgd";  // the only optimizer before version 3
  }
  if (s->optimizer.empty() || s->optimizer.size() > 32) {
    return r.Corrupt("optimizer", absl::StrFormat("%d characters", s->optimizer.size()));
  }
  uint8_t has_constants = 0;
  if (version >= 4) HOGWILD_RETURN_IF_ERROR(r.Pod("has_constants", &has_constants));
  if (has_constants > 1) {
    return r.Corrupt("has_constants", absl::StrFormat("%d is neither 0 nor 1", has_constants));
  }
  if (has_constants == 1) {
    OptimizerConstants c;
    for (float* v : ConstantFields(c)) {
      HOGWILD_RETURN_IF_ERROR(r.Pod("optimizer_constants", v));
      if (!std::isfinite(*v)) return r.Corrupt("optimizer_constants", "a non-finite value");
    }
    s->constants = c;
  }
  s->num_ranks = 1;  // every checkpoint before version 5 is of one process
  if (version >= 5) HOGWILD_RETURN_IF_ERROR(r.Pod("num_ranks", &s->num_ranks));
  if (s->num_ranks < 1 || s->num_ranks > static_cast<int32_t>(kMaxListItems)) {
    return r.Corrupt("num_ranks", absl::StrFormat("%d is out of range", s->num_ranks));
  }
  if (version >= 6) {
    HOGWILD_RETURN_IF_ERROR(r.Pod("staleness_bound", &s->staleness_bound));
    HOGWILD_RETURN_IF_ERROR(r.Pod("backup_workers", &s->backup_workers));
    HOGWILD_RETURN_IF_ERROR(r.Pod("average_every", &s->average_every));
  }
  if (s->staleness_bound < 0 || s->backup_workers < 0 || s->average_every < 0) {
    return r.Corrupt("staleness_bound/backup_workers/average_every", "negative");
  }
  if (version >= 7) {
    uint8_t nesterov = 0;
    HOGWILD_RETURN_IF_ERROR(r.Pod("outer_lr", &s->outer.lr));
    HOGWILD_RETURN_IF_ERROR(r.Pod("outer_momentum", &s->outer.momentum));
    HOGWILD_RETURN_IF_ERROR(r.Pod("outer_nesterov", &nesterov));
    if (nesterov > 1) {
      return r.Corrupt("outer_nesterov", absl::StrFormat("%d is neither 0 nor 1", nesterov));
    }
    s->outer.nesterov = nesterov == 1;
    if (const absl::Status outer = CheckOuterOptimizer(s->outer, "outer_"); !outer.ok()) {
      return r.Corrupt("outer", std::string(outer.message()));
    }
  }
  if (version >= 8) {
    uint8_t dynamic = 0;
    HOGWILD_RETURN_IF_ERROR(r.Pod("delayed_nesterov", &s->delayed_nesterov));
    HOGWILD_RETURN_IF_ERROR(r.Pod("dynamic_local_updates", &dynamic));
    HOGWILD_RETURN_IF_ERROR(r.Pod("fragments", &s->streaming.fragments));
    HOGWILD_RETURN_IF_ERROR(r.Pod("overlap_steps", &s->streaming.overlap_steps));
    HOGWILD_RETURN_IF_ERROR(r.Pod("mix_alpha", &s->streaming.mix_alpha));
    if (dynamic > 1) {
      return r.Corrupt("dynamic_local_updates", absl::StrFormat("%d is neither 0 nor 1", dynamic));
    }
    s->dynamic_local_updates = dynamic == 1;
    if (s->delayed_nesterov < 0) return r.Corrupt("delayed_nesterov", "negative");
    // The ranges that need no other option (CheckStreamingOptions checks the rest in the run).
    if (s->streaming.fragments < 1 || s->streaming.fragments > kMaxFragments ||
        s->streaming.overlap_steps < 0 || !(s->streaming.mix_alpha >= 0.0f) ||
        !(s->streaming.mix_alpha < 1.0f)) {
      return r.Corrupt("fragments/overlap_steps/mix_alpha", "out of range");
    }
  }
  const absl::StatusOr<Mode> parsed = ParseMode(mode);
  // Only the modes with checkpoints write them (core/mode.h SupportsCheckpoints).
  if (!parsed.ok() || !SupportsCheckpoints(*parsed)) {
    return r.Corrupt("mode", absl::StrFormat("'%s' names no mode with checkpoints", mode));
  }
  s->mode = *parsed;
  if (s->num_workers < 1 || s->num_workers > static_cast<int32_t>(kMaxListItems)) {
    return r.Corrupt("num_workers", absl::StrFormat("%d is out of range", s->num_workers));
  }
  if (s->num_params < 0 || s->batch_size < 1 || s->train_examples < 0 || s->num_classes < 0) {
    return r.Corrupt("num_params/batch_size/train_examples/num_classes", "negative size");
  }
  return absl::OkStatus();
}

std::string ShapeString(const std::vector<int64_t>& shape) { return absl::StrJoin(shape, "x"); }

}  // namespace

std::string SerializeCheckpoint(const Checkpoint& c) {
  HOGWILD_CHECK(
      c.format_version >= kOldestCheckpointVersion && c.format_version <= kCheckpointVersion,
      "SerializeCheckpoint: unknown format_version");
  Writer payload;
  WriteSignature(c.signature, c.format_version, payload);
  payload.Pod<int64_t>(c.global_step);
  payload.Pod<int64_t>(c.epoch);
  payload.Pod<uint32_t>(static_cast<uint32_t>(c.next_step.size()));
  for (int64_t s : c.next_step) payload.Pod<int64_t>(s);
  payload.Floats(c.params);
  payload.Pod<uint32_t>(static_cast<uint32_t>(c.optimizer_state.size()));
  for (const std::vector<float>& v : c.optimizer_state) payload.Floats(v);
  if (c.format_version >= 3) {
    payload.Pod<uint32_t>(static_cast<uint32_t>(c.optimizer_steps.size()));
    for (uint64_t t : c.optimizer_steps) payload.Pod<uint64_t>(t);
    payload.Floats(c.ema);
  }
  if (c.format_version >= 8) {
    const ModeState& m = c.mode_state;
    payload.Pod<uint32_t>(static_cast<uint32_t>(m.buffers.size()));
    for (const std::vector<float>& v : m.buffers) payload.Floats(v);
    payload.Pod<uint32_t>(static_cast<uint32_t>(m.counters.size()));
    for (int64_t v : m.counters) payload.Pod<int64_t>(v);
    payload.Pod<uint32_t>(static_cast<uint32_t>(m.seconds.size()));
    for (double v : m.seconds) payload.Pod<double>(v);
  } else {
    HOGWILD_CHECK(c.mode_state.empty(), "SerializeCheckpoint: a mode state needs version 8");
  }

  Writer header;
  header.bytes().append(kMagic, sizeof(kMagic));
  header.Pod<uint32_t>(c.format_version);
  header.Pod<uint32_t>(kHeaderSize);
  header.Pod<uint64_t>(payload.bytes().size());
  header.Pod<uint32_t>(Crc32(payload.bytes()));
  header.Pod<uint32_t>(Crc32(header.bytes()));
  return header.bytes() + payload.bytes();
}

absl::StatusOr<Checkpoint> ParseCheckpoint(absl::string_view bytes, absl::string_view origin) {
  if (bytes.size() < kHeaderSize) {
    return absl::DataLossError(absl::StrFormat(
        "%s: not a checkpoint: %d bytes, shorter than the %d-byte header; the file is truncated",
        origin, bytes.size(), kHeaderSize));
  }
  if (std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: not a hogwild checkpoint (wrong magic number)", origin));
  }
  Reader header(bytes.substr(0, kHeaderSize), origin);
  uint64_t magic = 0, payload_size = 0;
  uint32_t version = 0, header_size = 0, payload_crc = 0, header_crc = 0;
  HOGWILD_RETURN_IF_ERROR(header.Pod("magic", &magic));
  HOGWILD_RETURN_IF_ERROR(header.Pod("version", &version));
  HOGWILD_RETURN_IF_ERROR(header.Pod("header_size", &header_size));
  HOGWILD_RETURN_IF_ERROR(header.Pod("payload_size", &payload_size));
  HOGWILD_RETURN_IF_ERROR(header.Pod("payload_crc32", &payload_crc));
  HOGWILD_RETURN_IF_ERROR(header.Pod("header_crc32", &header_crc));
  const uint32_t actual_header_crc = Crc32(bytes.substr(0, kHeaderSize - 4));
  if (header_crc != actual_header_crc) {
    return absl::DataLossError(
        absl::StrFormat("%s: corrupt checkpoint: header checksum 0x%08x, expected 0x%08x", origin,
                        actual_header_crc, header_crc));
  }
  if (version < kOldestCheckpointVersion || version > kCheckpointVersion) {
    return absl::UnimplementedError(
        absl::StrFormat("%s: checkpoint format version %d; this build reads versions %d to %d (%s)",
                        origin, version, kOldestCheckpointVersion, kCheckpointVersion,
                        version > kCheckpointVersion ? "written by a newer hogwild" : "too old"));
  }
  if (header_size != kHeaderSize) {
    return absl::DataLossError(absl::StrFormat(
        "%s: corrupt checkpoint: header size %d, expected %d", origin, header_size, kHeaderSize));
  }
  const absl::string_view payload = bytes.substr(kHeaderSize);
  if (payload.size() != payload_size) {
    return absl::DataLossError(absl::StrFormat(
        "%s: corrupt checkpoint: %s: the header says %d payload bytes, the file has %d", origin,
        payload.size() < payload_size ? "truncated" : "trailing bytes", payload_size,
        payload.size()));
  }
  const uint32_t actual_payload_crc = Crc32(payload);
  if (payload_crc != actual_payload_crc) {
    return absl::DataLossError(
        absl::StrFormat("%s: corrupt checkpoint: payload checksum 0x%08x, expected 0x%08x", origin,
                        actual_payload_crc, payload_crc));
  }

  // The checksum matched, so the remaining checks catch only a writer bug or a forged file; the
  // parser still trusts nothing.
  Reader r(payload, origin);
  Checkpoint c;
  c.format_version = version;
  HOGWILD_RETURN_IF_ERROR(ReadSignature(r, version, &c.signature));
  const CheckpointSignature& s = c.signature;
  HOGWILD_RETURN_IF_ERROR(r.Pod("global_step", &c.global_step));
  HOGWILD_RETURN_IF_ERROR(r.Pod("epoch", &c.epoch));
  uint64_t n = 0;
  HOGWILD_RETURN_IF_ERROR(r.Count("next_step", kMaxListItems, sizeof(int64_t), &n));
  c.next_step.resize(n);
  for (int64_t& step : c.next_step) HOGWILD_RETURN_IF_ERROR(r.Pod("next_step", &step));
  HOGWILD_RETURN_IF_ERROR(r.Floats("params", &c.params));
  HOGWILD_RETURN_IF_ERROR(r.Count("optimizer_state", kMaxListItems, sizeof(uint64_t), &n));
  c.optimizer_state.resize(n);
  for (std::vector<float>& v : c.optimizer_state) {
    HOGWILD_RETURN_IF_ERROR(r.Floats("optimizer_state", &v));
  }
  if (version >= 3) {
    HOGWILD_RETURN_IF_ERROR(r.Count("optimizer_steps", kMaxListItems, sizeof(uint64_t), &n));
    c.optimizer_steps.resize(n);
    for (uint64_t& t : c.optimizer_steps) HOGWILD_RETURN_IF_ERROR(r.Pod("optimizer_steps", &t));
    HOGWILD_RETURN_IF_ERROR(r.Floats("ema", &c.ema));
  }
  if (version >= 8) {
    // Up to 2 buffers and 5 counters per worker and a few more (sync/async_local_sgd.h).
    constexpr uint64_t kMaxModeItems = 8 * uint64_t{kMaxListItems};
    ModeState& m = c.mode_state;
    HOGWILD_RETURN_IF_ERROR(r.Count("mode_buffers", kMaxModeItems, sizeof(uint64_t), &n));
    m.buffers.resize(n);
    for (std::vector<float>& v : m.buffers) HOGWILD_RETURN_IF_ERROR(r.Floats("mode_buffers", &v));
    HOGWILD_RETURN_IF_ERROR(r.Count("mode_counters", kMaxModeItems, sizeof(int64_t), &n));
    m.counters.resize(n);
    for (int64_t& v : m.counters) HOGWILD_RETURN_IF_ERROR(r.Pod("mode_counters", &v));
    HOGWILD_RETURN_IF_ERROR(r.Count("mode_seconds", kMaxModeItems, sizeof(double), &n));
    m.seconds.resize(n);
    for (double& v : m.seconds) {
      HOGWILD_RETURN_IF_ERROR(r.Pod("mode_seconds", &v));
      if (!std::isfinite(v)) return r.Corrupt("mode_seconds", "a non-finite value");
    }
  }
  if (r.remaining() != 0) {
    return r.Corrupt("(end)",
                     absl::StrFormat("%d unexpected bytes after the last field", r.remaining()));
  }
  if (c.global_step < 0 || c.epoch < 0) return r.Corrupt("global_step/epoch", "negative");
  // One data position per worker of the job: rank-major, the job's worker r·W + w.
  const int64_t job_workers = static_cast<int64_t>(s.num_ranks) * s.num_workers;
  if (static_cast<int64_t>(c.next_step.size()) != job_workers) {
    return r.Corrupt("next_step", absl::StrFormat("%d entries for %d ranks x %d workers",
                                                  c.next_step.size(), s.num_ranks, s.num_workers));
  }
  for (int64_t step : c.next_step) {
    if (step < 0) return r.Corrupt("next_step", absl::StrFormat("negative step %d", step));
  }
  if (static_cast<int64_t>(c.params.size()) != s.num_params) {
    return r.Corrupt("params",
                     absl::StrFormat("%d values for num_params %d", c.params.size(), s.num_params));
  }
  // Owners: 1 (sync, async with shared state) or W (async per worker), up to 2 slots each; then
  // local_sgd's outer momentum (async_local_sgd's is in the mode state).
  const size_t w = static_cast<size_t>(job_workers);
  const size_t outer_buffers = s.mode == Mode::kLocalSgd && s.outer.has_momentum() ? 1 : 0;
  if (c.optimizer_state.size() < outer_buffers) {
    return r.Corrupt("optimizer_state", "no outer momentum buffer, which the signature has");
  }
  const size_t buffers = c.optimizer_state.size() - outer_buffers;
  if (buffers != 0 && buffers != 1 && buffers != 2 && buffers != w && buffers != 2 * w) {
    return r.Corrupt("optimizer_state",
                     absl::StrFormat("%d buffers, expected 0, 1, 2, %d or %d in %s mode", buffers,
                                     w, 2 * w, ModeName(s.mode)));
  }
  if (!c.ema.empty() && static_cast<int64_t>(c.ema.size()) != s.num_params) {
    return r.Corrupt("ema",
                     absl::StrFormat("%d values for num_params %d", c.ema.size(), s.num_params));
  }
  const size_t steps = c.optimizer_steps.size();
  if (steps != 0 && steps != 1 && steps != w) {
    return r.Corrupt("optimizer_steps",
                     absl::StrFormat("%d step counts, expected 0, 1 or %d", steps, w));
  }
  for (const std::vector<float>& v : c.optimizer_state) {
    if (static_cast<int64_t>(v.size()) != s.num_params) {
      return r.Corrupt("optimizer_state", absl::StrFormat("a buffer of %d values for num_params %d",
                                                          v.size(), s.num_params));
    }
  }
  for (const std::vector<float>& v : c.mode_state.buffers) {
    if (static_cast<int64_t>(v.size()) != s.num_params) {
      return r.Corrupt("mode_buffers", absl::StrFormat("a buffer of %d values for num_params %d",
                                                       v.size(), s.num_params));
    }
  }
  if (const absl::Status finite = CheckCheckpointFinite(c); !finite.ok()) {
    return absl::Status(
        finite.code(), absl::StrCat(origin, ": ", finite.message(),
                                    "; a diverged checkpoint cannot be resumed or predicted with"));
  }
  return c;
}

absl::Status CheckCheckpointFinite(const Checkpoint& checkpoint) {
  HOGWILD_RETURN_IF_ERROR(CheckFinite(checkpoint.params, "parameter", checkpoint.global_step));
  HOGWILD_RETURN_IF_ERROR(CheckFinite(checkpoint.ema, "EMA parameter", checkpoint.global_step));
  // A worker's replica (async_local_sgd, Streaming DiLoCo) diverges before the parameters do.
  for (const std::vector<float>& buffer : checkpoint.mode_state.buffers) {
    HOGWILD_RETURN_IF_ERROR(CheckFinite(buffer, "replica or outer-state value",
                                        checkpoint.global_step));
  }
  return absl::OkStatus();
}

absl::Status CheckSignature(const CheckpointSignature& e, const CheckpointSignature& f,
                            absl::string_view origin) {
  auto differs = [&](const char* field, const std::string& found, const std::string& expected,
                     const std::string& hint) {
    // "layers" is the one plural field.
    const char* verb = absl::string_view(field) == "layers" ? "differ" : "differs";
    return absl::FailedPreconditionError(
        absl::StrFormat("%s: cannot resume: %s %s: the checkpoint has %s, this run %s; %s", origin,
                        field, verb, found, expected, hint));
  };
  constexpr char kOtherDir[] = "use the same settings or another --checkpoint_dir";
  if (f.model_name != e.model_name) {
    return differs("model", f.model_name, e.model_name, kOtherDir);
  }
  // Before the dataset: a different --train_examples also changes the fingerprint, and the size
  // names the cause.
  if (f.train_examples != e.train_examples) {
    return differs("training-set size", absl::StrCat(f.train_examples),
                   absl::StrCat(e.train_examples),
                   "the data order depends on it; use the same dataset and --train_examples");
  }
  if (f.dataset && e.dataset && *f.dataset != *e.dataset) {
    auto id = [](const DatasetId& d) {
      return absl::StrFormat("%s (fingerprint 0x%08x)", d.name.empty() ? "(unnamed)" : d.name,
                             d.fingerprint);
    };
    return differs("dataset", id(*f.dataset), id(*e.dataset),
                   "resume on the dataset the checkpoint was trained on, or use another "
                   "--checkpoint_dir");
  }
  if (f.input_shape != e.input_shape) {
    return differs("input shape", ShapeString(f.input_shape), ShapeString(e.input_shape),
                   "use the same dataset or another --checkpoint_dir");
  }
  if (f.num_classes != e.num_classes) {
    return differs("number of classes", absl::StrCat(f.num_classes), absl::StrCat(e.num_classes),
                   "use the same dataset or another --checkpoint_dir");
  }
  if (f.layers != e.layers) {
    return differs("layers", absl::StrJoin(f.layers, ", "), absl::StrJoin(e.layers, ", "),
                   "use the same --model and --hidden or another --checkpoint_dir");
  }
  if (f.num_params != e.num_params) {
    return differs("parameter count", absl::StrCat(f.num_params), absl::StrCat(e.num_params),
                   kOtherDir);
  }
  if (f.optimizer != e.optimizer) {
    return differs("optimizer", f.optimizer, e.optimizer,
                   "resume with the checkpoint's --optimizer or use another --checkpoint_dir");
  }
  if (f.constants && e.constants) {
    const std::array<float, 7> found = ConstantValues(*f.constants);
    const std::array<float, 7> expected = ConstantValues(*e.constants);
    for (size_t i = 0; i < found.size(); ++i) {
      if (found[i] == expected[i]) continue;
      // An EMA on one side only: the EMA check says it is missing. (A momentum on one side only
      // is refused here, with both values: its buffers exist on one side only.)
      if (i == 6 && (found[i] == 0.0f || expected[i] == 0.0f)) continue;
      return differs(kConstantFlags[i], absl::StrFormat("%g", found[i]),
                     absl::StrFormat("%g", expected[i]),
                     absl::StrFormat("the checkpoint's state (optimizer, weights' average) was "
                                     "built with its value; resume with %s=%g or use another "
                                     "--checkpoint_dir",
                                     kConstantFlags[i], found[i]));
    }
  }
  if (f.mode != e.mode) {
    return differs("mode", ModeName(f.mode), ModeName(e.mode),
                   absl::StrCat("resume in the checkpoint's mode (--mode=", ModeName(f.mode),
                                ") or use another --checkpoint_dir"));
  }
  // The mode's own options (the modes are equal here; each option is 0 outside its mode). A
  // double holds every value exactly: the int64 options are far below 2^53, the rest are floats.
  enum class Kind { kInt, kBool, kFloat };
  const struct {
    const char* flag;
    double found, expected;
    Kind kind;
  } mode_options[] = {
      {"--staleness_bound", double(f.staleness_bound), double(e.staleness_bound), Kind::kInt},
      {"--backup_workers", double(f.backup_workers), double(e.backup_workers), Kind::kInt},
      {"--average_every", double(f.average_every), double(e.average_every), Kind::kInt},
      {"--delayed_nesterov", double(f.delayed_nesterov), double(e.delayed_nesterov), Kind::kInt},
      {"--dynamic_local_updates", double(f.dynamic_local_updates),
       double(e.dynamic_local_updates), Kind::kBool},
      {"--fragments", double(f.streaming.fragments), double(e.streaming.fragments), Kind::kInt},
      {"--overlap_steps", double(f.streaming.overlap_steps), double(e.streaming.overlap_steps),
       Kind::kInt},
      {"--outer_lr", f.outer.lr, e.outer.lr, Kind::kFloat},
      {"--outer_momentum", f.outer.momentum, e.outer.momentum, Kind::kFloat},
      {"--outer_nesterov", double(f.outer.nesterov), double(e.outer.nesterov), Kind::kBool},
      {"--mix_alpha", f.streaming.mix_alpha, e.streaming.mix_alpha, Kind::kFloat}};
  for (const auto& o : mode_options) {
    if (o.found == o.expected) continue;
    auto text = [&o](double v) -> std::string {
      switch (o.kind) {
        case Kind::kInt:
          return absl::StrCat(static_cast<int64_t>(v));
        case Kind::kBool:
          return v != 0.0 ? "true" : "false";
        case Kind::kFloat:
          break;
      }
      return absl::StrFormat("%g", v);
    };
    return differs(o.flag, text(o.found), text(o.expected),
                   absl::StrFormat("the checkpoint's state was built with its value; resume with "
                                   "%s=%s or use another --checkpoint_dir",
                                   o.flag, text(o.found)));
  }
  if (f.num_ranks != e.num_ranks) {
    const std::string hint =
        absl::StrFormat("resume with %d processes (mpirun -np %d) or use another --checkpoint_dir",
                        f.num_ranks, f.num_ranks);
    return differs("rank count", absl::StrCat(f.num_ranks), absl::StrCat(e.num_ranks),
                   hint.c_str());
  }
  if (f.num_workers != e.num_workers) {
    return differs("worker count", absl::StrCat(f.num_workers), absl::StrCat(e.num_workers),
                   "resume with --workers equal to the checkpoint's");
  }
  if (f.batch_size != e.batch_size) {
    return differs("batch size", absl::StrCat(f.batch_size), absl::StrCat(e.batch_size),
                   "the data order depends on it; resume with the checkpoint's --batch_size");
  }
  if (f.seed != e.seed) {
    return differs("seed", absl::StrCat(f.seed), absl::StrCat(e.seed),
                   "the data order depends on it; resume with the checkpoint's --seed");
  }
  return absl::OkStatus();
}

}  // namespace hogwild

// Builders for IDX files in tests of the IDX reader and the MNIST loader: the bytes of an IDX
// file with any magic, dimensions and payload, and a fresh scratch directory per test.
#ifndef HOGWILD_TESTS_IDX_FILES_H_
#define HOGWILD_TESTS_IDX_FILES_H_

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace hogwild::testing {

// A fresh, empty directory per test, under testing::TempDir().
inline std::string FreshDir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / info->test_suite_name() / info->name();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

inline void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

inline void PutBigEndian32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>((v >> shift) & 0xff));
}

// An IDX image: magic {0, 0, 0x08, ndims}, the dims, then `data`.
inline std::string Idx(uint32_t magic, const std::vector<uint32_t>& dims, const std::string& data) {
  std::string out;
  PutBigEndian32(out, magic);
  for (uint32_t d : dims) PutBigEndian32(out, d);
  return out + data;
}

inline std::string Idx3(uint32_t n, uint32_t rows, uint32_t cols, const std::string& data) {
  return Idx(0x803, {n, rows, cols}, data);
}

// `count` pixel bytes, byte i = i * 37 mod 256.
inline std::string Pixels(int64_t count) {
  std::string s(count, '\0');
  for (int64_t i = 0; i < count; ++i) s[i] = static_cast<char>(i * 37 % 256);
  return s;
}

}  // namespace hogwild::testing

#endif  // HOGWILD_TESTS_IDX_FILES_H_

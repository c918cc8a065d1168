#include "lockstep/format/safetensors.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace lockstep {
namespace {

// A safetensors file: the length, `header` (padded with spaces to `pad`),
// then `data`.
std::string File(std::string header, const std::string& data, size_t pad = 8) {
  while (pad > 1 && header.size() % pad != 0) header += ' ';
  std::string out(8, '\0');
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(n >> (8 * i));
  return out + header + data;
}

std::string Entry(const std::string& name, const std::string& dtype,
                  const std::string& shape, size_t begin, size_t end) {
  return "\"" + name + "\": {\"dtype\": \"" + dtype +
         "\", \"shape\": " + shape + ", \"data_offsets\": [" +
         std::to_string(begin) + ", " + std::to_string(end) + "]}";
}

template <typename T>
std::string Raw(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()),
                     v.size() * sizeof(T));
}

std::string Bytes(const Tensor& t) {
  return std::string(reinterpret_cast<const char*>(t.data()), t.nbytes());
}

TEST(SafetensorsTest, ReadsEveryDtypeWithItsShapeAndBytes) {
  struct Case {
    const char* dtype;
    DType type;
    std::string data;  // two elements
  };
  std::vector<Case> cases = {
      {"F64", DType::kFloat64, Raw<double>({1.5, -2.25})},
      {"F32", DType::kFloat32, Raw<float>({3.5f, -0.0f})},
      {"F16", DType::kFloat16, Raw<uint16_t>({0x3c00, 0x7c00})},
      {"BF16", DType::kBFloat16, Raw<uint16_t>({0x3f80, 0xff80})},
      {"I64", DType::kInt64, Raw<int64_t>({-1, INT64_MAX})},
      {"I32", DType::kInt32, Raw<int32_t>({7, -7})},
      {"I16", DType::kInt16, Raw<int16_t>({300, -300})},
      {"I8", DType::kInt8, Raw<int8_t>({-128, 127})},
      {"U8", DType::kUInt8, Raw<uint8_t>({0, 255})},
      {"BOOL", DType::kBool, Raw<uint8_t>({1, 0})},
  };
  std::string header = "{", data;
  for (const Case& c : cases) {
    if (data.size() > 0) header += ", ";
    header += Entry(std::string("t_") + c.dtype, c.dtype, "[2]", data.size(),
                    data.size() + c.data.size());
    data += c.data;
  }
  header += ", \"__metadata__\": {\"format\": \"pt\"}}";
  std::string file = File(header, data);
  StatusOr<Checkpoint> ck = ReadSafetensors(file, nullptr, "m.safetensors");
  ASSERT_TRUE(ck.ok()) << ck.status().ToString();
  ASSERT_EQ(ck->entries.size(), cases.size());
  EXPECT_EQ(ck->format, "safetensors");
  EXPECT_EQ(ck->metadata.PyRepr(), "{'format': 'pt'}");
  for (size_t i = 0; i < cases.size(); ++i) {
    const CheckpointEntry& e = ck->entries[i];
    EXPECT_EQ(e.name, std::string("t_") + cases[i].dtype);
    EXPECT_TRUE(e.is_tensor);
    EXPECT_EQ(e.tensor.dtype(), cases[i].type) << e.name;
    EXPECT_EQ(e.tensor.shape(), std::vector<int64_t>({2})) << e.name;
    EXPECT_EQ(Bytes(e.tensor), cases[i].data) << e.name;
  }
}

TEST(SafetensorsTest, ZeroDimEmptyAndUnalignedTensors) {
  std::string data = Raw<int8_t>({5}) + Raw<double>({0.25}) + Raw<float>({2});
  std::string header = "{" + Entry("a", "I8", "[]", 0, 1) + ", " +
                       Entry("b", "F64", "[1, 1]", 1, 9) + ", " +
                       Entry("e", "F32", "[0, 3]", 9, 9) + ", " +
                       Entry("c", "F32", "[1]", 9, 13) + "}";
  // pad 1: the data starts at an odd offset, so "b" is not 8-byte aligned.
  std::string file = File(header, data, 1);
  auto owner = std::make_shared<int>(0);
  StatusOr<Checkpoint> ck = ReadSafetensors(file, owner, "u.safetensors");
  ASSERT_TRUE(ck.ok()) << ck.status().ToString();
  ASSERT_EQ(ck->entries.size(), 4u);
  EXPECT_TRUE(ck->entries[0].tensor.shape().empty());
  EXPECT_EQ(ck->entries[0].tensor.numel(), 1);
  EXPECT_EQ(*ck->entries[0].tensor.data_as<int8_t>(), 5);
  EXPECT_EQ(*ck->entries[1].tensor.data_as<double>(), 0.25);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(ck->entries[1].tensor.data()) % 8, 0u);
  EXPECT_EQ(ck->entries[2].tensor.numel(), 0);
  EXPECT_EQ(*ck->entries[3].tensor.data_as<float>(), 2.0f);
  EXPECT_TRUE(ck->metadata.is_none());
}

// Each case: a header and data that must be refused, the code, and a part
// of the message.
struct Bad {
  const char* what;
  std::string file;
  StatusCode code;
  const char* message;
};

std::vector<Bad> BadFiles() {
  std::string d12(12, 'x');
  auto one = [&](const std::string& entry, const std::string& data) {
    return File("{" + entry + "}", data);
  };
  std::string huge(8, '\xff');
  return {
      {"shorter than 8", "abc", StatusCode::kCorruption, "shorter"},
      {"length beyond file", File("{}", "").substr(0, 9),
       StatusCode::kCorruption, "beyond the file"},
      {"huge length", huge + "{}", StatusCode::kCorruption, "beyond the limit"},
      {"not an object", File("[1]", ""), StatusCode::kCorruption, "'{'"},
      {"bad JSON", File("{\"a\": {\"dtype\": ", ""), StatusCode::kCorruption,
       "header"},
      {"missing dtype",
       one("\"a\": {\"shape\": [3], \"data_offsets\": [0, 12]}", d12),
       StatusCode::kCorruption, "needs \"dtype\""},
      {"bad dtype", one(Entry("a", "F128", "[3]", 0, 12), d12),
       StatusCode::kNotSupported, "'F128' is not supported"},
      {"negative dim", one(Entry("a", "F32", "[-3]", 0, 12), d12),
       StatusCode::kCorruption, "not an int >= 0"},
      {"float dim", one(Entry("a", "F32", "[3.0]", 0, 12), d12),
       StatusCode::kCorruption, "not an int >= 0"},
      {"shape not a list", one(Entry("a", "F32", "3", 0, 12), d12),
       StatusCode::kCorruption, "expected a list"},
      {"end beyond data", one(Entry("a", "F32", "[3]", 0, 16), d12),
       StatusCode::kCorruption, "beyond the data"},
      {"begin after end", one(Entry("a", "F32", "[3]", 12, 0), d12),
       StatusCode::kCorruption, "begin <= end"},
      {"size not shape", one(Entry("a", "F32", "[2]", 0, 12), d12),
       StatusCode::kCorruption, "needs 8"},
      {"shape overflows",
       one(Entry("a", "F64", "[4294967296, 4294967296]", 0, 12), d12),
       StatusCode::kCorruption, "needs more"},
      {"overlap",
       File("{" + Entry("a", "F32", "[2]", 0, 8) + ", " +
                Entry("b", "F32", "[2]", 4, 12) + "}",
            d12),
       StatusCode::kCorruption, "overlap"},
      {"hole",
       File("{" + Entry("a", "F32", "[1]", 0, 4) + ", " +
                Entry("b", "F32", "[1]", 8, 12) + "}",
            d12),
       StatusCode::kCorruption, "hole"},
      {"data not covered", one(Entry("a", "F32", "[2]", 0, 8), d12),
       StatusCode::kCorruption, "cover 8 bytes"},
      {"metadata not str", File("{\"__metadata__\": {\"k\": 1}}", ""),
       StatusCode::kCorruption, "__metadata__"},
      {"tensor not a dict", one("\"a\": [1]", ""), StatusCode::kCorruption,
       "expected a dict"},
  };
}

TEST(SafetensorsCorruptionTest, EveryMalformedFileIsAClearError) {
  for (const Bad& b : BadFiles()) {
    StatusOr<Checkpoint> ck = ReadSafetensors(b.file, nullptr, "bad.st");
    ASSERT_FALSE(ck.ok()) << b.what;
    EXPECT_EQ(ck.status().code(), b.code)
        << b.what << ": " << ck.status().ToString();
    EXPECT_NE(ck.status().message().find(b.message), std::string::npos)
        << b.what << ": " << ck.status().ToString();
    EXPECT_NE(ck.status().message().find("bad.st"), std::string::npos)
        << b.what << ": names the file: " << ck.status().ToString();
  }
}

std::string GoodFile() {
  std::string data = Raw<float>({1, 2, 3}) + Raw<uint16_t>({0x3c00});
  return File("{" + Entry("w", "F32", "[3]", 0, 12) + ", " +
                  Entry("h", "F16", "[1]", 12, 14) + "}",
              data);
}

TEST(SafetensorsCorruptionTest, EveryTruncationIsAnError) {
  std::string good = GoodFile();
  ASSERT_TRUE(ReadSafetensors(good, nullptr, "t.st").ok());
  for (size_t n = 0; n < good.size(); ++n) {
    EXPECT_FALSE(ReadSafetensors(good.substr(0, n), nullptr, "t.st").ok())
        << "truncated to " << n << " bytes";
  }
}

TEST(SafetensorsCorruptionTest, FlippedBytesNeverReadOutside) {
  std::string good = GoodFile();
  int ok = 0;
  for (size_t i = 0; i < good.size(); ++i) {
    for (unsigned char x : {0x01, 0x80, 0xff}) {
      std::string bad = good;
      bad[i] = static_cast<char>(bad[i] ^ x);
      auto owner = std::make_shared<int>(0);
      StatusOr<Checkpoint> ck = ReadSafetensors(bad, owner, "f.st");
      if (!ck.ok()) continue;
      ++ok;
      for (const CheckpointEntry& e : ck->entries) {
        const std::byte* b = reinterpret_cast<const std::byte*>(bad.data());
        if (e.tensor.data() >= b && e.tensor.data() < b + bad.size()) {
          EXPECT_LE(e.tensor.data() + e.tensor.nbytes(), b + bad.size());
        }
      }
    }
  }
  EXPECT_GT(ok, 0);  // flips in the data bytes still read
}

TEST(SafetensorsTest, LooksLikeSafetensorsByContent) {
  EXPECT_TRUE(LooksLikeSafetensors(GoodFile()));
  EXPECT_FALSE(LooksLikeSafetensors("{\"task\": \"tensor\", \"data\": {}}"));
  EXPECT_FALSE(LooksLikeSafetensors(std::string("PK\x03\x04", 4) +
                                    std::string(20, '\0')));
  EXPECT_FALSE(LooksLikeSafetensors(GoodFile().substr(0, 9)));
}

}  // namespace
}  // namespace lockstep

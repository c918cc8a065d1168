#include "lockstep/format/checkpoint.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "lockstep/core/file.h"
#include "lockstep/numerics/half.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

const std::string kDir =
    std::string(LOCKSTEP_SOURCE_DIR) + "/tests/data/checkpoint/";

// One line of <name>.tsv (written by make_checkpoints.py with torch 1.13).
struct Expected {
  std::string name, kind, dtype, shape, values;
};

std::vector<Expected> ReadTsv(const std::string& path) {
  std::ifstream in(path);
  std::vector<Expected> out;
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    Expected e;
    std::getline(f, e.name, '\t');
    std::getline(f, e.kind, '\t');
    std::getline(f, e.dtype, '\t');
    std::getline(f, e.shape, '\t');
    std::getline(f, e.values, '\t');
    out.push_back(e);
  }
  return out;
}

double Element(const Tensor& t, int64_t i) {
  const std::byte* p =
      t.data() + i * static_cast<int64_t>(DTypeSize(t.dtype()));
  switch (t.dtype()) {
    case DType::kFloat32:
      return *reinterpret_cast<const float*>(p);
    case DType::kFloat64:
      return *reinterpret_cast<const double*>(p);
    case DType::kFloat16:
      return HalfToFloat(*reinterpret_cast<const uint16_t*>(p));
    case DType::kBFloat16:
      return BFloat16ToFloat(*reinterpret_cast<const uint16_t*>(p));
    case DType::kInt64:
      return static_cast<double>(*reinterpret_cast<const int64_t*>(p));
    default:
      ADD_FAILURE() << "dtype not in the test files";
      return 0;
  }
}

std::string Join(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

// Every entry of <name>.pt as torch itself sees it (<name>.tsv).
void ExpectMatchesTorch(const std::string& name) {
  std::vector<Expected> want = ReadTsv(kDir + name + ".tsv");
  ASSERT_FALSE(want.empty());
  StatusOr<Checkpoint> ck = ReadCheckpoint(kDir + name + ".pt");
  ASSERT_TRUE(ck.ok()) << ck.status().ToString();
  EXPECT_EQ(ck->format, "torch.save");
  ASSERT_EQ(ck->entries.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    const CheckpointEntry& e = ck->entries[i];
    const Expected& w = want[i];
    EXPECT_EQ(e.name, w.name);
    ASSERT_EQ(e.is_tensor, w.kind == "tensor") << w.name;
    if (!e.is_tensor) {
      EXPECT_EQ(e.type_name, w.dtype) << w.name;
      EXPECT_EQ(e.value.PyRepr(), w.values) << w.name;
      continue;
    }
    EXPECT_EQ(TorchDTypeName(e.tensor.dtype()), w.dtype) << w.name;
    EXPECT_EQ(Join(e.tensor.shape()), w.shape) << w.name;
    std::istringstream vals(w.values);
    int64_t k = 0;
    for (std::string v; std::getline(vals, v, ','); ++k) {
      ASSERT_LT(k, e.tensor.numel()) << w.name;
      EXPECT_EQ(Element(e.tensor, k), std::strtod(v.c_str(), nullptr))
          << w.name << " element " << k;
    }
    EXPECT_EQ(k, e.tensor.numel()) << w.name;
  }
}

TEST(CheckpointTest, StateDictMatchesTorch) { ExpectMatchesTorch("a"); }
TEST(CheckpointTest, ChangedStateDictMatchesTorch) { ExpectMatchesTorch("b"); }
TEST(CheckpointTest, NestedCheckpointWithOptimizerMatchesTorch) {
  ExpectMatchesTorch("nested");
}

const CheckpointEntry* Find(const Checkpoint& c, const std::string& name) {
  for (const CheckpointEntry& e : c.entries) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

TEST(CheckpointTest, TiedWeightsAndViewsShareTheirStorage) {
  StatusOr<Checkpoint> ck = ReadCheckpoint(kDir + "a.pt");
  ASSERT_TRUE(ck.ok()) << ck.status().ToString();
  const CheckpointEntry* embed = Find(*ck, "embed.weight");
  const CheckpointEntry* head = Find(*ck, "head.weight");
  ASSERT_TRUE(embed && head);
  // Both names view the one storage torch saved once: the same bytes.
  EXPECT_EQ(embed->tensor.data(), head->tensor.data());
  const CheckpointEntry* rows = Find(*ck, "view_rows");  // base[1:, ::2]
  ASSERT_TRUE(rows);
  EXPECT_EQ(Element(rows->tensor, 0), 6.0);  // storage offset 6
  EXPECT_EQ(Element(rows->tensor, 1), 8.0);  // stride 2
  EXPECT_EQ(Element(rows->tensor, 3), 12.0);
}

TEST(CheckpointTest, DetectsFormatsByContent) {
  std::string tmp = ::testing::TempDir() + "ckpt_detect";
  fs::create_directories(tmp);
  fs::copy_file(kDir + "a.pt", tmp + "/weights.dat",
                fs::copy_options::overwrite_existing);
  EXPECT_EQ(DetectCheckpoint(tmp + "/weights.dat"), CheckpointKind::kTorchZip);
  std::string legacy =
      std::string(LOCKSTEP_SOURCE_DIR) + "/tests/data/pt/legacy.pt";
  EXPECT_EQ(DetectCheckpoint(legacy), CheckpointKind::kTorchLegacy);
  std::string st = std::string(LOCKSTEP_SOURCE_DIR) +
                   "/fuzz/corpus/safetensors_fuzz/all_dtypes.safetensors";
  fs::copy_file(st, tmp + "/model.bin", fs::copy_options::overwrite_existing);
  EXPECT_EQ(DetectCheckpoint(tmp + "/model.bin"), CheckpointKind::kSafetensors);
  std::string toy = std::string(LOCKSTEP_SOURCE_DIR) + "/examples/msprobe_toy/";
  EXPECT_EQ(DetectCheckpoint(toy + "target"), CheckpointKind::kNone);
  EXPECT_EQ(DetectCheckpoint(kDir + "a.tsv"), CheckpointKind::kNone);
  EXPECT_EQ(DetectCheckpoint(tmp), CheckpointKind::kShardDir);
  EXPECT_EQ(DetectCheckpoint(tmp + "/absent"), CheckpointKind::kNone);
  fs::remove_all(tmp);
}

TEST(CheckpointTest, LegacyFormatIsAClearError) {
  StatusOr<Checkpoint> ck = ReadCheckpoint(std::string(LOCKSTEP_SOURCE_DIR) +
                                           "/tests/data/pt/legacy.pt");
  ASSERT_FALSE(ck.ok());
  EXPECT_EQ(ck.status().code(), StatusCode::kNotSupported);
  EXPECT_NE(ck.status().message().find("legacy torch.save format"),
            std::string::npos)
      << ck.status().ToString();
}

TEST(CheckpointTest, NotACheckpointIsAnError) {
  StatusOr<Checkpoint> ck = ReadCheckpoint(kDir + "a.tsv");
  ASSERT_FALSE(ck.ok());
  EXPECT_EQ(ck.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(ck.status().message().find("not a checkpoint"), std::string::npos);
}

// A one-tensor safetensors file: F32 `name` = {v, v + 1}.
std::string OneTensor(const std::string& name, float v) {
  std::string header = "{\"" + name +
                       "\": {\"dtype\": \"F32\", \"shape\": [2], "
                       "\"data_offsets\": [0, 8]}}";
  while (header.size() % 8) header += ' ';
  std::string out(8, '\0');
  out[0] = static_cast<char>(header.size());
  float data[2] = {v, v + 1};
  return out + header + std::string(reinterpret_cast<char*>(data), 8);
}

void Write(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

TEST(CheckpointTest, ShardDirectoryWithIndex) {
  std::string dir = ::testing::TempDir() + "ckpt_shards";
  fs::remove_all(dir);
  fs::create_directories(dir);
  Write(dir + "/model-00002-of-00002.safetensors", OneTensor("b.weight", 3));
  Write(dir + "/model-00001-of-00002.safetensors", OneTensor("a.weight", 1));
  Write(dir + "/model.safetensors.index.json",
        "{\"metadata\": {\"total_size\": 16}, \"weight_map\": {\"a.weight\": "
        "\"model-00001-of-00002.safetensors\", \"b.weight\": "
        "\"model-00002-of-00002.safetensors\"}}");
  StatusOr<Checkpoint> ck = ReadCheckpoint(dir);
  ASSERT_TRUE(ck.ok()) << ck.status().ToString();
  ASSERT_EQ(ck->entries.size(), 2u);
  EXPECT_EQ(ck->entries[0].name, "a.weight");
  EXPECT_EQ(ck->entries[1].name, "b.weight");
  EXPECT_EQ(Element(ck->entries[1].tensor, 1), 4.0);
  // The index names a tensor its shard lacks.
  Write(
      dir + "/model.safetensors.index.json",
      "{\"weight_map\": {\"c.weight\": \"model-00001-of-00002.safetensors\"}}");
  ck = ReadCheckpoint(dir);
  ASSERT_FALSE(ck.ok());
  EXPECT_NE(ck.status().message().find("'c.weight' is not in"),
            std::string::npos)
      << ck.status().ToString();
  fs::remove_all(dir);
}

TEST(CheckpointTest, ShardDirectoryWithoutIndexRefusesRepeatedNames) {
  std::string dir = ::testing::TempDir() + "ckpt_shards_noindex";
  fs::remove_all(dir);
  fs::create_directories(dir);
  Write(dir + "/part1.safetensors", OneTensor("w", 1));
  Write(dir + "/part2.safetensors", OneTensor("v", 2));
  StatusOr<Checkpoint> ck = ReadCheckpoint(dir);
  ASSERT_TRUE(ck.ok()) << ck.status().ToString();
  EXPECT_EQ(ck->entries.size(), 2u);
  Write(dir + "/part2.safetensors", OneTensor("w", 2));
  ck = ReadCheckpoint(dir);
  ASSERT_FALSE(ck.ok());
  EXPECT_NE(ck.status().message().find("in another shard"), std::string::npos)
      << ck.status().ToString();
  fs::remove_all(dir);
}

}  // namespace
}  // namespace lockstep

// The tensor pack: what PackWriter writes PackReader reads back bit for bit
// (each entry the exact .npy bytes of msprobe's layout), and every damaged,
// truncated, unfinished or crafted pack is refused with a message, never
// read wrongly and never a crash.
#include "lockstep/format/tensor_pack.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "lockstep/format/crc32.h"
#include "lockstep/format/npy.h"
#include "lockstep/format/pack_writer.h"
#include "testing/fault_env.h"
#include "testing/test_dir.h"

namespace lockstep {
namespace {

using ::lockstep::testing::FreshTestDir;
using ::lockstep::testing::Slurp;

Tensor Iota(DType dtype, std::vector<int64_t> shape, int seed = 0) {
  int64_t n = NumElements(shape);
  std::string bytes(static_cast<size_t>(n) * DTypeSize(dtype), '\0');
  for (size_t i = 0; i < bytes.size(); ++i)
    bytes[i] = static_cast<char>((i * 131 + seed * 7 + 1) & 0x3f);
  return Tensor::FromBytes(dtype, std::move(shape), std::move(bytes));
}

std::string_view Bytes(const Tensor& t) {
  return {reinterpret_cast<const char*>(t.data()), t.nbytes()};
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

struct Named {
  std::string name;
  Tensor t;
};

std::vector<Named> SampleTensors() {
  return {{"a.input.0.npy", Iota(DType::kFloat32, {3, 4})},
          {"scalar.npy", Iota(DType::kFloat64, {})},
          {"empty.npy", Iota(DType::kFloat32, {0, 5})},
          {"half.npy", Iota(DType::kFloat16, {7})},
          {"ints.npy", Iota(DType::kInt64, {2, 3, 1})},
          {"flags.npy", Iota(DType::kBool, {5})},
          {"bf16.npy", Iota(DType::kBFloat16, {9})}};
}

std::string WritePack(const std::string& path, const std::vector<Named>& ts,
                      bool finish = true) {
  auto w = PackWriter::Create(path);
  EXPECT_TRUE(w.ok()) << w.status().message();
  for (const Named& n : ts) {
    Status st = (*w)->Append(n.name, n.t);
    EXPECT_TRUE(st.ok()) << st.message();
  }
  if (finish) {
    EXPECT_TRUE((*w)->Finish().ok());
  }
  return Slurp(path);
}

TEST(TensorPackTest, EntriesAreTheNpyFilesBitForBit) {
  std::string dir = FreshTestDir("pack_");
  std::vector<Named> ts = SampleTensors();
  std::string file = WritePack(dir + "p.pack", ts);
  auto r = PackReader::Open(dir + "p.pack");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ((*r)->entries().size(), ts.size());
  for (const Named& n : ts) {
    const PackEntry* e = (*r)->Find(n.name);
    ASSERT_NE(e, nullptr) << n.name;
    EXPECT_EQ(e->offset % kPackAlignment, 0u);
    EXPECT_EQ(file.substr(e->offset, e->size), EncodeNpy(n.t)) << n.name;
    auto t = (*r)->Read(n.name);
    ASSERT_TRUE(t.ok()) << t.status().message();
    EXPECT_EQ(t->shape(), n.t.shape());
    if (n.t.dtype() == DType::kBFloat16) {  // widened, as .npy files are
      EXPECT_EQ(t->dtype(), DType::kFloat32);
      continue;
    }
    EXPECT_EQ(t->dtype(), n.t.dtype());
    EXPECT_EQ(Bytes(*t), Bytes(n.t)) << n.name;
    if (t->nbytes() > 0) {  // zero-copy, 64-byte aligned, region recorded
      EXPECT_EQ(reinterpret_cast<uintptr_t>(t->data()) % 64, 0u);
      ASSERT_NE(t->file_region(), nullptr);
      EXPECT_EQ(t->file_region()->offset, e->offset + e->head);
    }
  }
  EXPECT_EQ((*r)->Read("absent.npy").status().code(), StatusCode::kNotFound);
}

TEST(TensorPackTest, LargeTensorLeavesItsCrcToTheReaderOfTheBytes) {
  std::string dir = FreshTestDir("pack_");
  Tensor big = Iota(DType::kFloat32, {1 << 19});  // 2 MiB
  WritePack(dir + "p.pack", {{"big.npy", big}});
  auto r = PackReader::Open(dir + "p.pack");
  ASSERT_TRUE(r.ok());
  auto t = (*r)->Read("big.npy");
  ASSERT_TRUE(t.ok());
  ASSERT_TRUE(t->unverified_crc32().has_value());
  EXPECT_TRUE(VerifyTensorCrc32(*t, "big").ok());
  EXPECT_EQ(Bytes(*t), Bytes(big));
}

TEST(TensorPackTest, UnfinishedPackIsRefusedSayingSo) {
  std::string dir = FreshTestDir("pack_");
  {
    auto w = PackWriter::Create(dir + "p.pack");
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Append("x.npy", Iota(DType::kFloat32, {4})).ok());
  }  // destroyed without Finish: a crash between two tensors
  auto r = PackReader::Open(dir + "p.pack");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
  EXPECT_NE(r.status().message().find("no index"), std::string::npos)
      << r.status().message();
}

TEST(TensorPackTest, EveryTruncationAndExtensionIsRefused) {
  std::string dir = FreshTestDir("pack_");
  std::string file = WritePack(dir + "p.pack", SampleTensors());
  for (size_t n = 0; n < file.size(); ++n) {
    auto e = ParsePackIndex(std::string_view(file).substr(0, n), "t");
    EXPECT_FALSE(e.ok()) << "truncated to " << n;
  }
  EXPECT_FALSE(ParsePackIndex(file + '\0', "t").ok());
  EXPECT_FALSE(ParsePackIndex(std::string(64, '\0') + file, "t").ok());
}

// Any single changed byte either leaves every tensor read exactly (padding,
// reserved header bytes) or makes the pack or that entry an error.
TEST(TensorPackTest, NoFlippedByteGivesAWrongTensor) {
  std::string dir = FreshTestDir("pack_");
  std::vector<Named> ts = SampleTensors();
  std::string good = WritePack(dir + "p.pack", ts);
  auto ref = PackReader::Open(dir + "p.pack");
  ASSERT_TRUE(ref.ok());
  std::vector<std::string> want;
  for (const Named& n : ts) want.emplace_back(Bytes(*(*ref)->Read(n.name)));
  for (size_t i = 0; i < good.size(); ++i) {
    std::string bad = good;
    bad[i] = static_cast<char>(bad[i] ^ 0x5a);
    WriteFile(dir + "bad.pack", bad);
    auto r = PackReader::Open(dir + "bad.pack");
    if (!r.ok()) continue;
    for (size_t k = 0; k < ts.size(); ++k) {
      auto t = (*r)->Read(ts[k].name);
      if (!t.ok()) continue;
      EXPECT_EQ(Bytes(*t), want[k]) << "byte " << i << ", " << ts[k].name;
    }
  }
}

// A pack built by hand: header, the given entries' bytes at their offsets,
// then an index of `records` (each record's offset/size/name as given) and
// a footer that counts `count` (-1: records.size()).
struct Record {
  uint64_t offset, size;
  uint32_t head;
  std::string name;
};
std::string Craft(const std::string& body, const std::vector<Record>& records,
                  int64_t count = -1) {
  std::string f(kPackMagic);
  auto put = [&](uint64_t v, int n) {
    for (int i = 0; i < n; ++i) f += static_cast<char>(v >> (8 * i));
  };
  put(kPackVersion, 4);
  put(kPackAlignment, 4);
  f.resize(kPackHeaderSize, '\0');
  f += body;
  f.resize((f.size() + 63) / 64 * 64, '\0');
  uint64_t index_offset = f.size();
  const std::string area = f;  // f grows below: views go into this copy
  for (const Record& r : records) {
    bool in = r.offset <= index_offset && r.size <= index_offset - r.offset &&
              r.head <= r.size;
    std::string_view e = in ? std::string_view(area).substr(r.offset, r.size)
                            : std::string_view();
    put(r.offset, 8);
    put(r.size, 8);
    put(r.head, 4);
    put(in ? Crc32(e.substr(0, r.head)) : 0, 4);
    put(in ? Crc32(e.substr(r.head)) : 0, 4);
    put(r.name.size(), 4);
    f += r.name;
  }
  std::string index = f.substr(index_offset);
  put(index_offset, 8);
  put(index.size(), 8);
  put(count < 0 ? records.size() : static_cast<uint64_t>(count), 4);
  put(Crc32(index), 4);
  f += kPackEndMagic;
  return f;
}

TEST(TensorPackTest, CraftedIndexesAreRefusedWithTheReason) {
  std::string npy = EncodeNpy(Iota(DType::kFloat32, {16}));  // 128 + 64
  std::string body = npy + std::string(64, '\0') + npy;
  uint32_t head = static_cast<uint32_t>(npy.size() - 64);
  uint64_t second = 64 + npy.size() + 64;
  std::vector<Record> ok = {{64, npy.size(), head, "a.npy"},
                            {second, npy.size(), head, "b.npy"}};
  auto good = ParsePackIndex(Craft(body, ok), "t");
  ASSERT_TRUE(good.ok()) << good.status().message();
  struct Case {
    std::vector<Record> records;
    int64_t count;
    const char* says;
  };
  std::vector<Case> cases = {
      {{{64, npy.size(), head, "a.npy"}, {64 + 64, npy.size(), head, "b.npy"}},
       -1,
       "overlap"},
      {{{64, npy.size(), head, "a.npy"}, {64, npy.size(), head, "b.npy"}},
       -1,
       "overlap"},
      {{{64, npy.size(), head, "a.npy"}, {second, npy.size(), head, "a.npy"}},
       -1,
       "twice"},
      {{{64, uint64_t{1} << 40, head, "a.npy"}}, -1, "outside"},
      {{{~uint64_t{0} - 63, 128, head, "a.npy"}}, -1, "outside"},
      {{{96, npy.size(), head, "a.npy"}}, -1, "unaligned"},
      {{{0, npy.size(), head, "a.npy"}}, -1, "outside"},
      {{{64, npy.size(), head, "../x.npy"}}, -1, "'/'"},
      {{{64, npy.size(), head, ".."}}, -1, "'..'"},
      {{{64, npy.size(), head, ""}}, -1, "empty"},
      {{{64, npy.size(), 2, "a.npy"}}, -1, "header of 2"},
      {{{64, npy.size(), head, "a.npy"}}, 1000000, "at most"},
      {{{64, npy.size(), head, "a.npy"}}, 0, "after its 0 records"},
      {{{64, npy.size(), head, "a.npy"}}, 2, "holds at most 1"},
      {{{64, npy.size(), head, std::string(40, 'x')}}, 2, "truncated"},
  };
  for (const Case& c : cases) {
    auto r = ParsePackIndex(Craft(body, c.records, c.count), "t");
    ASSERT_FALSE(r.ok()) << c.says;
    EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
    EXPECT_NE(r.status().message().find(c.says), std::string::npos)
        << r.status().message();
  }
}

TEST(TensorPackTest, HeaderAndSizeMismatchesAreCaughtOnRead) {
  std::string dir = FreshTestDir("pack_");
  std::string npy = EncodeNpy(Iota(DType::kFloat32, {16}));
  uint32_t head = static_cast<uint32_t>(npy.size() - 64);
  // The index claims a shorter entry than the .npy header describes.
  WriteFile(dir + "p.pack", Craft(npy, {{64, npy.size() - 4, head, "a.npy"}}));
  auto r = PackReader::Open(dir + "p.pack");
  ASSERT_TRUE(r.ok()) << r.status().message();
  auto t = (*r)->Read("a.npy");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kCorruption);
  // A version this lockstep does not know.
  std::string v2 = Craft(npy, {{64, npy.size(), head, "a.npy"}});
  v2[8] = 2;
  auto n = ParsePackIndex(v2, "t");
  EXPECT_EQ(n.status().code(), StatusCode::kNotSupported);
}

TEST(TensorPackTest, WriterRefusesBadNamesDuplicatesAndLateAppends) {
  std::string dir = FreshTestDir("pack_");
  auto w = PackWriter::Create(dir + "p.pack");
  ASSERT_TRUE(w.ok());
  Tensor t = Iota(DType::kFloat32, {2});
  for (const char* bad : {"", ".", "..", "a/b.npy"}) {
    EXPECT_EQ((*w)->Append(bad, t).code(), StatusCode::kInvalidArgument);
  }
  ASSERT_TRUE((*w)->Append("x.npy", t).ok());
  EXPECT_EQ((*w)->Append("x.npy", t).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE((*w)->Finish().ok());
  EXPECT_FALSE((*w)->Append("y.npy", t).ok());
  EXPECT_TRUE((*w)->Finish().ok());  // idempotent
  // The name is taken, also by a symbolic link.
  EXPECT_FALSE(PackWriter::Create(dir + "p.pack").ok());
  std::filesystem::create_symlink(dir + "elsewhere", dir + "link.pack");
  EXPECT_FALSE(PackWriter::Create(dir + "link.pack").ok());
  EXPECT_FALSE(std::filesystem::exists(dir + "elsewhere"));
}

TEST(TensorPackTest, AbandonRemovesThePack) {
  std::string dir = FreshTestDir("pack_");
  auto w = PackWriter::Create(dir + "p.pack");
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Append("x.npy", Iota(DType::kFloat32, {2})).ok());
  EXPECT_EQ((*w)->Abandon(), 1u);
  EXPECT_FALSE(std::filesystem::exists(dir + "p.pack"));
  EXPECT_EQ((*w)->Abandon(), 0u);
}

// A write that fails half-way (here: the file size limit, as a full disk
// would) cuts the pack back; the entries before it stay readable.
TEST(TensorPackTest, FailedAppendLeavesAValidPack) {
  std::string dir = FreshTestDir("pack_");
  auto w = PackWriter::Create(dir + "p.pack");
  ASSERT_TRUE(w.ok());
  Tensor small = Iota(DType::kFloat32, {100});
  ASSERT_TRUE((*w)->Append("small.npy", small).ok());
  struct sigaction ignore {
  }, old{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGXFSZ, &ignore, &old);
  rlimit saved{};
  getrlimit(RLIMIT_FSIZE, &saved);
  rlimit limit = saved;
  limit.rlim_cur = 64 << 10;
  setrlimit(RLIMIT_FSIZE, &limit);
  Status st = (*w)->Append("big.npy", Iota(DType::kFloat32, {1 << 16}));
  setrlimit(RLIMIT_FSIZE, &saved);
  sigaction(SIGXFSZ, &old, nullptr);
  EXPECT_EQ(st.code(), StatusCode::kIoError) << st.message();
  ASSERT_TRUE((*w)->Append("after.npy", small).ok());
  ASSERT_TRUE((*w)->Finish().ok());
  auto r = PackReader::Open(dir + "p.pack");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)->entries().size(), 2u);
  EXPECT_EQ((*r)->Find("big.npy"), nullptr);
  auto t = (*r)->Read("after.npy");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(Bytes(*t), Bytes(small));
}

// The same through a full disk (FaultEnv, no root): ENOSPC part-way
// through an entry cuts the pack back, which gives the space back, so a
// smaller entry after it still fits.
TEST(TensorPackTest, FullDiskAppendLeavesAValidPack) {
  std::string dir = FreshTestDir("pack_");
  testing::FaultEnv env;
  ScopedEnv scope(&env);
  auto w = PackWriter::Create(dir + "p.pack");
  ASSERT_TRUE(w.ok());
  Tensor small = Iota(DType::kFloat32, {100});
  ASSERT_TRUE((*w)->Append("small.npy", small).ok());
  env.SetFreeBytes(16 << 10);
  Status st = (*w)->Append("big.npy", Iota(DType::kFloat32, {1 << 16}));
  EXPECT_EQ(st.code(), StatusCode::kIoError) << st.message();
  EXPECT_NE(st.message().find("No space left on device"), std::string::npos)
      << st.message();
  EXPECT_EQ(env.free_bytes(), 16u << 10);  // the cut gave the bytes back
  ASSERT_TRUE((*w)->Append("after.npy", small).ok());
  ASSERT_TRUE((*w)->Finish().ok());
  auto r = PackReader::Open(dir + "p.pack");
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ((*r)->entries().size(), 2u);
  EXPECT_EQ((*r)->Find("big.npy"), nullptr);
  auto t = (*r)->Read("after.npy");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(Bytes(*t), Bytes(small));
}

// pwritev may write part of what it is given: every entry still lands
// whole, byte for byte as without short writes.
TEST(TensorPackTest, ShortWritesGiveTheSamePack) {
  std::string dir = FreshTestDir("pack_");
  std::string want = WritePack(dir + "want.pack", SampleTensors());
  testing::FaultEnv env;
  ScopedEnv scope(&env);
  env.SetMaxWriteBytes(5);
  EXPECT_EQ(WritePack(dir + "got.pack", SampleTensors()), want);
  EXPECT_GT(env.short_writes(), 10);
}

// A close that fails (EIO: data lost on the way to the disk) fails Finish.
TEST(TensorPackTest, FailedCloseFailsFinish) {
  std::string dir = FreshTestDir("pack_");
  testing::FaultEnv env;
  ScopedEnv scope(&env);
  auto w = PackWriter::Create(dir + "p.pack");
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Append("x.npy", Iota(DType::kFloat32, {2})).ok());
  env.Fail(testing::FaultEnv::kClose, EIO);
  Status st = (*w)->Finish();
  EXPECT_EQ(st.code(), StatusCode::kIoError);
  EXPECT_NE(st.message().find("close failed"), std::string::npos)
      << st.message();
  EXPECT_EQ((*w)->Abandon(), 1u);  // what a caller does with it then
  EXPECT_FALSE(std::filesystem::exists(dir + "p.pack"));
}

TEST(TensorPackTest, ConcurrentAppendsAllLand) {
  std::string dir = FreshTestDir("pack_");
  auto w = PackWriter::Create(dir + "p.pack");
  ASSERT_TRUE(w.ok());
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k) {
    threads.emplace_back([&, k] {
      for (int i = 0; i < 50; ++i) {
        std::string name = std::to_string(k) + "." + std::to_string(i) + ".npy";
        EXPECT_TRUE(
            (*w)->Append(name, Iota(DType::kFloat32, {i + 1}, k * 100 + i))
                .ok());
      }
    });
  }
  for (auto& t : threads) t.join();
  ASSERT_TRUE((*w)->Finish().ok());
  auto r = PackReader::Open(dir + "p.pack");
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ((*r)->entries().size(), 200u);
  for (int k = 0; k < 4; ++k) {
    for (int i = 0; i < 50; ++i) {
      std::string name = std::to_string(k) + "." + std::to_string(i) + ".npy";
      auto t = (*r)->Read(name);
      ASSERT_TRUE(t.ok()) << name;
      EXPECT_EQ(Bytes(*t), Bytes(Iota(DType::kFloat32, {i + 1}, k * 100 + i)));
    }
  }
}

}  // namespace
}  // namespace lockstep

#include "lockstep/format/pt_reader.h"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "format/pt_builder.h"
#include "lockstep/core/file.h"
#include "lockstep/format/zip.h"

namespace lockstep {
namespace {

const std::string kPtDir = std::string(LOCKSTEP_SOURCE_DIR) + "/tests/data/pt/";
const std::string kToyDir =
    std::string(LOCKSTEP_FIXTURES_DIR) + "/msprobe/toy/";

std::string Slurp(const std::string& path) {
  auto s = ReadFileToString(path);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : std::string();
}

struct Case {
  std::string name, dtype, note;
  std::vector<int64_t> shape;
};

// tests/data/pt/manifest.tsv, written by make_pt.py.
std::vector<Case> Manifest() {
  std::vector<Case> cases;
  std::istringstream in(Slurp(kPtDir + "manifest.tsv"));
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    Case c;
    std::string shape;
    std::getline(fields, c.name, '\t');
    std::getline(fields, c.dtype, '\t');
    std::getline(fields, shape, '\t');
    std::getline(fields, c.note, '\t');
    std::istringstream dims(shape);
    for (std::string d; std::getline(dims, d, ',');)
      c.shape.push_back(std::stoll(d));
    cases.push_back(c);
  }
  return cases;
}

std::string Bytes(const Tensor& t) {
  return std::string(reinterpret_cast<const char*>(t.data()), t.nbytes());
}

void ExpectMatches(const Case& c, const StatusOr<Tensor>& t) {
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(TorchDTypeName(t->dtype()), c.dtype);
  EXPECT_EQ(t->shape(), c.shape);
  std::string want = Slurp(kPtDir + c.name + ".bin");
  std::string got = Bytes(*t);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i], want[i]) << "first difference at byte " << i;
  }
}

TEST(PtReaderTest, EveryManifestCaseMatchesTorch) {
  std::vector<Case> cases = Manifest();
  ASSERT_GE(cases.size(), 30u);
  for (const Case& c : cases) {
    if (c.name == "legacy") continue;
    SCOPED_TRACE(c.name + " (" + c.note + ")");
    ExpectMatches(c, ReadPtTensor(kPtDir + c.name + ".pt"));
    ExpectMatches(c, ReadPtTensorFromBuffer(Slurp(kPtDir + c.name + ".pt"),
                                            c.name + ".pt"));
  }
}

TEST(PtReaderTest, LegacyFormatIsNotSupportedWithAHint) {
  auto t = ReadPtTensor(kPtDir + "legacy.pt");
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().code(), StatusCode::kNotSupported);
  EXPECT_EQ(t.status().message(),
            kPtDir +
                "legacy.pt: legacy torch.save format (torch < 1.6, or "
                "_use_new_zipfile_serialization=False) is not supported. "
                "Note: re-save it with torch >= 1.6: "
                "torch.save(torch.load(f), f)");
}

// Reads `stem`.pt from a heap copy owned by a shared_ptr and says whether
// the tensor points into that copy.
bool PointsIntoOwner(const std::string& stem) {
  auto owner = std::make_shared<std::string>(Slurp(kPtDir + stem + ".pt"));
  auto t = ReadPtTensorFromMemory(*owner, owner, stem + ".pt");
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  const char* p = reinterpret_cast<const char*>(t->data());
  return p >= owner->data() && p < owner->data() + owner->size();
}

TEST(PtReaderTest, ContiguousTensorsAreZeroCopy) {
  EXPECT_TRUE(PointsIntoOwner("float32"));
  EXPECT_TRUE(PointsIntoOwner("rows_offset"));  // offset, still contiguous
  EXPECT_TRUE(PointsIntoOwner("msprobe_style"));
  EXPECT_TRUE(PointsIntoOwner("scalar_0d"));
  EXPECT_FALSE(PointsIntoOwner("transposed"));     // gathered
  EXPECT_FALSE(PointsIntoOwner("byteorder_big"));  // swapped
  EXPECT_FALSE(PointsIntoOwner("deflated"));       // inflated
  // From a memory map: torch aligns storages to 64 bytes.
  auto t = ReadPtTensor(kPtDir + "rows_offset.pt");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t->data()) % 64, 48u);  // 12 floats
}

TEST(PtReaderTest, FromBufferNeverPointsIntoTheBuffer) {
  std::string bytes = Slurp(kPtDir + "float32.pt");
  auto t = ReadPtTensorFromBuffer(bytes, "float32.pt");
  ASSERT_TRUE(t.ok());
  const char* p = reinterpret_cast<const char*>(t->data());
  EXPECT_TRUE(p < bytes.data() || p >= bytes.data() + bytes.size());
}

TEST(PtReaderTest, TensorKeepsItsOwnerAlive) {
  auto owner = std::make_shared<std::string>(Slurp(kPtDir + "float64.pt"));
  std::weak_ptr<std::string> weak = owner;
  auto t = ReadPtTensorFromMemory(*owner, owner, "float64.pt");
  ASSERT_TRUE(t.ok());
  owner.reset();
  EXPECT_FALSE(weak.expired());
  EXPECT_EQ(Bytes(*t), Slurp(kPtDir + "float64.bin"));
  t = Status::Internal("drop");
  EXPECT_TRUE(weak.expired());
}

StatusOr<PtTensorSpec> SpecOf(const std::string& stem) {
  std::string bytes = Slurp(kPtDir + stem + ".pt");
  LOCKSTEP_ASSIGN_OR_RETURN(ZipReader zip, ZipReader::Open(bytes, stem));
  std::string scratch;
  LOCKSTEP_ASSIGN_OR_RETURN(std::string_view pkl,
                            zip.Data(*zip.Find(stem + "/data.pkl"), &scratch));
  LOCKSTEP_ASSIGN_OR_RETURN(Unpickled u, Unpickle(pkl, stem));
  return ParsePtTensorSpec(u.root(), stem);
}

TEST(PtReaderTest, SpecsCarryRequiresGradParameterAndView) {
  auto p = SpecOf("parameter");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_TRUE(p->is_parameter);
  EXPECT_TRUE(p->requires_grad);
  auto r = SpecOf("requires_grad");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->requires_grad);
  EXPECT_FALSE(r->is_parameter);
  auto s = SpecOf("slice_offset");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->storage_offset, 8);
  EXPECT_EQ(s->storage_numel, 24);
  EXPECT_EQ(s->shape, (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(s->stride, (std::vector<int64_t>{6, 1}));
  EXPECT_EQ(s->storage_key, "0");
  EXPECT_EQ(s->location, "cpu");
  EXPECT_FALSE(s->requires_grad);
}

// Variants that newer torch writes, assembled by hand.
TEST(PtReaderTest, NewerTorchRebuildVariants) {
  using testing::PGlobal;
  std::string storage = testing::FloatBytes(4);
  std::string v2 = testing::TensorPickle({});
  std::string call = v2.substr(2, v2.size() - 3);  // no PROTO, no STOP
  std::string hooks = PGlobal("collections", "OrderedDict") + ")R";
  std::string with_metadata = call;  // 7th argument: metadata dict
  with_metadata.insert(with_metadata.size() - 2, "}");
  size_t p = call.find("((");  // the arguments tuple, up to REDUCE
  std::string args = call.substr(p, call.size() - 1 - p);
  const std::string pickles[] = {
      "\x80\x02" + with_metadata + ".",
      "\x80\x02" + PGlobal("torch._utils", "_rebuild_parameter_with_state") +
          "(" + call + "\x88" + hooks + "}tR.",
      "\x80\x02" + PGlobal("torch._tensor", "_rebuild_from_type_v2") + "(" +
          PGlobal("torch._utils", "_rebuild_tensor_v2") +
          PGlobal("torch", "Tensor") + args + "}tR."};
  for (const std::string& pkl : pickles) {
    auto t =
        ReadPtTensorFromBuffer(testing::BuildPt("v", pkl, storage), "v.pt");
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(Bytes(*t), storage);
  }
}

// ---- Real msprobe dumps (shared fixtures) ----

struct Stats {
  double max = -INFINITY, min = INFINITY, sum = 0, sumsq = 0;
  bool nan = false;
};

Stats Float32Stats(const Tensor& t) {
  Stats s;
  for (int64_t i = 0; i < t.numel(); ++i) {
    float f;
    std::memcpy(&f, t.data() + 4 * i, 4);
    double d = f;
    s.nan |= std::isnan(d);
    s.max = std::max(s.max, d);
    s.min = std::min(s.min, d);
    s.sum += d;
    s.sumsq += d * d;
  }
  return s;
}

// msprobe computes in float32: tolerance 64 * eps_f32 * max(|want|, 1).
void ExpectStat(double got, const rapidjson::Value& want, const char* what) {
  ASSERT_TRUE(want.IsNumber()) << what;
  double w = want.GetDouble();
  if (std::isnan(w) || std::isinf(w)) {
    EXPECT_TRUE(std::isnan(w) ? std::isnan(got) : got == w)
        << what << " " << got;
    return;
  }
  EXPECT_NEAR(got, w, 64 * 1.1920929e-7 * std::max(std::fabs(w), 1.0)) << what;
}

void CheckTensorEntry(const rapidjson::Value& v, const std::string& dir,
                      int* checked) {
  std::string name = v["data_name"].GetString();
  SCOPED_TRACE(name);
  auto t = ReadPtTensor(dir + "/dump_tensor_data/" + name);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(TorchDTypeName(t->dtype()), v["dtype"].GetString());
  std::vector<int64_t> shape;
  for (const auto& d : v["shape"].GetArray()) shape.push_back(d.GetInt64());
  EXPECT_EQ(t->shape(), shape);
  ASSERT_EQ(t->dtype(), DType::kFloat32);
  Stats s = Float32Stats(*t);
  double n = static_cast<double>(t->numel());
  ExpectStat(s.nan ? NAN : s.max, v["Max"], "Max");
  ExpectStat(s.nan ? NAN : s.min, v["Min"], "Min");
  ExpectStat(s.sum / n, v["Mean"], "Mean");
  ExpectStat(std::sqrt(s.sumsq), v["Norm"], "Norm");
  ++*checked;
}

// Every tensor a dump.json describes: walks its data with an explicit stack.
int CheckDump(const std::string& dir) {
  std::string json = Slurp(dir + "/dump.json");
  rapidjson::Document doc;
  doc.Parse<rapidjson::kParseNanAndInfFlag>(json.c_str());
  EXPECT_FALSE(doc.HasParseError());
  int checked = 0;
  std::vector<const rapidjson::Value*> todo = {&doc["data"]};
  while (!todo.empty()) {
    const rapidjson::Value* v = todo.back();
    todo.pop_back();
    if (v->IsArray()) {
      for (const auto& x : v->GetArray()) todo.push_back(&x);
    } else if (v->IsObject() && v->HasMember("data_name")) {
      CheckTensorEntry(*v, dir, &checked);
    } else if (v->IsObject()) {
      for (const auto& m : v->GetObject()) todo.push_back(&m.value);
    }
  }
  return checked;
}

TEST(PtReaderTest, MsprobeDumpsMatchTheirDumpJsonStatistics) {
  if (!IsDirectory(kToyDir)) GTEST_SKIP() << "no fixtures at " << kToyDir;
  EXPECT_EQ(CheckDump(kToyDir + "dumpA/out/step0/proc16954"), 21);
  EXPECT_EQ(CheckDump(kToyDir + "dumpB/out/step0/proc16991"), 21);
  EXPECT_GE(CheckDump(kToyDir + "tensC/out/step0/proc21046"), 21);
}

TEST(PtReaderTest, MsprobeValuesSpotCheck) {
  std::string dir = kToyDir + "dumpA/out/step0/proc16954/dump_tensor_data/";
  if (!IsDirectory(dir)) GTEST_SKIP() << "no fixtures at " << dir;
  auto t = ReadPtTensor(dir + "Functional.linear.0.forward.input.2.pt");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  ASSERT_EQ(t->shape(), (std::vector<int64_t>{4}));
  // Max and Min are elements, so they match dump.json exactly.
  const float* f = t->data_as<float>();
  EXPECT_EQ(*std::max_element(f, f + 4), -0.16275224089622498f);
  EXPECT_EQ(*std::min_element(f, f + 4), -0.33112430572509766f);
}

}  // namespace
}  // namespace lockstep

#include "lockstep/curve/readers.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

namespace lockstep {
namespace {

const std::string kFixtures = LOCKSTEP_FIXTURES_DIR;

size_t Count(const CurveLog& log, const std::string& name) {
  auto it = log.metrics.find(name);
  return it == log.metrics.end() ? 0 : it->second.points.size();
}

const CurvePoint& At(const CurveLog& log, const std::string& name, size_t i) {
  return log.metrics.at(name).points.at(i);
}

CurveLog MustRead(std::string_view text, std::string_view name,
                  CurveFormat f = CurveFormat::kAuto) {
  auto log = ReadCurveLogFromString(text, name, f);
  EXPECT_TRUE(log.ok()) << log.status().ToString();
  return log.ok() ? *log : CurveLog{};
}

// Expected counts below were obtained with /usr/bin/python3: json.load the
// file, and for each log_history entry with a "step", count every key whose
// value is an int or float (not bool).
TEST(TrainerStateTest, GeoLlm) {
  auto log =
      ReadCurveLog(kFixtures + "/trainer_state/AriesChen-UPC__GeoLLM__1.json");
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  EXPECT_EQ(log->format, CurveFormat::kTrainerState);
  EXPECT_EQ(log->lines, 300);
  EXPECT_EQ(log->malformed, 0);
  EXPECT_EQ(Count(*log, "loss"), 300u);
  EXPECT_EQ(Count(*log, "learning_rate"), 300u);
  EXPECT_EQ(Count(*log, "epoch"), 300u);
  EXPECT_EQ(log->metrics.size(), 3u);
  EXPECT_EQ(At(*log, "loss", 0).step, 10);
  EXPECT_DOUBLE_EQ(At(*log, "loss", 0).value, 4.2601);
  EXPECT_EQ(At(*log, "loss", 299).step, 3000);
  EXPECT_DOUBLE_EQ(At(*log, "loss", 299).value, 0.0028);
}

TEST(TrainerStateTest, TinyLlamaKeepsTrainAndEvalApart) {
  auto log = ReadCurveLog(
      kFixtures + "/trainer_state/Dheena731__tinyLlama-finetune__1.json");
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  EXPECT_EQ(log->lines, 200);
  EXPECT_EQ(Count(*log, "loss"), 186u);
  EXPECT_EQ(Count(*log, "grad_norm"), 186u);
  EXPECT_EQ(Count(*log, "mean_token_accuracy"), 186u);
  EXPECT_EQ(Count(*log, "num_tokens"), 186u);
  EXPECT_EQ(Count(*log, "eval_loss"), 14u);
  EXPECT_EQ(Count(*log, "eval_mean_token_accuracy"), 14u);
  EXPECT_EQ(Count(*log, "eval_runtime"), 14u);
  EXPECT_EQ(Count(*log, "epoch"), 200u);
  EXPECT_EQ(At(*log, "loss", 0).step, 15);
  EXPECT_DOUBLE_EQ(At(*log, "loss", 0).value, 2.0762);
  EXPECT_EQ(At(*log, "eval_loss", 13).step, 2800);
  EXPECT_DOUBLE_EQ(At(*log, "eval_loss", 13).value, 1.1219322681427002);
}

TEST(TrainerStateTest, CptCountsEntriesWithoutStep) {
  auto log = ReadCurveLog(kFixtures +
                          "/trainer_state/Jaong__Checkpoint-of-CPT__1.json");
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  EXPECT_EQ(log->lines, 31);
  EXPECT_EQ(log->malformed, 10);  // python: 10 entries have no "step"
  EXPECT_EQ(Count(*log, "loss"), 10u);
  EXPECT_EQ(Count(*log, "eval_loss"), 10u);
  EXPECT_EQ(Count(*log, "eval_rouge-1"), 10u);
  EXPECT_EQ(Count(*log, "train_loss"), 1u);
  EXPECT_EQ(Count(*log, "epoch"), 21u);
  EXPECT_EQ(At(*log, "grad_norm", 0).step, 500);
  ASSERT_EQ(log->warnings.size(), 1u);
}

TEST(TrainerStateTest, NoLogHistoryIsAnError) {
  auto log = ReadCurveLogFromString(R"({"global_step": 3})", "t.json",
                                    CurveFormat::kTrainerState);
  ASSERT_FALSE(log.ok());
  EXPECT_NE(log.status().message().find("log_history"), std::string::npos);
}

TEST(TrainerStateTest, NanLossIsKept) {
  CurveLog log = MustRead(
      R"({"log_history": [{"step": 1, "loss": NaN}, {"step": 2, "loss": 1}]})",
      "trainer_state.json");
  ASSERT_EQ(Count(log, "loss"), 2u);
  EXPECT_TRUE(std::isnan(At(log, "loss", 0).value));
}

TEST(MegatronTest, Fixture) {
  std::string path =
      kFixtures +
      "/megatron/bigscience-workshop__bigscience__experiments__gpt2-meg__"
      "meg_gpt2_base_n4_dp1_tp4_pp4-1809579.out";
  auto log = ReadCurveLog(path);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  EXPECT_EQ(log->format, CurveFormat::kMegatron);
  EXPECT_EQ(log->malformed, 0);
  EXPECT_EQ(log->lines, 1593);  // wc -l
  // 20 iteration lines; the first (iteration 10, all 10 skipped) has no lm
  // loss, and neither it nor iteration 20 a grad norm.
  EXPECT_EQ(Count(*log, "loss_scale"), 20u);
  EXPECT_EQ(Count(*log, "loss"), 19u);
  EXPECT_EQ(Count(*log, "grad_norm"), 18u);
  EXPECT_EQ(Count(*log, "skipped_iterations"), 20u);
  EXPECT_EQ(Count(*log, "nan_iterations"), 20u);
  EXPECT_EQ(Count(*log, "consumed_samples"), 20u);
  // The dynamic scaler (2^32, hysteresis 2, backoff 0.5) after 10 skips.
  EXPECT_EQ(At(*log, "loss_scale", 0).step, 10);
  EXPECT_EQ(At(*log, "loss_scale", 0).value, 8388608.0);
  EXPECT_EQ(At(*log, "skipped_iterations", 0).value, 10.0);
  EXPECT_EQ(At(*log, "loss", 0).step, 20);
  EXPECT_DOUBLE_EQ(At(*log, "loss", 0).value, 12.03115);
  EXPECT_DOUBLE_EQ(At(*log, "learning_rate", 1).value, 3.75e-05);
  ASSERT_EQ(Count(*log, "eval_loss"), 2u);
  EXPECT_EQ(At(*log, "eval_loss", 1).step, 200);
  EXPECT_DOUBLE_EQ(At(*log, "eval_loss", 1).value, 7.487306);
}

TEST(MegatronTest, MalformedIterationLinesAreCounted) {
  CurveLog log = MustRead(
      " iteration 1/ 10 | lm loss: 2.5 | loss scale: 65536.0 |\n"
      " iteration x/ 10 | lm loss: 2.5 |\n"
      " iteration 3/ 10\n"
      "iterations of warmup: 5\n"
      " iteration 4/ 10 | lm loss: nan | learning rate: bogus |\n",
      "train.log", CurveFormat::kMegatron);
  EXPECT_EQ(log.malformed, 2);
  ASSERT_EQ(Count(log, "loss"), 2u);
  EXPECT_TRUE(std::isnan(At(log, "loss", 1).value));
  EXPECT_EQ(Count(log, "learning_rate"), 0u);
}

TEST(MegatronTest, TimestampPrefixedLines) {
  CurveLog log = MustRead(
      "setting up\n"
      " [2024-03-01 10:00:00] iteration       10/     100 | lm loss: "
      "3.5E+00 | grad norm: 1.5 |\n",
      "slurm-1.out");
  EXPECT_EQ(log.format, CurveFormat::kMegatron);
  ASSERT_EQ(Count(log, "loss"), 1u);
  EXPECT_EQ(At(log, "loss", 0).step, 10);
  EXPECT_EQ(At(log, "grad_norm", 0).value, 1.5);
}

TEST(CsvTest, StepColumnQuotesAndMalformedRows) {
  CurveLog log = MustRead(
      "epoch,\"global_step\",train/loss,lr,note\n"
      "0.5,10,2.5,1e-3,\"a, b\"\n"
      "1.0,20,,1e-3,\"multi\nline\"\n"
      "1.5,x,2.0,1e-3,c\n"
      "2.0,40,1.5,1e-3,d,extra\n"
      "\n"
      "2.5,50,NaN,inf,e\n",
      "metrics.csv");
  EXPECT_EQ(log.format, CurveFormat::kCsv);
  EXPECT_EQ(log.malformed, 2);
  ASSERT_EQ(Count(log, "loss"), 2u);
  EXPECT_EQ(At(log, "loss", 0).step, 10);
  EXPECT_TRUE(std::isnan(At(log, "loss", 1).value));
  EXPECT_EQ(Count(log, "learning_rate"), 3u);
  EXPECT_TRUE(std::isinf(At(log, "learning_rate", 2).value));
  EXPECT_EQ(Count(log, "epoch"), 3u);
  EXPECT_EQ(Count(log, "note"), 0u);  // text only: no series
}

TEST(CsvTest, TsvSniffedAndFirstColumnStep) {
  CurveLog log = MustRead("n\tloss\n1\t0.5\n2\t0.25\n", "log.txt");
  EXPECT_EQ(log.format, CurveFormat::kCsv);
  ASSERT_EQ(Count(log, "loss"), 2u);
  EXPECT_EQ(At(log, "loss", 1).step, 2);
}

TEST(JsonlTest, StepKeysAndMalformedLines) {
  CurveLog log = MustRead(
      "{\"iteration\": 1, \"loss\": 2.0, \"lr\": 0.1, \"tag\": \"x\"}\n"
      "not json\n"
      "[1, 2]\n"
      "\n"
      "{\"loss\": 1.5}\n"
      "{\"step\": 3, \"loss\": Infinity, \"ok\": true}\n",
      "log.jsonl");
  EXPECT_EQ(log.format, CurveFormat::kJsonl);
  EXPECT_EQ(log.lines, 5);
  EXPECT_EQ(log.malformed, 3);
  ASSERT_EQ(Count(log, "loss"), 2u);
  EXPECT_EQ(At(log, "loss", 1).step, 3);
  EXPECT_EQ(Count(log, "learning_rate"), 1u);
  EXPECT_EQ(log.metrics.count("ok"), 0u);
}

TEST(ErrorsTest, EmptyAndNonNumericFiles) {
  for (const char* text : {"", "  \n\n"}) {
    auto log = ReadCurveLogFromString(text, "empty.csv");
    ASSERT_FALSE(log.ok());
    EXPECT_NE(log.status().message().find("empty.csv: empty"),
              std::string::npos);
  }
  auto csv = ReadCurveLogFromString("step,name\n1,a\n2,b\n", "t.csv");
  ASSERT_FALSE(csv.ok());
  EXPECT_NE(csv.status().message().find("no numeric series"),
            std::string::npos);
  auto jsonl = ReadCurveLogFromString("{\"a\": \"b\"}\n", "t.jsonl");
  EXPECT_FALSE(jsonl.ok());
  auto text = ReadCurveLogFromString("hello world\n", "notes.txt");
  ASSERT_FALSE(text.ok());
  EXPECT_EQ(text.status().code(), StatusCode::kInvalidArgument);
  auto missing = ReadCurveLog("/nonexistent/x.csv");
  EXPECT_FALSE(missing.ok());
}

TEST(CsvTest, OutOfRangeNumbersSaturateLikePython) {
  CurveLog log = MustRead("step,loss\n1,1e999\n2,-1e999\n3,1e-999\n4," +
                              std::string(400, '9') + "\n",
                          "x.csv");
  ASSERT_EQ(Count(log, "loss"), 4u);
  EXPECT_EQ(At(log, "loss", 0).value, HUGE_VAL);
  EXPECT_EQ(At(log, "loss", 1).value, -HUGE_VAL);
  EXPECT_EQ(At(log, "loss", 2).value, 0.0);
  EXPECT_EQ(At(log, "loss", 3).value, HUGE_VAL);
}

TEST(CanonicalNameTest, Aliases) {
  EXPECT_EQ(CanonicalMetricName("lm loss"), "loss");
  EXPECT_EQ(CanonicalMetricName("learning-rate"), "learning_rate");
  EXPECT_EQ(CanonicalMetricName("train/grad_norm"), "grad_norm");
  EXPECT_EQ(CanonicalMetricName("eval/loss"), "eval_loss");
  EXPECT_EQ(CanonicalMetricName("lm loss validation"), "eval_loss");
  EXPECT_EQ(CanonicalMetricName("mean_token_accuracy"), "mean_token_accuracy");
}

// 100k points of each text format; the time is printed, not asserted.
double TimeParse(const std::string& text, const char* name) {
  auto t0 = std::chrono::steady_clock::now();
  auto log = ReadCurveLogFromString(text, name);
  double ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - t0)
                  .count();
  EXPECT_TRUE(log.ok()) << log.status().ToString();
  if (log.ok()) {
    EXPECT_EQ(Count(*log, "loss"), 100000u) << name;
  }
  std::printf("[ TIMING ] %s: 100k points in %.1f ms\n", name, ms);
  return ms;
}

TEST(LargeLogTest, HundredThousandPointsOfEachFormat) {
  std::string csv = "step,loss,lr\n", jsonl, meg, hf = "{\"log_history\": [";
  char buf[256];
  for (int i = 1; i <= 100000; ++i) {
    double loss = 10.0 / i, lr = 1e-4;
    std::snprintf(buf, sizeof buf, "%d,%.6f,%.3e\n", i, loss, lr);
    csv += buf;
    std::snprintf(buf, sizeof buf,
                  "{\"step\": %d, \"loss\": %.6f, \"learning_rate\": %.3e}\n",
                  i, loss, lr);
    jsonl += buf;
    hf += std::string(i > 1 ? "," : "") + std::string(buf, strlen(buf) - 1);
    std::snprintf(buf, sizeof buf,
                  " iteration %8d/  100000 | learning rate: %.3E | lm loss: "
                  "%.6E | loss scale: 65536.0 |\n",
                  i, lr, loss);
    meg += buf;
  }
  hf += "]}";
  TimeParse(csv, "big.csv");
  TimeParse(jsonl, "big.jsonl");
  TimeParse(hf, "trainer_state.json");
  TimeParse(meg, "big.log");
}

}  // namespace
}  // namespace lockstep

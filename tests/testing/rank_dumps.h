// Generated dumps of many ranks (msprobe layout, statistics task) for tests
// and benchmarks of the origin across ranks: a program of phases that every
// rank runs (compute, all_reduce, all_gather, barrier, a pipeline of
// send/recv stages), simulated on both sides with one optional fault on the
// target side (an operator's output scaled by 1 + rel on one rank); every
// later operator and every collective carries the damage on.
//
// A tensor is a positive number v, written as Max v, Min v/2, Mean 3v/4,
// Norm 10v; a compute op maps v to 0.9 v + 0.3; all_reduce sums its group's
// values; all_gather lists them (and the rank goes on with their sum);
// recv takes the sender's value. Receive buffers are zeros, or (with
// garbage_buffers) values that differ between the two sides.
// Header-only; thread safety: none (one generator per thread).
#ifndef LOCKSTEP_TESTS_TESTING_RANK_DUMPS_H_
#define LOCKSTEP_TESTS_TESTING_RANK_DUMPS_H_

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

namespace lockstep::testing {

struct Phase {
  enum Kind { kCompute, kAllReduce, kAllGather, kBarrier, kPipeline } kind;
  int ops = 1;         // kCompute: ops per rank; kPipeline: ops per stage
  int group_size = 0;  // collectives: consecutive ranks per group; 0: world
};

struct RankProgram {
  int ranks = 8;
  std::vector<Phase> phases;
  // The fault: on the target side, rank fault_rank's compute op number
  // fault_op (its n-th Functional.linear call, 0-based) returns 1 + rel
  // times its output. fault_rank < 0: no fault.
  int fault_rank = -1;
  int fault_op = -1;
  double rel = 0.25;
  // Written as the group of every collective, replacing the real one
  // (corruption tests); "" keeps the real one.
  std::string group_override;
  // Receive buffers hold different values on the two sides (memory from
  // torch.empty); false: zeros on both.
  bool garbage_buffers = false;
  // all_reduce with async_op=True: msprobe dumps it after wait(), so its
  // input holds the result too.
  bool async_all_reduce = false;
};

namespace rank_dumps_internal {

inline std::string Num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

inline std::string Tensor(double v) {
  return "{\"type\": \"torch.Tensor\", \"dtype\": \"torch.float32\", "
         "\"shape\": [4, 8], \"Max\": " +
         Num(v) + ", \"Min\": " + Num(v / 2) + ", \"Mean\": " + Num(v * 0.75) +
         ", \"Norm\": " + Num(v * 10) + ", \"requires_grad\": false}";
}

inline std::string Int(int64_t v) {
  return "{\"type\": \"int\", \"value\": " + std::to_string(v) + "}";
}

// One side's run: each rank's value and dump.json entries.
class Side {
 public:
  Side(const RankProgram& p, bool target)
      : p_(p), target_(target), v_(p.ranks), entries_(p.ranks) {
    for (int r = 0; r < p.ranks; ++r) v_[r] = 1 + 0.01 * r;
  }

  void Run() {
    for (const Phase& ph : p_.phases) {
      switch (ph.kind) {
        case Phase::kCompute:
          for (int r = 0; r < p_.ranks; ++r) Compute(r, ph.ops);
          break;
        case Phase::kAllReduce:
        case Phase::kAllGather:
          Collective(ph);
          break;
        case Phase::kBarrier:
          for (int r = 0; r < p_.ranks; ++r) {
            Add(r, "barrier",
                "\"input_args\": [], \"input_kwargs\": {\"group\": null}, "
                "\"output\": [null]");
          }
          break;
        case Phase::kPipeline:
          Pipeline(ph.ops);
          break;
      }
    }
  }

  void Write(const std::string& root) const {
    for (int r = 0; r < p_.ranks; ++r) {
      std::string dir = root + "/step0/rank" + std::to_string(r);
      std::filesystem::create_directories(dir);
      std::ofstream out(dir + "/dump.json");
      out << "{\"task\": \"statistics\", \"level\": \"L1\", \"framework\": "
             "\"pytorch\", \"dump_data_dir\": null, \"data\": {\n";
      for (size_t k = 0; k < entries_[r].size(); ++k)
        out << (k ? ",\n" : "") << entries_[r][k];
      out << "\n}}\n";
    }
  }

 private:
  std::string Name(int r, const std::string& prefix, const std::string& api) {
    int n = count_[{r, prefix + api}]++;
    return prefix + "." + api + "." + std::to_string(n) + ".forward";
  }

  void Add(int r, const std::string& api, const std::string& body) {
    entries_[r].push_back("\"" + Name(r, "Distributed", api) + "\": {" + body +
                          "}");
  }

  void Compute(int r, int ops) {
    for (int k = 0; k < ops; ++k) {
      int n = count_[{r, "Functionallinear"}];
      std::string name = Name(r, "Functional", "linear");
      double out = 0.9 * v_[r] + 0.3;
      if (target_ && r == p_.fault_rank && n == p_.fault_op) out *= 1 + p_.rel;
      entries_[r].push_back(
          "\"" + name + "\": {\"input_args\": [" + Tensor(v_[r]) +
          "], \"input_kwargs\": {}, \"output\": [" + Tensor(out) + "]}");
      v_[r] = out;
    }
  }

  // A receive buffer before the call.
  double Garbage(int r) const {
    if (!p_.garbage_buffers) return 0;
    return (target_ ? 7.0 : 3.0) + r;  // uninitialised: differs
  }

  std::string Group(int first, int size) const {
    if (!p_.group_override.empty()) return p_.group_override;
    if (size == p_.ranks) return "null";
    std::string ranks;
    for (int g = first; g < first + size; ++g)
      ranks += (g > first ? ", " : "") + std::to_string(g);
    return "{\"type\": \"torch.ProcessGroup\", \"group_ranks\": [" + ranks +
           "], \"group_id\": \"0000abcd\"}";
  }

  void Collective(const Phase& ph) {
    int size = ph.group_size > 0 ? ph.group_size : p_.ranks;
    for (int first = 0; first < p_.ranks; first += size) {
      double sum = 0;
      for (int g = first; g < first + size; ++g) sum += v_[g];
      std::string group = Group(first, size);
      for (int r = first; r < first + size; ++r) {
        if (ph.kind == Phase::kAllReduce && p_.async_all_reduce) {
          const std::string t = "{\"type\": \"bool\", \"value\": true}";
          Add(r, "all_reduce",
              "\"input_args\": [" + Tensor(sum) +
                  "], \"input_kwargs\": {\"group\": " + group +
                  ", \"async_op\": " + t + "}, \"output\": [" + Tensor(sum) +
                  ", " + group + ", " + t + "]");
        } else if (ph.kind == Phase::kAllReduce) {
          Add(r, "all_reduce",
              "\"input_args\": [" + Tensor(v_[r]) +
                  "], \"input_kwargs\": {\"group\": " + group +
                  "}, \"output\": [" + Tensor(sum) + ", " + group + "]");
        } else {
          std::string before, after;
          for (int g = first; g < first + size; ++g) {
            before += (g > first ? ", " : "") + Tensor(Garbage(r));
            after += (g > first ? ", " : "") + Tensor(v_[g]);
          }
          Add(r, "all_gather",
              "\"input_args\": [[" + before + "], " + Tensor(v_[r]) +
                  "], \"input_kwargs\": {\"group\": " + group +
                  "}, \"output\": [[" + after + "], " + Tensor(v_[r]) + ", " +
                  group + "]");
        }
      }
      for (int r = first; r < first + size; ++r) v_[r] = sum / size;
    }
  }

  // Stage r receives from r - 1, computes, sends to r + 1.
  void Pipeline(int ops) {
    for (int r = 0; r < p_.ranks; ++r) {
      if (r > 0) {
        v_[r] = v_[r - 1];
        Add(r, "recv",
            "\"input_args\": [" + Tensor(Garbage(r)) +
                "], \"input_kwargs\": {\"src\": " + Int(r - 1) +
                "}, \"output\": [" + Tensor(v_[r]) + ", " + Int(r - 1) + "]");
      }
      Compute(r, ops);
      if (r + 1 < p_.ranks) {
        Add(r, "send",
            "\"input_args\": [" + Tensor(v_[r]) + ", " + Int(r + 1) +
                "], \"input_kwargs\": {}, \"output\": [" + Tensor(v_[r]) +
                ", " + Int(r + 1) + "]");
      }
    }
  }

  const RankProgram& p_;
  bool target_;
  std::vector<double> v_;
  std::vector<std::vector<std::string>> entries_;
  std::map<std::pair<int, std::string>, int> count_;
};

}  // namespace rank_dumps_internal

// Writes `p` as <dir>/target/step0/rank{R}/dump.json and
// <dir>/baseline/step0/rank{R}/dump.json.
inline void WriteRankDumps(const RankProgram& p, const std::string& dir) {
  for (bool target : {true, false}) {
    rank_dumps_internal::Side side(p, target);
    side.Run();
    side.Write(dir + (target ? "/target" : "/baseline"));
  }
}

// Data parallel: 3 compute ops, an all_reduce, 1 compute op, an all_reduce;
// `fault_rank`'s op 1 changed (-1: none).
inline RankProgram DataParallelProgram(int ranks, int fault_rank) {
  RankProgram p;
  p.ranks = ranks;
  p.phases = {{Phase::kCompute, 3},
              {Phase::kAllReduce},
              {Phase::kCompute, 1},
              {Phase::kAllReduce}};
  p.fault_rank = fault_rank;
  p.fault_op = 1;
  return p;
}

}  // namespace lockstep::testing

#endif  // LOCKSTEP_TESTS_TESTING_RANK_DUMPS_H_

#include "lockstep/compare/partial_result.h"

#include <algorithm>
#include <cstring>

#include "lockstep/compare/msprobe_row.h"
#include "lockstep/format/crc32.h"

namespace lockstep {
namespace partial_codec {  // named: the layer builds as a unity build
namespace {

constexpr char kMagic[] = "LSPART01";
constexpr size_t kMagicSize = 8;

class Writer {
 public:
  void U8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void U32(uint32_t v) { Raw(&v, 4); }
  void U64(uint64_t v) { Raw(&v, 8); }
  void I64(int64_t v) { Raw(&v, 8); }
  void F64(double v) { Raw(&v, 8); }
  void Str(std::string_view s) {
    U32(static_cast<uint32_t>(s.size()));
    out_.append(s);
  }
  std::string& out() { return out_; }

 private:
  // Little-endian machines only (x86-64, aarch64): the bytes as they are.
  void Raw(const void* p, size_t n) {
    out_.append(static_cast<const char*>(p), n);
  }
  std::string out_;
};

class Reader {
 public:
  Reader(std::string_view in, size_t base) : in_(in), base_(base) {}
  bool U8(uint8_t* v) { return Raw(v, 1); }
  bool U32(uint32_t* v) { return Raw(v, 4); }
  bool U64(uint64_t* v) { return Raw(v, 8); }
  bool I64(int64_t* v) { return Raw(v, 8); }
  bool F64(double* v) { return Raw(v, 8); }
  bool I32(int32_t* v) {
    int64_t w;
    if (!I64(&w) || w < INT32_MIN || w > INT32_MAX) return false;
    *v = static_cast<int32_t>(w);
    return true;
  }
  bool Size(size_t* v) {
    uint64_t w;
    if (!U64(&w) || w > in_.size()) return false;  // no count exceeds bytes
    *v = static_cast<size_t>(w);
    return true;
  }
  bool Bool(bool* v) {
    uint8_t b;
    if (!U8(&b) || b > 1) return false;
    *v = b == 1;
    return true;
  }
  bool Str(std::string* s) {
    uint32_t n;
    if (!U32(&n) || n > in_.size() - pos_) return false;
    s->assign(in_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  template <typename E>
  bool Enum(E* e, uint8_t max) {
    uint8_t b;
    if (!U8(&b) || b > max) return false;
    *e = static_cast<E>(b);
    return true;
  }
  size_t offset() const { return base_ + pos_; }
  bool done() const { return pos_ == in_.size(); }

 private:
  bool Raw(void* p, size_t n) {
    if (n > in_.size() - pos_) return false;
    std::memcpy(p, in_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  std::string_view in_;
  size_t base_, pos_ = 0;
};

// msprobe_result: "", "pass", "warning", "error" as 0..3.
uint8_t ResultCode(std::string_view r) {
  for (uint8_t i = 0; i < 3; ++i) {
    if (r == MsprobeResultName(static_cast<MsprobeResult>(i))) return i + 1;
  }
  return 0;
}
std::string_view ResultName(uint8_t code) {
  return code == 0 ? std::string_view()
                   : MsprobeResultName(static_cast<MsprobeResult>(code - 1));
}

void PutRow(const CompareRow& r, Writer* w) {
  w->U32(static_cast<uint32_t>(r.cells.size()));
  for (std::string_view c : r.cells) w->Str(c);
  w->Str(r.entry);
  w->I64(r.rank);
  w->I64(r.step);
  w->U8(r.is_output);
  w->U8(r.is_input);
  w->U8(r.is_tensor);
  w->I64(r.module);
  w->U8(static_cast<uint8_t>(r.verdict));
  w->U8(static_cast<uint8_t>(r.reason));
  w->U32(static_cast<uint32_t>(r.messages.size()));
  for (const std::string& m : r.messages) w->Str(m);
  w->U8(ResultCode(r.msprobe_result));
  for (double d : {r.cosine, r.max_abs_err, r.max_rel_err, r.one_minus_cos,
                   r.error, r.floor})
    w->F64(d);
  for (double d : r.target_stats) w->F64(d);
  for (double d : r.baseline_stats) w->F64(d);
}

bool GetRow(Reader* in, PackedCellsBuilder* cells, CompareRow* r) {
  uint32_t n, m;
  if (!in->U32(&n)) return false;
  std::string s;
  for (uint32_t i = 0; i < n; ++i) {
    if (!in->Str(&s)) return false;
    cells->Add(s);
  }
  r->cells = cells->Finish();
  int32_t rank, step;
  uint8_t result;
  if (!in->Str(&r->entry) || !in->I32(&rank) || !in->I32(&step) ||
      !in->Bool(&r->is_output) || !in->Bool(&r->is_input) ||
      !in->Bool(&r->is_tensor) || !in->I32(&r->module) ||
      !in->Enum(&r->verdict, 3) || !in->Enum(&r->reason, 8) || !in->U32(&m))
    return false;
  r->rank = rank;
  r->step = step;
  r->messages.resize(m > 1024 ? 0 : m);
  if (m > 1024) return false;
  for (std::string& msg : r->messages)
    if (!in->Str(&msg)) return false;
  if (!in->U8(&result) || result > 3) return false;
  r->msprobe_result = ResultName(result);
  for (double* d : {&r->cosine, &r->max_abs_err, &r->max_rel_err,
                    &r->one_minus_cos, &r->error, &r->floor})
    if (!in->F64(d)) return false;
  for (double& d : r->target_stats)
    if (!in->F64(&d)) return false;
  for (double& d : r->baseline_stats)
    if (!in->F64(&d)) return false;
  return true;
}

void PutGap(const AlignmentGap& g, Writer* w) {
  w->Str(g.entry);
  w->U8(g.in_target);
  w->I64(g.rank);
  w->U64(g.position);
  w->I64(g.step);
  w->U64(g.target_position);
}

bool GetGap(Reader* in, AlignmentGap* g) {
  uint64_t pos, tpos;
  if (!in->Str(&g->entry) || !in->Bool(&g->in_target) || !in->I32(&g->rank) ||
      !in->U64(&pos) || !in->I32(&g->step) || !in->U64(&tpos))
    return false;
  g->position = pos;
  g->target_position = tpos;
  return true;
}

void PutCall(const CollectiveCall& c, Writer* w) {
  w->Str(c.entry);
  w->Str(c.api);
  w->U8(static_cast<uint8_t>(c.flow));
  w->Str(c.group);
  w->I64(c.root);
  w->I64(c.peer);
  w->I64(c.data_arg);
  w->Str(c.data_kw);
}

bool GetCall(Reader* in, CollectiveCall* c) {
  return in->Str(&c->entry) && in->Str(&c->api) && in->Enum(&c->flow, 5) &&
         in->Str(&c->group) && in->I64(&c->root) && in->I64(&c->peer) &&
         in->I32(&c->data_arg) && in->Str(&c->data_kw);
}

void PutStatus(const Status& s, Writer* w) {
  w->U8(static_cast<uint8_t>(s.code()));
  w->Str(s.message());
}

bool GetStatus(Reader* in, Status* s) {
  StatusCode code;
  std::string message;
  if (!in->Enum(&code, static_cast<uint8_t>(StatusCode::kInternal)) ||
      !in->Str(&message))
    return false;
  *s = code == StatusCode::kOk ? Status::Ok() : Status(code, message, "");
  return true;
}

void PutPair(const PairOutcome& p, Writer* w) {
  w->U64(p.pair);
  w->U8(static_cast<uint8_t>(p.kind));
  PutStatus(p.status, w);
  w->U64(p.rows);
  w->U64(p.warnings);
  w->U64(p.gaps);
  w->I64(p.collective_warning);
  w->I64(p.collectives.step);
  w->I64(p.collectives.rank);
  w->U64(p.collectives.calls.size());
  for (const CollectiveCall& c : p.collectives.calls) PutCall(c, w);
  w->U8(p.parents.has_value());
  if (p.parents) {
    w->U64(p.parents->modules.size());
    for (const std::string& m : p.parents->modules) w->Str(m);
    // In key order: the same partial gives the same bytes.
    std::vector<const std::pair<const std::string, std::string>*> links;
    for (const auto& link : p.parents->parent) links.push_back(&link);
    std::sort(links.begin(), links.end(),
              [](auto* a, auto* b) { return a->first < b->first; });
    w->U64(links.size());
    for (const auto* link : links) {
      w->Str(link->first);
      w->Str(link->second);
    }
  }
  w->U8(p.stack_file.has_value());
  if (p.stack_file) {
    w->I64(p.stack_file->step);
    w->I64(p.stack_file->rank);
    w->Str(p.stack_file->path);
  }
}

bool GetParents(Reader* in, ModuleParents* m) {
  size_t n;
  if (!in->Size(&n)) return false;
  m->modules.resize(n);
  for (std::string& s : m->modules)
    if (!in->Str(&s)) return false;
  if (!in->Size(&n)) return false;
  std::string child, parent;
  for (size_t i = 0; i < n; ++i) {
    if (!in->Str(&child) || !in->Str(&parent)) return false;
    m->parent[child] = parent;
  }
  return true;
}

bool GetPair(Reader* in, PairOutcome* p) {
  size_t calls;
  bool has_parents, has_stack;
  if (!in->Size(&p->pair) || !in->Enum(&p->kind, 2) ||
      !GetStatus(in, &p->status) || !in->Size(&p->rows) ||
      !in->Size(&p->warnings) || !in->Size(&p->gaps) ||
      !in->I32(&p->collective_warning) || !in->I64(&p->collectives.step) ||
      !in->I64(&p->collectives.rank) || !in->Size(&calls))
    return false;
  p->collectives.calls.resize(calls);
  for (CollectiveCall& c : p->collectives.calls)
    if (!GetCall(in, &c)) return false;
  if (!in->Bool(&has_parents)) return false;
  if (has_parents && !GetParents(in, &p->parents.emplace())) return false;
  if (!in->Bool(&has_stack)) return false;
  if (!has_stack) return true;
  RankStackFile& f = p->stack_file.emplace();
  return in->I64(&f.step) && in->I64(&f.rank) && in->Str(&f.path);
}

void PutBody(const PartialResult& p, Writer* w) {
  w->I64(p.header_pair);
  w->U8(p.header_given);
  w->U8(static_cast<uint8_t>(p.mode));
  w->U8(p.with_stack);
  w->U64(p.pairs.size());
  for (const PairOutcome& o : p.pairs) PutPair(o, w);
  w->U64(p.rows.size());
  for (const CompareRow& r : p.rows) PutRow(r, w);
  w->U64(p.warnings.size());
  for (const std::string& s : p.warnings) w->Str(s);
  w->U64(p.gaps.size());
  for (const AlignmentGap& g : p.gaps) PutGap(g, w);
}

// The counts say at most as many items as there are bytes left, so a
// corrupt count cannot make a huge allocation.
bool GetBody(Reader* in, PartialResult* p) {
  size_t n;
  if (!in->I64(&p->header_pair) || !in->Bool(&p->header_given) ||
      !in->Enum(&p->mode, 2) || !in->Bool(&p->with_stack) || !in->Size(&n))
    return false;
  p->pairs.resize(n);
  for (PairOutcome& o : p->pairs)
    if (!GetPair(in, &o)) return false;
  if (!in->Size(&n)) return false;
  p->rows.resize(n);
  PackedCellsBuilder cells;
  for (CompareRow& r : p->rows)
    if (!GetRow(in, &cells, &r)) return false;
  if (!in->Size(&n)) return false;
  p->warnings.resize(n);
  for (std::string& s : p->warnings)
    if (!in->Str(&s)) return false;
  if (!in->Size(&n)) return false;
  p->gaps.resize(n);
  for (AlignmentGap& g : p->gaps)
    if (!GetGap(in, &g)) return false;
  return true;
}

// The pairs' row, warning and gap counts add up to the vectors' sizes.
bool CountsAgree(const PartialResult& p) {
  size_t rows = 0, warnings = 0, gaps = 0;
  for (const PairOutcome& o : p.pairs) {
    rows += o.rows;
    warnings += o.warnings;
    gaps += o.gaps;
    if (o.collective_warning >= static_cast<int64_t>(o.warnings)) return false;
  }
  return rows == p.rows.size() && warnings == p.warnings.size() &&
         gaps == p.gaps.size();
}

}  // namespace
}  // namespace partial_codec

std::string EncodePartial(const PartialResult& p) {
  partial_codec::Writer body;
  partial_codec::PutBody(p, &body);
  partial_codec::Writer w;
  w.out().append(partial_codec::kMagic, partial_codec::kMagicSize);
  w.U64(body.out().size());
  w.out().append(body.out());
  w.U32(Crc32(body.out()));
  return std::move(w.out());
}

StatusOr<PartialResult> DecodePartial(std::string_view bytes,
                                      std::string_view what) {
  using partial_codec::kMagicSize;
  auto bad = [&](size_t at, std::string_view problem) {
    return Status::Corruption(
        what, std::string(problem) + " at byte " + std::to_string(at));
  };
  if (bytes.size() < kMagicSize + 12 ||
      bytes.substr(0, kMagicSize) != partial_codec::kMagic)
    return bad(0, "not a lockstep partial result (bad magic or too short)");
  uint64_t length;
  std::memcpy(&length, bytes.data() + kMagicSize, 8);
  if (length != bytes.size() - kMagicSize - 12)
    return bad(kMagicSize, "length " + std::to_string(length) + " but " +
                               std::to_string(bytes.size()) + " bytes in all");
  std::string_view body = bytes.substr(kMagicSize + 8, length);
  uint32_t crc;
  std::memcpy(&crc, bytes.data() + bytes.size() - 4, 4);
  if (crc != Crc32(body)) return bad(bytes.size() - 4, "CRC mismatch");
  partial_codec::Reader in(body, kMagicSize + 8);
  PartialResult p;
  if (!partial_codec::GetBody(&in, &p))
    return bad(in.offset(), "truncated or out-of-range field");
  if (!in.done()) return bad(in.offset(), "bytes left after the last field");
  if (!partial_codec::CountsAgree(p))
    return bad(kMagicSize + 8, "pair counts disagree with the rows");
  return p;
}

std::string EncodeStatus(const Status& s) {
  partial_codec::Writer w;
  partial_codec::PutStatus(s, &w);
  return std::move(w.out());
}

Status DecodeStatus(std::string_view bytes) {
  partial_codec::Reader in(bytes, 0);
  Status s;
  if (!partial_codec::GetStatus(&in, &s) || !in.done())
    return Status::Corruption("status from another process", "malformed");
  return s;
}

}  // namespace lockstep

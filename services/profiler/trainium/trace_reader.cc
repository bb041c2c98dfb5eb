#include "services/profiler/trainium/trace_reader.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <memory>
#include <optional>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace accelopt::trainium {
namespace {

struct KeyValue {
  absl::string_view key;
  absl::string_view value;
};

std::optional<Op> ParseOp(absl::string_view s) {
  static const auto* const kOps = new absl::flat_hash_map<absl::string_view, Op>({
      {"matmul", Op::kMatmul},
      {"transpose", Op::kTranspose},
      {"activation", Op::kActivation},
      {"tensor_scalar", Op::kTensorScalar},
      {"tensor_tensor", Op::kTensorTensor},
      {"tensor_reduce", Op::kTensorReduce},
      {"reciprocal", Op::kReciprocal},
      {"memset", Op::kMemset},
      {"copy", Op::kCopy},
      {"scan", Op::kScan},
      {"loop_reduce", Op::kLoopReduce},
      {"iota", Op::kIota},
      {"select", Op::kSelect},
      {"bn_stats", Op::kBnStats},
      {"bn_aggr", Op::kBnAggr},
      {"broadcast", Op::kBroadcast},
      {"load", Op::kLoad},
      {"store", Op::kStore},
      {"dma_copy", Op::kDmaCopy},
  });
  auto it = kOps->find(s);
  if (it == kOps->end()) return std::nullopt;
  return it->second;
}

std::optional<Engine> ParseEngine(absl::string_view s) {
  if (s == "pe") return Engine::kPe;
  if (s == "act") return Engine::kAct;
  if (s == "dve") return Engine::kDve;
  if (s == "pool") return Engine::kPool;
  if (s == "dma") return Engine::kDma;
  if (s == "auto") return Engine::kAuto;
  return std::nullopt;
}

std::optional<Buffer> ParseBuffer(absl::string_view s) {
  if (s == "sbuf") return Buffer::kSbuf;
  if (s == "psum") return Buffer::kPsum;
  if (s == "hbm") return Buffer::kHbm;
  if (s == "const") return Buffer::kConst;
  return std::nullopt;
}

// Parses one trace; holds the state that spans records (allocation ids, instruction ids).
class TraceParser {
 public:
  absl::StatusOr<Trace> Parse(absl::string_view text);

 private:
  absl::Status Error(absl::string_view message) const {
    return absl::InvalidArgumentError(absl::StrCat("trace line ", line_number_, ": ", message));
  }

  // Splits `line` (without the kind letter) into key=value tokens.
  absl::Status Tokenize(absl::string_view rest);
  // The value of `key` in the current record, or nullopt.
  std::optional<absl::string_view> Find(absl::string_view key) const;
  absl::StatusOr<absl::string_view> Require(absl::string_view key) const;
  absl::StatusOr<int64_t> ToInt(absl::string_view key, absl::string_view value) const;
  absl::StatusOr<int64_t> RequireInt(absl::string_view key) const;
  absl::StatusOr<int64_t> OptionalInt(absl::string_view key, int64_t fallback) const;
  absl::StatusOr<bool> OptionalBool(absl::string_view key) const;
  absl::Status ParseOperands(absl::string_view key, absl::InlinedVector<Operand, 3>* out) const;
  absl::Status ParseAllocRefs(absl::string_view key, absl::InlinedVector<int32_t, 4>* out) const;

  absl::Status ParseMetadata();
  absl::Status ParseAllocation();
  absl::StatusOr<int> ParseCore();
  absl::Status ParseAlu(absl::InlinedVector<Alu, 2>* out);
  absl::Status ParseFree();
  absl::Status ParseInstruction();

  Trace trace_;
  int64_t line_number_ = 0;
  std::vector<KeyValue> tokens_;
  int64_t declared_instructions_ = 0;
  // Size of the whole text: bounds how many I records it can hold (each is longer than kMinRecordBytes).
  size_t text_bytes_ = 0;
  // Live allocation id -> index in trace_.allocations.
  absl::flat_hash_map<int64_t, int32_t> live_allocs_;
};

absl::Status TraceParser::Tokenize(absl::string_view rest) {
  tokens_.clear();
  size_t pos = 0;
  while (pos < rest.size()) {
    size_t end = rest.find(' ', pos);
    if (end == absl::string_view::npos) end = rest.size();
    absl::string_view token = rest.substr(pos, end - pos);
    pos = end + 1;
    if (token.empty()) continue;
    size_t eq = token.find('=');
    if (eq == absl::string_view::npos || eq == 0) {
      return Error(absl::StrCat("token '", token, "' is not key=value"));
    }
    tokens_.push_back({token.substr(0, eq), token.substr(eq + 1)});
  }
  return absl::OkStatus();
}

std::optional<absl::string_view> TraceParser::Find(absl::string_view key) const {
  for (const KeyValue& kv : tokens_) {
    if (kv.key == key) return kv.value;
  }
  return std::nullopt;
}

absl::StatusOr<absl::string_view> TraceParser::Require(absl::string_view key) const {
  std::optional<absl::string_view> value = Find(key);
  if (!value.has_value()) return Error(absl::StrCat("missing required key '", key, "'"));
  return *value;
}

absl::StatusOr<int64_t> TraceParser::ToInt(absl::string_view key, absl::string_view value) const {
  int64_t result = 0;
  auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), result);
  if (ec != std::errc() || ptr != value.data() + value.size() || value.empty()) {
    return Error(absl::StrCat("key '", key, "': '", value, "' is not an integer"));
  }
  return result;
}

absl::StatusOr<int64_t> TraceParser::RequireInt(absl::string_view key) const {
  absl::StatusOr<absl::string_view> value = Require(key);
  if (!value.ok()) return value.status();
  return ToInt(key, *value);
}

absl::StatusOr<int64_t> TraceParser::OptionalInt(absl::string_view key, int64_t fallback) const {
  std::optional<absl::string_view> value = Find(key);
  if (!value.has_value()) return fallback;
  return ToInt(key, *value);
}

absl::StatusOr<bool> TraceParser::OptionalBool(absl::string_view key) const {
  std::optional<absl::string_view> value = Find(key);
  if (!value.has_value() || *value == "0") return false;
  if (*value == "1") return true;
  return Error(absl::StrCat("key '", key, "': '", *value, "' is not 0 or 1"));
}

absl::Status TraceParser::ParseOperands(absl::string_view key, absl::InlinedVector<Operand, 3>* out) const {
  std::optional<absl::string_view> value = Find(key);
  if (!value.has_value()) return absl::OkStatus();
  for (absl::string_view item : absl::StrSplit(*value, ',')) {
    size_t colon = item.find(':');
    if (colon == absl::string_view::npos) {
      return Error(absl::StrCat("key '", key, "': operand '", item, "' is not <buf>:<bytes_pp>"));
    }
    std::optional<Buffer> buffer = ParseBuffer(item.substr(0, colon));
    if (!buffer.has_value()) {
      return Error(absl::StrCat("key '", key, "': unknown buffer '", item.substr(0, colon), "'"));
    }
    absl::StatusOr<int64_t> bytes = ToInt(key, item.substr(colon + 1));
    if (!bytes.ok()) return bytes.status();
    out->push_back({*buffer, *bytes});
  }
  return absl::OkStatus();
}

absl::Status TraceParser::ParseAllocRefs(absl::string_view key, absl::InlinedVector<int32_t, 4>* out) const {
  std::optional<absl::string_view> value = Find(key);
  if (!value.has_value()) return absl::OkStatus();
  for (absl::string_view item : absl::StrSplit(*value, ',')) {
    absl::StatusOr<int64_t> id = ToInt(key, item);
    if (!id.ok()) return id.status();
    auto it = live_allocs_.find(*id);
    if (it == live_allocs_.end()) {
      return Error(absl::StrCat("key '", key, "': allocation ", *id, " is not live"));
    }
    out->push_back(it->second);
  }
  return absl::OkStatus();
}

absl::Status TraceParser::ParseMetadata() {
  absl::StatusOr<absl::string_view> kernel = Require("kernel");
  if (!kernel.ok()) return kernel.status();
  absl::StatusOr<bool> timing_only = OptionalBool("timing_only");
  if (!timing_only.ok()) return timing_only.status();
  absl::StatusOr<int64_t> count = RequireInt("instructions");
  if (!count.ok()) return count.status();
  if (*count < 0) return Error("key 'instructions': negative count");
  trace_.kernel = std::string(*kernel);
  trace_.timing_only = *timing_only;
  declared_instructions_ = *count;
  // The count is untrusted: reserve no more records than the text can hold.
  constexpr size_t kMinRecordBytes = 16;
  trace_.instructions.reserve(std::min(static_cast<size_t>(*count), text_bytes_ / kMinRecordBytes));
  return absl::OkStatus();
}

absl::StatusOr<int> TraceParser::ParseCore() {
  absl::StatusOr<int64_t> core = OptionalInt("core", 0);
  if (!core.ok()) return core.status();
  if (*core < 0 || *core >= kMaxCores) return Error(absl::StrCat("key 'core': ", *core, " is not 0..", kMaxCores - 1));
  return static_cast<int>(*core);
}

// `alu=name[,name]`: operator names (lower-case identifiers); those the cost model distinguishes map to their
// value, any other to Alu::kOther.
absl::Status TraceParser::ParseAlu(absl::InlinedVector<Alu, 2>* out) {
  std::optional<absl::string_view> alu = Find("alu");
  if (!alu.has_value()) return absl::OkStatus();
  for (absl::string_view name : absl::StrSplit(*alu, ',')) {
    if (out->size() == 2) return Error("key 'alu': more than two operators");
    if (name.empty() || !absl::c_all_of(name, [](char c) { return absl::ascii_islower(c) || c == '_'; })) {
      return Error(absl::StrCat("key 'alu': '", name, "' is not an operator name"));
    }
    out->push_back(name == "add"        ? Alu::kAdd
                   : name == "subtract" ? Alu::kSubtract
                   : name == "multiply" ? Alu::kMultiply
                   : name == "maximum"  ? Alu::kMaximum
                                        : Alu::kOther);
  }
  return absl::OkStatus();
}

absl::Status TraceParser::ParseAllocation() {
  Allocation alloc;
  absl::StatusOr<int64_t> id = RequireInt("id");
  if (!id.ok()) return id.status();
  alloc.id = *id;
  absl::StatusOr<absl::string_view> buf = Require("buf");
  if (!buf.ok()) return buf.status();
  std::optional<Buffer> buffer = ParseBuffer(*buf);
  if (!buffer.has_value() || (*buffer != Buffer::kSbuf && *buffer != Buffer::kPsum)) {
    return Error(absl::StrCat("key 'buf': '", *buf, "' is not sbuf or psum"));
  }
  alloc.buffer = *buffer;
  absl::StatusOr<int64_t> bytes = RequireInt("bytes_pp");
  if (!bytes.ok()) return bytes.status();
  absl::StatusOr<int64_t> parts = RequireInt("parts");
  if (!parts.ok()) return parts.status();
  absl::StatusOr<int64_t> site = OptionalInt("site", 0);
  if (!site.ok()) return site.status();
  absl::StatusOr<int64_t> tensor = OptionalInt("tensor", -1);
  if (!tensor.ok()) return tensor.status();
  absl::StatusOr<int64_t> block = OptionalInt("blk", 0);
  if (!block.ok()) return block.status();
  if (*bytes < 0 || *parts < 1 || *parts > 128) return Error("allocation size out of range");
  if (*block < 0 || *block > (int64_t{1} << 30)) return Error("key 'blk': block index out of range");
  alloc.bytes_pp = *bytes;
  absl::StatusOr<int> core = ParseCore();
  if (!core.ok()) return core.status();
  alloc.core = *core;
  alloc.tensor = *tensor < 0 ? *id : *tensor;
  alloc.block = static_cast<int32_t>(*block);
  alloc.partitions = static_cast<int>(*parts);
  alloc.site = static_cast<int>(*site);
  alloc.alloc_at = static_cast<int32_t>(trace_.instructions.size());
  if (!live_allocs_.emplace(alloc.id, static_cast<int32_t>(trace_.allocations.size())).second) {
    return Error(absl::StrCat("allocation ", alloc.id, " is already live"));
  }
  trace_.allocations.push_back(alloc);
  return absl::OkStatus();
}

absl::Status TraceParser::ParseFree() {
  absl::StatusOr<int64_t> id = RequireInt("id");
  if (!id.ok()) return id.status();
  auto it = live_allocs_.find(*id);
  if (it == live_allocs_.end()) return Error(absl::StrCat("F of allocation ", *id, " which is not live"));
  trace_.allocations[it->second].free_at = static_cast<int32_t>(trace_.instructions.size());
  live_allocs_.erase(it);
  return absl::OkStatus();
}

absl::Status TraceParser::ParseInstruction() {
  Instruction inst;
  absl::StatusOr<int64_t> id = RequireInt("id");
  if (!id.ok()) return id.status();
  if (!trace_.instructions.empty() && *id <= trace_.instructions.back().id) {
    return Error(
        absl::StrCat("instruction id ", *id, " is not greater than the previous id ", trace_.instructions.back().id));
  }
  if (*id < 0) return Error("negative instruction id");
  inst.id = *id;

  absl::StatusOr<absl::string_view> op = Require("op");
  if (!op.ok()) return op.status();
  std::optional<Op> parsed_op = ParseOp(*op);
  if (!parsed_op.has_value()) return Error(absl::StrCat("unknown op '", *op, "'"));
  inst.op = *parsed_op;

  absl::StatusOr<absl::string_view> eng = Require("eng");
  if (!eng.ok()) return eng.status();
  std::optional<Engine> engine = ParseEngine(*eng);
  if (!engine.has_value()) return Error(absl::StrCat("unknown engine '", *eng, "'"));
  inst.engine = *engine;

  absl::StatusOr<int64_t> p = RequireInt("p");
  if (!p.ok()) return p.status();
  if (*p < 1 || *p > 128) return Error(absl::StrCat("key 'p': ", *p, " is outside 1..128"));
  inst.partitions = static_cast<int>(*p);
  absl::StatusOr<int64_t> n = RequireInt("n");
  if (!n.ok()) return n.status();
  if (*n < 0) return Error("key 'n': negative");
  inst.free_elems = *n;
  absl::StatusOr<int64_t> nstat = OptionalInt("nstat", 0);
  if (!nstat.ok()) return nstat.status();
  inst.stationary_free = *nstat;
  absl::StatusOr<int64_t> dt = OptionalInt("dt", 4);
  if (!dt.ok()) return dt.status();
  if (*dt < 1 || *dt > 8) return Error(absl::StrCat("key 'dt': ", *dt, " is not a dtype size"));
  inst.dtype_bytes = static_cast<int>(*dt);

  if (absl::Status s = ParseOperands("in", &inst.inputs); !s.ok()) return s;
  absl::InlinedVector<Operand, 3> outs;
  if (absl::Status s = ParseOperands("out", &outs); !s.ok()) return s;
  // Instructions with a side output (a reduce_res) list it after the main output; the side output is a [P, 1]
  // register write that the counters do not count, and the reduction costs the instruction extra cycles.
  if (!outs.empty()) {
    inst.has_output = true;
    inst.output = outs[0];
    inst.reduces = outs.size() > 1;
  }
  absl::StatusOr<int64_t> red = OptionalInt("red", 0);
  if (!red.ok()) return red.status();
  if (*red != 0 && *red != 1) return Error(absl::StrCat("key 'red': ", *red, " is not 0 or 1"));
  inst.reduces = inst.reduces || *red == 1;

  if (std::optional<absl::string_view> deps = Find("dep"); deps.has_value()) {
    size_t pos = 0;
    while (pos <= deps->size()) {
      size_t end = deps->find(',', pos);
      if (end == absl::string_view::npos) end = deps->size();
      absl::StatusOr<int64_t> dep = ToInt("dep", deps->substr(pos, end - pos));
      pos = end + 1;
      if (!dep.ok()) return dep.status();
      // Ids are strictly increasing, so the index of an id is found by binary search (a direct hit
      // when dense).
      const std::vector<Instruction>& insts = trace_.instructions;
      int64_t index = -1;
      if (*dep >= 0 && *dep < static_cast<int64_t>(insts.size()) && insts[*dep].id == *dep) {
        index = *dep;
      } else {
        auto it = std::lower_bound(insts.begin(), insts.end(), *dep,
                                   [](const Instruction& a, int64_t value) { return a.id < value; });
        if (it != insts.end() && it->id == *dep) index = it - insts.begin();
      }
      if (index < 0) {
        return Error(absl::StrCat("key 'dep': instruction ", *dep, " is not an earlier instruction"));
      }
      inst.deps.push_back(static_cast<int32_t>(index));
    }
  }
  absl::InlinedVector<int32_t, 4> refs;
  if (absl::Status s = ParseAllocRefs("ra", &refs); !s.ok()) return s;
  inst.read_allocs.assign(refs.begin(), refs.end());
  refs.clear();
  if (absl::Status s = ParseAllocRefs("wa", &refs); !s.ok()) return s;
  inst.write_allocs.assign(refs.begin(), refs.end());

  absl::StatusOr<bool> acc = OptionalBool("acc");
  if (!acc.ok()) return acc.status();
  inst.accumulate = *acc;
  absl::StatusOr<bool> cse = OptionalBool("cse");
  if (!cse.ok()) return cse.status();
  inst.cse = *cse;
  absl::StatusOr<bool> dynamic_offset = OptionalBool("dyn");
  if (!dynamic_offset.ok()) return dynamic_offset.status();
  inst.dynamic_offset = *dynamic_offset;
  absl::StatusOr<int64_t> line = OptionalInt("line", 0);
  if (!line.ok()) return line.status();
  inst.line = static_cast<int>(*line);
  absl::StatusOr<int64_t> stride = OptionalInt("stride", 0);
  if (!stride.ok()) return stride.status();
  inst.stride = *stride;
  absl::StatusOr<int> core = ParseCore();
  if (!core.ok()) return core.status();
  inst.core = *core;
  if (absl::Status s = ParseAlu(&inst.alu); !s.ok()) return s;

  if (IsDmaOp(inst.op)) {
    absl::StatusOr<absl::string_view> dir = Require("dir");
    if (!dir.ok()) return dir.status();
    if (*dir == "load") {
      inst.dma_direction = DmaDirection::kLoad;
    } else if (*dir == "store") {
      inst.dma_direction = DmaDirection::kStore;
    } else if (*dir == "copy") {
      inst.dma_direction = DmaDirection::kCopy;
    } else {
      return Error(absl::StrCat("key 'dir': unknown direction '", *dir, "'"));
    }
    absl::StatusOr<int64_t> bytes = RequireInt("bytes");
    if (!bytes.ok()) return bytes.status();
    absl::StatusOr<int64_t> run = RequireInt("run");
    if (!run.ok()) return run.status();
    if (*bytes < 0 || *run < 0) return Error("negative DMA size");
    inst.dma_bytes = *bytes;
    inst.dma_run = *run;
    std::optional<absl::string_view> hbm = Find("hbm");
    if (!hbm.has_value()) {
      inst.hbm_kind = HbmKind::kNone;
    } else if (*hbm == "io") {
      inst.hbm_kind = HbmKind::kIo;
    } else if (*hbm == "scratch") {
      inst.hbm_kind = HbmKind::kScratch;
    } else {
      return Error(absl::StrCat("key 'hbm': unknown kind '", *hbm, "'"));
    }
  }
  trace_.instructions.push_back(std::move(inst));
  return absl::OkStatus();
}

absl::StatusOr<Trace> TraceParser::Parse(absl::string_view text) {
  text_bytes_ = text.size();
  bool seen_header = false;
  bool seen_metadata = false;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == absl::string_view::npos) end = text.size();
    absl::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++line_number_;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!seen_header) {
      if (line != "accelopt-trace 1") {
        if (line.substr(0, 15) == "accelopt-trace ") {
          return Error(absl::StrCat("unsupported trace version '", line.substr(15), "' (expected 1)"));
        }
        return Error("missing header 'accelopt-trace 1'");
      }
      seen_header = true;
      continue;
    }
    if (line.empty() || line[0] == '#') continue;
    if (line.size() > 1 && line[1] != ' ') {
      return Error(absl::StrCat("record kind '", line.substr(0, line.find(' ')), "' is not one letter"));
    }
    const char kind = line[0];
    if (absl::Status s = Tokenize(line.substr(1)); !s.ok()) return s;
    if (!seen_metadata && kind != 'M') return Error("expected the M record right after the header");
    absl::Status status;
    switch (kind) {
      case 'M':
        if (seen_metadata) return Error("second M record");
        seen_metadata = true;
        status = ParseMetadata();
        break;
      case 'A':
        status = ParseAllocation();
        break;
      case 'F':
        status = ParseFree();
        break;
      case 'I':
        status = ParseInstruction();
        break;
      default:
        return Error(absl::StrCat("unknown record kind '", std::string(1, kind), "'"));
    }
    if (!status.ok()) return status;
  }
  if (!seen_header) return Error("empty trace: missing header 'accelopt-trace 1'");
  if (!seen_metadata) return Error("missing M record");
  if (static_cast<int64_t>(trace_.instructions.size()) != declared_instructions_) {
    return absl::InvalidArgumentError(absl::StrCat("trace has ", trace_.instructions.size(),
                                                   " I records but M declares instructions=", declared_instructions_,
                                                   " (truncated trace?)"));
  }
  // Allocations never freed explicitly live until the end of the kernel.
  const int32_t end_index = static_cast<int32_t>(trace_.instructions.size());
  for (const auto& [id, index] : live_allocs_) trace_.allocations[index].free_at = end_index;
  return std::move(trace_);
}

}  // namespace

absl::StatusOr<Trace> ParseTrace(absl::string_view text) {
  TraceParser parser;
  return parser.Parse(text);
}

absl::StatusOr<Trace> ReadTraceFile(const std::string& path) {
  std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (file == nullptr) return absl::NotFoundError(absl::StrCat("cannot open trace file ", path));
  std::string text;
  char buffer[1 << 16];
  size_t got;
  while ((got = std::fread(buffer, 1, sizeof(buffer), file.get())) > 0) text.append(buffer, got);
  if (std::ferror(file.get())) return absl::DataLossError(absl::StrCat("error reading trace file ", path));
  absl::StatusOr<Trace> trace = ParseTrace(text);
  if (!trace.ok()) {
    return absl::Status(trace.status().code(), absl::StrCat(path, ": ", trace.status().message()));
  }
  return trace;
}

}  // namespace accelopt::trainium

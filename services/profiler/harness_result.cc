#include "services/profiler/harness_result.h"

#include "absl/strings/str_cat.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace accelopt::profiler {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

const Value* Field(const Struct& s, const std::string& key) {
  auto it = s.fields().find(key);
  if (it == s.fields().end() || it->second.kind_case() == Value::kNullValue) return nullptr;
  return &it->second;
}

double Number(const Struct& s, const std::string& key) {
  const Value* v = Field(s, key);
  return v != nullptr && v->kind_case() == Value::kNumberValue ? v->number_value() : 0;
}

std::string String(const Struct& s, const std::string& key) {
  const Value* v = Field(s, key);
  return v != nullptr && v->kind_case() == Value::kStringValue ? v->string_value() : "";
}

}  // namespace

v1::Verdict VerdictFromName(const std::string& name) {
  v1::Verdict verdict;
  if (v1::Verdict_Parse("VERDICT_" + name, &verdict)) return verdict;
  return v1::VERDICT_UNSPECIFIED;
}

SandboxViolation ParseViolationMarker(const std::string& json) {
  SandboxViolation v{"unknown operation", 0};
  Struct root;
  if (!google::protobuf::util::JsonStringToMessage(json, &root).ok()) return v;
  if (std::string detail = String(root, "detail"); !detail.empty()) v.detail = detail;
  v.line = static_cast<int>(Number(root, "line"));
  return v;
}

absl::StatusOr<HarnessResult> ParseHarnessResult(const std::string& json) {
  Struct root;
  if (!google::protobuf::util::JsonStringToMessage(json, &root).ok()) {
    return absl::InvalidArgumentError("harness result is not a JSON object");
  }
  HarnessResult r;
  std::string verdict = String(root, "verdict");
  r.verdict = VerdictFromName(verdict);
  if (r.verdict == v1::VERDICT_UNSPECIFIED) {
    return absl::InvalidArgumentError(absl::StrCat("harness result has no valid verdict ('", verdict, "')"));
  }
  r.message = String(root, "message");
  r.line = static_cast<int>(Number(root, "line"));
  r.seeds_checked = static_cast<int>(Number(root, "seeds_checked"));
  r.max_rel_l2 = Number(root, "max_rel_l2");
  if (const Value* fresh = Field(root, "fresh_rel_l2"); fresh != nullptr && fresh->has_number_value()) {
    r.fresh_rel_l2 = fresh->number_value();
  }
  r.instructions = static_cast<int64_t>(Number(root, "instructions"));
  r.trace_path = String(root, "trace");
  if (const Value* bytes = Field(root, "output_bytes"); bytes != nullptr && bytes->has_number_value()) {
    r.output_bytes = static_cast<int64_t>(bytes->number_value());
  }
  if (const Value* problem = Field(root, "problem"); problem != nullptr && problem->has_struct_value()) {
    if (const Value* rl = Field(problem->struct_value(), "roofline"); rl != nullptr && rl->has_struct_value()) {
      v1::Roofline roofline;
      roofline.set_vector_flops(Number(rl->struct_value(), "vector_flops"));
      roofline.set_matmul_flops(Number(rl->struct_value(), "matmul_flops"));
      roofline.set_hbm_bytes(Number(rl->struct_value(), "hbm_bytes"));
      r.roofline = roofline;
    }
  }
  return r;
}

}  // namespace accelopt::profiler

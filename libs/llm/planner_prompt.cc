#include "libs/llm/planner_prompt.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/reflection.h"

namespace accelopt::llm {
namespace {

std::string FormatNumber(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15) return absl::StrFormat("%.0f", v);
  return absl::StrFormat("%.6g", v);
}

// Experiences of one batch were added together: same job and iteration of origin.
bool SameBatch(const v1::Experience& a, const v1::Experience& b) {
  return a.provenance().job_id() == b.provenance().job_id() && a.provenance().iteration() == b.provenance().iteration();
}

// As the reference lists a batch: positives by speedup, best first, then regressions, worst first.
bool BestFirst(const v1::Experience* a, const v1::Experience* b) {
  if (a->regression() != b->regression()) return !a->regression();
  return a->speedup() > b->speedup();
}

}  // namespace

std::vector<const v1::Experience*> OrderExperiences(
    const google::protobuf::RepeatedPtrField<v1::Experience>& experiences) {
  std::vector<const v1::Experience*> out;
  for (const v1::Experience& e : experiences) out.push_back(&e);
  for (size_t begin = 0; begin < out.size();) {
    size_t end = begin + 1;
    while (end < out.size() && SameBatch(*out[begin], *out[end])) ++end;
    std::stable_sort(out.begin() + static_cast<std::ptrdiff_t>(begin), out.begin() + static_cast<std::ptrdiff_t>(end),
                     BestFirst);
    begin = end;
  }
  return out;
}

std::string FormatProfile(const v1::ProfileResult& profile) {
  std::string out =
      absl::StrCat("latency_ms: ", profile.has_latency() ? FormatNumber(profile.latency().mean_ms()) : "unknown", "\n");
  const v1::ProfileCounters& counters = profile.counters();
  const google::protobuf::Descriptor* descriptor = counters.GetDescriptor();
  const google::protobuf::Reflection* reflection = counters.GetReflection();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* field = descriptor->field(i);
    if (!reflection->HasField(counters, field)) continue;
    absl::StrAppend(&out, field->name(), ": ", FormatNumber(reflection->GetDouble(counters, field)), "\n");
  }
  return out;
}

std::string FormatExperiences(const google::protobuf::RepeatedPtrField<v1::Experience>& experiences) {
  if (experiences.empty()) return "";
  std::string out =
      "\n## Experiences\n"
      "Optimizations measured on earlier kernels, newest batch first, the best of each batch first. Entries marked "
      "REGRESSION record an attempted "
      "change that made a kernel SLOWER: their text describes the slower version and how the faster original "
      "differs. Do not propose the change that produced the slower version.\n";
  int n = 0;
  for (const v1::Experience* experience : OrderExperiences(experiences)) {
    const v1::Experience& e = *experience;
    ++n;
    std::string speedup = e.speedup() > 0 ? absl::StrFormat("%.2fx", e.speedup()) : "unknown";
    if (e.regression()) {
      absl::StrAppend(&out, "\n### ", n, ". REGRESSION: ", e.title(), " (the attempted change was ", speedup,
                      " slower)\n");
    } else {
      absl::StrAppend(&out, "\n### ", n, ". ", e.title(), " (", speedup, " faster)\n");
    }
    absl::StrAppend(&out, e.summary().empty() ? e.description() : e.summary(), "\n");
  }
  return out;
}

PromptValues PlannerSystemValues(const v1::PlanRequest& request) {
  return {{"experiences", FormatExperiences(request.experiences())}};
}

PromptValues PlannerUserValues(const v1::PlanRequest& request) {
  return {{"problem_source", request.problem().reference_source()},
          {"kernel_source", request.kernel().source()},
          {"profile", FormatProfile(request.profile())}};
}

}  // namespace accelopt::llm

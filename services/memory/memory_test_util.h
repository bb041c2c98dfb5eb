// Builders shared by the memory service's tests.
#pragma once

#include <string>

#include "absl/strings/str_cat.h"
#include "accelopt/v1/memory_service.pb.h"

namespace accelopt::memory::testing {

// A sample of plan `plan` of `parent` whose speedup (parent latency / latency) is exactly `speedup`: the
// latency is 1 ms and the parent latency `speedup` ms.
inline v1::SampleResult Sample(const std::string& parent, int plan, int sample, double speedup,
                               v1::Verdict verdict = v1::VERDICT_OK) {
  v1::SampleResult s;
  s.set_candidate_id(absl::StrCat(parent, "-p", plan, "-s", sample));
  s.set_parent_id(parent);
  s.set_plan_index(plan);
  s.set_sample_index(sample);
  s.mutable_plan()->set_title(absl::StrCat("plan ", plan, " of ", parent));
  s.mutable_parent_kernel()->set_source(absl::StrCat("def kernel():  # ", parent, "\n    pass\n"));
  s.mutable_kernel()->set_source(absl::StrCat("def kernel():  # ", s.candidate_id(), "\n    pass\n"));
  s.set_parent_latency_ms(speedup);
  s.mutable_result()->set_verdict(verdict);
  if (verdict == v1::VERDICT_OK) s.mutable_result()->mutable_latency()->set_mean_ms(1.0);
  return s;
}

// A request of iteration `iteration` of `job` into namespace `ns` with the "fake" provider.
inline v1::SummarizeIterationRequest Request(const std::string& job, const std::string& ns, int iteration) {
  v1::SummarizeIterationRequest r;
  r.set_job_id(job);
  r.set_namespace_(ns);
  r.set_iteration(iteration);
  r.mutable_problem()->set_name("silu");
  r.set_device(v1::DEVICE_SIM_TRN1);
  r.mutable_model()->set_provider("fake");
  r.mutable_model()->set_model("fake-model");
  return r;
}

// A complete experience as the service stores it (sequence 0: assigned on write).
inline v1::Experience MakeExperience(const std::string& id, const std::string& ns, const std::string& job,
                                     int iteration) {
  v1::Experience e;
  e.set_id(id);
  e.set_namespace_(ns);
  e.set_title(absl::StrCat("title ", id));
  e.set_description(absl::StrCat("description ", id));
  e.set_summary(absl::StrCat("**title ", id, "**\nsummary"));
  e.set_speedup(1.25);
  e.mutable_provenance()->set_job_id(job);
  e.mutable_provenance()->set_problem("silu");
  e.mutable_provenance()->set_device(v1::DEVICE_SIM_TRN1);
  e.mutable_provenance()->set_model("fake");
  e.mutable_provenance()->mutable_created_at()->set_seconds(1700000000 + iteration);
  e.mutable_provenance()->set_candidate_id(absl::StrCat("cand-", id));
  e.mutable_provenance()->set_iteration(iteration);
  return e;
}

}  // namespace accelopt::memory::testing

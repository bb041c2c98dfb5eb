#include "services/orchestrator/request_builders.h"

#include <algorithm>
#include <vector>

#include "services/orchestrator/job_spec.h"
#include "services/orchestrator/search_ids.h"
#include "services/orchestrator/search_rules.h"

namespace accelopt::orchestrator {

v1::QueryExperiencesRequest BuildQueryExperiencesRequest(const v1::JobSpec& spec, absl::string_view job_id,
                                                         int iteration, const v1::Candidate& parent) {
  v1::QueryExperiencesRequest query;
  query.set_namespace_(MemoryNamespace(spec, job_id));
  query.set_job_id(std::string(job_id));
  query.set_capacity(spec.search().memory_capacity());
  query.set_policy(spec.search().memory_policy());
  query.set_seed(DeriveSeed(spec.seed(), "memory", iteration, parent.kernel().sha256(), 0));
  return query;
}

v1::PlanRequest BuildPlanRequest(const v1::JobSpec& spec, absl::string_view job_id, int iteration,
                                 const v1::Candidate& parent) {
  v1::PlanRequest plan;
  *plan.mutable_kernel() = parent.kernel();
  *plan.mutable_profile() = parent.result();
  *plan.mutable_problem() = spec.problem();
  plan.set_num_plans(spec.search().plans_per_candidate());
  *plan.mutable_model() = spec.models().planner();
  plan.set_seed(DeriveSeed(spec.seed(), "plan", iteration, parent.kernel().sha256(), 0));
  plan.set_job_id(std::string(job_id));
  return plan;
}

v1::ImplementRequest BuildImplementRequest(const v1::JobSpec& spec, absl::string_view job_id, int iteration,
                                           const v1::Candidate& parent, int plan_index, const v1::Plan& plan) {
  v1::ImplementRequest request;
  *request.mutable_kernel() = parent.kernel();
  *request.mutable_problem() = spec.problem();
  *request.mutable_plan() = plan;
  request.set_num_samples(spec.search().samples_per_plan());
  *request.mutable_model() = spec.models().executor();
  request.set_seed(DeriveSeed(spec.seed(), "implement", iteration, parent.kernel().sha256(), plan_index));
  request.set_job_id(std::string(job_id));
  return request;
}

v1::SummarizeIterationRequest BuildSummarizeRequest(const v1::JobSpec& spec, absl::string_view job_id, int iteration,
                                                    const std::map<std::string, v1::Candidate>& candidates) {
  v1::SummarizeIterationRequest request;
  request.set_job_id(std::string(job_id));
  request.set_namespace_(MemoryNamespace(spec, job_id));
  request.set_iteration(iteration);
  *request.mutable_problem() = spec.problem();
  request.set_device(spec.device());
  request.set_max_experiences(spec.search().experiences_per_iteration());
  request.set_positive_threshold(spec.search().positive_threshold());
  request.set_negative_threshold(spec.search().negative_threshold());
  *request.mutable_model() = spec.models().summarizer();
  request.set_seed(DeriveSeed(spec.seed(), "summarize", iteration, "", 0));
  std::vector<const v1::Candidate*> samples;
  for (const auto& [id, c] : candidates) {
    if (c.iteration() != iteration || c.parent_id().empty() || c.kernel().source().empty()) continue;
    const v1::Verdict v = c.result().verdict();
    // Experiences come only from kernels that passed the whole protocol or failed it on their own merits;
    // a physically implausible claim, or a verdict on the problem rather than the kernel, never reaches the summarizer.
    if (v == v1::VERDICT_DUPLICATE || v == v1::VERDICT_CANCELLED || v == v1::VERDICT_NO_KERNEL ||
        v == v1::VERDICT_SUSPICIOUS || v == v1::VERDICT_PROBLEM_ERROR) {
      continue;
    }
    samples.push_back(&c);
  }
  std::sort(samples.begin(), samples.end(),
            [](const v1::Candidate* a, const v1::Candidate* b) { return a->ordinal() < b->ordinal(); });
  for (const v1::Candidate* c : samples) {
    auto parent = candidates.find(c->parent_id());
    const v1::Candidate& p = parent != candidates.end() ? parent->second : v1::Candidate::default_instance();
    v1::SampleResult* s = request.add_samples();
    s->set_candidate_id(c->candidate_id());
    s->set_parent_id(c->parent_id());
    s->set_plan_index(c->plan_index());
    s->set_sample_index(c->sample_index());
    *s->mutable_plan() = c->plan();
    *s->mutable_parent_kernel() = p.kernel();
    *s->mutable_kernel() = c->kernel();
    s->set_parent_latency_ms(Latency(p));
    *s->mutable_result() = c->result();
  }
  return request;
}

v1::ProfileRequest BuildProfileRequest(const v1::JobSpec& spec, const v1::Candidate& candidate) {
  v1::ProfileRequest request;
  *request.mutable_kernel() = candidate.kernel();
  *request.mutable_problem() = spec.problem();
  request.set_device(spec.device());
  *request.mutable_options() = spec.profile();
  request.set_candidate_id(candidate.candidate_id());
  return request;
}

}  // namespace accelopt::orchestrator

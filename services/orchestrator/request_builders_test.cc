#include "services/orchestrator/request_builders.h"

#include <gtest/gtest.h>

#include "services/orchestrator/job_spec.h"
#include "services/orchestrator/search_ids.h"

namespace accelopt::orchestrator {
namespace {

v1::JobSpec TestSpec() {
  v1::JobSpec spec;
  spec.set_seed(42);
  spec.set_device(v1::DEVICE_SIM_TRN2);
  spec.mutable_problem()->set_name("softmax");
  spec.mutable_search()->set_plans_per_candidate(3);
  spec.mutable_search()->set_samples_per_plan(2);
  spec.mutable_search()->set_memory_capacity(5);
  spec.mutable_search()->set_experiences_per_iteration(4);
  spec.mutable_search()->set_positive_threshold(1.1);
  spec.mutable_search()->set_negative_threshold(0.9);
  spec.mutable_models()->mutable_planner()->set_model("planner-model");
  spec.mutable_models()->mutable_executor()->set_model("executor-model");
  spec.mutable_models()->mutable_summarizer()->set_model("summarizer-model");
  spec.mutable_profile()->set_timeout_seconds(60);
  return spec;
}

v1::Candidate Kernel(const std::string& id, const std::string& sha, double latency_ms, int iteration,
                     const std::string& parent = "", int64_t ordinal = 0) {
  v1::Candidate c;
  c.set_candidate_id(id);
  c.set_iteration(iteration);
  c.set_parent_id(parent);
  c.set_ordinal(ordinal);
  c.mutable_kernel()->set_source("# kernel " + id);
  c.mutable_kernel()->set_sha256(sha);
  c.mutable_result()->set_verdict(v1::VERDICT_OK);
  c.mutable_result()->mutable_latency()->set_mean_ms(latency_ms);
  return c;
}

TEST(RequestBuildersTest, PlanAndQuerySeedsNameTheParentByItsKernelNotTheJob) {
  const v1::JobSpec spec = TestSpec();
  const v1::Candidate parent = Kernel("p", "abc", 2.0, 0);
  const v1::PlanRequest a = BuildPlanRequest(spec, "job-a", 1, parent);
  const v1::PlanRequest b = BuildPlanRequest(spec, "job-b", 1, parent);
  EXPECT_EQ(a.seed(), b.seed());
  EXPECT_EQ(a.seed(), DeriveSeed(42, "plan", 1, "abc", 0));
  EXPECT_NE(a.seed(), BuildPlanRequest(spec, "job-a", 2, parent).seed());
  EXPECT_EQ(a.job_id(), "job-a");
  EXPECT_EQ(a.num_plans(), 3);
  EXPECT_EQ(a.model().model(), "planner-model");
  EXPECT_EQ(a.kernel().sha256(), "abc");
  EXPECT_DOUBLE_EQ(a.profile().latency().mean_ms(), 2.0);
  EXPECT_EQ(a.problem().name(), "softmax");
  EXPECT_TRUE(a.experiences().empty());

  const v1::QueryExperiencesRequest q = BuildQueryExperiencesRequest(spec, "job-a", 1, parent);
  EXPECT_EQ(q.seed(), DeriveSeed(42, "memory", 1, "abc", 0));
  EXPECT_EQ(q.capacity(), 5);
  EXPECT_EQ(q.namespace_(), MemoryNamespace(spec, "job-a"));
}

TEST(RequestBuildersTest, ImplementRequestSeedsEachPlanApart) {
  const v1::JobSpec spec = TestSpec();
  const v1::Candidate parent = Kernel("p", "abc", 2.0, 0);
  v1::Plan plan;
  plan.set_text("tile the loop");
  const v1::ImplementRequest r0 = BuildImplementRequest(spec, "job-a", 1, parent, 0, plan);
  const v1::ImplementRequest r1 = BuildImplementRequest(spec, "job-a", 1, parent, 1, plan);
  EXPECT_EQ(r0.seed(), DeriveSeed(42, "implement", 1, "abc", 0));
  EXPECT_NE(r0.seed(), r1.seed());
  EXPECT_EQ(r0.num_samples(), 2);
  EXPECT_EQ(r0.plan().text(), "tile the loop");
  EXPECT_EQ(r0.model().model(), "executor-model");
  EXPECT_EQ(r0.kernel().source(), parent.kernel().source());
}

TEST(RequestBuildersTest, SummarizeTakesTheIterationsProfiledSamplesInOrdinalOrderWithTheirParents) {
  const v1::JobSpec spec = TestSpec();
  std::map<std::string, v1::Candidate> candidates;
  candidates["p"] = Kernel("p", "abc", 2.0, 0);
  candidates["z-late"] = Kernel("z-late", "s2", 1.5, 1, "p", 7);
  candidates["a-early"] = Kernel("a-early", "s1", 1.0, 1, "p", 3);
  v1::Candidate duplicate = Kernel("dup", "s1", 0, 1, "p", 4);
  duplicate.mutable_result()->set_verdict(v1::VERDICT_DUPLICATE);
  candidates["dup"] = duplicate;
  v1::Candidate no_kernel = Kernel("nk", "", 0, 1, "p", 5);
  no_kernel.mutable_kernel()->clear_source();
  no_kernel.mutable_result()->set_verdict(v1::VERDICT_NO_KERNEL);
  candidates["nk"] = no_kernel;
  candidates["other-iteration"] = Kernel("other-iteration", "s3", 1.0, 2, "a-early", 9);

  const v1::SummarizeIterationRequest r = BuildSummarizeRequest(spec, "job-a", 1, candidates);
  ASSERT_EQ(r.samples_size(), 2);
  EXPECT_EQ(r.samples(0).candidate_id(), "a-early");
  EXPECT_EQ(r.samples(1).candidate_id(), "z-late");
  EXPECT_EQ(r.samples(0).parent_kernel().sha256(), "abc");
  EXPECT_DOUBLE_EQ(r.samples(0).parent_latency_ms(), 2.0);
  EXPECT_EQ(r.iteration(), 1);
  EXPECT_EQ(r.max_experiences(), 4);
  EXPECT_DOUBLE_EQ(r.positive_threshold(), 1.1);
  EXPECT_EQ(r.seed(), DeriveSeed(42, "summarize", 1, "", 0));
  EXPECT_EQ(r.model().model(), "summarizer-model");
  EXPECT_EQ(r.device(), v1::DEVICE_SIM_TRN2);
}

TEST(RequestBuildersTest, ProfileRequestCarriesTheKernelProblemAndOptions) {
  const v1::JobSpec spec = TestSpec();
  const v1::ProfileRequest r = BuildProfileRequest(spec, Kernel("c1", "s1", 1.0, 1, "p", 1));
  EXPECT_EQ(r.candidate_id(), "c1");
  EXPECT_EQ(r.kernel().sha256(), "s1");
  EXPECT_EQ(r.device(), v1::DEVICE_SIM_TRN2);
  EXPECT_DOUBLE_EQ(r.options().timeout_seconds(), 60);
  EXPECT_EQ(r.problem().name(), "softmax");
}

}  // namespace
}  // namespace accelopt::orchestrator

// The builtin planner and executor over the real rewrite engine in the real sandbox.
#include "libs/builtin/builtin_agents.h"

#include <gtest/gtest.h>

#include "absl/synchronization/notification.h"
#include "libs/core/file.h"

namespace accelopt::builtin {
namespace {

const std::string kSilu = ACCELOPT_SOURCE_DIR "/examples/silu/kernel.py";

class BuiltinAgentsTest : public ::testing::Test {
 protected:
  BuiltinAgentsTest() : rewriter_(std::make_shared<Rewriter>(Options())) {}
  static RewriterOptions Options() {
    RewriterOptions o;
    o.rewriter_dir = ACCELOPT_SOURCE_DIR "/services/executor/builtin";
    return o;
  }

  llm::Metered<llm::PlanDraft> PlanSample(BuiltinPlanner& planner, std::shared_ptr<v1::PlanRequest> request,
                                          int index) {
    absl::Notification done;
    llm::Metered<llm::PlanDraft> out;
    planner.Plan(request, index, 0, [&](llm::Metered<llm::PlanDraft> r) {
      out = std::move(r);
      done.Notify();
    });
    done.WaitForNotification();
    return out;
  }

  llm::Metered<llm::KernelDraft> ImplementPlan(BuiltinExecutor& executor, const std::string& kernel,
                                               const std::string& plan_text) {
    auto request = std::make_shared<v1::ImplementRequest>();
    request->mutable_kernel()->set_source(kernel);
    request->mutable_plan()->set_text(plan_text);
    absl::Notification done;
    llm::Metered<llm::KernelDraft> out;
    executor.Implement(request, 0, 0, [&](llm::Metered<llm::KernelDraft> r) {
      out = std::move(r);
      done.Notify();
    });
    done.WaitForNotification();
    return out;
  }

  std::shared_ptr<const Rewriter> rewriter_;
};

TEST_F(BuiltinAgentsTest, PlannerGivesDistinctPlansThatTheExecutorApplies) {
  BuiltinPlanner planner(rewriter_, 2);
  BuiltinExecutor executor(rewriter_, 2);
  auto request = std::make_shared<v1::PlanRequest>();
  request->mutable_kernel()->set_source(*core::ReadFile(kSilu));
  request->mutable_profile()->mutable_engine_active()->set_dma(0.9);
  request->set_seed(3);
  std::set<std::string> lines;
  for (int i = 0; i < 3; ++i) {
    auto plan = PlanSample(planner, request, i);
    ASSERT_TRUE(plan.value.ok()) << plan.value.status();
    EXPECT_FALSE(plan.value->transformation.empty());
    std::string line = FindPlanLine(plan.value->text);
    ASSERT_FALSE(line.empty()) << plan.value->text;
    lines.insert(line);
    auto kernel = ImplementPlan(executor, request->kernel().source(), plan.value->text);
    ASSERT_TRUE(kernel.value.ok()) << line << ": " << kernel.value.status();
    EXPECT_NE(kernel.value->source, request->kernel().source()) << line;
    EXPECT_NE(kernel.value->source.find("def kernel"), std::string::npos);
  }
  EXPECT_EQ(lines.size(), 3u);
  // The same request plans the same way twice (deterministic).
  EXPECT_EQ(PlanSample(planner, request, 0).value->text, PlanSample(planner, request, 0).value->text);
}

TEST_F(BuiltinAgentsTest, PlanThatDoesNotApplyGetsThePreciseReason) {
  BuiltinExecutor executor(rewriter_, 1);
  auto r = ImplementPlan(executor, *core::ReadFile(kSilu), "builtin: hoist_invariant_store site=S999");
  ASSERT_FALSE(r.value.ok());
  EXPECT_EQ(r.value.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(r.value.status().message().empty());
  auto no_line = ImplementPlan(executor, *core::ReadFile(kSilu), "make it faster");
  EXPECT_EQ(no_line.value.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(BuiltinAgentsTest, GarbageKernelIsAReasonNotACrash) {
  BuiltinPlanner planner(rewriter_, 1);
  auto request = std::make_shared<v1::PlanRequest>();
  request->mutable_kernel()->set_source("def kernel(:\n");
  auto plan = PlanSample(planner, request, 0);
  ASSERT_FALSE(plan.value.ok());
  EXPECT_NE(plan.value.status().message().find("cannot analyse"), std::string::npos) << plan.value.status();
}

}  // namespace
}  // namespace accelopt::builtin

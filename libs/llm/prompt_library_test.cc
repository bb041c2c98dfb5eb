#include "libs/llm/prompt_library.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "libs/testing/scratch_dir.h"

namespace accelopt::llm {
namespace {

TEST(RenderTemplateTest, FillsEveryPlaceholderInOnePass) {
  absl::StatusOr<std::string> out = RenderTemplate("a {{x}} b {{y_2}} {{x}}", {{"x", "{{y_2}}"}, {"y_2", "Y"}}, "t.md");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, "a {{y_2}} b Y {{y_2}}");  // a value is never rescanned
}

TEST(RenderTemplateTest, FailsNamingAnUnfilledPlaceholder) {
  absl::StatusOr<std::string> out = RenderTemplate("speedup: {{speedup}}x", {{"other", "1"}}, "summarizer_user.md");
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(out.status().message().find("{{speedup}}"), std::string::npos) << out.status();
  EXPECT_NE(out.status().message().find("summarizer_user.md"), std::string::npos) << out.status();
}

TEST(RenderTemplateTest, LeavesOtherBracesAlone) {
  absl::StatusOr<std::string> out = RenderTemplate("d = {{'k': 1}} {x} {{ spaced }} {{", {}, "t.md");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(*out, "d = {{'k': 1}} {x} {{ spaced }} {{");
}

TEST(PromptLibraryTest, RejectsPathLikeAndMissingPromptSetsNamingTheField) {
  PromptLibrary prompts(ACCELOPT_SOURCE_DIR "/prompts");
  absl::Status traversal = prompts.Check("../etc", {"planner_user"});
  EXPECT_EQ(traversal.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(traversal.message().find("model.prompt_set"), std::string::npos) << traversal;
  absl::Status missing = prompts.Check("no-such-set", {"planner_user"});
  EXPECT_NE(missing.message().find("model.prompt_set: prompt set 'no-such-set' has no planner_user.md"),
            std::string::npos)
      << missing;
  EXPECT_TRUE(prompts
                  .Check("", {"planner_system", "planner_user", "executor_system", "executor_user", "summarizer_system",
                              "summarizer_user"})
                  .ok());
}

TEST(PromptLibraryTest, FingerprintNamesTheSetAndChangesWithAnyTemplateText) {
  testing::ScratchDir scratch;
  const std::string& root = scratch.path();
  std::filesystem::create_directories(root + "/a");
  std::filesystem::create_directories(root + "/b");
  std::filesystem::create_directories(root + "/default");
  for (const char* set : {"a", "b", "default"}) {
    std::ofstream(root + "/" + set + "/one.md") << "first template";
    std::ofstream(root + "/" + set + "/two.md") << (std::string(set) == "b" ? "second, edited" : "second");
  }
  PromptLibrary prompts(root);
  auto a = prompts.Fingerprint("a", {"one", "two"});
  auto b = prompts.Fingerprint("b", {"one", "two"});
  auto default_set = prompts.Fingerprint("", {"one", "two"});
  ASSERT_TRUE(a.ok() && b.ok() && default_set.ok());
  EXPECT_EQ(a->name(), "a");
  EXPECT_EQ(default_set->name(), "default");
  EXPECT_EQ(a->sha256(), default_set->sha256());  // same texts, same hash
  EXPECT_NE(a->sha256(), b->sha256());
  EXPECT_NE(a->sha256(), prompts.Fingerprint("a", {"one"})->sha256());
  EXPECT_EQ(prompts.Fingerprint("a", {"three"}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(PromptLibraryTest, DefaultRootHoldsTheDefaultSet) {
  EXPECT_TRUE(std::filesystem::exists(DefaultPromptRoot() + "/default/planner_system.md")) << DefaultPromptRoot();
}

TEST(PromptLibraryTest, SummarizerTemplatesRenderWithTheirThreeValues) {
  PromptLibrary prompts(ACCELOPT_SOURCE_DIR "/prompts");
  absl::StatusOr<std::string> user = prompts.Render(
      "default", "summarizer_user", {{"slow_kernel", "SLOW"}, {"fast_kernel", "FAST"}, {"speedup", "1.37"}});
  ASSERT_TRUE(user.ok()) << user.status();
  EXPECT_NE(user->find("1.37x"), std::string::npos);
  EXPECT_TRUE(prompts.Render("default", "summarizer_system", {}).ok());
  EXPECT_FALSE(prompts.Render("default", "summarizer_user", {{"slow_kernel", "S"}, {"fast_kernel", "F"}}).ok());
}

}  // namespace
}  // namespace accelopt::llm

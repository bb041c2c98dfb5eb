#include "libs/llm/text_extract.h"

#include <gtest/gtest.h>

namespace accelopt::llm {
namespace {

TEST(PlanTitleTest, PrefersTheFirstBoldSpanThenTheFirstLine) {
  EXPECT_EQ(PlanTitle("Intro\n**Hoist the weight loads** out of the loop"), "Hoist the weight loads");
  EXPECT_EQ(PlanTitle("****\n**  Fuse  **"), "Fuse");
  EXPECT_EQ(PlanTitle("\n\n## Tile the K loop by 512\nbody"), "Tile the K loop by 512");
  EXPECT_EQ(PlanTitle(""), "");
  EXPECT_EQ(PlanTitle(std::string(500, 'x')).size(), 200u);
}

TEST(FirstFencedBlockTest, TakesTheFirstBlockWithoutItsLanguageTag) {
  absl::StatusOr<std::string> code =
      FirstFencedBlock("Here:\n```python\n\ndef kernel(a):\n    return a\n\n```\nand\n```\nsecond\n```");
  ASSERT_TRUE(code.ok()) << code.status();
  EXPECT_EQ(*code, "def kernel(a):\n    return a");
  EXPECT_EQ(*FirstFencedBlock("```\nx = 1\n```"), "x = 1");
}

TEST(FirstFencedBlockTest, SaysWhyThereIsNoCode) {
  EXPECT_EQ(FirstFencedBlock("def kernel(): pass").status().message(), "no fenced code block in the response");
  EXPECT_NE(FirstFencedBlock("```python\ndef kernel(a):\n").status().message().find("never closed"), std::string::npos);
}

// The response styles real models produce (tests/llm_double serves the same ones over HTTP).
TEST(KernelSourceTest, ReasoningPreambleWithSnippetsThenTheModule) {
  const std::string answer =
      "Let me think. The loop writes `acc` each time:\n```python\nacc[...] += x\n```\nSo the full module is:\n"
      "```python\nimport neuronxcc.nki.language as nl\n\ndef kernel(a):\n    return a\n```\nDone.";
  EXPECT_EQ(*KernelSource(answer), "import neuronxcc.nki.language as nl\n\ndef kernel(a):\n    return a");
  // Several blocks, none defining the kernel: the first one.
  EXPECT_EQ(*KernelSource("```\nx = 1\n```\n```\ny = 2\n```"), "x = 1");
}

TEST(KernelSourceTest, JsonToolCallStyle) {
  EXPECT_EQ(*KernelSource(R"({"name": "submit", "arguments": {"code": "def kernel(a):\n    return a\n"}})"),
            "def kernel(a):\n    return a");
  // OpenAI-style: arguments is itself a JSON string.
  EXPECT_EQ(*KernelSource(R"({"tool": "submit", "arguments": "{\"source\": \"def kernel(b):\\n    pass\"}"})"),
            "def kernel(b):\n    pass");
}

TEST(KernelSourceTest, BareCodeRefusalsAndTruncation) {
  EXPECT_EQ(*KernelSource("import numpy as np\ndef kernel(a):\n    return a\n"),
            "import numpy as np\ndef kernel(a):\n    return a");
  EXPECT_EQ(KernelSource("I'm sorry, but I can't help with that.").status().message(),
            "no fenced code block in the response");
  EXPECT_EQ(KernelSource("{\"refusal\": \"no\"}").status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(KernelSource("Here:\n```python\ndef kernel(a):\n    re").status().message().find("never closed"),
            std::string::npos);
}

}  // namespace
}  // namespace accelopt::llm

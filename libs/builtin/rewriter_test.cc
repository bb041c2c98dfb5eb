// The rewriter, run as the services run it (bubblewrap sandbox), never evaluates kernel text: a loop bound that
// escapes an empty-builtins eval stays an unknown trip count.
#include "libs/builtin/rewriter.h"

#include <gtest/gtest.h>

#include <string>

namespace accelopt::builtin {
namespace {

// Evaluated, this runs os.system('true') through object.__subclasses__() and yields 0.
constexpr char kPayload[] =
    "[c for c in ().__class__.__base__.__subclasses__() if c.__name__ == '_wrap_close'][0]"
    ".__init__.__globals__['system']('true')";

std::string KernelWithLoopBound(const std::string& bound) {
  return "import neuronxcc.nki as nki\n"
         "import neuronxcc.nki.language as nl\n"
         "\n"
         "\n"
         "@nki.jit\n"
         "def kernel(a, out):\n"
         "    for i in nl.affine_range(" +
         bound +
         "):\n"
         "        t = nl.load(a[0:128, i * 64:(i + 1) * 64])\n"
         "        nl.store(out[0:128, i * 64:(i + 1) * 64], value=t)\n";
}

Rewriter SandboxedRewriter() {
  RewriterOptions options;  // the services' options: only the directory is set, bubblewrap stays on
  options.rewriter_dir = ACCELOPT_SOURCE_DIR "/services/executor/builtin";
  return Rewriter(options);
}

TEST(RewriterTest, LoopBoundWithAPayloadIsNotFolded) {
  Rewriter rewriter = SandboxedRewriter();
  auto result = rewriter.Apply(KernelWithLoopBound(kPayload), "builtin: split_loop site=L7 factor=2");
  ASSERT_TRUE(result.ok()) << result.status();
  // Folded, the payload would give a trip count of 0 and `nl.affine_range(0)`; not folded, split_loop guards the
  // unknown trip count with an assert over the untouched expression.
  EXPECT_NE(result->source.find(std::string("assert ") + kPayload + " % 2 == 0"), std::string::npos) << result->source;
  EXPECT_EQ(result->source.find("affine_range(0)"), std::string::npos) << result->source;
}

TEST(RewriterTest, ConstantLoopBoundIsFolded) {
  Rewriter rewriter = SandboxedRewriter();
  auto result = rewriter.Apply(KernelWithLoopBound("2 ** 3"), "builtin: split_loop site=L7 factor=2");
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_NE(result->source.find("nl.affine_range(4)"), std::string::npos) << result->source;
  EXPECT_EQ(result->source.find("assert"), std::string::npos) << result->source;
}

}  // namespace
}  // namespace accelopt::builtin

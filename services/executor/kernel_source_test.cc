#include "services/executor/kernel_source.h"

#include <gtest/gtest.h>

namespace accelopt::executor {
namespace {

TEST(PrependStandardImportsTest, AddsAllSevenToBareCode) {
  std::string out = PrependStandardImports("def kernel(a):\n    return a");
  EXPECT_EQ(out,
            "import numpy as np\n"
            "import neuronxcc.nki as nki\n"
            "import neuronxcc.nki.language as nl\n"
            "import neuronxcc.nki.isa as nisa\n"
            "import neuronxcc.nki.typing as nt\n"
            "from neuronxcc.nki import trace\n"
            "from neuronxcc.nki.language import par_dim\n"
            "\n"
            "def kernel(a):\n    return a");
}

TEST(PrependStandardImportsTest, AddsOnlyWhatIsMissing) {
  std::string code =
      "import numpy as np\n"
      "from neuronxcc import nki\n"
      "import neuronxcc.nki.language as nl  # comment\n"
      "from neuronxcc.nki.language import (\n    par_dim,\n    tile_size)\n"
      "def kernel(a): pass";
  std::string out = PrependStandardImports(code);
  EXPECT_EQ(out,
            "import neuronxcc.nki.isa as nisa\n"
            "import neuronxcc.nki.typing as nt\n"
            "from neuronxcc.nki import trace\n"
            "\n" +
                code);
}

TEST(PrependStandardImportsTest, LeavesCompleteModulesAloneAndFutureImportsFirst) {
  std::string full =
      "import numpy as np\nimport nki\nimport nki.language as nl\nimport nki.isa as nisa\n"
      "import nki.typing as nt\nfrom nki import trace\nfrom nki.language import par_dim\ndef kernel(): pass";
  EXPECT_EQ(PrependStandardImports(full), full);
  std::string future = PrependStandardImports("from __future__ import annotations\ndef kernel(): pass");
  EXPECT_EQ(future.rfind("from __future__ import annotations\nimport numpy as np\n", 0), 0u) << future;
}

TEST(DefinesKernelFunctionTest, FindsTopLevelKernelOrOptimizedKernel) {
  EXPECT_TRUE(DefinesKernelFunction("@nki.jit\ndef kernel(a, b):\n  pass"));
  EXPECT_TRUE(DefinesKernelFunction("def optimized_kernel (a):\n  pass"));
  EXPECT_FALSE(DefinesKernelFunction("def kernel_helper(a):\n  pass"));
  EXPECT_FALSE(DefinesKernelFunction("class K:\n    def kernel(self): pass"));
  EXPECT_FALSE(DefinesKernelFunction("# def kernel(a):"));
}

}  // namespace
}  // namespace accelopt::executor

// Checks and completion of the kernel modules the executor produces: the standard NKI imports and the
// `kernel` entry point.
#pragma once

#include <string>

#include "absl/strings/string_view.h"

namespace accelopt::executor {

// `code` with the standard NKI imports it lacks prepended (after any `from __future__` lines): numpy as np,
// neuronxcc.nki as nki, neuronxcc.nki.language as nl, neuronxcc.nki.isa as nisa, neuronxcc.nki.typing as nt,
// `from neuronxcc.nki import trace`, `from neuronxcc.nki.language import par_dim`. An import counts as
// present when a top-level import statement already binds its name (`import nki` binds nki), so nothing is
// imported twice. Unchanged when nothing is missing.
std::string PrependStandardImports(absl::string_view code);

// True when `code` defines a top-level function `kernel` or `optimized_kernel`.
bool DefinesKernelFunction(absl::string_view code);

}  // namespace accelopt::executor

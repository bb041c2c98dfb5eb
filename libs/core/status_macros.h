// Early-return helpers for absl::Status and absl::StatusOr (Abseil 20220623 has none).
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define ACCELOPT_INTERNAL_CONCAT_(a, b) a##b
#define ACCELOPT_INTERNAL_CONCAT(a, b) ACCELOPT_INTERNAL_CONCAT_(a, b)

// Returns from the current function with `expr`'s status when it is not OK.
#define ACCELOPT_RETURN_IF_ERROR(expr)                    \
  do {                                                    \
    if (absl::Status _st = (expr); !_st.ok()) return _st; \
  } while (0)

// Evaluates `rexpr` (an absl::StatusOr<T>); on error returns its status, else assigns the value to `lhs`.
#define ACCELOPT_ASSIGN_OR_RETURN(lhs, rexpr) \
  ACCELOPT_INTERNAL_ASSIGN_OR_RETURN(ACCELOPT_INTERNAL_CONCAT(_statusor_, __LINE__), lhs, rexpr)

#define ACCELOPT_INTERNAL_ASSIGN_OR_RETURN(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                                       \
  if (!tmp.ok()) return std::move(tmp).status();            \
  lhs = std::move(tmp).value()

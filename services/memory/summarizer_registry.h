// The summarizer providers available in this process, by ModelSpec.provider name ("openai", "builtin", and
// the test-only "fake").
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "services/memory/summarizer.h"

namespace accelopt::memory {

// Filled once at start-up, then read-only: Find is thread-safe after the last Register.
class SummarizerRegistry {
 public:
  // Replaces any provider registered under the same name.
  void Register(const std::string& provider, std::unique_ptr<Summarizer> summarizer);

  // INVALID_ARGUMENT naming `model.provider` and the available providers when none is registered as
  // `provider`.
  absl::StatusOr<Summarizer*> Find(absl::string_view provider) const;

  std::vector<std::string> Providers() const;

 private:
  std::map<std::string, std::unique_ptr<Summarizer>, std::less<>> providers_;
};

}  // namespace accelopt::memory

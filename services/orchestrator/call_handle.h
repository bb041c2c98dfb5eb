// A handle on one outbound call (an agent RPC or a profile) that lets its owner cancel it.
#pragma once

#include <memory>

namespace accelopt::orchestrator {

// Thread-safe. Cancel() after the call finished is a no-op; a cancelled call still reports its completion
// (usually CANCELLED) through its callback.
class CallHandle {
 public:
  virtual ~CallHandle() = default;
  virtual void Cancel() = 0;
};

}  // namespace accelopt::orchestrator

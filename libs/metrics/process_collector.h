// Standard Prometheus process metrics for this process, read from /proc at scrape time:
//   process_cpu_seconds_total, process_resident_memory_bytes, process_virtual_memory_bytes,
//   process_open_fds, process_max_fds, process_start_time_seconds
// and the build-info gauge accelopt_build_info{component,version} = 1.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"

namespace accelopt::metrics {

class ProcessCollector final : public prometheus::Collectable {
 public:
  // `component` names the binary (e.g. "orchestrator"); `version` is its build version.
  ProcessCollector(std::string component, std::string version);

  // One family per metric above; a metric whose /proc source cannot be read is left out, never reported as 0.
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  std::string component_;
  std::string version_;
};

}  // namespace accelopt::metrics

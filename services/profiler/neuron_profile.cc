#include "services/profiler/neuron_profile.h"

#include <algorithm>
#include <numeric>

#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace accelopt::profiler {

absl::StatusOr<NeuronSummary> ParseNeuronProfileSummary(const std::string& json) {
  google::protobuf::Value root;
  if (!google::protobuf::util::JsonStringToMessage(json, &root).ok()) {
    return absl::InvalidArgumentError("neuron-profile summary is not JSON");
  }
  const google::protobuf::ListValue* entries = nullptr;
  if (root.has_list_value()) {
    entries = &root.list_value();
  } else if (root.has_struct_value()) {
    auto it = root.struct_value().fields().find("summary");
    if (it != root.struct_value().fields().end() && it->second.has_list_value()) entries = &it->second.list_value();
  }
  if (entries == nullptr || entries->values_size() == 0 || !entries->values(0).has_struct_value()) {
    return absl::InvalidArgumentError("neuron-profile summary has no entry");
  }
  const auto& fields = entries->values(0).struct_value().fields();
  NeuronSummary summary;
  auto total = fields.find("total_time");
  if (total == fields.end() || total->second.number_value() <= 0) {
    return absl::InvalidArgumentError("neuron-profile summary has no positive total_time");
  }
  summary.total_time_seconds = total->second.number_value();
  const auto* desc = summary.counters.GetDescriptor();
  const auto* refl = summary.counters.GetReflection();
  for (int i = 0; i < desc->field_count(); ++i) {
    auto it = fields.find(desc->field(i)->name());
    if (it != fields.end() && it->second.kind_case() == google::protobuf::Value::kNumberValue) {
      refl->SetDouble(&summary.counters, desc->field(i), it->second.number_value());
    }
  }
  return summary;
}

v1::LatencyStats RoundStats(const std::vector<double>& times_ms) {
  v1::LatencyStats stats;
  if (times_ms.empty()) return stats;
  auto [min, max] = std::minmax_element(times_ms.begin(), times_ms.end());
  stats.set_mean_ms(std::accumulate(times_ms.begin(), times_ms.end(), 0.0) / times_ms.size());
  stats.set_min_ms(*min);
  stats.set_max_ms(*max);
  stats.set_rel_diff(*min > 0 ? (*max - *min) / *min : 0);
  stats.set_runs(static_cast<int32_t>(times_ms.size()));
  return stats;
}

bool RoundIsStable(const v1::LatencyStats& round, double tolerance) { return round.rel_diff() <= tolerance; }

}  // namespace accelopt::profiler

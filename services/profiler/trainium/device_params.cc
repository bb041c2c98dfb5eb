#include "services/profiler/trainium/device_params.h"

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "services/profiler/trainium/embedded_devices.h"
#include "yaml-cpp/yaml.h"

namespace accelopt::trainium {
namespace {

// A constant of the device file and where it is stored; `min_value` is the smallest legal value.
struct Field {
  const char* name;
  double DeviceParams::*member;
  double min_value;
};

constexpr double kPositive = 1e-12;

constexpr Field kFields[] = {
    {"pe_clock_hz", &DeviceParams::pe_clock_hz, kPositive},
    {"act_clock_hz", &DeviceParams::act_clock_hz, kPositive},
    {"dve_clock_hz", &DeviceParams::dve_clock_hz, kPositive},
    {"pool_clock_hz", &DeviceParams::pool_clock_hz, kPositive},
    {"pe_array_dim", &DeviceParams::pe_array_dim, 1},
    {"pe_fp32_factor", &DeviceParams::pe_fp32_factor, kPositive},
    {"pe_transpose_fp32_factor", &DeviceParams::pe_transpose_fp32_factor, kPositive},
    {"pe_min_stationary", &DeviceParams::pe_min_stationary, 0},
    {"pe_overhead_cycles", &DeviceParams::pe_overhead_cycles, 0},
    {"pe_single_pass_overhead_cycles", &DeviceParams::pe_single_pass_overhead_cycles, 0},
    {"min_instruction_cycles", &DeviceParams::min_instruction_cycles, 0},
    {"act_overhead_cycles", &DeviceParams::act_overhead_cycles, 0},
    {"dve_overhead_cycles", &DeviceParams::dve_overhead_cycles, 0},
    {"pool_overhead_cycles", &DeviceParams::pool_overhead_cycles, 0},
    {"dve_tensor_tensor_cycles_per_elem", &DeviceParams::dve_tensor_tensor_cycles_per_elem, kPositive},
    {"reciprocal_cycles_per_elem", &DeviceParams::reciprocal_cycles_per_elem, kPositive},
    {"scan_cycles_per_elem", &DeviceParams::scan_cycles_per_elem, kPositive},
    {"bn_aggr_cycles_per_elem", &DeviceParams::bn_aggr_cycles_per_elem, kPositive},
    {"pool_cycles_per_elem", &DeviceParams::pool_cycles_per_elem, kPositive},
    {"pool_fixed_op_cycles", &DeviceParams::pool_fixed_op_cycles, 0},
    {"strided_access_factor", &DeviceParams::strided_access_factor, 1},
    {"dynamic_access_min_cycles", &DeviceParams::dynamic_access_min_cycles, 0},
    {"dma_queues", &DeviceParams::dma_queues, 1},
    {"dma_partitions_per_queue", &DeviceParams::dma_partitions_per_queue, 1},
    {"dma_queue_bytes_per_ns", &DeviceParams::dma_queue_bytes_per_ns, kPositive},
    {"dma_descriptor_overhead_bytes", &DeviceParams::dma_descriptor_overhead_bytes, 0},
    {"dma_queue_overhead_ns", &DeviceParams::dma_queue_overhead_ns, 0},
    {"dma_fixed_latency_ns", &DeviceParams::dma_fixed_latency_ns, 0},
    {"hbm_bytes_per_ns", &DeviceParams::hbm_bytes_per_ns, kPositive},
    {"act_preference_ns", &DeviceParams::act_preference_ns, -1e9},
    {"sync_latency_ns", &DeviceParams::sync_latency_ns, 0},
    {"kernel_launch_ns", &DeviceParams::kernel_launch_ns, 0},
    {"sbuf_bytes_pp", &DeviceParams::sbuf_bytes_pp, 1},
    {"sbuf_reserve_bytes_pp", &DeviceParams::sbuf_reserve_bytes_pp, 0},
    {"sbuf_ring_depth", &DeviceParams::sbuf_ring_depth, 1},
    {"spill_reuse_window_instructions", &DeviceParams::spill_reuse_window_instructions, 0},
    {"act_outputs_to_psum_for_dve", &DeviceParams::act_outputs_to_psum_for_dve, 0},
    {"psum_banks", &DeviceParams::psum_banks, 1},
    {"psum_bank_bytes", &DeviceParams::psum_bank_bytes, 1},
    {"dve_pool_shared_sbuf_port", &DeviceParams::dve_pool_shared_sbuf_port, 0},
    {"peak_flops_bandwidth_ratio", &DeviceParams::peak_flops_bandwidth_ratio, kPositive},
    {"roofline_peak_bandwidth_bytes_per_s", &DeviceParams::roofline_peak_bandwidth_bytes_per_s, kPositive},
    {"roofline_peak_vector_flops", &DeviceParams::roofline_peak_vector_flops, kPositive},
    {"roofline_peak_matmul_flops", &DeviceParams::roofline_peak_matmul_flops, kPositive},
};

const Field* FindField(absl::string_view name) {
  for (const Field& field : kFields) {
    if (name == field.name) return &field;
  }
  return nullptr;
}

bool HasSourceTag(absl::string_view source) {
  for (absl::string_view tag : {"[doc]", "[meas]", "[est]", "[fit]", "[derived]"}) {
    if (absl::StartsWith(source, tag)) return true;
  }
  return false;
}

absl::Status ParseConstant(const std::string& key, const YAML::Node& entry, DeviceParams* params) {
  const Field* field = FindField(key);
  if (field == nullptr) return absl::InvalidArgumentError(absl::StrCat("device file: unknown constant '", key, "'"));
  if (!entry.IsMap()) {
    return absl::InvalidArgumentError(
        absl::StrCat("device file: constant '", key, "' must be {value: ..., source: ...}"));
  }
  for (const auto& item : entry) {
    const std::string sub = item.first.as<std::string>();
    if (sub != "value" && sub != "source") {
      return absl::InvalidArgumentError(absl::StrCat("device file: constant '", key, "': unknown key '", sub, "'"));
    }
  }
  if (!entry["value"]) {
    return absl::InvalidArgumentError(absl::StrCat("device file: constant '", key, "' has no value"));
  }
  const YAML::Node source = entry["source"];
  if (!source || !HasSourceTag(source.as<std::string>())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "device file: constant '", key, "' needs a source starting with [doc], [meas], [est], [fit] or [derived]"));
  }
  double value = 0;
  if (!YAML::convert<double>::decode(entry["value"], value) || !std::isfinite(value)) {
    return absl::InvalidArgumentError(absl::StrCat("device file: constant '", key, "': value is not a number"));
  }
  if (value < field->min_value) {
    return absl::InvalidArgumentError(
        absl::StrCat("device file: constant '", key, "' = ", value, " is below its minimum ", field->min_value));
  }
  params->*(field->member) = value;
  return absl::OkStatus();
}

absl::StatusOr<DeviceParams> ParseDocument(const YAML::Node& root) {
  if (!root.IsMap()) return absl::InvalidArgumentError("device file: top level must be a mapping");
  DeviceParams params;
  absl::flat_hash_set<std::string> seen;
  bool has_constants = false;
  for (const auto& item : root) {
    const std::string key = item.first.as<std::string>();
    if (key == "device") {
      params.name = item.second.as<std::string>();
    } else if (key == "description") {
      continue;
    } else if (key == "constants") {
      has_constants = true;
      if (!item.second.IsMap()) return absl::InvalidArgumentError("device file: 'constants' must be a mapping");
      for (const auto& constant : item.second) {
        const std::string name = constant.first.as<std::string>();
        if (!seen.insert(name).second) {
          return absl::InvalidArgumentError(absl::StrCat("device file: constant '", name, "' given twice"));
        }
        if (absl::Status s = ParseConstant(name, constant.second, &params); !s.ok()) return s;
      }
    } else {
      return absl::InvalidArgumentError(absl::StrCat("device file: unknown key '", key, "'"));
    }
  }
  if (params.name.empty()) return absl::InvalidArgumentError("device file: missing 'device' name");
  if (!has_constants) return absl::InvalidArgumentError("device file: missing 'constants'");
  for (const Field& field : kFields) {
    if (!seen.contains(field.name)) {
      return absl::InvalidArgumentError(absl::StrCat("device file: missing constant '", field.name, "'"));
    }
  }
  if (params.sbuf_reserve_bytes_pp >= params.sbuf_bytes_pp) {
    return absl::InvalidArgumentError("device file: sbuf_reserve_bytes_pp must be below sbuf_bytes_pp");
  }
  return params;
}

}  // namespace

absl::StatusOr<DeviceParams> ParseDeviceParams(absl::string_view yaml_text) {
  // yaml-cpp reports errors by throwing; this is the boundary where they become a Status.
  try {
    return ParseDocument(YAML::Load(std::string(yaml_text)));
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("device file: line ", e.mark.line + 1, ": ", e.msg));
  }
}

absl::StatusOr<DeviceParams> LoadDeviceParamsFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open device file ", path));
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<DeviceParams> params = ParseDeviceParams(text.str());
  if (!params.ok()) {
    return absl::Status(params.status().code(), absl::StrCat(path, ": ", params.status().message()));
  }
  return params;
}

absl::StatusOr<DeviceParams> BuiltinDeviceParams(absl::string_view name) {
  std::optional<absl::string_view> yaml = EmbeddedDeviceYaml(name);
  if (!yaml.has_value()) {
    return absl::NotFoundError(absl::StrCat("unknown device '", name, "' (expected trn1 or trn2)"));
  }
  return ParseDeviceParams(*yaml);
}

}  // namespace accelopt::trainium

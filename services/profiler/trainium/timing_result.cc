#include "services/profiler/trainium/timing_result.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace accelopt::trainium {
namespace {

// JSON number: shortest round-trippable form, no NaN or infinity (not valid JSON).
std::string Number(double value) {
  if (!std::isfinite(value)) return "0";
  return absl::StrFormat("%.17g", value);
}

std::string Quote(absl::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') {
      out.push_back('\\');
      out.push_back(ch);
    } else if (static_cast<unsigned char>(ch) < 0x20) {
      absl::StrAppend(&out, absl::StrFormat("\\u%04x", ch));
    } else {
      out.push_back(ch);
    }
  }
  out.push_back('"');
  return out;
}

}  // namespace

std::string ToJson(const TimingResult& r) {
  const ProfileCounters& c = r.counters;
  std::string json = absl::StrCat("{\"kernel\":", Quote(r.kernel), ",\"device\":", Quote(r.device),
                                  ",\"latency_ns\":", Number(r.latency_ns), ",\"latency_ms\":", Number(r.latency_ms));
  absl::StrAppend(&json, ",\"counters\":{",                          //
                  "\"hbm_read_bytes\":", c.hbm_read_bytes,           //
                  ",\"hbm_write_bytes\":", c.hbm_write_bytes,        //
                  ",\"psum_read_bytes\":", c.psum_read_bytes,        //
                  ",\"psum_write_bytes\":", c.psum_write_bytes,      //
                  ",\"sbuf_read_bytes\":", c.sbuf_read_bytes,        //
                  ",\"sbuf_write_bytes\":", c.sbuf_write_bytes,      //
                  ",\"spill_reload_bytes\":", c.spill_reload_bytes,  //
                  ",\"spill_save_bytes\":", c.spill_save_bytes);
  absl::StrAppend(&json, ",\"hardware_flops\":", Number(c.hardware_flops),                   //
                  ",\"transpose_flops\":", Number(c.transpose_flops),                        //
                  ",\"peak_flops_bandwidth_ratio\":", Number(c.peak_flops_bandwidth_ratio),  //
                  ",\"mm_arithmetic_intensity\":", Number(c.mm_arithmetic_intensity),        //
                  ",\"hfu_estimated_percent\":", Number(c.hfu_estimated_percent),            //
                  ",\"scalar_engine_active_time_percent\":", Number(c.scalar_engine_active_time_percent),
                  ",\"vector_engine_active_time_percent\":", Number(c.vector_engine_active_time_percent),
                  ",\"gpsimd_engine_active_time_percent\":", Number(c.gpsimd_engine_active_time_percent), "}");
  absl::StrAppend(&json, ",\"engine_active\":{\"pe\":", Number(r.active.pe), ",\"act\":", Number(r.active.act),
                  ",\"dve\":", Number(r.active.dve), ",\"pool\":", Number(r.active.pool),
                  ",\"dma\":", Number(r.active.dma), "}");
  const ModelDiagnostics& d = r.diagnostics;
  absl::StrAppend(&json, ",\"diagnostics\":{\"instructions\":", d.instructions,
                  ",\"eliminated_instructions\":", d.eliminated_instructions,
                  ",\"rematerialized_bytes\":", d.rematerialized_bytes,
                  ",\"psum_bank_overflows\":", d.psum_bank_overflows,
                  ",\"peak_sbuf_live_bytes_pp\":", Number(d.peak_sbuf_live_bytes_pp),
                  ",\"demoted_sbuf_sites\":", d.demoted_sbuf_sites, ",\"sbuf_ring_depth\":", d.sbuf_ring_depth, "}");
  if (r.roofline.has_value()) {
    absl::StrAppend(&json, ",\"roofline\":{\"peak_ms\":", Number(r.roofline->peak_ns * 1e-6),
                    ",\"percent_of_peak\":", Number(r.roofline->percent_of_peak),
                    ",\"bound\":", Quote(RooflineBoundName(r.roofline->bound)), "}");
  }
  absl::StrAppend(&json, "}");
  return json;
}

std::string ToText(const TimingResult& r) {
  const ProfileCounters& c = r.counters;
  std::string text = absl::StrFormat("kernel %s on %s: latency %.6f ms\n", r.kernel, r.device, r.latency_ms);
  absl::StrAppendFormat(&text, "  engine active: pe %.3f act %.3f dve %.3f pool %.3f dma %.3f\n", r.active.pe,
                        r.active.act, r.active.dve, r.active.pool, r.active.dma);
  absl::StrAppendFormat(&text, "  hbm_read_bytes %d  hbm_write_bytes %d\n", c.hbm_read_bytes, c.hbm_write_bytes);
  absl::StrAppendFormat(&text, "  psum_read_bytes %d  psum_write_bytes %d\n", c.psum_read_bytes, c.psum_write_bytes);
  absl::StrAppendFormat(&text, "  sbuf_read_bytes %d  sbuf_write_bytes %d\n", c.sbuf_read_bytes, c.sbuf_write_bytes);
  absl::StrAppendFormat(&text, "  spill_reload_bytes %d  spill_save_bytes %d\n", c.spill_reload_bytes,
                        c.spill_save_bytes);
  absl::StrAppendFormat(&text, "  hardware_flops %.0f  transpose_flops %.0f  mm_arithmetic_intensity %.2f\n",
                        c.hardware_flops, c.transpose_flops, c.mm_arithmetic_intensity);
  absl::StrAppendFormat(&text, "  peak_flops_bandwidth_ratio %.2f  hfu_estimated_percent %.4f\n",
                        c.peak_flops_bandwidth_ratio, c.hfu_estimated_percent);
  absl::StrAppendFormat(&text, "  scalar/vector/gpsimd_engine_active_time_percent %.4f / %.4f / %.4f\n",
                        c.scalar_engine_active_time_percent, c.vector_engine_active_time_percent,
                        c.gpsimd_engine_active_time_percent);
  const ModelDiagnostics& d = r.diagnostics;
  absl::StrAppendFormat(&text,
                        "  model: %d instructions (%d eliminated), rematerialized %d B, psum overflows %d, "
                        "peak SBUF %.0f B/partition, %d demoted sites, ring depth %d\n",
                        d.instructions, d.eliminated_instructions, d.rematerialized_bytes, d.psum_bank_overflows,
                        d.peak_sbuf_live_bytes_pp, d.demoted_sbuf_sites, d.sbuf_ring_depth);
  if (r.roofline.has_value()) {
    absl::StrAppendFormat(&text, "  roofline: peak %.6f ms, %.1f%% of peak, %s bound\n", r.roofline->peak_ns * 1e-6,
                          r.roofline->percent_of_peak, RooflineBoundName(r.roofline->bound));
  }
  return text;
}

}  // namespace accelopt::trainium

#include "services/profiler/trainium/sbuf_residency.h"

#include <string>

#include "gtest/gtest.h"
#include "services/profiler/trainium/scheduler.h"
#include "services/profiler/trainium/test_util.h"

namespace accelopt::trainium {
namespace {

constexpr char kLoadX[] =
    "I id=0 op=load eng=dma p=128 n=250 in=hbm:1000 out=sbuf:1000 wa=0 dir=load bytes=128000 "
    "run=1000 hbm=io\n";
constexpr char kComputeX[] = "I id=0 op=activation eng=act p=128 n=250 in=const:4 out=sbuf:1000 wa=0\n";

// Three 1000-byte tiles from three sites where the usable SBUF holds two. x (site 1) is produced by
// `x_producer`; y and z are computed; x is read twice at the end, the second time half of it.
std::string PressureTrace(const std::string& x_producer) {
  return "A id=0 buf=sbuf bytes_pp=1000 parts=128 site=1\n" + x_producer +
         "A id=1 buf=sbuf bytes_pp=1000 parts=128 site=2\n"
         "I id=1 op=activation eng=act p=128 n=250 in=const:4 out=sbuf:1000 wa=1\n"
         "A id=2 buf=sbuf bytes_pp=1000 parts=128 site=3\n"
         "I id=2 op=activation eng=act p=128 n=250 in=const:4 out=sbuf:1000 wa=2\n"
         "I id=3 op=activation eng=act p=128 n=250 in=sbuf:1000 out=psum:1000 dep=1,2 ra=1,2\n"
         "I id=4 op=activation eng=act p=128 n=250 in=sbuf:1000 out=psum:1000 ra=0\n"
         "I id=5 op=activation eng=act p=128 n=125 in=sbuf:500 out=psum:500 ra=0\n";
}

DeviceParams TwoTileDevice() {
  DeviceParams p = SimpleDeviceForTest();
  p.sbuf_bytes_pp = 2500;
  p.sbuf_reserve_bytes_pp = 500;
  p.spill_reuse_window_instructions = 0;
  return p;
}

TEST(SbufResidencyTest, UnmodifiedHbmCopiesAreRematerialisedPerUse) {
  const Trace trace = ParseTraceForTest(PressureTrace(kLoadX));
  const Schedule s = ScheduleTrace(trace, TwoTileDevice());
  // x's site is the only one holding an HBM copy, so it is demoted; each read re-loads what it
  // reads.
  EXPECT_EQ(s.demoted_sbuf_sites, 1);
  EXPECT_EQ(s.traffic.rematerialized_bytes, 128000 + 64000);
  EXPECT_EQ(s.traffic.spill_save_bytes, 0);
  EXPECT_EQ(s.traffic.spill_reload_bytes, 0);
  EXPECT_DOUBLE_EQ(s.peak_sbuf_live_bytes_pp, 2000);
}

TEST(SbufResidencyTest, ComputedTilesAreSpilledOnceAndReloadedPerUse) {
  const Trace trace = ParseTraceForTest(PressureTrace(kComputeX));
  const Schedule s = ScheduleTrace(trace, TwoTileDevice());
  // All sites hold computed data and are equally large: the lowest site (x) is demoted, saved once.
  EXPECT_EQ(s.demoted_sbuf_sites, 1);
  EXPECT_EQ(s.traffic.rematerialized_bytes, 0);
  EXPECT_EQ(s.traffic.spill_save_bytes, 128000);
  EXPECT_EQ(s.traffic.spill_reload_bytes, 128000 + 64000);
  // The first reader of x waits for its reload, which waits for the save.
  EXPECT_GT(s.instructions[4].start_ns, s.instructions[0].end_ns + 128000 / 16.0);
}

TEST(SbufResidencyTest, ReadsSoonAfterTheWriteNeedNoReload) {
  const Trace trace = ParseTraceForTest(PressureTrace(kComputeX));
  DeviceParams p = TwoTileDevice();
  p.spill_reuse_window_instructions = 4;  // the read at instruction 4 is within reach of the write at 0
  const Schedule s = ScheduleTrace(trace, p);
  EXPECT_EQ(s.traffic.spill_save_bytes, 128000);
  EXPECT_EQ(s.traffic.spill_reload_bytes, 64000);
}

TEST(SbufResidencyTest, NoTrafficWhenEverythingFits) {
  const Trace trace = ParseTraceForTest(PressureTrace(kComputeX));
  const Schedule s = ScheduleTrace(trace, SimpleDeviceForTest());
  EXPECT_EQ(s.demoted_sbuf_sites, 0);
  EXPECT_EQ(s.traffic.rematerialized_bytes + s.traffic.spill_save_bytes + s.traffic.spill_reload_bytes, 0);
}

TEST(SbufResidencyTest, LoadsIntoStreamedTilesAreElided) {
  // Site 1 is demoted while its first tile is live (that tile is re-loaded at its read); its second
  // tile's load is replaced by the re-load at its use.
  const Trace trace = ParseTraceForTest(
      "A id=0 buf=sbuf bytes_pp=1500 parts=128 site=1\n"
      "I id=0 op=load eng=dma p=128 n=375 in=hbm:1500 out=sbuf:1500 wa=0 dir=load bytes=192000 "
      "run=1500 hbm=io\n"
      "A id=1 buf=sbuf bytes_pp=1000 parts=128 site=2\n"
      "I id=1 op=activation eng=act p=128 n=250 in=sbuf:1500 out=sbuf:1000 dep=0 ra=0 wa=1\n"
      "F id=0\n"
      "A id=2 buf=sbuf bytes_pp=1500 parts=128 site=1\n"
      "I id=2 op=load eng=dma p=128 n=375 in=hbm:1500 out=sbuf:1500 wa=2 dir=load bytes=192000 "
      "run=1500 hbm=io\n"
      "I id=3 op=activation eng=act p=128 n=250 in=sbuf:1500 out=psum:1000 dep=2 ra=2\n");
  const Schedule s = ScheduleTrace(trace, TwoTileDevice());
  EXPECT_EQ(s.demoted_sbuf_sites, 1);
  EXPECT_EQ(s.instructions[2].engine, Engine::kAuto);
  EXPECT_EQ(s.eliminated_instructions, 1);
  EXPECT_EQ(s.traffic.rematerialized_bytes, 2 * 192000);
}

}  // namespace
}  // namespace accelopt::trainium

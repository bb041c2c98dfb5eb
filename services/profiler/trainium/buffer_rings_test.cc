#include "services/profiler/trainium/buffer_rings.h"

#include "gtest/gtest.h"
#include "services/profiler/trainium/test_util.h"

namespace accelopt::trainium {
namespace {

// Two allocations each of a small site (100 B) and a large site (1000 B), plus a one-off
// allocation.
constexpr char kSites[] =
    "A id=0 buf=sbuf bytes_pp=100 parts=128 site=1\n"
    "A id=1 buf=sbuf bytes_pp=1000 parts=128 site=2\n"
    "A id=2 buf=sbuf bytes_pp=100 parts=128 site=1\n"
    "A id=3 buf=sbuf bytes_pp=1000 parts=128 site=2\n"
    "A id=4 buf=sbuf bytes_pp=5000 parts=128 site=3\n";

TEST(BufferRingsTest, LargestRingShrinksFirstWhenRingsDoNotFit) {
  const Trace trace = ParseTraceForTest(kSites);
  BufferRings roomy(trace, 3, 1e6);
  EXPECT_EQ(roomy.min_depth(), 3);
  // 3 x 100 + 3 x 1000 = 3300 > 2400: the large site drops to 2 buffers (2300), the small one
  // keeps 3.
  BufferRings tight(trace, 3, 2400);
  EXPECT_EQ(tight.min_depth(), 2);
  BufferRings tiny(trace, 3, 10);
  EXPECT_EQ(tiny.min_depth(), 1);
}

TEST(BufferRingsTest, SlotWaitsForItsPreviousOccupant) {
  const Trace trace = ParseTraceForTest(kSites);
  BufferRings rings(trace, 1, 1e6);
  EXPECT_DOUBLE_EQ(rings.Place(0), 0);
  rings.Release(0, 700);
  EXPECT_DOUBLE_EQ(rings.Place(2), 700);  // same site, one buffer: reuses allocation 0's slot
  EXPECT_DOUBLE_EQ(rings.Place(1), 0);
  EXPECT_DOUBLE_EQ(rings.Place(3), 0);  // allocation 1 is still live: no wait (an extra buffer)
  EXPECT_DOUBLE_EQ(rings.Place(4), 0);  // one-off site: no ring
}

// Two instances of a two-block tensor (site 1), allocated in different block orders: block b of the second instance
// reuses block b's buffer of the first, whatever order the blocks were allocated in.
constexpr char kBlockedTensors[] =
    "A id=0 buf=sbuf bytes_pp=100 parts=128 site=1 tensor=0 blk=0\n"
    "A id=1 buf=sbuf bytes_pp=100 parts=128 site=1 tensor=0 blk=1\n"
    "A id=2 buf=sbuf bytes_pp=100 parts=128 site=1 tensor=2 blk=1\n"
    "A id=3 buf=sbuf bytes_pp=100 parts=128 site=1 tensor=2 blk=0\n";

TEST(BufferRingsTest, BlockOfANewTensorReusesTheSameBlockOfAnEarlierInstance) {
  const Trace trace = ParseTraceForTest(kBlockedTensors);
  // Ring of one 200 B tensor buffer per site: the second instance waits block by block.
  BufferRings rings(trace, 1, 1e6);
  EXPECT_DOUBLE_EQ(rings.Place(0), 0);
  EXPECT_DOUBLE_EQ(rings.Place(1), 0);  // another block of the same tensor: its own buffer
  rings.Release(0, 300);
  rings.Release(1, 900);
  EXPECT_DOUBLE_EQ(rings.Place(2), 900);  // block 1 waits for block 1, not for block 0
  EXPECT_DOUBLE_EQ(rings.Place(3), 300);
}

TEST(BufferRingsTest, RingSizeCountsWholeTensors) {
  const Trace trace = ParseTraceForTest(kBlockedTensors);
  // The site's two tensors are 200 B each (two 100 B blocks): two buffers need 400 B.
  EXPECT_EQ(BufferRings(trace, 2, 400).min_depth(), 2);
  EXPECT_EQ(BufferRings(trace, 2, 399).min_depth(), 1);
}

// A site that allocates a group of two tiles per iteration (a Python list of K-tiles), both read by
// the iteration's instructions: two iterations, so four instances of the site, two live at a time.
constexpr char kTileGroups[] =
    "A id=0 buf=sbuf bytes_pp=100 parts=128 site=1\n"
    "A id=1 buf=sbuf bytes_pp=100 parts=128 site=1\n"
    "I id=0 op=copy eng=act p=128 n=25 in=sbuf:100,sbuf:100 out=sbuf:100 ra=0,1 wa=0\n"
    "F id=0\n"
    "F id=1\n"
    "A id=2 buf=sbuf bytes_pp=100 parts=128 site=1\n"
    "A id=3 buf=sbuf bytes_pp=100 parts=128 site=1\n"
    "I id=1 op=copy eng=act p=128 n=25 in=sbuf:100,sbuf:100 out=sbuf:100 ra=2,3 wa=2\n"
    "F id=2\n"
    "F id=3\n";

TEST(BufferRingsTest, AGroupOfTilesLiveAtOnceIsDoubleBuffered) {
  const Trace trace = ParseTraceForTest(kTileGroups);
  // `depth` groups of two tiles
  EXPECT_EQ(BufferRings(trace, 1, 1e6).min_depth(), 2);
  EXPECT_EQ(BufferRings(trace, 3, 1e6).min_depth(), 6);
  // with two groups, the next iteration's tiles do not wait for this iteration's
  BufferRings rings(trace, 2, 1e6);
  EXPECT_DOUBLE_EQ(rings.Place(0), 0);
  EXPECT_DOUBLE_EQ(rings.Place(1), 0);
  rings.Release(0, 500);
  rings.Release(1, 600);
  EXPECT_DOUBLE_EQ(rings.Place(2), 0);
  EXPECT_DOUBLE_EQ(rings.Place(3), 0);
  // the capacity still bounds the rings: 4 x 100 B do not fit in 350 B
  EXPECT_EQ(BufferRings(trace, 2, 350).min_depth(), 3);
}

}  // namespace
}  // namespace accelopt::trainium

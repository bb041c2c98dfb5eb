#include "services/profiler/trainium/engine_timeline.h"

#include <limits>

#include "gtest/gtest.h"

namespace accelopt::trainium {
namespace {

TEST(EngineTimelineTest, AnInstructionTakesTheFirstGapItFitsAtOrAfterItsReadyTime) {
  EngineTimeline engine(8);
  engine.Book(0, 100);
  engine.Book(300, 400);
  engine.Book(450, 600);
  EXPECT_DOUBLE_EQ(engine.EarliestStart(0, 200), 100);    // [100, 300) holds 200
  EXPECT_DOUBLE_EQ(engine.EarliestStart(0, 250), 600);    // no gap holds 250
  EXPECT_DOUBLE_EQ(engine.EarliestStart(150, 100), 150);  // inside the first gap
  EXPECT_DOUBLE_EQ(engine.EarliestStart(380, 50), 400);   // [400, 450) after the busy [300, 400)
  EXPECT_DOUBLE_EQ(engine.EarliestStart(700, 10), 700);   // after everything
}

TEST(EngineTimelineTest, AnEngineSaysWhenItIsNextIdleAndWhenNextBusy) {
  EngineTimeline engine(8);
  engine.Book(100, 200);
  engine.Book(300, 400);
  engine.Book(200, 250);
  EXPECT_DOUBLE_EQ(engine.BusyUntil(0), 0);
  EXPECT_DOUBLE_EQ(engine.BusyUntil(100), 250);  // busy from 100 to 250 without a gap
  EXPECT_DOUBLE_EQ(engine.BusyUntil(260), 260);
  EXPECT_DOUBLE_EQ(engine.IdleUntil(0), 100);
  EXPECT_DOUBLE_EQ(engine.IdleUntil(260), 300);
  EXPECT_DOUBLE_EQ(engine.IdleUntil(400), std::numeric_limits<double>::infinity());
}

TEST(EngineTimelineTest, GapsOlderThanTheLookBackAreNotFilled) {
  EngineTimeline engine(2);
  engine.Book(0, 100);
  engine.Book(200, 300);
  engine.Book(400, 500);  // [0, 100) leaves the window: the engine counts as busy until 100
  EXPECT_DOUBLE_EQ(engine.EarliestStart(0, 50), 100);
  engine.Book(600, 700);  // [200, 300) leaves: busy until 300
  EXPECT_DOUBLE_EQ(engine.EarliestStart(0, 50), 300);
}

TEST(EngineTimelineTest, WithoutLookBackInstructionsRunInOrder) {
  EngineTimeline engine(0);
  engine.Book(0, 100);
  engine.Book(500, 600);
  EXPECT_DOUBLE_EQ(engine.EarliestStart(0, 10), 600);
}

}  // namespace
}  // namespace accelopt::trainium

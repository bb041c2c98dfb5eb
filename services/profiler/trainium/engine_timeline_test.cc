#include "services/profiler/trainium/engine_timeline.h"

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

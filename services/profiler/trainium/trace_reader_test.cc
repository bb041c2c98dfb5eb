#include "services/profiler/trainium/trace_reader.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace accelopt::trainium {
namespace {

using ::testing::HasSubstr;

// The example of TRACE_FORMAT.md, with an unknown key and a comment added.
constexpr char kExample[] =
    "accelopt-trace 1\n"
    "M kernel=kernel.py timing_only=0 instructions=3\n"
    "# a comment\n"
    "A id=0 buf=sbuf bytes_pp=2048 parts=128 site=12\n"
    "I id=0 op=load eng=dma p=128 n=512 dt=4 in=hbm:2048 out=sbuf:2048 wa=0 dir=load bytes=262144 "
    "run=2048 "
    "hbm=io line=14 future_key=7\n"
    "A id=1 buf=sbuf bytes_pp=2048 parts=128 site=15\n"
    "I id=1 op=activation eng=act p=128 n=512 dt=4 in=sbuf:2048 out=sbuf:2048 dep=0 ra=0 wa=1 "
    "line=16\n"
    "F id=0\n"
    "I id=2 op=store eng=dma p=128 n=512 dt=4 in=sbuf:2048 out=hbm:2048 dep=1 ra=1 dir=store "
    "bytes=262144 "
    "run=2048 hbm=io line=17\n"
    "F id=1\n";

TEST(TraceReaderTest, ParsesTheFormatExample) {
  absl::StatusOr<Trace> trace = ParseTrace(kExample);
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_EQ(trace->kernel, "kernel.py");
  EXPECT_FALSE(trace->timing_only);
  ASSERT_EQ(trace->instructions.size(), 3u);
  ASSERT_EQ(trace->allocations.size(), 2u);

  const Instruction& load = trace->instructions[0];
  EXPECT_EQ(load.op, Op::kLoad);
  EXPECT_EQ(load.engine, Engine::kDma);
  EXPECT_EQ(load.partitions, 128);
  EXPECT_EQ(load.free_elems, 512);
  EXPECT_EQ(load.dma_direction, DmaDirection::kLoad);
  EXPECT_EQ(load.dma_bytes, 262144);
  EXPECT_EQ(load.dma_run, 2048);
  EXPECT_EQ(load.hbm_kind, HbmKind::kIo);
  ASSERT_EQ(load.inputs.size(), 1u);
  EXPECT_EQ(load.inputs[0].buffer, Buffer::kHbm);
  EXPECT_EQ(load.inputs[0].bytes_pp, 2048);
  EXPECT_TRUE(load.has_output);
  EXPECT_EQ(load.output.buffer, Buffer::kSbuf);
  ASSERT_EQ(load.write_allocs.size(), 1u);
  EXPECT_EQ(load.write_allocs[0], 0);

  const Instruction& act = trace->instructions[1];
  EXPECT_EQ(act.op, Op::kActivation);
  ASSERT_EQ(act.deps.size(), 1u);
  EXPECT_EQ(act.deps[0], 0);
  EXPECT_EQ(act.line, 16);
  EXPECT_EQ(act.dtype_bytes, 4);
  EXPECT_FALSE(act.cse);

  EXPECT_EQ(trace->allocations[0].site, 12);
  EXPECT_EQ(trace->allocations[0].alloc_at, 0);
  EXPECT_EQ(trace->allocations[0].free_at, 2);  // freed before instruction 2
  EXPECT_EQ(trace->allocations[1].alloc_at, 1);
  EXPECT_EQ(trace->allocations[1].free_at, 3);
}

TEST(TraceReaderTest, HugeDeclaredCountIsAMismatchNotAnAllocation) {
  absl::StatusOr<Trace> trace = ParseTrace("accelopt-trace 1\nM kernel=k.py instructions=3333333333335\n");
  EXPECT_EQ(trace.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(TraceReaderTest, DefaultsAndSparseIds) {
  absl::StatusOr<Trace> trace = ParseTrace(
      "accelopt-trace 1\r\n"
      "M kernel=k.py instructions=2\r\n"
      "I id=5 op=memset eng=auto p=64 n=10 out=sbuf:40\r\n"
      "I id=9 op=tensor_tensor eng=dve p=64 n=10 in=sbuf:40,psum:40 out=sbuf:40 dep=5 cse=1 "
      "acc=1 dyn=1\r\n");
  ASSERT_TRUE(trace.ok()) << trace.status();
  const Instruction& second = trace->instructions[1];
  EXPECT_EQ(second.deps[0], 0);  // id 5 is index 0
  EXPECT_TRUE(second.cse);
  EXPECT_TRUE(second.dynamic_offset);
  EXPECT_FALSE(trace->instructions[0].dynamic_offset);
  EXPECT_TRUE(second.accumulate);
  EXPECT_EQ(second.inputs.size(), 2u);
  EXPECT_EQ(second.inputs[1].buffer, Buffer::kPsum);
  EXPECT_EQ(trace->instructions[0].dtype_bytes, 4);
  EXPECT_EQ(trace->instructions[0].stationary_free, 0);
  EXPECT_TRUE(trace->instructions[0].inputs.empty());
}

TEST(TraceReaderTest, AllocationsNameTheirTensorAndBlock) {
  absl::StatusOr<Trace> trace = ParseTrace(
      "accelopt-trace 1\n"
      "M kernel=k.py instructions=0\n"
      "A id=3 buf=sbuf bytes_pp=64 parts=128 site=7\n"
      "A id=4 buf=sbuf bytes_pp=64 parts=128 site=7 tensor=4 blk=0\n"
      "A id=5 buf=sbuf bytes_pp=64 parts=128 site=7 tensor=4 blk=3\n");
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_EQ(trace->allocations[0].tensor, 3);  // absent: a one-block tensor of its own
  EXPECT_EQ(trace->allocations[0].block, 0);
  EXPECT_EQ(trace->allocations[2].tensor, 4);
  EXPECT_EQ(trace->allocations[2].block, 3);
  EXPECT_FALSE(ParseTrace("accelopt-trace 1\nM kernel=k.py instructions=0\n"
                          "A id=0 buf=sbuf bytes_pp=64 parts=128 blk=-1\n")
                   .ok());
}

TEST(TraceReaderTest, CoresOfATwoCoreLaunch) {
  absl::StatusOr<Trace> trace = ParseTrace(
      "accelopt-trace 1\n"
      "M kernel=k.py instructions=2\n"
      "I id=0 op=memset eng=auto p=64 n=10 out=sbuf:40\n"
      "A id=0 buf=psum bytes_pp=64 parts=128 core=1\n"
      "I id=1 op=memset eng=auto p=64 n=10 out=psum:40 wa=0 core=1\n");
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_EQ(trace->instructions[0].core, 0);
  EXPECT_EQ(trace->instructions[1].core, 1);
  EXPECT_EQ(trace->allocations[0].core, 1);
  EXPECT_EQ(CoreCount(*trace), 2);
  absl::StatusOr<Trace> bad = ParseTrace(
      "accelopt-trace 1\nM kernel=k.py instructions=1\nI id=0 op=memset eng=auto p=64 n=10 out=sbuf:40 core=8\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("core"), std::string::npos) << bad.status();
}

TEST(TraceReaderTest, RedOrASecondOutputOperandIsAReductionIntoTheRegisters) {
  absl::StatusOr<Trace> trace = ParseTrace(
      "accelopt-trace 1\n"
      "M kernel=k.py instructions=3\n"
      "I id=0 op=activation eng=act p=128 n=64 in=sbuf:256 out=sbuf:256,sbuf:4 red=1\n"
      "I id=1 op=activation eng=act p=128 n=64 in=sbuf:256 out=sbuf:256\n"
      "I id=2 op=activation eng=act p=128 n=64 in=sbuf:256 out=sbuf:256 red=1\n");
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_TRUE(trace->instructions[0].reduces);
  EXPECT_EQ(trace->instructions[0].output.bytes_pp, 256);
  EXPECT_FALSE(trace->instructions[1].reduces);
  EXPECT_TRUE(trace->instructions[2].reduces);  // into the registers only (a reduce_cmd without reduce_res)
  absl::StatusOr<Trace> refused =
      ParseTrace("accelopt-trace 1\nM kernel=k.py instructions=1\nI id=0 op=activation eng=act p=128 n=64 red=2\n");
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("key 'red'"));
}

TEST(TraceReaderTest, AluOperatorsOfVectorInstructions) {
  absl::StatusOr<Trace> trace = ParseTrace(
      "accelopt-trace 1\n"
      "M kernel=k.py instructions=4\n"
      "I id=0 op=tensor_tensor eng=auto p=128 n=64 in=sbuf:256,sbuf:256 out=sbuf:256 alu=multiply\n"
      "I id=1 op=tensor_tensor eng=auto p=128 n=64 in=sbuf:256,sbuf:256 out=sbuf:256 alu=subtract,maximum\n"
      "I id=2 op=tensor_tensor eng=auto p=128 n=64 in=sbuf:256,sbuf:256 out=sbuf:256\n"
      "I id=3 op=tensor_reduce eng=auto p=128 n=64 in=sbuf:256 out=sbuf:4 alu=divide\n");
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_THAT(trace->instructions[0].alu, ::testing::ElementsAre(Alu::kMultiply));
  EXPECT_THAT(trace->instructions[1].alu, ::testing::ElementsAre(Alu::kSubtract, Alu::kMaximum));
  EXPECT_TRUE(trace->instructions[2].alu.empty());
  EXPECT_THAT(trace->instructions[3].alu, ::testing::ElementsAre(Alu::kOther));
  for (const char* bad : {"alu=add,add,add", "alu=Add", "alu=", "alu=add,"}) {
    absl::StatusOr<Trace> refused = ParseTrace(absl::StrCat(
        "accelopt-trace 1\nM kernel=k.py instructions=1\nI id=0 op=tensor_tensor eng=auto p=128 n=64 ", bad, "\n"));
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_THAT(std::string(refused.status().message()), HasSubstr("key 'alu'")) << bad;
  }
}

TEST(TraceReaderTest, SideOutputsFollowTheMainOutput) {
  absl::StatusOr<Trace> trace = ParseTrace(
      "accelopt-trace 1\n"
      "M kernel=k.py instructions=1\n"
      "I id=0 op=activation eng=act p=128 n=512 in=sbuf:2048 out=sbuf:2048,sbuf:4\n");
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_TRUE(trace->instructions[0].has_output);
  EXPECT_EQ(trace->instructions[0].output.bytes_pp, 2048);
}

// Replaces the first occurrence of `from` in the example and expects an error mentioning `line` and
// `what`.
void ExpectError(const std::string& from, const std::string& to, int line, const std::string& what) {
  std::string text = kExample;
  const size_t pos = text.find(from);
  ASSERT_NE(pos, std::string::npos) << from;
  text.replace(pos, from.size(), to);
  absl::StatusOr<Trace> trace = ParseTrace(text);
  ASSERT_FALSE(trace.ok()) << "accepted: " << to;
  EXPECT_EQ(trace.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(trace.status().message()), HasSubstr("line " + std::to_string(line) + ":"));
  EXPECT_THAT(std::string(trace.status().message()), HasSubstr(what));
}

TEST(TraceReaderTest, RejectsMalformedRecordsWithLineNumbers) {
  ExpectError("accelopt-trace 1", "accelopt-trace 2", 1, "unsupported trace version '2'");
  ExpectError("accelopt-trace 1", "hello", 1, "missing header");
  ExpectError("M kernel=kernel.py", "X kernel=kernel.py", 2, "expected the M record");
  ExpectError("op=activation", "op=fly", 7, "unknown op 'fly'");
  ExpectError("eng=act", "eng=gpu", 7, "unknown engine 'gpu'");
  ExpectError("p=128 n=512 dt=4 in=sbuf", "p=abc n=512 dt=4 in=sbuf", 7, "key 'p': 'abc' is not an integer");
  ExpectError("p=128 n=512 dt=4 in=sbuf", "p=129 n=512 dt=4 in=sbuf", 7, "outside 1..128");
  ExpectError("I id=1 op=activation eng=act p=128 n=512", "I id=1 op=activation eng=act p=128", 7,
              "missing required key 'n'");
  ExpectError("dep=0 ra=0", "dep=2 ra=0", 7, "instruction 2 is not an earlier instruction");
  ExpectError("dep=0 ra=0", "dep=0 ra=4", 7, "allocation 4 is not live");
  ExpectError("dep=1 ra=1", "dep=1 ra=0", 9, "allocation 0 is not live");  // used after its F
  ExpectError("I id=2", "I id=1", 9, "not greater than the previous id");
  ExpectError("in=hbm:2048", "in=dram:2048", 5, "unknown buffer 'dram'");
  ExpectError("in=hbm:2048", "in=hbm2048", 5, "is not <buf>:<bytes_pp>");
  ExpectError("dir=load", "dir=sideways", 5, "unknown direction");
  ExpectError(" run=2048 hbm=io line=14", " hbm=io line=14", 5, "missing required key 'run'");
}

TEST(TraceReaderTest, RejectsStructuralErrors) {
  ExpectError("F id=0", "F id=7", 8, "F of allocation 7");
  ExpectError("A id=1 buf=sbuf", "A id=0 buf=sbuf", 6, "allocation 0 is already live");
  ExpectError("A id=1 buf=sbuf", "A id=1 buf=hbm", 6, "key 'buf'");
  ExpectError("I id=0 op=load", "Q id=0 op=load", 5, "unknown record kind 'Q'");
  ExpectError("line=16", "line16", 7, "token 'line16' is not key=value");
  ExpectError("instructions=3", "instructions=3\nM kernel=x instructions=3", 3, "second M record");

  std::string truncated = kExample;
  truncated.resize(truncated.find("I id=2"));
  absl::StatusOr<Trace> trace = ParseTrace(truncated);
  ASSERT_FALSE(trace.ok());
  EXPECT_THAT(std::string(trace.status().message()), HasSubstr("2 I records but M declares instructions=3"));
  EXPECT_FALSE(ParseTrace("").ok());
}

TEST(TraceReaderTest, ReadTraceFileReportsMissingFile) {
  absl::StatusOr<Trace> trace = ReadTraceFile("/nonexistent/dir/x.trace");
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.status().code(), absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace accelopt::trainium

// eppsim-run end to end under `mpirun -np 2`: the run driver (run_driver.cpp:
// eppsim-run with the compute test double and real MPI) on small Schedules,
// the merged Trace checked for sanity; faults; and eppsim-bench comm and interference.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <google/protobuf/struct.pb.h>

#include "tests/runtime/hand_simulation.h"
#include "tests/runtime/runtime_fixture.h"
#include "proto/bench.pb.h"
#include "schedule/trace_file.h"
#include "base/proto_io.h"
#include "schedule/trace_events.h"

namespace eppsim::runtime {
namespace {

namespace fs = std::filesystem;

struct Result {
  int status = -1;
  std::string output;  // stdout and stderr
  double wall_s = 0.0;
};

// Runs `program args` on `ranks` MPI processes (as root too), in `dir`. In
// sanitizer builds the ranks run without LeakSanitizer: Open MPI never frees
// some of its own allocations, made in plugins it has unloaded by exit (so no
// suppression can name them); AddressSanitizer's other checks and UBSan stay on.
Result mpirun(int ranks, const std::string& program, const std::string& args, const fs::path& dir) {
  const fs::path log = dir / "output.txt";
  const std::string command = fmt::format(
      "cd '{}' && '{}' --allow-run-as-root --oversubscribe --bind-to none -x ASAN_OPTIONS=detect_leaks=0 -np {} '{}' {} "
      "> '{}' 2>&1",
      dir.string(), EPPSIM_MPIEXEC, ranks, program, args, log.string());
  const auto start = std::chrono::steady_clock::now();
  const int raw = std::system(command.c_str());
  Result r;
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.output = read_file(log);
  return r;
}

class EppsimRun : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / fmt::format("eppsim_run_test_{}_{}", info->name(), ::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }
  // Writes the schedule, runs the driver on it, returns the result.
  Result run(const proto::Schedule& schedule, const std::string& options, int ranks = 2) {
    write_message(schedule, dir_ / "schedule.pb");
    return mpirun(ranks, EPPSIM_RUN_DRIVER, "schedule.pb --backend cpu -o trace.pb " + options, dir_);
  }
  proto::Trace trace() { return read_trace(dir_ / "trace.pb"); }
  fs::path dir_;
};

TEST_F(EppsimRun, PipelineOnTwoRanks) {
  const auto schedule = testing::pipeline_schedule();
  const Result r = run(schedule, "--warmup-steps 1 --steps 3 --timeout 30");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("1 warm-up + 3 measured steps"), std::string::npos) << r.output;
  const proto::Trace t = trace();
  EXPECT_EQ(t.engine(), "cpu");
  testing::expect_sane_trace(schedule, t);
  EXPECT_FALSE(t.memory().empty());
  // Stage 1's first forward waits for stage 0's: the pipeline's shape in time.
  std::int64_t stage0_forward_end = 0, stage1_forward_start = 0;
  for (const OpEventRef e : events_of(t)) {
    if (e.rank() == 0 && e.op() == 1) stage0_forward_end = e.end_ns();
    if (e.rank() == 1 && e.op() == 3) stage1_forward_start = e.start_ns();
  }
  EXPECT_GE(stage1_forward_start + 2'000'000, stage0_forward_end);
  std::cerr << "pipeline, 2 ranks: " << r.wall_s << " s wall for 4 steps; median step " << t.step_time_ns() * 1e-6
            << " ms\n";
}

TEST_F(EppsimRun, AllReduceOnTwoRanks) {
  const auto schedule = testing::allreduce_schedule();
  const Result r = run(schedule, "--warmup-steps 1 --steps 2 --timeout 30");
  ASSERT_EQ(r.status, 0) << r.output;
  testing::expect_sane_trace(schedule, trace());
  std::cerr << "all-reduce, 2 ranks: " << r.wall_s << " s wall for 3 steps; median step " << trace().step_time_ns() * 1e-6
            << " ms\n";
}

TEST_F(EppsimRun, WritesTheTraceInTheFormatOfItsExtension) {
  write_message(testing::allreduce_schedule(), dir_ / "schedule.textproto");
  const Result r = mpirun(2, EPPSIM_RUN_DRIVER, "schedule.textproto --backend cpu -o out/trace.json --steps 1", dir_);
  ASSERT_EQ(r.status, 0) << r.output;
  proto::Trace t;
  read_message(dir_ / "out" / "trace.json", &t);
  EXPECT_EQ(t.num_ranks(), 2u);
}

// The real command, with the kernels of runtime/cpu/, on the same Schedules.
TEST_F(EppsimRun, TheRealCommandRunsThePipelineAndTheAllReduceWithKernels) {
  for (const auto& schedule : {testing::pipeline_schedule(), testing::allreduce_schedule()}) {
    write_message(schedule, dir_ / "schedule.pb");
    const Result r = mpirun(2, EPPSIM_RUN, "schedule.pb --backend cpu -o trace.pb --steps 2 --timeout 60", dir_);
    ASSERT_EQ(r.status, 0) << r.output;
    testing::expect_sane_trace(schedule, trace());
  }
}

// The memory guard: the kernels' buffers of each rank, times the ranks on the
// machine, against --max-memory, before the first op.
TEST_F(EppsimRun, KernelsPastTheMemoryLimitAreRefusedBeforeTheFirstOp) {
  write_message(testing::pipeline_schedule(), dir_ / "schedule.pb");
  const Result r = mpirun(2, EPPSIM_RUN, "schedule.pb --backend cpu -o trace.pb --steps 1 --max-memory 300MiB", dir_);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("the kernels' memory"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("times the 2 ranks on this machine needs about"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("past the memory limit of 300 MiB (--max-memory)"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir_ / "trace.pb"));
}

// Issue 11, item 8: a peer that never answers ends the run within the timeout,
// naming the rank and the op.
TEST_F(EppsimRun, ARecvWhoseSendNeverComesFailsNamingRankAndOp) {
  const Result r = run(testing::lonely_recv_schedule(), "--warmup-steps 0 --steps 1 --timeout 1");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("rank 1: error: rank 1 op 0 (RECV of 4 KiB from rank 0, tag 7): its peers did not answer "
                          "within the timeout of 1 s"),
            std::string::npos)
      << r.output;
  EXPECT_LT(r.wall_s, 10.0);
}

// When rank 0 is the one whose peer never answers, it keeps the trace of what
// completed on it.
TEST_F(EppsimRun, RankZeroKeepsThePartialTraceOfAFailedRun) {
  testing::HandSchedule h(2);
  testing::set_tiny_model(h.schedule());
  const auto f = testing::layer(h, 0, 0, proto::FORWARD, 0, 0);
  h.recv(0, 1, 1, 64, 3, {f});
  testing::layer(h, 1, 0, proto::FORWARD, 1, 0);
  const Result r = run(h.schedule(), "--warmup-steps 0 --steps 1 --timeout 1");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("rank 0: error: rank 0 op 1 (RECV of 64 B from rank 1, tag 3)"), std::string::npos) << r.output;
  ASSERT_TRUE(fs::exists(dir_ / "trace.pb")) << r.output;
  const proto::Trace t = trace();
  ASSERT_EQ(events_of(t).size(), 1);
  EXPECT_EQ(events_of(t)[0].rank(), 0u);
  EXPECT_EQ(events_of(t)[0].op(), 0u);
}

// Issue 11, item 8 and issue 14, item 6: a rank that dies ends the whole run
// within a bounded time, and the messages name the rank and the op. Rank 1 of
// the pipeline dies as its first forward starts (op 3), while rank 0 waits on
// its gradients (ops 5 and 6).
void expect_rank_zero_ended_waiting_on_rank_one(const std::string& output) {
  const auto at = output.find(
      "rank 0: error: terminated by signal 15 (SIGTERM; mpirun sends it to every rank when one dies or the job is "
      "cancelled) while waiting on ");
  ASSERT_NE(at, std::string::npos) << output;
  const std::string line = output.substr(at, output.find('\n', at) - at);
  EXPECT_NE(line.find("rank 0 op 5 (RECV of 256 KiB from rank 1, tag 100)"), std::string::npos) << output;
}

TEST_F(EppsimRun, ARankKilledMidStepEndsTheRunNamingRankAndOp) {
  const Result r = run(testing::pipeline_schedule(), "--warmup-steps 1 --steps 2 --timeout 60 --inject-fault kill:1:3");
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("rank 1: injected fault: kill as rank 1 op 3 (COMPUTE"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("rank 1 with PID"), std::string::npos) << r.output;  // mpirun names the dead rank
  expect_rank_zero_ended_waiting_on_rank_one(r.output);
  EXPECT_LT(r.wall_s, 20.0);  // far below the 60 s timeout: the kill, not the timeout, ended it
  ASSERT_TRUE(fs::exists(dir_ / "trace.pb")) << r.output;
  EXPECT_GT(trace().op_events().rank_size(), 0);  // rank 0's ops that completed before
}

TEST_F(EppsimRun, ARankThatCrashesNamesTheOpItWasRunning) {
  const Result r = run(testing::pipeline_schedule(), "--warmup-steps 0 --steps 1 --timeout 60 --inject-fault crash:1:3");
  EXPECT_NE(r.status, 0) << r.output;
  const auto at = r.output.find("rank 1: error: died of signal 11 (SIGSEGV) while running: ");
  ASSERT_NE(at, std::string::npos) << r.output;
  EXPECT_NE(r.output.substr(at, r.output.find('\n', at) - at).find("rank 1 op 3 (COMPUTE forward"), std::string::npos)
      << r.output;
  expect_rank_zero_ended_waiting_on_rank_one(r.output);
  EXPECT_LT(r.wall_s, 20.0);
}

TEST_F(EppsimRun, ARankThatStallsEndsTheRunAfterTheTimeout) {
  const Result r = run(testing::pipeline_schedule(), "--warmup-steps 0 --steps 1 --timeout 2 --inject-fault stall:1:3");
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("rank 0: error: rank 0 op 5 (RECV of 256 KiB from rank 1, tag 100): its peers did not answer "
                          "within the timeout of 2 s"),
            std::string::npos)
      << r.output;
  EXPECT_LT(r.wall_s, 20.0);
}

TEST_F(EppsimRun, BadInjectedFaultsAreBadInput) {
  for (const auto& [fault, rule] : std::vector<std::pair<std::string, std::string>>{
           {"boom:1:3", "KIND must be kill, crash or stall"},
           {"kill:1", "must be KIND:RANK:OP"},
           {"kill:x:3", "RANK and OP must be non-negative integers"},
           {"kill:1:3z", "RANK and OP must be non-negative integers"},
           {"kill:1:99", "there is no rank 1 op 99"},
           {"kill:1:0", "rank 1 op 0 is a MEMORY op; name a COMPUTE, SEND, RECV or COLLECTIVE op"}}) {
    const Result r = run(testing::pipeline_schedule(), "--inject-fault " + fault);
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find(rule), std::string::npos) << fault << ": " << r.output;
  }
}

TEST_F(EppsimRun, WrongRankCountIsBadInput) {
  const Result r = run(testing::pipeline_schedule(), "", 1);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("schedule.pb: num_ranks is 2 but mpirun started 1 processes"), std::string::npos) << r.output;
}

// Validated before the groups and kernel plans read it: a shared compute the
// schedule does not list is a message, on every rank.
TEST_F(EppsimRun, AnInvalidScheduleIsBadInput) {
  proto::Schedule schedule = testing::pipeline_schedule();
  ASSERT_TRUE(ops_of(schedule, 1)[3].is_compute());  // stage 1's first forward
  schedule.mutable_programs(1)->set_target(3, 99);
  const Result r = run(schedule, "");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("schedule.pb: schedule: rank 1 op 3: shared_compute: index 99 out of range"), std::string::npos)
      << r.output;
}

TEST_F(EppsimRun, BadOptionsAreBadInput) {
  const Result r = run(testing::pipeline_schedule(), "--steps 0");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--steps: must be in [1, 1000], got 0"), std::string::npos) << r.output;
}

// Hybrid emulation (issue 44): some ranks real, the others timed by a
// calibrated simulation of the whole Schedule (tests/runtime/hand_simulation.h:
// compute 2 ms, as the driver's sleeping queue runs a layer of the tiny model).
class HybridRun : public EppsimRun {
 protected:
  Result run_hybrid(const proto::Schedule& schedule, const proto::Trace& simulated, const std::string& ranks, int processes,
                    const std::string& options = "--warmup-steps 1 --steps 3 --timeout 30") {
    write_message(schedule, dir_ / "schedule.pb");
    write_trace_file(simulated, dir_ / "sim.pb");
    return mpirun(processes, EPPSIM_RUN_DRIVER,
                  fmt::format("schedule.pb --backend cpu -o trace.pb --ranks {} --virtual sim.pb {}", ranks, options), dir_);
  }
  static std::map<std::pair<std::uint32_t, std::uint32_t>, OpEventRef> by_op(const proto::Trace& t) {
    std::map<std::pair<std::uint32_t, std::uint32_t>, OpEventRef> events;
    for (const OpEventRef e : events_of(t)) events.insert_or_assign({e.rank(), e.op()}, e);
    return events;
  }
};

TEST_F(HybridRun, OneRealStageOfAPipelineMeetsTheVirtualOneAtTheSimulatedTimes) {
  const auto schedule = testing::pipeline_schedule();
  const proto::Trace simulated = testing::simulate(schedule, 2e-3);
  const Result r = run_hybrid(schedule, simulated, "0", 1);
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("1 real rank (0) of 2, the others virtual (sim.pb, open loop)"), std::string::npos) << r.output;
  const proto::Trace t = trace();
  EXPECT_THAT(t.real_ranks(), ::testing::ElementsAre(0));
  testing::expect_sane_trace(schedule, t);
  const auto measured = by_op(t), simulated_events = by_op(simulated);
  const std::int64_t transfer_ns = 2'000'000;
  for (const OpView op : ops_of(schedule, 0)) {
    if (!op.is_send() && !op.is_recv()) continue;
    const OpEventRef e = measured.at({0, op.index()});
    EXPECT_GE(e.end_ns() - e.start_ns(), transfer_ns - 1000) << "op " << op.index();  // the simulated transfer
  }
  // Stage 0's first gradient (op 5, RECV tag 100) comes when the virtual stage
  // sent it in the simulation: its end, a transfer after that send's readiness.
  const std::int64_t virtual_send_ready_ns = simulated_events.at({1, 4}).end_ns();  // rank 1's first backward
  EXPECT_GE(measured.at({0, 5}).end_ns() + 1'000'000, virtual_send_ready_ns + transfer_ns);
  // The virtual stage's events are the simulation's, on the same clock.
  for (const OpView op : ops_of(schedule, 1)) {
    EXPECT_EQ(measured.at({1, op.index()}).end_ns() - measured.at({1, op.index()}).start_ns(),
              simulated_events.at({1, op.index()}).end_ns() - simulated_events.at({1, op.index()}).start_ns());
  }
  // Same compute times on both sides: the step comes out near the simulated one.
  EXPECT_NEAR(static_cast<double>(t.step_time_ns()), static_cast<double>(simulated.step_time_ns()),
              0.5 * static_cast<double>(simulated.step_time_ns()));
}

TEST_F(HybridRun, TwoRealMembersOfACollectiveMeetBeforeItsVirtualMemberIsTimed) {
  const auto schedule = testing::three_rank_allreduce();
  const proto::Trace simulated = testing::simulate(schedule, 2e-3);  // rank 2 ready at 4 ms
  const Result r = run_hybrid(schedule, simulated, "0-1", 2);
  ASSERT_EQ(r.status, 0) << r.output;
  const proto::Trace t = trace();
  EXPECT_THAT(t.real_ranks(), ::testing::ElementsAre(0, 1));
  testing::expect_sane_trace(schedule, t);
  const auto measured = by_op(t);
  for (std::uint32_t rank : {0u, 1u}) {
    // Ready at 4 ms (the virtual member), then the 3 ms collective; 1 ms of slack for the clocks.
    EXPECT_GE(measured.at({rank, 1}).end_ns(), 7'000'000 - 1'000'000) << "rank " << rank;
  }
}

// Closed loop: the virtual stage is re-timed from the real one, whose layers
// (the driver's 2 ms and more) take longer than the simulation's 1 ms.
TEST_F(HybridRun, ClosedLoopRetimesTheVirtualStageFromTheRealOne) {
  const auto schedule = testing::pipeline_schedule();
  const proto::Trace simulated = testing::simulate(schedule, 1e-3);
  const Result r = run_hybrid(schedule, simulated, "0", 1, "--warmup-steps 1 --steps 3 --timeout 30 --closed-loop");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("closed loop"), std::string::npos) << r.output;
  const proto::Trace t = trace();
  testing::expect_sane_trace(schedule, t);
  const auto events = by_op(t), before = by_op(simulated);
  // Stage 1's activations arrive when stage 0's send really ended, and its forward follows.
  EXPECT_EQ(events.at({1, 1}).end_ns(), events.at({0, 2}).end_ns());
  EXPECT_GE(events.at({1, 3}).start_ns(), events.at({0, 2}).end_ns());
  EXPECT_GT(events.at({1, 3}).start_ns(), before.at({1, 3}).start_ns());
  EXPECT_GT(t.step_time_ns(), simulated.step_time_ns());
}

// A real rank that dies is reported as in a run of every rank, by the Schedule's rank.
TEST_F(HybridRun, ARealRankThatCrashesIsNamedByItsScheduleRank) {
  const auto schedule = testing::three_rank_allreduce();
  const Result r = run_hybrid(schedule, testing::simulate(schedule, 2e-3), "1-2", 2,
                              "--warmup-steps 0 --steps 1 --timeout 60 --inject-fault crash:2:0");
  EXPECT_NE(r.status, 0) << r.output;
  const auto at = r.output.find("rank 2: error: died of signal 11 (SIGSEGV) while running: ");
  ASSERT_NE(at, std::string::npos) << r.output;
  EXPECT_NE(r.output.substr(at, r.output.find('\n', at) - at).find("rank 2 op 0 (COMPUTE forward"), std::string::npos)
      << r.output;
  EXPECT_LT(r.wall_s, 20.0);
}

TEST_F(HybridRun, BadRanksAndSimulationsAreBadInput) {
  const auto schedule = testing::three_rank_allreduce();
  const proto::Trace simulated = testing::simulate(schedule, 2e-3);
  struct Case {
    std::string ranks;
    int processes;
    std::string options, rule;
  };
  for (const auto& c : std::vector<Case>{
           {"0,5", 2, "", "eppsim-run: error: --ranks 0,5: there are ranks 0 to 2"},
           {"0-1", 1, "", "eppsim-run: error: --ranks 0-1: names 2 ranks but mpirun started 1 processes (-np 2)"},
           {"2", 1, "--inject-fault kill:0:1", "--inject-fault: rank 0 is virtual (--ranks 2)"}}) {
    const Result r = run_hybrid(schedule, simulated, c.ranks, c.processes, c.options);
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find(c.rule), std::string::npos) << c.ranks << ": " << r.output;
  }
  proto::Trace some_ranks = simulated;  // rank 2's events left out
  some_ranks.clear_op_events();
  for (const OpEventRef e : events_of(simulated)) {
    if (e.rank() != 2) add_event(*some_ranks.mutable_op_events(), fields_of(e));
  }
  some_ranks.add_traced_ranks(0);
  some_ranks.add_traced_ranks(1);
  Result closed = run_hybrid(schedule, some_ranks, "0", 1, "--closed-loop");
  EXPECT_EQ(closed.status, 2) << closed.output;
  EXPECT_NE(closed.output.find("sim.pb: traced_ranks: lists the events of 2 of 3 ranks; a closed loop"), std::string::npos)
      << closed.output;
  proto::Trace uncalibrated = simulated;
  uncalibrated.clear_calibration();
  Result r = run_hybrid(schedule, uncalibrated, "0", 1);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("sim.pb: calibration: the analytic trace was not priced by a calibration"), std::string::npos)
      << r.output;
  r = mpirun(1, EPPSIM_RUN_DRIVER, "schedule.pb --backend cpu -o trace.pb --ranks 0", dir_);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--ranks 0: the other ranks are virtual and need the calibrated simulation that times them: "
                          "--virtual SIM_TRACE"),
            std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(dir_ / "trace.pb"));
}

TEST_F(EppsimRun, CommBenchChecksAndTimesEveryOp) {
  const Result r = mpirun(2, EPPSIM_BENCH, "comm --backend cpu --out bench.json --bytes 1KiB,1MiB --iterations 3 --warmup 1",
                          dir_);
  ASSERT_EQ(r.status, 0) << r.output;
  google::protobuf::Struct bench;
  from_json(read_file(dir_ / "bench.json"), &bench, "bench.json");
  const auto& f = bench.fields();
  EXPECT_EQ(f.at("eppsim_bench").number_value(), 1);
  EXPECT_EQ(f.at("kind").string_value(), "comm");
  EXPECT_EQ(f.at("backend").string_value(), "cpu");
  EXPECT_EQ(f.at("ranks").number_value(), 2);
  const auto& rows = f.at("results").list_value().values();
  ASSERT_EQ(rows.size(), 10);  // 5 ops x 2 sizes, group size 2
  for (const auto& v : rows) {
    const auto& row = v.struct_value().fields();
    EXPECT_TRUE(row.at("correct").bool_value()) << row.at("op").string_value();
    EXPECT_EQ(row.at("group_size").number_value(), 2);
    EXPECT_FALSE(row.at("crosses_nodes").bool_value());
    EXPECT_EQ(row.at("iterations").number_value(), 3);
    const double time = row.at("time_s").number_value();
    ASSERT_GT(time, 0.0);
    const std::string op = row.at("op").string_value();
    const double bytes = row.at("bytes").number_value();
    const double algbw = (op == "all-gather" ? 2 * bytes : bytes) / time;
    EXPECT_NEAR(row.at("algbw_Bps").number_value(), algbw, algbw * 1e-9);
    const double factor = op == "all-reduce" ? 1.0 : op == "send-recv" ? 1.0 : 0.5;  // 2(n-1)/n, 1, (n-1)/n at n = 2
    EXPECT_NEAR(row.at("busbw_Bps").number_value(), algbw * factor, algbw * 1e-9);
  }
}

// A tiny model (a layer forward of 64 tokens takes about a millisecond), two
// ops and two sizes: every row well-formed (bench.proto's keys only, read
// strictly), checked correct, its factors the ratios of its positive times.
TEST_F(EppsimRun, InterferenceBenchTimesComputeAndCommAloneAndBeside) {
  write_file_atomically(dir_ / "tiny.textproto", R"(name: "interference-tiny"
model { layers: 2 hidden_size: 64 attention_heads: 4 kv_heads: 2 ffn_hidden_size: 128 vocab_size: 512 ffn_kind: SWIGLU }
cluster { nodes: 1 gpus_per_node: 2 gpu { preset: "A100-80GB" } intra_node { bandwidth: "300GB/s" latency: "2us" }
          inter_node { bandwidth: "200Gbps" latency: "5us" } }
workload { lengths { distribution: "wikipedia" } global_batch: 4 max_length: 64 over_max_length: TRUNCATE }
plan { strategy: "packed-1f1b" packed_1f1b { pipeline_stages: 2 micro_batch_tokens: 64 } }
)");
  const std::string common = "interference --scenario tiny.textproto --out bench.json --ops send-recv,all-reduce";
  const Result r = mpirun(2, EPPSIM_BENCH, common + " --backend cpu --bytes 4KiB,256KiB --repeats 2", dir_);
  ASSERT_EQ(r.status, 0) << r.output;
  proto::BenchFile bench;
  from_json(read_file(dir_ / "bench.json"), &bench, "bench.json");
  EXPECT_EQ(bench.kind(), "interference");
  EXPECT_EQ(bench.ranks(), 2u);
  EXPECT_EQ(bench.model().hidden_size(), 64u);
  ASSERT_EQ(bench.results_size(), 4);  // 2 ops x 2 sizes
  for (const auto& row : bench.results()) {
    SCOPED_TRACE(fmt::format("{} {} B", row.op(), row.bytes()));
    EXPECT_TRUE(row.correct());
    EXPECT_EQ(row.group_size(), 2u);
    EXPECT_FALSE(row.crosses_nodes());
    EXPECT_EQ(row.tokens(), 64u);
    EXPECT_EQ(row.repeats(), 2u);
    EXPECT_GE(row.iterations(), 1u);
    for (double t : {row.compute_alone_s(), row.compute_beside_s(), row.comm_alone_s(), row.comm_beside_s()}) {
      EXPECT_GT(t, 0.0);
      EXPECT_LT(t, 1.0);
    }
    EXPECT_DOUBLE_EQ(row.compute_slowdown(), row.compute_beside_s() / row.compute_alone_s());
    EXPECT_DOUBLE_EQ(row.comm_slowdown(), row.comm_beside_s() / row.comm_alone_s());
  }
  EXPECT_EQ(bench.results(0).op(), "send-recv");
  EXPECT_EQ(bench.results(2).op(), "all-reduce");

  // --backend cuda fails cleanly where it cannot run: bad input in a build without CUDA/NCCL, an
  // error naming the missing GPU in a CUDA build on a machine without one (not tried where there is one).
  if (!EPPSIM_BENCH_WITH_CUDA) {
    const Result cuda = mpirun(2, EPPSIM_BENCH, common + " --backend cuda", dir_);
    EXPECT_EQ(cuda.status, 2) << cuda.output;
    EXPECT_NE(cuda.output.find("--backend cuda: this build has no CUDA/NCCL"), std::string::npos) << cuda.output;
  } else if (!fs::exists("/dev/nvidia0")) {
    const Result cuda = mpirun(2, EPPSIM_BENCH, common + " --backend cuda", dir_);
    EXPECT_NE(cuda.status, 0) << cuda.output;
    // Every rank fails alike; the first to fail prints its error and aborts the others.
    EXPECT_NE(cuda.output.find("error: the cuda backend needs a GPU"), std::string::npos) << cuda.output;
  }
  const Result op = mpirun(2, EPPSIM_BENCH, common + ",allreduce --backend cpu", dir_);
  EXPECT_EQ(op.status, 2) << op.output;
  EXPECT_NE(op.output.find("--ops: unknown op 'allreduce' (known: send-recv, all-reduce"), std::string::npos) << op.output;
}

}  // namespace
}  // namespace eppsim::runtime

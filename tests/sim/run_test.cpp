// The main flow as a library (sim/run.h): what each step needs of the scenario;
// the run directory: report.json byte-deterministic, timings.json and
// scenario.textproto beside it, and the human summary's plan lines.
#include "tests/sim/test_scenarios.h"
#include "sim/run.h"
#include "schedule/identical_replicas.h"
#include "schedule/trace_events.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "base/log.h"
#include "sim/plan/planner.h"
#include "base/proto_io.h"
#include "scenario/scenario.h"

namespace eppsim {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class RunDirectory : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("eppsim_run_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(RunDirectory, HoldsTimingsAndTheEffectiveScenario) {
  const std::vector<std::string> overrides = {"workload.global_batch=64", "plan.packed_1f1b.pipeline_stages=2"};
  const auto scenario = testing::load_quickstart(overrides);
  const auto result = run_scenario(scenario);
  write_run_directory(result, dir_ / "a");
  for (const char* file : {"report.json", "timings.json", "scenario.textproto", "trace.pb", "trace.json", "ops.csv",
                           "memory.csv", "ranks.csv", "lengths.csv", "schedule.pb"}) {
    EXPECT_TRUE(fs::is_regular_file(dir_ / "a" / file)) << file;
  }

  // lengths.csv: the sampled batch, one row per sequence.
  ASSERT_EQ(result.lengths.size(), 64u);
  const auto lengths = read_file(dir_ / "a" / "lengths.csv");
  EXPECT_THAT(lengths, ::testing::StartsWith(fmt::format("sequence,length_tokens\n0,{}\n1,{}\n", result.lengths[0],
                                                         result.lengths[1])));
  EXPECT_EQ(std::count(lengths.begin(), lengths.end(), '\n'), 65);

  // timings.json: strict JSON of proto::Timings, the result's times.
  proto::Timings timings;
  read_message(dir_ / "a" / "timings.json", &timings);
  EXPECT_EQ(timings.plan_time_s(), result.plan_time_s);
  EXPECT_EQ(timings.simulation_time_s(), result.simulation_time_s);
  EXPECT_GT(timings.write_time_s(), 0.0);
  EXPECT_GT(timings.peak_rss_bytes(), 1e6);  // a process holds at least a megabyte
  EXPECT_EQ(timings.peak_rss_bytes(), static_cast<double>(static_cast<std::uint64_t>(timings.peak_rss_bytes())));
  EXPECT_THAT(read_file(dir_ / "a" / "timings.json"), HasSubstr("\"peak_rss_bytes\": "));

  // scenario.textproto re-parses to the effective scenario, overrides applied.
  const auto text = read_file(dir_ / "a" / "scenario.textproto");
  const proto::Scenario back = parse_scenario_text(text, "scenario.textproto");
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(back, scenario.proto));
  EXPECT_EQ(back.workload().global_batch(), 64u);
  EXPECT_EQ(back.plan().packed_1f1b().pipeline_stages(), 2u);
  EXPECT_EQ(text, to_text(scenario.proto));

  // Running the written scenario reproduces the report byte for byte.
  const auto rerun = run_scenario(load_scenario(dir_ / "a" / "scenario.textproto"));
  write_run_directory(rerun, dir_ / "b");
  EXPECT_EQ(read_file(dir_ / "a" / "report.json"), read_file(dir_ / "b" / "report.json"));
  EXPECT_EQ(read_file(dir_ / "a" / "schedule.pb"), read_file(dir_ / "b" / "schedule.pb"));
  EXPECT_EQ(read_file(dir_ / "a" / "scenario.textproto"), read_file(dir_ / "b" / "scenario.textproto"));
}

TEST_F(RunDirectory, ReportIsByteIdenticalAcrossRunsAndHoldsThePlan) {
  const auto scenario = testing::load_quickstart({"workload.global_batch=64"});
  write_run_directory(run_scenario(scenario), dir_ / "a");
  write_run_directory(run_scenario(scenario), dir_ / "b");
  const auto report = read_file(dir_ / "a" / "report.json");
  EXPECT_EQ(report, read_file(dir_ / "b" / "report.json"));
  EXPECT_THAT(report, HasSubstr("\"reproduces\": \"Megatron-LM\""));
  proto::Report parsed;
  read_message(dir_ / "a" / "report.json", &parsed);
  EXPECT_EQ(parsed.plan().pipeline_stages(), 4u);
  EXPECT_EQ(parsed.plan().data_parallel(), 4u);
  EXPECT_EQ(parsed.plan().ranks(), 16u);
}

TEST_F(RunDirectory, OutputsChooseTheHeavyFilesAndRemoveStaleOnes) {
  const auto result = run_scenario(testing::load_quickstart({"workload.global_batch=64"}));
  write_run_directory(result, dir_ / "a");
  EXPECT_TRUE(fs::is_regular_file(dir_ / "a" / "trace.json"));
  write_run_directory(result, dir_ / "a", parse_run_outputs("csv,trace"));
  for (const char* file : {"report.json", "timings.json", "scenario.textproto", "ranks.csv", "trace.pb", "ops.csv",
                           "memory.csv"}) {
    EXPECT_TRUE(fs::is_regular_file(dir_ / "a" / file)) << file;
  }
  // Left from the first run, not selected by the second: removed, so the
  // directory holds one run's files.
  EXPECT_FALSE(fs::exists(dir_ / "a" / "trace.json"));
  EXPECT_FALSE(fs::exists(dir_ / "a" / "schedule.pb"));
  write_run_directory(result, dir_ / "a", parse_run_outputs("none"));
  EXPECT_FALSE(fs::exists(dir_ / "a" / "trace.pb"));
  EXPECT_TRUE(fs::is_regular_file(dir_ / "a" / "report.json"));
}

// Past kMaxChromeTraceEvents op events the viewer trace is Perfetto's format.
TEST_F(RunDirectory, ALargeTracesViewerTraceIsPerfettosFormat) {
  RunResult result = run_scenario(testing::load_quickstart({"workload.global_batch=64"}));
  EXPECT_EQ(viewer_trace_file(result.trace), "trace.json");
  const OpEventFields last = fields_of(events_of(result.trace)[events_of(result.trace).size() - 1]);
  while (events_of(result.trace).size() <= kMaxChromeTraceEvents) add_event(*result.trace.mutable_op_events(), last);
  EXPECT_EQ(viewer_trace_file(result.trace), "trace.pftrace");
  EXPECT_THAT(run_output_files(parse_run_outputs("chrome"), result.trace), ::testing::Contains("trace.pftrace"));
  write_run_directory(result, dir_ / "a", parse_run_outputs("chrome"));
  EXPECT_TRUE(fs::is_regular_file(dir_ / "a" / "trace.pftrace"));
  EXPECT_FALSE(fs::exists(dir_ / "a" / "trace.json"));
}

TEST(RunOutputs, ParsesListsAndRejectsUnknownNames) {
  const RunOutputs all = parse_run_outputs("all");
  EXPECT_TRUE(all.trace && all.chrome && all.csv && all.schedule);
  const RunOutputs some = parse_run_outputs("chrome,schedule");
  EXPECT_FALSE(some.trace);
  EXPECT_TRUE(some.chrome);
  EXPECT_FALSE(some.csv);
  EXPECT_TRUE(some.schedule);
  EXPECT_THAT(run_output_files(some, proto::Trace()),
              ::testing::ElementsAre("report.json", "timings.json", "scenario.textproto", "trace.json", "ranks.csv",
                                     "lengths.csv", "schedule.pb"));
  try {
    parse_run_outputs("trace,pictures");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("--outputs: unknown output 'pictures'"));
  }
  EXPECT_THROW(parse_run_outputs("trace,"), InputError);
  EXPECT_THROW(parse_run_outputs(""), InputError);
}

TEST(HumanSummary, SaysWhatThePlannerDecided) {
  const auto result = run_scenario(testing::load_quickstart({"workload.global_batch=64"}));
  const auto summary = human_summary(result);
  EXPECT_THAT(summary, HasSubstr("  plan         4 stages x 1 SP x 4 DP = 16 ranks (Megatron-LM)\n"));
  EXPECT_THAT(summary, HasSubstr("checkpointing 0 of "));
  EXPECT_THAT(summary, HasSubstr("step time"));
}

// `eppsim sim SCHEDULE --cluster SCENARIO` resolves the cluster, model and
// cost model only: a plan or workload block it cannot use does not stop it.
TEST(Run, SimulatesAScheduleWithoutAPlan) {
  const std::vector<std::string> small = {"workload.global_batch=16"};
  const auto planned = plan_scenario(testing::load_quickstart(small));
  const auto reference = run_scenario(testing::load_quickstart(small));

  const std::vector<std::string> broken_plan = {"plan.strategy=magic", "plan.zero_stage=9", "plan.memory_fraction=7",
                                                "plan.packed_1f1b.pipeline_stages=0", "workload.global_batch=0"};
  const auto cluster = resolve_simulation_part(parse_scenario_file(EPPSIM_SOURCE_DIR "/scenarios/quickstart.textproto", broken_plan));
  const auto run = simulate_schedule(planned.schedule, cluster, 0.0);
  EXPECT_EQ(run.report.step_time_s(), reference.report.step_time_s());
  EXPECT_EQ(run.report.strategy(), "packed-1f1b");
  // Planning still needs everything.
  EXPECT_THROW(resolve_full(parse_scenario_file(EPPSIM_SOURCE_DIR "/scenarios/quickstart.textproto", broken_plan)), InputError);
}

// The schedule is self-contained: `eppsim sim` prices its compute with the model
// its header names, whatever model the cluster's scenario has.
TEST(Run, SimulatesWithTheSchedulesOwnModel) {
  const std::vector<std::string> small = {"workload.global_batch=16"};
  const auto planned = plan_scenario(testing::load_quickstart(small));
  const auto reference = run_scenario(testing::load_quickstart(small));
  ASSERT_TRUE(planned.schedule.header().has_model());

  const auto other_model = parse_scenario_file(EPPSIM_SOURCE_DIR "/scenarios/quickstart.textproto", {"workload.global_batch=16", "model.preset=llama2-13b"});
  const auto cluster = cluster_for_schedule(other_model, planned.schedule, "planned.pb");
  EXPECT_EQ(cluster.model.layers, reference.schedule.header().model().layers());
  EXPECT_EQ(simulate_schedule(planned.schedule, cluster, 0.0).report.step_time_s(), reference.report.step_time_s());
  // Without the header, the scenario's (bigger) model prices it.
  proto::Schedule legacy = planned.schedule;
  legacy.clear_header();
  const auto slower = simulate_schedule(legacy, cluster_for_schedule(other_model, legacy, "legacy.pb"), 0.0);
  EXPECT_GT(slower.report.step_time_s(), reference.report.step_time_s());
}

// The engine registry checks simulation.engine before anything is planned, and
// the error names the field and the --set that named the engine.
TEST(Run, UnknownEngineIsLocated) {
  const auto scenario = testing::load_quickstart({"simulation.engine=warp"});
  try {
    plan_scenario(scenario);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("simulation.engine: unknown engine \"warp\" (available: analytic, flow)"));
    EXPECT_THAT(e.what(), HasSubstr("(set by --set simulation.engine=warp)"));
  }
}

// simulation.shared_endpoints false: the analytic engine gives every transfer
// and collective its uncontended time, so ZeRO-3's gathers no longer share the
// NIC with the all-to-alls and the step is shorter; the flow engine refuses it.
TEST(Run, SharedEndpointsCanBeSwitchedOff) {
  const std::vector<std::string> base = {"plan.strategy=ulysses"};  // 512 sequences: 64 do not contend
  auto with = [&](std::string setting) {
    std::vector<std::string> overrides = base;
    overrides.push_back(std::move(setting));
    return run_scenario(testing::load_quickstart(overrides)).report.step_time_s();
  };
  const double shared = with("simulation.shared_endpoints=true");
  EXPECT_EQ(shared, run_scenario(testing::load_quickstart(base)).report.step_time_s());  // the default
  EXPECT_LT(with("simulation.shared_endpoints=false"), shared);
  std::vector<std::string> flow = base;
  flow.insert(flow.end(), {"simulation.engine=flow", "simulation.shared_endpoints=false"});
  EXPECT_THAT([&] { run_scenario(testing::load_quickstart(flow)); },
              ::testing::ThrowsMessage<InputError>(HasSubstr("simulation.shared_endpoints: false is the analytic engine's")));
}

// A run that writes no op-level output keeps no op events, only each rank's
// busy times, and reports the same, to the byte, on either engine; the
// outputs say which a run needs.
TEST(Run, ASummaryTraceGivesTheSameReport) {
  for (const char* engine : {"analytic", "flow"}) {
    SCOPED_TRACE(engine);
    const auto scenario =
        testing::load_quickstart({"workload.global_batch=64", fmt::format("simulation.engine={}", engine)});
    const RunResult full = run_scenario(scenario);
    const RunResult summary = run_scenario(scenario, TraceDetail::summary());
    EXPECT_GT(full.trace.op_events().rank_size(), 0);
    EXPECT_EQ(full.trace.busy_size(), 0);
    EXPECT_EQ(summary.trace.op_events().rank_size(), 0);
    EXPECT_EQ(summary.trace.busy_size(), static_cast<int>(full.trace.num_ranks()));
    EXPECT_EQ(to_json(summary.report), to_json(full.report));
  }
  EXPECT_EQ(parse_run_outputs("none").trace_detail(), TraceDetail::summary());
  EXPECT_EQ(parse_run_outputs("schedule").trace_detail(), TraceDetail::summary());
  for (const char* op_level : {"trace", "chrome", "csv", "all"}) {
    EXPECT_EQ(parse_run_outputs(op_level).trace_detail(), TraceDetail{}) << op_level;
  }
}

// Every strategy's schedule, whose summary run times chains of compute ops as
// one event each (ExecutorOptions::compute_chains): the same report to the byte.
TEST(Run, ASummaryTraceGivesTheSameReportForEveryStrategy) {
  for (const std::string& strategy : planner_names()) {
    SCOPED_TRACE(strategy);
    const auto scenario = testing::load_quickstart({"workload.global_batch=64", "plan.strategy=" + strategy});
    EXPECT_EQ(to_json(run_scenario(scenario, TraceDetail::summary()).report), to_json(run_scenario(scenario).report));
  }
}


// step_16k cut to 1,024 GPUs with epp (8 stages x SP 8 x 16 replicas) and
// each drawn sequence 16 times: every replica the same, planned and simulated
// once (schedule/identical_replicas.h), for the same report to the byte as the
// simulation of every rank, whichever op events the trace keeps.
ResolvedScenario identical_replicas_scenario(bool identical, const std::vector<std::string>& more = {}) {
  std::vector<std::string> sets = {"plan.strategy=epp", "cluster.nodes=128", "workload.global_batch=1024",
                                   "workload.repeats=16", fmt::format("simulation.identical_replicas={}", identical)};
  sets.insert(sets.end(), more.begin(), more.end());
  return load_scenario(EPPSIM_SOURCE_DIR "/scenarios/bench/step_16k.textproto", sets);
}

TEST(Run, IdenticalReplicasGiveTheFullSimulationsReport) {
  const RunResult once = run_scenario(identical_replicas_scenario(true), TraceDetail::summary());
  ASSERT_TRUE(once.schedule.has_identical_replicas());
  EXPECT_EQ(once.schedule.identical_replicas().copies(), 16u);
  EXPECT_EQ(once.schedule.identical_replicas().stride(), 8u);
  EXPECT_EQ(once.schedule.programs(8).code_size(), 0);  // replica 1's first rank runs rank 0's ops
  EXPECT_EQ(represented_op_count(once.schedule), 16 * op_count(once.schedule));
  const RunResult every = run_scenario(identical_replicas_scenario(false), TraceDetail::summary());
  EXPECT_EQ(to_json(once.report), to_json(every.report));

  // Op events of ranks of replicas simulated through replica 0's: the same
  // times, peers in their own replica (a collective names the group replica
  // 0's program does, schedule.pb's).
  const TraceDetail some{true, parse_trace_ranks("0,100,1023")};
  const RunResult traced_once = run_scenario(identical_replicas_scenario(true), some);
  const RunResult traced_every = run_scenario(identical_replicas_scenario(false), some);
  EXPECT_EQ(to_json(traced_once.report), to_json(traced_every.report));
  auto a = traced_once.trace.op_events(), b = traced_every.trace.op_events();
  ASSERT_GT(a.rank_size(), 0);
  a.clear_group();
  b.clear_group();
  EXPECT_EQ(a.SerializeAsString(), b.SerializeAsString());
  EXPECT_THAT(traced_once.trace.traced_ranks(), ::testing::ElementsAre(0u, 100u, 1023u));
}

// On RailX the rails a transfer takes differ from replica to replica: each
// class of replicas whose transfers take the same times is simulated once.
TEST(Run, IdenticalReplicasOnRailXAreSimulatedAClassAtATime) {
  const auto railx = [](bool identical) {
    return load_scenario(EPPSIM_SOURCE_DIR "/scenarios/railx_200k.textproto",
                         {"plan.strategy=epp", "cluster.compare_topologies=[]", "cluster.nodes=144",
                          "cluster.topology.railx.nx=12", "cluster.topology.railx.ny=12", "plan.epp.pipeline_stages=4",
                          "plan.epp.sp_degree=8", "workload.global_batch=1152", "workload.repeats=144",
                          fmt::format("simulation.identical_replicas={}", identical)});
  };
  const auto scenario = railx(true);
  const RunResult once = run_scenario(scenario, TraceDetail::summary());
  const auto classes = replica_classes(once.schedule, *scenario.cost.model);
  ASSERT_EQ(classes.size(), 144u);
  const auto simulated = std::count_if(classes.begin(), classes.end(), [&, d = 0u](std::uint32_t c) mutable { return c == d++; });
  EXPECT_GT(simulated, 1);
  EXPECT_LT(simulated, 144);
  EXPECT_EQ(to_json(once.report), to_json(run_scenario(railx(false), TraceDetail::summary()).report));
}


// A fault breaks the symmetry: that run simulates every rank and says so;
// the healthy run it is compared with keeps to one replica a class.
TEST(Run, AFaultTurnsIdenticalReplicasOff) {
  std::vector<std::string> lines;
  const auto previous = logging::set_sink([&](std::string_view line) { lines.emplace_back(line); });
  const RunResult faulty = run_scenario(
      identical_replicas_scenario(true, {R"(faults=[{at: "0s" straggler { rank: 100 slowdown: 1.5 }}])"}),
      TraceDetail::summary());
  logging::set_sink(previous);
  EXPECT_TRUE(faulty.report.has_faults());
  const auto said = [&](std::string_view what) {
    return std::count_if(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(what) != std::string::npos; });
  };
  EXPECT_EQ(said("identical replicas: simulating every one of the 16 replicas' ranks, since the step has simulated faults"), 1);
  EXPECT_EQ(said("identical replicas: 16 replicas in 1 class of equal op times; simulating 64 of 1024 ranks"), 1);
}

}  // namespace
}  // namespace eppsim

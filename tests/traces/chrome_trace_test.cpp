#include "traces/chrome_trace.h"

#include <map>
#include <string>

#include <gmock/gmock.h>
#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include "proto/chrome_trace.pb.h"
#include "base/proto_io.h"
#include "schedule/trace_events.h"
#include "schedule/trace_file.h"
#include "tests/schedule/sample_messages.h"

namespace eppsim {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

Struct parse_struct(const std::string& json) {
  Struct parsed;
  const auto status = google::protobuf::util::JsonStringToMessage(json, &parsed);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return parsed;
}

// Strictly into the schema of proto/chrome_trace.proto: an unknown key
// is an error.
proto::chrome::Trace parse_schema(const std::string& json) {
  proto::chrome::Trace parsed;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  const auto status = google::protobuf::util::JsonStringToMessage(json, &parsed, options);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return parsed;
}

const Value& field(const Struct& s, const std::string& key) {
  static const Value missing;
  const auto it = s.fields().find(key);
  EXPECT_NE(it, s.fields().end()) << key;
  return it == s.fields().end() ? missing : it->second;
}

TEST(ChromeTraceJson, IsValidJsonWithTheTopLevelKeys) {
  const Struct top = parse_struct(chrome_trace_json(testing::sample_trace()));
  EXPECT_EQ(field(top, "displayTimeUnit").string_value(), "ns");
  const Struct& other = field(top, "otherData").struct_value();
  EXPECT_EQ(field(other, "scenario").string_value(), "sample");
  EXPECT_EQ(field(other, "strategy").string_value(), "packed-1f1b");
  EXPECT_EQ(field(other, "engine").string_value(), "analytic");
  EXPECT_EQ(field(other, "step_time_ns").string_value(), "1000002750");
  // 2 ranks x (process_name + process_sort_index + 2 thread names) + 6 ops + 3 memory samples.
  EXPECT_EQ(field(top, "traceEvents").list_value().values_size(), 8 + 6 + 3);
}

TEST(ChromeTraceJson, EventsHaveNamesCategoriesAndMicrosecondTimes) {
  const proto::chrome::Trace chrome = parse_schema(chrome_trace_json(testing::sample_trace()));
  std::map<std::string, int> by_ph;
  std::vector<proto::chrome::Event> ops;
  std::vector<proto::chrome::Event> counters;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::string> thread_names;
  std::map<std::uint32_t, std::string> process_names;
  for (const auto& e : chrome.traceevents()) {
    ++by_ph[e.ph()];
    if (e.ph() == "X") ops.push_back(e);
    if (e.ph() == "C") counters.push_back(e);
    if (e.ph() == "M" && e.name() == "thread_name") thread_names[{e.pid(), e.tid()}] = e.args().name();
    if (e.ph() == "M" && e.name() == "process_name") process_names[e.pid()] = e.args().name();
  }
  EXPECT_EQ(by_ph["M"], 8);
  EXPECT_EQ(by_ph["X"], 6);
  EXPECT_EQ(by_ph["C"], 3);
  EXPECT_EQ(process_names[0], "rank 0");
  EXPECT_EQ(process_names[1], "rank 1");
  EXPECT_EQ((thread_names[{1, 0}]), "compute");
  EXPECT_EQ((thread_names[{1, 1}]), "comm");

  ASSERT_EQ(ops.size(), 6u);  // in the trace's order
  EXPECT_EQ(ops[0].name(), "F c3 s1");
  EXPECT_EQ(ops[0].cat(), "forward");
  EXPECT_EQ(ops[0].ts(), 0.0);
  EXPECT_TRUE(ops[0].has_ts());
  EXPECT_EQ(ops[0].dur(), 1.5);
  EXPECT_EQ(ops[0].pid(), 0u);
  EXPECT_EQ(ops[0].tid(), 0u);
  EXPECT_EQ(ops[0].args().chunk(), 3u);
  EXPECT_EQ(ops[0].args().stage(), 1u);
  EXPECT_EQ(ops[0].args().stream(), "compute");

  EXPECT_EQ(ops[1].name(), "send->1");
  EXPECT_EQ(ops[1].cat(), "send");
  EXPECT_EQ(ops[1].ts(), 1.5);
  EXPECT_EQ(ops[1].dur(), 1.25);
  EXPECT_EQ(ops[1].tid(), 1u);
  EXPECT_EQ(ops[1].args().peer(), 1u);
  EXPECT_EQ(ops[1].args().size_bytes(), 1048576.0);
  EXPECT_EQ(ops[1].args().op(), 1u);

  EXPECT_EQ(ops[2].name(), "recv<-0");
  EXPECT_EQ(ops[2].pid(), 1u);
  EXPECT_EQ(ops[3].name(), "B c3 s2");
  EXPECT_EQ(ops[3].cat(), "backward");
  EXPECT_EQ(ops[3].ts(), 2.75);
  EXPECT_EQ(ops[3].dur(), 1e6);  // one second
  EXPECT_EQ(ops[4].name(), "all-reduce g2");
  EXPECT_EQ(ops[4].cat(), "collective");
  EXPECT_EQ(ops[4].args().group(), 2u);
  EXPECT_EQ(ops[4].args().collective(), "all_reduce");
  EXPECT_EQ(ops[4].args().size_bytes(), 8589934592.0);
  EXPECT_EQ(ops[5].name(), "memory");
  EXPECT_EQ(ops[5].dur(), 0.0);
  EXPECT_TRUE(ops[5].has_dur());

  ASSERT_EQ(counters.size(), 3u);
  EXPECT_EQ(counters[1].name(), "memory");
  EXPECT_EQ(counters[1].pid(), 0u);
  EXPECT_EQ(counters[1].ts(), 1.5);
  EXPECT_EQ(counters[1].args().bytes(), 81e9);
}

TEST(ChromeTraceJson, EscapesStringsAndNamesUndeclaredRanksAndStreams) {
  proto::Trace trace;
  trace.set_scenario("a \"quoted\"\\ name\n\x01 \xc3\xa9");
  trace.set_num_ranks(1);
  trace.add_stream_names("tab\there");
  add_event(*trace.mutable_op_events(), {.rank = 3, .stream = 2, .kind = proto::COMPUTE, .phase = proto::RECOMPUTE,
                                         .start_ns = -1500, .end_ns = 1});
  const proto::chrome::Trace chrome = parse_schema(chrome_trace_json(trace));
  EXPECT_EQ(chrome.otherdata().at("scenario"), trace.scenario());
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::string> threads;
  for (const auto& event : chrome.traceevents()) {
    if (event.name() == "thread_name") threads[{event.pid(), event.tid()}] = event.args().name();
    if (event.ph() == "X") {
      EXPECT_EQ(event.name(), "R c0 s0");
      EXPECT_EQ(event.cat(), "recompute");
      EXPECT_EQ(event.ts(), -1.5);
      EXPECT_EQ(event.dur(), 1.501);
      EXPECT_EQ(event.args().stream(), "stream 2");
    }
  }
  EXPECT_EQ((threads[{0, 0}]), "tab\there");
  EXPECT_EQ((threads[{3, 2}]), "stream 2");
  EXPECT_EQ(threads.size(), 4u);  // ranks 0 and 3, streams 0 and 2
}

TEST(ChromeTraceJson, EmptyTraceIsValid) {
  const Struct top = parse_struct(chrome_trace_json(proto::Trace()));
  EXPECT_EQ(field(top, "traceEvents").list_value().values_size(), 0);
}

TEST(WriteChromeTrace, WritesTheSameJson) {
  const auto dir = testing::fresh_dir("chrome");
  const proto::Trace trace = testing::sample_trace();
  write_chrome_trace(trace, dir / "out" / "trace.json");
  EXPECT_EQ(read_file(dir / "out" / "trace.json"), chrome_trace_json(trace));
}

TEST(WriteChromeTrace, StreamsATraceLargerThanItsBuffer) {
  // ~20,000 events (several MiB of JSON) cross the writer's 1 MiB flush size
  // many times; the file must still be the exact document.
  const auto dir = testing::fresh_dir("chrome_large");
  proto::Trace trace = testing::sample_trace();
  const OpEventFields first = fields_of(events_of(trace)[0]);
  for (int i = 0; i < 20000; ++i) {
    OpEventFields e = first;
    e.op = static_cast<std::uint32_t>(i);
    e.start_ns = i * 1000;
    e.end_ns = i * 1000 + 999;
    add_event(*trace.mutable_op_events(), e);
  }
  write_chrome_trace(trace, dir / "trace.json");
  const std::string expected = chrome_trace_json(trace);
  EXPECT_GT(expected.size(), std::size_t{3} << 20);
  EXPECT_EQ(read_file(dir / "trace.json"), expected);
}

TEST(WriteChromeTrace, ATraceFileInManyPartsWritesTheSameJsonAsInMemory) {
  // Parts of about 40 bytes: an event or a memory sample each.
  const auto dir = testing::fresh_dir("chrome_parts");
  const proto::Trace trace = testing::sample_trace();
  write_trace_file(trace, dir / "trace.pb", 40);
  write_chrome_trace(TraceFile(dir / "trace.pb", 0.0), dir / "trace.json");
  EXPECT_EQ(read_file(dir / "trace.json"), chrome_trace_json(trace));
}

}  // namespace
}  // namespace eppsim

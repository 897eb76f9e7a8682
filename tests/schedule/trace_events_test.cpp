#include "schedule/trace_events.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "tests/schedule/schedule_fixture.h"
#include "tests/schedule/trace_fixture.h"

namespace eppsim {
namespace {

using ::testing::HasSubstr;
using testing::event_message;

// An event with every field set, all to different values.
OpEventFields full_event(std::uint32_t i) {
  return {.rank = i,
          .op = 100 + i,
          .stream = 200 + i,
          .kind = proto::COLLECTIVE,
          .phase = proto::BACKWARD,
          .collective = proto::ALL_GATHER,
          .chunk = 300 + i,
          .stage = 400 + i,
          .peer = 500 + i,
          .group = 600 + i,
          .size_bytes = (std::uint64_t{1} << 40) + i,
          .start_ns = -1'000'000'000'000 + i,
          .end_ns = 2'000'000'000'000 + i};
}

void expect_fields(const OpEventFields& e, const OpEventFields& want) {
  EXPECT_EQ(e.rank, want.rank);
  EXPECT_EQ(e.op, want.op);
  EXPECT_EQ(e.stream, want.stream);
  EXPECT_EQ(e.kind, want.kind);
  EXPECT_EQ(e.phase, want.phase);
  EXPECT_EQ(e.collective, want.collective);
  EXPECT_EQ(e.chunk, want.chunk);
  EXPECT_EQ(e.stage, want.stage);
  EXPECT_EQ(e.peer, want.peer);
  EXPECT_EQ(e.group, want.group);
  EXPECT_EQ(e.size_bytes, want.size_bytes);
  EXPECT_EQ(e.start_ns, want.start_ns);
  EXPECT_EQ(e.end_ns, want.end_ns);
}

proto::Trace trace_of(int events) {
  proto::Trace trace;
  trace.set_num_ranks(2);
  for (int i = 0; i < events; ++i) add_event(*trace.mutable_op_events(), full_event(static_cast<std::uint32_t>(i)));
  return trace;
}

std::string error_of(void (*check)(proto::Trace&, std::string_view), proto::Trace trace) {
  try {
    check(trace, "t.pb");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

void check_columns(proto::Trace& trace, std::string_view where) { check_event_columns(trace, where); }

TEST(AddEvent, AppendsToEveryColumnAndFieldsOfReadsItBack) {
  proto::Trace trace;
  add_event(*trace.mutable_op_events(), full_event(7));
  const proto::OpEvents& c = trace.op_events();
  for (const int size : {c.rank_size(), c.op_size(), c.stream_size(), c.kind_size(), c.phase_size(),
                         c.collective_size(), c.chunk_size(), c.stage_size(), c.peer_size(), c.group_size(),
                         c.size_bytes_size(), c.start_ns_size(), c.end_ns_size()}) {
    EXPECT_EQ(size, 1);
  }
  EXPECT_EQ(c.op(0), 107u);
  EXPECT_EQ(c.end_ns(0), 2'000'000'000'007);
  expect_fields(fields_of(events_of(trace)[0]), full_event(7));
}

TEST(AddEvent, DefaultFieldsAreZero) {
  proto::Trace trace;
  add_event(*trace.mutable_op_events(), {});
  expect_fields(fields_of(events_of(trace)[0]), OpEventFields{});
  EXPECT_EQ(events_of(trace)[0].kind(), proto::OP_KIND_UNSPECIFIED);
}

TEST(OpEventRef, AccessorsReadEventIndexOfEveryColumn) {
  const proto::Trace trace = trace_of(3);
  const OpEventRef e = events_of(trace)[2];
  EXPECT_EQ(e.index(), 2);
  EXPECT_EQ(e.rank(), 2u);
  EXPECT_EQ(e.op(), 102u);
  EXPECT_EQ(e.stream(), 202u);
  EXPECT_EQ(e.kind(), proto::COLLECTIVE);
  EXPECT_EQ(e.phase(), proto::BACKWARD);
  EXPECT_EQ(e.collective(), proto::ALL_GATHER);
  EXPECT_EQ(e.chunk(), 302u);
  EXPECT_EQ(e.stage(), 402u);
  EXPECT_EQ(e.peer(), 502u);
  EXPECT_EQ(e.group(), 602u);
  EXPECT_EQ(e.size_bytes(), (std::uint64_t{1} << 40) + 2);
  EXPECT_EQ(e.start_ns(), -1'000'000'000'000 + 2);
  EXPECT_EQ(e.end_ns(), 2'000'000'000'000 + 2);
}

TEST(EventsOf, IteratesEveryEventInOrder) {
  const proto::Trace trace = trace_of(5);
  EXPECT_EQ(events_of(trace).size(), 5);
  EXPECT_FALSE(events_of(trace).empty());
  std::vector<int> indices;
  for (const OpEventRef e : events_of(trace)) {
    indices.push_back(e.index());
    expect_fields(fields_of(e), full_event(static_cast<std::uint32_t>(indices.size() - 1)));
  }
  EXPECT_EQ(indices, (std::vector<int>{0, 1, 2, 3, 4}));
  for (int i = 0; i < 5; ++i) EXPECT_EQ(events_of(trace)[i].op(), 100u + static_cast<std::uint32_t>(i));
  auto it = events_of(trace).begin();
  EXPECT_EQ((*it++).index(), 0);
  EXPECT_EQ((*it).index(), 1);
  EXPECT_EQ((*++it).index(), 2);
}

TEST(EventsOf, AnEmptyTraceHasNone) {
  const proto::Trace trace;
  EXPECT_EQ(events_of(trace).size(), 0);
  EXPECT_TRUE(events_of(trace).empty());
  EXPECT_TRUE(events_of(trace).begin() == events_of(trace).end());
}

TEST(EventsOf, SeesTheColumnSetters) {
  proto::Trace trace = trace_of(2);
  trace.mutable_op_events()->set_end_ns(1, 42);
  EXPECT_EQ(events_of(trace)[1].end_ns(), 42);
  EXPECT_EQ(events_of(trace)[0].end_ns(), 2'000'000'000'000);
}

TEST(ReserveEvents, LeavesTheEventsAsTheyAre) {
  proto::Trace trace = trace_of(3);
  const proto::Trace before = trace;
  reserve_events(*trace.mutable_op_events(), 1000);
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(trace, before));
  EXPECT_GE(trace.op_events().end_ns().Capacity(), 1003);
  EXPECT_GE(trace.op_events().rank().Capacity(), 1003);
  add_event(*trace.mutable_op_events(), full_event(3));
  EXPECT_EQ(events_of(trace).size(), 4);
  expect_fields(fields_of(events_of(trace)[3]), full_event(3));
  reserve_events(*trace.mutable_op_events(), 0);
  EXPECT_EQ(events_of(trace).size(), 4);
}

TEST(CheckEventColumns, AcceptsColumnsOfOneLength) {
  EXPECT_EQ(error_of(check_columns, trace_of(3)), "no error");
  EXPECT_EQ(error_of(check_columns, proto::Trace()), "no error");
}

TEST(CheckEventColumns, NamesAShortOrLongColumn) {
  proto::Trace trace = trace_of(3);
  trace.mutable_op_events()->mutable_size_bytes()->RemoveLast();
  EXPECT_EQ(error_of(check_columns, trace),
            "t.pb: op_events.size_bytes: must have one entry per event (3, as op_events.rank), got 2");
  trace = trace_of(3);
  trace.mutable_op_events()->add_stage(1);
  EXPECT_THAT(error_of(check_columns, trace), HasSubstr("t.pb: op_events.stage: must have one entry per event (3, "));
  trace = trace_of(3);
  trace.mutable_op_events()->mutable_rank()->RemoveLast();
  EXPECT_THAT(error_of(check_columns, trace), HasSubstr("t.pb: op_events.op: "));
  trace = trace_of(0);
  trace.mutable_op_events()->add_end_ns(5);  // events without a rank
  EXPECT_THAT(error_of(check_columns, trace), HasSubstr("t.pb: op_events.end_ns: "));
}

TEST(CheckEventColumns, NamesEveryColumn) {
  using Mutate = void (*)(proto::OpEvents&);
  const std::pair<const char*, Mutate> columns[] = {
      {"op", [](proto::OpEvents& c) { c.mutable_op()->RemoveLast(); }},
      {"stream", [](proto::OpEvents& c) { c.mutable_stream()->RemoveLast(); }},
      {"kind", [](proto::OpEvents& c) { c.mutable_kind()->RemoveLast(); }},
      {"phase", [](proto::OpEvents& c) { c.mutable_phase()->RemoveLast(); }},
      {"collective", [](proto::OpEvents& c) { c.mutable_collective()->RemoveLast(); }},
      {"chunk", [](proto::OpEvents& c) { c.mutable_chunk()->RemoveLast(); }},
      {"stage", [](proto::OpEvents& c) { c.mutable_stage()->RemoveLast(); }},
      {"peer", [](proto::OpEvents& c) { c.mutable_peer()->RemoveLast(); }},
      {"group", [](proto::OpEvents& c) { c.mutable_group()->RemoveLast(); }},
      {"size_bytes", [](proto::OpEvents& c) { c.mutable_size_bytes()->RemoveLast(); }},
      {"start_ns", [](proto::OpEvents& c) { c.mutable_start_ns()->RemoveLast(); }},
      {"end_ns", [](proto::OpEvents& c) { c.mutable_end_ns()->RemoveLast(); }},
  };
  for (const auto& [name, mutate] : columns) {
    proto::Trace trace = trace_of(2);
    mutate(*trace.mutable_op_events());
    EXPECT_EQ(error_of(check_columns, trace),
              "t.pb: op_events." + std::string(name) + ": must have one entry per event (2, as op_events.rank), got 1");
  }
}

TEST(ConvertEventMessages, MovesTheEventsIntoTheColumnsInOrder) {
  // In no sorted order, so that a reordering shows.
  const std::vector<std::uint32_t> order{2, 0, 3, 1};
  proto::Trace trace;
  trace.set_num_ranks(2);
  for (const std::uint32_t i : order) *trace.add_events() = event_message(full_event(i));
  convert_event_messages(trace, "t.pb");
  EXPECT_EQ(trace.events_size(), 0);
  ASSERT_EQ(events_of(trace).size(), 4);
  for (int i = 0; i < 4; ++i) expect_fields(fields_of(events_of(trace)[i]), full_event(order[i]));
  EXPECT_EQ(error_of(check_columns, trace), "no error");
  proto::Trace want;
  want.set_num_ranks(2);
  for (const std::uint32_t i : order) add_event(*want.mutable_op_events(), full_event(i));
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(trace, want));
}

TEST(ConvertEventMessages, LeavesATraceOfColumnsAsItIs) {
  proto::Trace trace = trace_of(3);
  convert_event_messages(trace, "t.pb");
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(trace, trace_of(3)));
  proto::Trace empty;
  convert_event_messages(empty, "t.pb");
  EXPECT_TRUE(events_of(empty).empty());
  EXPECT_EQ(empty.events_size(), 0);
}

TEST(ConvertEventMessages, RefusesATraceWithBothForms) {
  proto::Trace trace = trace_of(2);
  *trace.add_events() = event_message(full_event(9));
  const std::string error = error_of(convert_event_messages, trace);
  EXPECT_THAT(error, HasSubstr("t.pb: events: "));
  EXPECT_THAT(error, HasSubstr("not both"));
}

TEST(TraceEvents, AnOpsEventKindFollowsItsCode) {
  testing::HandSchedule h(2);
  const auto group = h.group({0, 1});
  const auto compute = h.compute(0, 0);
  const auto send = h.send(0, 1, 1, 64, 0);
  const auto collective = h.collective(0, 1, group, 64);
  const auto allocate = h.memory(0, 0, true, 64);
  const auto free = h.memory(0, 0, false, 64, {allocate});
  const auto recv = h.recv(1, 1, 0, 64, 0);
  const auto& s = h.schedule();
  EXPECT_EQ(event_kind(ops_of(s, 0)[compute]), proto::COMPUTE);
  EXPECT_EQ(event_kind(ops_of(s, 0)[send]), proto::SEND);
  EXPECT_EQ(event_kind(ops_of(s, 1)[recv]), proto::RECV);
  EXPECT_EQ(event_kind(ops_of(s, 0)[collective]), proto::COLLECTIVE);
  EXPECT_EQ(event_kind(ops_of(s, 0)[allocate]), proto::MEMORY);
  EXPECT_EQ(event_kind(ops_of(s, 0)[free]), proto::MEMORY);
}

}  // namespace
}  // namespace eppsim

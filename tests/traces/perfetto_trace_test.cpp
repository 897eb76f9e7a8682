#include "traces/perfetto_trace.h"

#include <unistd.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "base/errors.h"
#include "base/proto_io.h"
#include "proto/perfetto_trace.pb.h"
#include "schedule/trace_events.h"
#include "schedule/trace_file.h"
#include "tests/schedule/sample_messages.h"
#include "tests/schedule/trace_fixture.h"

namespace eppsim {
namespace {

using ::testing::HasSubstr;
using Packet = perfetto::TracePacket;

// A slice rebuilt from its begin and end, named through the interned data.
struct Slice {
  std::uint64_t track_uuid = 0;
  std::string name, category;
  std::uint64_t start_ns = 0, end_ns = 0;
  std::map<std::string, std::uint64_t> args;
  auto tie() const { return std::tie(track_uuid, name, category, start_ns, end_ns, args); }
  bool operator<(const Slice& o) const { return tie() < o.tie(); }
  bool operator==(const Slice& o) const { return tie() == o.tie(); }
};

struct Counter {
  std::uint64_t track_uuid, time_ns;
  std::int64_t value;
  bool operator==(const Counter&) const = default;
};

// A written file read back with the subset schema and checked as Perfetto
// reads it: one sequence, the first packet clearing incremental state, track
// events needing it, every track described before use, every interned id
// defined once before use, timestamps nondecreasing, and each track's
// begins and ends a proper stack.
struct Decoded {
  std::vector<Packet> packets;
  std::map<std::uint64_t, perfetto::TrackDescriptor> tracks;
  std::vector<std::uint64_t> track_order;  // uuids as described
  std::vector<Slice> slices;               // in the order they end
  std::vector<Counter> counters;
  std::vector<perfetto::TrackEvent> instants;
  std::vector<std::uint64_t> instant_times_ns;
  int event_names_interned = 0;
};

Decoded decode(const std::filesystem::path& path) {
  perfetto::Trace trace;
  EXPECT_TRUE(trace.ParseFromString(read_file(path))) << path;
  Decoded d;
  std::map<std::uint64_t, std::string> names, categories, annotation_names;
  std::map<std::uint64_t, std::vector<Slice>> open;  // per track, innermost last
  std::uint64_t last_time_ns = 0;
  for (int i = 0; i < trace.packet_size(); ++i) {
    const Packet& p = trace.packet(i);
    d.packets.push_back(p);
    EXPECT_EQ(p.trusted_packet_sequence_id(), 1u) << i;
    EXPECT_TRUE(p.unknown_fields().empty()) << i;
    const std::uint32_t clears = i == 0 ? static_cast<std::uint32_t>(Packet::SEQ_INCREMENTAL_STATE_CLEARED) : 0u;
    EXPECT_EQ(p.sequence_flags() & Packet::SEQ_INCREMENTAL_STATE_CLEARED, clears) << i;
    const auto intern = [&](auto& table, const auto& entries) {
      for (const auto& entry : entries) {
        EXPECT_GT(entry.iid(), 0u);
        EXPECT_TRUE(table.emplace(entry.iid(), entry.name()).second) << "iid " << entry.iid() << " interned twice";
      }
    };
    intern(names, p.interned_data().event_names());
    intern(categories, p.interned_data().event_categories());
    intern(annotation_names, p.interned_data().debug_annotation_names());
    d.event_names_interned += p.interned_data().event_names_size();
    if (p.has_track_descriptor()) {
      EXPECT_FALSE(p.has_timestamp()) << i;
      const auto& t = p.track_descriptor();
      EXPECT_TRUE(d.tracks.emplace(t.uuid(), t).second) << "track " << t.uuid() << " described twice";
      d.track_order.push_back(t.uuid());
      if (t.has_parent_uuid()) {
        EXPECT_TRUE(d.tracks.count(t.parent_uuid())) << "parent described after its child";
      }
      continue;
    }
    EXPECT_TRUE(p.has_track_event()) << i;
    EXPECT_EQ(p.sequence_flags(), static_cast<std::uint32_t>(Packet::SEQ_NEEDS_INCREMENTAL_STATE)) << i;
    EXPECT_GE(p.timestamp(), last_time_ns) << "packet " << i << " goes back in time";
    last_time_ns = p.timestamp();
    const auto& e = p.track_event();
    EXPECT_TRUE(d.tracks.count(e.track_uuid())) << "packet " << i << " on an undescribed track";
    switch (e.type()) {
      case perfetto::TrackEvent::TYPE_SLICE_BEGIN: {
        Slice s;
        s.track_uuid = e.track_uuid();
        s.start_ns = p.timestamp();
        EXPECT_TRUE(names.count(e.name_iid())) << "name iid " << e.name_iid() << " not interned";
        s.name = names[e.name_iid()];
        EXPECT_EQ(e.category_iids_size(), 1);
        for (const std::uint64_t c : e.category_iids()) {
          EXPECT_TRUE(categories.count(c)) << "category iid " << c << " not interned";
          s.category = categories[c];
        }
        for (const auto& a : e.debug_annotations()) {
          EXPECT_TRUE(annotation_names.count(a.name_iid()));
          EXPECT_TRUE(a.has_uint_value());
          s.args[annotation_names[a.name_iid()]] = a.uint_value();
        }
        open[e.track_uuid()].push_back(s);
        break;
      }
      case perfetto::TrackEvent::TYPE_SLICE_END: {
        auto& stack = open[e.track_uuid()];
        EXPECT_FALSE(stack.empty()) << "packet " << i << " ends a slice on a track with none open";
        if (stack.empty()) break;
        Slice s = stack.back();
        stack.pop_back();
        s.end_ns = p.timestamp();
        d.slices.push_back(s);
        break;
      }
      case perfetto::TrackEvent::TYPE_COUNTER:
        EXPECT_TRUE(d.tracks[e.track_uuid()].has_counter());
        d.counters.push_back({e.track_uuid(), p.timestamp(), e.counter_value()});
        break;
      case perfetto::TrackEvent::TYPE_INSTANT:
        d.instants.push_back(e);
        d.instant_times_ns.push_back(p.timestamp());
        break;
      default: ADD_FAILURE() << "packet " << i << ": unexpected type " << e.type();
    }
  }
  for (const auto& [uuid, stack] : open) EXPECT_TRUE(stack.empty()) << "track " << uuid << " left slices open";
  return d;
}

// The uuid of rank `rank`'s process track, of its thread track named
// `thread`, of its memory counter track.
std::uint64_t process_track(const Decoded& d, std::int32_t pid) {
  for (const auto& [uuid, t] : d.tracks) {
    if (t.has_process() && t.process().pid() == pid) return uuid;
  }
  ADD_FAILURE() << "no process track of pid " << pid;
  return 0;
}

std::uint64_t child_track(const Decoded& d, std::uint64_t parent, const std::string& name) {
  for (const auto& [uuid, t] : d.tracks) {
    if (t.parent_uuid() == parent && (t.thread().thread_name() == name || t.name() == name)) return uuid;
  }
  ADD_FAILURE() << "no track " << name << " under " << parent;
  return 0;
}

std::vector<Slice> sorted(std::vector<Slice> slices) {
  std::sort(slices.begin(), slices.end());
  return slices;
}

std::filesystem::path written(const proto::Trace& trace, const std::string& name = "trace.pftrace") {
  const auto path = testing::fresh_dir("perfetto") / name;
  write_perfetto_trace(trace, path);
  return path;
}

TEST(PerfettoTrace, DescribesAProcessPerRankAThreadPerStreamUsedAndAMemoryCounter) {
  const Decoded d = decode(written(testing::sample_trace()));
  // rank 0: process, compute, comm, memory; rank 1 the same.
  ASSERT_EQ(d.tracks.size(), 8u);
  EXPECT_EQ(d.packets[0].sequence_flags(), static_cast<std::uint32_t>(Packet::SEQ_INCREMENTAL_STATE_CLEARED));
  for (std::int32_t rank = 0; rank < 2; ++rank) {
    const std::uint64_t process = process_track(d, rank + 1);
    EXPECT_EQ(d.tracks.at(process).process().process_name(), "rank " + std::to_string(rank));
    for (const std::string stream : {"compute", "comm"}) {
      const auto& thread = d.tracks.at(child_track(d, process, stream)).thread();
      EXPECT_EQ(thread.pid(), rank + 1);
      EXPECT_GT(thread.tid(), 2);  // after every pid
    }
    const auto& memory = d.tracks.at(child_track(d, process, "memory"));
    EXPECT_EQ(memory.counter().unit(), perfetto::CounterDescriptor::UNIT_SIZE_BYTES);
  }
  std::set<std::int64_t> tids;
  for (const auto& [uuid, t] : d.tracks) {
    if (t.has_thread()) {
      EXPECT_TRUE(tids.insert(t.thread().tid()).second) << "tid " << t.thread().tid() << " twice";
    }
  }
  EXPECT_EQ(tids.size(), 4u);
}

TEST(PerfettoTrace, EachOpIsABeginAndAnEndAtItsExactNanoseconds) {
  const Decoded d = decode(written(testing::sample_trace()));
  const std::uint64_t rank0 = process_track(d, 1), rank1 = process_track(d, 2);
  const auto track = [&](std::uint64_t process, const std::string& name) { return child_track(d, process, name); };
  const std::vector<Slice> expected = {
      {track(rank0, "compute"), "F c3 s1", "forward", 0, 1500, {{"op", 0}, {"chunk", 3}, {"stage", 1}}},
      {track(rank0, "comm"), "send->1", "send", 1500, 2750, {{"op", 1}, {"size_bytes", 1 << 20}, {"peer", 1}}},
      {track(rank1, "comm"), "recv<-0", "recv", 1000, 2750, {{"op", 0}, {"size_bytes", 1 << 20}, {"peer", 0}}},
      {track(rank1, "compute"), "B c3 s2", "backward", 2750, 1'000'002'750, {{"op", 1}, {"chunk", 3}, {"stage", 2}}},
      {track(rank0, "comm"), "all-reduce g2", "collective", 3000, 4000,
       {{"op", 2}, {"size_bytes", std::uint64_t{1} << 33}, {"group", 2}}},
      {track(rank1, "compute"), "memory", "memory", 5000, 5000, {{"op", 2}, {"size_bytes", 4096}}},
  };
  EXPECT_EQ(sorted(d.slices), sorted(expected));
  EXPECT_TRUE(d.instants.empty());
}

TEST(PerfettoTrace, MemorySamplesAreCountersOnTheirRanksTrack) {
  const Decoded d = decode(written(testing::sample_trace()));
  const std::uint64_t memory0 = child_track(d, process_track(d, 1), "memory");
  const std::uint64_t memory1 = child_track(d, process_track(d, 2), "memory");
  const std::vector<Counter> expected = {
      {memory0, 0, 1000}, {memory0, 1500, 81'000'000'000}, {memory1, 5000, 4096}};
  EXPECT_EQ(d.counters, expected);
}

TEST(PerfettoTrace, NamesAndCategoriesAreInternedOnce) {
  proto::Trace trace = testing::sample_trace();
  for (int i = 0; i < 100; ++i) {  // the same forward op again and again
    testing::add(trace, {.rank = 0, .op = static_cast<std::uint32_t>(3 + i), .stream = 0, .kind = proto::COMPUTE,
                         .phase = proto::FORWARD, .chunk = 3, .stage = 1, .start_ns = 10'000 + i * 10,
                         .end_ns = 10'000 + i * 10 + 10});
  }
  const Decoded d = decode(written(trace));
  EXPECT_EQ(d.event_names_interned, 6);  // the six distinct names
  EXPECT_EQ(d.slices.size(), 106u);
}

TEST(PerfettoTrace, SlicesOfATrackNestAndOverlapsGoOnAnotherLane) {
  proto::Trace trace;
  trace.set_num_ranks(1);
  trace.add_stream_names("compute");
  const auto op = [&](std::uint32_t index, std::int64_t start, std::int64_t end) {
    testing::add(trace, {.rank = 0, .op = index, .stream = 0, .kind = proto::COMPUTE, .phase = proto::FORWARD,
                         .chunk = index, .start_ns = start, .end_ns = end});
  };
  op(0, 0, 100);   // encloses 1, 2, 3, 7
  op(1, 10, 50);   // back to back with 3
  op(2, 50, 50);   // zero-length where 1 ends and 3 begins
  op(3, 50, 80);
  op(4, 90, 150);  // starts inside 0 and ends after it: lane 2
  op(5, 100, 120); // starts where 0 ends
  op(6, 0, 100);   // the same span as 0
  op(7, 80, 80);   // zero-length where 3 ends
  op(8, 100, 100); // zero-length where 0 and 6 end and 5 begins
  const Decoded d = decode(written(trace));
  const std::uint64_t process = process_track(d, 1);
  const std::uint64_t lane1 = child_track(d, process, "compute");
  const std::uint64_t lane2 = child_track(d, process, "compute (lane 2)");
  EXPECT_EQ(d.tracks.at(lane2).thread().pid(), 1);
  std::vector<Slice> expected;
  const std::map<std::uint32_t, std::pair<std::int64_t, std::int64_t>> spans = {
      {0, {0, 100}}, {1, {10, 50}}, {2, {50, 50}}, {3, {50, 80}}, {4, {90, 150}},
      {5, {100, 120}}, {6, {0, 100}}, {7, {80, 80}}, {8, {100, 100}}};
  for (const auto& [index, span] : spans) {
    expected.push_back({index == 4 ? lane2 : lane1, "F c" + std::to_string(index) + " s0", "forward",
                        static_cast<std::uint64_t>(span.first), static_cast<std::uint64_t>(span.second),
                        {{"op", index}, {"chunk", index}, {"stage", 0}}});
  }
  // decode() rebuilt each slice from its track's stack: equal slices mean
  // every end closed the op it belongs to.
  EXPECT_EQ(sorted(d.slices), sorted(expected));
}

TEST(PerfettoTrace, SameTraceSameBytes) {
  const proto::Trace trace = testing::sample_trace();
  EXPECT_EQ(read_file(written(trace, "a.pftrace")), read_file(written(trace, "b.pftrace")));
}

TEST(PerfettoTrace, ATraceFileInManyPartsWritesTheSameBytesAsInMemory) {
  // Parts of about 40 bytes: an event or a memory sample each.
  const auto dir = testing::fresh_dir("perfetto_parts");
  const proto::Trace trace = testing::sample_trace();
  write_trace_file(trace, dir / "trace.pb", 40);
  write_perfetto_trace(TraceFile(dir / "trace.pb", kPerfettoExportBytesPerTraceByte), dir / "parts.pftrace");
  EXPECT_EQ(read_file(dir / "parts.pftrace"), read_file(written(trace)));
}

TEST(PerfettoTrace, AnIncompleteTraceMarksWhereItStopped) {
  proto::Trace trace = testing::sample_trace();
  trace.mutable_incomplete()->set_stopped_ns(6000);
  trace.mutable_incomplete()->set_reason("node 1 failed at 6 us");
  trace.mutable_incomplete()->set_ops_done(6);
  trace.mutable_incomplete()->set_ops_total(9);
  const Decoded d = decode(written(trace));
  EXPECT_EQ(d.slices.size(), 6u);
  ASSERT_EQ(d.instants.size(), 1u);
  EXPECT_EQ(d.tracks.at(d.instants[0].track_uuid()).name(), "step incomplete");
  EXPECT_EQ(d.instants[0].name(), "step stopped");
  std::map<std::string, std::string> args;
  for (const auto& a : d.instants[0].debug_annotations()) {
    args[a.name()] = a.has_string_value() ? a.string_value() : std::to_string(a.uint_value());
  }
  EXPECT_EQ(args, (std::map<std::string, std::string>{
                      {"reason", "node 1 failed at 6 us"}, {"ops_done", "6"}, {"ops_total", "9"}}));
  EXPECT_EQ(d.instant_times_ns, std::vector<std::uint64_t>{6000});
}

TEST(PerfettoTrace, ASummaryTraceGivesItsTracksAndMemoryCounters) {
  proto::Trace trace = testing::sample_trace();
  trace.clear_op_events();
  trace.add_busy()->set_rank(0);
  const Decoded d = decode(written(trace));
  EXPECT_TRUE(d.slices.empty());
  EXPECT_EQ(d.counters.size(), 3u);
  EXPECT_EQ(d.tracks.size(), 4u);  // two processes, two memory counters
}

TEST(PerfettoTrace, AnEmptyTraceIsAnEmptyFile) {
  const Decoded d = decode(written(proto::Trace()));
  EXPECT_TRUE(d.packets.empty());
}

TEST(PerfettoTrace, NamesUndeclaredRanksAndStreams) {
  proto::Trace trace;
  trace.set_num_ranks(1);
  trace.add_stream_names("compute");
  testing::add(trace, {.rank = 3, .stream = 2, .kind = proto::SEND, .peer = 0, .start_ns = 5, .end_ns = 7});
  const Decoded d = decode(written(trace));
  EXPECT_EQ(d.tracks.at(process_track(d, 1)).process().process_name(), "rank 0");
  const std::uint64_t rank3 = process_track(d, 4);
  EXPECT_EQ(d.tracks.at(rank3).process().process_name(), "rank 3");
  EXPECT_GT(d.tracks.at(child_track(d, rank3, "stream 2")).thread().tid(), 4);
}

TEST(PerfettoTrace, LargeTraceStreamsEveryPacket) {
  proto::Trace trace = testing::sample_trace();
  for (int i = 0; i < 20000; ++i) {
    testing::add(trace, {.rank = 1, .op = static_cast<std::uint32_t>(i), .stream = 1, .kind = proto::SEND,
                         .peer = 0, .size_bytes = 64, .start_ns = 2'000'000'000 + i * 1000,
                         .end_ns = 2'000'000'000 + i * 1000 + 999});
  }
  const Decoded d = decode(written(trace));
  EXPECT_EQ(d.slices.size(), 20006u);
}

TEST(PerfettoTrace, RefusesTimesBeforeZeroAndOpsEndingBeforeTheyStart) {
  const auto dir = testing::fresh_dir("refused");
  proto::Trace trace = testing::sample_trace();
  testing::add(trace, {.rank = 0, .op = 9, .start_ns = -5, .end_ns = 1});
  try {
    write_perfetto_trace(trace, dir / "t.pftrace");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("op_events[6] (rank 0 op 9): start_ns: must be >= 0"));
  }
  testing::remove_last_event(trace);
  testing::add(trace, {.rank = 0, .op = 9, .start_ns = 5, .end_ns = 1});
  EXPECT_THROW(write_perfetto_trace(trace, dir / "t.pftrace"), InputError);
  EXPECT_FALSE(std::filesystem::exists(dir / "t.pftrace"));
  EXPECT_TRUE(std::filesystem::is_empty(dir));  // no temporary left either
}

TEST(PerfettoTrace, AFailedWriteNamesThePathAndTheError) {
  const auto dir = testing::fresh_dir("unwritable");
  write_file_atomically(dir / "file", "x");
  const auto under_a_file = dir / "file" / "t.pftrace";
  try {
    write_perfetto_trace(testing::sample_trace(), under_a_file);
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr(under_a_file.string()));
    EXPECT_THAT(e.what(), HasSubstr("Not a directory"));
  }
  if (::geteuid() == 0) return;  // root writes into a read-only directory
  std::filesystem::create_directory(dir / "read-only");
  std::filesystem::permissions(dir / "read-only", std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  try {
    write_perfetto_trace(testing::sample_trace(), dir / "read-only" / "t.pftrace");
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr((dir / "read-only" / "t.pftrace").string()));
    EXPECT_THAT(e.what(), HasSubstr("Permission denied"));
  }
  std::filesystem::permissions(dir / "read-only", std::filesystem::perms::owner_all);
}

}  // namespace
}  // namespace eppsim

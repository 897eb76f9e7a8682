// Writes the fuzz targets' seed corpora into OUT_DIR/{scenario,schedule,trace,chakra}:
// the shipped scenarios (SOURCE_DIR/scenarios, not their expectations) and small
// Schedules, Traces and Chakra streams built here, so that no binary seed is
// committed. Usage: eppsim_fuzz_seeds OUT_DIR SOURCE_DIR
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "tests/traces/chakra_fixture.h"
#include "tests/schedule/schedule_fixture.h"
#include "schedule/trace_file.h"
#include "tests/schedule/trace_fixture.h"
#include "traces/chakra/chakra_export.h"
#include "traces/chakra/chakra_stream.h"
#include "base/proto_io.h"

namespace {

namespace fs = std::filesystem;
using namespace eppsim;
using eppsim::testing::HandSchedule;

// Two ranks: a forward, a send/receive pair, an all-reduce and an activation
// allocated and freed; `fixed` gives every op but the communication a fixed duration.
proto::Schedule pipeline(bool fixed) {
  HandSchedule s(2);
  const auto group = s.group({0, 1});
  const auto f0 = s.compute(0, 0);
  s.send(0, 1, 1, 4096, 7, {f0});
  const auto r1 = s.recv(1, 1, 0, 4096, 7);
  s.compute(1, 0, {r1});
  s.collective(0, 1, group, 1 << 20);
  s.collective(1, 1, group, 1 << 20);
  const auto a = s.memory(1, 0, true, 1 << 16);
  s.memory(1, 0, false, 1 << 16, {a});
  if (fixed) s.fix_duration(0, f0, 1500);
  return s.schedule();
}

// One rank: compute, a 1-member all-gather and memory (a Chakra trace of one rank).
proto::Schedule single_rank() {
  HandSchedule s(1);
  const auto group = s.group({0});
  const auto c = s.compute(0, 0);
  s.fix_duration(0, c, 2000);
  s.collective(0, 1, group, 1 << 12, proto::ALL_GATHER, {c});
  s.memory(0, 0, true, 1 << 10, {c});
  return s.schedule();
}

// pipeline(true) in the form before schema version 5 (ops as messages), so that
// the schedule target starts from convert_op_messages' input too.
proto::Schedule op_messages_pipeline() { return eppsim::testing::in_op_messages(pipeline(true)); }

void write(const fs::path& path, const std::string& bytes) { write_file_atomically(path, bytes); }

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s OUT_DIR SOURCE_DIR\n", argv[0]);
    return 2;
  }
  const fs::path out = argv[1];
  const fs::path source = argv[2];
  for (const char* target : {"scenario", "schedule", "trace", "chakra"}) fs::create_directories(out / target);

  for (const auto& entry : fs::recursive_directory_iterator(source / "scenarios")) {
    const auto name = entry.path().filename().string();
    if (!entry.is_regular_file() || entry.path().extension() != ".textproto" ||
        name.find(".expected.") != std::string::npos)
      continue;
    const auto relative = fs::relative(entry.path(), source / "scenarios").string();
    std::string flat;
    for (char c : relative) flat += c == '/' ? '_' : c;
    fs::copy_file(entry.path(), out / "scenario" / flat, fs::copy_options::overwrite_existing);
  }

  const std::vector<proto::Schedule> schedules = {pipeline(false), pipeline(true), single_rank()};
  write(out / "schedule" / "op_messages.pb", to_binary(op_messages_pipeline()));
  for (std::size_t i = 0; i < schedules.size(); ++i) {
    write(out / "schedule" / ("hand" + std::to_string(i) + ".pb"), to_binary(schedules[i]));
    const auto chakra = export_chakra(schedules[i]);
    for (std::size_t r = 0; r < chakra.ranks.size(); ++r) {
      write(out / "chakra" / ("hand" + std::to_string(i) + "." + std::to_string(r) + ".et"),
            serialize_chakra_stream(chakra.ranks[r]));
    }
  }
  // Chakra as other tools write it: no eppsim attributes, a COMP node priced by roofline.
  using namespace eppsim::testing;
  auto roofline = chakra_node(2, chakra::COMP_NODE, {1});
  add_int64_attribute(roofline.mutable_attr(), chakra_names::kNumOps, 1000000);
  add_int64_attribute(roofline.mutable_attr(), chakra_names::kTensorSize, 4096);
  write(out / "chakra" / "foreign.0.et",
        serialize_chakra_stream(chakra_rank({comp_node(0, 5), coll_node(1, chakra::ALL_REDUCE, 1024, "", {0}), roofline,
                                             chakra_node(3, chakra::METADATA_NODE, {2}, {0})})));

  write(out / "trace" / "two_rank.pb", to_binary(two_rank_trace("analytic")));
  write(out / "trace" / "measured.pb", to_binary(two_rank_trace("measured", 1.5, 1000)));
  // As traces were written before op_events: events as messages, converted on reading.
  write(out / "trace" / "event_messages.pb", to_binary(in_event_messages(two_rank_trace("analytic"))));
  // As eppsim writes traces now: a message stream (base/message_stream.h), of a trace of ranks of interest.
  proto::Trace some_ranks = two_rank_trace("analytic");
  some_ranks.add_traced_ranks(0);
  some_ranks.add_traced_ranks(1);
  write_trace_file(some_ranks, out / "trace" / "stream.pb");
  return 0;
}

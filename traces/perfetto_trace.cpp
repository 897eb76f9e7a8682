#include "traces/perfetto_trace.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include "base/atomic_file.h"
#include "base/errors.h"
#include "base/mix64.h"
#include "proto/perfetto_trace.pb.h"
#include "schedule/trace_events.h"
#include "traces/op_event_names.h"

namespace eppsim {
namespace {

using google::protobuf::io::CodedOutputStream;
using google::protobuf::io::FileOutputStream;

constexpr std::uint32_t kSequenceId = 1;
constexpr std::uint32_t kPacketTag = (1u << 3) | 2u;  // Trace.packet: field 1, length-delimited
// Events are numbered in 32 bits (a point in time holds one).
constexpr std::uint64_t kMaxPos = 0xffffffffu;

// ------------------------------------------------------------------ events

// What the export keeps of an op event: its place, times and name key (the
// annotations are the key's fields), 56 bytes.
struct ExportEvent {
  std::int64_t start_ns = 0, end_ns = 0;
  std::uint64_t size_bytes = 0;
  std::uint32_t rank = 0, stream = 0, op = 0, index = 0;
  OpEventNameKey key;
};

struct ExportSample {
  std::uint32_t rank = 0;
  std::int64_t time_ns = 0;
  std::int64_t bytes = 0;
};

// The events and memory samples of every part. Perfetto's timestamps are
// unsigned, its counter values signed 64-bit and its pids 32-bit: what does
// not fit is refused before anything is written.
void collect(const TraceParts& parts, std::vector<ExportEvent>& events, std::vector<ExportSample>& samples) {
  const proto::Trace& header = parts.header();
  constexpr auto kMaxPid = static_cast<std::uint32_t>(std::numeric_limits<std::int32_t>::max());
  if (header.num_ranks() > kMaxPid) {
    throw InputError(fmt::format("perfetto export: num_ranks: must be <= {} (Perfetto's pids are 32-bit), got {}",
                                 kMaxPid, header.num_ranks()));
  }
  if (header.has_incomplete() && header.incomplete().stopped_ns() < 0) {
    throw InputError(fmt::format("perfetto export: incomplete.stopped_ns: must be >= 0 (Perfetto's timestamps are "
                                 "unsigned), got {}",
                                 header.incomplete().stopped_ns()));
  }
  // Counted first, so that the records are allocated once (a vector that
  // grows holds up to three times them while it moves).
  std::size_t event_count = 0, sample_count = 0;
  parts.for_each_part([&](const proto::Trace& part, std::uint64_t) {
    event_count += static_cast<std::size_t>(part.op_events().rank_size());
    sample_count += static_cast<std::size_t>(part.memory_size());
  });
  events.reserve(event_count);
  samples.reserve(sample_count);
  parts.for_each_part([&](const proto::Trace& part, std::uint64_t first_event) {
    for (const OpEventRef e : events_of(part)) {
      const std::uint64_t index = first_event + static_cast<std::uint64_t>(e.index());
      if (e.start_ns() < 0) {
        throw InputError(fmt::format("perfetto export: op_events[{}] (rank {} op {}): start_ns: must be >= 0 "
                                     "(Perfetto's timestamps are unsigned), got {}",
                                     index, e.rank(), e.op(), e.start_ns()));
      }
      if (e.end_ns() < e.start_ns()) {
        throw InputError(fmt::format("perfetto export: op_events[{}] (rank {} op {}): end_ns: must be >= start_ns "
                                     "({}), got {}",
                                     index, e.rank(), e.op(), e.start_ns(), e.end_ns()));
      }
      if (e.rank() >= kMaxPid) {
        throw InputError(fmt::format("perfetto export: op_events[{}]: rank: must be < {} (Perfetto's pids are "
                                     "32-bit), got {}",
                                     index, kMaxPid, e.rank()));
      }
      if (index >= kMaxPos) {
        throw InputError(fmt::format("perfetto export: op_events: at most {} events, the trace has more", kMaxPos));
      }
      events.push_back({e.start_ns(), e.end_ns(), e.size_bytes(), e.rank(), e.stream(), e.op(),
                        static_cast<std::uint32_t>(index), op_event_name_key(e)});
    }
    for (const proto::MemorySample& m : part.memory()) {
      const std::uint64_t i = samples.size();
      if (m.time_ns() < 0) {
        throw InputError(fmt::format("perfetto export: memory[{}]: time_ns: must be >= 0 (Perfetto's timestamps are "
                                     "unsigned), got {}",
                                     i, m.time_ns()));
      }
      if (m.bytes() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
        throw InputError(fmt::format("perfetto export: memory[{}]: bytes: must be < 2^63 (Perfetto's counter values "
                                     "are signed), got {}",
                                     i, m.bytes()));
      }
      if (m.rank() >= kMaxPid) {
        throw InputError(fmt::format("perfetto export: memory[{}]: rank: must be < {} (Perfetto's pids are 32-bit), "
                                     "got {}",
                                     i, kMaxPid, m.rank()));
      }
      samples.push_back({m.rank(), m.time_ns(), static_cast<std::int64_t>(m.bytes())});
    }
  });
}

// ------------------------------------------------------------------ tracks

struct ThreadTrack {
  std::uint32_t rank = 0;
  std::uint32_t stream = 0;
  std::uint32_t lane = 0;  // 0, or a further track for ops that overlap those of lane 0 without nesting
};

// The thread track each event goes on, the events sorted by rank, stream,
// start, longer first (an op before those it encloses), index: each track's
// slices in pre-order.
struct TrackLayout {
  std::vector<std::uint32_t> track_of;  // track_of[pos]: events[pos]'s track, an index in threads
  std::vector<ThreadTrack> threads;     // by rank, stream, lane
};

// Sorts `events` and puts each on the first lane of its (rank, stream) where
// it nests: the lane's open slices (a stack of end times) all end by its
// start, or the innermost one encloses it.
TrackLayout lay_out_tracks(std::vector<ExportEvent>& events) {
  std::sort(events.begin(), events.end(), [](const ExportEvent& a, const ExportEvent& b) {
    return std::tie(a.rank, a.stream, a.start_ns, b.end_ns, a.index) <
           std::tie(b.rank, b.stream, b.start_ns, a.end_ns, b.index);
  });
  TrackLayout layout;
  layout.track_of.resize(events.size());
  std::vector<std::vector<std::int64_t>> open_end_ns;  // per lane of the current (rank, stream), innermost last
  std::uint32_t first_track = 0;
  for (std::size_t pos = 0; pos < events.size(); ++pos) {
    const ExportEvent& e = events[pos];
    if (pos == 0 || e.rank != layout.threads.back().rank || e.stream != layout.threads.back().stream) {
      open_end_ns.clear();
      first_track = static_cast<std::uint32_t>(layout.threads.size());
    }
    std::uint32_t lane = 0;
    for (;; ++lane) {
      if (lane == open_end_ns.size()) {
        open_end_ns.emplace_back();
        layout.threads.push_back({e.rank, e.stream, lane});
        break;
      }
      std::vector<std::int64_t>& open = open_end_ns[lane];
      while (!open.empty() && open.back() <= e.start_ns) open.pop_back();
      if (open.empty() || open.back() >= e.end_ns) break;
    }
    open_end_ns[lane].push_back(e.end_ns);
    layout.track_of[pos] = first_track + lane;
  }
  return layout;
}

// ------------------------------------------------------------------ points in time

// Something written at time_ns; points sort by time, then by `order`, whose top
// two bits are the PointKind. At one time on one track this gives: slice ends,
// innermost first; then begins in pre-order, a zero-length slice's end right
// after its begin; then memory samples; then the stop.
struct Point {
  std::int64_t time_ns;
  std::uint64_t order;
  bool operator<(const Point& other) const {
    return time_ns != other.time_ns ? time_ns < other.time_ns : order < other.order;
  }
};

enum PointKind : std::uint64_t { kSliceEnd = 0, kSliceBeginOrZeroLengthEnd = 1, kMemorySample = 2, kStop = 3 };
constexpr int kKindShift = 62;
constexpr std::uint64_t kPayloadMask = (std::uint64_t{1} << kKindShift) - 1;

constexpr Point point(std::int64_t time_ns, PointKind kind, std::uint64_t payload) {
  return {time_ns, (std::uint64_t{kind} << kKindShift) | payload};
}

std::vector<Point> points_in_time(const proto::Trace& header, const std::vector<ExportEvent>& events,
                                  const std::vector<ExportSample>& samples) {
  std::vector<Point> points;
  points.reserve(2 * events.size() + samples.size() + 1);
  for (std::size_t pos = 0; pos < events.size(); ++pos) {
    const ExportEvent& e = events[pos];
    points.push_back(point(e.start_ns, kSliceBeginOrZeroLengthEnd, pos << 1));
    if (e.end_ns == e.start_ns) {
      points.push_back(point(e.end_ns, kSliceBeginOrZeroLengthEnd, (pos << 1) | 1));
    } else {
      points.push_back(point(e.end_ns, kSliceEnd, (kMaxPos - pos) << 1));
    }
  }
  for (std::size_t i = 0; i < samples.size(); ++i) points.push_back(point(samples[i].time_ns, kMemorySample, i));
  if (header.has_incomplete()) points.push_back(point(header.incomplete().stopped_ns(), kStop, 0));
  std::sort(points.begin(), points.end());
  return points;
}

// ------------------------------------------------------------------ packets

// Debug annotations of an op's slice, by interned name (iid = index + 1).
enum Annotation : std::uint32_t { kOp, kSizeBytes, kChunk, kStage, kPeer, kGroup, kAnnotationCount };
constexpr std::array<std::string_view, kAnnotationCount> kAnnotationNames = {"op", "size_bytes", "chunk",
                                                                              "stage", "peer", "group"};

struct NameKeyHash {
  std::size_t operator()(const OpEventNameKey& key) const {
    const std::uint64_t kind_variant = (std::uint64_t{static_cast<std::uint32_t>(key.kind)} << 32) |
                                       static_cast<std::uint32_t>(key.variant);
    return static_cast<std::size_t>(mix64(kind_variant ^ mix64((std::uint64_t{key.first} << 32) | key.second)));
  }
};

class PacketWriter {
 public:
  PacketWriter(const proto::Trace& header, const std::vector<ExportEvent>& events,
               const std::vector<ExportSample>& samples, const TrackLayout& layout, FileOutputStream& file_stream,
               CodedOutputStream& out, const std::filesystem::path& path)
      : trace_(header), events_(events), samples_(samples), listed_(header), layout_(layout),
        file_stream_(file_stream), out_(out), path_(path) {}

  // Process, thread and counter tracks of every listed rank (ListedRanks), and the stop's track.
  void describe_tracks();
  void write_events(const std::vector<Point>& points);

 private:
  void describe_rank(std::uint32_t rank, std::size_t& next_thread);
  std::uint64_t describe(perfetto::TrackDescriptor*& descriptor, std::uint64_t parent_uuid);
  void begin_slice(std::size_t pos);
  void end_slice(std::size_t pos);
  void write_memory_sample(std::size_t index);
  void write_stop();
  perfetto::TrackEvent* track_event(std::int64_t time_ns, perfetto::TrackEvent::Type type, std::uint64_t track_uuid);
  std::uint64_t name_iid(const OpEventNameKey& key);
  std::uint64_t category_iid(std::string_view category);
  void annotate(perfetto::TrackEvent* event, Annotation name, std::uint64_t value);
  void write_packet();

  const proto::Trace& trace_;  // the header
  const std::vector<ExportEvent>& events_;  // in the layout's order
  const std::vector<ExportSample>& samples_;
  const ListedRanks listed_;  // whose tracks and memory samples are shown
  const TrackLayout& layout_;
  FileOutputStream& file_stream_;
  CodedOutputStream& out_;
  const std::filesystem::path& path_;

  perfetto::TracePacket packet_;  // reused: Clear() keeps its allocations
  bool first_packet_ = true;
  std::uint64_t next_uuid_ = 1;
  std::int64_t first_tid_ = 1;
  std::vector<std::uint64_t> thread_uuid_;               // by thread track
  std::map<std::uint32_t, std::uint64_t> memory_uuid_;  // by rank with memory samples
  std::uint64_t stop_uuid_ = 0;
  std::unordered_map<OpEventNameKey, std::uint64_t, NameKeyHash> name_iids_;
  std::unordered_map<std::string_view, std::uint64_t> category_iids_;
  std::array<bool, kAnnotationCount> annotation_interned_{};
};

void PacketWriter::write_packet() {
  if (first_packet_) {
    packet_.set_sequence_flags(packet_.sequence_flags() | perfetto::TracePacket::SEQ_INCREMENTAL_STATE_CLEARED);
    first_packet_ = false;
  }
  packet_.set_trusted_packet_sequence_id(kSequenceId);
  const std::size_t bytes = packet_.ByteSizeLong();
  out_.WriteTag(kPacketTag);
  out_.WriteVarint32(static_cast<std::uint32_t>(bytes));
  packet_.SerializeWithCachedSizes(&out_);
  if (out_.HadError()) {
    throw std::runtime_error(
        fmt::format("{}: cannot write the Perfetto trace: {}", path_.string(), system_error_text(file_stream_.GetErrno())));
  }
  packet_.Clear();
}

std::uint64_t PacketWriter::describe(perfetto::TrackDescriptor*& descriptor, std::uint64_t parent_uuid) {
  descriptor = packet_.mutable_track_descriptor();
  const std::uint64_t uuid = next_uuid_++;
  descriptor->set_uuid(uuid);
  if (parent_uuid != 0) descriptor->set_parent_uuid(parent_uuid);
  return uuid;
}

void PacketWriter::describe_rank(std::uint32_t rank, std::size_t& next_thread) {
  // pids from 1 (Perfetto takes pid 0 for the idle task); tids after every pid.
  const auto pid_of = [](std::uint32_t r) { return static_cast<std::int32_t>(r + 1); };
  perfetto::TrackDescriptor* descriptor = nullptr;
  const std::uint64_t process_uuid = describe(descriptor, 0);
  descriptor->mutable_process()->set_pid(pid_of(rank));
  descriptor->mutable_process()->set_process_name(fmt::format("rank {}", rank));
  write_packet();
  const std::vector<ThreadTrack>& threads = layout_.threads;
  for (; next_thread < threads.size() && threads[next_thread].rank == rank; ++next_thread) {
    const ThreadTrack& thread = threads[next_thread];
    thread_uuid_[next_thread] = describe(descriptor, process_uuid);
    perfetto::ThreadDescriptor* about = descriptor->mutable_thread();
    about->set_pid(pid_of(rank));
    about->set_tid(first_tid_ + static_cast<std::int64_t>(next_thread));
    std::string name = thread.stream < static_cast<std::uint32_t>(trace_.stream_names_size())
                           ? trace_.stream_names(static_cast<int>(thread.stream))
                           : fmt::format("stream {}", thread.stream);
    if (thread.lane > 0) name += fmt::format(" (lane {})", thread.lane + 1);
    about->set_thread_name(std::move(name));
    write_packet();
  }
  if (const auto memory = memory_uuid_.find(rank); memory != memory_uuid_.end()) {
    memory->second = describe(descriptor, process_uuid);
    descriptor->set_name("memory");
    descriptor->mutable_counter()->set_unit(perfetto::CounterDescriptor::UNIT_SIZE_BYTES);
    write_packet();
  }
}

void PacketWriter::describe_tracks() {
  thread_uuid_.assign(layout_.threads.size(), 0);
  std::set<std::uint32_t> other_ranks;  // named by an event or sample, past num_ranks
  for (const ThreadTrack& thread : layout_.threads) {
    if (thread.rank >= trace_.num_ranks()) other_ranks.insert(thread.rank);
  }
  for (const ExportSample& m : samples_) {
    if (!listed_.contains(m.rank)) continue;
    memory_uuid_.emplace(m.rank, 0);
    if (m.rank >= trace_.num_ranks()) other_ranks.insert(m.rank);
  }
  // pids are rank + 1, up to the last rank's; tids follow them.
  first_tid_ = std::int64_t{other_ranks.empty() ? trace_.num_ranks() : *other_ranks.rbegin() + 1} + 1;
  std::size_t next_thread = 0;  // threads are by rank, like the ranks below
  for (const std::uint32_t rank : listed_.ranks()) describe_rank(rank, next_thread);
  for (const std::uint32_t rank : other_ranks) describe_rank(rank, next_thread);
  if (next_thread != layout_.threads.size()) throw std::logic_error("perfetto export: a thread track without its rank");
  if (trace_.has_incomplete()) {
    perfetto::TrackDescriptor* descriptor = nullptr;
    stop_uuid_ = describe(descriptor, 0);
    descriptor->set_name("step incomplete");
    write_packet();
  }
}

perfetto::TrackEvent* PacketWriter::track_event(std::int64_t time_ns, perfetto::TrackEvent::Type type,
                                                std::uint64_t track_uuid) {
  packet_.set_timestamp(static_cast<std::uint64_t>(time_ns));
  packet_.set_sequence_flags(perfetto::TracePacket::SEQ_NEEDS_INCREMENTAL_STATE);
  perfetto::TrackEvent* event = packet_.mutable_track_event();
  event->set_type(type);
  event->set_track_uuid(track_uuid);
  return event;
}

std::uint64_t PacketWriter::name_iid(const OpEventNameKey& key) {
  const auto [it, added] = name_iids_.try_emplace(key, name_iids_.size() + 1);
  if (added) {
    perfetto::EventName* name = packet_.mutable_interned_data()->add_event_names();
    name->set_iid(it->second);
    name->set_name(op_event_name(key));
  }
  return it->second;
}

std::uint64_t PacketWriter::category_iid(std::string_view category) {
  const auto [it, added] = category_iids_.try_emplace(category, category_iids_.size() + 1);
  if (added) {
    perfetto::EventCategory* interned = packet_.mutable_interned_data()->add_event_categories();
    interned->set_iid(it->second);
    interned->set_name(std::string(category));
  }
  return it->second;
}

void PacketWriter::annotate(perfetto::TrackEvent* event, Annotation name, std::uint64_t value) {
  const std::uint64_t iid = std::uint64_t{name} + 1;
  if (!annotation_interned_[name]) {
    perfetto::DebugAnnotationName* interned = packet_.mutable_interned_data()->add_debug_annotation_names();
    interned->set_iid(iid);
    interned->set_name(std::string(kAnnotationNames[name]));
    annotation_interned_[name] = true;
  }
  perfetto::DebugAnnotation* annotation = event->add_debug_annotations();
  annotation->set_name_iid(iid);
  annotation->set_uint_value(value);
}

void PacketWriter::begin_slice(std::size_t pos) {
  const ExportEvent& e = events_[pos];
  perfetto::TrackEvent* event =
      track_event(e.start_ns, perfetto::TrackEvent::TYPE_SLICE_BEGIN, thread_uuid_[layout_.track_of[pos]]);
  event->set_name_iid(name_iid(e.key));
  event->add_category_iids(category_iid(op_event_category(e.key)));
  annotate(event, kOp, e.op);
  if (e.size_bytes != 0) annotate(event, kSizeBytes, e.size_bytes);
  switch (e.key.kind) {  // the key's fields: chunk and stage, the peer, or the group
    case proto::COMPUTE:
      annotate(event, kChunk, e.key.first);
      annotate(event, kStage, e.key.second);
      break;
    case proto::SEND:
    case proto::RECV: annotate(event, kPeer, e.key.first); break;
    case proto::COLLECTIVE: annotate(event, kGroup, e.key.first); break;
    default: break;
  }
  write_packet();
}

void PacketWriter::end_slice(std::size_t pos) {
  track_event(events_[pos].end_ns, perfetto::TrackEvent::TYPE_SLICE_END, thread_uuid_[layout_.track_of[pos]]);
  write_packet();
}

void PacketWriter::write_memory_sample(std::size_t index) {
  const ExportSample& m = samples_[index];
  if (!listed_.contains(m.rank)) return;
  perfetto::TrackEvent* event = track_event(m.time_ns, perfetto::TrackEvent::TYPE_COUNTER, memory_uuid_.at(m.rank));
  event->set_counter_value(m.bytes);
  write_packet();
}

void PacketWriter::write_stop() {
  const proto::StepIncomplete& incomplete = trace_.incomplete();
  perfetto::TrackEvent* event = track_event(incomplete.stopped_ns(), perfetto::TrackEvent::TYPE_INSTANT, stop_uuid_);
  event->set_name("step stopped");
  perfetto::DebugAnnotation* reason = event->add_debug_annotations();
  reason->set_name("reason");
  reason->set_string_value(incomplete.reason());
  perfetto::DebugAnnotation* done = event->add_debug_annotations();
  done->set_name("ops_done");
  done->set_uint_value(incomplete.ops_done());
  perfetto::DebugAnnotation* total = event->add_debug_annotations();
  total->set_name("ops_total");
  total->set_uint_value(incomplete.ops_total());
  write_packet();
}

void PacketWriter::write_events(const std::vector<Point>& points) {
  for (const Point& p : points) {
    const std::uint64_t payload = p.order & kPayloadMask;
    switch (p.order >> kKindShift) {
      case kSliceEnd: end_slice(static_cast<std::size_t>(kMaxPos - (payload >> 1))); break;
      case kSliceBeginOrZeroLengthEnd:
        if ((payload & 1) == 0) {
          begin_slice(static_cast<std::size_t>(payload >> 1));
        } else {
          end_slice(static_cast<std::size_t>(payload >> 1));
        }
        break;
      case kMemorySample: write_memory_sample(static_cast<std::size_t>(payload)); break;
      default: write_stop(); break;
    }
  }
}

}  // namespace

void write_perfetto_trace(const TraceParts& trace, const std::filesystem::path& path) {
  std::vector<ExportEvent> events;
  std::vector<ExportSample> samples;
  collect(trace, events, samples);
  const TrackLayout layout = lay_out_tracks(events);
  const std::vector<Point> points = points_in_time(trace.header(), events, samples);
  AtomicFileWriter file(path);
  {
    FileOutputStream file_stream(file.descriptor());
    CodedOutputStream out(&file_stream);
    out.SetSerializationDeterministic(true);
    PacketWriter writer(trace.header(), events, samples, layout, file_stream, out, path);
    writer.describe_tracks();
    writer.write_events(points);
    out.Trim();
    if (out.HadError() || !file_stream.Flush()) {
      throw std::runtime_error(
          fmt::format("{}: cannot write the Perfetto trace: {}", path.string(), system_error_text(file_stream.GetErrno())));
    }
  }
  file.commit();
}

void write_perfetto_trace(const proto::Trace& trace, const std::filesystem::path& path) {
  write_perfetto_trace(TraceInMemory(trace), path);
}

}  // namespace eppsim

#pragma once
// A Trace's op events (Trace.op_events): one packed column per field, entry i
// of every column being event i, so that a step of millions of ops is a few
// arrays rather than a message per op. Readers see each event through
// OpEventRef, whose accessors are OpEvent's; writers append OpEventFields.
#include <cstdint>
#include <iterator>
#include <string_view>
#include <vector>

#include "schedule/program_ops.h"
#include "proto/trace.pb.h"

namespace eppsim {

// Event `index` of a trace's columns.
class OpEventRef {
 public:
  OpEventRef(const proto::OpEvents& columns, int index) : columns_(&columns), index_(index) {}

  int index() const { return index_; }
  std::uint32_t rank() const { return columns_->rank(index_); }
  std::uint32_t op() const { return columns_->op(index_); }
  std::uint32_t stream() const { return columns_->stream(index_); }
  proto::OpKind kind() const { return columns_->kind(index_); }
  proto::Phase phase() const { return columns_->phase(index_); }
  proto::CollectiveKind collective() const { return columns_->collective(index_); }
  std::uint32_t chunk() const { return columns_->chunk(index_); }
  std::uint32_t stage() const { return columns_->stage(index_); }
  std::uint32_t peer() const { return columns_->peer(index_); }
  std::uint32_t group() const { return columns_->group(index_); }
  std::uint64_t size_bytes() const { return columns_->size_bytes(index_); }
  std::int64_t start_ns() const { return columns_->start_ns(index_); }
  std::int64_t end_ns() const { return columns_->end_ns(index_); }

 private:
  const proto::OpEvents* columns_;
  int index_;
};

// The events of a trace, in order: `for (const OpEventRef e : events_of(trace))`.
class TraceEvents {
 public:
  explicit TraceEvents(const proto::OpEvents& columns) : columns_(&columns) {}

  class iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = OpEventRef;
    using difference_type = int;
    using pointer = void;
    using reference = OpEventRef;
    iterator() = default;
    iterator(const proto::OpEvents* columns, int index) : columns_(columns), index_(index) {}
    OpEventRef operator*() const { return {*columns_, index_}; }
    iterator& operator++() {
      ++index_;
      return *this;
    }
    iterator operator++(int) {
      iterator before = *this;
      ++index_;
      return before;
    }
    bool operator==(const iterator& other) const { return index_ == other.index_; }

   private:
    const proto::OpEvents* columns_ = nullptr;
    int index_ = 0;
  };

  int size() const { return columns_->rank_size(); }
  bool empty() const { return size() == 0; }
  OpEventRef operator[](int index) const { return {*columns_, index}; }
  iterator begin() const { return {columns_, 0}; }
  iterator end() const { return {columns_, size()}; }

 private:
  const proto::OpEvents* columns_;
};

inline TraceEvents events_of(const proto::Trace& trace) { return TraceEvents(trace.op_events()); }
// The view would outlive a temporary trace.
TraceEvents events_of(proto::Trace&& trace) = delete;

// The ranks whose op events `trace` lists: Trace.traced_ranks (a trace of
// ranks of interest, eppsim run --trace-ranks), else every rank.
std::vector<std::uint32_t> listed_ranks(const proto::Trace& trace);

// listed_ranks as a set, for the exports: they show the listed ranks, and of
// the other ranks of a trace of ranks of interest not even the memory peak
// the report reads.
class ListedRanks {
 public:
  explicit ListedRanks(const proto::Trace& trace);
  const std::vector<std::uint32_t>& ranks() const { return ranks_; }
  // Any rank of a trace that lists every rank's (even one past num_ranks).
  bool contains(std::uint32_t rank) const { return every_ || (rank < listed_.size() && listed_[rank]); }

 private:
  std::vector<std::uint32_t> ranks_;
  std::vector<bool> listed_;
  bool every_ = true;
};

// The kind a trace's event of `op` has (ALLOCATE and FREE: MEMORY).
proto::OpKind event_kind(OpView op);

// One event's fields, for writers.
struct OpEventFields {
  std::uint32_t rank = 0, op = 0, stream = 0;
  proto::OpKind kind = proto::OP_KIND_UNSPECIFIED;
  proto::Phase phase = proto::PHASE_UNSPECIFIED;
  proto::CollectiveKind collective = proto::COLLECTIVE_KIND_UNSPECIFIED;
  std::uint32_t chunk = 0, stage = 0, peer = 0, group = 0;
  std::uint64_t size_bytes = 0;
  std::int64_t start_ns = 0, end_ns = 0;
};

OpEventFields fields_of(OpEventRef event);

// Appends an event to every column.
void add_event(proto::OpEvents& columns, const OpEventFields& event);
// Makes room in every column for `events` more.
void reserve_events(proto::OpEvents& columns, int events);

// Throws InputError "WHERE: op_events.FIELD: must have one entry per event
// (N, as op_events.rank), got M" unless every column has as many entries.
void check_event_columns(const proto::Trace& trace, std::string_view where);

// A trace of the form before op_events (Trace.events, a message per event):
// its events move into op_events, in order. Throws InputError naming `where`
// for a trace that has both.
void convert_event_messages(proto::Trace& trace, std::string_view where);

}  // namespace eppsim

#pragma once
// Where each split sequence's slices run, gathered while a pipeline planner
// emits its schedule and written to PlanDecisions.sliced_sequences: the chunk
// ids (ops' chunk) of its slices and the ranks of its lane, so a timeline can
// highlight one long sequence.
#include <cstdint>
#include <map>
#include <span>

#include "proto/schedule.pb.h"

namespace eppsim {

class SlicedSequences {
 public:
  // Chunk `chunk` of replica `replica`, run on `ranks`, holds `slice_tokens`
  // tokens of batch sequence `sequence`. Slices are added first slice first.
  void add(std::uint64_t sequence, std::uint32_t replica, std::uint32_t chunk, std::uint64_t slice_tokens,
           std::span<const std::uint32_t> ranks);
  // Writes them sorted by batch index. Sequences of one slice are not split
  // and left out.
  void write_to(proto::PlanDecisions* decisions) const;

 private:
  std::map<std::uint64_t, proto::SlicedSequence> by_sequence_;
};

}  // namespace eppsim

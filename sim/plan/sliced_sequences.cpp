#include "sim/plan/sliced_sequences.h"

#include <set>
#include <stdexcept>
#include <string>

namespace eppsim {

void SlicedSequences::add(std::uint64_t sequence, std::uint32_t replica, std::uint32_t chunk,
                          std::uint64_t slice_tokens, std::span<const std::uint32_t> ranks) {
  auto [it, inserted] = by_sequence_.try_emplace(sequence);
  proto::SlicedSequence& s = it->second;
  if (inserted) {
    s.set_sequence(sequence);
    s.set_replica(replica);
  } else if (s.replica() != replica) {
    throw std::logic_error("sliced sequence " + std::to_string(sequence) + " runs on two replicas");
  }
  s.set_length_tokens(s.length_tokens() + slice_tokens);
  s.add_chunks(chunk);
  std::set<std::uint32_t> all(s.ranks().begin(), s.ranks().end());
  all.insert(ranks.begin(), ranks.end());
  s.mutable_ranks()->Assign(all.begin(), all.end());
}

void SlicedSequences::write_to(proto::PlanDecisions* decisions) const {
  for (const auto& [sequence, s] : by_sequence_) {
    if (s.chunks_size() > 1) *decisions->add_sliced_sequences() = s;
  }
}

}  // namespace eppsim

#include "schedule/identical_replicas.h"

#include <algorithm>
#include <bit>
#include <map>
#include <numeric>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

#include "base/errors.h"
#include "schedule/op_cost.h"
#include "schedule/program_ops.h"

namespace eppsim {
namespace {

// Per replica, its representative (replica 0 for every one when none is listed).
std::vector<std::uint32_t> representatives(const proto::Schedule& schedule, const ReplicaLayout& layout) {
  const auto& listed = schedule.identical_replicas().representative();
  if (listed.empty()) return std::vector<std::uint32_t>(layout.copies, 0);
  return {listed.begin(), listed.end()};
}

// Replica `replica`'s ranks in ascending order: `visit(rank)` for each.
template <class Visit>
void for_each_rank_of(const proto::Schedule& schedule, const ReplicaLayout& layout, std::uint32_t replica, Visit visit) {
  const std::uint64_t block = std::uint64_t{layout.copies} * layout.stride;
  for (std::uint64_t base = std::uint64_t{replica} * layout.stride; base < schedule.num_ranks(); base += block) {
    for (std::uint32_t j = 0; j < layout.stride; ++j) visit(static_cast<std::uint32_t>(base + j));
  }
}

// Whether every member of `group` is in replica 0.
bool inside_replica_zero(const proto::Group& group, const ReplicaLayout& layout) {
  return std::all_of(group.ranks().begin(), group.ranks().end(), [&](std::uint32_t r) { return layout.replica_of(r) == 0; });
}

// Writes replica `replica`'s programs as copies of replica 0's: peers moved to
// the replica, groups inside replica 0 (and works split over them) to copies
// made for it.
void write_replica(proto::Schedule& out, const ReplicaLayout& layout, std::uint32_t replica,
                   const std::vector<bool>& local_group) {
  std::map<std::uint32_t, std::uint32_t> group_copy, work_copy;
  const auto copy_group = [&](std::uint32_t g) {
    if (!local_group[g]) return g;
    const auto [at, added] = group_copy.try_emplace(g, static_cast<std::uint32_t>(out.groups_size()));
    if (added) {
      proto::Group copy = out.groups(static_cast<int>(g));
      copy.set_id(at->second);
      copy.set_name(fmt::format("{} (in replica {})", copy.name(), replica));
      for (auto& r : *copy.mutable_ranks()) r = layout.copy_in(r, replica);
      *out.add_groups() = std::move(copy);
    }
    return at->second;
  };
  const auto copy_work = [&](std::uint32_t w) {
    const proto::ComputeOp& work = out.shared_computes(static_cast<int>(w));
    const bool local = std::any_of(work.splits().begin(), work.splits().end(),
                                   [&](const auto& split) { return local_group[split.group()]; });
    if (!local) return w;
    const auto [at, added] = work_copy.try_emplace(w, static_cast<std::uint32_t>(out.shared_computes_size()));
    if (added) {
      proto::ComputeOp copy = work;
      for (auto& split : *copy.mutable_splits()) split.set_group(copy_group(split.group()));
      *out.add_shared_computes() = std::move(copy);
    }
    return at->second;
  };
  for_each_rank_of(out, layout, 0, [&](std::uint32_t r) {
    proto::RankProgram program = out.programs(static_cast<int>(r));
    auto& target = *program.mutable_target();
    for (int i = 0; i < program.code_size(); ++i) {
      switch (program.code(i)) {
        case proto::OP_SEND:
        case proto::OP_RECV: target[i] = layout.copy_in(target[i], replica); break;
        case proto::OP_COLLECTIVE: target[i] = copy_group(target[i]); break;
        case proto::OP_COMPUTE: target[i] = copy_work(target[i]); break;
        default: break;
      }
    }
    *out.mutable_programs(static_cast<int>(layout.copy_in(r, replica))) = std::move(program);
  });
}

std::vector<bool> groups_inside_replica_zero(const proto::Schedule& schedule, const ReplicaLayout& layout) {
  std::vector<bool> local(static_cast<std::size_t>(schedule.groups_size()));
  for (int g = 0; g < schedule.groups_size(); ++g) local[static_cast<std::size_t>(g)] = inside_replica_zero(schedule.groups(g), layout);
  return local;
}

}  // namespace

std::optional<ReplicaLayout> replica_layout(const proto::Schedule& schedule) {
  if (!schedule.has_identical_replicas()) return std::nullopt;
  return ReplicaLayout{schedule.identical_replicas().copies(), schedule.identical_replicas().stride()};
}

void check_identical_replicas(const proto::Schedule& schedule, std::string_view source) {
  if (!schedule.has_identical_replicas()) return;
  const auto& ir = schedule.identical_replicas();
  const auto fail = [&](std::string_view field, const std::string& rule) {
    throw InputError(fmt::format("{}: identical_replicas.{}: {}", source, field, rule));
  };
  if (ir.copies() < 2) fail("copies", fmt::format("must be >= 2, got {}", ir.copies()));
  if (ir.stride() < 1) fail("stride", "must be >= 1, got 0");
  const std::uint64_t block = std::uint64_t{ir.copies()} * ir.stride();
  if (schedule.num_ranks() % block != 0) {
    fail("copies", fmt::format("copies x stride ({} x {}) must divide num_ranks ({}) into whole replicas", ir.copies(),
                               ir.stride(), schedule.num_ranks()));
  }
  const ReplicaLayout layout{ir.copies(), ir.stride()};
  if (ir.representative_size() != 0) {
    fail("representative", "must be empty: a run lists the replicas it simulates, a Schedule holds replica 0's programs");
  }
  const auto live = live_ranks(schedule);
  for (std::uint32_t r = 0; r < schedule.num_ranks() && r < static_cast<std::uint32_t>(schedule.programs_size()); ++r) {
    const auto& program = schedule.programs(static_cast<int>(r));
    if (!live[r]) {
      if (program.code_size() > 0 || program.ops_size() > 0) {
        fail("copies", fmt::format("rank {} (replica {}) has a program, but runs its copy in replica 0's", r,
                                   layout.replica_of(r)));
      }
      continue;
    }
    for (const OpView op : ops_of(program)) {
      if ((op.is_send() || op.is_recv()) && op.peer() < schedule.num_ranks() &&
          layout.replica_of(op.peer()) != layout.replica_of(r)) {
        fail("copies", fmt::format("rank {} op {}: its peer {} is in replica {}, not in the rank's replica {}", r,
                                   op.index(), op.peer(), layout.replica_of(op.peer()), layout.replica_of(r)));
      }
    }
  }
  for (int g = 0; g < schedule.groups_size(); ++g) {
    const auto& ranks = schedule.groups(g).ranks();
    if (ranks.empty()) continue;
    const auto first = layout.replica_of(ranks[0]);
    if (std::all_of(ranks.begin(), ranks.end(), [&](std::uint32_t r) { return layout.replica_of(r) == first; })) continue;
    // A group across replicas: every copy of each member, replica 0's first.
    std::vector<std::uint32_t> sorted(ranks.begin(), ranks.end());
    std::sort(sorted.begin(), sorted.end());
    const auto in_replica_zero = static_cast<std::uint64_t>(
        std::count_if(sorted.begin(), sorted.end(), [&](std::uint32_t r) { return layout.replica_of(r) == 0; }));
    const bool closed =
        first == 0 && in_replica_zero * layout.copies == sorted.size() &&
        std::all_of(sorted.begin(), sorted.end(), [&](std::uint32_t r) {
          return std::binary_search(sorted.begin(), sorted.end(), layout.copy_in(r, 0));
        });
    if (!closed) {
      fail("copies", fmt::format("groups[{}] spans replicas but does not list every copy of each member, replica 0's "
                                 "first",
                                 g));
    }
  }
}

std::vector<bool> live_ranks(const proto::Schedule& schedule) {
  const auto source = source_ranks(schedule);
  std::vector<bool> live(source.size());
  for (std::uint32_t r = 0; r < source.size(); ++r) live[r] = source[r] == r;
  return live;
}

std::vector<std::uint32_t> source_ranks(const proto::Schedule& schedule) {
  std::vector<std::uint32_t> source(schedule.num_ranks());
  const auto layout = replica_layout(schedule);
  const auto rep = layout ? representatives(schedule, *layout) : std::vector<std::uint32_t>();
  for (std::uint32_t r = 0; r < schedule.num_ranks(); ++r) source[r] = layout ? layout->copy_in(r, rep[layout->replica_of(r)]) : r;
  return source;
}

std::uint64_t represented_op_count(const proto::Schedule& schedule) {
  const auto source = source_ranks(schedule);
  std::uint64_t ops = 0;
  for (const auto r : source) {
    if (r < static_cast<std::uint32_t>(schedule.programs_size())) ops += ops_of(schedule, r).size();
  }
  return ops;
}

std::vector<std::uint32_t> replica_classes(const proto::Schedule& schedule, const CostModel& cost) {
  const auto layout = replica_layout(schedule);
  if (!layout) return {0};
  const auto local_group = groups_inside_replica_zero(schedule, *layout);
  // What of replica 0's ops a copy may price differently: each send (its ranks
  // and bytes), and each collective over a group inside the replica.
  std::vector<std::tuple<std::uint32_t, std::uint32_t, std::uint64_t>> sends;
  std::vector<std::tuple<std::uint32_t, proto::CollectiveKind, proto::CollectiveAlgorithm, std::uint64_t>> collectives;
  for_each_rank_of(schedule, *layout, 0, [&](std::uint32_t r) {
    for (const OpView op : ops_of(schedule, r)) {
      if (op.duration_source() == proto::DURATION_FIXED) continue;
      if (op.is_send()) sends.emplace_back(r, op.peer(), op.size_bytes());
      if (op.is_collective() && local_group[op.group()]) {
        collectives.emplace_back(op.group(), op.collective_kind(), op.algorithm(), op.size_bytes());
      }
    }
  });
  const auto dedupe = [](auto& items) {
    std::sort(items.begin(), items.end());
    items.erase(std::unique(items.begin(), items.end()), items.end());
  };
  dedupe(sends);
  dedupe(collectives);
  const auto node_of = [&](std::uint32_t r) {
    return r < static_cast<std::uint32_t>(schedule.placement_size()) ? schedule.placement(static_cast<int>(r)).node() : r;
  };
  std::vector<std::uint32_t> classes(layout->copies);
  std::map<std::vector<std::uint64_t>, std::uint32_t> class_of_signature;
  std::vector<std::uint64_t> signature;
  std::vector<std::uint32_t> ranks;
  for (std::uint32_t d = 0; d < layout->copies; ++d) {
    signature.clear();
    for (const auto& [a, b, bytes] : sends) {
      const auto src = layout->copy_in(a, d), dst = layout->copy_in(b, d);
      signature.push_back(std::bit_cast<std::uint64_t>(cost.p2p_time(src, dst, Bytes(bytes)).value));
      signature.push_back(node_of(src) == node_of(dst));
    }
    for (const auto& [g, kind, algorithm, bytes] : collectives) {
      ranks.clear();
      bool spans = false;
      for (const auto r : schedule.groups(static_cast<int>(g)).ranks()) {
        ranks.push_back(layout->copy_in(r, d));
        spans = spans || node_of(ranks.back()) != node_of(ranks.front());
      }
      signature.push_back(std::bit_cast<std::uint64_t>(
          cost.collective_time(to_model(kind), to_model(algorithm), ranks, Bytes(bytes)).value));
      signature.push_back(spans);
    }
    classes[d] = class_of_signature.try_emplace(signature, d).first->second;
  }
  return classes;
}

proto::Schedule with_representatives(const proto::Schedule& schedule, std::span<const std::uint32_t> representative) {
  proto::Schedule out = schedule;
  const auto layout = replica_layout(schedule);
  if (!layout) return out;
  if (schedule.identical_replicas().representative_size() != 0 || representative.size() != layout->copies) {
    throw std::logic_error("with_representatives: a Schedule of replica 0's programs, and a representative per replica");
  }
  auto& listed = *out.mutable_identical_replicas()->mutable_representative();
  listed.Assign(representative.begin(), representative.end());
  const auto local_group = groups_inside_replica_zero(schedule, *layout);
  for (std::uint32_t d = 1; d < layout->copies; ++d) {
    if (representative[d] == d) write_replica(out, *layout, d, local_group);
  }
  return out;
}

proto::Schedule expand_identical_replicas(const proto::Schedule& schedule) {
  const auto layout = replica_layout(schedule);
  if (!layout) return schedule;
  std::vector<std::uint32_t> every(layout->copies);
  std::iota(every.begin(), every.end(), 0u);
  proto::Schedule out = with_representatives(schedule, every);
  out.clear_identical_replicas();
  return out;
}

}  // namespace eppsim

#include "traces/chakra/chakra_import.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <queue>
#include <unordered_map>

#include <fmt/format.h>

#include "base/errors.h"
#include "base/interrupt.h"
#include "base/protobuf_log.h"
#include "traces/chakra/chakra_attributes.h"
#include "schedule/schedule_validation.h"
#include "schedule/program_ops.h"
#include "schedule/schedule_schema.h"

namespace eppsim {
namespace {

// How often the import looks for SIGINT and SIGTERM (base/interrupt.h).
constexpr std::size_t kNodesPerInterruptCheck = 4096;

namespace names = chakra_names;
using chakra::Node;

// The streams of a foreign trace, by kind of op.
enum ForeignStream : std::uint32_t { kComputeStream, kSendStream, kRecvStream, kCollectiveStream, kMemoryStream };
const std::vector<std::string> kForeignStreams = {"compute", "send", "recv", "collective", "memory"};

std::int64_t micros_to_ns(std::uint64_t micros, std::string_view where) {
  if (micros > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max() / 1000)) {
    throw InputError(fmt::format("{}: duration_micros {} is too large", where, micros));
  }
  return static_cast<std::int64_t>(micros) * 1000;
}

std::uint32_t as_rank(std::uint64_t value, std::uint32_t num_ranks, std::string_view attribute, std::string_view where) {
  if (value >= num_ranks) {
    throw InputError(fmt::format("{}: {}: must be a rank in [0, {}), got {}", where, attribute, num_ranks, value));
  }
  return static_cast<std::uint32_t>(value);
}

std::uint64_t required(const std::optional<std::uint64_t>& value, std::string_view attribute, std::string_view where) {
  if (!value) throw InputError(fmt::format("{}: attribute {} is missing", where, attribute));
  return *value;
}

proto::CollectiveKind collective_kind(std::uint64_t comm_type, std::string_view where) {
  switch (comm_type) {
    case chakra::ALL_REDUCE: return proto::ALL_REDUCE;
    case chakra::ALL_GATHER: return proto::ALL_GATHER;
    case chakra::REDUCE_SCATTER: return proto::REDUCE_SCATTER;
    case chakra::ALL_TO_ALL: return proto::ALL_TO_ALL;
    case chakra::BROADCAST: return proto::BROADCAST;
    default:
      throw InputError(fmt::format("{}: comm_type {} ({}) is not supported (ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER, "
                                   "ALL_TO_ALL and BROADCAST are)",
                                   where, comm_type,
                                   comm_type <= chakra::CollectiveCommType_MAX
                                       ? chakra::CollectiveCommType_Name(static_cast<int>(comm_type))
                                       : std::string("unknown")));
  }
}

template <typename Message>
Message parse_bytes(const std::string& bytes, std::string_view attribute, std::string_view where) {
  Message m;
  const ProtobufLogCapture said;
  if (!m.ParseFromString(bytes)) {
    throw InputError(fmt::format("{}: attribute {}: not a valid {}{}", where, attribute, Message::descriptor()->name(),
                                 said.detail()));
  }
  return m;
}

// The Schedule's groups: the communicator-group file's, in ascending id order,
// then every rank when a collective names pg "" or "0".
class GroupTable {
 public:
  GroupTable(const ChakraCommGroups& comm_groups, std::uint32_t num_ranks, const std::vector<std::string>& names,
             proto::Schedule& schedule)
      : num_ranks_(num_ranks), schedule_(schedule) {
    for (const auto& [id, ranks] : comm_groups) {
      const auto index = static_cast<std::uint32_t>(schedule_.groups_size());
      auto* g = schedule_.add_groups();
      g->set_id(index);
      g->set_name(index < names.size() ? names[index] : fmt::format("pg {}", id));
      for (auto r : ranks) g->add_ranks(r);
      by_pg_[id] = index;
    }
  }

  std::uint32_t group_of(const std::string& pg_name, std::uint32_t rank, std::string_view where, std::string_view source) {
    std::uint32_t group = 0;
    if (pg_name.empty() || pg_name == "0") {
      if (!all_ranks_) {
        all_ranks_ = static_cast<std::uint32_t>(schedule_.groups_size());
        auto* g = schedule_.add_groups();
        g->set_id(*all_ranks_);
        g->set_name("all ranks");
        for (std::uint32_t r = 0; r < num_ranks_; ++r) g->add_ranks(r);
      }
      group = *all_ranks_;
    } else {
      std::uint64_t id = 0;
      try {
        std::size_t used = 0;
        id = std::stoull(pg_name, &used);
        if (used != pg_name.size()) throw std::invalid_argument("trailing characters");
      } catch (const std::exception&) {
        throw InputError(fmt::format("{}: pg_name \"{}\": must be a communicator group id (a decimal integer)", where, pg_name));
      }
      const auto it = by_pg_.find(id);
      if (it == by_pg_.end()) {
        const std::string hint =
            by_pg_.empty() ? fmt::format(" (none was read: name one, or put it at {})",
                                         chakra_comm_groups_path(std::string(source)).string())
                           : std::string();
        throw InputError(fmt::format("{}: pg_name \"{}\": no such group in the communicator-group file{}", where,
                                     pg_name, hint));
      }
      group = it->second;
    }
    const auto& ranks = schedule_.groups(static_cast<int>(group)).ranks();
    if (std::find(ranks.begin(), ranks.end(), rank) == ranks.end()) {
      throw InputError(fmt::format("{}: pg_name \"{}\": rank {} is not a member of the group", where, pg_name, rank));
    }
    return group;
  }

 private:
  std::uint32_t num_ranks_;
  proto::Schedule& schedule_;
  std::map<std::uint64_t, std::uint32_t> by_pg_;
  std::optional<std::uint32_t> all_ranks_;
};

struct ImportContext {
  std::uint32_t rank = 0;
  std::uint32_t num_ranks = 0;
  bool ours = false;  // written by eppsim: streams and durations from its attributes
  std::uint32_t stream_count = 0;
  const ChakraImportOptions* options = nullptr;
  GroupTable* groups = nullptr;
  std::string_view source;
};

// The op of `node`, or nullopt for a node that stands for its dependencies.
std::optional<proto::Op> op_of(const Node& node, const ImportContext& c, std::string_view where) {
  const auto& attrs = node.attr();
  proto::Op op;
  std::uint32_t stream = kComputeStream;
  switch (node.type()) {
    case chakra::COMP_NODE: {
      auto* compute = op.mutable_compute();
      if (const auto bytes = bytes_attribute(attrs, names::kCompute, where)) {
        *compute = parse_bytes<proto::ComputeOp>(*bytes, names::kCompute, where);
        break;  // its duration: DURATION_FROM_WORK unless kFixedDurationNs says otherwise (below)
      }
      compute->set_phase(proto::FORWARD);
      const double flops = static_cast<double>(unsigned_attribute(attrs, names::kNumOps, where).value_or(0));
      const auto traffic = unsigned_attribute(attrs, names::kTensorSize, where).value_or(0);
      compute->set_flops(flops);
      compute->set_memory_traffic_bytes(traffic);
      std::int64_t ns = micros_to_ns(node.duration_micros(), where);
      if (ns == 0) {
        double seconds = 0.0;
        if (c.options->peak_flops_per_s > 0) seconds = std::max(seconds, flops / c.options->peak_flops_per_s);
        if (c.options->memory_bytes_per_s > 0) seconds = std::max(seconds, static_cast<double>(traffic) / c.options->memory_bytes_per_s);
        ns = static_cast<std::int64_t>(std::llround(seconds * 1e9));
      }
      op.set_duration_source(proto::DURATION_FIXED);
      op.set_fixed_duration_ns(ns);
      compute->set_estimated_duration_ns(ns);
      break;
    }
    case chakra::MEM_LOAD_NODE:
    case chakra::MEM_STORE_NODE: {
      stream = kMemoryStream;
      op.mutable_compute()->set_memory_traffic_bytes(unsigned_attribute(attrs, names::kTensorSize, where).value_or(0));
      op.set_duration_source(proto::DURATION_FIXED);
      op.set_fixed_duration_ns(micros_to_ns(node.duration_micros(), where));
      op.mutable_compute()->set_estimated_duration_ns(op.fixed_duration_ns());
      break;
    }
    case chakra::COMM_SEND_NODE: {
      stream = kSendStream;
      const auto src = unsigned_attribute(attrs, names::kCommSrc, where).value_or(c.rank);
      if (src != c.rank) throw InputError(fmt::format("{}: comm_src {}: a send must be issued by its sender, rank {}", where, src, c.rank));
      auto* send = op.mutable_send();
      send->set_peer(as_rank(required(unsigned_attribute(attrs, names::kCommDst, where), names::kCommDst, where), c.num_ranks, names::kCommDst, where));
      send->set_size_bytes(required(unsigned_attribute(attrs, names::kCommSize, where), names::kCommSize, where));
      const auto tag = unsigned_attribute(attrs, names::kCommTag, where).value_or(0);
      if (tag > std::numeric_limits<std::uint32_t>::max()) throw InputError(fmt::format("{}: comm_tag {}: must fit 32 bits", where, tag));
      send->set_tag(static_cast<std::uint32_t>(tag));
      break;
    }
    case chakra::COMM_RECV_NODE: {
      stream = kRecvStream;
      const auto dst = unsigned_attribute(attrs, names::kCommDst, where).value_or(c.rank);
      if (dst != c.rank) throw InputError(fmt::format("{}: comm_dst {}: a receive must be issued by its receiver, rank {}", where, dst, c.rank));
      auto* recv = op.mutable_recv();
      recv->set_peer(as_rank(required(unsigned_attribute(attrs, names::kCommSrc, where), names::kCommSrc, where), c.num_ranks, names::kCommSrc, where));
      recv->set_size_bytes(required(unsigned_attribute(attrs, names::kCommSize, where), names::kCommSize, where));
      const auto tag = unsigned_attribute(attrs, names::kCommTag, where).value_or(0);
      if (tag > std::numeric_limits<std::uint32_t>::max()) throw InputError(fmt::format("{}: comm_tag {}: must fit 32 bits", where, tag));
      recv->set_tag(static_cast<std::uint32_t>(tag));
      break;
    }
    case chakra::COMM_COLL_NODE: {
      stream = kCollectiveStream;
      auto* coll = op.mutable_collective();
      coll->set_kind(collective_kind(required(unsigned_attribute(attrs, names::kCommType, where), names::kCommType, where), where));
      coll->set_size_bytes(required(unsigned_attribute(attrs, names::kCommSize, where), names::kCommSize, where));
      coll->set_group(c.groups->group_of(string_attribute(attrs, names::kPgName, where).value_or(""), c.rank, where, c.source));
      const auto algorithm = unsigned_attribute(attrs, names::kAlgorithm, where).value_or(0);
      if (!proto::CollectiveAlgorithm_IsValid(static_cast<int>(std::min<std::uint64_t>(algorithm, 1000)))) {
        throw InputError(fmt::format("{}: {} {}: not a collective algorithm", where, names::kAlgorithm, algorithm));
      }
      coll->set_algorithm(static_cast<proto::CollectiveAlgorithm>(algorithm));
      break;
    }
    case chakra::METADATA_NODE: {
      const auto bytes = bytes_attribute(attrs, names::kMemory, where);
      if (!bytes) return std::nullopt;
      *op.mutable_memory() = parse_bytes<proto::MemoryOp>(*bytes, names::kMemory, where);
      stream = kMemoryStream;
      break;
    }
    case chakra::INVALID_NODE: return std::nullopt;
    default:
      throw InputError(fmt::format("{}: node type {} is not supported", where,
                                   chakra::NodeType_IsValid(node.type()) ? chakra::NodeType_Name(node.type())
                                                                         : std::to_string(static_cast<int>(node.type()))));
  }
  if (c.ours) {
    const auto s = required(unsigned_attribute(attrs, names::kStream, where), names::kStream, where);
    if (s >= c.stream_count) throw InputError(fmt::format("{}: {} {}: the metadata names {} streams", where, names::kStream, s, c.stream_count));
    stream = static_cast<std::uint32_t>(s);
    // Ours: a COMPUTE op with its work, or any op, is DURATION_FROM_WORK unless
    // the node carries its fixed duration.
    if (node.type() != chakra::MEM_LOAD_NODE && node.type() != chakra::MEM_STORE_NODE) {
      op.set_duration_source(proto::DURATION_FROM_WORK);
      op.set_fixed_duration_ns(0);
    }
    if (const auto ns = signed_attribute(attrs, names::kFixedDurationNs, where)) {
      op.set_duration_source(proto::DURATION_FIXED);
      op.set_fixed_duration_ns(*ns);
    }
  }
  op.set_stream(stream);
  return op;
}

void import_rank(const ChakraRankTrace& trace, ImportContext& c, proto::RankProgram& program) {
  const std::string file = chakra_rank_path(std::string(c.source), c.rank).string();
  const auto& nodes = trace.nodes;
  std::unordered_map<std::uint64_t, std::size_t> index_of;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (!index_of.emplace(nodes[i].id(), i).second) {
      throw InputError(fmt::format("{}: node {}: id used twice (node #{} and #{})", file, nodes[i].id(), index_of[nodes[i].id()], i));
    }
  }
  // Every dependency as a node index; in a trace of ours the control
  // dependencies are stream order, which the streams restore.
  std::vector<std::vector<std::size_t>> all_deps(nodes.size()), op_deps(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const auto resolve = [&](std::uint64_t dep, std::string_view field, bool for_op) {
      const auto it = index_of.find(dep);
      if (it == index_of.end()) {
        throw InputError(fmt::format("{}: node {}: {} names node {}, which is not in the file", file, nodes[i].id(), field, dep));
      }
      all_deps[i].push_back(it->second);
      if (for_op) op_deps[i].push_back(it->second);
    };
    for (auto d : nodes[i].ctrl_deps()) resolve(d, "ctrl_deps", !c.ours);
    for (auto d : nodes[i].data_deps()) resolve(d, "data_deps", true);
  }
  // Kahn's algorithm, the earliest node in the file first.
  std::vector<std::size_t> waiting(nodes.size(), 0);
  std::vector<std::vector<std::size_t>> successors(nodes.size());
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    for (auto d : all_deps[i]) {
      ++waiting[i];
      successors[d].push_back(i);
    }
  }
  std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (waiting[i] == 0) ready.push(i);
  }
  // The ops each node stands for: its own, or (no op) its dependencies' ops.
  std::vector<std::vector<std::uint32_t>> stands_for(nodes.size());
  // Which node last took each op into its dependencies (1 + its index): the
  // union of a node's dependencies' ops in time linear in their sizes, where a
  // search of the list so far was quadratic (a wide fan-out took minutes).
  std::vector<std::size_t> taken_by;
  std::size_t placed = 0;
  while (!ready.empty()) {
    const auto i = ready.top();
    ready.pop();
    if (++placed % kNodesPerInterruptCheck == 0) throw_if_interrupted();
    const std::string where = fmt::format("{}: node {}", file, nodes[i].id());
    std::vector<std::uint32_t> deps;
    taken_by.resize(static_cast<std::size_t>(program.ops_size()), 0);
    for (auto d : op_deps[i]) {
      for (auto op : stands_for[d]) {
        if (taken_by[op] == i + 1) continue;
        taken_by[op] = i + 1;
        deps.push_back(op);
      }
    }
    if (auto op = op_of(nodes[i], c, where)) {
      for (auto d : deps) op->add_deps(d);
      // Chakra's sends are eager (ASTRA-sim completes a send without waiting for
      // its receive to be posted), the Schedule's rendezvous: a node that waits
      // on a foreign send waits for what the send waited for, so that a ring of
      // send-then-receive does not deadlock.
      if (c.ours || !op->has_send()) {
        stands_for[i] = {static_cast<std::uint32_t>(program.ops_size())};
      } else {
        stands_for[i] = deps;
      }
      *program.add_ops() = std::move(*op);
    } else {
      stands_for[i] = std::move(deps);
    }
    for (auto s : successors[i]) {
      if (--waiting[s] == 0) ready.push(s);
    }
  }
  if (placed != nodes.size()) {
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (waiting[i] > 0) {
        throw InputError(fmt::format("{}: node {}: its dependencies form a cycle (or wait on one)", file, nodes[i].id()));
      }
    }
  }
}

}  // namespace

proto::Schedule import_chakra(const std::vector<ChakraRankTrace>& ranks, std::string_view source,
                              const ChakraImportOptions& options) {
  if (ranks.empty()) throw InputError(fmt::format("{}: a Chakra trace needs at least one rank file", source));
  const std::string meta_where = fmt::format("{}: GlobalMetadata", chakra_rank_path(std::string(source), 0).string());
  const auto& meta = ranks[0].metadata.attr();
  proto::Schedule schedule;
  const auto num_ranks = static_cast<std::uint32_t>(ranks.size());
  schedule.set_num_ranks(num_ranks);
  const auto stream_names = string_list_attribute(meta, chakra_names::kStreamNames, meta_where);
  const bool ours = stream_names.has_value();
  for (const auto& s : ours ? *stream_names : kForeignStreams) schedule.add_stream_names(s);
  schedule.set_scenario(string_attribute(meta, chakra_names::kScenario, meta_where)
                            .value_or(std::filesystem::path(std::string(source)).filename().string()));
  schedule.set_strategy(string_attribute(meta, chakra_names::kStrategy, meta_where).value_or("chakra"));
  if (const auto header = bytes_attribute(meta, chakra_names::kHeader, meta_where)) {
    *schedule.mutable_header() = parse_bytes<proto::ScheduleHeader>(*header, chakra_names::kHeader, meta_where);
  } else {
    schedule.mutable_header()->set_schema_version(kScheduleSchemaVersion);
    schedule.mutable_header()->set_producer(fmt::format("chakra import (Chakra {})", ranks[0].metadata.version()));
  }
  if (const auto summary = bytes_attribute(meta, chakra_names::kSummary, meta_where)) {
    *schedule.mutable_summary() = parse_bytes<proto::ScheduleSummary>(*summary, chakra_names::kSummary, meta_where);
  }
  if (const auto placement = unsigned_list_attribute(meta, chakra_names::kPlacement, meta_where)) {
    if (placement->size() != 2 * static_cast<std::size_t>(num_ranks)) {
      throw InputError(fmt::format("{}: {}: {} values for {} ranks (two per rank)", meta_where, chakra_names::kPlacement,
                                   placement->size(), num_ranks));
    }
    for (std::uint32_t r = 0; r < num_ranks; ++r) {
      auto* p = schedule.add_placement();
      p->set_node(static_cast<std::uint32_t>((*placement)[2 * r]));
      p->set_local_gpu(static_cast<std::uint32_t>((*placement)[2 * r + 1]));
    }
  }
  GroupTable groups(options.comm_groups, num_ranks,
                    string_list_attribute(meta, chakra_names::kGroupNames, meta_where).value_or(std::vector<std::string>{}),
                    schedule);
  ImportContext context;
  context.num_ranks = num_ranks;
  context.ours = ours;
  context.stream_count = static_cast<std::uint32_t>(schedule.stream_names_size());
  context.options = &options;
  context.groups = &groups;
  context.source = source;
  for (std::uint32_t r = 0; r < num_ranks; ++r) {
    context.rank = r;
    import_rank(ranks[r], context, *schedule.add_programs());
  }
  // The nodes became ops as messages (Op); the Schedule holds them as columns.
  convert_op_messages(schedule, source);
  try {
    validate_schedule(schedule);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: the imported {}", source, e.what()));
  }
  return schedule;
}

proto::Schedule import_chakra_prefix(const std::filesystem::path& prefix, ChakraImportOptions options,
                                     const std::optional<std::filesystem::path>& comm_groups_file, const ChakraLimits& limits) {
  const auto ranks = read_chakra_prefix(prefix, limits);
  const auto num_ranks = static_cast<std::uint32_t>(ranks.size());
  const auto default_file = chakra_comm_groups_path(prefix);
  std::error_code ec;
  if (comm_groups_file) {
    options.comm_groups = read_chakra_comm_groups(*comm_groups_file, num_ranks);
  } else if (std::filesystem::is_regular_file(default_file, ec)) {
    options.comm_groups = read_chakra_comm_groups(default_file, num_ranks);
  }
  return import_chakra(ranks, prefix.string(), options);
}

}  // namespace eppsim

#pragma once
// Typed access to a Chakra node's attributes (AttributeProto), by name.
// Producers differ in the integer type they use (ASTRA-sim's examples write
// comm_size as int64 and comm_dst as int32): the getters accept any integer
// form and check the value's range; a wrong type is an InputError naming the
// node and the attribute.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "proto/chakra_et.pb.h"

namespace eppsim {

using ChakraAttributes = google::protobuf::RepeatedPtrField<chakra::AttributeProto>;

// The attribute named `name`, or nullptr.
const chakra::AttributeProto* find_attribute(const ChakraAttributes& attrs, std::string_view name);

// `where` names the node (or the metadata) in errors: "t.0.et: node 7".
std::optional<std::uint64_t> unsigned_attribute(const ChakraAttributes& attrs, std::string_view name, std::string_view where);
std::optional<std::int64_t> signed_attribute(const ChakraAttributes& attrs, std::string_view name, std::string_view where);
std::optional<std::string> string_attribute(const ChakraAttributes& attrs, std::string_view name, std::string_view where);
std::optional<std::string> bytes_attribute(const ChakraAttributes& attrs, std::string_view name, std::string_view where);
std::optional<std::vector<std::string>> string_list_attribute(const ChakraAttributes& attrs, std::string_view name,
                                                              std::string_view where);
std::optional<std::vector<std::uint64_t>> unsigned_list_attribute(const ChakraAttributes& attrs, std::string_view name,
                                                                  std::string_view where);

// Appends an attribute of the given type.
void add_int64_attribute(ChakraAttributes* attrs, std::string_view name, std::int64_t value);
void add_int32_attribute(ChakraAttributes* attrs, std::string_view name, std::int32_t value);
void add_uint64_attribute(ChakraAttributes* attrs, std::string_view name, std::uint64_t value);
void add_bool_attribute(ChakraAttributes* attrs, std::string_view name, bool value);
void add_string_attribute(ChakraAttributes* attrs, std::string_view name, std::string_view value);
void add_bytes_attribute(ChakraAttributes* attrs, std::string_view name, std::string_view value);
void add_string_list_attribute(ChakraAttributes* attrs, std::string_view name, const std::vector<std::string>& values);
void add_uint64_list_attribute(ChakraAttributes* attrs, std::string_view name, const std::vector<std::uint64_t>& values);

}  // namespace eppsim

namespace eppsim::chakra_names {
// Attributes ASTRA-sim and Chakra's tools read.
inline constexpr std::string_view kCommType = "comm_type";
inline constexpr std::string_view kCommSize = "comm_size";
inline constexpr std::string_view kCommSrc = "comm_src";
inline constexpr std::string_view kCommDst = "comm_dst";
inline constexpr std::string_view kCommTag = "comm_tag";
inline constexpr std::string_view kPgName = "pg_name";
inline constexpr std::string_view kIsCpuOp = "is_cpu_op";
inline constexpr std::string_view kNumOps = "num_ops";
inline constexpr std::string_view kTensorSize = "tensor_size";
// eppsim's own, for what Chakra cannot say; other tools ignore them. A trace
// whose metadata has kStreamNames was written by eppsim (chakra_export.h).
inline constexpr std::string_view kStreamNames = "eppsim.stream_names";    // metadata: string list
inline constexpr std::string_view kScenario = "eppsim.scenario";           // metadata: string
inline constexpr std::string_view kStrategy = "eppsim.strategy";           // metadata: string
inline constexpr std::string_view kHeader = "eppsim.header";               // metadata: ScheduleHeader bytes
inline constexpr std::string_view kSummary = "eppsim.summary";             // metadata: ScheduleSummary bytes
inline constexpr std::string_view kGroupNames = "eppsim.group_names";      // metadata: string list, by group id
inline constexpr std::string_view kPlacement = "eppsim.placement";         // metadata: uint64 list, node and local GPU per rank
inline constexpr std::string_view kStream = "eppsim.stream";               // node: the op's stream
inline constexpr std::string_view kFixedDurationNs = "eppsim.fixed_duration_ns";  // node: a DURATION_FIXED op's time
inline constexpr std::string_view kCompute = "eppsim.compute";             // node: ComputeOp bytes
inline constexpr std::string_view kMemory = "eppsim.memory";               // metadata node: MemoryOp bytes
inline constexpr std::string_view kAlgorithm = "eppsim.algorithm";         // node: CollectiveAlgorithm
}  // namespace eppsim::chakra_names

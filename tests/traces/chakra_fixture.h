#pragma once
// Small Chakra traces built in the tests, and where the real ones are
// (../shared/data/chakra beside the checkout; tests that need them skip when absent).
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <string>

#include <fmt/format.h>

#include "traces/chakra/chakra_attributes.h"
#include "traces/chakra/chakra_stream.h"

namespace eppsim::testing {

// ASTRA-sim's example traces: EPPSIM_SHARED_DATA (an environment variable, for
// a checkout without ../shared) or the build's ../shared/data, + "/chakra".
inline std::filesystem::path shared_chakra_dir() {
  const char* env = std::getenv("EPPSIM_SHARED_DATA");
  return std::filesystem::path(env != nullptr ? env : EPPSIM_SHARED_DATA_DIR) / "chakra";
}

inline chakra::Node chakra_node(std::uint64_t id, chakra::NodeType type, std::initializer_list<std::uint64_t> data_deps = {},
                                std::initializer_list<std::uint64_t> ctrl_deps = {}) {
  chakra::Node node;
  node.set_id(id);
  node.set_name(fmt::format("n{}", id));
  node.set_type(type);
  for (auto d : data_deps) node.add_data_deps(d);
  for (auto d : ctrl_deps) node.add_ctrl_deps(d);
  return node;
}

inline chakra::Node comp_node(std::uint64_t id, std::uint64_t micros, std::initializer_list<std::uint64_t> deps = {}) {
  auto node = chakra_node(id, chakra::COMP_NODE, deps);
  node.set_duration_micros(micros);
  return node;
}

inline chakra::Node send_node(std::uint64_t id, std::uint32_t dst, std::int64_t bytes, std::uint32_t tag,
                              std::initializer_list<std::uint64_t> deps = {}) {
  auto node = chakra_node(id, chakra::COMM_SEND_NODE, deps);
  add_int32_attribute(node.mutable_attr(), chakra_names::kCommDst, static_cast<std::int32_t>(dst));
  add_int64_attribute(node.mutable_attr(), chakra_names::kCommSize, bytes);
  add_int32_attribute(node.mutable_attr(), chakra_names::kCommTag, static_cast<std::int32_t>(tag));
  return node;
}

inline chakra::Node recv_node(std::uint64_t id, std::uint32_t src, std::int64_t bytes, std::uint32_t tag,
                              std::initializer_list<std::uint64_t> deps = {}) {
  auto node = chakra_node(id, chakra::COMM_RECV_NODE, deps);
  add_int32_attribute(node.mutable_attr(), chakra_names::kCommSrc, static_cast<std::int32_t>(src));
  add_int64_attribute(node.mutable_attr(), chakra_names::kCommSize, bytes);
  add_int32_attribute(node.mutable_attr(), chakra_names::kCommTag, static_cast<std::int32_t>(tag));
  return node;
}

inline chakra::Node coll_node(std::uint64_t id, chakra::CollectiveCommType type, std::int64_t bytes,
                              const std::string& pg_name = "", std::initializer_list<std::uint64_t> deps = {}) {
  auto node = chakra_node(id, chakra::COMM_COLL_NODE, deps);
  add_int64_attribute(node.mutable_attr(), chakra_names::kCommType, type);
  add_int64_attribute(node.mutable_attr(), chakra_names::kCommSize, bytes);
  if (!pg_name.empty()) add_string_attribute(node.mutable_attr(), chakra_names::kPgName, pg_name);
  return node;
}

inline ChakraRankTrace chakra_rank(std::initializer_list<chakra::Node> nodes) {
  ChakraRankTrace trace;
  trace.metadata.set_version("0.0.4");
  trace.nodes.assign(nodes.begin(), nodes.end());
  return trace;
}

}  // namespace eppsim::testing

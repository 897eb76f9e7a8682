#pragma once
// Shared checks for the topology tests: a route is a walk over live links from
// src to dst, and (on small instances) as short as a BFS says it can be.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "models/topology/topology.h"

namespace eppsim::testing {

// Empty when `path` is a walk of live links from src to dst; else what is wrong.
inline std::string check_walk(const Topology& t, VertexId src, VertexId dst, const std::vector<LinkId>& path) {
  VertexId at = src;
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (path[i] >= t.links().size()) return "link id out of range at hop " + std::to_string(i);
    const Link& l = t.link(path[i]);
    if (l.failed) return "failed link at hop " + std::to_string(i) + ": " + t.vertex_name(l.a) + "-" + t.vertex_name(l.b);
    if (l.a == at) {
      at = l.b;
    } else if (l.b == at) {
      at = l.a;
    } else {
      return "hop " + std::to_string(i) + " (" + t.vertex_name(l.a) + "-" + t.vertex_name(l.b) +
             ") does not start at " + t.vertex_name(at);
    }
  }
  if (at != dst) return "walk ends at " + t.vertex_name(at) + ", not " + t.vertex_name(dst);
  return "";
}

// Routes every live chip pair (with a few flows), checks each walk and, when
// `shortest`, that its hop count equals the BFS distance. Returns the number
// of pairs checked.
inline std::size_t check_all_routes(const Topology& t, bool shortest, std::uint64_t flows = 2) {
  ShortestPathRouter bfs(t);
  std::vector<LinkId> path;
  std::size_t pairs = 0;
  for (VertexId s = 0; s < t.chips(); ++s) {
    if (t.chip_failed(s)) continue;
    const auto dist = bfs.distances(s);
    for (VertexId d = 0; d < t.chips(); ++d) {
      if (t.chip_failed(d)) continue;
      for (std::uint64_t f = 0; f < flows; ++f) {
        t.route(s, d, f, &path);
        const std::string err = check_walk(t, s, d, path);
        EXPECT_EQ(err, "") << t.vertex_name(s) << " -> " << t.vertex_name(d) << " flow " << f;
        if (!err.empty()) return pairs;
        if (shortest) {
          EXPECT_EQ(path.size(), dist[d]) << t.vertex_name(s) << " -> " << t.vertex_name(d) << " flow " << f;
          if (path.size() != dist[d]) return pairs;
        }
      }
      ++pairs;
    }
  }
  return pairs;
}

}  // namespace eppsim::testing

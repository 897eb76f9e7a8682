#pragma once
// CSV files for pandas and spreadsheets, one row per record, deterministic
// formatting: seconds with 9 decimals (exact nanoseconds), byte counts as
// integers, enum values as lowercase names ("forward", "all_reduce",
// "compute"; empty when unspecified). Writes are atomic (see
// write_file_atomically) and throw std::runtime_error naming the path.
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "proto/report.pb.h"
#include "proto/trace.pb.h"

namespace eppsim {

// `text` as one CSV field (RFC 4180): quoted, with quotes doubled, when it
// holds a comma, a quote or a line break; as is otherwise.
std::string csv_field(std::string_view text);

// Nanoseconds as seconds with 9 decimals, exactly: "0.000001500", "-2.000000000".
std::string csv_seconds(std::int64_t ns);

// rank,op,stream,kind,phase,collective,chunk,stage,peer,group,size_bytes,start_s,end_s,duration_s
// One row per event, in the trace's order; stream is the stream's name.
std::string ops_csv(const proto::Trace& trace);
void write_ops_csv(const proto::Trace& trace, const std::filesystem::path& path);

// rank,time_s,bytes: one row per memory sample, in the trace's order.
std::string memory_csv(const proto::Trace& trace);
void write_memory_csv(const proto::Trace& trace, const std::filesystem::path& path);

// rank,node,compute_s,recompute_s,communication_s,bubble_s,peak_memory_bytes
// from report.per_rank.
std::string ranks_csv(const proto::Report& report);
void write_ranks_csv(const proto::Report& report, const std::filesystem::path& path);

}  // namespace eppsim

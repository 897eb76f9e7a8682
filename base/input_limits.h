#pragma once
// The upper bound of every size a user can set, in one place. Each is checked
// where the input is read, before anything is allocated from it, and a value
// past it is an InputError naming the file, the field and the bound. The
// bounds are far beyond any real cluster, model or batch (the largest shipped
// scenario has 199,712 chips); they exist so that an absurd but well-formed
// input fails at once with a message instead of exhausting memory, running for
// ever or overflowing simulated time.
//
// docs/bad-inputs.md lists them: scripts/bad_inputs_doc.py reads the
// `inline constexpr` lines below with their comments, so keep one per line.
#include <cstdint>

namespace eppsim::limits {

// ---------------------------------------------------------------- files
inline constexpr std::uint64_t kMaxScenarioFileBytes = std::uint64_t{16} << 20;  // a scenario (.textproto), 16 MiB
inline constexpr std::uint64_t kMaxMessageFileBytes = std::uint64_t{1} << 30;  // a Schedule, Trace, calibration or bench file, 1 GiB
inline constexpr std::uint64_t kMaxLengthsFileBytes = std::uint64_t{256} << 20;  // workload.lengths.file, 256 MiB
inline constexpr std::uint64_t kMaxCommGroupsFileBytes = std::uint64_t{64} << 20;  // a Chakra communicator-group file, 64 MiB
inline constexpr std::uint64_t kMaxSweepFileBytes = std::uint64_t{16} << 20;  // a sweep (.textproto), 16 MiB

// ---------------------------------------------------------------- cluster
inline constexpr std::uint32_t kMaxNodes = 1u << 20;  // cluster.nodes
inline constexpr std::uint32_t kMaxGpusPerNode = 1u << 12;  // cluster.gpus_per_node
inline constexpr std::uint32_t kMaxRanks = 1u << 22;  // GPUs of a cluster (nodes x gpus_per_node), ranks of a Schedule
inline constexpr std::uint32_t kMaxSwitchRadix = 1u << 16;  // topology switch ports: fat_tree.radix, rail_optimized.radix, railx.ocs_radix
inline constexpr std::uint32_t kMaxLinksPerChip = 64;  // nics_per_chip, railx.ports_per_chip_x/y, torus.links_per_neighbor
inline constexpr double kMaxLatencySeconds = 3600.0;  // a link's latency (cluster.*.latency, topology links)
inline constexpr double kMinBandwidthBytesPerSecond = 1.0;  // a link's or the HBM's bandwidth
inline constexpr double kMinPeakFlops = 1.0;  // cluster.gpu.peak_flops, FLOP/s

// ---------------------------------------------------------------- model
inline constexpr std::uint32_t kMaxLayers = 1u << 16;  // model.layers
inline constexpr std::uint32_t kMaxHiddenSize = 1u << 20;  // model.hidden_size
inline constexpr std::uint32_t kMaxFfnHiddenSize = 1u << 22;  // model.ffn_hidden_size
inline constexpr std::uint32_t kMaxAttentionHeads = 1u << 16;  // model.attention_heads and model.kv_heads
inline constexpr std::uint32_t kMaxVocabSize = 1u << 24;  // model.vocab_size

// ---------------------------------------------------------------- workload and plan
inline constexpr std::uint32_t kMaxGlobalBatch = 1u << 20;  // workload.global_batch, sequences
inline constexpr double kMaxLengthSigma = 4.0;  // workload.lengths.lognormal.sigma: e^4 = 55x the median at one sigma
inline constexpr std::uint64_t kMaxSequenceTokens = std::uint64_t{1} << 30;  // workload.max_length, lengths.fixed, a length file's lengths, micro-batch and chunk token budgets
inline constexpr std::uint32_t kMaxParallelDegree = kMaxRanks;  // pipeline stages, SP, TP, CP degrees, slices
inline constexpr std::uint32_t kMaxCollectiveOpsPerRank = 1u << 20;  // workload.collective.chunks x iterations
inline constexpr std::uint64_t kMaxCollectiveBytes = std::uint64_t{1} << 50;  // workload.collective.bytes, 1 PiB per rank
inline constexpr std::uint32_t kMaxSweepPoints = 1u << 20;  // a sweep's grid, before its filters

// ---------------------------------------------------------------- schedules
inline constexpr std::uint64_t kMaxOpBytes = std::uint64_t{1} << 50;  // a Schedule op's size_bytes (send, recv, collective, memory), 1 PiB

// ---------------------------------------------------------------- command line
inline constexpr std::uint32_t kMaxTop = 1u << 20;  // eppsim diff --top
inline constexpr std::uint32_t kMaxMeasuredSteps = 1000;  // eppsim testbed --steps, eppsim-run --steps and --warmup-steps
inline constexpr std::uint32_t kMaxBenchRepeats = 100000;  // eppsim-bench --repeats, --warmup, --iterations

// ---------------------------------------------------------------- simulated time
// Traces hold times as signed 64-bit nanoseconds: a simulated time past this
// (about 292 years) cannot be represented and is an error, not a wrap.
inline constexpr double kMaxSimulatedSeconds = 9.2e9;  // any simulated start, end or step time

}  // namespace eppsim::limits

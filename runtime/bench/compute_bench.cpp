#include "runtime/bench/compute_bench.h"

#include <algorithm>
#include <charconv>
#include <fstream>
#include <set>
#include <string_view>
#include <tuple>

#include <fmt/format.h>

#include "base/errors.h"
#include "base/input_limits.h"
#include "base/memory_limit.h"
#include "runtime/cpu/cpu_compute_queue.h"
#include "runtime/kernel_plan.h"
#include "schedule/compute_segments.h"
#include "schedule/model_shape.h"
#include "base/proto_io.h"
#include "scenario/scenario.h"
#ifdef EPPSIM_WITH_CUDA
#include "runtime/cuda/cuda_compute.h"
#endif

namespace eppsim::runtime {
namespace {

namespace pb = google::protobuf;

constexpr std::string_view kUsage =
    "usage: eppsim-bench compute --scenario FILE --backend cpu|cuda --out BENCH.json [--tokens LIST] "
    "[--context LIST] [--packed LIST] [--repeats N] [--warmup N] [--attention flash|reference] [--max-memory BYTES]";

// A whole number up to `most`.
std::uint64_t parse_count(std::string_view option, std::string_view text, std::uint64_t most) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    throw InputError(fmt::format("eppsim-bench compute: {}: expected a whole number, got '{}'", option, text));
  }
  if (value > most) throw InputError(fmt::format("eppsim-bench compute: {}: at most {}, got {}", option, most, value));
  return value;
}

// Token counts, each up to kMaxSequenceTokens.
std::vector<std::uint64_t> parse_list(std::string_view option, std::string_view text) {
  std::vector<std::uint64_t> values;
  while (true) {
    const std::size_t comma = text.find(',');
    values.push_back(parse_count(option, text.substr(0, comma), limits::kMaxSequenceTokens));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return values;
}

pb::Value number(double value) {
  pb::Value v;
  v.set_number_value(value);
  return v;
}

pb::Value text(std::string_view value) {
  pb::Value v;
  v.set_string_value(std::string(value));
  return v;
}

const char* pass_name(Pass pass) { return pass == Pass::Backward ? "backward" : "forward"; }

// time_s (median), min_s, max_s and repeats of a row.
void add_times(pb::Struct& row, std::vector<double> times) {
  std::sort(times.begin(), times.end());
  const std::size_t n = times.size();
  const double median = n % 2 == 1 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
  auto& f = *row.mutable_fields();
  f["time_s"] = number(median);
  f["min_s"] = number(times.front());
  f["max_s"] = number(times.back());
  f["repeats"] = number(static_cast<double>(n));
}

}  // namespace

ComputeBenchOptions parse_compute_bench_args(int argc, char** argv) {
  ComputeBenchOptions options;
  for (int i = 0; i < argc; ++i) {
    const std::string_view arg = argv[i];
    auto value = [&]() -> std::string_view {
      if (i + 1 >= argc) throw InputError(fmt::format("eppsim-bench compute: {} needs a value ({})", arg, kUsage));
      return argv[++i];
    };
    if (arg == "--scenario") {
      options.scenario = std::string(value());
    } else if (arg == "--backend") {
      options.backend = std::string(value());
    } else if (arg == "--out" || arg == "-o") {
      options.out = std::string(value());
    } else if (arg == "--tokens") {
      options.tokens = parse_list(arg, value());
    } else if (arg == "--context") {
      options.contexts = parse_list(arg, value());
    } else if (arg == "--packed") {
      options.packed = parse_list(arg, value());
    } else if (arg == "--max-memory") {
      options.max_memory = std::string(value());
    } else if (arg == "--repeats") {
      options.repeats = static_cast<std::uint32_t>(parse_count(arg, value(), limits::kMaxBenchRepeats));
    } else if (arg == "--attention") {
      options.attention = std::string(value());
    } else if (arg == "--warmup") {
      options.warmup = static_cast<std::uint32_t>(parse_count(arg, value(), limits::kMaxBenchRepeats));
    } else {
      throw InputError(fmt::format("eppsim-bench compute: unknown argument '{}' ({})", arg, kUsage));
    }
  }
  if (options.scenario.empty()) throw InputError(fmt::format("eppsim-bench compute: --scenario is required ({})", kUsage));
  if (options.out.empty()) throw InputError(fmt::format("eppsim-bench compute: --out is required ({})", kUsage));
  if (options.backend != "cpu" && options.backend != "cuda") {
    throw InputError(fmt::format("eppsim-bench compute: --backend: must be cpu or cuda, got '{}'", options.backend));
  }
  if (!options.attention.empty() && options.backend != "cuda") {
    throw InputError("eppsim-bench compute: --attention: only with --backend cuda");
  }
  if (options.repeats < 1) throw InputError("eppsim-bench compute: --repeats: must be >= 1");
  if (options.warmup < 1) throw InputError("eppsim-bench compute: --warmup: must be >= 1");
  for (std::uint64_t s : options.tokens) {
    if (s == 0) throw InputError("eppsim-bench compute: --tokens: every entry must be > 0");
  }
  for (std::uint64_t s : options.packed) {
    if (s == 0) throw InputError("eppsim-bench compute: --packed: every entry must be > 0");
  }
  for (std::uint64_t s : options.tokens) {
    for (std::uint64_t c : options.contexts) {
      if (s + c > limits::kMaxSequenceTokens) {
        throw InputError(fmt::format("eppsim-bench compute: --tokens {} with --context {}: a sequence of at most {} "
                                     "tokens, got {}",
                                     s, c, limits::kMaxSequenceTokens, s + c));
      }
    }
  }
  if (!options.max_memory.empty()) set_memory_limit_from_option("eppsim-bench compute: ", options.max_memory);
  return options;
}

std::vector<GridPoint> compute_bench_grid(const ComputeBenchOptions& options, std::uint64_t max_length) {
  std::vector<std::uint64_t> tokens = options.tokens;
  if (tokens.empty()) {
    for (std::uint64_t s = 64; s <= max_length; s *= 2) tokens.push_back(s);
    if (tokens.empty() || tokens.back() != max_length) tokens.push_back(max_length);
  }
  std::vector<GridPoint> grid;
  for (std::uint64_t s : tokens) {
    const std::vector<std::uint64_t> contexts = options.contexts.empty() ? std::vector<std::uint64_t>{0, s, 2 * s}
                                                                         : options.contexts;
    for (std::uint64_t c : contexts) grid.push_back(GridPoint{s, c});
  }
  std::vector<std::uint64_t> packed = options.packed;
  if (packed.empty() && options.tokens.empty() && options.backend == "cuda") {
    for (std::uint64_t s : {64, 256}) {
      if (2 * s <= max_length) packed.push_back(s);
    }
  }
  constexpr std::uint32_t kMostSequences = 32;
  for (std::uint64_t s : packed) {
    for (std::uint32_t n = 2; n <= kMostSequences && n * s <= max_length; n *= 2) grid.push_back(GridPoint{s, 0, n});
  }
  return grid;
}

std::vector<std::vector<double>> time_plans(ComputeQueue& queue, std::span<const KernelPlan> plans,
                                            std::uint32_t warmup, std::uint32_t repeats, double wait_s) {
  if (warmup < 1) throw std::invalid_argument("time_plans: warmup must be >= 1");
  const std::size_t runs = (warmup + repeats) * plans.size();
  for (ActivityId id = 0; id < runs; ++id) queue.submit(id, 0, plans[id % plans.size()]);
  std::vector<double> ends(runs, 0.0);
  std::size_t done = 0;
  while (done < runs) {
    queue.wait(wait_s);
    for (const Completion& c : queue.poll()) {
      ends.at(c.id) = c.end_s;
      ++done;
    }
  }
  std::vector<std::vector<double>> times(plans.size());
  for (std::size_t i = warmup * plans.size(); i < runs; ++i) times[i % plans.size()].push_back(ends[i] - ends[i - 1]);
  return times;
}

std::vector<double> time_plan(ComputeQueue& queue, const KernelPlan& plan, std::uint32_t warmup,
                              std::uint32_t repeats, double wait_s) {
  return time_plans(queue, std::span(&plan, 1), warmup, repeats, wait_s).front();
}

namespace {

proto::ComputeOp layer_op(const proto::ModelShape& model, const GridPoint& point, proto::Phase phase) {
  proto::ComputeOp op;
  op.set_phase(phase);
  op.set_first_layer(model.layers() > 1 ? 1 : 0);  // embedding bytes left out where the model has a second layer
  op.set_layer_count(1);
  op.set_shards(1);
  for (std::uint32_t i = 0; i < point.segments; ++i) add_segment(op, Segment{point.tokens, point.context_tokens});
  return op;
}

// The LM head's kernels at the layer point `op` (the last stage's vocabulary
// GEMM, which the layer fits do not cover).
KernelPlan lm_head_plan(const proto::ModelShape& model, proto::ComputeOp op) {
  op.set_first_layer(model.layers() - 1);
  op.set_layer_part(proto::POST_ATTENTION);
  op.set_includes_lm_head(true);
  return plan_kernels(model, op, {});
}

// InputError (the memory guard's) when `queue` would hold more host memory
// than the limit for the layer plans of `grid` (ComputeQueue::host_bytes).
void check_compute_bench_memory(const proto::ModelShape& model, const std::vector<GridPoint>& grid,
                                const ComputeQueue& queue) {
  KernelBuffers buffers;
  for (proto::Phase phase : {proto::FORWARD, proto::BACKWARD}) {
    for (const GridPoint& point : grid) {
      const proto::ComputeOp op = layer_op(model, point, phase);
      buffers.grow(plan_kernels(model, op, {}));
      if (point.segments == 1) buffers.grow(lm_head_plan(model, op));
    }
  }
  check_memory_estimate("eppsim-bench compute: the grid's largest layer", queue.host_bytes(buffers),
                        "give smaller --tokens, --context or --packed, or raise --max-memory");
}

}  // namespace

google::protobuf::Struct measure_compute(const proto::ModelShape& model, const std::vector<GridPoint>& grid,
                                         ComputeQueue& queue, const std::string& backend, const std::string& device,
                                         std::uint32_t warmup, std::uint32_t repeats) {
  pb::Struct doc;
  auto& top = *doc.mutable_fields();
  top["eppsim_bench"] = number(1);
  top["kind"] = text("compute");
  top["backend"] = text(backend);
  top["device"] = text(device);
  top["ranks"] = number(1);
  pb::Struct model_json;
  from_json(to_json(model), &model_json, "model shape");
  *top["model"].mutable_struct_value() = model_json;
  // Every row's plan, timed together in rounds (time_plans) once all are known.
  std::vector<pb::Struct> rows;
  std::vector<KernelPlan> plans;

  std::set<std::tuple<std::string, int, std::uint64_t, std::uint64_t, std::uint64_t>> gemms_done;
  for (proto::Phase phase : {proto::FORWARD, proto::BACKWARD}) {
    for (const GridPoint& point : grid) {
      const proto::ComputeOp op = layer_op(model, point, phase);
      const KernelPlan plan = plan_kernels(model, op, {});
      const char* pass = pass_name(plan.pass);

      pb::Struct layer_row;
      auto& lf = *layer_row.mutable_fields();
      lf["kernel"] = text("layer");
      lf["pass"] = text(pass);
      lf["tokens"] = number(static_cast<double>(point.tokens));
      lf["context_tokens"] = number(static_cast<double>(point.context_tokens));
      lf["segments"] = number(point.segments);
      lf["flops"] = number(plan_flops(plan));
      rows.push_back(std::move(layer_row));
      plans.push_back(plan);
      // A packed layer's kernels are those of its sequences, timed on their own rows.
      if (point.segments > 1) continue;

      // The layer's GEMMs and the LM head's (the last stage's vocabulary GEMM,
      // which the layer fits do not cover), each once per pass and shape.
      std::vector<GemmShape> gemms = plan.gemms;
      for (const GemmShape& g : lm_head_plan(model, op).gemms) {
        if (g.name.starts_with("lm_head")) gemms.push_back(g);
      }
      for (const GemmShape& g : gemms) {
        if (!gemms_done.emplace(std::string(g.name), static_cast<int>(plan.pass), g.m, g.n, g.k).second) continue;
        KernelPlan alone;
        alone.pass = plan.pass;
        alone.gemms.push_back(g);
        alone.gemms.back().count = 1;
        pb::Struct row;
        auto& f = *row.mutable_fields();
        f["kernel"] = text("gemm");
        f["name"] = text(g.name);
        f["pass"] = text(pass);
        f["tokens"] = number(static_cast<double>(point.tokens));
        f["m"] = number(static_cast<double>(g.m));
        f["n"] = number(static_cast<double>(g.n));
        f["k"] = number(static_cast<double>(g.k));
        f["flops"] = number(alone.gemms.back().flops());
        rows.push_back(std::move(row));
        plans.push_back(std::move(alone));
      }
      for (const AttentionShape& a : plan.attention) {
        KernelPlan alone;
        alone.pass = plan.pass;
        alone.attention.push_back(a);
        alone.attention.back().count = 1;
        pb::Struct row;
        auto& f = *row.mutable_fields();
        f["kernel"] = text("attention");
        f["pass"] = text(pass);
        f["tokens"] = number(static_cast<double>(a.tokens));
        f["context_tokens"] = number(static_cast<double>(a.context_tokens));
        f["heads"] = number(a.heads);
        f["kv_heads"] = number(a.kv_heads);
        f["head_dim"] = number(a.head_dim);
        f["flops"] = number(attention_flops(alone.attention.back(), alone.pass));
        rows.push_back(std::move(row));
        plans.push_back(std::move(alone));
      }
    }
  }
  const std::vector<std::vector<double>> times = time_plans(queue, plans, warmup, repeats);
  pb::ListValue& results = *top["results"].mutable_list_value();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    add_times(rows[i], times[i]);
    *results.add_values()->mutable_struct_value() = std::move(rows[i]);
  }
  return doc;
}

std::unique_ptr<ComputeQueue> make_bench_compute_queue(const std::string& backend, const StepClock& clock, std::string& device,
                                                       std::string& attention) {
  if (backend == "cpu") {
    attention.clear();
    CpuComputeOptions options;
    device = cpu_device_name(options.blas_threads);
    return make_cpu_compute_queue(clock, options);
  }
#ifdef EPPSIM_WITH_CUDA
  CudaComputeOptions options;
  if (!attention.empty()) options.attention = parse_cuda_attention(attention, "eppsim-bench compute: --attention");
  attention = cuda_attention_name(options.attention);
  device = cuda_device_name(options.device);
  return make_cuda_compute_queue(clock, options);
#else
  throw InputError("eppsim-bench: --backend cuda: this build has no CUDA backend (CMake found no nvcc and NCCL)");
#endif
}

std::string cpu_device_name(int threads) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, name = "unknown CPU";
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      const std::size_t colon = line.find(':');
      if (colon != std::string::npos) name = line.substr(line.find_first_not_of(" \t", colon + 1));
      break;
    }
  }
  return fmt::format("{} ({} thread{})", name, threads, threads == 1 ? "" : "s");
}

int run_compute_bench(int argc, char** argv) {
  const ComputeBenchOptions options = parse_compute_bench_args(argc, argv);
  const ResolvedScenario scenario = load_scenario(options.scenario);
  if (scenario.workload.collective) {
    throw InputError(fmt::format("{}: workload.collective: eppsim-bench compute needs a training workload with a model",
                                 scenario.source));
  }
  const proto::ModelShape model = to_model_shape(scenario.model);
  const std::vector<GridPoint> grid = compute_bench_grid(options, scenario.workload.max_length);
  StepClock clock;
  std::string device, attention = options.attention;
  const std::unique_ptr<ComputeQueue> queue = make_bench_compute_queue(options.backend, clock, device, attention);
  check_compute_bench_memory(model, grid, *queue);  // the queues allocate nothing before their first op
  pb::Struct doc = measure_compute(model, grid, *queue, options.backend, device, options.warmup, options.repeats);
  if (!attention.empty()) (*doc.mutable_fields())["attention"] = text(attention);
  write_file_atomically(options.out, to_json(doc));
  return 0;
}

}  // namespace eppsim::runtime

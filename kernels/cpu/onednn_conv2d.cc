#include "kernels/cpu/onednn_conv2d.h"

#include <omp.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include "absl/strings/str_format.h"
#include "dnnl.hpp"
#include "kernels/cpu/im2col_conv2d.h"

namespace hogwild::cpu {
namespace {

using dnnl::memory;
using Tag = memory::format_tag;

// The oneDNN exception as a status naming the call that threw and where.
absl::Status ToStatus(const dnnl::error& e, const char* call, int line) {
  const std::string msg = absl::StrFormat("oneDNN %s failed at %s:%d (dnnl_status_t %d): %s", call,
                                          __FILE__, line, static_cast<int>(e.status), e.what());
  return e.status == dnnl_out_of_memory ? absl::ResourceExhaustedError(msg)
                                        : absl::InternalError(msg);
}

// One worker per core: oneDNN must run inline on the calling thread. libgomp keeps the thread
// count per thread (in the thread's implicit task), so this is set once on each calling thread.
void PinToOneThread() {
  thread_local const bool pinned = [] {
    omp_set_num_threads(1);
    return true;
  }();
  (void)pinned;
}

// An operand in the primitive's layout: `blocked` holds its own buffer and `reorder` copies from
// (inputs) or to (outputs) the caller's plain array, when the primitive's layout differs from
// the caller's; otherwise both are empty and the primitive reads or writes the caller's array.
struct Staged {
  memory::desc user;
  memory blocked;
  dnnl::reorder reorder;
};

Staged Stage(const dnnl::engine& engine, const memory::desc& user, const memory::desc& wanted,
             bool input) {
  Staged s{user, {}, {}};
  if (wanted == user) return s;
  s.blocked = memory(wanted, engine);
  s.reorder = input ? dnnl::reorder(dnnl::reorder::primitive_desc(engine, user, engine, wanted))
                    : dnnl::reorder(dnnl::reorder::primitive_desc(engine, wanted, engine, user));
  return s;
}

memory ScratchpadFor(const dnnl::engine& engine, const memory::desc& md) {
  return memory(md, engine);
}

}  // namespace

struct OnednnConv2d::Impl {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  std::vector<float> col_scratch;  // the im2col filter gradient's columns (Plan::plain_x)
  std::map<std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                      int64_t, int64_t, int64_t>,
           std::unique_ptr<Plan>>
      plans;

  // The primitive's operand: the caller's array, or `st.blocked` after reordering into it.
  memory In(const Staged& st, const float* user) {
    memory m(st.user, engine, const_cast<float*>(user));
    if (!st.blocked) return m;
    st.reorder.execute(stream, {{DNNL_ARG_FROM, m}, {DNNL_ARG_TO, st.blocked}});
    return st.blocked;
  }
  memory Out(const Staged& st, float* user) {
    return st.blocked ? st.blocked : memory(st.user, engine, user);
  }
  void Finish(const Staged& st, float* user) {
    if (!st.blocked) return;
    memory m(st.user, engine, user);
    st.reorder.execute(stream, {{DNNL_ARG_FROM, st.blocked}, {DNNL_ARG_TO, m}});
  }
};

struct OnednnConv2d::Plan {
  dnnl::convolution_forward forward;
  dnnl::convolution_backward_data backward_data;
  dnnl::convolution_backward_weights backward_weights;
  // Forward: x, w, y; backward data: dy, w, dx; backward weights: x, dy, dw.
  Staged fwd_x, fwd_w, fwd_y, bd_dy, bd_w, bd_dx, bw_x, bw_dy, bw_dw;
  memory::desc bias_md;
  memory fwd_scratch, bd_scratch, bw_scratch;
  std::vector<float> zero_bias, db_sink;  // [F]: for bias == null and db == null
  // The forward reads x in NCHW (a first layer, C < 8); the filter gradient is then im2col + GEMM.
  bool plain_x = false;
  // Both gradients read dy in the same blocked layout: the data pass reuses the weights pass's.
  bool share_dy = false;
};

OnednnConv2d::OnednnConv2d(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
OnednnConv2d::~OnednnConv2d() = default;

absl::StatusOr<std::unique_ptr<OnednnConv2d>> OnednnConv2d::Create() {
  try {
    return std::unique_ptr<OnednnConv2d>(new OnednnConv2d(std::make_unique<Impl>()));
  } catch (const dnnl::error& e) {
    return ToStatus(e, "engine(cpu, 0)", __LINE__);
  }
}

OnednnConv2d::Plan& OnednnConv2d::GetPlan(const Conv2dShape& s) {
  const auto key = std::make_tuple(s.batch, s.in_channels, s.in_height, s.in_width, s.out_channels,
                                   s.kernel_height, s.kernel_width, s.stride_height, s.stride_width,
                                   s.pad_height, s.pad_width);
  std::unique_ptr<Plan>& slot = impl_->plans[key];
  if (slot != nullptr) return *slot;

  const dnnl::engine& engine = impl_->engine;
  const memory::dims x_dims{s.batch, s.in_channels, s.in_height, s.in_width},
      w_dims{s.out_channels, s.in_channels, s.kernel_height, s.kernel_width},
      y_dims{s.batch, s.out_channels, s.out_height(), s.out_width()}, b_dims{s.out_channels},
      strides{s.stride_height, s.stride_width}, pad{s.pad_height, s.pad_width};
  // Symmetric padding, as PyTorch: oneDNN checks (H + 2 * pad - KH) / stride + 1 == OH with the
  // same floor, so the rows a stride does not reach are dropped as in conv_shapes.h.
  const auto f32 = memory::data_type::f32;
  const memory::desc x_any(x_dims, f32, Tag::any), w_any(w_dims, f32, Tag::any),
      y_any(y_dims, f32, Tag::any), b_md(b_dims, f32, Tag::x);
  const memory::desc x_user(x_dims, f32, Tag::nchw), w_user(w_dims, f32, Tag::oihw),
      y_user(y_dims, f32, Tag::nchw);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);

  auto plan = std::make_unique<Plan>();
  const auto algo = dnnl::algorithm::convolution_direct;
  const dnnl::convolution_forward::primitive_desc fwd_pd(
      dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, algo, x_any, w_any, b_md,
                                      y_any, strides, pad, pad),
      attr, engine);
  const dnnl::convolution_backward_data::primitive_desc bd_pd(
      dnnl::convolution_backward_data::desc(algo, x_any, w_any, y_any, strides, pad, pad), attr,
      engine, fwd_pd);
  // When the forward reads x in NCHW (a first layer, C < 8), oneDNN 2.6 has no AVX2 JIT kernel
  // for the filter gradient: with x in NCHW it picks gemm:jit (its own im2col + GEMM, per
  // example), slower than the backend's (im2col_conv2d.h; the measurement is in
  // benchmarks/results/2026-12-02-cnn.md), and with `any` it pads C to 8, multiplying the work. So
  // that pass runs im2col + OpenBLAS, and no weights primitive is built.
  plan->plain_x = fwd_pd.src_desc() == x_user;
  if (!plan->plain_x) {
    const dnnl::convolution_backward_weights::primitive_desc bw_pd(
        dnnl::convolution_backward_weights::desc(algo, x_any, w_any, b_md, y_any, strides, pad,
                                                 pad),
        attr, engine, fwd_pd);
    plan->backward_weights = dnnl::convolution_backward_weights(bw_pd);
    plan->bw_x = Stage(engine, x_user, bw_pd.src_desc(), true);
    plan->bw_dy = Stage(engine, y_user, bw_pd.diff_dst_desc(), true);
    plan->bw_dw = Stage(engine, w_user, bw_pd.diff_weights_desc(), false);
    plan->bw_scratch = ScratchpadFor(engine, bw_pd.scratchpad_desc());
  }
  plan->forward = dnnl::convolution_forward(fwd_pd);
  plan->backward_data = dnnl::convolution_backward_data(bd_pd);
  plan->fwd_x = Stage(engine, x_user, fwd_pd.src_desc(), true);
  plan->fwd_w = Stage(engine, w_user, fwd_pd.weights_desc(), true);
  plan->fwd_y = Stage(engine, y_user, fwd_pd.dst_desc(), false);
  plan->bd_dy = Stage(engine, y_user, bd_pd.diff_dst_desc(), true);
  plan->bd_w = Stage(engine, w_user, bd_pd.weights_desc(), true);
  plan->bd_dx = Stage(engine, x_user, bd_pd.diff_src_desc(), false);
  plan->share_dy = !plan->plain_x && plan->bd_dy.blocked && plan->bw_dy.blocked &&
                   plan->bd_dy.blocked.get_desc() == plan->bw_dy.blocked.get_desc();
  plan->bias_md = b_md;
  plan->fwd_scratch = ScratchpadFor(engine, fwd_pd.scratchpad_desc());
  plan->bd_scratch = ScratchpadFor(engine, bd_pd.scratchpad_desc());
  plan->zero_bias.assign(s.out_channels, 0.0f);
  plan->db_sink.assign(s.out_channels, 0.0f);
  slot = std::move(plan);
  return *slot;
}

absl::Status OnednnConv2d::Forward(const Conv2dShape& s, const float* x, const float* w,
                                   const float* bias, float* y) {
  if (s.batch == 0) return absl::OkStatus();
  PinToOneThread();
  try {
    Plan& p = GetPlan(s);
    Impl& d = *impl_;
    const memory b(p.bias_md, d.engine, const_cast<float*>(bias ? bias : p.zero_bias.data()));
    p.forward.execute(d.stream, {{DNNL_ARG_SRC, d.In(p.fwd_x, x)},
                                 {DNNL_ARG_WEIGHTS, d.In(p.fwd_w, w)},
                                 {DNNL_ARG_BIAS, b},
                                 {DNNL_ARG_DST, d.Out(p.fwd_y, y)},
                                 {DNNL_ARG_SCRATCHPAD, p.fwd_scratch}});
    d.Finish(p.fwd_y, y);
    d.stream.wait();
  } catch (const dnnl::error& e) {
    return ToStatus(e, "convolution_forward", __LINE__);
  }
  return absl::OkStatus();
}

absl::Status OnednnConv2d::BackwardData(const Conv2dShape& s, const float* w, const float* dy,
                                        float* dx) {
  if (s.batch == 0) return absl::OkStatus();
  PinToOneThread();
  try {
    Plan& p = GetPlan(s);
    Impl& d = *impl_;
    p.backward_data.execute(d.stream, {{DNNL_ARG_DIFF_DST, d.In(p.bd_dy, dy)},
                                       {DNNL_ARG_WEIGHTS, d.In(p.bd_w, w)},
                                       {DNNL_ARG_DIFF_SRC, d.Out(p.bd_dx, dx)},
                                       {DNNL_ARG_SCRATCHPAD, p.bd_scratch}});
    d.Finish(p.bd_dx, dx);
    d.stream.wait();
  } catch (const dnnl::error& e) {
    return ToStatus(e, "convolution_backward_data", __LINE__);
  }
  return absl::OkStatus();
}

absl::Status OnednnConv2d::BackwardFilter(const Conv2dShape& s, const float* x, const float* dy,
                                          float* dw, float* db) {
  return Backward(s, x, /*w=*/nullptr, dy, /*dx=*/nullptr, dw, db);
}

absl::Status OnednnConv2d::Backward(const Conv2dShape& s, const float* x, const float* w,
                                    const float* dy, float* dx, float* dw, float* db) {
  if (s.batch == 0) {
    std::fill(dw, dw + s.filter_size(), 0.0f);
    if (db != nullptr) std::fill(db, db + s.out_channels, 0.0f);
    return absl::OkStatus();
  }
  PinToOneThread();
  const char* call = "convolution_backward_weights";
  try {
    Plan& p = GetPlan(s);
    Impl& d = *impl_;
    memory dy_weights;
    if (p.plain_x) {
      Conv2dBackwardFilter(s, x, dy, dw, db, d.col_scratch);
    } else {
      const memory b(p.bias_md, d.engine, db != nullptr ? db : p.db_sink.data());
      dy_weights = d.In(p.bw_dy, dy);
      p.backward_weights.execute(d.stream, {{DNNL_ARG_SRC, d.In(p.bw_x, x)},
                                            {DNNL_ARG_DIFF_DST, dy_weights},
                                            {DNNL_ARG_DIFF_WEIGHTS, d.Out(p.bw_dw, dw)},
                                            {DNNL_ARG_DIFF_BIAS, b},
                                            {DNNL_ARG_SCRATCHPAD, p.bw_scratch}});
      d.Finish(p.bw_dw, dw);
    }
    if (dx != nullptr) {
      call = "convolution_backward_data";
      // The weights pass's dy, already in this pass's layout, or a conversion of its own.
      p.backward_data.execute(d.stream,
                              {{DNNL_ARG_DIFF_DST, p.share_dy ? dy_weights : d.In(p.bd_dy, dy)},
                               {DNNL_ARG_WEIGHTS, d.In(p.bd_w, w)},
                               {DNNL_ARG_DIFF_SRC, d.Out(p.bd_dx, dx)},
                               {DNNL_ARG_SCRATCHPAD, p.bd_scratch}});
      d.Finish(p.bd_dx, dx);
    }
    d.stream.wait();
  } catch (const dnnl::error& e) {
    return ToStatus(e, call, __LINE__);
  }
  return absl::OkStatus();
}

}  // namespace hogwild::cpu

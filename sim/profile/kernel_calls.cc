#include "sim/profile/kernel_calls.h"

#include <algorithm>
#include <unordered_map>

#include "sim/compute/profiled_attention.h"
#include "sim/core/median.h"
#include "sim/profile/item_stats.h"
#include "sim/profile/profile_import.h"

namespace specsim::profile {
namespace {

// The attention call's shapes in [b, h, s, d] order: query, key, value. False when the operator's
// inputs do not hold them.
bool AttentionShapes(const KinetoOp& o, std::vector<int64_t>* q, std::vector<int64_t>* k, std::vector<int64_t>* v) {
  if (o.input_dims.size() < 3) return false;
  for (int i = 0; i < 3; ++i)
    if (o.input_dims[i].size() != 4) return false;
  *q = o.input_dims[0];
  *k = o.input_dims[1];
  *v = o.input_dims[2];
  if (o.name != "aten::_cudnn_attention_forward")  // FlashAttention's and xFormers' [b, s, h, d]
    for (auto* t : {q, k, v}) std::swap((*t)[1], (*t)[2]);
  return (*k)[0] == (*q)[0] && (*v)[0] == (*q)[0] && (*v)[1] == (*k)[1] && (*v)[2] == (*k)[2] && (*q)[3] == (*k)[3] &&
         (*k)[1] >= 1 && (*q)[1] % (*k)[1] == 0;
}

void CollectAttention(const OperatorCall& c, KernelCallSamples* samples, std::map<std::string, int64_t>* skipped) {
  const KinetoOp& o = *c.op;
  std::vector<int64_t> q, k, v;
  if (!AttentionShapes(o, &q, &k, &v)) {
    ++(*skipped)[o.name + " without consistent query / key / value shapes (profile with record_shapes=True)"];
    return;
  }
  const std::string dtype = o.input_types.empty() ? std::string() : TorchTypeName(o.input_types[0]);
  if (dtype != "BFloat16" && dtype != "Half") {
    ++(*skipped)[o.name + " in " + (dtype.empty() ? std::string("an unrecorded dtype") : dtype) +
                 " (the attention items are bf16 / fp16)"];
    return;
  }
  const std::string impl = compute::ProfiledAttentionName(c.longest->name, c.kernels > 1);
  KernelCallSamples::Samples& s = samples->attention[{impl, q[0], q[1], k[1], q[2], k[2], q[3], v[3], dtype}];
  s.us.push_back(c.ns * 1e-3);
  if (c.kernels > 1) s.main_us.push_back(static_cast<double>(c.longest->duration_ns) * 1e-3);
  s.kernels_per_call = std::max(s.kernels_per_call, c.kernels);
  if (s.main_kernel.empty()) s.main_kernel = c.longest->name;
  if (s.op.empty()) s.op = o.name;
}

void CollectNorm(const OperatorCall& c, KernelCallSamples* samples, std::map<std::string, int64_t>* skipped) {
  const KinetoOp& o = *c.op;
  const auto first = std::find_if(o.input_dims.begin(), o.input_dims.end(),
                                  [](const std::vector<int64_t>& d) { return d.size() == 2; });
  if (first == o.input_dims.end() || (*first)[0] < 1 || (*first)[1] < 1) {
    ++(*skipped)[std::string("norm calls without a [tokens, hidden] input (profile with record_shapes=True)")];
    return;
  }
  const int64_t tokens = (*first)[0], hidden = (*first)[1];
  const auto activations = std::count(o.input_dims.begin(), o.input_dims.end(), *first);
  const bool named_add = o.name.find("add") != std::string::npos && o.name.rfind("triton_", 0) != 0;
  const bool fused = activations >= 3 || named_add;
  const size_t at = static_cast<size_t>(first - o.input_dims.begin());
  const std::string dtype = at < o.input_types.size() ? TorchTypeName(o.input_types[at]) : std::string();
  if (dtype != "BFloat16" && dtype != "Half") {
    ++(*skipped)[std::string("norm calls in ") + (dtype.empty() ? std::string("an unrecorded dtype") : dtype) +
                 " (the norm items are bf16 / fp16)"];
    return;
  }
  KernelCallSamples::Samples& s = samples->norms[{tokens, hidden, fused, dtype}];
  s.us.push_back(c.ns * 1e-3);
  s.kernels_per_call = std::max(s.kernels_per_call, c.kernels);
  if (s.op.empty()) s.op = o.name;
  if (s.main_kernel.empty()) s.main_kernel = c.longest->name;
}

// aten::argmax(self [rows, vocab], dim, keepdim): greedy sampling over the last dimension.
void CollectArgmax(const OperatorCall& c, KernelCallSamples* samples, std::map<std::string, int64_t>* skipped) {
  const KinetoOp& o = *c.op;
  if (o.input_dims.empty() || o.input_dims[0].size() != 2 || o.input_dims[0][0] < 1 || o.input_dims[0][1] < 1) {
    ++(*skipped)[std::string("aten::argmax calls not over [rows, vocab] logits (or without shapes)")];
    return;
  }
  const std::string dtype = o.input_types.empty() ? std::string() : TorchTypeName(o.input_types[0]);
  if (dtype != "BFloat16" && dtype != "Half" && dtype != "Float") {
    ++(*skipped)[std::string("aten::argmax calls in ") + (dtype.empty() ? std::string("an unrecorded dtype") : dtype)];
    return;
  }
  KernelCallSamples::Samples& s = samples->sampling[{o.input_dims[0][0], o.input_dims[0][1], dtype}];
  s.us.push_back(c.ns * 1e-3);
  s.kernels_per_call = std::max(s.kernels_per_call, c.kernels);
  if (s.op.empty()) s.op = o.name;
  if (s.main_kernel.empty()) s.main_kernel = c.longest->name;
}

// Elements of a shape (in a double: no overflow; CollectElementwise bounds the result).
double ElementsOf(const std::vector<int64_t>& shape) {
  double n = 1;
  for (int64_t d : shape) n *= static_cast<double>(d);
  return n;
}

// The broadcast shape's elements of the tensor inputs (numpy's rule: trailing dimensions aligned,
// each 1 or equal); -1 when they do not broadcast.
double BroadcastElements(const std::vector<const std::vector<int64_t>*>& shapes) {
  size_t rank = 0;
  for (const auto* s : shapes) rank = std::max(rank, s->size());
  double n = 1;
  for (size_t i = 0; i < rank; ++i) {
    int64_t d = 1;
    for (const auto* s : shapes) {
      if (i >= s->size()) continue;
      const int64_t x = (*s)[s->size() - 1 - i];
      if (x == d || x == 1) continue;
      if (d != 1) return -1;
      d = x;
    }
    n *= static_cast<double>(d);
  }
  return n;
}

// One pointwise / copy call's output elements, bytes and output dtype (kernel_calls.h); false with
// `why` set when its inputs do not say.
bool ElementwiseShape(const KinetoOp& o, double* elements, double* bytes, std::string* dtype, std::string* why) {
  struct Input {
    const std::vector<int64_t>* shape;
    double elements;
    int size;
    std::string dtype;
  };
  std::vector<Input> in;
  for (size_t i = 0; i < o.input_dims.size(); ++i) {
    const bool list = i < o.input_list_elements.size() && o.input_list_elements[i] > 0;
    if (o.input_dims[i].empty() && !list) continue;  // a scalar (or a 0-dim tensor)
    const std::string t = i < o.input_types.size() ? TorchTypeName(o.input_types[i]) : std::string();
    const std::string type = (list && t == "TensorList") ? std::string() : t;
    in.push_back({&o.input_dims[i], list ? static_cast<double>(o.input_list_elements[i]) : ElementsOf(o.input_dims[i]),
                  DtypeBytes(type), type});
  }
  // A 0-dim tensor alone (aten::scalar_tensor's fill_): one element of its dtype.
  if (in.empty() && !o.input_dims.empty() && !o.input_types.empty() && DtypeBytes(TorchTypeName(o.input_types[0])) > 0)
    in.push_back({&o.input_dims[0], 1.0, DtypeBytes(TorchTypeName(o.input_types[0])), TorchTypeName(o.input_types[0])});
  if (in.empty()) return *why = o.name + " calls without tensor shapes (profile with record_shapes=True)", false;
  if (o.name == "aten::cat") {
    // Kineto records a TensorList's type as "TensorList", not its dtype: 2 bytes (bf16) unless an
    // input names one (kernel_calls.h).
    const int size = in[0].size > 0 ? in[0].size : 2;
    *dtype = in[0].dtype.empty() ? "BFloat16" : in[0].dtype;
    *elements = in[0].elements;
    *bytes = 2 * in[0].elements * size;
    return true;
  }
  for (const Input& x : in)
    if (x.size == 0) return *why = o.name + " calls with a tensor of an unknown dtype", false;
  if (o.name == "aten::copy_" || o.name == "aten::fill_") {
    *dtype = in[0].dtype;
    *elements = in[0].elements;
    *bytes = in[0].elements * in[0].size + (o.name == "aten::copy_" && in.size() > 1 ? in[1].elements * in[1].size : 0);
    return true;
  }
  std::vector<const std::vector<int64_t>*> shapes;
  const Input* largest = &in[0];
  double read = 0;
  for (const Input& x : in) {
    shapes.push_back(x.shape);
    read += x.elements * x.size;
    if (x.elements > largest->elements) largest = &x;
  }
  *elements = BroadcastElements(shapes);
  if (*elements < 0) return *why = o.name + " calls whose input shapes do not broadcast", false;
  *dtype = largest->dtype;
  int out_size = largest->size;
  // aten::where(condition, a, b): the output takes the values' dtype (a 0-dim value tensor records no
  // shape), not the boolean condition's.
  if (o.name == "aten::where")
    for (size_t i = 1; i < o.input_types.size(); ++i) {
      const std::string t = TorchTypeName(o.input_types[i]);
      if (t != "Bool" && DtypeBytes(t) > 0) {
        *dtype = t;
        out_size = DtypeBytes(t);
        break;
      }
    }
  *bytes = read + *elements * out_size;
  return true;
}

void CollectElementwise(const OperatorCall& c, KernelCallSamples* samples, std::map<std::string, int64_t>* skipped) {
  double elements = 0, bytes = 0;
  std::string dtype, why;
  if (!ElementwiseShape(*c.op, &elements, &bytes, &dtype, &why)) {
    ++(*skipped)[why];
    return;
  }
  // ElementwiseParams' ranges (trace.proto): at most 1e13 elements and 1e14 bytes.
  if (elements < 1 || bytes < 1 || elements > 1e13 || bytes > 1e14) {
    ++(*skipped)[c.op->name + " calls of no elements, or past 1e13 elements or 1e14 bytes"];
    return;
  }
  const bool strided = c.longest->name.find("vectorized_elementwise_kernel") == std::string::npos;
  KernelCallSamples::Samples& s =
      samples->elementwise[{c.op->name, static_cast<int64_t>(elements), static_cast<int64_t>(bytes), dtype, strided}];
  s.us.push_back(c.ns * 1e-3);
  s.kernels_per_call = std::max(s.kernels_per_call, c.kernels);
  if (s.op.empty()) s.op = c.op->name;
  if (s.main_kernel.empty()) s.main_kernel = c.longest->name;
}

void AddElementwiseItem(const ElementwiseGroup& g, const KernelCallSamples::Samples& s, trace::Trace* tr) {
  trace::Item* it = tr->add_items();
  it->set_suite(trace::SUITE_KERNELS);
  it->set_kind(trace::KIND_ELEMENTWISE);
  it->set_name(g.name);
  trace::ElementwiseParams* p = it->mutable_elementwise();
  p->set_op(g.op);
  p->set_elements(g.elements);
  p->set_bytes(g.bytes);
  p->set_dtype(TraceDtype(g.dtype));
  p->set_gpu(0);
  p->set_kernel_time_only(true);
  p->set_strided(g.strided);
  FillStats(s.us, it->mutable_stats());
}

void AddSamplingItem(const SamplingGroup& g, const KernelCallSamples::Samples& s, trace::Trace* tr) {
  trace::Item* it = tr->add_items();
  it->set_suite(trace::SUITE_KERNELS);
  it->set_kind(trace::KIND_SAMPLING);
  it->set_name(g.name);
  trace::SamplingParams* p = it->mutable_sampling();
  p->set_rows(g.rows);
  p->set_vocab(g.vocab);
  p->set_dtype(TraceDtype(g.dtype));
  p->set_op(g.op);
  p->set_gpu(0);
  p->set_kernel_time_only(true);
  FillStats(s.us, it->mutable_stats());
}

AttentionGroup SummariseAttention(const KernelCallSamples::Samples& s, const std::string& impl, int64_t b, int64_t hq,
                                  int64_t hkv, int64_t q, int64_t keys, int64_t d, int64_t dv,
                                  const std::string& dtype) {
  AttentionGroup g;
  g.implementation = impl;
  g.op = s.op;
  g.main_kernel = s.main_kernel;
  g.dtype = dtype;
  g.batch = b;
  g.q_heads = hq;
  g.kv_heads = hkv;
  g.query_tokens = q;
  g.keys = keys;
  g.head_dim = d;
  g.v_head_dim = dv;
  g.calls = static_cast<int>(s.us.size());
  g.kernels_per_call = s.kernels_per_call;
  g.median_us = MedianOf(s.us);
  g.main_median_us = MedianOf(s.main_us);
  g.name = "profile/attention/" + (impl.empty() ? std::string("unrecognised") : impl) + "/b" + std::to_string(b) +
           "/q" + std::to_string(q) + "/h" + std::to_string(hq) + "/kv" + std::to_string(hkv) + "/s" +
           std::to_string(keys) + (dtype == "BFloat16" ? "" : "/" + dtype);
  return g;
}

void AddAttentionItem(const AttentionGroup& g, const KernelCallSamples::Samples& s, trace::Trace* tr) {
  trace::Item* it = tr->add_items();
  it->set_suite(trace::SUITE_KERNELS);
  it->set_kind(trace::KIND_ATTENTION);
  it->set_name(g.name);
  trace::AttentionParams* a = it->mutable_attention();
  a->set_batch(static_cast<int32_t>(g.batch));
  a->set_query_tokens(static_cast<int32_t>(g.query_tokens));
  a->set_context(g.keys);
  a->set_q_heads(static_cast<int32_t>(g.q_heads));
  a->set_kv_heads(static_cast<int32_t>(g.kv_heads));
  a->set_head_dim(static_cast<int32_t>(g.head_dim));
  a->set_v_head_dim(static_cast<int32_t>(g.v_head_dim));
  a->set_dtype(TraceDtype(g.dtype));
  a->set_kv_bytes(g.batch * g.kv_heads * g.keys * (g.head_dim + g.v_head_dim) * DtypeBytes(g.dtype));
  a->set_gpu(0);  // calls of every rank pooled, priced on the first GPU (a TP group runs one GPU model)
  a->set_implementation(g.implementation.empty() ? "profile" : g.implementation);
  a->set_main_kernel_median_us(g.main_median_us);
  a->set_kernel_time_only(true);
  FillStats(s.us, it->mutable_stats());
}

void AddNormItem(const NormGroup& g, const KernelCallSamples::Samples& s, trace::Trace* tr) {
  trace::Item* it = tr->add_items();
  it->set_suite(trace::SUITE_KERNELS);
  it->set_kind(trace::KIND_RMSNORM);
  it->set_name(g.name);
  trace::RmsNormParams* n = it->mutable_rmsnorm();
  n->set_tokens(g.tokens);
  n->set_hidden(static_cast<int32_t>(g.hidden));
  n->set_dtype(TraceDtype(g.dtype));
  n->set_fused_residual(g.fused_residual);
  n->set_gpu(0);
  n->set_kernel_time_only(true);
  FillStats(s.us, it->mutable_stats());
}

}  // namespace

std::vector<OperatorCall> OperatorCalls(const KinetoTrace& t) {
  std::unordered_map<int64_t, const KinetoOp*> op_of;
  for (const KinetoOp& o : t.ops)
    if (o.external_id >= 0) op_of[o.external_id] = &o;
  std::map<int64_t, OperatorCall> by_id;
  for (const KinetoKernel& k : t.kernels) {
    auto op = op_of.find(k.external_id);
    if (k.external_id < 0 || op == op_of.end()) continue;
    OperatorCall& c = by_id[k.external_id];
    c.op = op->second;
    c.ns += static_cast<double>(k.duration_ns);
    ++c.kernels;
    if (c.longest == nullptr || k.duration_ns > c.longest->duration_ns) c.longest = &k;
  }
  std::vector<OperatorCall> calls;
  calls.reserve(by_id.size());
  for (const auto& [id, c] : by_id) calls.push_back(c);
  return calls;
}

void CollectKernelCalls(const std::vector<OperatorCall>& calls, KernelCallSamples* samples,
                        std::map<std::string, int64_t>* skipped) {
  for (const OperatorCall& c : calls) {
    if (IsAttentionOp(c.op->name))
      CollectAttention(c, samples, skipped);
    else if (IsNormOp(c.op->name))
      CollectNorm(c, samples, skipped);
    else if (c.op->name == "aten::argmax")
      CollectArgmax(c, samples, skipped);
    else if (IsElementwiseOp(c.op->name))
      CollectElementwise(c, samples, skipped);
  }
}

void AddKernelCallItems(const KernelCallSamples& samples, KernelCallGroups* groups, trace::Trace* tr) {
  std::vector<AttentionGroup>* attention = &groups->attention;
  std::vector<NormGroup>* norms = &groups->norms;
  std::vector<SamplingGroup>* sampling = &groups->sampling;
  for (const auto& [key, s] : samples.attention) {
    const auto& [impl, b, hq, hkv, q, keys, d, dv, dtype] = key;
    attention->push_back(SummariseAttention(s, impl, b, hq, hkv, q, keys, d, dv, dtype));
    AddAttentionItem(attention->back(), s, tr);
  }
  for (const auto& [key, s] : samples.norms) {
    NormGroup g;
    std::tie(g.tokens, g.hidden, g.fused_residual, g.dtype) = key;
    g.op = s.op;
    g.calls = static_cast<int>(s.us.size());
    g.median_us = MedianOf(s.us);
    g.name = "profile/rmsnorm/t" + std::to_string(g.tokens) + "/h" + std::to_string(g.hidden) +
             (g.fused_residual ? "/residual" : "") + (g.dtype == "BFloat16" ? "" : "/" + g.dtype);
    norms->push_back(g);
    AddNormItem(g, s, tr);
  }
  for (const auto& [key, s] : samples.sampling) {
    SamplingGroup g;
    std::tie(g.rows, g.vocab, g.dtype) = key;
    g.op = s.op;
    g.main_kernel = s.main_kernel;
    g.calls = static_cast<int>(s.us.size());
    g.median_us = MedianOf(s.us);
    g.name = "profile/sampling/argmax/r" + std::to_string(g.rows) + "/v" + std::to_string(g.vocab) +
             (g.dtype == "BFloat16" ? "" : "/" + g.dtype);
    sampling->push_back(g);
    AddSamplingItem(g, s, tr);
  }
  for (const auto& [key, s] : samples.elementwise) {
    ElementwiseGroup g;
    std::tie(g.op, g.elements, g.bytes, g.dtype, g.strided) = key;
    g.main_kernel = s.main_kernel;
    g.calls = static_cast<int>(s.us.size());
    g.median_us = MedianOf(s.us);
    g.name = "profile/elementwise/" + g.op.substr(g.op.rfind(':') + 1) + "/e" + std::to_string(g.elements) + "/b" +
             std::to_string(g.bytes) + (g.dtype == "BFloat16" ? "" : "/" + g.dtype) + (g.strided ? "/strided" : "");
    groups->elementwise.push_back(g);
    AddElementwiseItem(g, s, tr);
  }
}

}  // namespace specsim::profile

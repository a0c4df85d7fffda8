#include "validate/models.h"

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

namespace specsim::validate {
namespace {

namespace pb = google::protobuf;

#ifndef SPECSIM_SOURCE_DIR
#define SPECSIM_SOURCE_DIR ""
#endif

class Collector : public pb::io::ErrorCollector {
 public:
  explicit Collector(std::string file) : file_(std::move(file)) {}
#if GOOGLE_PROTOBUF_VERSION >= 4022000
  void RecordError(int line, pb::io::ColumnNumber col, absl::string_view msg) override {
    Add(line, col, std::string(msg));
  }
  void RecordWarning(int line, pb::io::ColumnNumber col, absl::string_view msg) override {
    Add(line, col, "warning: " + std::string(msg));
  }
#else
  void AddError(int line, pb::io::ColumnNumber col, const std::string& msg) override { Add(line, col, msg); }
  void AddWarning(int line, pb::io::ColumnNumber col, const std::string& msg) override {
    Add(line, col, "warning: " + msg);
  }
#endif
  std::string text() const { return text_; }

 private:
  void Add(int line, int col, const std::string& msg) {
    if (!text_.empty()) text_ += "\n";
    // The tokenizer counts from 0; editors from 1.
    text_ += file_ + ":" + std::to_string(line + 1) + ":" + std::to_string(col + 1) + ": " + msg;
  }
  std::string file_;
  std::string text_;
};

// Collects semantic problems with the line of the offending field (or of the file when absent).
class Checker {
 public:
  Checker(const std::string& file, const pb::TextFormat::ParseInfoTree& tree) : file_(file), tree_(tree) {}

  // `nested` names a sub-message field of Model ("" for top level).
  void Problem(const std::string& nested, const std::string& field, const std::string& what) {
    const pb::Descriptor* d = config::Model::descriptor();
    const pb::TextFormat::ParseInfoTree* t = &tree_;
    std::string label = field;
    if (!nested.empty()) {
      const pb::FieldDescriptor* nf = d->FindFieldByName(nested);
      t = nf ? tree_.GetTreeForNested(nf, -1) : nullptr;
      d = nf ? nf->message_type() : nullptr;
      label = nested + "." + field;
    }
    int line = -1;
    if (t && d) {
      if (const pb::FieldDescriptor* f = d->FindFieldByName(field)) {
        pb::TextFormat::ParseLocation loc = t->GetLocation(f, -1);
        line = loc.line;
      }
    }
    if (!text_.empty()) text_ += "\n";
    text_ += file_ + (line >= 0 ? ":" + std::to_string(line + 1) : "") + ": " + label + ": " + what;
  }
  void Positive(const std::string& nested, const std::string& field, int64_t v) {
    if (v <= 0) Problem(nested, field, v == 0 ? "missing (must be > 0)" : std::to_string(v) + " must be > 0");
  }
  const std::string& text() const { return text_; }

 private:
  std::string file_;
  const pb::TextFormat::ParseInfoTree& tree_;
  std::string text_;
};

std::string Check(const config::Model& m, const std::string& file, const pb::TextFormat::ParseInfoTree& tree) {
  Checker c(file, tree);
  using F = config::Model;
  if (m.family() == F::FAMILY_UNSPECIFIED)
    c.Problem("", "family", "missing (LLAMA, QWEN3, QWEN3_MOE, DEEPSEEK_V3, GPT_OSS or EAGLE3)");
  c.Positive("", "num_layers", m.num_layers());
  c.Positive("", "hidden_size", m.hidden_size());
  c.Positive("", "num_attention_heads", m.num_attention_heads());
  c.Positive("", "vocab_size", m.vocab_size());
  const bool mla = m.family() == F::DEEPSEEK_V3 || m.has_mla();
  const bool moe =
      m.family() == F::QWEN3_MOE || m.family() == F::DEEPSEEK_V3 || m.family() == F::GPT_OSS || m.has_moe();
  if (mla) {
    c.Positive("mla", "q_lora_rank", m.mla().q_lora_rank());
    c.Positive("mla", "kv_lora_rank", m.mla().kv_lora_rank());
    c.Positive("mla", "qk_nope_head_dim", m.mla().qk_nope_head_dim());
    c.Positive("mla", "qk_rope_head_dim", m.mla().qk_rope_head_dim());
    c.Positive("mla", "v_head_dim", m.mla().v_head_dim());
  } else {
    c.Positive("", "num_key_value_heads", m.num_key_value_heads());
    c.Positive("", "head_dim", m.head_dim());
    if (m.num_key_value_heads() > 0 && m.num_attention_heads() % m.num_key_value_heads() != 0)
      c.Problem("", "num_attention_heads",
                std::to_string(m.num_attention_heads()) + " is not a multiple of num_key_value_heads " +
                    std::to_string(m.num_key_value_heads()));
  }
  if (moe) {
    c.Positive("moe", "num_experts", m.moe().num_experts());
    c.Positive("moe", "experts_per_token", m.moe().experts_per_token());
    c.Positive("moe", "moe_intermediate_size", m.moe().moe_intermediate_size());
    if (m.moe().experts_per_token() > m.moe().num_experts() && m.moe().num_experts() > 0)
      c.Problem("moe", "experts_per_token",
                std::to_string(m.moe().experts_per_token()) + " exceeds num_experts " +
                    std::to_string(m.moe().num_experts()));
    if (m.moe().first_dense_layers() < 0 || m.moe().first_dense_layers() > m.num_layers())
      c.Problem("moe", "first_dense_layers",
                std::to_string(m.moe().first_dense_layers()) + " is outside 0..num_layers");
    if (m.moe().first_dense_layers() > 0) c.Positive("", "intermediate_size", m.intermediate_size());
  } else {
    c.Positive("", "intermediate_size", m.intermediate_size());
  }
  if (m.family() == F::EAGLE3) {
    c.Positive("eagle3", "draft_vocab_size", m.eagle3().draft_vocab_size());
    if (m.eagle3().target().empty()) c.Problem("eagle3", "target", "missing (the target model's name)");
  }
  return c.text();
}

bool IsFile(const std::string& p) {
  std::ifstream f(p);
  return f.good();
}

}  // namespace

std::vector<std::string> DefaultModelRoots() {
  std::vector<std::string> roots;
  char buf[4096];
  if (getcwd(buf, sizeof(buf))) {
    std::string d = buf;
    while (true) {
      roots.push_back(d);
      if (d == "/" || d.empty()) break;
      auto slash = d.find_last_of('/');
      d = slash == 0 ? "/" : d.substr(0, slash);
    }
  }
  std::string src = SPECSIM_SOURCE_DIR;
  if (!src.empty() && std::find(roots.begin(), roots.end(), src) == roots.end()) roots.push_back(src);
  return roots;
}

std::string ModelStem(const std::string& path) {
  std::string s = path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1);
  const std::string ext = ".textproto";
  if (s.size() > ext.size() && s.compare(s.size() - ext.size(), ext.size(), ext) == 0) s.resize(s.size() - ext.size());
  return s;
}

StatusOr<std::string> ResolveModelPath(const std::string& arg, const std::vector<std::string>& roots) {
  if (arg.empty()) return InvalidArgument("empty model name");
  const std::string ext = ".textproto";
  const bool is_path = arg.find('/') != std::string::npos ||
                       (arg.size() >= ext.size() && arg.compare(arg.size() - ext.size(), ext.size(), ext) == 0);
  if (is_path) {
    if (!IsFile(arg)) return Status(StatusCode::kNotFound, arg + ": no such model file");
    return arg;
  }
  std::string tried;
  for (const auto& r : roots) {
    std::string p = (r == "/" ? "" : r) + "/models/" + arg + ext;
    if (IsFile(p)) return p;
    tried += (tried.empty() ? "" : ", ") + p;
  }
  return Status(StatusCode::kNotFound, "unknown model '" + arg + "': none of " + tried +
                                           " exists (give a models/*.textproto path or the file's stem)");
}

StatusOr<config::Model> ParseModelText(const std::string& text, const std::string& file) {
  config::Model m;
  pb::TextFormat::Parser parser;
  Collector errors(file);
  pb::TextFormat::ParseInfoTree tree;
  parser.RecordErrorsTo(&errors);
  parser.WriteLocationsTo(&tree);
  if (!parser.ParseFromString(text, &m)) {
    std::string e = errors.text();
    return InvalidArgument(e.empty() ? file + ": not a text-format specsim.config.Model" : e);
  }
  std::string problems = Check(m, file, tree);
  if (!problems.empty()) return InvalidArgument(problems);
  return m;
}

StatusOr<config::Model> LoadModelFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status(StatusCode::kNotFound, path + ": cannot open");
  std::stringstream ss;
  ss << f.rdbuf();
  if (f.bad()) return Status(StatusCode::kInternal, path + ": read error");
  return ParseModelText(ss.str(), path);
}

StatusOr<trace::ModelShape> ShapeFromConfig(const config::Model& c, const std::string& file) {
  if (c.family() == config::Model::EAGLE3)
    return InvalidArgument(file + ": an EAGLE-3 head (family EAGLE3) is a draft: give it with --draft-model");
  trace::ModelShape m;
  m.set_name(ModelStem(file));
  m.set_source(c.source().empty() ? file : c.source());
  m.set_file(file);
  *m.mutable_config() = c;
  m.set_layers(c.num_layers());
  m.set_hidden(c.hidden_size());
  m.set_heads(c.num_attention_heads());
  m.set_kv_heads(c.num_key_value_heads());
  m.set_head_dim(c.head_dim());
  m.set_intermediate(c.intermediate_size());
  m.set_vocab(c.vocab_size());
  if (c.family() == config::Model::DEEPSEEK_V3 || c.has_mla()) {
    m.set_mla(true);
    m.set_q_lora_rank(c.mla().q_lora_rank());
    m.set_kv_lora_rank(c.mla().kv_lora_rank());
    m.set_qk_nope_head_dim(c.mla().qk_nope_head_dim());
    m.set_qk_rope_head_dim(c.mla().qk_rope_head_dim());
    m.set_v_head_dim(c.mla().v_head_dim());
    if (m.head_dim() == 0) m.set_head_dim(c.mla().qk_nope_head_dim() + c.mla().qk_rope_head_dim());
  }
  if (c.moe().num_experts() > 0) {
    m.set_num_experts(c.moe().num_experts());
    m.set_num_shared_experts(c.moe().num_shared_experts());
    m.set_experts_per_token(c.moe().experts_per_token());
    m.set_moe_intermediate(c.moe().moe_intermediate_size());
    m.set_first_dense_layers(c.moe().first_dense_layers());
  }
  // The draft approximation (no --draft-model head for this model): an EAGLE-3-shaped head at the
  // target's hidden size, a 32000-token draft vocabulary, GQA attention with the target's q heads
  // (MLA targets: 8 KV heads of 128) and a dense MLP of the target's intermediate size (MoE models
  // without one: the expert size).
  m.set_draft("approximation");
  m.set_draft_vocab(32000);
  m.set_draft_heads(c.num_attention_heads());
  if (m.mla()) {
    m.set_draft_kv_heads(std::min(8, c.num_attention_heads()));
    m.set_draft_head_dim(128);
  } else {
    m.set_draft_kv_heads(c.num_key_value_heads());
    m.set_draft_head_dim(c.head_dim());
  }
  m.set_draft_intermediate(c.intermediate_size() > 0 ? c.intermediate_size() : c.moe().moe_intermediate_size());
  return m;
}

StatusOr<trace::ModelShape> LoadModel(const std::string& arg, const std::vector<std::string>& roots) {
  ASSIGN_OR_RETURN(std::string path, ResolveModelPath(arg, roots));
  ASSIGN_OR_RETURN(config::Model c, LoadModelFile(path));
  return ShapeFromConfig(c, path);
}

Status AttachEagle3Draft(const config::Model& head, const std::string& file, trace::ModelShape* t) {
  if (head.family() != config::Model::EAGLE3)
    return InvalidArgument(file + ": family " + config::Model::Family_Name(head.family()) +
                           " is not an EAGLE-3 head (EAGLE3)");
  if (head.hidden_size() != t->hidden())
    return InvalidArgument(file + ": hidden_size " + std::to_string(head.hidden_size()) + " differs from " + t->name() +
                           "'s " + std::to_string(t->hidden()));
  t->set_draft("eagle3");
  t->set_draft_file(file);
  *t->mutable_draft_config() = head;
  t->set_draft_vocab(head.eagle3().draft_vocab_size());
  t->set_draft_heads(head.num_attention_heads());
  t->set_draft_kv_heads(head.num_key_value_heads());
  t->set_draft_head_dim(head.head_dim());
  t->set_draft_intermediate(head.intermediate_size());
  return Status::Ok();
}

Status AttachDraftModels(const std::vector<std::string>& args, const std::vector<std::string>& roots,
                         std::vector<trace::ModelShape>* models) {
  for (const auto& arg : args) {
    ASSIGN_OR_RETURN(std::string path, ResolveModelPath(arg, roots));
    ASSIGN_OR_RETURN(config::Model head, LoadModelFile(path));
    if (head.family() != config::Model::EAGLE3)
      return InvalidArgument(path + ": family " + config::Model::Family_Name(head.family()) +
                             " is not an EAGLE-3 head (EAGLE3)");
    int matched = 0;
    std::string names;
    for (auto& m : *models) {
      names += (names.empty() ? "" : ", ") + m.config().name();
      if (head.eagle3().target() == m.config().name() || head.eagle3().target() == m.name()) {
        RETURN_IF_ERROR(AttachEagle3Draft(head, path, &m));
        ++matched;
      }
    }
    if (matched == 0)
      return InvalidArgument(path + ": eagle3.target \"" + head.eagle3().target() +
                             "\" is none of the --model models (" + names + ")");
  }
  return Status::Ok();
}

StatusOr<std::vector<GemmShape>> LayerGemms(const trace::ModelShape& m, int tp) {
  if (tp < 1) return InvalidArgument("tp must be >= 1");
  auto divides = [&](int64_t v, const char* what) -> Status {
    if (v % tp != 0)
      return InvalidArgument(m.name() + ": tp " + std::to_string(tp) + " does not divide " + what + " " +
                             std::to_string(v));
    return Status::Ok();
  };
  RETURN_IF_ERROR(divides(m.heads(), "heads"));
  if (m.intermediate() > 0) RETURN_IF_ERROR(divides(m.intermediate(), "intermediate"));
  if (m.num_experts() > 0) RETURN_IF_ERROR(divides(m.moe_intermediate(), "moe_intermediate"));
  const int64_t h = m.hidden();
  const int64_t heads = m.heads() / tp;
  const int64_t vocab = (m.vocab() + tp - 1) / tp;
  std::vector<GemmShape> g;
  if (m.mla()) {
    const int64_t qk = m.qk_nope_head_dim() + m.qk_rope_head_dim();
    g.push_back({"q_a", m.q_lora_rank(), h});
    g.push_back({"q_b", heads * qk, m.q_lora_rank()});
    g.push_back({"kv_a", m.kv_lora_rank() + m.qk_rope_head_dim(), h});
    g.push_back({"kv_b", heads * (m.qk_nope_head_dim() + m.v_head_dim()), m.kv_lora_rank()});
    g.push_back({"o", h, heads * m.v_head_dim()});
  } else {
    const int64_t kv = m.kv_heads() >= tp ? m.kv_heads() / tp : 1;
    g.push_back({"qkv", (heads + 2 * kv) * m.head_dim(), h});
    g.push_back({"o", h, heads * m.head_dim()});
  }
  const bool has_dense = m.num_experts() == 0 || m.first_dense_layers() > 0;
  if (has_dense) {
    g.push_back({"gate_up", 2 * static_cast<int64_t>(m.intermediate()) / tp, h});
    g.push_back({"down", h, m.intermediate() / tp});
  }
  if (m.num_experts() > 0) {
    const int64_t mi = m.moe_intermediate() / tp;
    g.push_back({"router", m.num_experts(), h});
    g.push_back({"expert_gate_up", 2 * mi, h});
    g.push_back({"expert_down", h, mi});
    if (m.num_shared_experts() > 0) {
      g.push_back({"shared_gate_up", 2 * mi * m.num_shared_experts(), h});
      g.push_back({"shared_down", h, mi * m.num_shared_experts()});
    }
  }
  g.push_back({"lm_head", vocab, h});
  return g;
}

StatusOr<AttentionShape> AttentionFor(const trace::ModelShape& m, int tp) {
  if (tp < 1 || m.heads() % tp != 0) return InvalidArgument(m.name() + ": tp does not divide heads");
  AttentionShape a;
  a.q_heads = m.heads() / tp;
  if (m.mla()) {
    // Absorbed MLA decode: every q head attends one shared latent cache of kv_lora + rope values.
    a.kv_heads = 1;
    a.head_dim = m.kv_lora_rank() + m.qk_rope_head_dim();
    a.v_head_dim = m.kv_lora_rank();
    a.kv_shared = true;
  } else {
    a.kv_heads = m.kv_heads() >= tp ? m.kv_heads() / tp : 1;
    a.head_dim = m.head_dim();
    a.v_head_dim = m.head_dim();
  }
  return a;
}

int64_t LayerWeightBytes(const std::vector<GemmShape>& gemms) {
  int64_t b = 0;
  for (const auto& g : gemms) {
    if (g.op != "lm_head") b += g.n * g.k * 2;
  }
  return b;
}

int ExpectedDistinctExperts(int experts, int top_k, int64_t tokens) {
  if (experts <= 0 || top_k <= 0 || tokens <= 0) return 0;
  const double e = experts;
  const double d = e * (1.0 - std::pow(1.0 - std::min(1.0, top_k / e), static_cast<double>(tokens)));
  int r = static_cast<int>(std::lround(d));
  return std::clamp(r, std::min(top_k, experts), experts);
}

}  // namespace specsim::validate

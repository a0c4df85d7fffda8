#include "sim/advise/published_acceptance.h"

#include <fmt/format.h>

#include <algorithm>

#include "sim/io/model_loader.h"
#include "sim/llm/draft_tree.h"

namespace specsim::advise {

StatusOr<std::string> ApplyPublishedAcceptance(const llm::ModelSpec& target, config::Scenario* base) {
  const config::Speculation& sp = base->speculation();
  const bool mtp = sp.method() == config::Speculation::MTP || sp.draft_model().empty();
  const std::string path = mtp ? base->model() : sp.draft_model();
  llm::ModelSpec draft = target;
  if (!mtp) {
    ASSIGN_OR_RETURN(draft, io::LoadModelFile(path));
  }
  const auto& pub = draft.published_acceptance;
  if (pub.mean_accept_length <= 0)
    return NotFoundError(path + " has no published_acceptance (model.proto PublishedAcceptance)");
  // The top-1 acceptance whose expected tree at the published shape yields the published mean:
  // that shape gets the figure back exactly, the others follow the tree model.
  const llm::SpeculationShape shape{pub.num_steps, std::max(1, pub.topk), pub.num_draft_tokens};
  auto fitted = llm::Top1AcceptanceOfTreeTau(pub.mean_accept_length, shape);
  if (!fitted.ok()) return fitted.status().WithPrefix(path + ": published_acceptance");
  const double a = *fitted;
  config::Speculation* out = base->mutable_speculation();
  if (out->method() == config::Speculation::METHOD_UNSPECIFIED) {
    // A base made from flags for a model with MTP layers: MTP from the published shape.
    out->set_method(mtp ? config::Speculation::MTP : config::Speculation::EAGLE3);
    out->set_num_steps(pub.num_steps);
    out->set_topk(pub.topk);
    out->set_num_draft_tokens(pub.num_draft_tokens);
  }
  out->clear_acceptance_probabilities();
  out->add_acceptance_probabilities(a);
  out->set_acceptance_probabilities_topk(1);
  return fmt::format(
      "the draft's published acceptance from {}: mean accept length {:g} with {}/{}/{} ({}), taken as a top-1 "
      "acceptance of {:.3f} per depth{}",
      path, pub.mean_accept_length, pub.num_steps, pub.topk, pub.num_draft_tokens, pub.source, a,
      pub.topk > 1 ? " (the expected EAGLE-2 tree of that shape gives the published mean back; other shapes "
                     "through the tree model)"
                   : "");
}

}  // namespace specsim::advise

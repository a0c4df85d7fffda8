#include "sim/advise/published_acceptance.h"

#include <fmt/format.h>

#include <algorithm>

#include "sim/io/model_loader.h"
#include "sim/llm/acceptance.h"

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
  const int drafts = std::max(1, std::min(pub.num_steps, pub.num_draft_tokens - 1));
  ASSIGN_OR_RETURN(double a, llm::PerPositionOfMeanAcceptLength(pub.mean_accept_length, drafts));
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
  out->set_acceptance_probabilities_topk(pub.topk);
  return fmt::format(
      "the draft's published acceptance from {}: mean accept length {:g} with {}/{}/{} ({}), taken as {:.3f} per "
      "position{}",
      path, pub.mean_accept_length, pub.num_steps, pub.topk, pub.num_draft_tokens, pub.source, a,
      pub.topk > 1 ? " of a tree's path: chains priced from it are upper bounds" : "");
}

}  // namespace specsim::advise

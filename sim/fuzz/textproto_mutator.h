// A structure-aware mutation for libFuzzer targets whose input is a text-format protobuf (the
// configs) or a binary one (traces): the input is parsed as the target's message, one of its fields is changed the way a
// hostile user or a broken generator changes it, and the message is printed back as text. Byte-level
// mutations of text rarely produce a config that parses with an extreme number in it (nor of a
// binary trace one whose lengths and tags still hold); this does on every call. Issue 43, deliverable 4 (an equivalent of libprotobuf-mutator, which Debian does not
// package).
//
// One mutation per call, chosen by `seed` among:
//   a numeric field (any depth, repeated elements included) set to an extreme: 0, -1, 1, the
//     smallest and largest finite values of its type, +-1e300, +-1e-300, NaN, +-infinity (floating
//     types), its value x 2^k or / 2^k, or its negation;
//   an enum field set to another declared value or to an undeclared number;
//   a bool flipped; a string emptied or set to "x" repeated, or to another field's string;
//   a repeated element removed, or a repeated message element duplicated.
// An input that does not parse is left to libFuzzer's own byte mutation (LLVMFuzzerMutate), as is
// every other call (so that the parser's error paths stay covered).
#pragma once

#include <cstddef>
#include <cstdint>

#include <google/protobuf/message.h>

namespace specsim::fuzz {

// libFuzzer's LLVMFuzzerCustomMutator for a target whose input is text format of `prototype`'s
// type: the new size of `data` (at most `max_size`).
size_t MutateTextProto(const google::protobuf::Message& prototype, uint8_t* data, size_t size, size_t max_size,
                       unsigned int seed);

// The same for a target whose input is `prototype`'s binary wire format (measurement traces): the
// same field mutations, the message serialized back.
size_t MutateBinaryProto(const google::protobuf::Message& prototype, uint8_t* data, size_t size, size_t max_size,
                         unsigned int seed);

}  // namespace specsim::fuzz

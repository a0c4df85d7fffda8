#include "sim/fuzz/textproto_mutator.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

extern "C" size_t LLVMFuzzerMutate(uint8_t* data, size_t size, size_t max_size);

namespace specsim::fuzz {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// Parse errors of the mutator's own parse, dropped (libprotobuf would log each to stderr).
class SilentErrors : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int, google::protobuf::io::ColumnNumber, const std::string&) override {}
};

// One place a mutation can land: a field of a message, and for a repeated field an element.
struct Site {
  Message* message;
  const FieldDescriptor* field;
  int index;  // -1: a singular field
};

// Every set field of `m` and of its set sub-messages, repeated elements one by one.
void CollectSites(Message* m, std::vector<Site>* sites) {
  const Reflection* r = m->GetReflection();
  std::vector<const FieldDescriptor*> fields;
  r->ListFields(*m, &fields);
  for (const FieldDescriptor* f : fields) {
    if (f->is_repeated()) {
      const int n = r->FieldSize(*m, f);
      for (int i = 0; i < n; ++i) {
        sites->push_back({m, f, i});
        if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) CollectSites(r->MutableRepeatedMessage(m, f, i), sites);
      }
    } else {
      sites->push_back({m, f, -1});
      if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) CollectSites(r->MutableMessage(m, f), sites);
    }
  }
}

// `x` as a T: clamped to T's range for an integer type (no overflow), infinite past a floating
// type's range (no out-of-range conversion).
template <typename T>
T Representable(long double x) {
  using L = std::numeric_limits<T>;
  if (std::isnan(x)) return L::has_quiet_NaN ? L::quiet_NaN() : T(0);
  if (x > static_cast<long double>(L::max())) return L::has_infinity ? L::infinity() : L::max();
  if (x < static_cast<long double>(L::lowest())) return L::has_infinity ? -L::infinity() : L::lowest();
  return static_cast<T>(x);
}

// An extreme or scaled version of `v` for a field whose values are T.
template <typename T>
T Extreme(T v, std::mt19937& rng) {
  using L = std::numeric_limits<T>;
  const long double x = static_cast<long double>(v);
  std::vector<T> choices = {T(0),
                            T(1),
                            L::max(),
                            L::lowest(),
                            Representable<T>(x * 2),
                            Representable<T>(x / 2),
                            Representable<T>(x + 1),
                            Representable<T>(x - 1)};
  if (L::is_signed) choices.push_back(T(-1));
  if (L::is_signed) choices.push_back(Representable<T>(-x));
  if constexpr (!L::is_integer) {
    for (long double y : {1e300L, -1e300L, 1e-300L, -1e-300L, x * 1e6L, x * 1e-6L})
      choices.push_back(Representable<T>(y));
    for (T y : {L::quiet_NaN(), L::infinity(), -L::infinity(), L::min(), L::denorm_min()}) choices.push_back(y);
  }
  return choices[std::uniform_int_distribution<size_t>(0, choices.size() - 1)(rng)];
}

// Sets `s` (a scalar, enum, bool or string site) to a mutated value; false when its type has none.
bool MutateScalar(const Site& s, std::mt19937& rng) {
  Message* m = s.message;
  const Reflection* r = m->GetReflection();
  const FieldDescriptor* f = s.field;
  const bool rep = s.index >= 0;
#define SPECSIM_MUTATE(CPP, Get, Set, GetRep, SetRep)                    \
  case FieldDescriptor::CPP:                                             \
    if (rep)                                                             \
      r->SetRep(m, f, s.index, Extreme(r->GetRep(*m, f, s.index), rng)); \
    else                                                                 \
      r->Set(m, f, Extreme(r->Get(*m, f), rng));                         \
    return true;
  switch (f->cpp_type()) {
    SPECSIM_MUTATE(CPPTYPE_INT32, GetInt32, SetInt32, GetRepeatedInt32, SetRepeatedInt32)
    SPECSIM_MUTATE(CPPTYPE_INT64, GetInt64, SetInt64, GetRepeatedInt64, SetRepeatedInt64)
    SPECSIM_MUTATE(CPPTYPE_UINT32, GetUInt32, SetUInt32, GetRepeatedUInt32, SetRepeatedUInt32)
    SPECSIM_MUTATE(CPPTYPE_UINT64, GetUInt64, SetUInt64, GetRepeatedUInt64, SetRepeatedUInt64)
    SPECSIM_MUTATE(CPPTYPE_DOUBLE, GetDouble, SetDouble, GetRepeatedDouble, SetRepeatedDouble)
    SPECSIM_MUTATE(CPPTYPE_FLOAT, GetFloat, SetFloat, GetRepeatedFloat, SetRepeatedFloat)
#undef SPECSIM_MUTATE
    case FieldDescriptor::CPPTYPE_BOOL:
      if (rep)
        r->SetRepeatedBool(m, f, s.index, !r->GetRepeatedBool(*m, f, s.index));
      else
        r->SetBool(m, f, !r->GetBool(*m, f));
      return true;
    case FieldDescriptor::CPPTYPE_ENUM: {
      // Another declared value, or (one time in four) a number the enum does not declare.
      const auto* e = f->enum_type();
      const int number = std::uniform_int_distribution<int>(0, 3)(rng) == 0
                             ? 1000 + std::uniform_int_distribution<int>(0, 1000)(rng)
                             : e->value(std::uniform_int_distribution<int>(0, e->value_count() - 1)(rng))->number();
      // A proto2 (closed) enum cannot hold an undeclared number; the configs are proto3 (open).
      if (f->file()->syntax() == google::protobuf::FileDescriptor::SYNTAX_PROTO2 &&
          e->FindValueByNumber(number) == nullptr)
        return false;
      if (rep)
        r->SetRepeatedEnumValue(m, f, s.index, number);
      else
        r->SetEnumValue(m, f, number);
      return true;
    }
    case FieldDescriptor::CPPTYPE_STRING: {
      const int pick = std::uniform_int_distribution<int>(0, 2)(rng);
      const std::string v = pick == 0 ? "" : pick == 1 ? std::string(4096, 'x') : "configs/../../etc/passwd";
      if (rep)
        r->SetRepeatedString(m, f, s.index, v);
      else
        r->SetString(m, f, v);
      return true;
    }
    case FieldDescriptor::CPPTYPE_MESSAGE: return false;
  }
  return false;
}

// Removes the repeated element of `s`, or duplicates it when it is a message.
bool MutateRepeated(const Site& s, std::mt19937& rng) {
  Message* m = s.message;
  const Reflection* r = m->GetReflection();
  const FieldDescriptor* f = s.field;
  if (s.index < 0) return false;
  if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && std::uniform_int_distribution<int>(0, 1)(rng) == 0) {
    Message* copy = r->AddMessage(m, f);
    copy->CopyFrom(r->GetRepeatedMessage(*m, f, s.index));
    return true;
  }
  const int last = r->FieldSize(*m, f) - 1;
  r->SwapElements(m, f, s.index, last);
  r->RemoveLast(m, f);
  return true;
}

// One field of `m` changed (a repeated-field change one time in five); false when none could be.
bool MutateOneField(Message* m, std::mt19937& rng) {
  std::vector<Site> sites;
  CollectSites(m, &sites);
  if (sites.empty()) return false;
  const Site& s = sites[std::uniform_int_distribution<size_t>(0, sites.size() - 1)(rng)];
  return std::uniform_int_distribution<int>(0, 4)(rng) == 0 ? MutateRepeated(s, rng) : MutateScalar(s, rng);
}

// `out` into data when it fits, else libFuzzer's byte mutation.
size_t Emit(const std::string& out, uint8_t* data, size_t size, size_t max_size) {
  if (out.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

}  // namespace

size_t MutateTextProto(const Message& prototype, uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  std::mt19937 rng(seed);
  std::unique_ptr<Message> m(prototype.New());
  google::protobuf::TextFormat::Parser parser;
  parser.AllowPartialMessage(true);
  SilentErrors silent;  // an input that does not parse is expected here, not news
  parser.RecordErrorsTo(&silent);
  const std::string text(reinterpret_cast<const char*>(data), size);
  // Half the calls, and every input that does not parse: libFuzzer's byte mutation.
  if (std::uniform_int_distribution<int>(0, 1)(rng) == 0 || !parser.ParseFromString(text, m.get()) ||
      !MutateOneField(m.get(), rng))
    return LLVMFuzzerMutate(data, size, max_size);
  std::string out;
  if (!google::protobuf::TextFormat::PrintToString(*m, &out)) return LLVMFuzzerMutate(data, size, max_size);
  return Emit(out, data, size, max_size);
}

size_t MutateBinaryProto(const Message& prototype, uint8_t* data, size_t size, size_t max_size, unsigned int seed) {
  std::mt19937 rng(seed);
  std::unique_ptr<Message> m(prototype.New());
  if (std::uniform_int_distribution<int>(0, 1)(rng) == 0 ||
      size > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !m->ParsePartialFromArray(data, static_cast<int>(size)) || !MutateOneField(m.get(), rng))
    return LLVMFuzzerMutate(data, size, max_size);
  std::string out;
  if (!m->SerializePartialToString(&out)) return LLVMFuzzerMutate(data, size, max_size);
  return Emit(out, data, size, max_size);
}

}  // namespace specsim::fuzz

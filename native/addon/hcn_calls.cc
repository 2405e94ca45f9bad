#include "hcn_calls.h"

#include <type_traits>
#include <vector>

#include "adapters.h"
#include "guid.h"
#include "hcn_family.h"
#include "hcn_library.h"
#include "hresults.h"
#include "json.h"
#include "utf.h"

namespace hcn {
namespace {

// A function whose sim column names a generic verb has that verb's signature, whatever its family: HCN handles are
// all void*, so one pointer type per verb serves the three families (only creating an endpoint takes its network
// too), and its name says its family. Checked for every entry of the list, so the calls by Fn below may call any of
// them through the verb's pointer type.
template <FnVerb V>
struct VerbSignature {
  using type = void;  // kOwn: a signature of its own, called by its own code
};
template <>
struct VerbSignature<FnVerb::kEnumerate> {
  using type = PFN_HcnEnumerateNetworks;
};
template <>
struct VerbSignature<FnVerb::kCreate> {
  using type = PFN_HcnCreateNetwork;
};
template <>
struct VerbSignature<FnVerb::kCreateInNetwork> {
  using type = PFN_HcnCreateEndpoint;
};
template <>
struct VerbSignature<FnVerb::kOpen> {
  using type = PFN_HcnOpenNetwork;
};
template <>
struct VerbSignature<FnVerb::kModify> {
  using type = PFN_HcnModifyNetwork;
};
template <>
struct VerbSignature<FnVerb::kQuery> {
  using type = PFN_HcnQueryNetworkProperties;
};
template <>
struct VerbSignature<FnVerb::kDelete> {
  using type = PFN_HcnDeleteNetwork;
};
template <>
struct VerbSignature<FnVerb::kClose> {
  using type = PFN_HcnCloseNetwork;
};
#define HCN_VERB_CHECK(enumerator, name, library, need, sdk, sim, ret, params)                                    \
  static_assert(kVerb##sim == FnVerb::kOwn || std::is_same_v<PFN_##name, VerbSignature<kVerb##sim>::type>,       \
                #name ": its sim column names a verb of another signature");                                      \
  static_assert(kVerb##sim == FnVerb::kOwn || HcnFamilyOf(#name) != HcnFamily::kNone,                            \
                #name ": its sim column names a verb, but its name no family (network, endpoint or namespace)");
HCN_FUNCTIONS(HCN_VERB_CHECK)
#undef HCN_VERB_CHECK
// Handle closes a compute system with the same pointer type.
static_assert(std::is_same_v<PFN_HcnCloseNetwork, PFN_HcsCloseComputeSystem>);

struct Verbs {
  Fn enumerate, create, open, modify, query, remove, close;
};

const Verbs& VerbsOf(ObjectKind kind) {
  static const Verbs kVerbs[] = {
      {Fn::kEnumerateNetworks, Fn::kCreateNetwork, Fn::kOpenNetwork, Fn::kModifyNetwork,
       Fn::kQueryNetworkProperties, Fn::kDeleteNetwork, Fn::kCloseNetwork},
      {Fn::kEnumerateEndpoints, Fn::kCreateEndpoint, Fn::kOpenEndpoint, Fn::kModifyEndpoint,
       Fn::kQueryEndpointProperties, Fn::kDeleteEndpoint, Fn::kCloseEndpoint},
      {Fn::kEnumerateNamespaces, Fn::kCreateNamespace, Fn::kOpenNamespace, Fn::kModifyNamespace,
       Fn::kQueryNamespaceProperties, Fn::kDeleteNamespace, Fn::kCloseNamespace},
  };
  return kVerbs[static_cast<int>(kind)];
}

// The family of a function of a generic verb (hcn_family.h), whose open and close go around it.
ObjectKind KindOf(Fn fn) {
  static constexpr HcnFamily kFamilies[kFnCount] = {
#define HCN_FN_FAMILY(enumerator, name, library, need, sdk, sim, ret, params) HcnFamilyOf(#name),
      HCN_FUNCTIONS(HCN_FN_FAMILY)
#undef HCN_FN_FAMILY
  };
  switch (kFamilies[static_cast<int>(fn)]) {
    case HcnFamily::kEndpoint:
      return ObjectKind::kEndpoint;
    case HcnFamily::kNamespace:
      return ObjectKind::kNamespace;
    default:
      return ObjectKind::kNetwork;
  }
}

bool IsNotFound(HRESULT hr) { return hr == kNetworkNotFound || hr == kEndpointNotFound || hr == kNotFound; }

// A string the library allocated; freed with the library's free function however the call ends.
class LibraryString {
 public:
  explicit LibraryString(Library& library) : library_(library) {}
  ~LibraryString() { library_.Free(text_); }
  LibraryString(const LibraryString&) = delete;
  LibraryString& operator=(const LibraryString&) = delete;

  PWSTR* out() { return &text_; }
  bool null() const { return text_ == nullptr; }
  // hcsshim's test for an error record: present and not "".
  bool empty() const { return text_ == nullptr || text_[0] == 0; }
  std::u16string Take() {
    std::u16string copy(View(text_));
    library_.Free(text_);
    text_ = nullptr;
    return copy;
  }

 private:
  Library& library_;
  PWSTR text_ = nullptr;
};

// One native call's conversation with the library: resolves functions, checks every HRESULT and error record,
// and records the failure that ends the sequence.
class Session {
 public:
  Session() : library_(Library::Instance()) {}

  Library& library() { return library_; }
  CallOutcome& outcome() { return outcome_; }

  // A sequence starts only when its first function is there, and the function that frees what it returns: a
  // missing library is then reported against the verb ("HcnOpenNetwork", 0x8007007E) on every platform.
  bool Begin(Fn first) { return Has(first) && Has(Fn::kCoTaskMemFree); }

  bool Has(Fn fn) {
    const HRESULT missing = library_.MissingCode(fn);
    if (missing == kOk) return true;
    Fail(fn, missing);
    return false;
  }

  // The function, or an empty callable after recording the failure that it is missing.
  template <typename Pfn>
  Library::Counted<Pfn> Get(Fn fn) {
    auto function = library_.Get<Pfn>(fn);
    if (!function) Fail(fn, library_.MissingCode(fn));
    return function;
  }

  // True when `fn` succeeded: a failing HRESULT or a non-empty error record is a failure.
  bool Check(Fn fn, HRESULT hr, LibraryString& record) {
    if (!Failed(hr) && record.empty()) return true;
    Fail(fn, Failed(hr) ? hr : kOk);
    if (!record.empty()) outcome_.error_record = record.Take();
    return false;
  }

  // A result the library should have produced but did not: reported against that function, with an error record
  // saying so, since no HRESULT of its own explains it.
  bool Violation(Fn fn, const std::string& what) {
    Fail(fn, kUnexpected);
    std::string record = "{\"Success\":false,\"Error\":";
    json::AppendString(&record, std::string(FnName(fn)) + " " + what);
    record += ",\"ErrorCode\":" + std::to_string(Unsigned(kUnexpected)) + "}";
    outcome_.error_record = Utf8ToUtf16(record);
    return false;
  }

  bool TakeResult(Fn fn, LibraryString& text, std::u16string* out) {
    if (text.null()) return Violation(fn, "returned S_OK without a result");
    *out = text.Take();
    return true;
  }

  void Reset() { outcome_ = CallOutcome(); }

 private:
  void Fail(Fn fn, HRESULT hr) {
    outcome_.failed = true;
    outcome_.op = FnName(fn);
    outcome_.hr = hr;
    outcome_.error_record.reset();
    outcome_.value.reset();
  }

  Library& library_;
  CallOutcome outcome_;
};

// An open HCN handle, closed when the sequence ends however it ends. A failing close is ignored on purpose:
// the verb's work is done by then, and reporting "create failed" for a network that exists is how leaks start.
class Handle {
 public:
  Handle(Session& session, Fn close) : session_(session), close_(close) {}
  ~Handle() {
    if (handle_ == nullptr) return;
    if (auto close = session_.library().Get<PFN_HcnCloseNetwork>(close_)) close(handle_);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  void** out() { return &handle_; }
  void* get() const { return handle_; }

 private:
  Session& session_;
  Fn close_;
  void* handle_ = nullptr;
};

const hcn_wchar* OrNull(const OptionalText& text) { return text ? Wide(*text) : nullptr; }

bool Open(Session& s, const Verbs& v, const GUID& id, Handle* handle) {
  auto open = s.Get<PFN_HcnOpenNetwork>(v.open);
  if (!open) return false;
  LibraryString record(s.library());
  return s.Check(v.open, open(id, handle->out(), record.out()), record);
}

// `fn`: a function of the QUERY verb (HcnQuery<Family>Properties, or any other query of an open object).
bool Query(Session& s, Fn fn, const Handle& handle, const OptionalText& query, std::u16string* answer) {
  auto query_fn = s.Get<PFN_HcnQueryNetworkProperties>(fn);
  if (!query_fn) return false;
  LibraryString text(s.library()), record(s.library());
  return s.Check(fn, query_fn(handle.get(), OrNull(query), text.out(), record.out()), record) &&
         s.TakeResult(fn, text, answer);
}

bool Enumerate(Session& s, Fn fn, const OptionalText& query, std::u16string* ids) {
  auto enumerate = s.Get<PFN_HcnEnumerateNetworks>(fn);
  if (!enumerate) return false;
  LibraryString text(s.library()), record(s.library());
  return s.Check(fn, enumerate(OrNull(query), text.out(), record.out()), record) && s.TakeResult(fn, text, ids);
}

bool ParseIds(Session& s, Fn enumerate, const std::u16string& text, std::vector<GUID>* ids) {
  json::Value array;
  std::string error;
  if (!json::Parse(Utf16ToUtf8(text), &array, &error) || array.type != json::Value::Type::kArray) {
    return s.Violation(enumerate, "returned something other than a JSON array");
  }
  for (const json::Value& item : array.items) {
    GUID id;
    if (item.type != json::Value::Type::kString || !ParseGuid(item.string, &id)) {
      return s.Violation(enumerate, "returned an array with an entry that is not a GUID");
    }
    ids->push_back(id);
  }
  return true;
}

}  // namespace

CallOutcome EnumerateObjects(Fn fn, const OptionalText& query) {
  Session s;
  std::u16string ids;
  if (s.Begin(fn) && Enumerate(s, fn, query, &ids)) s.outcome().value = std::move(ids);
  return s.outcome();
}

CallOutcome QueryObject(Fn fn, const GUID& id, const OptionalText& query) {
  Session s;
  const Verbs& v = VerbsOf(KindOf(fn));
  Handle handle(s, v.close);
  std::u16string answer;
  if (s.Begin(v.open) && s.Has(fn) && Open(s, v, id, &handle) && Query(s, fn, handle, query, &answer)) {
    s.outcome().value = std::move(answer);
  }
  return s.outcome();
}

CallOutcome ModifyObject(Fn fn, const GUID& id, const std::u16string& settings) {
  Session s;
  const Verbs& v = VerbsOf(KindOf(fn));
  Handle handle(s, v.close);
  if (!s.Begin(v.open) || !s.Has(fn) || !Open(s, v, id, &handle)) return s.outcome();
  auto modify = s.Get<PFN_HcnModifyNetwork>(fn);
  if (!modify) return s.outcome();
  LibraryString record(s.library());
  s.Check(fn, modify(handle.get(), Wide(settings), record.out()), record);
  return s.outcome();
}

CallOutcome DeleteObject(Fn fn, const GUID& id) {
  Session s;
  if (!s.Begin(fn)) return s.outcome();
  auto remove = s.Get<PFN_HcnDeleteNetwork>(fn);
  if (!remove) return s.outcome();
  LibraryString record(s.library());
  s.Check(fn, remove(id, record.out()), record);
  return s.outcome();
}

CallOutcome EnumerateObjects(ObjectKind kind, const OptionalText& query) {
  return EnumerateObjects(VerbsOf(kind).enumerate, query);
}

CallOutcome CreateObject(ObjectKind kind, const GUID& network, const GUID& id, const std::u16string& settings,
                         const OptionalText& query) {
  Session s;
  const Verbs& v = VerbsOf(kind);
  if (!s.Begin(kind == ObjectKind::kEndpoint ? Fn::kOpenNetwork : v.create)) return s.outcome();
  Handle parent(s, Fn::kCloseNetwork);
  Handle created(s, v.close);
  LibraryString record(s.library());
  HRESULT hr;
  if (kind == ObjectKind::kEndpoint) {
    if (!Open(s, VerbsOf(ObjectKind::kNetwork), network, &parent)) return s.outcome();
    auto create = s.Get<PFN_HcnCreateEndpoint>(v.create);
    if (!create) return s.outcome();
    hr = create(parent.get(), id, Wide(settings), created.out(), record.out());
  } else {
    auto create = s.Get<PFN_HcnCreateNetwork>(v.create);
    if (!create) return s.outcome();
    hr = create(id, Wide(settings), created.out(), record.out());
  }
  std::u16string properties;
  if (s.Check(v.create, hr, record) && Query(s, v.query, created, query, &properties)) {
    s.outcome().value = std::move(properties);
  }
  return s.outcome();
}

CallOutcome GetObjectProperties(ObjectKind kind, const GUID& id, const OptionalText& query) {
  return QueryObject(VerbsOf(kind).query, id, query);
}

CallOutcome ModifyObject(ObjectKind kind, const GUID& id, const std::u16string& settings) {
  return ModifyObject(VerbsOf(kind).modify, id, settings);
}

CallOutcome DeleteObject(ObjectKind kind, const GUID& id) { return DeleteObject(VerbsOf(kind).remove, id); }

CallOutcome ListObjectsDetailed(ObjectKind kind, const OptionalText& query) {
  Session s;
  const Verbs& v = VerbsOf(kind);
  std::u16string text;
  std::vector<GUID> ids;
  if (!s.Begin(v.enumerate) || !Enumerate(s, v.enumerate, query, &text) || !ParseIds(s, v.enumerate, text, &ids)) {
    return s.outcome();
  }
  // The array is assembled from the property documents as HCN returned them, without re-serialising them.
  std::u16string list = u"[";
  for (const GUID& id : ids) {
    Handle handle(s, v.close);
    std::u16string properties;
    if (!Open(s, v, id, &handle) || !Query(s, v.query, handle, query, &properties)) {
      // Deleted between the enumeration and now: it is simply no longer part of the list.
      if (!IsNotFound(s.outcome().hr)) return s.outcome();
      s.Reset();
      continue;
    }
    if (list.size() > 1) list.push_back(u',');
    list += properties.empty() ? u"null" : properties;
  }
  list.push_back(u']');
  s.outcome().value = std::move(list);
  return s.outcome();
}

HeldHandle::~HeldHandle() {
  if (handle_ == nullptr) return;
  // As Handle above: a failing close is ignored (a handle of a service instance that is gone may refuse it).
  if (auto close = Library::Instance().Get<PFN_HcnCloseNetwork>(VerbsOf(kind_).close)) close(handle_);
}

CallOutcome OpenHeld(ObjectKind kind, const GUID& id, std::shared_ptr<HeldHandle>* held) {
  Session s;
  const Verbs& v = VerbsOf(kind);
  if (!s.Begin(v.open) || !s.Has(v.close)) return s.outcome();
  Handle handle(s, v.close);
  if (!Open(s, v, id, &handle)) return s.outcome();
  *held = std::make_shared<HeldHandle>(kind, handle.get());
  *handle.out() = nullptr;  // the held handle owns it now
  return s.outcome();
}

CallOutcome CreateEndpointIn(const HeldHandle& network, const GUID& id, const std::u16string& settings,
                             const OptionalText& query) {
  Session s;
  const Verbs& v = VerbsOf(ObjectKind::kEndpoint);
  if (!s.Begin(v.create)) return s.outcome();
  auto create = s.Get<PFN_HcnCreateEndpoint>(v.create);
  if (!create) return s.outcome();
  Handle created(s, v.close);
  LibraryString record(s.library());
  std::u16string properties;
  if (s.Check(v.create, create(network.get(), id, Wide(settings), created.out(), record.out()), record) &&
      Query(s, v.query, created, query, &properties)) {
    s.outcome().value = std::move(properties);
  }
  return s.outcome();
}

CallOutcome ModifyHeld(const HeldHandle& held, const std::u16string& settings) {
  Session s;
  const Verbs& v = VerbsOf(held.kind());
  if (!s.Begin(v.modify)) return s.outcome();
  auto modify = s.Get<PFN_HcnModifyNetwork>(v.modify);
  if (!modify) return s.outcome();
  LibraryString record(s.library());
  s.Check(v.modify, modify(held.get(), Wide(settings), record.out()), record);
  return s.outcome();
}

CallOutcome CallHns(const std::u16string& method, const std::u16string& path, const OptionalText& body) {
  Session s;
  if (!s.Begin(Fn::kHnsCall)) return s.outcome();
  auto hns_call = s.Get<PFN_HNSCall>(Fn::kHnsCall);
  if (!hns_call) return s.outcome();
  LibraryString response(s.library());
  const HRESULT hr = hns_call(Wide(method), Wide(path), OrNull(body), response.out());
  if (Failed(hr)) {
    // HNSCall has no error-record parameter; on failure whatever it answered is the closest thing to one.
    s.Check(Fn::kHnsCall, hr, response);
    return s.outcome();
  }
  std::u16string envelope;
  if (s.TakeResult(Fn::kHnsCall, response, &envelope)) s.outcome().value = std::move(envelope);
  return s.outcome();
}

CallOutcome ListAdapters() {
  Session s;
  if (s.library().Has(Fn::kSimEnumerateAdapters)) {
    if (!s.Begin(Fn::kSimEnumerateAdapters)) return s.outcome();
    auto enumerate = s.Get<PFN_HcnSimEnumerateAdapters>(Fn::kSimEnumerateAdapters);
    LibraryString text(s.library()), record(s.library());
    std::u16string adapters;
    if (s.Check(Fn::kSimEnumerateAdapters, enumerate(text.out(), record.out()), record) &&
        s.TakeResult(Fn::kSimEnumerateAdapters, text, &adapters)) {
      s.outcome().value = std::move(adapters);
    }
    return s.outcome();
  }
  // Without the simulator's export the OS answers; where it has nothing truthful to say, the list is empty.
  std::string json;
  const HRESULT hr = OsListAdapters(&json);
  if (Failed(hr)) return CallOutcome{true, "GetAdaptersAddresses", hr, std::nullopt, std::nullopt};
  s.outcome().value = Utf8ToUtf16(json);
  return s.outcome();
}

// HcsOpenComputeSystem(id) -> [HcsModifyComputeSystem(request)] -> HcsCloseComputeSystem: without a request the
// open alone answers whether HCS has the compute system (hcsshim internal/hcs/system.go OpenComputeSystem fails with
// ErrComputeSystemDoesNotExist, internal/hcs/errors.go, when it does not).
static CallOutcome OpenComputeSystemThen(const std::u16string& id, const OptionalText& request) {
  Session s;
  if (!s.Begin(Fn::kHcsOpenComputeSystem) || !s.Has(Fn::kHcsModifyComputeSystem) || !s.Has(Fn::kHcsCloseComputeSystem)) {
    return s.outcome();
  }
  // HCS's result document lists events even when the call succeeds (hcsshim internal/hcs/system.go Modify logs
  // them and looks only at the HRESULT): a failure is a failing HRESULT, and only then is the document its record.
  auto check = [&s](Fn fn, HRESULT hr, LibraryString& result) {
    if (!Failed(hr)) return true;
    LibraryString none(s.library());
    s.Check(fn, hr, none);
    if (!result.empty()) s.outcome().error_record = result.Take();
    return false;
  };
  Handle system(s, Fn::kHcsCloseComputeSystem);
  auto open = s.Get<PFN_HcsOpenComputeSystem>(Fn::kHcsOpenComputeSystem);
  LibraryString open_result(s.library());
  if (!open || !check(Fn::kHcsOpenComputeSystem, open(Wide(id), system.out(), open_result.out()), open_result)) {
    return s.outcome();
  }
  if (!request) return s.outcome();
  auto modify = s.Get<PFN_HcsModifyComputeSystem>(Fn::kHcsModifyComputeSystem);
  LibraryString modify_result(s.library());
  if (modify) check(Fn::kHcsModifyComputeSystem, modify(system.get(), Wide(*request), modify_result.out()), modify_result);
  return s.outcome();
}

CallOutcome ModifyComputeSystem(const std::u16string& id, const std::u16string& request) {
  return OpenComputeSystemThen(id, request);
}

CallOutcome OpenComputeSystem(const std::u16string& id) { return OpenComputeSystemThen(id, std::nullopt); }

// Neither function has an error record: the HRESULT alone says how it went.
CallOutcome RegisterServiceCallback(HCN_NOTIFICATION_CALLBACK callback, void* context, HCN_CALLBACK* handle) {
  Session s;
  auto register_callback = s.Get<PFN_HcnRegisterServiceCallback>(Fn::kRegisterServiceCallback);
  if (!register_callback || !s.Has(Fn::kUnregisterServiceCallback)) return s.outcome();
  LibraryString none(s.library());
  s.Check(Fn::kRegisterServiceCallback, register_callback(callback, context, handle), none);
  return s.outcome();
}

CallOutcome UnregisterServiceCallback(HCN_CALLBACK handle) {
  Session s;
  auto unregister = s.Get<PFN_HcnUnregisterServiceCallback>(Fn::kUnregisterServiceCallback);
  LibraryString none(s.library());
  if (unregister) s.Check(Fn::kUnregisterServiceCallback, unregister(handle), none);
  return s.outcome();
}

}  // namespace hcn

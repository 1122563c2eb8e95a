// kiln._kiln: the nanobind bindings of kiln's public C++ API (include/kiln/), kept thin: each
// binding calls the C++ API and turns its Status into a kiln.Error; what the Python package adds
// (InferenceSession, the trace context manager, progress bars) is in python/kiln/*.py over these.
//
// The GIL is released around every call that may take long: parse, build, deserialize, context
// creation, enqueue, copies, plugin checks. Callbacks into Python (the logger, build progress)
// take it back.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/function.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "kiln/kiln.h"
#include "kiln/op_list.h"
#include "kiln/plugin_check.h"
#ifdef KILN_HAVE_ONNX
#include "kiln/onnx_parser.h"
#endif

namespace nb = nanobind;
using namespace nb::literals;

namespace kiln::python {
namespace {

// ---- errors
// --------------------------------------------------------------------------------------

// kiln.Error and one subclass per StatusCode, indexed by the code.
PyObject* g_errors[16] = {};

struct KilnError {
  Status status;
};

void check(const Status& s) {
  if (!s.isOk()) throw KilnError{s};
}

PyObject* errorType(StatusCode code) {
  const int c = static_cast<int>(code);
  return (c > 0 && c < 16 && g_errors[c]) ? g_errors[c] : g_errors[0];
}

// A kiln.Error instance (not raised), for OnnxParser.get_error().
nb::object errorObject(const Status& s) {
  return nb::steal(PyObject_CallFunction(errorType(s.code()), "s", s.message().c_str()));
}

void makeErrors(nb::module_& m) {
  auto make = [&](const char* name, PyObject* bases, const char* doc) {
    std::string full = std::string("kiln.") + name;
    PyObject* t = PyErr_NewExceptionWithDoc(full.c_str(), doc, bases, nullptr);
    if (!t) throw nb::python_error();
    m.attr(name) = nb::handle(t);
    return t;
  };
  g_errors[0] = make("Error", PyExc_Exception,
                     "Any error kiln reports. str(e) is kiln's message, unchanged; e.code names "
                     "the kind (the C++ StatusCode).");
  PyObject_SetAttrString(g_errors[0], "code", nb::str("error").ptr());
  struct Sub {
    StatusCode code;
    const char* name;
    PyObject* also;
    const char* doc;
  } subs[] = {
      {StatusCode::kInvalidArgument, "InvalidArgumentError", PyExc_ValueError,
       "Something passed to kiln is malformed (a wrong shape or dtype, a bad option)."},
      {StatusCode::kNotFound, "NotFoundError", PyExc_LookupError,
       "A named thing does not exist: a tensor, a plugin, a file."},
      {StatusCode::kUnsupported, "UnsupportedError", PyExc_NotImplementedError,
       "Valid, but kiln cannot do it (yet) on this backend."},
      {StatusCode::kCorruptData, "CorruptDataError", PyExc_ValueError,
       "A plan or serialized blob failed validation."},
      {StatusCode::kPluginFailure, "PluginError", nullptr, "A plugin call returned a failure."},
      {StatusCode::kIoError, "IoError", PyExc_OSError, "Reading or writing a file failed."},
      {StatusCode::kInternal, "InternalError", nullptr, "A broken invariant inside kiln: a bug."},
      {StatusCode::kDeviceError, "DeviceError", nullptr,
       "A CUDA, cuBLAS or cuDNN call failed, or no usable GPU."},
      {StatusCode::kCancelled, "CancelledError", nullptr,
       "The caller stopped the work (a build's progress callback returned False or raised)."},
  };
  for (const Sub& s : subs) {
    PyObject* bases = s.also ? PyTuple_Pack(2, g_errors[0], s.also) : PyTuple_Pack(1, g_errors[0]);
    g_errors[static_cast<int>(s.code)] = make(s.name, bases, s.doc);
    Py_DECREF(bases);
    PyObject_SetAttrString(g_errors[static_cast<int>(s.code)], "code",
                           nb::str(statusCodeName(s.code)).ptr());
  }
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const KilnError& e) {
      PyErr_SetString(errorType(e.status.code()), e.status.message().c_str());
    }
  });
}

// ---- the logger
// ----------------------------------------------------------------------------------

// Forwards kiln's messages to a Python callable (kiln.Logger.log), taking the GIL.
class PyLogger final : public ILogger {
 public:
  explicit PyLogger(nb::object fn) : fn_(std::move(fn)) {}
  void log(Severity severity, const char* message) noexcept override {
    if (!Py_IsInitialized()) return;
    nb::gil_scoped_acquire gil;
    try {
      fn_(severity, message);
    } catch (nb::python_error& e) {
      e.restore();
      PyErr_WriteUnraisable(fn_.ptr());
    } catch (...) {
    }
  }
  ~PyLogger() override {
    nb::gil_scoped_acquire gil;
    fn_.reset();
  }

 private:
  nb::object fn_;
};

std::mutex g_loggerMutex;
std::unique_ptr<PyLogger> g_logger;

void setPyLogger(nb::object fn) {
  std::lock_guard<std::mutex> lock(g_loggerMutex);
  if (fn.is_none()) {
    setLogger(nullptr);
    g_logger.reset();
    return;
  }
  auto logger = std::make_unique<PyLogger>(std::move(fn));
  setLogger(logger.get());
  // The previous one may still be in use by a thread that read it before setLogger: keep it.
  static std::vector<std::unique_ptr<PyLogger>> retired;
  if (g_logger) retired.push_back(std::move(g_logger));
  g_logger = std::move(logger);
}

// ---- shapes and buffers
// --------------------------------------------------------------------------

nb::tuple dimsTuple(const Dims& d) {
  nb::list l;
  for (int32_t i = 0; i < d.nbDims; ++i) l.append(d.d[i]);
  return nb::tuple(l);
}

Dims toDims(const std::vector<int64_t>& v) {
  if (v.size() > static_cast<size_t>(Dims::kMaxDims))
    throw KilnError{invalidArgument("a shape has at most " + std::to_string(Dims::kMaxDims) +
                                    " dimensions, got " + std::to_string(v.size()))};
  Dims d;
  for (int64_t x : v) d.d[d.nbDims++] = x;
  return d;
}

// Optimization profiles from Python: per profile, {input name: (min, opt, max)}.
using PyProfiles = std::vector<std::map<std::string, std::vector<std::vector<int64_t>>>>;
std::vector<OptimizationProfile> toProfiles(const PyProfiles& profiles) {
  std::vector<OptimizationProfile> out;
  for (size_t k = 0; k < profiles.size(); ++k) {
    OptimizationProfile p;
    for (const auto& [name, range] : profiles[k]) {
      if (range.size() != 3)
        throw KilnError{invalidArgument("profile " + std::to_string(k) + ", input '" + name +
                                        "': give (min, opt, max) shapes, not " +
                                        std::to_string(range.size()))};
      p.setDimensions(name.c_str(), OptProfileSelector::kMIN, toDims(range[0]));
      p.setDimensions(name.c_str(), OptProfileSelector::kOPT, toDims(range[1]));
      p.setDimensions(name.c_str(), OptProfileSelector::kMAX, toDims(range[2]));
    }
    out.push_back(std::move(p));
  }
  return out;
}

#ifdef KILN_HAVE_ONNX
// {input name: shape} from Python, for models with symbolic input dims (OnnxParserOptions), or
// the profiles that keep them dynamic.
using InputShapes = std::map<std::string, std::vector<int64_t>>;
// Shape-value inputs' values ({name: [int, ...]}, OnnxParserOptions::shapeValues) ride along.
OnnxParserOptions parserOptions(const InputShapes& shapes, const PyProfiles& profiles,
                                const InputShapes& shapeValues) {
  OnnxParserOptions options;
  for (const auto& [name, shape] : shapes) options.inputShapes[name] = toDims(shape);
  options.profiles = toProfiles(profiles);
  options.shapeValues = shapeValues;
  return options;
}
#endif

std::string dimsText(const Dims& d) {
  std::string s = "(";
  for (int32_t i = 0; i < d.nbDims; ++i) s += (i ? ", " : "") + std::to_string(d.d[i]);
  return s + (d.nbDims == 1 ? ",)" : ")");
}

// A contiguous read-only view of any Python buffer (bytes, bytearray, memoryview, NumPy).
struct Buffer {
  Py_buffer view{};
  explicit Buffer(nb::handle obj, bool writable = false) {
    if (PyObject_GetBuffer(obj.ptr(), &view, (writable ? PyBUF_WRITABLE : 0) | PyBUF_C_CONTIGUOUS))
      throw nb::python_error();
  }
  ~Buffer() { PyBuffer_Release(&view); }
  const void* data() const { return view.buf; }
  size_t size() const { return static_cast<size_t>(view.len); }
};

// DLPack type codes of kiln's data types.
nb::dlpack::dtype dlpackType(DataType t) {
  using C = nb::dlpack::dtype_code;
  switch (t) {
    case DataType::kFLOAT:
      return {uint8_t(C::Float), 32, 1};
    case DataType::kHALF:
      return {uint8_t(C::Float), 16, 1};
    case DataType::kBF16:
      return {uint8_t(C::Bfloat), 16, 1};
    case DataType::kINT8:
      return {uint8_t(C::Int), 8, 1};
    case DataType::kINT32:
      return {uint8_t(C::Int), 32, 1};
    case DataType::kINT64:
      return {uint8_t(C::Int), 64, 1};
    case DataType::kBOOL:
      return {uint8_t(C::Bool), 8, 1};
  }
  return {};
}

bool fromDlpackType(nb::dlpack::dtype d, DataType& t) {
  for (int32_t i = 0; i < kDataTypeCount; ++i) {
    if (dlpackType(static_cast<DataType>(i)) == d) {
      t = static_cast<DataType>(i);
      return true;
    }
  }
  return false;
}

std::string dlpackTypeName(nb::dlpack::dtype d) {
  DataType t;
  if (fromDlpackType(d, t)) return dataTypeName(t);
  static const char* codes[] = {"int", "uint", "float", "?", "bfloat", "complex", "bool"};
  return std::string(d.code < 7 ? codes[d.code] : "code" + std::to_string(d.code)) +
         std::to_string(d.bits) + (d.lanes != 1 ? "x" + std::to_string(d.lanes) : "");
}

const int kDLCPU = 1, kDLCUDA = 2, kDLCUDAHost = 3, kDLCUDAManaged = 13;

std::string dlDeviceName(int type, int id) {
  if (type == kDLCPU) return "cpu";
  if (type == kDLCUDA) return "cuda:" + std::to_string(id);
  if (type == kDLCUDAHost) return "cuda_host";
  if (type == kDLCUDAManaged) return "cuda_managed:" + std::to_string(id);
  return "dlpack device " + std::to_string(type) + ":" + std::to_string(id);
}

// ---- engine-side objects
// -------------------------------------------------------------------------

struct PyEngine;

// IDevice of an engine, kept alive with its engine.
struct PyDevice {
  std::shared_ptr<IEngine> engine;
  const IDevice& device() const { return engine->getDevice(); }
};

struct PyDeviceBuffer {
  std::shared_ptr<IDeviceBuffer> buffer;
};

struct PyStream {
  std::shared_ptr<IEngine> engine;  // the device it belongs to stays alive
  std::unique_ptr<IDeviceStream> stream;
};

struct PyEngine {
  std::shared_ptr<IEngine> engine;
};

struct BoundContext {
  std::shared_ptr<IEngine> engine;
  std::unique_ptr<IExecutionContext> context;
  // The Python objects whose memory is bound, kept alive while bound.
  std::vector<std::pair<std::string, nb::object>> keep;
};

// A kiln.Tensor: memory in an engine's device (host memory on the CPU), with its shape and type.
struct PyTensor {
  std::shared_ptr<IEngine> engine;
  std::shared_ptr<IDeviceBuffer> buffer;
  Dims dims;
  DataType type = DataType::kFLOAT;
  int64_t stream = 0;  // where it was produced (0: ready now)
  size_t nbytes() const { return static_cast<size_t>(volume(dims)) * dataTypeSize(type); }
};

bool hasDynamic(const Dims& d) {
  for (int32_t i = 0; i < d.nbDims; ++i)
    if (d.d[i] < 0) return true;
  return false;
}

size_t descBytes(const PluginTensorDesc& d) {
  const int64_t n = volume(d.dims);
  return n < 0 ? 0 : static_cast<size_t>(n) * dataTypeSize(d.type);
}

PluginTensorDesc ioDesc(const IEngine& e, const std::string& name) {
  PluginTensorDesc d = e.getTensorDesc(name.c_str());
  if (d.dims.nbDims < 0) {
    std::string names;
    for (int32_t i = 0; i < e.getNbIOTensors(); ++i)
      names += std::string(i ? ", " : "") + "'" + e.getIOTensorName(i) + "'";
    throw KilnError{
        notFound("the engine has no input or output '" + name + "' (it has " + names + ")")};
  }
  return d;
}

// The address of an array-like's memory after checking it against the engine's tensor: any
// object with __dlpack__ (or a DLPack capsule) or the buffer protocol, on the engine's device,
// with the tensor's dtype and shape, contiguous. Raises InvalidArgumentError naming what differs.
// With `context`, a dynamic tensor is checked against the shape the context has for it now.
void* arrayAddress(const IEngine& engine, const std::string& name, nb::handle obj, bool writable,
                   const IExecutionContext* context = nullptr) {
  PluginTensorDesc d = ioDesc(engine, name);
  if (context && hasDynamic(d.dims)) {
    d.dims = context->getTensorShape(name.c_str());
    if (hasDynamic(d.dims))
      throw KilnError{
          invalidArgument("tensor '" + name + "' has dynamic dims " + dimsText(d.dims) +
                          " until every dynamic input's shape is set: call set_input_shape first")};
  }
  nb::ndarray<> a;
  if (!nb::try_cast(obj, a, false)) {
    throw KilnError{
        invalidArgument("tensor '" + name + "': a " + std::string(nb::inst_name(obj).c_str()) +
                        " is not an array (give a NumPy array, an object with __dlpack__ or "
                        "__cuda_array_interface__, or an address as an int)")};
  }
  const bool cuda = engine.getDevice().getKind() == DeviceKind::kCUDA;
  const int dev = a.device_type();
  const bool onDevice = cuda ? (dev == kDLCUDA && a.device_id() == engine.getDevice().getIndex()) ||
                                   dev == kDLCUDAManaged
                             : dev == kDLCPU || dev == kDLCUDAHost;
  if (!onDevice) {
    throw KilnError{invalidArgument(
        "tensor '" + name + "' is on " + dlDeviceName(dev, a.device_id()) +
        " but the engine runs on " +
        (cuda ? "cuda:" + std::to_string(engine.getDevice().getIndex()) : std::string("cpu")))};
  }
  DataType t;
  if (!fromDlpackType(a.dtype(), t) || t != d.type) {
    throw KilnError{invalidArgument("tensor '" + name + "' is " + dlpackTypeName(a.dtype()) +
                                    " but the engine expects " + dataTypeName(d.type))};
  }
  Dims got;
  got.nbDims = static_cast<int32_t>(a.ndim());
  for (size_t i = 0; i < a.ndim() && i < size_t(Dims::kMaxDims); ++i) got.d[i] = a.shape(i);
  if (a.ndim() > size_t(Dims::kMaxDims) || got != d.dims) {
    throw KilnError{invalidArgument("tensor '" + name + "' has shape " + dimsText(got) +
                                    " but the engine expects " + dimsText(d.dims))};
  }
  int64_t expect = 1;
  for (int32_t i = got.nbDims - 1; i >= 0; --i) {
    if (got.d[i] != 1 && a.stride(i) != expect) {
      throw KilnError{
          invalidArgument("tensor '" + name + "' is not contiguous (kiln needs row-major memory)")};
    }
    expect *= got.d[i];
  }
  (void)writable;
  return a.data();
}

// Stream handles: an int, or any object with `cuda_stream` (PyTorch) or `ptr` (CuPy).
Stream toStream(nb::handle s) {
  if (s.is_none()) return nullptr;
  if (PyLong_Check(s.ptr())) return reinterpret_cast<Stream>(nb::cast<uintptr_t>(s));
  if (nb::hasattr(s, "cuda_stream"))
    return reinterpret_cast<Stream>(nb::cast<uintptr_t>(s.attr("cuda_stream")));
  if (nb::hasattr(s, "ptr")) return reinterpret_cast<Stream>(nb::cast<uintptr_t>(s.attr("ptr")));
  if (nb::hasattr(s, "handle")) return toStream(s.attr("handle"));
  throw KilnError{
      invalidArgument("a stream is an int (cudaStream_t) or has .cuda_stream or .ptr; got " +
                      std::string(nb::inst_name(s).c_str()))};
}

// ---- network: built-in layers by their parameter structs
// -----------------------------------------

std::string camel(const std::string& key) {
  std::string out;
  bool up = false;
  for (char c : key) {
    if (c == '_') {
      up = true;
      continue;
    }
    out += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    up = false;
  }
  return out;
}

template <class T>
void readField(const std::string& op, const char* field, nb::handle v, T& out) {
  try {
    if constexpr (std::is_enum_v<T>) {
      out = static_cast<T>(nb::cast<int64_t>(nb::int_(v)));
    } else if constexpr (std::is_same_v<T, Dims>) {
      out = toDims(nb::cast<std::vector<int64_t>>(v));
    } else if constexpr (std::is_array_v<T>) {
      using E = std::remove_extent_t<T>;
      auto values = nb::cast<std::vector<E>>(v);
      constexpr size_t n = std::extent_v<T>;
      if (values.size() > n)
        throw KilnError{
            invalidArgument(op + "." + field + ": at most " + std::to_string(n) + " values")};
      for (size_t i = 0; i < n; ++i) out[i] = i < values.size() ? values[i] : E{};
    } else {
      out = nb::cast<T>(v);
    }
  } catch (const nb::cast_error&) {
    throw KilnError{invalidArgument(op + "." + field + ": cannot take a " +
                                    std::string(nb::inst_name(v).c_str()))};
  }
}

template <class T>
nb::object fieldValue(const T& v) {
  if constexpr (std::is_enum_v<T>) {
    return nb::int_(static_cast<int64_t>(v));
  } else if constexpr (std::is_same_v<T, Dims>) {
    return dimsTuple(v);
  } else if constexpr (std::is_array_v<T>) {
    nb::list l;
    for (const auto& e : v) l.append(e);
    return nb::tuple(l);
  } else {
    return nb::cast(v);
  }
}

// Params of `op` from keyword arguments named as the C++ fields (camelCase) or in snake_case.
template <class Params>
Params paramsFrom(const std::string& op, nb::dict kwargs) {
  Params p{};
  std::vector<std::string> known;
  Params::fields(p, [&](const char* name, auto& field) { known.push_back(name); });
  for (auto [k, v] : kwargs) {
    const std::string key = camel(nb::cast<std::string>(k));
    bool found = false;
    Params::fields(p, [&](const char* name, auto& field) {
      if (key == name) {
        readField(op, name, v, field);
        found = true;
      }
    });
    if (!found) {
      std::string list;
      for (const std::string& n : known) list += (list.empty() ? "" : ", ") + n;
      throw KilnError{invalidArgument(op + " has no parameter '" + nb::cast<std::string>(k) +
                                      "' (it has " + list + ")")};
    }
  }
  return p;
}

template <class Params>
nb::dict paramsDefaults() {
  Params p{};
  nb::dict d;
  Params::fields(p, [&](const char* name, auto& field) { d[name] = fieldValue(field); });
  return d;
}

struct PyNetwork {
  std::unique_ptr<INetworkDefinition> net;
};

ILayer* checkLayer(PyNetwork& n, ILayer* layer, const std::string& what) {
  if (!layer) {
    Status s = n.net->getLastError();
    if (s.isOk()) s = invalidArgument(what + " could not be added");
    throw KilnError{s};
  }
  return layer;
}

ILayer* addLayerByName(PyNetwork& n, const std::string& op, const std::vector<ITensor*>& inputs,
                       nb::kwargs kwargs) {
  for (ITensor* t : inputs)
    if (!t) throw KilnError{invalidArgument(op + ": an input is None")};
#define KILN_PY_ADD(ENUM, VALUE, NAME)                                                         \
  if (op == #NAME) {                                                                           \
    const NAME##Params p = paramsFrom<NAME##Params>(op, kwargs);                               \
    return checkLayer(n,                                                                       \
                      n.net->addBuiltinLayer(LayerType::k##ENUM, &p, sizeof(p), inputs.data(), \
                                             static_cast<int32_t>(inputs.size())),             \
                      op);                                                                     \
  }
  KILN_BUILTIN_OPS(KILN_PY_ADD)
#undef KILN_PY_ADD
  std::string names;
#define KILN_PY_NAME(ENUM, VALUE, NAME) names += std::string(names.empty() ? "" : ", ") + #NAME;
  KILN_BUILTIN_OPS(KILN_PY_NAME)
#undef KILN_PY_NAME
  throw KilnError{notFound("no built-in layer '" + op + "' (there are " + names + ")")};
}

nb::dict layerParameters() {
  nb::dict d;
#define KILN_PY_DEFAULTS(ENUM, VALUE, NAME) d[#NAME] = paramsDefaults<NAME##Params>();
  KILN_BUILTIN_OPS(KILN_PY_DEFAULTS)
#undef KILN_PY_DEFAULTS
  return d;
}

// A plugin field's Python value as the "k=v" text parsePluginCheckField reads: numbers as they
// print, sequences comma-separated (dims fields as 2x3x4), strings as they are.
std::string fieldText(IPluginCreator& creator, const std::string& name, nb::handle v) {
  bool dims = false;
  if (const PluginFieldCollection* fc = creator.getFieldNames()) {
    for (int32_t i = 0; i < fc->nbFields; ++i)
      if (fc->fields[i].name && name == fc->fields[i].name)
        dims = fc->fields[i].type == PluginFieldType::kDIMS;
  }
  auto scalar = [](nb::handle x) -> std::string {
    if (PyBool_Check(x.ptr())) return x.ptr() == Py_True ? "1" : "0";
    if (PyFloat_Check(x.ptr())) return nb::cast<std::string>(nb::repr(x));
    return nb::cast<std::string>(nb::str(x));
  };
  if (PyUnicode_Check(v.ptr())) return nb::cast<std::string>(v);
  if (PySequence_Check(v.ptr())) {
    std::string s;
    for (nb::handle x : nb::iter(v)) s += (s.empty() ? "" : (dims ? "x" : ",")) + scalar(x);
    return s;
  }
  return scalar(v);
}

std::vector<PluginCheckField> pluginFields(IPluginCreator& creator, nb::dict fields) {
  std::vector<PluginCheckField> out;
  for (auto [k, v] : fields) {
    const std::string name = nb::cast<std::string>(k);
    PluginCheckField f;
    std::string error;
    if (!parsePluginCheckField(creator, name + "=" + fieldText(creator, name, v), f, error))
      throw KilnError{invalidArgument(error)};
    out.push_back(std::move(f));
  }
  return out;
}

IPluginCreator& creatorFor(const std::string& name, const std::string& version,
                           const std::string& ns) {
  IPluginCreator* c =
      PluginRegistry::global().getCreator(name.c_str(), version.c_str(), ns.c_str());
  if (!c) {
    throw KilnError{notFound("plugin " + name + " version " + version + " namespace '" + ns +
                             "' is not registered (load its library with "
                             "kiln.load_plugin_library(path))")};
  }
  return *c;
}

// ---- builder
// -------------------------------------------------------------------------------------

struct PyBuilderConfig {
  BuilderConfig config;
  PyProfiles profiles;  // as given, for the getter; config.profiles holds them converted
  nb::object progress = nb::none();  // fn(phase, done, total, layer) -> bool | None, or None
};

nb::bytes buildSerialized(const PyNetwork& n, const PyBuilderConfig& pc) {
  BuilderConfig config = pc.config;
  std::exception_ptr raised;
  if (!pc.progress.is_none()) {
    // A borrowed handle: the builder copies its config (and so this function) while the GIL is
    // released, so the capture must not touch reference counts. `pc` keeps the callable alive.
    nb::handle fn = pc.progress;
    config.progress = [fn, &raised](const BuildProgress& p) {
      nb::gil_scoped_acquire gil;
      try {
        if (PyErr_CheckSignals() != 0) throw nb::python_error();
        nb::object r = fn(nb::str(p.phase), p.done, p.total, nb::str(p.layer));
        return r.is_none() || nb::cast<bool>(nb::bool_(r));
      } catch (...) {
        raised = std::current_exception();
        return false;
      }
    };
  } else {
    // Without a callback, Ctrl-C still stops a long build.
    config.progress = [&raised](const BuildProgress&) {
      nb::gil_scoped_acquire gil;
      if (PyErr_CheckSignals() == 0) return true;
      try {
        throw nb::python_error();
      } catch (...) {
        raised = std::current_exception();
      }
      return false;
    };
  }
  std::vector<uint8_t> plan;
  Status s;
  {
    nb::gil_scoped_release release;
    s = createBuilder()->buildSerializedNetwork(*n.net, config, plan);
  }
  if (raised) std::rethrow_exception(raised);
  check(s);
  return nb::bytes(reinterpret_cast<const char*>(plan.data()), plan.size());
}

// ---- plugin check
// --------------------------------------------------------------------------------

nb::dict pluginCheck(const std::string& name, nb::dict fields, nb::list inputs,
                     const std::string& version, const std::string& ns,
                     const std::vector<std::string>& devices, int contexts, int iterations,
                     int maxCombinations, bool checkEmpty, uint64_t seed) {
  PluginCheckSpec spec;
  spec.name = name;
  spec.version = version;
  spec.pluginNamespace = ns;
  spec.fields = pluginFields(creatorFor(name, version, ns), fields);
  for (nb::handle in : inputs) {
    // (shape, dtype, low, high) or a NumPy array of fixed values.
    nb::tuple t = nb::cast<nb::tuple>(in);
    PluginCheckInput i = PluginCheckInput::random(toDims(nb::cast<std::vector<int64_t>>(t[0])),
                                                  nb::cast<DataType>(t[1]), nb::cast<double>(t[2]),
                                                  nb::cast<double>(t[3]));
    if (t.size() > 4 && !t[4].is_none()) i.values = nb::cast<std::vector<double>>(t[4]);
    spec.inputs.push_back(std::move(i));
  }
  spec.devices = devices;
  spec.contexts = contexts;
  spec.iterations = iterations;
  spec.maxCombinations = maxCombinations;
  spec.checkEmptyTensors = checkEmpty;
  spec.seed = seed;
  PluginCheckReport report;
  {
    nb::gil_scoped_release release;
    report = runPluginCheck(spec);
  }
  nb::list rows;
  for (const PluginCheckRow& r : report.rows) {
    nb::dict d;
    d["check"] = r.check;
    d["device"] = r.device;
    d["combination"] = r.combination;
    d["outcome"] = pluginCheckOutcomeName(r.outcome);
    d["detail"] = r.detail;
    rows.append(d);
  }
  std::ostringstream table;
  report.print(table);
  nb::dict out;
  out["rows"] = rows;
  out["seed"] = report.seed;
  out["passed"] = report.count(PluginCheckOutcome::kPass);
  out["failed"] = report.count(PluginCheckOutcome::kFail);
  out["skipped"] = report.count(PluginCheckOutcome::kSkip);
  out["all_passed"] = report.allPassed();
  out["table"] = table.str();
  return out;
}

// ---- the tensor's DLPack export
// --------------------------------------------------------------------

nb::object tensorView(nb::handle self, PyTensor& t) {
  size_t shape[Dims::kMaxDims];
  for (int32_t i = 0; i < t.dims.nbDims; ++i) shape[i] = static_cast<size_t>(t.dims.d[i]);
  const bool cuda = t.engine->getDevice().getKind() == DeviceKind::kCUDA;
  nb::ndarray<nb::array_api> view(t.buffer->data(), static_cast<size_t>(t.dims.nbDims), shape, self,
                                  nullptr, dlpackType(t.type), cuda ? kDLCUDA : kDLCPU,
                                  cuda ? t.engine->getDevice().getIndex() : 0);
  return nb::cast(view, nb::rv_policy::reference);
}

}  // namespace
}  // namespace kiln::python

using namespace kiln;
using namespace kiln::python;

NB_MODULE(_kiln, m) {
  m.doc() =
      "kiln's C++ API (include/kiln/), bound with nanobind. Use it through the kiln package: "
      "`import kiln`.";
  makeErrors(m);

  nb::enum_<DataType>(m, "DataType", "Element types (TensorRT's names).")
      .value("FLOAT", DataType::kFLOAT)
      .value("HALF", DataType::kHALF)
      .value("BF16", DataType::kBF16)
      .value("INT8", DataType::kINT8)
      .value("INT32", DataType::kINT32)
      .value("INT64", DataType::kINT64)
      .value("BOOL", DataType::kBOOL);
  m.def(
      "data_type_size", [](DataType t) { return dataTypeSize(t); }, "Bytes per element.");
  m.def(
      "data_type_name", [](DataType t) { return std::string(dataTypeName(t)); },
      "kiln's name: fp32, fp16, bf16, int8, int32, int64, bool.");
  nb::enum_<TensorFormat>(m, "TensorFormat", "Memory layouts.")
      .value("LINEAR", TensorFormat::kLINEAR)
      .value("CHANNELS_LAST", TensorFormat::kCHANNELS_LAST);
  nb::enum_<TensorIOMode>(m, "TensorIOMode", "Whether an engine tensor is an input or an output.")
      .value("INPUT", TensorIOMode::kINPUT)
      .value("OUTPUT", TensorIOMode::kOUTPUT);
  nb::enum_<DeviceKind>(m, "DeviceKind", "Where memory lives.")
      .value("CPU", DeviceKind::kCPU)
      .value("CUDA", DeviceKind::kCUDA);
  nb::enum_<Severity>(m, "Severity", "Log message severity (most severe first).")
      .value("ERROR", Severity::kError)
      .value("WARNING", Severity::kWarning)
      .value("INFO", Severity::kInfo)
      .value("VERBOSE", Severity::kVerbose);

  m.def("_set_logger", &setPyLogger, "fn"_a.none(),
        "Routes kiln's messages to fn(severity, message); None restores the default (stderr).");
  m.def("set_log_severity", &setLogSeverity, "severity"_a,
        "Messages less severe than this are dropped before reaching the logger.");
  m.def("get_log_severity", &getLogSeverity);
  m.def(
      "device_count",
      [](const std::string& kind) {
        DeviceKind k;
        if (kind == "cpu")
          k = DeviceKind::kCPU;
        else if (kind == "cuda")
          k = DeviceKind::kCUDA;
        else
          throw KilnError{invalidArgument("device kind is 'cpu' or 'cuda', not '" + kind + "'")};
        std::string why;
        const int32_t n = deviceCount(k, &why);
        return std::make_pair(n, why);
      },
      "kind"_a,
      "(count, why): how many devices of kind 'cpu' or 'cuda' kiln can run on, and why none "
      "when 0.");

  // -- network --
  nb::class_<ITensor>(m, "ITensor", "A tensor of a network definition.")
      .def_prop_rw(
          "name", [](const ITensor& t) { return std::string(t.getName()); },
          [](ITensor& t, const std::string& n) {
            if (!t.setName(n.c_str()))
              throw KilnError{invalidArgument("tensor name '" + n + "' is taken")};
          })
      .def_prop_ro("shape", [](const ITensor& t) { return dimsTuple(t.getDimensions()); })
      .def_prop_ro("dtype", &ITensor::getType)
      .def_prop_ro("is_network_input", &ITensor::isNetworkInput)
      .def_prop_ro("is_network_output", &ITensor::isNetworkOutput)
      .def("__repr__", [](const ITensor& t) {
        return "<kiln.ITensor '" + std::string(t.getName()) + "' " + dataTypeName(t.getType()) +
               dimsText(t.getDimensions()) + ">";
      });
  nb::class_<ILayer>(m, "ILayer", "A layer of a network definition.")
      .def_prop_rw(
          "name", [](const ILayer& l) { return std::string(l.getName()); },
          [](ILayer& l, const std::string& n) {
            if (!l.setName(n.c_str()))
              throw KilnError{invalidArgument("layer name '" + n + "' is taken")};
          })
      .def_prop_ro("type", [](const ILayer& l) { return std::string(layerTypeName(l.getType())); })
      .def_prop_ro("num_inputs", &ILayer::getNbInputs)
      .def_prop_ro("num_outputs", &ILayer::getNbOutputs)
      .def("get_input", &ILayer::getInput, "index"_a, nb::rv_policy::reference)
      .def("get_output", &ILayer::getOutput, "index"_a, nb::rv_policy::reference);

  nb::class_<PyNetwork>(m, "INetworkDefinition",
                        "A network: inputs, layers and outputs, built by the ONNX parser or by "
                        "hand (Builder.create_network()). Layers and tensors belong to it.")
      .def(
          "add_input",
          [](PyNetwork& n, const std::string& name, DataType type,
             const std::vector<int64_t>& shape) {
            ITensor* t = n.net->addInput(name.c_str(), type, toDims(shape));
            if (!t) {
              Status s = n.net->getLastError();
              throw KilnError{s.isOk() ? invalidArgument("input '" + name + "' could not be added")
                                       : s};
            }
            return t;
          },
          "name"_a, "dtype"_a, "shape"_a, nb::rv_policy::reference_internal)
      .def(
          "mark_output", [](PyNetwork& n, ITensor& t) { check(n.net->markOutput(t)); }, "tensor"_a)
      .def(
          "add_constant",
          [](PyNetwork& n, nb::ndarray<nb::ro, nb::device::cpu, nb::c_contig> a) {
            DataType t;
            if (!fromDlpackType(a.dtype(), t))
              throw KilnError{invalidArgument("add_constant: kiln has no " +
                                              dlpackTypeName(a.dtype()) + " type")};
            std::vector<int64_t> shape;
            for (size_t i = 0; i < a.ndim(); ++i) shape.push_back(int64_t(a.shape(i)));
            Weights w{t, a.data(), static_cast<int64_t>(a.size())};
            return checkLayer(n, n.net->addConstant(toDims(shape), w), "constant");
          },
          "values"_a, nb::rv_policy::reference_internal,
          "A constant layer holding a copy of `values` (a C-contiguous NumPy array).")
      .def("add_layer", &addLayerByName, "op"_a, "inputs"_a, "params"_a,
           nb::rv_policy::reference_internal,
           "Adds a built-in layer by its op name (kiln.layer_parameters() lists them with "
           "their parameters and defaults), inputs in the order include/kiln/ops/<op>.h "
           "documents, parameters by keyword (C++ field names, or snake_case): "
           "net.add_layer('Activation', [x], type=0).")
      .def(
          "add_plugin",
          [](PyNetwork& n, const std::vector<ITensor*>& inputs, const std::string& name,
             nb::dict fields, const std::string& version, const std::string& ns) {
            std::vector<PluginCheckField> owned =
                pluginFields(creatorFor(name, version, ns), fields);
            std::vector<PluginField> pf;
            for (const PluginCheckField& f : owned)
              pf.push_back({f.name.c_str(), f.data.data(), f.type, f.length});
            PluginSpec spec;
            spec.name = name.c_str();
            spec.version = version.c_str();
            spec.pluginNamespace = ns.c_str();
            spec.fields = {static_cast<int32_t>(pf.size()), pf.data()};
            return checkLayer(
                n, n.net->addPlugin(inputs.data(), static_cast<int32_t>(inputs.size()), spec),
                "plugin " + name);
          },
          "inputs"_a, "name"_a, "fields"_a = nb::dict(), "version"_a = "1", "namespace"_a = "",
          nb::rv_policy::reference_internal,
          "Adds a plugin layer made through the registry; fields by name, typed as the creator "
          "lists them.")
      .def_prop_ro("num_layers", [](const PyNetwork& n) { return n.net->getNbLayers(); })
      .def_prop_ro("num_inputs", [](const PyNetwork& n) { return n.net->getNbInputs(); })
      .def_prop_ro("num_outputs", [](const PyNetwork& n) { return n.net->getNbOutputs(); })
      .def(
          "get_layer", [](const PyNetwork& n, int32_t i) { return n.net->getLayer(i); }, "index"_a,
          nb::rv_policy::reference_internal)
      .def(
          "get_input", [](const PyNetwork& n, int32_t i) { return n.net->getInput(i); }, "index"_a,
          nb::rv_policy::reference_internal)
      .def(
          "get_output", [](const PyNetwork& n, int32_t i) { return n.net->getOutput(i); },
          "index"_a, nb::rv_policy::reference_internal);
  m.def("layer_parameters", &layerParameters,
        "{op name: {parameter: default}} for every built-in layer add_layer() takes.");

  // -- builder --
  nb::class_<PyBuilderConfig>(m, "BuilderConfig",
                              "How the builder builds: target, precision, timing, cache, "
                              "verbosity, progress.")
      .def(nb::init<>())
      .def_prop_rw(
          "target", [](const PyBuilderConfig& c) { return c.config.target; },
          [](PyBuilderConfig& c, const std::string& v) { c.config.target = v; },
          "'cpu', 'cuda' or 'cuda:N'.")
      .def_prop_rw(
          "fp16", [](const PyBuilderConfig& c) { return c.config.builtinHalf; },
          [](PyBuilderConfig& c, bool v) { c.config.builtinHalf = v; },
          "CUDA: built-in float layers compute in FP16 where they have an FP16 kernel.")
      .def_prop_rw(
          "allow_half", [](const PyBuilderConfig& c) { return c.config.allowHalf; },
          [](PyBuilderConfig& c, bool v) { c.config.allowHalf = v; },
          "Allow FP16/BF16 formats wherever a layer or plugin offers them.")
      .def_prop_rw(
          "warmup_runs", [](const PyBuilderConfig& c) { return c.config.warmupRuns; },
          [](PyBuilderConfig& c, int32_t v) { c.config.warmupRuns = v; })
      .def_prop_rw(
          "timing_runs", [](const PyBuilderConfig& c) { return c.config.timingRuns; },
          [](PyBuilderConfig& c, int32_t v) { c.config.timingRuns = v; })
      .def_prop_rw(
          "max_workspace_bytes",
          [](const PyBuilderConfig& c) { return c.config.maxWorkspaceBytes; },
          [](PyBuilderConfig& c, size_t v) { c.config.maxWorkspaceBytes = v; })
      .def_prop_rw(
          "timing_cache", [](const PyBuilderConfig& c) { return c.config.timingCachePath; },
          [](PyBuilderConfig& c, const std::string& v) { c.config.timingCachePath = v; },
          "Timing cache file ('' for none), read and updated by each build.")
      .def_prop_rw(
          "verbose", [](const PyBuilderConfig& c) { return c.config.verbose; },
          [](PyBuilderConfig& c, bool v) { c.config.verbose = v; },
          "Log (at INFO) what each pass changed and every candidate rejected and chosen.")
      .def_prop_rw(
          "profiles", [](const PyBuilderConfig& c) { return c.profiles; },
          [](PyBuilderConfig& c, const PyProfiles& v) {
            c.config.profiles = toProfiles(v);
            c.profiles = v;
          },
          "Optimization profiles for a network with dynamic input dims: a list, per profile, of "
          "{input name: (min, opt, max)} shapes (TensorRT's rules; DESIGN.md section 7).")
      .def_prop_rw(
          "progress", [](const PyBuilderConfig& c) { return c.progress; },
          [](PyBuilderConfig& c, nb::object v) { c.progress = std::move(v); },
          "None, or fn(phase, done, total, layer) called after each unit of work of a build "
          "(phases 'layers', 'tactics', 'plan'); returning False (or raising) cancels it.");
  m.def("_build_serialized_network", &buildSerialized, "network"_a, "config"_a);
  m.def(
      "_create_network", []() { return PyNetwork{createNetwork()}; },
      "An empty network definition.");

  // -- ONNX --
  m.attr("HAVE_ONNX") =
#ifdef KILN_HAVE_ONNX
      true;
  m.def(
      "_parse_onnx_file",
      [](PyNetwork& n, const std::string& path, const InputShapes& shapes,
         const PyProfiles& profiles, const InputShapes& shapeValues) {
        const OnnxParserOptions options = parserOptions(shapes, profiles, shapeValues);
        Status s;
        {
          nb::gil_scoped_release release;
          s = parseOnnxFile(path, *n.net, options);
        }
        return s.isOk() ? nb::none() : errorObject(s);
      },
      "network"_a, "path"_a, "input_shapes"_a, "profiles"_a, "shape_values"_a);
  m.def(
      "_parse_onnx_bytes",
      [](PyNetwork& n, nb::handle data, const std::string& name, const InputShapes& shapes,
         const PyProfiles& profiles, const InputShapes& shapeValues) {
        const OnnxParserOptions options = parserOptions(shapes, profiles, shapeValues);
        Buffer b(data);
        Status s;
        {
          nb::gil_scoped_release release;
          s = parseOnnxBytes(b.data(), b.size(), name, *n.net, options);
        }
        return s.isOk() ? nb::none() : errorObject(s);
      },
      "network"_a, "data"_a, "name"_a, "input_shapes"_a, "profiles"_a, "shape_values"_a);
  m.def(
      "onnx_supported_ops", []() { return onnxSupportedOps(); },
      "The ONNX op types kiln imports itself (others go to the plugin registry).");
#else
      false;
#endif

  // -- runtime --
  nb::class_<PyDeviceBuffer>(m, "DeviceBuffer", "Memory on an engine's device that frees itself.")
      .def_prop_ro(
          "ptr",
          [](const PyDeviceBuffer& b) { return reinterpret_cast<uintptr_t>(b.buffer->data()); })
      .def_prop_ro("nbytes", [](const PyDeviceBuffer& b) { return b.buffer->size(); });
  nb::class_<PyStream>(m, "DeviceStream",
                       "A stream of the engine's device (a non-blocking cudaStream_t; null on "
                       "the CPU) that destroys itself.")
      .def_prop_ro("handle",
                   [](const PyStream& s) { return reinterpret_cast<uintptr_t>(s.stream->get()); })
      .def_prop_ro("cuda_stream",
                   [](const PyStream& s) { return reinterpret_cast<uintptr_t>(s.stream->get()); })
      .def(
          "synchronize",
          [](PyStream& s) {
            Status st;
            {
              nb::gil_scoped_release release;
              st = s.stream->synchronize();
            }
            check(st);
          },
          "Waits for everything enqueued on the stream.");
  nb::class_<PyDevice>(m, "Device",
                       "The device an engine runs on: memory, copies and streams, for programs "
                       "with no device code of their own.")
      .def_prop_ro("kind", [](const PyDevice& d) { return d.device().getKind(); })
      .def_prop_ro("index", [](const PyDevice& d) { return d.device().getIndex(); })
      .def_prop_ro("name",
                   [](const PyDevice& d) {
                     return d.device().getKind() == DeviceKind::kCUDA
                                ? "cuda:" + std::to_string(d.device().getIndex())
                                : std::string("cpu");
                   })
      .def(
          "allocate",
          [](const PyDevice& d, size_t bytes) {
            std::unique_ptr<IDeviceBuffer> b;
            check(d.device().allocate(bytes, "a Python buffer", b));
            return PyDeviceBuffer{std::move(b)};
          },
          "nbytes"_a)
      .def("create_stream",
           [](const PyDevice& d) {
             std::unique_ptr<IDeviceStream> s;
             check(d.device().createStream(s));
             return PyStream{d.engine, std::move(s)};
           })
      .def(
          "copy_from_host",
          [](const PyDevice& d, uintptr_t dst, nb::handle src) {
            Buffer b(src);
            Status s;
            {
              nb::gil_scoped_release release;
              s = d.device().copyFromHost(reinterpret_cast<void*>(dst), b.data(), b.size());
            }
            check(s);
          },
          "dst"_a, "src"_a, "Copies a host buffer's bytes to device address dst, and waits.")
      .def(
          "copy_to_host",
          [](const PyDevice& d, nb::handle dst, uintptr_t src) {
            Buffer b(dst, true);
            Status s;
            {
              nb::gil_scoped_release release;
              s = d.device().copyToHost(const_cast<void*>(b.data()),
                                        reinterpret_cast<const void*>(src), b.size());
            }
            check(s);
          },
          "dst"_a, "src"_a, "Copies len(dst) bytes from device address src into dst, and waits.");

  nb::class_<PyTensor>(m, "Tensor",
                       "A tensor in an engine's device memory (host memory for CPU engines), "
                       "as InferenceSession.run gives outputs back: DLPack-capable "
                       "(torch.from_dlpack(t), np.from_dlpack(t), cupy.from_dlpack(t) take it "
                       "without a copy), .numpy() copies it to the host.")
      .def_prop_ro("shape", [](const PyTensor& t) { return dimsTuple(t.dims); })
      .def_prop_ro("dtype", [](const PyTensor& t) { return t.type; })
      .def_prop_ro("nbytes", &PyTensor::nbytes)
      .def_prop_ro("data_ptr",
                   [](const PyTensor& t) { return reinterpret_cast<uintptr_t>(t.buffer->data()); })
      .def_prop_ro("device",
                   [](const PyTensor& t) {
                     return t.engine->getDevice().getKind() == DeviceKind::kCUDA
                                ? "cuda:" + std::to_string(t.engine->getDevice().getIndex())
                                : std::string("cpu");
                   })
      .def_prop_ro(
          "stream", [](const PyTensor& t) { return t.stream; },
          "The stream it was produced on (0: it was ready when run() returned).")
      .def("__dlpack_device__",
           [](const PyTensor& t) {
             const bool cuda = t.engine->getDevice().getKind() == DeviceKind::kCUDA;
             return std::make_pair(cuda ? kDLCUDA : kDLCPU,
                                   cuda ? t.engine->getDevice().getIndex() : 0);
           })
      .def(
          "_view", [](nb::handle self) { return tensorView(self, nb::cast<PyTensor&>(self)); },
          "A nanobind ndarray over the same memory, owning a reference to this tensor.")
      .def(
          "_copy_to_host",
          [](const PyTensor& t, nb::handle dst) {
            Buffer b(dst, true);
            if (b.size() != t.nbytes())
              throw KilnError{invalidArgument("copy_to_host: " + std::to_string(b.size()) +
                                              " bytes given for a tensor of " +
                                              std::to_string(t.nbytes()))};
            Status s;
            {
              nb::gil_scoped_release release;
              s = t.engine->getDevice().copyToHost(const_cast<void*>(b.data()), t.buffer->data(),
                                                   b.size());
            }
            check(s);
          },
          "dst"_a);

  nb::class_<BoundContext>(m, "IExecutionContext",
                           "Runs an engine: bind every input and output with set_tensor_address, "
                           "then execute_async(stream) as often as needed. One thread at a time; "
                           "make one context per thread.")
      .def(
          "set_tensor_address",
          [](BoundContext& c, const std::string& name, nb::object obj) {
            void* address;
            if (PyLong_Check(obj.ptr())) {
              address = reinterpret_cast<void*>(nb::cast<uintptr_t>(obj));
            } else {
              const bool output = c.engine->getTensorIOMode(name.c_str()) == TensorIOMode::kOUTPUT;
              address = arrayAddress(*c.engine, name, obj, output, c.context.get());
            }
            check(c.context->setTensorAddress(name.c_str(), address));
            for (auto& [n, o] : c.keep) {
              if (n == name) {
                o = obj;
                return;
              }
            }
            c.keep.emplace_back(name, obj);
          },
          "name"_a, "address"_a,
          "Binds memory to an input or output: an address (int), or an array-like on the "
          "engine's device (NumPy, or anything with __dlpack__: torch, CuPy, JAX), which must "
          "have the tensor's dtype and shape and be contiguous; kiln keeps a reference to it "
          "while it is bound.")
      .def(
          "set_cuda_graphs",
          [](BoundContext& c, bool enabled) { check(c.context->setCudaGraphs(enabled)); },
          "enabled"_a,
          "CUDA engines: keep CUDA graphs, one per profile, input shapes and addresses (made the "
          "second time they are seen, replayed after); UnsupportedError on the CPU. Plugin-free "
          "CUDA plans keep them by default.")
      .def(
          "cuda_graphs_on", [](const BoundContext& c) { return c.context->getCudaGraphs(); },
          "Whether enqueues use CUDA graphs now (the default, set_cuda_graphs, or automatic "
          "graphs given up where shapes or addresses kept changing).")
      .def(
          "cuda_graph_stats",
          [](const BoundContext& c) {
            const CudaGraphStats g = c.context->getCudaGraphStats();
            nb::dict d;
            d["captured"] = g.captured;
            d["replayed"] = g.replayed;
            d["direct"] = g.direct;
            d["failed"] = g.failed;
            d["held"] = g.held;
            return d;
          },
          "What set_cuda_graphs did: captured, replayed, direct (layer by layer), failed, held.")
      .def(
          "set_input_shape",
          [](BoundContext& c, const std::string& name, const std::vector<int64_t>& shape) {
            Status s;
            {
              nb::gil_scoped_release release;  // kernels for new shapes are made here
              s = c.context->setInputShape(name.c_str(), toDims(shape));
            }
            check(s);
          },
          "name"_a, "shape"_a,
          "The shape of a dynamic input for the next runs, inside the selected profile (the "
          "error names input, axis, value and range, and a profile that fits).")
      .def(
          "get_tensor_shape",
          [](const BoundContext& c, const std::string& name) {
            ioDesc(*c.engine, name);
            return dimsTuple(c.context->getTensorShape(name.c_str()));
          },
          "name"_a, "An input's or output's shape now: -1 where it waits for an input shape.")
      .def(
          "infer_shapes",
          [](const BoundContext& c) {
            std::vector<std::string> missing;
            check(c.context->inferShapes(missing));
            return missing;
          },
          "The dynamic inputs whose shape is still to set; raises when the shapes set disagree.")
      .def(
          "set_optimization_profile",
          [](BoundContext& c, int32_t index) { check(c.context->setOptimizationProfile(index)); },
          "index"_a, "Selects a profile (input shapes set before are forgotten).")
      .def_prop_ro("active_optimization_profile",
                   [](const BoundContext& c) { return c.context->getOptimizationProfile(); })
      .def(
          "get_tensor_address",
          [](const BoundContext& c, const std::string& name) {
            return reinterpret_cast<uintptr_t>(c.context->getTensorAddress(name.c_str()));
          },
          "name"_a, "The address bound to an input or output (0 if none).")
      .def(
          "execute_async",
          [](BoundContext& c, nb::handle stream) {
            const Stream s = toStream(stream);
            Status st;
            {
              nb::gil_scoped_release release;
              st = c.context->enqueue(s);
            }
            check(st);
          },
          "stream"_a = 0,
          "Runs the network: asynchronous on `stream` for CUDA engines (an int cudaStream_t, "
          "or an object with .cuda_stream or .ptr: torch.cuda.Stream, cupy.cuda.Stream); "
          "synchronous on the CPU.")
      .def("_bind",
           [](BoundContext& c, const std::string& name, nb::handle obj) {
             // InferenceSession's fast path: no reference kept (run() holds its arrays).
             check(c.context->setTensorAddress(
                 name.c_str(), arrayAddress(*c.engine, name, obj, false, c.context.get())));
           })
      .def("_bind_address", [](BoundContext& c, const std::string& name, uintptr_t a) {
        check(c.context->setTensorAddress(name.c_str(), reinterpret_cast<void*>(a)));
      });

  nb::class_<PyEngine>(m, "ICudaEngine",
                       "A loaded plan: immutable, shared by its execution contexts (any number, "
                       "on any threads).")
      .def_prop_ro("num_io_tensors", [](const PyEngine& e) { return e.engine->getNbIOTensors(); })
      .def(
          "get_tensor_name",
          [](const PyEngine& e, int32_t i) {
            const char* n = e.engine->getIOTensorName(i);
            if (!n)
              throw KilnError{invalidArgument("I/O tensor index " + std::to_string(i) +
                                              " out of range [0, " +
                                              std::to_string(e.engine->getNbIOTensors()) + ")")};
            return std::string(n);
          },
          "index"_a)
      .def(
          "get_tensor_mode",
          [](const PyEngine& e, const std::string& n) {
            ioDesc(*e.engine, n);
            return e.engine->getTensorIOMode(n.c_str());
          },
          "name"_a)
      .def(
          "get_tensor_shape",
          [](const PyEngine& e, const std::string& n) {
            return dimsTuple(ioDesc(*e.engine, n).dims);
          },
          "name"_a)
      .def(
          "get_tensor_dtype",
          [](const PyEngine& e, const std::string& n) { return ioDesc(*e.engine, n).type; },
          "name"_a)
      .def(
          "get_tensor_format",
          [](const PyEngine& e, const std::string& n) { return ioDesc(*e.engine, n).format; },
          "name"_a)
      .def_prop_ro("num_optimization_profiles",
                   [](const PyEngine& e) { return e.engine->getNbOptimizationProfiles(); })
      .def(
          "is_shape_value_input",
          [](const PyEngine& e, const std::string& n) {
            ioDesc(*e.engine, n);
            return e.engine->isShapeValueInput(n.c_str());
          },
          "name"_a,
          "Whether the input is a shape-value input (ITensor.setShapeValues; the parser's "
          "shape_values): its memory is host memory on every device, and it must hold the values "
          "the plan was built for (get_shape_values).")
      .def(
          "get_shape_values",
          [](const PyEngine& e, const std::string& n) {
            ioDesc(*e.engine, n);
            return e.engine->getShapeValues(n.c_str());
          },
          "name"_a, "The values a shape-value input's plan was built for; [] for other inputs.")
      .def(
          "get_tensor_profile_shape",
          [](const PyEngine& e, const std::string& n, int32_t profile) {
            ioDesc(*e.engine, n);
            nb::list out;
            for (OptProfileSelector w :
                 {OptProfileSelector::kMIN, OptProfileSelector::kOPT, OptProfileSelector::kMAX}) {
              const Dims d = e.engine->getProfileShape(n.c_str(), profile, w);
              if (d.nbDims < 0)
                throw KilnError{invalidArgument(
                    "profile " + std::to_string(profile) + " does not exist; the engine has " +
                    std::to_string(e.engine->getNbOptimizationProfiles()))};
              out.append(dimsTuple(d));
            }
            return out;
          },
          "name"_a, "profile"_a, "An input's [min, opt, max] shapes in a profile.")
      .def_prop_ro(
          "target", [](const PyEngine& e) { return std::string(e.engine->getTarget()); },
          "'cpu' or 'cuda:sm_90', as recorded in the plan.")
      .def_prop_ro("device", [](const PyEngine& e) { return PyDevice{e.engine}; })
      .def(
          "create_execution_context",
          [](const PyEngine& e) {
            std::unique_ptr<IExecutionContext> c;
            Status s;
            {
              nb::gil_scoped_release release;
              s = e.engine->createExecutionContext(c);
            }
            check(s);
            return BoundContext{e.engine, std::move(c), {}};
          },
          "A new execution context (its own activation memory and plugin objects).")
      .def(
          "_empty_tensor",
          [](const PyEngine& e, const std::string& name, nb::object shape) {
            PluginTensorDesc d = ioDesc(*e.engine, name);
            if (!shape.is_none()) d.dims = toDims(nb::cast<std::vector<int64_t>>(shape));
            if (hasDynamic(d.dims))
              throw KilnError{invalidArgument("tensor '" + name + "' has dynamic dims " +
                                              dimsText(d.dims) + ": give its shape")};
            std::unique_ptr<IDeviceBuffer> b;
            check(e.engine->getDevice().allocate(descBytes(d), name.c_str(), b));
            PyTensor t;
            t.engine = e.engine;
            t.buffer = std::move(b);
            t.dims = d.dims;
            t.type = d.type;
            return t;
          },
          "name"_a, "shape"_a = nb::none(),
          "A kiln.Tensor with the shape (or `shape`, for dynamic dims) and type of an I/O "
          "tensor, uninitialized.")
      .def(
          "inspect", [](const PyEngine& e) { return e.engine->inspect(); },
          "JSON: layers, tactics, formats, timings, the memory plan and plugin records.");
  m.def(
      "_set_tensor_stream", [](PyTensor& t, int64_t s) { t.stream = s; }, "tensor"_a, "stream"_a);

  m.def(
      "_deserialize_engine",
      [](nb::handle plan) {
        Buffer b(plan);
        std::unique_ptr<IEngine> engine;
        Status s;
        {
          nb::gil_scoped_release release;
          s = createRuntime()->deserializeEngine(b.data(), b.size(), engine);
        }
        check(s);
        return PyEngine{std::shared_ptr<IEngine>(std::move(engine))};
      },
      "plan"_a);
  m.def(
      "inspect_plan",
      [](nb::handle plan) {
        Buffer b(plan);
        std::string json;
        check(inspectPlan(b.data(), b.size(), json));
        return json;
      },
      "plan"_a, "JSON of a plan from its bytes alone (its plugins need not be registered).");

  // -- plugins --
  m.def(
      "load_plugin_library",
      [](const std::string& path) {
        Status s;
        {
          nb::gil_scoped_release release;
          s = PluginRegistry::global().loadLibrary(path);
        }
        check(s);
      },
      "path"_a,
      "dlopen()s a plugin library, checks its ABI version and registers its creators "
      "(loading the same library again is harmless).");
  m.def(
      "registered_plugins",
      []() {
        nb::list out;
        for (const PluginCreatorInfo& i : PluginRegistry::global().listCreators()) {
          nb::dict d;
          d["name"] = i.name;
          d["version"] = i.version;
          d["namespace"] = i.pluginNamespace;
          d["library"] = i.libraryName;
          d["library_hash"] = i.libraryHash;
          IPluginCreator* c = PluginRegistry::global().getCreator(i.name.c_str(), i.version.c_str(),
                                                                  i.pluginNamespace.c_str());
          nb::dict fields;
          if (const PluginFieldCollection* fc = c ? c->getFieldNames() : nullptr) {
            for (int32_t k = 0; k < fc->nbFields; ++k)
              fields[fc->fields[k].name] = pluginFieldTypeName(fc->fields[k].type);
          }
          d["fields"] = fields;
          out.append(d);
        }
        return out;
      },
      "The plugin creators registered, each {name, version, namespace, library, library_hash, "
      "fields: {name: type}}.");
  m.def(
      "set_trace_path", [](const std::string& p) { check(setTracePath(p)); }, "path"_a,
      "Writes the plugin lifecycle trace (one JSON line per call) to path ('-': stderr, '': "
      "off).");
  m.def("flush_trace", &flushTrace);
  m.def("_plugin_check", &pluginCheck, "name"_a, "fields"_a, "inputs"_a, "version"_a, "namespace"_a,
        "devices"_a, "contexts"_a, "iterations"_a, "max_combinations"_a, "check_empty_tensors"_a,
        "seed"_a);
  m.attr("__version__") = KILN_VERSION_STRING;
}

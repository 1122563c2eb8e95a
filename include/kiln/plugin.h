// The plugin ABI: what a plugin author implements and what a plugin library exports.
//
// This header is the boundary between kiln and code from another shared library, so it keeps to
// plain types: integers, floats, pointers with counts and fixed-layout structs. No STL, and no
// exceptions cross it: every fallible method returns an int32_t status (kPLUGIN_SUCCESS == 0).
// Every method is noexcept; a plugin that throws terminates the process, as it would in TensorRT.
//
// The lifecycle, the objects the engine makes (definition, build, engine and context objects)
// and the eight guarantees the engine keeps are written down in DESIGN.md §2. In short:
//   definition D  = createPlugin(fields)           owned by the network
//   build object  = D.clone(), configured and timed by the builder, then destroyed
//   engine object = deserializePlugin(bytes), initialize() once, terminate() + destroy() at
//                   teardown
//   context obj.  = E.clone(), attachToContext(), onShapeChange(), enqueue()...,
//                   detachFromContext(), destroy()
// Context objects are never initialized; deserialized objects and their clones are never
// configured, so whatever configurePlugin() decides must be written by serialize().
//
// Dynamic shapes (DESIGN.md §7, ABI version 2): configurePlugin() and getWorkspaceSize() see each
// tensor with -1 where its dims vary inside an optimization profile, plus the profile's min, opt
// and max dims; a context object hears the concrete shapes through onShapeChange() before its
// first enqueue() and before the first enqueue() after they change (guarantee 9).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kiln/types.h"

namespace kiln {

// Bumped whenever a virtual interface or struct in this header changes layout. Version 2 added
// DynamicPluginTensorDesc (configurePlugin, getWorkspaceSize) and onShapeChange(); a library
// built for version 1 is refused when it is loaded.
constexpr int32_t kPluginAbiVersion = 2;

// Status codes returned by plugin and creator methods.
constexpr int32_t kPLUGIN_SUCCESS = 0;
constexpr int32_t kPLUGIN_FAILURE = 1;
constexpr int32_t kPLUGIN_INVALID_ARGUMENT = 2;
constexpr int32_t kPLUGIN_UNSUPPORTED = 3;

// ---- fields -------------------------------------------------------------------------------------

// The type of a plugin field. Types are kept end to end (an int64 attribute stays int64); a
// creator that receives a type it does not accept must fail, naming the field.
enum class PluginFieldType : int32_t {
  kFLOAT32 = 0,
  kFLOAT64 = 1,
  kINT8 = 2,
  kINT16 = 3,
  kINT32 = 4,
  kINT64 = 5,
  kSTRING = 6,  // `length` chars at `data`, not necessarily NUL-terminated
  kDIMS = 7,    // `length` kiln::Dims structs at `data`
};
const char* pluginFieldTypeName(PluginFieldType type);

struct PluginField {
  const char* name = nullptr;
  const void* data = nullptr;
  PluginFieldType type = PluginFieldType::kINT32;
  int32_t length = 0;  // number of elements (chars for kSTRING)
};

struct PluginFieldCollection {
  int32_t nbFields = 0;
  const PluginField* fields = nullptr;
};

// ---- shapes as expressions ---------------------------------------------------------------------

// Output dimensions are expressions of input dimensions. kiln calls getOutputDimensions() at
// concrete shapes only (each corner of each profile at build, the shapes set at run time), so
// every expression it hands out is constant; a plugin written against the interface, as for
// TensorRT, works unchanged.
enum class DimensionOperation : int32_t {
  kSUM = 0,
  kPROD = 1,
  kMAX = 2,
  kMIN = 3,
  kSUB = 4,
  kEQUAL = 5,  // 1 if equal else 0
  kLESS = 6,   // 1 if first < second else 0
  kFLOOR_DIV = 7,
  kCEIL_DIV = 8,
};

class IDimensionExpr {
 public:
  virtual bool isConstant() const noexcept = 0;
  // Only meaningful when isConstant(); otherwise returns -1.
  virtual int64_t getConstantValue() const noexcept = 0;

 protected:
  ~IDimensionExpr() = default;
};

// Expressions are owned by the builder and live until the shape call returns.
class IExprBuilder {
 public:
  virtual const IDimensionExpr* constant(int64_t value) noexcept = 0;
  // nullptr if an operand is null or the operation is undefined (division by zero).
  virtual const IDimensionExpr* operation(DimensionOperation op, const IDimensionExpr& first,
                                          const IDimensionExpr& second) noexcept = 0;

 protected:
  ~IExprBuilder() = default;
};

struct DimsExprs {
  int32_t nbDims = 0;
  const IDimensionExpr* d[Dims::kMaxDims] = {};
};

// A tensor as the builder sees it for an optimization profile: `desc.dims` has -1 on every axis
// that varies inside the profile, and min, opt and max are the profile's corners (all equal to
// desc.dims for a tensor, or a build, without dynamic axes). Types and formats are fixed.
struct DynamicPluginTensorDesc {
  PluginTensorDesc desc;
  Dims min;
  Dims opt;
  Dims max;
};

// ---- per-context resources ---------------------------------------------------------------------

// Given to a context object by attachToContext(). Everything it hands out belongs to the
// execution context and stays valid until after detachFromContext() returns.
class IPluginContextResources {
 public:
  virtual DeviceKind getDeviceKind() const noexcept = 0;
  // CUDA device ordinal, or -1 on the CPU.
  virtual int32_t getDeviceIndex() const noexcept = 0;
  // Per-context memory on the context's device, freed when the context is destroyed.
  // nullptr on failure. Not for use inside enqueue() on a hot path.
  virtual void* allocatePersistent(size_t bytes, size_t alignment) noexcept = 0;
  // Library handles owned by the context, created on first request (so contexts whose plugins
  // never ask pay nothing). nullptr where the backend has no such library.
  virtual void* getCublasHandle() noexcept = 0;
  virtual void* getCudnnHandle() noexcept = 0;

 protected:
  ~IPluginContextResources() = default;
};

// ---- the plugin --------------------------------------------------------------------------------

class IPlugin {
 public:
  // Identity. Pointers stay valid for the object's life.
  virtual const char* getPluginName() const noexcept = 0;
  virtual const char* getPluginVersion() const noexcept = 0;
  virtual void setPluginNamespace(const char* pluginNamespace) noexcept = 0;
  virtual const char* getPluginNamespace() const noexcept = 0;

  // Shape and type functions (called on any object, any phase).
  virtual int32_t getNbOutputs() const noexcept = 0;
  virtual int32_t getOutputDataType(int32_t outputIndex, const DataType* inputTypes,
                                    int32_t nbInputs, DataType* outputType) const noexcept = 0;
  virtual int32_t getOutputDimensions(int32_t outputIndex, const DimsExprs* inputs,
                                      int32_t nbInputs, IExprBuilder& exprBuilder,
                                      DimsExprs* output) noexcept = 0;

  // Format negotiation: may the tensor at `pos` (inputs first, then outputs) have the type and
  // format in inOut[pos], given the choices already made for positions < pos?
  virtual bool supportsFormatCombination(int32_t pos, const PluginTensorDesc* inOut,
                                         int32_t nbInputs, int32_t nbOutputs) noexcept = 0;

  // Build objects only: called once the builder has fixed types and formats, once per
  // optimization profile in profile order (a static build has one). What serialize() writes
  // after the last call must serve every profile.
  virtual int32_t configurePlugin(const DynamicPluginTensorDesc* inputs, int32_t nbInputs,
                                  const DynamicPluginTensorDesc* outputs,
                                  int32_t nbOutputs) noexcept = 0;
  // Scratch bytes enqueue() needs for every shape between min and max of these tensors. No
  // default: a plugin must say. Called on build objects after configurePlugin() and on engine
  // objects, once per profile.
  virtual int32_t getWorkspaceSize(const DynamicPluginTensorDesc* inputs, int32_t nbInputs,
                                   const DynamicPluginTensorDesc* outputs, int32_t nbOutputs,
                                   size_t* bytes) const noexcept = 0;

  // Per-engine immutable resources. At most once per object; never on context objects.
  virtual int32_t initialize() noexcept = 0;
  // Releases what initialize() acquired; called iff initialize() succeeded, exactly once.
  virtual int32_t terminate() noexcept = 0;

  // Context objects only, between attachToContext() and detachFromContext().
  virtual int32_t attachToContext(IPluginContextResources* resources) noexcept = 0;
  virtual int32_t detachFromContext() noexcept = 0;

  // Context objects only: the concrete shapes of the next enqueue(), before the first one and
  // before the first one after any of this plugin's tensor shapes change (never twice for the
  // same shapes in a row). The place to check shapes and prepare per-shape state, outside the
  // hot path; a failure fails that enqueue, and the next one calls it again.
  virtual int32_t onShapeChange(const PluginTensorDesc* inputs, int32_t nbInputs,
                                const PluginTensorDesc* outputs, int32_t nbOutputs) noexcept = 0;

  // Runs the op. `stream` is nullptr on the CPU and a cudaStream_t on CUDA; pointers are in the
  // memory named by each desc's `device`.
  virtual int32_t enqueue(const PluginTensorDesc* inputDesc, const PluginTensorDesc* outputDesc,
                          const void* const* inputs, void* const* outputs, void* workspace,
                          Stream stream) noexcept = 0;

  // Everything deserializePlugin() needs to rebuild this object, configuration included.
  virtual size_t getSerializationSize() const noexcept = 0;
  virtual int32_t serialize(void* buffer, size_t length) const noexcept = 0;

  // A new object with the same fields, configuration and namespace; shares (does not copy)
  // resources from initialize(). nullptr on failure.
  virtual IPlugin* clone() const noexcept = 0;
  // Releases the object; the last call on it.
  virtual void destroy() noexcept = 0;

  // A message for the last failed call on this object, or nullptr.
  virtual const char* getLastError() const noexcept = 0;

 protected:
  ~IPlugin() = default;
};

// ---- the creator -------------------------------------------------------------------------------

class IPluginCreator {
 public:
  virtual const char* getPluginName() const noexcept = 0;
  virtual const char* getPluginVersion() const noexcept = 0;
  // The fields createPlugin() accepts, with their types; `data` is nullptr and `length` is the
  // expected element count (0 for "any"). Valid for the creator's life.
  virtual const PluginFieldCollection* getFieldNames() noexcept = 0;
  // nullptr on failure, with getLastError() saying why (e.g. naming the bad field).
  virtual IPlugin* createPlugin(const char* layerName,
                                const PluginFieldCollection* fields) noexcept = 0;
  virtual IPlugin* deserializePlugin(const char* layerName, const void* data,
                                     size_t length) noexcept = 0;
  virtual const char* getLastError() const noexcept = 0;

 protected:
  ~IPluginCreator() = default;
};

// ---- plugin libraries --------------------------------------------------------------------------

// What a plugin library exports. The creators live as long as the library is loaded.
struct PluginLibraryInfo {
  int32_t abiVersion = kPluginAbiVersion;
  int32_t nbCreators = 0;
  IPluginCreator* const* creators = nullptr;
};

}  // namespace kiln

// A plugin library defines this one C function; kiln finds it with dlsym after dlopen.
#define KILN_PLUGIN_LIBRARY_ENTRY_NAME "kilnGetPluginLibrary"
extern "C" {
using KilnGetPluginLibraryFn = const kiln::PluginLibraryInfo* (*)();
}

// Reading and writing NumPy .npy files, for the command line and the tests.
//
// Supported: format versions 1.0, 2.0 (and 3.0, which differs only in allowing UTF-8 in the
// header), C order, and the dtypes that map one to one onto kiln's types:
//   '<f4' kFLOAT   '<f2' kHALF   '|i1' kINT8   '<i4' kINT32   '<i8' kINT64   '|b1' kBOOL
// ('=' for native order is read as '<', since kiln assumes a little-endian host.) Anything else
// (big-endian data, float64, unsigned types, Fortran order, object arrays) is refused with an
// error that names the file and the problem; nothing is converted silently.
//
// bfloat16 has no NumPy dtype: writeNpy() stores a kBF16 array as '<f4' (exact, since every
// bfloat16 is a float32), so reading it back yields kFLOAT.
//
// Every size in a file is checked against the file's length before anything is allocated, so a
// hostile file cannot make the reader crash or allocate more than the file holds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/status.h"
#include "kiln/types.h"

namespace kiln::npy {

struct NpyArray {
  DataType type = DataType::kFLOAT;
  Dims dims;                  // rank 0 to Dims::kMaxDims; a rank-0 array has one element
  std::vector<uint8_t> data;  // volume(dims) elements of `type`, C order, little-endian
};

Status readNpy(const std::string& path, NpyArray& out);
Status writeNpy(const std::string& path, const NpyArray& array);

// The same on bytes in memory (for tests, fuzzing and callers that hold the file already).
// `what` names the source in error messages.
Status decodeNpy(const void* bytes, size_t length, NpyArray& out,
                 const std::string& what = "npy data");
Status encodeNpy(const NpyArray& array, std::vector<uint8_t>& out);

}  // namespace kiln::npy

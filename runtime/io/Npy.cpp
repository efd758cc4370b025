//===- Npy.cpp - numpy's .npy array format --------------------------------===//
#include "runtime/io/Npy.h"

#include "runtime/support/Bytes.h"

#include <cstring>

namespace memc::runtime {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;
/// numpy aligns the data of the files it writes to this many bytes.
constexpr size_t kHeaderAlignment = 64;

struct NpyHeader {
  std::string descr;
  bool fortranOrder = false;
  std::vector<int64_t> shape;
};

/// A parser for the one Python dict literal numpy writes as the header.
class HeaderParser {
public:
  explicit HeaderParser(std::string_view text) : text(text) {}

  bool parse(NpyHeader &header, std::string &error) {
    bool sawDescr = false, sawOrder = false, sawShape = false;
    skipSpace();
    if (!consume('{'))
      return fail("header is not a dict", error);
    while (true) {
      skipSpace();
      if (consume('}'))
        break;
      std::string key;
      if (!parseString(key) || (skipSpace(), !consume(':')))
        return fail("malformed header dict", error);
      skipSpace();
      bool ok;
      if (key == "descr" && !sawDescr) {
        sawDescr = true;
        if (at < text.size() && text[at] == '[')
          return fail("structured dtypes are not supported", error);
        ok = parseString(header.descr);
      } else if (key == "fortran_order" && !sawOrder) {
        sawOrder = true;
        ok = parseBool(header.fortranOrder);
      } else if (key == "shape" && !sawShape) {
        sawShape = true;
        ok = parseShape(header.shape);
      } else {
        return fail("unexpected or repeated header key '" + key + "'", error);
      }
      if (!ok)
        return fail("malformed value for '" + key + "'", error);
      skipSpace();
      if (consume('}'))
        break;
      if (!consume(','))
        return fail("malformed header dict", error);
    }
    skipSpace();
    if (at != text.size())
      return fail("text after the header dict", error);
    if (!sawDescr || !sawOrder || !sawShape)
      return fail("header lacks descr, fortran_order or shape", error);
    return true;
  }

private:
  std::string_view text;
  size_t at = 0;

  static bool fail(const std::string &what, std::string &error) {
    error = "npy header: " + what;
    return false;
  }
  void skipSpace() {
    while (at < text.size() && (text[at] == ' ' || text[at] == '\n' || text[at] == '\t'))
      ++at;
  }
  bool consume(char c) {
    if (at < text.size() && text[at] == c) {
      ++at;
      return true;
    }
    return false;
  }
  bool consumeWord(std::string_view word) {
    if (text.substr(at, word.size()) != word)
      return false;
    at += word.size();
    return true;
  }
  bool parseString(std::string &out) {
    if (at >= text.size() || (text[at] != '\'' && text[at] != '"'))
      return false;
    char quote = text[at++];
    size_t end = text.find(quote, at);
    if (end == std::string_view::npos)
      return false;
    out = std::string(text.substr(at, end - at));
    at = end + 1;
    return out.find('\\') == std::string::npos;
  }
  bool parseBool(bool &out) {
    if (consumeWord("True"))
      out = true;
    else if (consumeWord("False"))
      out = false;
    else
      return false;
    return true;
  }
  bool parseInt(int64_t &out) {
    size_t start = at;
    uint64_t value = 0;
    while (at < text.size() && text[at] >= '0' && text[at] <= '9') {
      if (!checkedMul(value, 10, value) || !checkedAdd(value, text[at] - '0', value) ||
          value > static_cast<uint64_t>(INT64_MAX))
        return false;
      ++at;
    }
    consume('L'); // Python 2 longs, in files numpy wrote long ago
    out = static_cast<int64_t>(value);
    return at > start;
  }
  bool parseShape(std::vector<int64_t> &shape) {
    if (!consume('('))
      return false;
    while (true) {
      skipSpace();
      if (consume(')'))
        return true;
      int64_t dim;
      if (!parseInt(dim))
        return false;
      shape.push_back(dim);
      skipSpace();
      // "(3)" is not a tuple in Python: a single dim needs its trailing comma.
      if (consume(')'))
        return shape.size() != 1;
      if (!consume(','))
        return false;
    }
  }
};

/// numpy's float64, which the reader narrows to f32: numpy's default float, and memc has no f64.
constexpr const char *kF64Descr = "<f8";

/// The descr written for `dtype`: the table's; numpy has no packed types, so those are written
/// as their bytes, '|u1' [bytes].
const char *descrFor(DType dtype) {
  bool packed = kernels::findDType(dtype)->kind == kernels::DTypeKind::Packed;
  return kernels::findDType(packed ? DType::U8 : dtype)->numpyDescr;
}

/// Arrays carry graph inputs and outputs, so the reader takes the types ops compute on.
bool readable(const kernels::DTypeInfo *row) { return row && row->computed && row->numpyDescr; }

/// "<f4 <f2 ...": the descrs the reader takes.
std::string readableDescrs() {
  std::string list;
  for (const kernels::DTypeInfo &row : kernels::kDTypeTable)
    if (readable(&row))
      list += (list.empty() ? "" : " ") + std::string(row.numpyDescr);
  return list;
}

void narrowF64(std::string_view data, HostArray &out) {
  float *to = out.as<float>();
  for (size_t i = 0; i < data.size() / 8; ++i) {
    double value;
    std::memcpy(&value, data.data() + 8 * i, 8);
    to[i] = static_cast<float>(value);
  }
}

} // namespace

bool parseNpyLayout(std::string_view bytes, NpyLayout &layout, std::string &error) {
  if (bytes.size() < kMagicSize + 4 || bytes.substr(0, kMagicSize) != std::string_view(kMagic)) {
    error = "not a .npy file (bad magic)";
    return false;
  }
  uint8_t major = static_cast<uint8_t>(bytes[6]);
  if (major < 1 || major > 3) {
    error = "unsupported .npy version " + std::to_string(major) + "." +
            std::to_string(static_cast<uint8_t>(bytes[7]));
    return false;
  }
  size_t lengthSize = major == 1 ? 2 : 4;
  if (bytes.size() < 8 + lengthSize) {
    error = "truncated .npy header";
    return false;
  }
  uint64_t headerSize = major == 1 ? readLittleEndian<uint16_t>(bytes.data() + 8)
                                   : readLittleEndian<uint32_t>(bytes.data() + 8);
  size_t dataStart = 8 + lengthSize;
  if (headerSize > bytes.size() - dataStart) {
    error = "truncated .npy header";
    return false;
  }
  NpyHeader header;
  if (!HeaderParser(bytes.substr(dataStart, headerSize)).parse(header, error))
    return false;
  if (header.fortranOrder) {
    error = "fortran_order arrays are not supported (write them with np.ascontiguousarray)";
    return false;
  }
  bool narrowed = header.descr == kF64Descr;
  const kernels::DTypeInfo *row = narrowed ? kernels::findDType(DType::F32)
                                           : kernels::findNumpyDType(header.descr.c_str());
  if (!readable(row)) {
    error = "unsupported array type '" + header.descr + "' (supported: " + readableDescrs() +
            ", and " + kF64Descr + " read as f32)";
    return false;
  }
  uint64_t count;
  // An f64 element takes twice the bytes of the f32 it narrows to.
  if (!checkedNumElements(header.shape, count) ||
      !kernels::checkedStorageBytes(row->dtype, count, layout.memoryBytes) ||
      !checkedMul(layout.memoryBytes, narrowed ? 2 : 1, layout.dataBytes)) {
    error = "shape " + shapeString(header.shape) + " is too large";
    return false;
  }
  layout.dtype = row->dtype;
  layout.fileType = narrowed                     ? FileType::Float64
                    : row->dtype == DType::BF16 ? FileType::Uint16
                                                : FileType::Same;
  layout.descr = header.descr;
  layout.shape = header.shape;
  layout.dataOffset = dataStart + headerSize;
  return true;
}

bool parseNpy(std::string_view bytes, HostArray &out, std::string &error) {
  NpyLayout layout;
  if (!parseNpyLayout(bytes, layout, error))
    return false;
  std::string_view data = bytes.substr(layout.dataOffset);
  if (data.size() != layout.dataBytes) {
    error = "array '" + layout.descr + "' " + shapeString(layout.shape) + " needs " +
            std::to_string(layout.dataBytes) + " data bytes, the file has " +
            std::to_string(data.size());
    return false;
  }
  out.dtype = layout.dtype;
  out.shape = layout.shape;
  out.bytes.resize(layout.memoryBytes);
  out.fileType = layout.fileType;
  if (layout.fileType == FileType::Float64)
    narrowF64(data, out);
  else if (!data.empty())
    std::memcpy(out.bytes.data(), data.data(), data.size());
  return true;
}

std::string fileDTypeString(const HostArray &array) {
  switch (array.fileType) {
  case FileType::Float64: return "f64";
  case FileType::Uint16: return "uint16";
  case FileType::Same: break;
  }
  return dtypeString(array.dtype);
}

std::string float64Note(const std::string &name) {
  return "'" + name + "' is float64 data; memc converts it to float32, the type the model takes " +
         "(write float32 to avoid the conversion)";
}

std::string inputTypeProblem(const HostArray &array, DType expected) {
  if (array.fileType == FileType::Float64 && expected != DType::F32)
    return "float64 data converts only to float32 inputs";
  if (array.fileType == FileType::Uint16 && expected != DType::BF16)
    return std::string("uint16 arrays carry bf16 bits and feed only bf16 inputs; this one "
                       "takes '") +
           kernels::findDType(expected)->numpyDescr + "' data";
  if (array.dtype != DType::BF16 && kernels::isFloating(array.dtype) && expected == DType::BF16)
    return "numpy has no bfloat16: write the bf16 bits as uint16, e.g. "
           "t.bfloat16().view(torch.int16).numpy().view(np.uint16) from a torch tensor";
  return "";
}

std::string serializeNpy(const HostArray &array) {
  bool packed = kernels::findDType(array.dtype)->kind == kernels::DTypeKind::Packed;
  std::vector<int64_t> shape =
      packed ? std::vector<int64_t>{static_cast<int64_t>(array.bytes.size())} : array.shape;
  std::string dict = std::string("{'descr': '") + descrFor(array.dtype) +
                     "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i)
    dict += (i ? ", " : "") + std::to_string(shape[i]);
  dict += shape.size() == 1 ? ",), }" : "), }";
  size_t unpadded = kMagicSize + 2 + 2 + dict.size() + 1;
  bool version2 = unpadded + kHeaderAlignment > 0xffff;
  if (version2)
    unpadded += 2;
  dict.append((kHeaderAlignment - unpadded % kHeaderAlignment) % kHeaderAlignment, ' ');
  dict += '\n';

  std::string out(kMagic, kMagicSize);
  out.push_back(static_cast<char>(version2 ? 2 : 1));
  out.push_back(0);
  if (version2)
    appendLittleEndian<uint32_t>(out, static_cast<uint32_t>(dict.size()));
  else
    appendLittleEndian<uint16_t>(out, static_cast<uint16_t>(dict.size()));
  out += dict;
  out.append(reinterpret_cast<const char *>(array.bytes.data()), array.bytes.size());
  return out;
}

} // namespace memc::runtime

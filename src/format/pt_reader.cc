// ReadPtTensor: torch.save's ZIP archive -> data.pkl -> storage -> Tensor.
#include "lockstep/format/pt_reader.h"

#include <cstdint>
#include <optional>
#include <utility>

#include "format/bytes.h"
#include "format/strided.h"
#include "lockstep/core/file.h"
#include "lockstep/format/pyvalue.h"
#include "lockstep/format/zip.h"

namespace lockstep {
namespace {

constexpr uint64_t kMaxPickleBytes = uint64_t{64} << 20;
constexpr uint64_t kMaxByteOrderBytes = 64;
constexpr size_t kDataPklLen = sizeof("/data.pkl") - 1;

// torch's legacy format begins with its MAGIC_NUMBER 0x1950a86a20f9469cfc6c
// pickled as LONG1 (10 bytes).
constexpr std::string_view kLegacyMagic(
    "\x8a\x0a\x6c\xfc\x9c\x46\xf9\x20\x6a\xa8\x50\x19", 12);

Status CheckNotLegacy(std::string_view bytes, const std::string& name) {
  if (bytes.substr(0, 32).find(kLegacyMagic) != std::string_view::npos) {
    return Status::NotSupported(
        name,
        "legacy torch.save format (torch < 1.6, or "
        "_use_new_zipfile_serialization=False) is not supported. Note: "
        "re-save it with torch >= 1.6: torch.save(torch.load(f), f)");
  }
  if (bytes.size() >= 262 && bytes.substr(257, 5) == "ustar") {
    return Status::NotSupported(
        name, "tar-based torch.save format (torch < 0.4) is not supported");
  }
  if (bytes.substr(0, 6) == "\x93NUMPY") {
    return Status::InvalidArgument(
        name, "is a .npy file, not a torch.save file. Note: read it as .npy");
  }
  return Status::Ok();
}

// Like torch, takes the record prefix from the first entry's name; failing
// that, from any "<prefix>/data.pkl".
StatusOr<const ZipEntry*> FindPickle(const ZipReader& zip,
                                     std::string* prefix) {
  if (zip.entries().empty()) {
    return Status::NotFound(zip.name(),
                            "the ZIP archive has no entries, "
                            "expected '<prefix>/data.pkl'");
  }
  const std::string& first = zip.entries()[0].name;
  *prefix = first.substr(0, first.find('/'));
  if (const ZipEntry* e = zip.Find(*prefix + "/data.pkl")) return e;
  for (const ZipEntry& e : zip.entries()) {
    size_t slash = e.name.find('/');
    if (slash != std::string::npos && slash + kDataPklLen == e.name.size() &&
        e.name.compare(slash, kDataPklLen, "/data.pkl") == 0) {
      *prefix = e.name.substr(0, slash);
      return &e;
    }
  }
  return Status::NotFound(zip.name(), "no zip entry '" + *prefix +
                                          "/data.pkl': not a torch.save file");
}

// A small record (data.pkl, byteorder), CRC-checked.
StatusOr<std::string_view> ReadRecord(const ZipReader& zip, const ZipEntry& e,
                                      uint64_t max_bytes,
                                      std::string* scratch) {
  LOCKSTEP_ASSIGN_OR_RETURN(std::string_view data,
                            zip.Data(e, scratch, max_bytes));
  LOCKSTEP_RETURN_IF_ERROR(zip.VerifyCrc(e, data));
  return data;
}

// True when the archive's byteorder record says "big".
StatusOr<bool> IsBigEndian(const ZipReader& zip, const std::string& prefix) {
  const ZipEntry* e = zip.Find(prefix + "/byteorder");
  if (e == nullptr) return false;  // absent: little, as torch.load assumes
  std::string scratch;
  LOCKSTEP_ASSIGN_OR_RETURN(std::string_view order,
                            ReadRecord(zip, *e, kMaxByteOrderBytes, &scratch));
  if (order == "little") return false;
  if (order == "big") return true;
  return Status::Corruption(
      zip.Subject(*e),
      "is " + PyStrRepr(std::string(order)) + ", expected 'little' or 'big'");
}

// The storage's bytes and what keeps them alive (null: nothing does, copy).
struct Storage {
  std::string_view bytes;
  std::shared_ptr<const void> owner;
  // The recorded CRC-32 of `bytes`, when its check was deferred.
  std::optional<uint32_t> unverified_crc;
  std::string subject;  // the entry, for messages
};

// Checks a deferred CRC-32 of the storage now.
Status VerifyDeferredCrc(const Storage& st) {
  if (!st.unverified_crc) return Status::Ok();
  uint32_t actual = Crc32(st.bytes);
  if (actual == *st.unverified_crc) return Status::Ok();
  return Status::Corruption(st.subject, "CRC-32 is " + internal::Hex(actual) +
                                            ", recorded " +
                                            internal::Hex(*st.unverified_crc));
}

StatusOr<Storage> ReadStorage(const ZipReader& zip, const std::string& prefix,
                              const PtTensorSpec& spec,
                              std::shared_ptr<const void> owner,
                              const PtReadOptions& options,
                              ReadBudget* budget) {
  std::string entry_name = prefix + "/data/" + spec.storage_key;
  const ZipEntry* e = zip.Find(entry_name);
  if (e == nullptr) {
    return Status::NotFound(zip.name(), "no zip entry '" +
                                            Abbreviate(entry_name) +
                                            "' for the tensor's storage");
  }
  // The pickle says what the storage holds: an entry that records another
  // size is corrupt, found before anything is allocated or inflated.
  uint64_t elem = DTypeSize(spec.dtype);
  uint64_t numel = static_cast<uint64_t>(spec.storage_numel);
  if (numel > UINT64_MAX / elem || e->uncompressed_size != numel * elem) {
    return Status::Corruption(
        zip.Subject(*e),
        "records " + std::to_string(e->uncompressed_size) +
            " bytes, but the storage of " + std::to_string(numel) + " " +
            std::string(TorchDTypeName(spec.dtype)) + " needs " +
            (numel > UINT64_MAX / elem ? "more"
                                       : std::to_string(numel * elem)));
  }
  if (e->method != kZipStored &&
      e->uncompressed_size <= options.max_inflated_bytes) {
    // Each tensor that views a deflated storage inflates its own copy.
    LOCKSTEP_RETURN_IF_ERROR(budget->ChargeBytes(
        e->uncompressed_size, "inflating zip entry '" + e->name + "'"));
  }
  auto scratch = std::make_shared<std::string>();
  LOCKSTEP_ASSIGN_OR_RETURN(
      std::string_view data,
      zip.Data(*e, scratch.get(), options.max_inflated_bytes));
  bool defer = options.verify_crc && e->method == kZipStored && owner &&
               data.size() >= options.defer_crc_from_bytes && e->crc32 != 0;
  if (options.verify_crc && !defer) {
    LOCKSTEP_RETURN_IF_ERROR(zip.VerifyCrc(*e, data));
  }
  if (numel > data.size() / elem || data.size() != numel * elem) {
    return Status::Corruption(
        zip.Subject(*e),
        std::to_string(data.size()) + " bytes, but the storage of " +
            std::to_string(numel) + " " +
            std::string(TorchDTypeName(spec.dtype)) + " needs " +
            (numel > UINT64_MAX / elem ? "more"
                                       : std::to_string(numel * elem)));
  }
  if (e->method != kZipStored) owner = scratch;  // inflated: scratch owns it
  Storage st{data, std::move(owner), std::nullopt, zip.Subject(*e)};
  if (defer) st.unverified_crc = e->crc32;
  return st;
}

std::string ViewString(const PtTensorSpec& spec) {
  return "view of shape " + ShapeToString(spec.shape) + ", stride " +
         ShapeToString(spec.stride) + " at offset " +
         std::to_string(spec.storage_offset);
}

// The view's bytes in C order: zero-copy into the storage when possible.
StatusOr<Tensor> MakeTensor(const PtTensorSpec& spec, const Storage& st,
                            bool big_endian, const PtReadOptions& options,
                            const std::string& subject, ReadBudget* budget) {
  std::optional<int64_t> extent =
      internal::StridedExtent(spec.storage_offset, spec.shape, spec.stride);
  int64_t numel = NumElements(spec.shape);
  size_t elem = DTypeSize(spec.dtype);
  if (!extent || numel < 0 || static_cast<uint64_t>(numel) > SIZE_MAX / elem) {
    return Status::Corruption(subject, ViewString(spec) + " overflows");
  }
  if (*extent > spec.storage_numel) {
    return Status::Corruption(subject, ViewString(spec) + " needs " +
                                           std::to_string(*extent) +
                                           " elements, but the storage has " +
                                           std::to_string(spec.storage_numel));
  }
  size_t nbytes = static_cast<size_t>(numel) * elem;
  const std::byte* start = reinterpret_cast<const std::byte*>(st.bytes.data());
  if (numel > 0) start += static_cast<size_t>(spec.storage_offset) * elem;
  bool aligned = reinterpret_cast<uintptr_t>(start) % elem == 0;
  bool swap = big_endian && elem > 1;
  if (st.owner && !swap && aligned &&
      internal::IsCContiguous(spec.shape, spec.stride)) {
    Tensor t(spec.dtype, spec.shape, start, st.owner);
    // The whole storage, unchecked: whoever reads the bytes checks them.
    if (st.unverified_crc && nbytes == st.bytes.size())
      return t.WithUnverifiedCrc32(*st.unverified_crc);
    LOCKSTEP_RETURN_IF_ERROR(VerifyDeferredCrc(st));
    return t;
  }
  LOCKSTEP_RETURN_IF_ERROR(VerifyDeferredCrc(st));
  if (nbytes > st.bytes.size() && nbytes > options.max_expanded_bytes) {
    return Status::NotSupported(
        subject, ViewString(spec) + " expands a " +
                     std::to_string(st.bytes.size()) + "-byte storage to " +
                     std::to_string(nbytes) + " bytes, more than the limit " +
                     std::to_string(options.max_expanded_bytes));
  }
  // Views are capped one by one above; the file's budget caps them all
  // (200 views at the cap, each a copy, would be 12.5 GiB).
  LOCKSTEP_RETURN_IF_ERROR(
      budget->ChargeBytes(nbytes, "a copy of the " + ViewString(spec)));
  std::string out(nbytes, '\0');
  internal::GatherStrided(reinterpret_cast<const std::byte*>(st.bytes.data()),
                          elem, spec.storage_offset, spec.shape, spec.stride,
                          swap, reinterpret_cast<std::byte*>(out.data()));
  return Tensor::FromBytes(spec.dtype, spec.shape, std::move(out));
}

}  // namespace

StatusOr<PtArchive> PtArchive::Open(std::string_view bytes,
                                    std::shared_ptr<const void> owner,
                                    const std::string& name,
                                    const ReadLimits& limits) {
  LOCKSTEP_RETURN_IF_ERROR(CheckNotLegacy(bytes, name));
  LOCKSTEP_ASSIGN_OR_RETURN(ZipReader zip, ZipReader::Open(bytes, name));
  PtArchive a(std::move(zip));
  std::string scratch;
  LOCKSTEP_ASSIGN_OR_RETURN(const ZipEntry* pkl,
                            FindPickle(a.zip_, &a.prefix_));
  LOCKSTEP_ASSIGN_OR_RETURN(
      std::string_view pkl_bytes,
      ReadRecord(a.zip_, *pkl, kMaxPickleBytes, &scratch));
  a.subject_ = a.zip_.Subject(*pkl);
  LOCKSTEP_ASSIGN_OR_RETURN(a.pickle_, Unpickle(pkl_bytes, a.subject_));
  LOCKSTEP_ASSIGN_OR_RETURN(a.big_endian_, IsBigEndian(a.zip_, a.prefix_));
  a.owner_ = std::move(owner);
  a.budget_ = std::make_shared<ReadBudget>(limits, name, bytes.size());
  return a;
}

StatusOr<Tensor> PtArchive::ReadTensor(const PtTensorSpec& spec,
                                       const std::string& subject,
                                       const PtReadOptions& options) const {
  LOCKSTEP_ASSIGN_OR_RETURN(
      Storage storage,
      ReadStorage(zip_, prefix_, spec, owner_, options, budget_.get()));
  return MakeTensor(spec, storage, big_endian_, options, subject,
                    budget_.get());
}

StatusOr<Tensor> ReadPtTensorFromMemory(std::string_view bytes,
                                        std::shared_ptr<const void> owner,
                                        const std::string& name,
                                        const PtReadOptions& options) {
  LOCKSTEP_ASSIGN_OR_RETURN(
      PtArchive archive,
      PtArchive::Open(bytes, std::move(owner), name, options.limits));
  LOCKSTEP_ASSIGN_OR_RETURN(
      PtTensorSpec spec, ParsePtTensorSpec(archive.root(), archive.subject()));
  return archive.ReadTensor(spec, archive.subject(), options);
}

StatusOr<Tensor> ReadPtTensorFromBuffer(std::string_view bytes,
                                        const std::string& name,
                                        const PtReadOptions& options) {
  return ReadPtTensorFromMemory(bytes, nullptr, name, options);
}

StatusOr<Tensor> ReadPtTensor(const std::string& path,
                              const PtReadOptions& options) {
  LOCKSTEP_ASSIGN_OR_RETURN(std::shared_ptr<const MappedFile> file,
                            MappedFile::Open(path));
  StatusOr<Tensor> t =
      ReadPtTensorFromMemory(file->view(), file, path, options);
  LOCKSTEP_RETURN_IF_ERROR(file->CheckIntact());
  return t;
}

}  // namespace lockstep

//===- Bundle.cpp - a compiled program as one executable file -------------===//
#include "runtime/bundle/Bundle.h"

#include "runtime/support/Bytes.h"
#include "runtime/support/Crc32c.h"

#include <algorithm>
#include <climits>
#include <unistd.h>

namespace memc::runtime {
namespace {

/// Byte offsets inside the footer (Bundle.h).
constexpr size_t kFooterCrcAt = 0, kRunnerCrcAt = 4, kPlanCrcAt = 8, kWeightsCrcAt = 12,
                 kMagicAt = 16, kVersionAt = 24, kPlanOffsetAt = 28, kPlanSizeAt = 36,
                 kWeightsOffsetAt = 44, kWeightsSizeAt = 52;
static_assert(kBundleFooterSize - kMagicAt == kBundleMagicFromEnd);

/// The footer's own checksum: of everything in it after the checksum field.
uint32_t footerCrc(std::string_view footer) { return crc32c(footer.substr(kFooterCrcAt + 4)); }

std::string encodeFooter(std::string_view runner, std::string_view plan, uint64_t weightsSize,
                         uint32_t weightsCrc) {
  uint64_t planOffset = runner.size(), weightsOffset = planOffset + plan.size();
  std::string footer(4, '\0');
  appendLittleEndian<uint32_t>(footer, crc32c(runner));
  appendLittleEndian<uint32_t>(footer, crc32c(plan));
  appendLittleEndian<uint32_t>(footer, weightsCrc);
  footer.append(kBundleMagic, sizeof(kBundleMagic));
  appendLittleEndian<uint32_t>(footer, kBundleVersion);
  appendLittleEndian<uint64_t>(footer, planOffset);
  appendLittleEndian<uint64_t>(footer, plan.size());
  appendLittleEndian<uint64_t>(footer, weightsOffset);
  appendLittleEndian<uint64_t>(footer, weightsSize);
  std::string crc;
  appendLittleEndian<uint32_t>(crc, footerCrc(footer));
  footer.replace(kFooterCrcAt, 4, crc);
  return footer;
}

bool hasMagic(std::string_view bytes) {
  return bytes.size() >= kBundleMagicFromEnd &&
         bytes.substr(bytes.size() - kBundleMagicFromEnd, sizeof(kBundleMagic)) ==
             std::string_view(kBundleMagic, sizeof(kBundleMagic));
}

/// Why the bundle version `version` is not one this runner reads.
std::string versionMismatch(uint32_t version) {
  if (version < kBundleVersion)
    return "the program was compiled by an older memc (bundle version " +
           std::to_string(version) + ", this runner reads " + std::to_string(kBundleVersion) +
           ", which carries checksums); compile it again";
  return "bundle version " + std::to_string(version) + " is not the version this runner reads (" +
         std::to_string(kBundleVersion) +
         "): the program was compiled by a newer memc, or is corrupted; compile it again with "
         "this memc";
}

/// offset + size, saturating: a corrupted header must not wrap around to a small number.
uint64_t endOf(uint64_t offset, uint64_t size) {
  uint64_t end;
  return checkedAdd(offset, size, end) ? end : UINT64_MAX;
}

/// Where the ELF image in `bytes` ends: the furthest byte any header table, segment or section
/// covers. Zero if `bytes` is not a 64-bit little-endian ELF file whose tables lie inside it.
uint64_t elfImageEnd(std::string_view bytes) {
  constexpr size_t kHeaderSize = 64, kProgramEntrySize = 56, kSectionEntrySize = 64;
  constexpr uint32_t kNoBits = 8; // SHT_NOBITS sections (.bss) occupy no file bytes
  if (bytes.size() < kHeaderSize || bytes.substr(0, 4) != "\x7f" "ELF" || bytes[4] != 2 ||
      bytes[5] != 1)
    return 0;
  const char *header = bytes.data();
  uint64_t programTable = readLittleEndian<uint64_t>(header + 0x20);
  uint64_t sectionTable = readLittleEndian<uint64_t>(header + 0x28);
  uint64_t programEntrySize = readLittleEndian<uint16_t>(header + 0x36);
  uint64_t programCount = readLittleEndian<uint16_t>(header + 0x38);
  uint64_t sectionEntrySize = readLittleEndian<uint16_t>(header + 0x3a);
  uint64_t sectionCount = readLittleEndian<uint16_t>(header + 0x3c);
  if ((programCount && programEntrySize < kProgramEntrySize) ||
      (sectionCount && sectionEntrySize < kSectionEntrySize) ||
      !rangeWithin(programTable, programCount * programEntrySize, bytes.size()) ||
      !rangeWithin(sectionTable, sectionCount * sectionEntrySize, bytes.size()))
    return 0;
  uint64_t end = std::max<uint64_t>({kHeaderSize, programTable + programCount * programEntrySize,
                                     sectionTable + sectionCount * sectionEntrySize});
  for (uint64_t i = 0; i < programCount; ++i) {
    const char *entry = header + programTable + i * programEntrySize;
    end = std::max(end, endOf(readLittleEndian<uint64_t>(entry + 8),
                              readLittleEndian<uint64_t>(entry + 32)));
  }
  for (uint64_t i = 0; i < sectionCount; ++i) {
    const char *entry = header + sectionTable + i * sectionEntrySize;
    if (readLittleEndian<uint32_t>(entry + 4) != kNoBits)
      end = std::max(end, endOf(readLittleEndian<uint64_t>(entry + 24),
                                readLittleEndian<uint64_t>(entry + 32)));
  }
  return end;
}

} // namespace

bool writeBundle(const std::string &runnerPath, const std::string &outPath,
                 std::string_view planBytes, std::string_view weightsBytes, std::string &error) {
  WeightsPart weights{weightsBytes.size(),
                      [weightsBytes](std::vector<char> &, std::string_view &bytes, std::string &) {
                        bytes = weightsBytes;
                        return true;
                      }};
  return writeBundle(runnerPath, outPath, planBytes, std::vector<WeightsPart>{weights}, error);
}

bool writeBundle(const std::string &runnerPath, const std::string &outPath,
                 std::string_view planBytes, const std::vector<WeightsPart> &weightsParts,
                 std::string &error) {
  std::unique_ptr<MappedFile> runner = MappedFile::open(runnerPath, error);
  if (!runner)
    return false;
  std::string_view runnerBytes = runner->bytes();
  if (hasMagic(runnerBytes)) {
    error = "'" + runnerPath + "' already carries a compiled program; use the plain memc-runner";
    return false;
  }
  return writeFileAtomically(
      outPath, 0755,
      [&](const WriteBytes &write, std::string &partError) {
        if (!write(runnerBytes) || !write(planBytes))
          return false;
        uint64_t weightsSize = 0;
        uint32_t weightsCrc = 0;
        std::vector<char> scratch;
        for (const WeightsPart &part : weightsParts) {
          std::string_view bytes;
          if (!part.make(scratch, bytes, partError))
            return false;
          if (bytes.size() != part.size) {
            partError = "a weights part made " + std::to_string(bytes.size()) +
                        " bytes, not the " + std::to_string(part.size) + " it declared";
            return false;
          }
          weightsSize += bytes.size();
          weightsCrc = crc32c(bytes, weightsCrc);
          if (!write(bytes))
            return false;
        }
        return write(encodeFooter(runnerBytes, planBytes, weightsSize, weightsCrc));
      },
      error);
}

BundleStatus parseBundle(std::string_view bytes, std::string_view &plan,
                         std::string_view &weights, std::string &error) {
  if (!hasMagic(bytes)) {
    // Bytes after the ELF image without a footer are a bundle whose end was cut off.
    uint64_t imageEnd = elfImageEnd(bytes);
    if (imageEnd != 0 && imageEnd < bytes.size()) {
      error = "the executable has " + std::to_string(bytes.size() - imageEnd) +
              " bytes appended but no bundle footer: the compiled program is truncated or "
              "corrupted";
      return BundleStatus::Invalid;
    }
    return BundleStatus::Absent;
  }
  uint32_t version = readLittleEndian<uint32_t>(bytes.data() + bytes.size() -
                                                kBundleMagicFromEnd + (kVersionAt - kMagicAt));
  if (version != kBundleVersion) {
    error = versionMismatch(version);
    return BundleStatus::Invalid;
  }
  if (bytes.size() < kBundleFooterSize) {
    error = "the bundle footer is truncated (" + std::to_string(bytes.size()) + " bytes)";
    return BundleStatus::Invalid;
  }
  std::string_view footerBytes = bytes.substr(bytes.size() - kBundleFooterSize);
  const char *footer = footerBytes.data();
  if (readLittleEndian<uint32_t>(footer + kFooterCrcAt) != footerCrc(footerBytes)) {
    error = "the bundle footer is corrupted (checksum mismatch)";
    return BundleStatus::Invalid;
  }
  uint64_t planOffset = readLittleEndian<uint64_t>(footer + kPlanOffsetAt);
  uint64_t planSize = readLittleEndian<uint64_t>(footer + kPlanSizeAt);
  uint64_t weightsOffset = readLittleEndian<uint64_t>(footer + kWeightsOffsetAt);
  uint64_t weightsSize = readLittleEndian<uint64_t>(footer + kWeightsSizeAt);
  uint64_t payloadEnd = bytes.size() - kBundleFooterSize;
  if (!rangeWithin(planOffset, planSize, payloadEnd) ||
      !rangeWithin(weightsOffset, weightsSize, payloadEnd)) {
    error = "bundle footer points outside the file (plan at " + std::to_string(planOffset) +
            "+" + std::to_string(planSize) + ", weights at " + std::to_string(weightsOffset) +
            "+" + std::to_string(weightsSize) + ", " + std::to_string(payloadEnd) +
            " bytes before the footer): the file is truncated or corrupted";
    return BundleStatus::Invalid;
  }
  bool disjoint = planOffset + planSize <= weightsOffset || weightsOffset + weightsSize <= planOffset;
  if (!disjoint) {
    error = "bundle footer is corrupted: the plan and weights ranges overlap";
    return BundleStatus::Invalid;
  }
  plan = bytes.substr(planOffset, planSize);
  weights = bytes.substr(weightsOffset, weightsSize);
  struct Section {
    const char *name;
    std::string_view bytes;
    size_t crcAt;
  };
  for (const Section &section : {Section{"runner", bytes.substr(0, planOffset), kRunnerCrcAt},
                                 Section{"plan", plan, kPlanCrcAt},
                                 Section{"weights", weights, kWeightsCrcAt}}) {
    if (readLittleEndian<uint32_t>(footer + section.crcAt) != crc32c(section.bytes)) {
      error = std::string("section '") + section.name + "' is corrupted (checksum mismatch)";
      return BundleStatus::Invalid;
    }
  }
  return BundleStatus::Found;
}

BundleStatus readBundle(const std::string &path, Bundle &bundle, std::string &error) {
  bundle.file = MappedFile::open(path, error);
  if (!bundle.file)
    return BundleStatus::Invalid;
  BundleStatus status = parseBundle(bundle.file->bytes(), bundle.plan, bundle.weights, error);
  if (status == BundleStatus::Invalid)
    error = path + ": " + error;
  return status;
}

std::string currentExecutablePath() {
  char path[PATH_MAX];
  ssize_t length = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (length <= 0)
    return "/proc/self/exe";
  return std::string(path, static_cast<size_t>(length));
}

} // namespace memc::runtime

// Checks of a Parquet or ORC file's footer before Arrow's readers decode it.
//
// Arrow's readers allocate what a file's tail declares: a Parquet file ending in a 4-byte
// metadata length of size-12 makes the reader read (and hold) that many bytes, an ORC postscript
// declaring a footer near the file size likewise, and a small footer can declare containers of
// millions of structs, each decoded into hundreds of bytes. Any job can write such a file, and
// crawlers read footers inside the server. These functions read the tail themselves (no Arrow
// reader), check each declared size against the file and against FooterLimits, and estimate the
// memory a reader holds while it decodes the footer (FooterCost::memory_bytes, for a caller's
// budget). A caller opens the file with Arrow only when they return OK.
//
// The estimate (docs/security.md, "Limits on files the server reads"):
//  - Parquet: the stored FileMetaData is walked as Thrift's compact encoding without allocating;
//    each element of a list, set or map costs kDecodedElementBytes (measured with Arrow 26: a
//    column chunk of 3 bytes decodes to about 700, a schema element with its Arrow field to
//    about 1,400), plus the bytes themselves and Arrow's first read of the tail (64 KiB).
//  - ORC: the footer is a protobuf message, compressed in chunks of at most compressionBlockSize
//    each (3-byte chunk headers). Decompressed it is at most the sum, over its chunks, of the
//    block size (a compressed chunk) or the chunk's length (an uncompressed one); decoded it is
//    at most kOrcDecodedFactor times that (an empty repeated message is 2 bytes on disk and
//    about 150 in memory), plus the stored bytes and one decompression block.
//
// Errors: InvalidInput saying which declared size is wrong or over which limit (the caller
// names the file); Internal for a read that fails. Never throws. Thread-safe (the functions keep
// no state; the file must allow concurrent ReadAt, as Arrow's files do).
#pragma once

#include <cstdint>
#include <string_view>

#include <arrow/io/type_fwd.h>

#include "common/status.h"

namespace openglue::storage {

struct FooterLimits {
  // Parquet's FileMetaData; ORC's footer and its metadata section; each as stored.
  int64_t max_footer_bytes = int64_t{16} << 20;
  // ORC's compressionBlockSize (the writers' default is 256 KiB; a chunk header holds 23 bits).
  int64_t max_orc_block_bytes = int64_t{8} << 20;
  // FooterCost::memory_bytes.
  int64_t max_memory_bytes = int64_t{256} << 20;
};

inline constexpr int64_t kDecodedElementBytes = 1536;
inline constexpr int64_t kOrcDecodedFactor = 80;
// What Arrow's Parquet reader reads from the end of a file before it knows the metadata length.
inline constexpr int64_t kParquetFirstRead = 64 * 1024;

struct FooterCost {
  int64_t footer_bytes = 0;  // the footer as stored (Parquet: FileMetaData; ORC: the footer)
  int64_t memory_bytes = 0;  // at most what a reader holds while opening the file
};

// ---- the parts, over bytes (unit tests and the fuzzer call these directly) ---------------------

// The FileMetaData length a Parquet file's last 8 bytes declare (`tail`: fewer when the file is
// shorter), checked: the file ends in PAR1 (or PARE, an encrypted footer), and the length fits
// between the leading magic and the trailing 8 bytes and is at most max_footer_bytes.
Result<int64_t> ParquetMetadataLength(std::string_view tail, int64_t file_size, const FooterLimits& limits);

// Walks a stored FileMetaData (Thrift compact encoding, nesting at most 32 deep) and returns the
// estimated bytes its decoding holds. InvalidInput for an encoding that is truncated, malformed
// or declares more elements than its bytes can hold.
Result<int64_t> EstimateParquetMetadataMemory(std::string_view metadata);

// What an ORC postscript declares.
struct OrcPostscript {
  int64_t postscript_bytes = 0;      // the postscript alone, without its length byte
  int64_t footer_bytes = 0;          // footerLength
  int64_t metadata_bytes = 0;        // metadataLength
  int64_t compression = 0;           // CompressionKind: 0 NONE, 1 ZLIB, ... 5 ZSTD
  int64_t block_bytes = 256 * 1024;  // compressionBlockSize
};

// Parses the postscript at the end of `tail` (the file's last min(size, 256) bytes; the last byte
// is the postscript's length), checked: the footer, metadata, postscript and length byte fit in
// the file, footer and metadata are at most max_footer_bytes, the block size at most
// max_orc_block_bytes, the compression kind is one ORC defines.
Result<OrcPostscript> ParseOrcPostscript(std::string_view tail, int64_t file_size, const FooterLimits& limits);

// The estimated bytes opening the file holds, from the stored footer's chunk headers.
// InvalidInput for a chunk that runs past the footer or an uncompressed chunk over the block size.
Result<int64_t> EstimateOrcFooterMemory(std::string_view footer, const OrcPostscript& postscript);

// The footer decompressed (chunk by chunk, each into one compression block). InvalidInput for a
// chunk that does not decompress, and for LZO (Arrow has no LZO codec).
Result<std::string> InflateOrcFooter(std::string_view footer, const OrcPostscript& postscript);

// Refuses, in a decompressed footer, what Arrow's ORC adapter aborts the process on instead of
// returning an error: a decimal type of precision over 38 (found by footer_fuzz). InvalidInput
// also for a footer that is not a protobuf message.
Status CheckOrcFooterTypes(std::string_view footer);

// ---- the whole check, over a file ---------------------------------------------------------------

// Reads the tail and the footer of `file` and checks them as above, and memory_bytes against
// max_memory_bytes; for ORC, also the decompressed footer's types. The footer bytes read are
// released before returning.
Result<FooterCost> CheckParquetFooter(arrow::io::RandomAccessFile* file, const FooterLimits& limits = {});
Result<FooterCost> CheckOrcFooter(arrow::io::RandomAccessFile* file, const FooterLimits& limits = {});

}  // namespace openglue::storage

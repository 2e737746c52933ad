"""Writes the Parquet and ORC files the footer checks are tested and fuzzed with.

    .venv/bin/python src/storage/testdata/make_footers.py

src/storage/testdata/footer/ gets the files columnar_footer_test.cc reads; the crawler's fuzz
corpus (src/crawler/testdata/fuzz/footer/) gets the same files: tiny real files from pyarrow
and hostile tails (a metadata length past the file, a list declaring a million structs, Thrift
nested 40 deep, an ORC postscript declaring a huge footer or compression block, compressed
footer chunks each claiming a whole block). The orc_decimal_*_crash.orc files beside them are not made
here: footer_fuzz found them (ORC decimals of precision over 38, on which Arrow aborts).
"""
import io
import os
import struct

import pyarrow as pa
import pyarrow.orc as orc
import pyarrow.parquet as pq

HERE = os.path.dirname(os.path.abspath(__file__))
OUTS = [os.path.join(HERE, "footer"), os.path.join(HERE, "..", "..", "crawler", "testdata", "fuzz", "footer")]


def varint(n):
    out = b""
    while True:
        b, n = n & 0x7F, n >> 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def parquet_file(metadata):
    return b"PAR1" + metadata + struct.pack("<I", len(metadata)) + b"PAR1"


def orc_file(body, postscript):
    return body + postscript + bytes([len(postscript)])


def postscript(footer, metadata=0, compression=0, block=None):
    ps = bytes([0x08]) + varint(footer) + bytes([0x10]) + varint(compression)
    if block is not None:
        ps += bytes([0x18]) + varint(block)
    ps += bytes([0x28]) + varint(metadata) + bytes([0xC2, 0xF4, 0x03, 0x03]) + b"ORC"  # 8000: "ORC"
    return ps


def files():
    table = pa.table({"id": pa.array([1, 2, 3], pa.int64()), "name": ["a", "b", None],
                      "tags": [[1], [], [2, 3]]})
    out = {}
    for codec in ("none", "snappy"):
        buf = io.BytesIO()
        pq.write_table(table, buf, compression=codec)
        out[f"tiny_{codec}.parquet"] = buf.getvalue()
    for codec in ("uncompressed", "zlib", "zstd"):
        buf = io.BytesIO()
        orc.write_table(table.drop_columns(["tags"]), buf, compression=codec)
        out[f"tiny_{codec}.orc"] = buf.getvalue()
    # Parquet: a metadata length one byte past what the file can hold.
    body = b"\x00" * 64
    out["parquet_length_past_file.parquet"] = b"PAR1" + body + struct.pack("<I", len(body) + 1) + b"PAR1"
    # Parquet: FileMetaData's schema (field 2) a list declaring 1,000,000 structs in a few bytes.
    out["parquet_huge_list.parquet"] = parquet_file(bytes([0x15, 0x02, 0x19, 0xFC]) + varint(1_000_000) + b"\x00" * 8)
    # Parquet: structs nested 40 deep (field 1, type struct).
    out["parquet_deep.parquet"] = parquet_file(b"\x1c" * 40 + b"\x00" * 41)
    # ORC: a footer length near the file's size, a compression block of 1 TiB, compressed footer
    # chunks of 1 byte each claiming a whole 256 KiB block.
    out["orc_huge_footer.orc"] = b"ORC" + orc_file(b"\x00" * 32, postscript(footer=1 << 40))
    out["orc_huge_block.orc"] = b"ORC" + orc_file(b"\x00" * 4, postscript(footer=4, compression=1, block=1 << 40))
    chunks = b"\x02\x00\x00\x00" * 64  # header: length 1, compressed; then one byte
    out["orc_chunk_bomb.orc"] = b"ORC" + orc_file(chunks, postscript(footer=len(chunks), compression=1, block=1 << 23))
    return out


def main():
    for name, data in files().items():
        for folder in OUTS:
            os.makedirs(folder, exist_ok=True)
            with open(os.path.join(folder, name), "wb") as f:
                f.write(data)


if __name__ == "__main__":
    main()

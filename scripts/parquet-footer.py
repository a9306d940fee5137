#!/usr/bin/env python3
"""Reads a Parquet file's footer with the standard library alone: the
magic at both ends, then the Thrift compact-encoded FileMetaData (the
Parquet format's parquet.thrift): its column names, its row count, each
row group's row count and the key-value metadata. Prints them as JSON. An independent check of
`numaprobe export --format parquet` (it shares no code with the writer).

    scripts/parquet-footer.py FILE.parquet
"""
import json
import struct
import sys


class Compact:
    """A Thrift compact-protocol reader over bytes."""

    def __init__(self, data):
        self.d, self.i = data, 0

    def byte(self):
        b = self.d[self.i]
        self.i += 1
        return b

    def varint(self):
        shift = n = 0
        while True:
            b = self.byte()
            n |= (b & 0x7F) << shift
            if not b & 0x80:
                return n
            shift += 7

    def zigzag(self):
        n = self.varint()
        return (n >> 1) ^ -(n & 1)

    def binary(self):
        n = self.varint()
        b = self.d[self.i:self.i + n]
        self.i += n
        return b

    def value(self, t):
        """A value of compact type t (a struct as {field id: value})."""
        if t in (1, 2):
            return t == 1
        if t == 3:
            return self.byte()
        if t in (4, 5, 6):
            return self.zigzag()
        if t == 7:
            v = struct.unpack_from("<d", self.d, self.i)[0]
            self.i += 8
            return v
        if t == 8:
            return self.binary()
        if t in (9, 10):
            head = self.byte()
            n, et = head >> 4, head & 0x0F
            if n == 15:
                n = self.varint()
            return [self.value(et) for _ in range(n)]
        if t == 11:
            n = self.varint()
            if n == 0:
                return {}
            kv = self.byte()
            return {self.value(kv >> 4): self.value(kv & 0x0F) for _ in range(n)}
        if t == 12:
            return self.struct()
        raise ValueError(f"compact type {t} at byte {self.i}")

    def struct(self):
        out, last = {}, 0
        while True:
            head = self.byte()
            if head == 0:
                return out
            t, delta = head & 0x0F, head >> 4
            fid = last + delta if delta else self.zigzag()
            # A boolean field carries its value in its type.
            out[fid] = self.value(t)
            last = fid


def main(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"PAR1" or data[-4:] != b"PAR1":
        sys.exit(f"{path}: not a Parquet file (no PAR1 magic at both ends)")
    (n,) = struct.unpack_from("<I", data, len(data) - 8)
    meta = Compact(data[len(data) - 8 - n:len(data) - 8]).struct()
    # FileMetaData: 2 schema (SchemaElement: 4 name, 5 num_children),
    # 3 num_rows, 4 row_groups (RowGroup: 3 num_rows), 5 key_value_metadata
    # (KeyValue: 1 key, 2 value), 6 created_by.
    schema = meta[2]
    columns = [e[4].decode() for e in schema[1:]]
    print(json.dumps({
        "root": schema[0][4].decode(),
        "columns": columns,
        "num_rows": meta[3],
        "row_groups": [g[3] for g in meta[4]],
        "key_value": {kv[1].decode(): kv.get(2, b"").decode() for kv in meta.get(5, [])},
        "created_by": meta.get(6, b"").decode(),
    }))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])

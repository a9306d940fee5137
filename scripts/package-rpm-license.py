#!/usr/bin/env python3
"""Marks files of a built .rpm as %license (RPMFILE_LICENSE), in place.

cargo-generate-rpm (0.21.1) can flag an asset %doc or %config but not
%license, which EL's rpm installs even with `--nodocs` (container images) and
lists with `rpm -qL`. This sets that flag on the named files and rewrites the
two header digests the signature header holds (SHA-1 and SHA-256 of the main
header); nothing changes size, and the payload and its digest stay as they
are. `rpm -K` verifies the result.

Usage: package-rpm-license.py FILE.rpm /usr/share/licenses/NAME/LICENSE ...
Exit 1, saying why, on anything unexpected (another RPM layout, a path not in
the package, a signature it cannot rewrite).
"""

import hashlib
import struct
import sys

LEAD = 96
MAGIC = b"\x8e\xad\xe8\x01"
RPMFILE_LICENSE = 1 << 7
TAG_FILEFLAGS, TAG_DIRINDEXES, TAG_BASENAMES, TAG_DIRNAMES = 1037, 1116, 1117, 1118
SIG_SHA1, SIG_SHA256 = 269, 273
# Signature tags besides the digests rewritten here that a header change
# leaves true: the region, the sizes, the padding.
SIG_UNAFFECTED = {62, 1000, 1007, 270, 271, 1008}
TYPE_INT32, TYPE_STRING, TYPE_STRING_ARRAY = 4, 6, 8


def fail(msg):
    sys.exit(f"package-rpm-license: error: {msg}")


def header(data, off):
    """(entries {tag: (type, offset, count)}, data store offset, end)."""
    if data[off : off + 4] != MAGIC:
        fail(f"no header at byte {off}")
    count, size = struct.unpack(">II", data[off + 8 : off + 16])
    entries = {}
    for i in range(count):
        tag, typ, o, c = struct.unpack(">iiii", data[off + 16 + 16 * i : off + 32 + 16 * i])
        entries[tag] = (typ, o, c)
    store = off + 16 + 16 * count
    return entries, store, store + size


def strings(data, store, entry):
    typ, o, c = entry
    if typ != TYPE_STRING_ARRAY:
        fail(f"string array expected, type {typ}")
    out, pos = [], store + o
    for _ in range(c):
        end = data.index(b"\0", pos)
        out.append(data[pos:end].decode())
        pos = end + 1
    return out


def int32s(data, store, entry):
    typ, o, c = entry
    if typ != TYPE_INT32:
        fail(f"int32 array expected, type {typ}")
    return list(struct.unpack(f">{c}i", data[store + o : store + o + 4 * c]))


def main(path, licences):
    data = bytearray(open(path, "rb").read())
    sig, sig_store, sig_end = header(data, LEAD)
    unknown = set(sig) - SIG_UNAFFECTED - {SIG_SHA1, SIG_SHA256}
    if unknown:
        fail(f"signature tags {sorted(unknown)} (a signed package?) would no longer hold")
    main_off = sig_end + (-sig_end) % 8
    hdr, store, end = header(data, main_off)

    names = strings(data, store, hdr[TAG_BASENAMES])
    dirs = strings(data, store, hdr[TAG_DIRNAMES])
    index = int32s(data, store, hdr[TAG_DIRINDEXES])
    files = [dirs[d] + n for d, n in zip(index, names)]
    flags = int32s(data, store, hdr[TAG_FILEFLAGS])
    for lic in licences:
        if lic not in files:
            fail(f"{lic} is not in {path} (files: {', '.join(files)})")
        flags[files.index(lic)] |= RPMFILE_LICENSE
    _, o, c = hdr[TAG_FILEFLAGS]
    data[store + o : store + o + 4 * c] = struct.pack(f">{c}i", *flags)

    blob = bytes(data[main_off:end])
    for tag, digest in ((SIG_SHA1, hashlib.sha1), (SIG_SHA256, hashlib.sha256)):
        if tag not in sig:
            continue
        typ, o, _ = sig[tag]
        if typ != TYPE_STRING:
            fail(f"signature tag {tag} is not a string")
        new = digest(blob).hexdigest().encode()
        old_end = data.index(b"\0", sig_store + o)
        if old_end - (sig_store + o) != len(new):
            fail(f"signature tag {tag} has another length")
        data[sig_store + o : old_end] = new
    open(path, "wb").write(data)


if __name__ == "__main__":
    if len(sys.argv) < 3:
        fail("usage: package-rpm-license.py FILE.rpm PATH...")
    main(sys.argv[1], sys.argv[2:])

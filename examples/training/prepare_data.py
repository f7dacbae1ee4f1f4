#!/usr/bin/python3
"""Writes the training corpus of examples/training/: C sources of the Linux
kernel from Debian's package linux-source-6.1, as bytes (the model is
byte-level), in a training and a held-out validation split.

    python3 examples/training/prepare_data.py [--deb linux-source-6.1_*.deb]

Without --deb it runs `apt-get download linux-source-6.1` in a temporary
folder. It reads the kernel tarball inside the package once, as a stream,
and keeps the regular `.c` files of at most 128 KiB with no NUL byte (the
larger ones are mostly generated tables). A file's split and its place in
the corpus follow the SHA-256 of its path: files in path-hash order, the
validation split from the files whose hash starts with "0" (1/16 of them)
until it holds --val-bytes, the training split from the others until it
holds --train-bytes. The two splits share no file. Each file is preceded by
a line naming it (`// linux-6.1/<path>`).

Output, in --out (default examples/training/data): train.txt.xz,
val.txt.xz and manifest.json (package version and SHA-256, the rule, the
file and byte counts, the SHA-256 of each decompressed split), which
train.py checks.
"""
import argparse
import glob
import hashlib
import json
import lzma
import os
import subprocess
import sys
import tarfile
import tempfile

PACKAGE = "linux-source-6.1"
MAX_FILE_BYTES = 128 * 1024


def sha256_file(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def package_version(deb):
    result = subprocess.run(["dpkg-deb", "--field", deb, "Version"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    if result.returncode != 0:
        raise SystemExit(f"prepare_data: {deb} is not a Debian package: "
                         f"{result.stderr.strip()}")
    return result.stdout.strip()


def candidate_files(tarball):
    """(path inside the kernel tree, bytes) of every eligible file, in
    the tarball's order."""
    with tarfile.open(tarball, "r|xz") as tar:
        for member in tar:
            if not member.isfile() or not member.name.endswith(".c") or \
                    member.size > MAX_FILE_BYTES or member.size == 0:
                continue
            data = tar.extractfile(member).read()
            if b"\0" in data:
                continue
            # "linux-source-6.1/kernel/fork.c" -> "kernel/fork.c"
            yield member.name.split("/", 1)[-1], data


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deb", help="the linux-source-6.1 package "
                        "(default: apt-get download it)")
    parser.add_argument("--out", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "data"))
    parser.add_argument("--train-bytes", type=int, default=56 * 2**20)
    parser.add_argument("--val-bytes", type=int, default=3 * 2**19)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as scratch:
        deb = args.deb
        if deb is None:
            result = subprocess.run(["apt-get", "download", PACKAGE],
                                    cwd=scratch)
            found = glob.glob(os.path.join(scratch, PACKAGE + "_*.deb"))
            if result.returncode != 0 or not found:
                raise SystemExit(f"prepare_data: apt-get download {PACKAGE} "
                                 f"failed; pass --deb")
            deb = found[0]
        version = package_version(deb)
        subprocess.run(["dpkg-deb", "-x", deb, os.path.join(scratch, "x")],
                       check=True)
        tarballs = glob.glob(os.path.join(scratch, "x", "usr", "src",
                                          "linux-source-*.tar.xz"))
        if len(tarballs) != 1:
            raise SystemExit(f"prepare_data: no kernel tarball in {deb}")
        files = {path: data for path, data in candidate_files(tarballs[0])}
        deb_sha256 = sha256_file(deb)

    order = sorted(files, key=lambda p: hashlib.sha256(p.encode()).digest())
    splits = {"train": [], "val": []}
    sizes = {"train": 0, "val": 0}
    limits = {"train": args.train_bytes, "val": args.val_bytes}
    for path in order:
        split = "val" if hashlib.sha256(path.encode()).hexdigest()[0] == "0" \
            else "train"
        if sizes[split] >= limits[split]:
            continue
        text = f"// linux-6.1/{path}\n".encode() + files[path]
        if not text.endswith(b"\n"):
            text += b"\n"
        splits[split].append(text)
        sizes[split] += len(text)
        if all(sizes[s] >= limits[s] for s in sizes):
            break

    os.makedirs(args.out, exist_ok=True)
    manifest = {
        "package": PACKAGE, "version": version, "deb_sha256": deb_sha256,
        "rule": (f"regular .c files of at most {MAX_FILE_BYTES} bytes without "
                 f"NUL, in SHA-256(path) order; val: hash starting with '0'; "
                 f"each preceded by '// linux-6.1/<path>'"),
        "eligible_files": len(files), "splits": {}}
    for split, parts in splits.items():
        raw = b"".join(parts)
        path = os.path.join(args.out, f"{split}.txt.xz")
        with open(path, "wb") as f:
            f.write(lzma.compress(raw, preset=9 | lzma.PRESET_EXTREME))
        manifest["splits"][split] = {
            "file": os.path.basename(path), "files": len(parts),
            "bytes": len(raw), "sha256": hashlib.sha256(raw).hexdigest(),
            "compressed_bytes": os.path.getsize(path)}
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    for split, info in manifest["splits"].items():
        print(f"prepare_data: {split}: {info['files']} files, "
              f"{info['bytes'] / 2**20:.1f} MiB, "
              f"{info['compressed_bytes'] / 2**20:.1f} MiB compressed")
    return 0


if __name__ == "__main__":
    sys.exit(main())

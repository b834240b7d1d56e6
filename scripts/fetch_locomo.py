#!/usr/bin/env python3
"""Fetch LoCoMo-10, the evaluation data of the selection benchmarks, and check it is the data they were measured on.

    python scripts/fetch_locomo.py                  # into bench/data/locomo10 (what `python -m bench` reads)
    python scripts/fetch_locomo.py DIR              # into DIR; then `python -m bench --data DIR`
    python scripts/fetch_locomo.py --zip FILE [DIR] # from a locomo10.zip you downloaded yourself
    python scripts/fetch_locomo.py --check DIR      # only check that DIR holds exactly that data

LoCoMo ("Evaluating Very Long-Term Conversational Memory of LLM Agents", ACL 2024) is ten long two-person
conversations with 1,986 questions, each naming its evidence turns. It is published by its authors in the
snap-research/locomo repository on GitHub, as data/locomo10.zip; this script downloads that file at a fixed commit,
checks its SHA-256, and extracts the ten conversation files (data/multimodal_dialog/locomo10_v2/<n>.json), checking
each one's SHA-256 too. The figures in BENCHMARKS.md were measured on exactly these ten files.

The data is not ours and is not in this repository: its repository states no licence in its README (other pages
report CC BY-NC 4.0), so treat it as non-commercial, cite the paper, use it only to measure, and never ship it in the
package or the container image (bench/ is outside both). Standard library only; exit status 1 with one line on any
failure, and nothing is left half-written.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
import tempfile
import urllib.request
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DIR = ROOT / "bench" / "data" / "locomo10"
COMMIT = "e76cdff4a04fce19090596d49862fe87a5c15aaa"
URL = f"https://raw.githubusercontent.com/snap-research/locomo/{COMMIT}/data/locomo10.zip"
ZIP_SHA256 = "5c342973da4b45c12583c9fc7594d6410880f5aba2c491a0db09db262c906fb5"
MEMBER_FOLDER = "data/multimodal_dialog/locomo10_v2/"
FILES_SHA256 = {
    "26.json": "03db89826862cf68f05a17007946e6f132afd3d4978b3758fe6881abd9b1d897",
    "30.json": "f9196cd9e16ef6f5e8c1e1866756e99328981047c15edf2a672f85ff19319cdc",
    "41.json": "24df879b7c6cfe3a4e7f6f6ea747dce230a0fbd84744bb6da657c63f6ae67b62",
    "42.json": "5684f57833cab9aa6c68e50d2e17a6eb04fbaf16f6f881ed659eeeb340ce2c6d",
    "43.json": "392d55609c4aaa5e0612749ef87047efe35f0fddfe87982f3bb5f3b02bce41c6",
    "44.json": "b75318ada4a5e54f2868d995ee6afcb4cf9f6b8f2c6e93426bd254b1d0b6ce15",
    "47.json": "64630351b01d6847a0753e358635b98258e13d0c706642f9be860ea44d5c62a0",
    "48.json": "991d4b7f48fa1f219fbb78f07abea9960733a1aace6346b63579413c1c6bc5b0",
    "49.json": "41c574e6deaefc4127b5eef9dc4f5669cb8dac39b857edc4f411a94cf4f74b87",
    "50.json": "1007e30ce14b7050bd3325d59dac5aad5d01597f934c28687afac3b3b2d5eb01",
}
TIMEOUT_SECONDS = 120


class FetchError(Exception):
    """What went wrong, as one line."""


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_folder(folder: Path, expected: Mapping[str, str] = FILES_SHA256) -> None:
    """`folder` holds every expected file with its checksum (other files are allowed); FetchError otherwise."""
    for name, checksum in sorted(expected.items()):
        path = folder / name
        if not path.is_file():
            raise FetchError(f"{path} is missing")
        if sha256_of(path) != checksum:
            raise FetchError(f"{path} is not the expected file (SHA-256 differs)")


def install_zip(
    archive: Path,
    folder: Path,
    *,
    zip_sha256: str = ZIP_SHA256,
    member_folder: str = MEMBER_FOLDER,
    expected: Mapping[str, str] = FILES_SHA256,
) -> None:
    """Check `archive`, extract the expected files into `folder` and check them; on any failure `folder` gets
    nothing (the files are checked in a temporary folder beside it and moved in only when all are right)."""
    if sha256_of(archive) != zip_sha256:
        raise FetchError(f"{archive} is not the expected locomo10.zip (SHA-256 differs)")
    folder.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".locomo-", dir=folder))
    try:
        with zipfile.ZipFile(archive) as bundle:
            for name in expected:
                try:
                    data = bundle.read(member_folder + name)  # by name: nothing else in the archive is written
                except KeyError:
                    raise FetchError(f"{archive} has no {member_folder}{name}") from None
                (staging / name).write_bytes(data)
        check_folder(staging, expected)
        for name in expected:
            os.replace(staging / name, folder / name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def download(url: str, target: Path) -> None:
    try:
        with urllib.request.urlopen(url, timeout=TIMEOUT_SECONDS) as response, target.open("wb") as file:  # noqa: S310 (a fixed https URL)
            shutil.copyfileobj(response, file)
    except OSError as error:  # URLError, HTTPError and timeouts are OSErrors
        raise FetchError(f"could not download {url}: {getattr(error, 'reason', None) or error}") from None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", type=Path, default=DEFAULT_DIR, help=f"default: {DEFAULT_DIR}")
    parser.add_argument("--zip", type=Path, help="use this locomo10.zip instead of downloading it")
    parser.add_argument("--check", action="store_true", help="only check the folder's files")
    args = parser.parse_args(argv)
    folder: Path = args.folder
    try:
        if args.check:
            check_folder(folder)
            print(f"{folder}: the ten LoCoMo-10 files the benchmarks were measured on")
            return 0
        try:
            check_folder(folder)
        except FetchError:
            pass
        else:
            print(f"{folder} already holds LoCoMo-10 (checksums match)")
            return 0
        if args.zip is not None:
            install_zip(args.zip, folder)
        else:
            with tempfile.TemporaryDirectory(prefix="locomo-") as tmp:
                archive = Path(tmp) / "locomo10.zip"
                print(f"downloading {URL}", flush=True)
                download(URL, archive)
                install_zip(archive, folder)
    except FetchError as error:
        print(f"fetch_locomo: {error}", file=sys.stderr)
        return 1
    print(f"{folder}: LoCoMo-10 fetched and checked; run `python -m bench --data {folder}`")
    print("LoCoMo is not ours: no licence stated in its repository (others report CC BY-NC 4.0): measure with it only.")
    return 0


if __name__ == "__main__":
    sys.exit(main())

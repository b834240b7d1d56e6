"""scripts/fetch_locomo.py: the benchmark data is fetched and checked against pinned checksums, all or nothing.

No network here: the archive is one built in the test, with its own checksums handed in; the download and the
pinned checksums of the real data are the script's constants, which the last test keeps consistent."""

from __future__ import annotations

import hashlib
import importlib.util
import re
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "fetch_locomo.py"


def load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fetch_locomo", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


fetch = load_script()
FILES = {"26.json": b'{"speaker_a": "Caroline", "qa": []}', "30.json": b'{"speaker_a": "Jon", "qa": []}'}
EXPECTED = {name: hashlib.sha256(data).hexdigest() for name, data in FILES.items()}


def make_zip(path: Path, files: dict[str, bytes]) -> str:
    with zipfile.ZipFile(path, "w") as bundle:
        for name, data in files.items():
            bundle.writestr(fetch.MEMBER_FOLDER + name, data)
        bundle.writestr("data/other/ignored.txt", b"not extracted")
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_good_archive_is_extracted_and_checked(tmp_path: Path) -> None:
    archive = tmp_path / "locomo10.zip"
    checksum = make_zip(archive, FILES)
    folder = tmp_path / "locomo10"
    fetch.install_zip(archive, folder, zip_sha256=checksum, expected=EXPECTED)
    assert sorted(path.name for path in folder.iterdir()) == ["26.json", "30.json"]
    assert (folder / "26.json").read_bytes() == FILES["26.json"]
    fetch.check_folder(folder, EXPECTED)


def test_a_different_archive_changes_nothing(tmp_path: Path) -> None:
    archive = tmp_path / "locomo10.zip"
    make_zip(archive, FILES)
    folder = tmp_path / "locomo10"
    with pytest.raises(fetch.FetchError, match=r"not the expected locomo10\.zip"):
        fetch.install_zip(archive, folder, zip_sha256="0" * 64, expected=EXPECTED)
    assert not folder.exists() or not any(folder.iterdir())


def test_a_file_that_differs_leaves_the_folder_untouched(tmp_path: Path) -> None:
    archive = tmp_path / "locomo10.zip"
    checksum = make_zip(archive, {**FILES, "30.json": b'{"tampered": true}'})
    folder = tmp_path / "locomo10"
    with pytest.raises(fetch.FetchError, match=r"30\.json is not the expected file"):
        fetch.install_zip(archive, folder, zip_sha256=checksum, expected=EXPECTED)
    assert list(folder.iterdir()) == [], "nothing half-written, no staging folder left"
    with pytest.raises(fetch.FetchError, match=r"26\.json is missing"):
        fetch.check_folder(folder, EXPECTED)


def test_the_command_fails_with_one_line_for_a_wrong_archive(tmp_path: Path) -> None:
    archive = tmp_path / "locomo10.zip"
    make_zip(archive, FILES)  # not the real archive: its checksum is not the pinned one
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--zip", str(archive), str(tmp_path / "out")],
        capture_output=True, text=True, timeout=60,
    )
    assert result.returncode == 1
    assert result.stderr.strip().count("\n") == 0 and "SHA-256 differs" in result.stderr
    assert "Traceback" not in result.stderr


def test_the_pinned_source_and_checksums_are_complete() -> None:
    assert re.fullmatch(r"[0-9a-f]{40}", fetch.COMMIT) and fetch.COMMIT in fetch.URL
    assert fetch.URL.startswith("https://") and fetch.URL.endswith("/data/locomo10.zip")
    assert re.fullmatch(r"[0-9a-f]{64}", fetch.ZIP_SHA256)
    assert len(fetch.FILES_SHA256) == 10
    assert all(re.fullmatch(r"\d+\.json", name) for name in fetch.FILES_SHA256)
    assert all(re.fullmatch(r"[0-9a-f]{64}", checksum) for checksum in fetch.FILES_SHA256.values())
    assert fetch.DEFAULT_DIR == ROOT / "bench" / "data" / "locomo10"

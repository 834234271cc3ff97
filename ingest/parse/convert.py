"""Conversion service: LibreOffice (headless `soffice --convert-to`) turns a legacy or open office
file into OOXML, which the existing parsers read, as Docling and unstructured do for .doc/.ppt.

Each conversion runs in a fresh temporary folder with its own LibreOffice profile
(`-env:UserInstallation`), so conversions never share state, never hand their work to a running
LibreOffice of the user, and read the profile's settings written here: macros disabled and at the
highest security level (a document's auto-run macro never runs), VBA projects neither loaded
nor carried into the output, links never updated (a document
cannot make LibreOffice fetch a URL or read a local file into itself). The process runs in a
session of its own and the whole group is killed after `timeout_s` (LibreOffice is a shell script
that starts `oosplash`, which starts `soffice.bin`); coreutils' `timeout` kills it as well if
the parse worker itself is killed first. The output is capped in size before it is read, and
checked as any OOXML archive is (ingest.parse.archive).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import zipfile
from io import BytesIO
from pathlib import Path

from ingest.parse.archive import check_archive
from ingest.parse.errors import ParseError

TIMEOUT_S = 120.0  # below the default parse_timeout_s (300 s), so the reason names the converter
MAX_OUTPUT_FACTOR = 8  # OOXML output over 8x the input (and 64 MB) is not a plain conversion
_MIN_OUTPUT_CAP = 64 * 1024 * 1024
# target suffix -> LibreOffice export filter
FILTERS = {"docx": "MS Word 2007 XML", "xlsx": "Calc MS Excel 2007 XML",
           "pptx": "Impress MS PowerPoint 2007 XML"}
_SETTINGS = {  # registry path -> {property: value}; the profile is read at start
    "/org.openoffice.Office.Common/Security/Scripting": {
        "DisableMacrosExecution": "true", "MacroSecurityLevel": "3",
        "BlockUntrustedRefererLinks": "true"},
    "/org.openoffice.Office.Writer/Content/Update": {"Link": "2"},  # 2 = never update links
    "/org.openoffice.Office.Calc/Content/Update": {"Link": "2"},
    "/org.openoffice.Office.Common/Misc": {"FirstRun": "false"},
    # a Word/Excel/PowerPoint file's VBA project is neither loaded (its storage is never
    # parsed), nor runnable, nor written into the OOXML (LibreOffice keeps it by default)
    "/org.openoffice.Office.Writer/Filter/Import/VBA": {
        "Load": "false", "Executable": "false", "Save": "false"},
    "/org.openoffice.Office.Calc/Filter/Import/VBA": {
        "Load": "false", "Executable": "false", "Save": "false"},
    "/org.openoffice.Office.Impress/Filter/Import/VBA": {"Load": "false", "Save": "false"},
}
# the package relationship of an ISO/IEC 29500 Strict file ("Strict Open XML Document" in Office)
_STRICT = b"http://purl.oclc.org/ooxml/officeDocument/relationships/officeDocument"
_MAX_RELS = 1024 * 1024
NEEDS = ("needs LibreOffice: `soffice` was not found on PATH (install libreoffice-writer, "
         "libreoffice-calc and libreoffice-impress; see the README's format table)")


def soffice() -> str | None:
    """The LibreOffice command, or None when it is not installed."""
    return shutil.which("soffice") or shutil.which("libreoffice")


def convert(data: bytes, suffix: str, target: str, timeout_s: float = TIMEOUT_S) -> bytes:
    """The file `data` (named with `suffix`, e.g. ".doc") converted to `target` ("docx", "xlsx",
    "pptx"); ParseError with the reason when LibreOffice is missing, fails, or takes too long."""
    command = soffice()
    if command is None:
        raise ParseError(NEEDS)
    with tempfile.TemporaryDirectory(prefix="kbflow-convert-") as tmp:
        work = Path(tmp)
        profile = work / "profile"
        (profile / "user").mkdir(parents=True)
        (profile / "user" / "registrymodifications.xcu").write_text(_registry(), "utf-8")
        source = work / f"document{suffix}"
        source.write_bytes(data)
        out = work / "out"
        args = ["timeout", "-s", "KILL", f"{timeout_s + 5:g}", command,
                f"-env:UserInstallation={profile.as_uri()}", "--headless", "--invisible",
                "--norestore", "--nologo", "--nodefault", "--nolockcheck",
                "--convert-to", f"{target}:{FILTERS[target]}", "--outdir", str(out), str(source)]
        env = {**os.environ, "HOME": str(work), "TMPDIR": str(work)}
        stderr = _run(args, env, timeout_s, suffix)
        result = out / f"document.{target}"
        if not result.is_file():
            detail = stderr.strip().splitlines()[-1] if stderr.strip() else "no output"
            raise ParseError(f"LibreOffice could not read this {suffix} file ({detail})")
        cap = max(_MIN_OUTPUT_CAP, MAX_OUTPUT_FACTOR * len(data))
        if result.stat().st_size > cap:
            raise ParseError(f"LibreOffice's {target} of this {suffix} file is "
                             f"{result.stat().st_size >> 20} MB, over the {cap >> 20} MB cap")
        converted = result.read_bytes()
    check_archive(converted, target.upper())
    return converted


def _run(args: list[str], env: dict[str, str], timeout_s: float, suffix: str) -> str:
    """Run the conversion in its own process group; kill the group on timeout. Its stderr."""
    process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, env=env, start_new_session=True)
    try:
        _, err = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        raise ParseError(f"LibreOffice took longer than {timeout_s:g} s to convert this {suffix} "
                         "file: stopped") from None
    finally:
        if process.poll() is None:  # an exception of ours while it ran: never leave it behind
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    return err.decode("utf-8", "replace")


def _registry() -> str:
    items = "".join(
        f'<item oor:path="{path}"><prop oor:name="{name}" oor:op="fuse">'
        f"<value>{value}</value></prop></item>\n"
        for path, props in _SETTINGS.items() for name, value in props.items())
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<oor:items xmlns:oor="http://openoffice.org/2001/registry" '
            'xmlns:xs="http://www.w3.org/2001/XMLSchema" '
            'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">\n'
            f"{items}</oor:items>\n")


def transitional(data: bytes, target: str) -> bytes:
    """An OOXML package as its parser reads it: a Strict one (namespaces under purl.oclc.org,
    which python-docx, python-pptx and openpyxl do not know: its body is not found) converted
    by LibreOffice to the transitional form ("docx", "xlsx", "pptx"), any other unchanged."""
    with zipfile.ZipFile(BytesIO(data)) as archive:
        rels = archive.NameToInfo.get("_rels/.rels")
        if rels is None or rels.file_size > _MAX_RELS or _STRICT not in archive.read(rels):
            return data
    return convert(data, f".{target}", target)

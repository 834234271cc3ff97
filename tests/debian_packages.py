"""Debian packages some tests need beside the engines and LibreOffice, installed with apt-get
when missing (as deploy/local/engines.sh installs PostgreSQL): a CJK font to draw Chinese
pictures and scans, Chromium for the console's pages. A fresh machine has neither, and a test
must not depend on another having installed them first."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

CJK_FONT = Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")


def installed(path: Path, *packages: str) -> Path:
    """`path`, after installing `packages` when it is missing."""
    if not path.exists():
        if shutil.which("apt-get") is None:
            raise RuntimeError(f"{path} is missing and apt-get is not available: install "
                               f"Debian's {' '.join(packages)}")
        subprocess.run(["apt-get", "update", "-q"], check=True)
        subprocess.run(["apt-get", "install", "-y", "-q", "--no-install-recommends", *packages],
                       check=True)
    return path


def cjk_font() -> str:
    """Noto Sans CJK, which draws the Chinese text of the tests' pictures."""
    return str(installed(CJK_FONT, "fonts-noto-cjk"))

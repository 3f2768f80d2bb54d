"""core.fonts (issue 12): each text is drawn in a face that has its glyphs (Helvetica for WinAnsi text, Noto
Sans for other Latin, Greek and Cyrillic, Noto Sans SC for Chinese), the faces used are embedded, and what
is printed reads back as the text itself. Read back with poppler's pdftotext and pdffonts."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from reportlab.pdfbase.pdfmetrics import stringWidth
from reportlab.pdfgen.canvas import Canvas

from core.fonts import FONT_DIR, register_fonts

PDFTOTEXT, PDFFONTS = shutil.which("pdftotext"), shutil.which("pdffonts")
needs_poppler = pytest.mark.skipif(
    not (PDFTOTEXT and PDFFONTS) and os.environ.get("REQUIRE_SERVICES") != "1",
    reason="pdftotext and pdffonts (poppler-utils) are not installed",
)
ROOT = Path(__file__).resolve().parents[2]

SAMPLES = {  # text: the face its whole is drawn in
    "C00417 A01-U10-gpu-001-ib0/0 (A)": "Helvetica",
    "Café Zürich-Ø2 …": "Helvetica",  # all in WinAnsi
    "Łódź-rack-ő": "NotoSans",
    "Αθήνα-Ωμέγα-07": "NotoSans",  # with tonos, which Noto Sans SC lacks
    "Москва-узел-07": "NotoSans",
    "北京-计算-01": "NotoSansSC",
    "机柜 A01 计算节点": "NotoSansSC",
}


def pdf_of(lines: list[str], *, bold: bool = False) -> bytes:
    fonts = register_fonts()
    family = fonts.bold if bold else fonts.regular
    buffer = io.BytesIO()
    canvas = Canvas(buffer, pageCompression=0)
    for n, line in enumerate(lines):
        family.draw(canvas, 40, 780 - 30 * n, line, 12)
    canvas.showPage()
    canvas.save()
    return buffer.getvalue()


def text_of(pdf: bytes) -> list[str]:
    out = subprocess.run([PDFTOTEXT, "-layout", "-", "-"], input=pdf, capture_output=True, check=True).stdout
    return [line.strip() for line in out.decode().splitlines() if line.strip()]


def fonts_of(pdf: bytes, tmp_path) -> dict[str, str]:
    """{base font name without its subset tag: "yes"/"no" embedded}, from pdffonts."""
    path = tmp_path / "fonts.pdf"
    path.write_bytes(pdf)
    out = subprocess.run([PDFFONTS, str(path)], capture_output=True, check=True, text=True).stdout
    found = {}
    for row in out.splitlines()[2:]:
        name, *_, emb, _sub, _uni, _obj, _gen = row.split()
        found[name.split("+")[-1]] = emb
    return found


@pytest.mark.parametrize(("text", "face"), SAMPLES.items())
def test_each_text_goes_whole_to_the_first_face_that_has_it(text, face):
    fonts = register_fonts()
    assert [(f.name, part) for f, part in fonts.regular.runs(text)] == [(face, text)]
    bold = {"Helvetica": "Helvetica-Bold", "NotoSans": "NotoSans-Bold"}.get(face, face)
    assert [f.name for f, _ in fonts.bold.runs(text)] == [bold]


def test_a_text_no_face_has_alone_is_cut_word_by_word_then_character_by_character():
    regular = register_fonts().regular
    assert [(f.name, part) for f, part in regular.runs("北京 Αθήνα rack")] == [
        ("NotoSansSC", "北京 "), ("NotoSans", "Αθήνα "), ("Helvetica", "rack"),
    ]
    assert [(f.name, part) for f, part in regular.runs("北京Αθήνα")] == [("NotoSansSC", "北京"), ("NotoSans", "Αθήνα")]


def test_a_decomposed_accent_is_composed_first():
    decomposed = unicodedata.normalize("NFD", "Café")
    assert [(f.name, part) for f, part in register_fonts().regular.runs(decomposed)] == [("Helvetica", "Café")]


def test_width_is_measured_in_the_faces_the_text_is_printed_in():
    regular = register_fonts().regular
    assert regular.width("C00417", 10) == stringWidth("C00417", "Helvetica", 10)
    assert regular.width("北京", 10) == pytest.approx(20.0)  # ideographs are one em wide
    assert regular.width("北京 Αθήνα", 10) == pytest.approx(
        stringWidth("北京 ", "NotoSansSC", 10) + stringWidth("Αθήνα", "NotoSans", 10))


@needs_poppler
def test_every_script_prints_as_itself_and_its_faces_are_embedded(tmp_path):
    lines = list(SAMPLES)
    pdf = pdf_of(lines)
    assert text_of(pdf) == lines
    assert fonts_of(pdf, tmp_path) == {
        "Helvetica": "no",  # a standard font: every reader has it
        "NotoSans-Regular": "yes", "NotoSansSC-Regular": "yes",
    }


@needs_poppler
def test_bold_prints_as_itself_with_a_synthetic_bold_for_chinese(tmp_path):
    lines = ["C00417", "Αθήνα-Ωμέγα-07", "光缆-001"]
    pdf = pdf_of(lines, bold=True)
    assert text_of(pdf) == lines
    assert fonts_of(pdf, tmp_path) == {  # reportlab sets Helvetica on every page it starts
        "Helvetica": "no", "Helvetica-Bold": "no", "NotoSans-Bold": "yes", "NotoSansSC-Regular": "yes",
    }
    assert pdf.count(b" 2 Tr") == 1 and b" 0 Tr" not in pdf  # only the Chinese run is filled and stroked


@needs_poppler
def test_a_plain_latin_text_embeds_nothing(tmp_path):
    assert fonts_of(pdf_of(["C00417 A01-U10-gpu-001-ib0/0 (A)"]), tmp_path) == {"Helvetica": "no"}


def test_the_files_and_their_licences_are_shipped():
    assert {path.name for path in FONT_DIR.iterdir() if path.suffix in {".ttf", ".txt", ".md"}} >= {
        "NotoSans-Regular.ttf", "NotoSans-Bold.ttf", "NotoSansSC-Regular.ttf", "OFL-NotoSans.txt",
        "OFL-NotoSansSC.txt", "README.md",
    }
    for licence in ("OFL-NotoSans.txt", "OFL-NotoSansSC.txt"):
        assert "SIL Open Font License, Version 1.1" in (FONT_DIR / licence).read_text()


def test_the_module_is_pure_of_django():
    """The report and any script may use it without settings: importing and registering loads no Django."""
    code = ("import sys; from core.fonts import register_fonts; register_fonts(); "
            "sys.exit(any(name.split('.')[0] == 'django' for name in sys.modules))")
    assert subprocess.run([sys.executable, "-c", code], cwd=ROOT).returncode == 0

"""Fonts for the PDFs the project draws (label sheets, the acceptance report): any name, in any script the
project's users write, printed as itself and embedded in the file.

reportlab's standard fonts (Helvetica) are not embedded and know only the WinAnsi (cp1252) characters: a
Chinese, Greek or Cyrillic name came out as black boxes. The TrueType files beside this module have the
glyphs (README.md there says which, where from, under which licence), and reportlab embeds in each PDF only
the glyphs it uses.

A `FontFamily` is a chain of faces, Helvetica first. A text is drawn in the first face that has all its
characters: a Latin name keeps Helvetica (which costs nothing, as it is not embedded), "Łódź" or "Ωμέγα"
gets Noto Sans, "北京-计算-01" Noto Sans SC, each text in one face so that it reads evenly. A text that no
face has alone ("北京 Αθήνα") is cut into runs, word by word (a word no face has alone, character by
character), each in the first face that has it. Measure
with `width` and draw with `draw`, so that what is fitted is what is printed.

No Django here: reportlab and the files beside this module.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.pdfgen.canvas import Canvas

FONT_DIR = Path(__file__).resolve().parent
STANDARD_ENCODING = "cp1252"  # reportlab writes its standard fonts in WinAnsiEncoding, which is cp1252
# Stroke width of the synthetic bold, as a share of the font size: about Noto Sans Bold's extra stem weight.
SYNTHETIC_BOLD_STROKE = 0.035
FILL, FILL_STROKE = 0, 2  # PDF text rendering modes
_WORDS = re.compile(r"\s+|\S+")


@dataclass(frozen=True)
class Face:
    """One font of a family: a registered reportlab font name and the characters it has."""

    name: str
    glyphs: Mapping[int, int] | None = field(default=None, compare=False, repr=False)  # None: a standard font
    synthetic_bold: bool = False  # drawn filled and stroked: the bold of a font shipped without one

    def has(self, text: str) -> bool:
        if self.glyphs is None:
            try:
                text.encode(STANDARD_ENCODING)
            except UnicodeEncodeError:
                return False
            return True
        return all(ord(char) in self.glyphs for char in text)


@dataclass(frozen=True)
class FontFamily:
    """Faces tried in turn (see the module's docstring); the last one takes what no face has."""

    name: str
    faces: tuple[Face, ...]

    def runs(self, text: str) -> list[tuple[Face, str]]:
        """The text as (face, part) runs: one run when a face has it all."""
        if not text.isascii():
            text = unicodedata.normalize("NFC", text)  # "e" + combining acute is "é", which Helvetica has
        whole = self._face_of(text)
        if whole is not None:
            return [(whole, text)]
        runs: list[tuple[Face, str]] = []
        for word in _WORDS.findall(text):  # word by word, then character by character
            pieces = [word] if self._face_of(word) is not None else word
            for piece in pieces:
                face = self._face_of(piece) or self.faces[-1]  # the last face prints its "missing" box
                if runs and (runs[-1][0] == face or piece.isspace()):
                    runs[-1] = (runs[-1][0], runs[-1][1] + piece)
                else:
                    runs.append((face, piece))
        return runs

    def _face_of(self, text: str) -> Face | None:
        """The first face that has every character of the text."""
        return next((face for face in self.faces if face.has(text)), None)

    def width(self, text: str, size: float) -> float:
        """The printed width in points, at `size`."""
        return sum(pdfmetrics.stringWidth(part, face.name, size) for face, part in self.runs(text))

    def draw(self, canvas: Canvas, x: float, y: float, text: str, size: float) -> None:
        """Draw the text with its baseline starting at (x, y), in the current fill colour."""
        runs = self.runs(text)
        emboldened = any(face.synthetic_bold for face, _ in runs)
        if emboldened:
            canvas.saveState()
            canvas.setLineWidth(size * SYNTHETIC_BOLD_STROKE)
        text_object = canvas.beginText(x, y)
        for face, part in runs:
            text_object.setFont(face.name, size)
            if emboldened:
                text_object.setTextRenderMode(FILL_STROKE if face.synthetic_bold else FILL)
            text_object.textOut(part)
        canvas.drawText(text_object)
        if emboldened:
            canvas.restoreState()


@dataclass(frozen=True)
class Fonts:
    regular: FontFamily
    bold: FontFamily


def _truetype(name: str, filename: str) -> TTFont:
    font = TTFont(name, str(FONT_DIR / filename))
    pdfmetrics.registerFont(font)
    return font


@functools.cache
def register_fonts() -> Fonts:
    """Register the TrueType faces with reportlab and return the two families, regular and bold. Once a
    process, when its first PDF is drawn: reading the three files takes about 0.4 s and 28 MiB (reportlab
    keeps each whole file, to cut the subsets of every PDF from)."""
    sans = _truetype("NotoSans", "NotoSans-Regular.ttf")
    sans_bold = _truetype("NotoSans-Bold", "NotoSans-Bold.ttf")
    cjk = _truetype("NotoSansSC", "NotoSansSC-Regular.ttf")
    cjk_glyphs = cjk.face.charToGlyph
    return Fonts(
        regular=FontFamily("Sans", (
            Face("Helvetica"), Face("NotoSans", sans.face.charToGlyph), Face("NotoSansSC", cjk_glyphs),
        )),
        bold=FontFamily("Sans-Bold", (
            Face("Helvetica-Bold"), Face("NotoSans-Bold", sans_bold.face.charToGlyph),
            Face("NotoSansSC", cjk_glyphs, synthetic_bold=True),
        )),
    )

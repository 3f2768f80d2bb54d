"""The label sheet, read back from the PDF with poppler's `pdftotext -bbox`: every word is put back in the
label slot of the stock it was printed in, so each test sees the text of each printed label. Both ends of
every cable (and every leg of a breakout) get a label; per rack and per network selections; the QR code
and the Code 128 carry the cable label; a constant number of queries."""

import io
import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from collections import defaultdict

import pytest

from cabling.exports import labels_pdf as module
from cabling.exports.labels_pdf import STOCKS, EndLabel, code128, labels_pdf
from cabling.filters import CableFilterSet
from cabling.selectors import cable_list
from tests.support import count_queries

pytestmark = pytest.mark.django_db

PDFTOTEXT = shutil.which("pdftotext")  # pdftoppm comes in the same package (poppler-utils)
if not PDFTOTEXT and os.environ.get("REQUIRE_SERVICES") != "1":
    pytest.skip("pdftotext (poppler-utils) is not installed", allow_module_level=True)

XHTML = "{http://www.w3.org/1999/xhtml}"
L7651 = STOCKS["L7651"]


def printed_labels(pdf: bytes, stock=L7651) -> list[str]:
    """The text of each printed label, page by page, slot by slot (top-left first, row by row)."""
    assert PDFTOTEXT, "pdftotext is required when REQUIRE_SERVICES=1"
    html = subprocess.run([PDFTOTEXT, "-bbox", "-", "-"], input=pdf, capture_output=True, check=True).stdout
    labels = []
    for page in ET.fromstring(html).iter(f"{XHTML}page"):
        slots: dict[tuple[int, int], list] = defaultdict(list)
        for word in page.iter(f"{XHTML}word"):
            x, y = float(word.get("xMin")), float(word.get("yMin"))  # points, from the top-left of the page
            column, row = int((x - stock.left) // stock.pitch_x), int((y - stock.top) // stock.pitch_y)
            slots[(row, column)].append((round(y, 1), x, word.text))
        labels += [" ".join(text for *_, text in sorted(words)) for _, words in sorted(slots.items())]
    return labels


def pdf_for(user, project, stock=L7651, **filters) -> bytes:
    cables = CableFilterSet(filters or None, queryset=cable_list(user=user, project=project)).qs
    return labels_pdf(cables, stock=stock, rack=filters.get("rack"))


def test_every_end_gets_a_label_with_its_tag_and_the_far_end(fabric, customer):
    labels = printed_labels(pdf_for(customer, fabric.project))
    assert len(labels) == 7 * 2 + 1 + 2  # seven plain cables, and the breakout: A, B1, B2
    assert labels[:2] == [
        "C00001 A01-U10-gpu-001-ib0/0 (A) to N01-U01-leaf-01-p1",
        "C00001 N01-U01-leaf-01-p1 (B1) to A01-U10-gpu-001-ib0/0",
    ]
    # The breakout: the A label lists both legs; each leg's label points back at the A end.
    assert labels[8:11] == [
        "C00005 A01-U30-gpu-003-ib0 (A) to N01-U01-leaf-01-p3 to N01-U02-leaf-02-p3",
        "C00005 N01-U01-leaf-01-p3 (B1) to A01-U30-gpu-003-ib0",
        "C00005 N01-U02-leaf-02-p3 (B2) to A01-U30-gpu-003-ib0",
    ]
    assert labels[-1] == "O00001 N01-U01-leaf-01-mgmt (B1) to A01-U10-gpu-001-bmc"
    assert not any("FOREIGN" in label for label in labels)


def test_per_rack_prints_only_the_ends_in_that_rack_and_every_end_once_over_all_racks(fabric, manager):
    servers = printed_labels(pdf_for(manager, fabric.project, rack="A01"))
    network = printed_labels(pdf_for(manager, fabric.project, rack="N01"))
    assert all("(A)" in label and label.split()[1].startswith("A01-") for label in servers)
    assert [label.split()[0] for label in servers] == ["C00001", "C00002", "C00003", "C00004", "C00005", "O00001"]
    assert all(label.split()[1].startswith("N01-") for label in network) and len(network) == 11
    assert sorted(servers + network) == sorted(printed_labels(pdf_for(manager, fabric.project)))


def test_per_network(fabric, manager):
    labels = printed_labels(pdf_for(manager, fabric.project, network="oob"))
    assert labels == [
        "O00001 A01-U10-gpu-001-bmc (A) to N01-U01-leaf-01-mgmt",
        "O00001 N01-U01-leaf-01-mgmt (B1) to A01-U10-gpu-001-bmc",
    ]


def test_a_full_sheet_moves_on_to_the_next_page(project, manager, add_cables):
    add_cables(project, 40, 0)  # 80 ends: one full L7651 sheet of 65 and 15 on the next
    pdf = labels_pdf(cable_list(user=manager, project=project), stock=L7651)
    assert pdf.count(b"/Type /Page\n") == 2
    labels = printed_labels(pdf)
    assert len(labels) == 80 and labels[65] == "Q00032 Q000-U02-qb-000-p33 (B1) to Q000-U01-qa-000-p33"


def test_thermal_roll_prints_one_label_per_page(fabric, manager):
    stock = STOCKS["thermal-2x1"]
    pdf = pdf_for(manager, fabric.project, stock=stock, network="oob")
    assert pdf.count(b"/Type /Page\n") == 2
    assert printed_labels(pdf, stock) == [
        "O00001 A01-U10-gpu-001-bmc (A) to N01-U01-leaf-01-mgmt",
        "O00001 N01-U01-leaf-01-mgmt (B1) to A01-U10-gpu-001-bmc",
    ]


def test_qr_and_code128_carry_each_ends_own_code(fabric, manager, monkeypatch):
    """Each end's codes say which end it is: C00001/A and C00001/B on a plain cable, /B1 and /B2 on the legs
    of a breakout (the printed text still reads the label and the tags). No QR decoder is installed here,
    so the test records what the QR widget and the bar code were given (the real reportlab objects are
    still drawn)."""
    qr_values, bar_values = [], []

    def recording_qr(value, size):
        widget = real_qr(value, size)
        qr_values.append(widget.value)
        return widget

    def recording_bars(value, width, height):
        bars = real_bars(value, width, height)
        bar_values.append(bars.value)
        return bars

    real_qr, real_bars = module.qr_widget, module.code128
    monkeypatch.setattr(module, "qr_widget", recording_qr)
    monkeypatch.setattr(module, "code128", recording_bars)
    pdf = pdf_for(manager, fabric.project)
    codes = [f"C0000{i}/{side}" for i in range(1, 5) for side in "AB"] + ["C00005/A", "C00005/B1", "C00005/B2"] + [
        f"{label}/{side}" for label in ("C00006", "C00007", "O00001") for side in "AB"]
    assert qr_values == codes and bar_values == codes  # one pair per end, in the order the labels are printed
    labels = printed_labels(pdf)
    assert labels[1] == "C00001 N01-U01-leaf-01-p1 (B1) to A01-U10-gpu-001-ib0/0"  # the text as before
    # ... and drawn on every label: the QR and bar code areas of the 17 used slots are inked, the next is blank.
    assert inked_codes(pdf, 18) == [(True, True)] * 17 + [(False, False)]


def test_every_printed_code_resolves_to_its_end(fabric, manager):
    """What the label holds is what the scan field resolves: each end code to that end."""
    from cabling.exports.labels_pdf import end_labels
    from cabling.search import resolve_code
    from cabling.selectors import cable_rows

    items = list(end_labels(cable_rows(cable_list(user=manager, project=fabric.project))))
    for item in items:
        match = resolve_code(user=manager, project=fabric.project, code=item.code)
        assert [(m.kind, m.obj.cable.label) for m in match] == [("cable_end", item.label)], item.code
        end = match[0].obj
        assert item.leg == ("A" if end.side == "A" else f"B{end.position + 1}")
    # An old label (the bare cable label) still resolves to its cable.
    assert [m.kind for m in resolve_code(user=manager, project=fabric.project, code="C00005")] == ["cable"]


def inked_codes(pdf: bytes, slots: int, stock=L7651) -> list[tuple[bool, bool]]:
    """For each label slot of page 1: whether its QR area (top left) and bar code area (bottom) hold ink."""
    from PIL import Image

    dpi = 100
    png = subprocess.run(["pdftoppm", "-r", str(dpi), "-gray", "-png", "-f", "1", "-l", "1", "-"],
                         input=pdf, capture_output=True, check=True).stdout
    image = Image.open(io.BytesIO(png)).convert("L")
    scale = dpi / 72

    def inked(left, top, right, bottom) -> bool:
        return image.crop((int(left), int(top), int(right), int(bottom))).getextrema()[0] < 100

    found = []
    for slot in range(slots):
        x, y = stock.origin(slot)
        top = (stock.page_size[1] - y - stock.label_h) * scale  # image rows run down from the top
        left, width, height = x * scale, stock.label_w * scale, stock.label_h * scale
        found.append((
            inked(left + 0.05 * width, top + 0.1 * height, left + 0.35 * width, top + 0.6 * height),
            inked(left + 0.2 * width, top + 0.85 * height, left + 0.8 * width, top + 0.92 * height),
        ))
    return found


def test_code128_fits_the_label_and_refuses_what_it_cannot_encode():
    bars = code128("C00005", L7651.label_w, 10)
    assert bars.value == "C00005" and bars.width <= L7651.label_w
    assert code128("Ç-01", 100, 10) is None  # non-ASCII: the label keeps its text and QR


def test_a_wide_breakout_lists_the_first_legs_and_how_many_more():
    far = tuple(f"N01-U01-leaf-01-p{i}" for i in range(1, 9))
    lines = EndLabel(cable_pk=1, label="C00009", leg="A", tag="A01-U10-gpu-001-ib0", far=far).lines
    assert lines == ["A01-U10-gpu-001-ib0 (A)", "to N01-U01-leaf-01-p1", "to N01-U01-leaf-01-p2",
                     "to N01-U01-leaf-01-p3", "+5 more"]


def test_an_empty_selection_says_so(fabric, manager):
    assert " ".join(printed_labels(pdf_for(manager, fabric.project, rack="NOPE"))) == "No cable ends match."


def test_label_sheet_query_count_does_not_grow_with_cables(project, manager, add_cables):
    def queries() -> int:
        return count_queries(lambda: labels_pdf(cable_list(user=manager, project=project), stock=L7651))

    add_cables(project, 5, 0)
    few = queries()
    add_cables(project, 45, 5)
    assert queries() == few == 1


def test_end_tags_match_the_planners_label_scheme():
    """The DB side prints its tags with the planner's function (cabling.planner.labels.place_tag): the
    format `rack-U-device-port` is written once, so the two can never drift apart."""
    import inspect

    from cabling import selectors
    from cabling.planner import labels
    from cabling.planner.model import CableEnd as PlannedEnd
    from cabling.planner.model import PortRef

    assert selectors.place_tag is labels.place_tag
    assert "-U{" not in inspect.getsource(selectors), "no second copy of the tag format in the selectors"
    planned = PlannedEnd("B", 1, PortRef("ib-p0-leaf-03", "p12", 1, "p12"), "N01", 4, (0,))
    assert labels.end_tag(planned) == "N01-U04-ib-p0-leaf-03-p12/1"
    row = selectors.EndRow(
        side="B", position=1, rack="N01", top_u=4, device="ib-p0-leaf-03", device_role="leaf",
        device_model="v m", device_part="P", port="p12/1", lane=1, plane=0, optic_part="",
    )
    assert row.tag == labels.end_tag(planned)
    assert labels.place_tag(rack="", top_u=None, device="gpu-001", port="ib0") == "unracked-gpu-001-ib0"


# --- names in other scripts (issue 12) --------------------------------------------------------------------


def non_latin_fabric(fabric):
    """The fabric with a Chinese server and cable label, a Cyrillic leaf and a Greek network rack."""
    from cabling.models import Cable
    from inventory.models import Device, Rack

    Device.objects.filter(pk=fabric.gpu1.pk).update(name="北京-计算-01")
    Device.objects.filter(pk=fabric.leaf1.pk).update(name="Москва-лиф-01")
    Rack.objects.filter(pk=fabric.network_rack.pk).update(name="Αθήνα")
    Cable.objects.filter(pk=fabric.c1.pk).update(label="光缆-001")
    return fabric


def printed_words(pdf: bytes) -> list[tuple[float, float, str]]:
    """(xMin, xMax, text) of every word pdftotext reads, in points."""
    html = subprocess.run([PDFTOTEXT, "-bbox", "-", "-"], input=pdf, capture_output=True, check=True).stdout
    return [(float(w.get("xMin")), float(w.get("xMax")), w.text) for w in ET.fromstring(html).iter(f"{XHTML}word")]


def embedded_fonts(pdf: bytes, tmp_path) -> dict[str, str]:
    """{base font name without its subset tag: "yes"/"no"}, the `emb` column of pdffonts."""
    path = tmp_path / "labels.pdf"
    path.write_bytes(pdf)
    out = subprocess.run(["pdffonts", str(path)], capture_output=True, check=True, text=True).stdout
    return {row.split()[0].split("+")[-1]: row.split()[-5] for row in out.splitlines()[2:]}


def test_chinese_cyrillic_and_greek_names_print_as_themselves_in_embedded_fonts(fabric, manager, tmp_path):
    """Helvetica knows only WinAnsi: these names printed as black boxes (pdftotext read "■■-■■-01")."""
    non_latin_fabric(fabric)
    pdf = pdf_for(manager, fabric.project, network="compute")
    labels = printed_labels(pdf)
    assert labels[0] == "C00002 A01-U10-北京-计算-01-ib0/1 (A) to Αθήνα-U02-leaf-02-p1"
    assert labels[-2:] == [  # sorted by label, "光" after the Latin letters
        "光缆-001 A01-U10-北京-计算-01-ib0/0 (A) to Αθήνα-U01-Москва-лиф-01-p1",
        "光缆-001 Αθήνα-U01-Москва-лиф-01-p1 (B1) to A01-U10-北京-计算-01-ib0/0",
    ]
    assert "■" not in " ".join(labels)
    fonts = embedded_fonts(pdf, tmp_path)
    assert fonts["NotoSansSC-Regular"] == fonts["NotoSans-Regular"] == "yes"
    assert (fonts["Helvetica"], fonts["Helvetica-Bold"]) == ("no", "no")  # "C00002" keeps Helvetica


def test_a_latin_sheet_embeds_no_font(fabric, manager, tmp_path):
    """Latin names keep Helvetica, which every reader has: the sheet carries no font file."""
    assert set(embedded_fonts(pdf_for(manager, fabric.project), tmp_path).values()) == {"no"}


def test_long_chinese_names_are_fitted_in_the_faces_they_print_in(fabric, manager):
    """Fitted with Helvetica's widths, a Chinese name would be measured as narrow boxes and run off the label;
    measured in Noto Sans SC, it shrinks (then is cut with an ellipsis) inside its label."""
    from inventory.models import Device

    Device.objects.filter(pk=fabric.gpu1.pk).update(name="北京计算集群第一号节点服务器" * 2)
    pdf = pdf_for(manager, fabric.project, rack="A01")
    right_edge = L7651.left + L7651.label_w  # the first column's labels
    words = [(x0, x1, text) for x0, x1, text in printed_words(pdf) if x0 < L7651.left + L7651.pitch_x]
    assert any("北京计算" in text for _, _, text in words)
    assert any(text.endswith("…") for _, _, text in words if "北京" in text)  # cut: too long even at 3 pt
    assert max(x1 for _, x1, _ in words) <= right_edge


def test_fit_measures_with_the_registered_font():
    """Helvetica measures the name as 48 pt of boxes at 10 pt, so it would have kept 10 pt in 50 pt of room;
    printed in Noto Sans SC it is 58 pt wide, so it shrinks to the largest quarter point that fits."""
    from reportlab.pdfbase.pdfmetrics import stringWidth

    from core.fonts import register_fonts

    regular, name = register_fonts().regular, "北京-计算-01"
    assert stringWidth(name, "Helvetica", 10) < 50 < regular.width(name, 10)
    text, size = module._fit(name, regular, 10, 50)
    assert text == name and size < 10
    assert regular.width(name, size) <= 50 < regular.width(name, size + 0.25)

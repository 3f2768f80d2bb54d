"""The scan page's camera, in Chromium: codes drawn by the label sheet's own encoders (reportlab's QR and
Code 128, as cabling.exports.labels_pdf prints them) are read by the decoder the page falls back on
where the browser has no BarcodeDetector (ZXing, from our own static files: Chromium on Linux has no
detector, like Safari on iPad), from a still image and from a (fake) camera pointed at a label."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from cabling.exports.labels_pdf import qr_widget
from tests.cabling.conftest import fabric  # noqa: F401 (fixture)
from tests.e2e.conftest import CHROMIUM, CHROMIUM_ARGS
from tests.e2e.test_floor import floor_page  # noqa: F401 (fixture)

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

def qr_modules(value: str) -> list[list[bool]]:
    widget = qr_widget(value, 100)
    widget.qr.make()
    return [[bool(module) for module in row] for row in widget.qr.modules]


def code128_bars(value: str) -> list[tuple[bool, int]]:
    """(dark, width in modules) of each bar and space, from reportlab's Code 128 (the label sheet's)."""
    from reportlab.graphics.barcode.code128 import Code128

    barcode = Code128(value, barWidth=1, humanReadable=False)
    barcode.validate()
    barcode.encode()
    barcode.decompose()
    return [(letter.isupper(), "abcd".index(letter.lower()) + 1) for letter in barcode.decomposed]


DRAW = """([kind, data]) => {
    const canvas = document.createElement('canvas');
    const ctx = canvas.getContext('2d');
    const unit = 4, quiet = 10;
    if (kind === 'qr') {
        canvas.width = canvas.height = (data.length + 2 * quiet) * unit;
        ctx.fillStyle = '#fff'; ctx.fillRect(0, 0, canvas.width, canvas.height); ctx.fillStyle = '#000';
        data.forEach((row, r) => row.forEach((dark, c) => {
            if (dark) ctx.fillRect((c + quiet) * unit, (r + quiet) * unit, unit, unit); }));
    } else {
        const total = data.reduce((sum, [, width]) => sum + width, 0);
        canvas.width = (total + 2 * quiet) * unit * 2; canvas.height = 160;
        ctx.fillStyle = '#fff'; ctx.fillRect(0, 0, canvas.width, canvas.height); ctx.fillStyle = '#000';
        let x = quiet * unit * 2;
        data.forEach(([dark, width]) => {
            if (dark) ctx.fillRect(x, 20, width * unit * 2, 120);
            x += width * unit * 2;
        });
    }
    return FloorCamera.decodeCanvas(canvas);
}"""


@pytest.mark.parametrize("code", ["C00417", "C00417/A", "C00417/B2", "ib-leaf-03:p17", "MT2514XN00001"])
def test_the_fallback_decoder_reads_our_labels_qr_and_code_128(floor_page, technician, fabric, code):  # noqa: F811
    page = floor_page(technician)
    page.goto(f"/p/{fabric.project.code}/floor/scan/")
    assert page.evaluate("() => 'BarcodeDetector' in window") is False  # so the page uses ZXing here
    assert page.evaluate("FloorCamera.loadZxing().then(() => typeof ZXing.MultiFormatReader)") == "function"
    assert page.evaluate(DRAW, ["qr", qr_modules(code)]) == code
    assert page.evaluate(DRAW, ["code128", code128_bars(code)]) == code
    assert page.evaluate(DRAW, ["qr", [[False] * 21] * 21]) is None  # nothing readable: no code, no error
    scripts = page.evaluate("[...document.scripts].map(s => s.src).filter(Boolean)")
    assert any(src.endswith("/static/vendor/zxing/index.min.js") for src in scripts)
    assert all(src.startswith(page.url.split("/p/")[0]) for src in scripts)  # nothing from another site


def y4m_of_qr(path, value: str, width: int = 640, height: int = 480, frames: int = 3) -> None:
    """A raw video (YUV4MPEG2, 4:2:0) of a QR label, white around it, for Chromium's fake camera."""
    modules = qr_modules(value)
    unit = min(width, height) // (len(modules) + 8)
    left = (width - unit * len(modules)) // 2
    top = (height - unit * len(modules)) // 2
    luma = bytearray(b"\xff" * (width * height))
    for r, row in enumerate(modules):
        for c, dark in enumerate(row):
            if dark:
                for y in range(top + r * unit, top + (r + 1) * unit):
                    start = y * width + left + c * unit
                    luma[start:start + unit] = b"\x00" * unit
    chroma = b"\x80" * ((width // 2) * (height // 2))
    with open(path, "wb") as handle:
        handle.write(f"YUV4MPEG2 W{width} H{height} F10:1 Ip A1:1 C420jpeg\n".encode())
        for _ in range(frames):
            handle.write(b"FRAME\n" + bytes(luma) + chroma + chroma)


@pytest.fixture
def camera_browser(browser, tmp_path):
    """Chromium with a fake camera filming a QR label of C00001 (a browser of its own: the camera is a
    launch option), started by the harness's Playwright."""
    video = tmp_path / "label.y4m"
    y4m_of_qr(video, "C00001")
    launched = browser.browser_type.launch(
        executable_path=str(CHROMIUM), headless=True,
        args=[*CHROMIUM_ARGS, "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
              f"--use-file-for-fake-video-capture={video}"],
    )
    yield launched
    launched.close()


def test_the_camera_reads_a_label_and_starts_its_flow(floor_page, camera_browser, technician, fabric):  # noqa: F811
    page = floor_page(technician, on=camera_browser, permissions=["camera"])
    page.goto(f"/p/{fabric.project.code}/floor/scan/")
    page.get_by_role("button", name="Camera").click()
    expect(page.locator("[data-flow=cable] h2")).to_have_text("Cable C00001", timeout=20_000)
    assert page.locator("#scan-form").get_attribute("data-last-input") == "camera"
    expect(page.locator("#camera")).to_be_hidden()  # one code per press: the camera is off again
    expect(page.locator("#scan-input")).to_be_focused()

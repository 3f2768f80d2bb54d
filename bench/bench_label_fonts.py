"""What the label sheet's fonts cost: time and PDF size of N labels (default 5,000, 77 L7651 sheets) drawn
by the sheet itself (cabling.exports.labels_pdf.LabelSheet), with names in plain ASCII, in Cyrillic and
in Chinese. No database: the labels are made up here, shaped like the planner's (C00417, rack-U-device-port
tags), so the figures are the drawing's and the fonts', not the query's.

    .venv/bin/python bench/bench_label_fonts.py [N]

CPU time is reported beside the wall time: on a machine shared with other work the CPU time is the one to
compare. The whole-fabric export (57,344 labels, with its query and the job row) is bench_label_export.py.
"""

from __future__ import annotations

import io
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SCRIPTS = {
    "ascii": ("gpu", "leaf", "A"),
    "cyrillic": ("узел", "коммутатор", "Р"),
    "chinese": ("北京-计算", "交换机", "机"),
}


def labels(count: int, script: str):
    from cabling.exports.labels_pdf import EndLabel

    server, switch, rack = SCRIPTS[script]
    for n in range(count):
        cable, leg = divmod(n, 2)
        near = f"{rack}{cable // 32:02d}-U{cable % 32 + 1:02d}-{server}-{cable:04d}-ib{cable % 8}"
        far = f"N{cable // 64:02d}-U{cable % 40 + 1:02d}-{switch}-{cable % 64:02d}-p{cable % 64 + 1}"
        tag, other = (near, far) if leg == 0 else (far, near)
        yield EndLabel(cable_pk=cable, label=f"C{cable + 1:05d}", leg="AB"[leg], tag=tag, far=(other,),
                       code=f"C{cable + 1:05d}/{'AB'[leg]}")


def render(count: int, script: str) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds, PDF bytes) of `count` labels in `script`."""
    from reportlab.pdfgen.canvas import Canvas

    from cabling.exports.labels_pdf import STOCKS, LabelSheet

    stock = STOCKS["L7651"]
    buffer = io.BytesIO()
    start, cpu = time.perf_counter(), time.process_time()
    canvas = Canvas(buffer, pagesize=stock.page_size, pageCompression=1)
    sheet = LabelSheet(canvas, stock)
    for n, item in enumerate(labels(count, script)):
        slot = n % stock.per_page
        if n and slot == 0:
            canvas.showPage()
        sheet.draw(item, slot)
    canvas.showPage()
    canvas.save()
    return time.perf_counter() - start, time.process_time() - cpu, len(buffer.getvalue())


def main(argv: list[str]) -> None:
    import os

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bringup.settings")
    django.setup()
    count = int(argv[0]) if argv else 5000
    for script in SCRIPTS:
        seconds, cpu, size = render(count, script)
        print(f"{script:9} {count} labels: {seconds:.1f} s, CPU {cpu:.1f} s ({1000 * cpu / count:.2f} ms a label), "
              f"PDF {size / 2**20:.2f} MiB ({size / count:.0f} bytes a label)")


if __name__ == "__main__":
    main(sys.argv[1:])

"""NVIDIA XID lines in kernel logs: every sample's events, the timestamp forms, grouping, refusals."""

from pathlib import Path

import pytest

from validation.parsers import ParseError, xid

NODE = Path(__file__).parent.parent / "fixtures" / "node-outputs"


def read(name):
    return (NODE / name).read_text()


def test_dmesg_T_xid_119_gsp_timeouts_with_the_gpu_named_by_the_log():
    events = xid.parse(read("xid_02_dmesg-T_xid119_gsp-rpc-timeout_xe9680.log"))
    assert [e.code for e in events] == [119] * 5 and [e.line_no for e in events] == [3, 38, 40, 42, 43]
    first = events[0]
    assert (first.kind, first.pci_address, first.pci) == ("Xid", "0000:9b:00", "0000:9b:00")
    assert (first.pid, first.process) == (2024380, "nvidia-smi")
    assert first.message.startswith("Timeout after 6s of waiting for RPC response from GPU4 GSP!")
    assert (first.timestamp_text, first.timestamp) == ("Sun Feb 23 16:24:18 2025", "2025-02-23T16:24:18")
    # "NVRM: GPU at PCI:0000:9b:00: GPU-..." and the board serial printed with it.
    assert first.gpu_uuid == "GPU-509665ad-b600-ac93-3616-d754b23d636d" and first.gpu_serial == "1650124014249"
    assert [(e.pid, e.process) for e in events[3:]] == [(1263500, "cache_mgr_main"), (1240590, "gpud")]


def test_dmesg_decode_iso_xid_13_and_43():
    events = xid.parse(read("xid_03_dmesg-decode-iso_636-lines_xid13-sm-exception_xid43.log"))
    grouped = xid.by_code(events)
    assert {code: len(items) for code, items in grouped.items()} == {13: 629, 43: 7}
    assert list(xid.by_pci(events)) == ["0000:38:00"]
    assert xid.counts(events) == {("0000:38:00", 13): 629, ("0000:38:00", 43): 7}
    first = events[0]
    assert (first.pid, first.process, first.level) == (None, None, "warn")  # pid='<unknown>', name=<unknown>
    assert first.timestamp_text == "2025-01-21T02:21:33,498559+00:00"
    assert first.timestamp == "2025-01-21T02:21:33.498559+00:00"
    assert first.message == "Graphics SM Warp Exception on (GPC 8, TPC 5, SM 0): Out Of Range Address"
    last = events[-1]
    assert (last.code, last.pid, last.process, last.message, last.line_no) == (
        43, 2924364, "pt_main_thread", "Ch 00000008", 636,
    )  # fmt: skip


def test_single_line_xid_63_without_a_timestamp():
    [event] = xid.parse(read("xid_04_single-line_xid63_row-remapper.log"))
    assert (event.code, event.pci, event.pid, event.process) == (63, "0000:10:1c", 1896, None)
    assert event.message == "Row Remapper: New row marked for remapping, reset gpu to activate."
    assert event.timestamp_text is None and event.timestamp is None and event.uptime_s is None
    assert "Xid 63 on 0000:10:1c, pid 1896 line 1" in xid.describe(event)


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        # Hand-written in the kernel's formats (no XID 79 sample was found): raw dmesg, journalctl -k short and
        # short-iso, an old driver without "PCI:" and pid, an NVSwitch SXid.
        ("[ 1234.567890] NVRM: Xid (PCI:0000:3b:00): 79, pid=0, GPU has fallen off the bus.",
         {"code": 79, "pci": "0000:3b:00", "pid": 0, "uptime_s": 1234.56789, "message": "GPU has fallen off the bus."}),
        ("Feb 23 16:24:18 gpu-node-01 kernel: NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.",
         {"code": 79, "host": "gpu-node-01", "timestamp_text": "Feb 23 16:24:18", "timestamp": None, "pid": None}),
        ("2025-02-23T16:24:18+0000 gpu-node-01 kernel: NVRM: Xid (0000:03:00): 13, 0003 00000000 0000a097",
         {"code": 13, "pci": "0000:03:00", "timestamp": "2025-02-23T16:24:18+00:00", "host": "gpu-node-01"}),
        ("Feb 23 16:24:18 sw kernel: nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 36",
         {"kind": "SXid", "code": 12028, "pci": "0000:05:00", "pci_address": "0000:05:00.0"}),
    ],
)  # fmt: skip
def test_kernel_log_formats(line, expected):
    [event] = xid.parse(line + "\n")
    assert {key: getattr(event, key) for key in expected} == expected


def test_a_clean_kernel_log_has_no_events_but_a_text_that_is_no_log_is_refused():
    clean = "[    0.000000] Linux version 6.8.0\n[    1.2] NVRM: loading NVIDIA UNIX Open Kernel Module\n"
    assert xid.parse(clean) == []
    with pytest.raises(ParseError, match="no kernel log line"):
        xid.parse("this is a shopping list\nmilk\n")


def test_hostile_input_is_refused_with_its_line():
    with pytest.raises(ParseError) as caught:
        xid.parse(read("xid_04_single-line_xid63_row-remapper.log") + "x" * 10_000_000 + "\n")
    assert caught.value.line_no == 2 and "characters long" in caught.value.message
    # XID codes have at most 6 digits: a line with a hundred is refused, not skipped.
    with pytest.raises(ParseError) as caught:
        xid.parse("[ 0.5] eth0: up\n[ 1.0] NVRM: Xid (PCI:0000:3b:00): " + "9" * 100 + ", pid=1, x\n")
    assert caught.value.line_no == 2 and "XID line not readable" in caught.value.message

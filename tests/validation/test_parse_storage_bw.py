"""fio (JSON and text, 3.x and 2.x layouts) and IOR: every sample, unit handling and refusals."""

import json
from pathlib import Path

import pytest

from validation.parsers import ParseError, storage_bw

NODE = Path(__file__).parent.parent / "fixtures" / "node-outputs"


def read(name):
    return (NODE / name).read_text()


def test_fio_json_randread_group_reporting():
    [job] = storage_bw.parse_fio(read("fio-json_01_randread_4k_qd16_8jobs_group-reporting_fio3.1.json"))
    assert (job.format, job.name, job.group_id, job.error, job.fio_version) == ("json", "random-read", 0, 0, "3.1")
    assert job.jobs == 8  # numjobs=8 with group_reporting: one aggregated result
    assert job.write is None and job.trim is None  # fio prints them with zeros; they did nothing
    read_ = job.read
    assert read_.bw_mib_s == 185680 / 1024 and read_.iops == pytest.approx(46420.021999)
    assert (read_.io_bytes, read_.runtime_ms) == (11408945152, 60004)
    assert read_.clat.mean_us == pytest.approx(2741.879732462) and read_.clat.min_us == pytest.approx(231.967)
    assert read_.lat.max_us == pytest.approx(24114.477) and read_.slat.mean_us == pytest.approx(11.399485673)
    assert read_.clat_percentiles_us["99.00"] == pytest.approx(3096.576)
    assert read_.clat_percentiles_us["99.99"] == pytest.approx(3489.792)
    assert "0.00" not in read_.clat_percentiles_us and len(read_.clat_percentiles_us) == 17
    assert job.line_no == 8


def test_fio_text_3_1_sequential_write_with_its_run_status_group():
    job, group = storage_bw.parse_fio(read("fio-text_01_seq-write_16k_qd32_fio3.1_vultr.txt"))
    assert (job.kind, job.name, job.group_id, job.jobs, job.error, job.fio_version) == ("job", "myjob", 0, 1, 0, "3.1")
    write = job.write
    assert (write.iops, write.bw_mib_s, write.io_bytes, write.runtime_ms) == (5980.0, 93.4, 4096 * 2**20, 43832)
    assert write.slat.max_us == pytest.approx(1128.7)  # "max=1128.7k" nanoseconds
    assert (write.clat.min_us, write.clat.mean_us, write.lat.stdev_us) == (3660.0, 5318.66, 877.04)
    assert write.clat_percentiles_us["50.00"] == 5211.0 and write.clat_percentiles_us["99.99"] == 25297.0
    assert job.read is None and job.line_no == 7
    assert (group.kind, group.group_id, group.direction) == ("group", 0, "write")
    assert (group.bw_mib_s, group.bw_min_mib_s, group.bw_max_mib_s) == (93.4, 93.4, 93.4)
    assert (group.io_bytes, group.run_min_ms, group.run_max_ms, group.line_no) == (4096 * 2**20, 43832, 43832, 29)


def test_fio_text_per_job_block_in_kib():
    [job] = storage_bw.parse_fio(read("fio-text_03_howto_per-job-write-block_client1.txt"))
    assert (job.name, job.write.iops) == ("Client1", 88.0)
    assert job.write.bw_mib_s == 623 / 1024 and job.write.runtime_ms == 50032
    assert job.write.io_bytes == int(30.4 * 2**20)
    assert job.write.clat_percentiles_us["80.00"] == 6718.0 and job.fio_version is None


def test_fio_run_status_group_read_and_write():
    read_, write = storage_bw.parse_fio(read("fio-text_04_howto_run-status-group_read-write.txt"))
    assert (read_.direction, read_.bw_mib_s, read_.bw_min_mib_s, read_.bw_max_mib_s) == ("read", 20.9, 10.4, 10.8)
    assert (read_.run_min_ms, read_.run_max_ms, read_.io_bytes) == (2973, 3069, 64 * 2**20)
    assert (write.direction, write.bw_mib_s) == ("write", 1231 / 1024)
    assert (write.bw_min_mib_s, write.bw_max_mib_s) == (616 / 1024, 621 / 1024)


def test_fio_2_layout_and_suffixed_iops():
    text = (
        "job1: (groupid=0, jobs=4): err= 0: pid=42\n"
        "  read : io=4096.0MB, bw=1024.0MB/s, iops=262k, runt=  4000msec\n"
        "    clat (usec): min=1, max=2, avg=1.50, stdev= 0.10\n"
        "Run status group 0 (all jobs):\n"
        "   READ: io=4096.0MB, aggrb=1024.0MB/s, minb=1024.0MB/s, maxb=1024.0MB/s, mint=4000msec, maxt=4000msec\n"
        "  write: IOPS=12.3k, BW=48.0MiB/s (50.3MB/s)(2880MiB/60001msec)\n"
    )
    job, group = storage_bw.parse_fio(text)
    assert (job.jobs, job.read.bw_mib_s, job.read.iops, job.read.runtime_ms) == (4, 1024.0, 262000.0, 4000)
    assert job.read.io_bytes == 4096 * 2**20 and job.read.clat.mean_us == 1.5
    assert (group.bw_mib_s, group.run_min_ms) == (1024.0, 4000)


def test_fio_json_after_a_warning_line_and_bw_bytes():
    document = {"fio version": "fio-3.36", "jobs": [
        {"jobname": "w", "groupid": 0, "error": 0,
         "write": {"io_bytes": 1048576, "bw_bytes": 2097152, "bw": 2048, "iops": 512.0, "runtime": 500,
                   "clat_ns": {"min": 1000, "max": 9000, "mean": 2000.0, "stddev": 10.0,
                               "percentile": {"99.000000": 8000}}}}]}  # fmt: skip
    [job] = storage_bw.parse_fio("fio: this platform does not support process shared mutexes\n" + json.dumps(document))
    assert job.fio_version == "3.36" and job.write.bw_mib_s == 2.0 and job.write.clat.max_us == 9.0
    assert job.write.clat_percentiles_us == {"99.00": 8.0} and job.line_no == 2


def test_ior_results_table_of_the_tutorial():
    [result] = storage_bw.parse_ior(read("ior_01_tutorial_shared-file_64procs_lustre_elided.txt"))
    assert result.command == "mpirun -n 64 ./ior -t 1m -b 16m -s 16" and result.line_no == 3
    write, read_ = result.operations
    assert (write.operation, write.max_mib_s, write.mean_mib_s, write.iterations, write.source) == (
        "write", 427.36, 427.36, 1, "results",
    )  # fmt: skip
    assert (read_.operation, read_.mean_mib_s) == ("read", 239.08)
    assert [it.operation for it in result.iterations] == ["write", "read", "remove"]
    assert result.iterations[2].bw_mib_s is None and result.iterations[2].total_s == 0.5344
    assert (result.iterations[0].block_kib, result.iterations[0].xfer_kib, result.iterations[0].iteration) == (
        16384.0, 1024.0, 2,
    )  # fmt: skip


def test_ior_summary_wins_over_rows_and_max_lines_are_read():
    text = (
        "access bw(MiB/s) IOPS   Latency(s) block(KiB) xfer(KiB) open(s) wr/rd(s) close(s) total(s) iter\n"
        "------ --------- ----   ---------- ---------- --------- ------- -------- -------- -------- ----\n"
        "write  1000.0    1000.0 0.01       1024       1024      0.1     1.0      0.1      1.1      0\n"
        "write  1100.0    1100.0 0.01       1024       1024      0.1     1.0      0.1      1.1      1\n"
        "Summary of all tests:\n"
        "Operation   Max(MiB)   Min(MiB)  Mean(MiB)     StdDev   Max(OPs)   Min(OPs)  Mean(OPs)     StdDev    Mean(s)\n"
        "write        1100.00    1000.00    1050.00      50.00    1100.00    1000.00    1050.00      50.00    1.10000\n"
    )
    [result] = storage_bw.parse_ior(text)
    [write] = result.operations
    assert (write.max_mib_s, write.min_mib_s, write.mean_mib_s, write.stddev_mib_s) == (1100.0, 1000.0, 1050.0, 50.0)
    assert (write.source, write.iterations) == ("summary", 2) and result.iterations[1].iops == 1100.0
    [only_max] = storage_bw.parse_ior("Max Write: 427.36 MiB/sec (448.12 MB/sec)\n").pop().operations
    assert (only_max.operation, only_max.max_mib_s, only_max.source) == ("write", 427.36, "max-line")


# ---------------------------------------------------------------------------------------------------
# Refused


def test_fio_and_ior_refuse_garbage_and_bad_numbers_with_their_line():
    with pytest.raises(ParseError, match="no fio job"):
        storage_bw.parse_fio("nothing here\n")
    with pytest.raises(ParseError, match="no IOR results"):
        storage_bw.parse_ior("nothing here\n")
    text = read("fio-text_01_seq-write_16k_qd32_fio3.1_vultr.txt").replace("BW=93.4MiB/s", "BW=93.4XiB/s")
    with pytest.raises(ParseError) as caught:
        storage_bw.parse_fio(text)
    assert caught.value.line_no == 8
    text = read("ior_01_tutorial_shared-file_64procs_lustre_elided.txt").replace("427.36", "1" * 5000)
    with pytest.raises(ParseError) as caught:
        storage_bw.parse_ior(text)
    assert caught.value.line_no == 5
    text = read("ior_01_tutorial_shared-file_64procs_lustre_elided.txt").replace("    2\nread", "\nread")
    with pytest.raises(ParseError, match="8 columns"):
        storage_bw.parse_ior(text)


def test_fio_json_hostile_numbers_depth_and_a_10_mb_line():
    with pytest.raises(ParseError, match="finite"):
        storage_bw.parse_fio('{"jobs": [{"jobname": "x", "read": {"bw": 1e999}}]}')
    with pytest.raises(ParseError, match="nested"):
        storage_bw.parse_fio('{"jobs": ' + "[" * 4000 + "]" * 4000 + "}")
    with pytest.raises(ParseError, match="read bw is"):
        storage_bw.parse_fio('{"jobs": [{"jobname": "x", "read": {"bw": "fast"}}]}')
    with pytest.raises(ParseError) as caught:
        storage_bw.parse_fio("Run status group 0 (all jobs):\n" + "x" * 10_000_000)
    assert caught.value.line_no == 2 and "characters long" in caught.value.message

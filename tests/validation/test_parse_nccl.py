"""nccl-tests parser: every fixture with its real numbers, the layouts fixtures lack, and errors."""

# ruff: noqa: E501  (hand-made outputs below keep nccl-tests' real column widths)

from pathlib import Path

import pytest

from validation.parsers import ParseError, nccl

FIXTURES = Path(__file__).parent.parent / "fixtures" / "tool-outputs"


def read(name):
    return (FIXTURES / name).read_text()


def test_allreduce_02_new_layout_with_redop_root_and_wrong_counts():
    [result] = nccl.parse(read("nccl_allreduce_02.txt"))
    assert result.test == "all_reduce_perf"
    assert result.avg_busbw_gbps == 70.742  # the trailer has a trailing space
    assert result.out_of_bounds == 0
    assert result.failed is False and result.errors == []
    assert result.wrong_column == "#wrong"
    assert result.n_ranks == 16 and result.hosts == ["ztan-mig-235z", "ztan-mig-gq73"]
    assert len(result.rows) == 31
    first, last = result.rows[0], result.rows[-1]
    assert (first.size_bytes, first.count, first.type, first.redop, first.root) == (8, 2, "float", "sum", -1)
    assert first.out_of_place.time_us == 135.8 and first.in_place.time_us == 123.5
    assert last.size_bytes == 8589934592
    assert last.out_of_place.algbw_gbps == 180.71 and last.out_of_place.busbw_gbps == 338.82
    assert last.in_place.busbw_gbps == 337.35 and last.in_place.wrong == 0


def test_allreduce_03_wrong_values_and_out_of_bounds_fail_the_run():
    [result] = nccl.parse(read("nccl_allreduce_03_wrong_failed.txt"))
    assert result.nccl_tests_version == "2.17.8"
    assert result.test == "all_reduce_perf"
    row = next(row for row in result.rows if row.size_bytes == 1048576)
    assert (row.out_of_place.wrong, row.in_place.wrong) == (96, 32)
    assert all(r.out_of_place.wrong == 0 for r in result.rows if r is not row)
    assert result.out_of_bounds == 4
    assert result.failed is True
    assert result.failure_message == "Out of bounds values: 4 FAILED"
    assert "gpu-1-1 pid 662195: Test failure common.cu:1189" in result.errors
    assert result.avg_busbw_gbps == 4.79995


def test_allreduce_04_aborted_run_reports_the_cuda_message_and_no_rows():
    [result] = nccl.parse(read("nccl_allreduce_04_cuda_busy_abort.txt"))
    assert result.failed is True
    assert result.rows == []
    assert result.avg_busbw_gbps is None and result.out_of_bounds is None
    assert "CUDA-capable device(s) is/are busy or unavailable" in result.failure_message
    assert result.failure_message.startswith("gpu-1-1: Test CUDA failure common.cu:1304")
    assert result.n_ranks == 8


def test_allreduce_01_old_layout_without_root_and_validation_off():
    [result] = nccl.parse(read("nccl_allreduce_01.txt"))
    assert result.test == "all_reduce_perf"  # no name printed: count * 4 bytes == size proves all_reduce
    assert result.validation is False and result.wrong_column == "error"
    assert len(result.rows) == 34  # the interleaved "NCCL INFO Launch mode Parallel" line is skipped
    row = result.rows[-1]
    assert (row.redop, row.root, row.out_of_place.wrong) == ("sum", None, None)
    assert row.out_of_place.busbw_gbps == 235.26
    assert result.avg_busbw_gbps == 68.4048 and result.failed is False


def test_allgather_01_has_neither_redop_nor_root_and_takes_its_name_from_the_file():
    text = read("nccl_allgather_01_old_noredop.txt")
    [anonymous] = nccl.parse(text)
    assert anonymous.test is None  # the columns cannot tell all_gather from alltoall
    [result] = nccl.parse(text, source_name="nccl_allgather_01_old_noredop.txt")
    assert result.test == "all_gather_perf"
    assert (result.rows[0].redop, result.rows[0].root) == (None, None)
    assert result.rows[-1].in_place.busbw_gbps == 230.07
    assert result.avg_busbw_gbps == 58.2651


def test_broadcast_01_has_root_but_no_redop_and_float_errors():
    [result] = nccl.parse(read("nccl_broadcast_01_old_root_noredop.txt"))
    assert result.test == "broadcast_perf"
    assert result.wrong_column == "error"
    row = result.rows[-1]
    assert (row.redop, row.root) == (None, 0)
    assert row.out_of_place.wrong == 0.0 and isinstance(row.out_of_place.wrong, float)
    assert row.out_of_place.busbw_gbps == 122.15
    assert result.avg_busbw_gbps == 41.2456 and result.failed is False


def test_two_tests_in_one_log_give_two_results():
    text = read("nccl_allreduce_02.txt") + "\n" + read("nccl_allreduce_03_wrong_failed.txt")
    first, second = nccl.parse(text)
    assert (len(first.rows), first.failed, first.avg_busbw_gbps) == (31, False, 70.742)
    assert (len(second.rows), second.failed, second.out_of_bounds) == (25, True, 4)
    assert second.line_no == read("nccl_allreduce_02.txt").count("\n") + 2


NEW_LAYOUT = """\
# nccl-tests version 2.17.8 nccl-headers=22902 nccl-library=22902
# Collective test starting: {name}
# nThread 1 nGpus 1 minBytes 1024 maxBytes 2048 step: 2(factor) warmup iters: 1 iters: 20 agg iters: 1 validation: 1 graph: 0
#
#  Rank  0 Group  0 Pid   100 on     node-a device  0 [0000:04:00] NVIDIA B300
#  Rank  1 Group  0 Pid   200 on     node-b device  0 [0000:04:00] NVIDIA B300
#
#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)
        1024           128     float    none      -1    20.10    0.05    0.03       0    19.90    0.05    0.03       0
        2048           256     float    none      -1    21.50    0.10    0.05   1e+06    21.00    0.10    0.05       0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 0.04
#
# Collective test concluded: {name}
"""


def test_alltoall_and_sendrecv_in_the_new_layout():
    for name in ("alltoall_perf", "sendrecv_perf"):
        [result] = nccl.parse(NEW_LAYOUT.format(name=name))
        assert result.test == name
        assert [row.size_bytes for row in result.rows] == [1024, 2048]
        assert (result.rows[0].redop, result.rows[0].root) == ("none", -1)
        assert result.rows[1].out_of_place.wrong == 1_000_000  # %g prints big counts in e-notation
        assert result.failed is True  # wrong elements even though out-of-bounds says OK


def test_old_alltoall_layout_named_by_the_command_line_before_it():
    text = """\
$ mpirun -np 8 ./build/alltoall_perf -b 8 -e 16 -f 2 -g 1
# nThread 1 nGpus 1 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 20 validation: 1
#
#                                             out-of-place                       in-place
#       size         count    type     time   algbw   busbw  error     time   algbw   busbw  error
#        (B)    (elements)             (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
           8             0   float    30.01    0.00    0.00  0e+00    29.80    0.00    0.00  0e+00
          16             0   float    30.55    0.00    0.00  0e+00    30.02    0.00    0.00  0e+00
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 0
"""
    [result] = nccl.parse(text)
    assert result.test == "alltoall_perf"
    assert len(result.rows) == 2 and result.rows[1].in_place.time_us == 30.02
    assert result.failed is False


def test_reduce_scatter_is_told_from_all_reduce_by_the_count():
    text = (
        NEW_LAYOUT.format(name="x").replace("# Collective test starting: x\n", "").replace("concluded: x", "")
    )
    text = text.replace("none", " sum")  # count 128 floats for 1024 bytes: a per-rank count
    [result] = nccl.parse(
        text.replace("128     float", "32     float").replace("256     float", "64     float")
    )
    assert result.test == "reduce_scatter_perf"


def test_truncated_log_keeps_its_rows_and_fails():
    lines = read("nccl_allreduce_02.txt").splitlines()
    [result] = nccl.parse("\n".join(lines[:40]))  # the table starts on line 24
    assert len(result.rows) == 17
    assert result.failed is True
    assert "truncated" in result.errors[0]


def test_garbage_number_names_the_line_and_the_column():
    lines = read("nccl_allreduce_02.txt").splitlines()
    tokens = lines[30].split()  # line 31: the 1024-byte row
    assert tokens[0] == "1024"
    tokens[7] = "0.x1"  # out-of-place busbw
    lines[30] = "   ".join(tokens)
    with pytest.raises(ParseError) as caught:
        nccl.parse("\n".join(lines))
    assert caught.value.line_no == 31
    assert str(caught.value) == "line 31: busbw is '0.x1', not a number; expected a finite number for busbw"


def test_a_row_with_missing_columns_is_an_error():
    lines = read("nccl_allreduce_01.txt").splitlines()
    lines[20] = lines[20].rsplit(maxsplit=3)[0]
    with pytest.raises(ParseError, match=r"^line 21: result row has 9 columns; expected 12 columns"):
        nccl.parse("\n".join(lines))


def test_unknown_header_column_and_non_nccl_text():
    with pytest.raises(ParseError, match="unknown column 'latency'"):
        nccl.parse("#  size count type time algbw busbw latency\n")
    with pytest.raises(ParseError, match="no nccl-tests output found"):
        nccl.parse("hello\n")


def tagged(text: str, rank: int = 0) -> str:
    """The log as `mpirun --tag-output` prints it: every line prefixed with job, rank and stream."""
    return "".join(f"[1,{rank}]<stdout>:{line}\n" for line in text.splitlines())


def test_mpirun_tag_output_prefixes_are_stripped():
    plain = nccl.parse(read("nccl_allreduce_02.txt"))[0]
    [result] = nccl.parse(tagged(read("nccl_allreduce_02.txt")))
    assert result.test == "all_reduce_perf" and len(result.rows) == 31
    assert result.rows == plain.rows and result.avg_busbw_gbps == 70.742 and result.out_of_bounds == 0
    assert result.hosts == plain.hosts and result.failed is False

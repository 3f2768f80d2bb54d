"""Distributed training smoke-test logs: ranks, world size, NCCL init, steps and loss, warnings, refusals."""

from pathlib import Path

import pytest

from validation.parsers import ParseError, training_log

NODE = Path(__file__).parent.parent / "fixtures" / "node-outputs"


def read(name):
    return (NODE / name).read_text()


def test_ddp_nccl_8_ranks_on_2_nodes_100_steps():
    [log] = training_log.parse(read("training-log_01_ddp-nccl_8-ranks_2-nodes_polaris_loss-steps.txt"))
    assert log.ranks_seen == tuple(range(8)) and log.world_sizes == (8,) and log.world_size == 8
    assert log.backend == "nccl" and log.nccl_init_complete_ranks == () and log.nccl_version is None
    assert [step.step for step in log.steps] == list(range(5, 101, 5))
    assert (log.first_loss, log.last_loss, log.last_step, log.non_finite_steps) == (3.6606, 2.4075, 100, 0)
    assert log.steps[0].line_no == 252 and all(step.finite for step in log.steps)
    assert log.error_count == 0 and log.ib_async_events == 0
    assert log.warning_count == 3 and log.warnings[0].text.endswith('Using [8 / 8] available "cuda" devices !!')


def test_nccl_init_complete_of_8_ranks_and_ib_async_events():
    name = "training-log_03_nccl-init-complete_8-ranks_ib-async-event-warn_excerpt_truncated.txt"
    [log] = training_log.parse(read(name))
    assert log.nccl_init_complete_ranks == tuple(range(8)) and log.nccl_init_complete_lines == 8
    assert log.world_size == 8 and log.ranks_seen == tuple(range(8)) and log.hosts == ("gpu1",)
    assert log.backend == "nccl" and log.steps == () and log.last_step is None
    assert (log.ib_async_events, log.warning_count) == (4, 4)
    assert {w.kind for w in log.warnings} == {"ib_async_event"} and log.warnings[0].line_no == 11
    assert "Got async event : client reregistration" in log.warnings[0].text


def test_non_finite_loss_errors_and_newer_nccl_lines():
    text = "\n".join(
        [
            "[rank0]: NCCL INFO NCCL version 2.21.5+cuda12.4",
            "node1:11:22 [0] NCCL INFO ncclCommInitRankConfig comm 0x1 rank 0 nRanks 2 nNodes 1 localRanks 2"
            " - Init COMPLETE",
            "iteration       10/     100 | lm loss: 1.045E+01 |",
            "step=20 loss=nan",
            "[rank1]: Traceback (most recent call last):",
            "[rank1]: RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error",
            "world_size=2",
        ]
    )
    [log] = training_log.parse(text)
    assert log.nccl_version == "2.21.5+cuda12.4" and log.nccl_init_complete_ranks == (0,)
    assert log.ranks_seen == (0, 1) and log.world_sizes == (2,) and log.hosts == ("node1",)
    assert [(s.step, s.loss, s.finite) for s in log.steps] == [(10, 10.45, True), (20, None, False)]
    assert log.non_finite_steps == 1 and log.last_loss == 10.45 and log.error_count == 2


def test_disagreeing_world_sizes_are_all_kept():
    [log] = training_log.parse("WORLD_SIZE=16\nrank 3 nranks 8 cudaDev 3 busId 1000 - Init COMPLETE\n")
    assert log.world_sizes == (16, 8) and log.world_size == 16


def test_refused():
    with pytest.raises(ParseError, match="no training log content"):
        training_log.parse("hello\nworld\n")
    with pytest.raises(ParseError) as caught:
        training_log.parse("step=1 loss=2.0\n" + "x" * 10_000_000 + "\n")
    assert caught.value.line_no == 2 and "characters long" in caught.value.message


def test_a_huge_step_or_loss_number_is_refused_with_its_line():
    for bad in ("step=" + "9" * 50 + " loss=1.0", "step=3 loss=" + "1" * 5000):
        with pytest.raises(ParseError) as caught:
            training_log.parse("Rank 0: Completed store-based barrier\n" + bad + "\n")
        assert caught.value.line_no == 2
    [log] = training_log.parse("step=3 loss=1e999\n")  # overflows: a loss that is not finite, not an error
    assert log.steps[0].finite is False and log.non_finite_steps == 1

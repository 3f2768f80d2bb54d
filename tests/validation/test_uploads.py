"""Tool-output uploads: real fixtures through the page and through the API (token), matched to the node's
ports, judged and filed as check results; bad files keep the raw file, fail with the line and file nothing;
unknown hosts are refused; outsiders get 404, customers 403; the list's query count does not grow."""

import random

import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from core.choices import JobStatus
from tests.support import count_queries
from validation import services, tasks
from validation.choices import CheckKind, ResultStatus, RunnerKind, UploadSource, Verdict
from validation.models import CheckResult, CheckRun, ToolUpload
from validation.runners import SimRail, SimulatedRunner, plan_faults
from validation.runners.simulated import mlxlink_text
from validation.uploads.judge import rail_index, split_text

from .conftest import fixture_text, make_gpu_nodes, two_plane_server_model

pytestmark = pytest.mark.django_db

MLXLINK_LOOP = "mlxlink_03_ib_hdr_2x_cx6_operational_8hca.txt"


@pytest.fixture
def nodes(project):
    return make_gpu_nodes(project, 3)


@pytest.fixture
def page_upload(client_for, project, django_capture_on_commit_callbacks):
    """Upload through the page as `user`; the parse task runs (eagerly) when the request commits."""

    def upload(user, *, name: str, host: str, text: str | None = None, data: bytes | None = None, tool="auto"):
        from django.core.files.uploadedfile import SimpleUploadedFile

        content = data if data is not None else (text if text is not None else fixture_text(name)).encode()
        client = client_for(user)
        with django_capture_on_commit_callbacks(execute=True):
            response = client.post(
                reverse("uploads:create", args=[project.code]),
                {"file": SimpleUploadedFile(name, content, content_type="text/plain"), "host": host, "tool": tool},
            )
        return response

    return upload


@pytest.fixture
def node_api(django_capture_on_commit_callbacks):
    """An API client authenticated the way a node is: with the token of a user."""

    def api(user):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")

        def post(*args, **kwargs):
            with django_capture_on_commit_callbacks(execute=True):
                return client.post(*args, **kwargs)

        client.post_committed = post
        return client

    return api


def results_of(upload) -> dict[str, CheckResult]:
    return {r.target_key: r for r in CheckResult.objects.filter(run=upload.run).select_related("port", "device")}


def reasons(result) -> list[str]:
    return [r["text"] for r in result.reasons]


# -- the page -------------------------------------------------------------------------------------------


def test_mlxlink_loop_uploaded_on_the_page_gives_eight_results_on_the_node_rails(page_upload, technician, nodes):
    response = page_upload(technician, name=MLXLINK_LOOP, host="gpu-002")
    upload = ToolUpload.objects.get()
    assert response.status_code == 302 and response.url == reverse("uploads:detail", args=["ACME-72", upload.pk])
    assert (upload.status, upload.tool, upload.result_count, upload.source) == (
        JobStatus.DONE, "mlxlink", 8, UploadSource.PAGE
    )
    assert (upload.run.kind, upload.run.runner, upload.run.progress_total, upload.run.progress_done) == (
        CheckKind.LINK_HEALTH, RunnerKind.UPLOAD, 8, 8
    )
    results = results_of(upload)
    # mt4123_pciconfN is the node's rail N: ib0..ib7 of gpu-002, not of any other node
    assert sorted(results) == [f"gpu-002:ib{i}" for i in range(8)]
    for i in range(8):
        result = results[f"gpu-002:ib{i}"]
        assert (result.device.name, result.port.name, result.status) == ("gpu-002", f"ib{i}", ResultStatus.DONE)
        assert result.metrics["device"] == f"mt4123_pciconf{i}"
        # the fixture is an HDR 2x cluster; this inventory plans XDR at 4x: judged against the plan
        assert result.verdict == Verdict.FAIL
        assert "speed IB-HDR, planned IB-XDR" in reasons(result) and "width 2x, planned 4x" in reasons(result)
        # each result keeps its own device's part of the captured loop
        assert f"mt4123_pciconf{i} ====" in result.raw_output
        assert f"mt4123_pciconf{(i + 1) % 8} ====" not in result.raw_output
    assert upload.counts == {"fail": 8}


def test_upload_detail_page_lists_the_results_and_links_the_raw_file(page_upload, client_for, technician, nodes):
    page_upload(technician, name=MLXLINK_LOOP, host="gpu-002")
    upload = ToolUpload.objects.get()
    client = client_for(technician)
    body = client.get(reverse("uploads:detail", args=["ACME-72", upload.pk])).content.decode()
    assert body.count("<tr data-result=") == 8 and "speed IB-HDR, planned IB-XDR" in body
    raw = client.get(reverse("uploads:file", args=["ACME-72", upload.pk]))
    assert raw.status_code == 200 and b"".join(raw.streaming_content).decode() == fixture_text(MLXLINK_LOOP)
    status = client.get(reverse("api-job-status", args=[upload.job_type, upload.pk])).json()
    assert (status["status"], status["status_label"], status["finished"]) == (JobStatus.DONE, "Parsed", True)
    assert status["done"] == status["total"] == 8
    assert '<span id="upload-status" class="badge ok">Parsed</span>' in body


def test_a_healthy_port_named_mlx5_3_is_rail_3_and_passes(page_upload, technician, project, nodes):
    runner = SimulatedRunner(services.sim_cluster_for(project), seed=4)
    faulty = {plan_faults(runner.cluster, 4).dirty_fiber, plan_faults(runner.cluster, 4).hot_optic}
    host = next(n.name for n in runner.cluster.nodes if (n.name, "mlx5_3") not in faulty)
    text = "$ sudo mlxlink -d mlx5_3 -m -c\n" + runner.run(host, "mlxlink -d mlx5_3 -m -c", 10).stdout
    page_upload(technician, name="mlxlink-mlx5_3.txt", host=host, text=text, tool="mlxlink")
    [result] = results_of(ToolUpload.objects.get()).values()
    assert (result.target_key, result.port.name, result.verdict) == (f"{host}:ib3", "ib3", Verdict.PASS)
    assert result.metrics["counters"]["effective_ber"] is not None


def test_the_upload_list_shows_uploads_and_offers_the_form_only_to_those_who_may_upload(
    page_upload, client_for, technician, customer, nodes
):
    page_upload(technician, name=MLXLINK_LOOP, host="gpu-001")
    body = client_for(technician).get(reverse("uploads:list", args=["ACME-72"])).content.decode()
    assert 'id="upload-form"' in body and body.count("<tr data-upload=") == 1
    body = client_for(customer).get(reverse("uploads:list", args=["ACME-72"])).content.decode()
    assert 'id="upload-form"' not in body and body.count("<tr data-upload=") == 1


def test_uploads_list_query_count_does_not_grow(page_upload, client_for, technician, nodes, django_assert_num_queries):
    client = client_for(technician)
    url = reverse("uploads:list", args=["ACME-72"])
    page_upload(technician, name="nccl_allreduce_02.txt", host="gpu-001")
    client.get(url)  # warm the role cache and sessions
    few = count_queries(lambda: client.get(url))
    for _ in range(6):
        page_upload(technician, name="nccl_allreduce_02.txt", host="gpu-002")
        page_upload(technician, name="ibstat_01_initializing_no_sm.txt", host="gpu-003")
    with django_assert_num_queries(few):
        body = client.get(url).content.decode()
    assert body.count("<tr data-upload=") == 13


# -- every fixture kind that concerns a node, both ways -------------------------------------------------

FIXTURE_KINDS = [
    (MLXLINK_LOOP, CheckKind.LINK_HEALTH, [f"gpu-001:ib{i}" for i in range(8)]),
    ("nccl_allreduce_02.txt", CheckKind.NCCL, ["nccl:all_reduce_perf"]),
    ("nccl_allreduce_04_cuda_busy_abort.txt", CheckKind.NCCL, ["nccl:all_reduce_perf"]),
    ("ib_write_bw_01_ndr_gbits.txt", CheckKind.CPU_BANDWIDTH, ["gpu-001:ib0"]),
    ("ib_write_bw_02_use_cuda_roce_16qp_duration.txt", CheckKind.GPU_RDMA, ["gpu-001:ib1"]),
    # server and client output in one file: the client's measurement only; its device is named ib0
    ("ib_write_bw_03_loopback_8M_mbsec.txt", CheckKind.CPU_BANDWIDTH, ["gpu-001:ib0"]),
    ("ib_send_lat_01.txt", CheckKind.CPU_BANDWIDTH, ["gpu-001:ib0"]),
    ("ibstat_01_initializing_no_sm.txt", CheckKind.PORT_STATE, ["gpu-001:ib0"]),
    ("ibstatus_01_azure_a100_hdr_plus_eth.txt", CheckKind.PORT_STATE,
     [*(f"gpu-001:ib{i}" for i in range(8)), "gpu-001:mlx5_8/1"]),
]


@pytest.mark.parametrize("via", ["page", "api"])
@pytest.mark.parametrize(("name", "kind", "keys"), FIXTURE_KINDS, ids=[k[0] for k in FIXTURE_KINDS])
def test_every_node_fixture_files_its_results_through_page_and_api(page_upload, node_api, technician, nodes, via,
                                                                   name, kind, keys):
    if via == "page":
        page_upload(technician, name=name, host="gpu-001")
    else:
        text = fixture_text(name)
        response = node_api(technician).post_committed("/api/uploads/", {"project": "ACME-72", "host": "gpu-001",
                                                                          "text": text})
        assert response.status_code == 201, response.content
    upload = ToolUpload.objects.get()
    assert upload.status == JobStatus.DONE, upload.error
    assert upload.run.kind == kind and sorted(results_of(upload)) == sorted(keys)
    assert all(r.verdict in Verdict.values and r.reasons is not None for r in results_of(upload).values())
    assert sum(upload.counts.values()) == upload.result_count == len(keys)


def test_an_upload_waiting_for_its_task_shows_a_poller(client_for, technician, project, nodes):
    from validation.uploads.services import tool_upload_create

    upload = tool_upload_create(project=project, user=technician, host="gpu-001", data=b"x", filename="x.txt")
    client = client_for(technician)
    body = client.get(reverse("uploads:detail", args=["ACME-72", upload.pk])).content.decode()
    status_url = reverse("api-job-status", args=["validation.toolupload", upload.pk])
    assert f'data-progress-url="{status_url}" data-progress-reload' in body
    assert client.get(status_url).json()["finished"] is False


# -- the API, as a node posts -----------------------------------------------------------------------------


def test_node_posts_nccl_output_as_multipart_with_a_token(node_api, technician, nodes):
    from django.core.files.uploadedfile import SimpleUploadedFile

    api = node_api(technician)
    text = fixture_text("nccl_allreduce_03_wrong_failed.txt")
    response = api.post_committed(
        "/api/uploads/",
        {"project": "ACME-72", "host": "gpu-003", "file": SimpleUploadedFile("nccl.log", text.encode())},
        format="multipart",
    )
    assert response.status_code == 201, response.content
    assert (response.json()["status"], response.json()["device"]) == ("queued", "gpu-003")
    body = api.get(f"/api/uploads/{response.json()['id']}/").json()  # the node polls its upload
    assert (body["status"], body["tool"], body["device"], body["result_count"]) == ("done", "nccl", "gpu-003", 1)
    assert (body["status_label"], body["uploaded_by"]) == ("Parsed", technician.username)
    [result] = body["results"]
    assert result["verdict"] == Verdict.FAIL and result["target_key"] == "nccl:all_reduce_perf"
    assert any(r["text"].startswith("wrong values at 1 MiB") for r in result["reasons"])
    upload = ToolUpload.objects.get(pk=body["id"])
    assert upload.source == UploadSource.API and upload.run.kind == CheckKind.NCCL
    assert upload.run.results.get().device.name == "gpu-003"
    assert response["Location"].endswith(reverse("uploads:detail", args=["ACME-72", upload.pk]))


def test_node_posts_ib_write_bw_as_a_raw_text_body(node_api, technician, nodes):
    api = node_api(technician)
    response = api.post_committed(
        "/api/uploads/?project=ACME-72&host=gpu-001.cluster.local",
        data=fixture_text("ib_write_bw_01_ndr_gbits.txt").encode(),
        content_type="text/plain",
    )
    assert response.status_code == 201, response.content
    upload = ToolUpload.objects.get()
    assert upload.device.name == "gpu-001" and upload.run.kind == CheckKind.CPU_BANDWIDTH
    [result] = results_of(upload).values()
    assert (result.target_key, result.port.name) == ("gpu-001:ib0", "ib0")  # device mlx5_0
    assert result.metrics["line_rate_gbps"] == 800 and result.metrics["use_cuda"] is False
    measured = result.metrics["bw_avg_gbps"]
    assert measured > 0
    expected = Verdict.PASS if measured >= 445 else (Verdict.WARN if measured >= 440 else Verdict.FAIL)
    assert result.verdict == expected
    with upload.file.open("rb") as stored:
        assert stored.read() == fixture_text("ib_write_bw_01_ndr_gbits.txt").encode()


def test_gpu_rdma_upload_is_held_to_the_port_line_rate(node_api, technician, nodes):
    api = node_api(technician)
    text = fixture_text("ib_write_bw_02_use_cuda_roce_16qp_duration.txt")
    response = api.post_committed(
        "/api/uploads/", {"project": "ACME-72", "host": "gpu-002", "text": text, "tool": "perftest"}, format="json"
    )
    assert response.status_code == 201, response.content
    upload = ToolUpload.objects.get()
    [result] = results_of(upload).values()
    assert upload.run.kind == CheckKind.GPU_RDMA and result.port.name == "ib1"  # device mlx5_1
    assert result.verdict == Verdict.FAIL
    assert any("of 800 Gb/s line rate" in text for text in reasons(result))


def test_ibstat_upload_maps_ca_names_to_rails_and_flags_what_it_cannot_place(node_api, technician, nodes):
    api = node_api(technician)
    text = fixture_text("ibstat_02_h100_roce_12hca_some_down_polling.txt")
    response = api.post_committed("/api/uploads/", {"project": "ACME-72", "host": "gpu-003", "text": text})
    assert response.status_code == 201, response.content
    upload = ToolUpload.objects.get()
    assert upload.run.kind == CheckKind.PORT_STATE and upload.result_count == 12
    results = results_of(upload)
    matched = {key: r for key, r in results.items() if r.port is not None}
    assert sorted(r.port.name for r in matched.values()) == [f"ib{i}" for i in range(8)]
    assert all(r.metrics["ca"] == f"mlx5_{r.port.name[2:]}" for r in matched.values())
    down = results["gpu-003:ib5"]  # mlx5_5: Down / Disabled
    assert down.verdict == Verdict.FAIL and "port state Down, expected Active" in reasons(down)
    assert "rate 400 Gb/s, planned 800 Gb/s" in reasons(results["gpu-003:ib0"])
    unplaced = sorted(key for key, r in results.items() if r.port is None)
    assert unplaced == ["gpu-003:mlx5_10/1", "gpu-003:mlx5_11/1", "gpu-003:mlx5_8/1", "gpu-003:mlx5_9/1"]
    unplaced_note = "'mlx5_8' matches no compute or storage port of gpu-003 (mlx5_0..mlx5_7: ib0,"
    assert any(unplaced_note in text for text in reasons(results["gpu-003:mlx5_8/1"]))


def test_api_lists_and_reads_only_the_users_uploads(node_api, api_for, technician, outsider, nodes):
    text = fixture_text("ibstat_01_initializing_no_sm.txt")
    node_api(technician).post_committed("/api/uploads/", {"project": "ACME-72", "host": "gpu-001", "text": text})
    upload = ToolUpload.objects.get()
    mine = api_for(technician).get("/api/uploads/").json()
    assert [u["id"] for u in mine["results"]] == [upload.pk]
    theirs = api_for(outsider)
    assert theirs.get("/api/uploads/").json()["results"] == []
    assert theirs.get(f"/api/uploads/{upload.pk}/").status_code == 404


# -- bad input -----------------------------------------------------------------------------------------


def corrupt_nccl() -> tuple[str, int]:
    """Two nccl tests in one log; the second has a broken row. Returns the text and that row's line."""
    good = fixture_text("nccl_allreduce_02.txt")
    lines = good.splitlines()
    row = next(i for i, line in enumerate(lines) if line.split() and line.split()[0].isdigit())
    broken = lines[:]
    broken[row] = broken[row].replace(broken[row].split()[1], "12x4", 1)
    return good + "\n" + "\n".join(broken) + "\n", len(lines) + 1 + row + 1


def test_a_bad_file_is_kept_fails_with_its_line_and_files_nothing(page_upload, client_for, technician, nodes):
    text, line = corrupt_nccl()
    page_upload(technician, name="two-tests.log", host="gpu-001", text=text)
    upload = ToolUpload.objects.get()
    assert upload.status == JobStatus.FAILED and upload.error_line == line
    assert upload.error.startswith(f"line {line}: count is '12x4', not a whole number")
    # the first test was fine, yet nothing of it was filed: all results or none
    assert CheckRun.objects.count() == 0 and CheckResult.objects.count() == 0 and upload.run is None
    with upload.file.open("rb") as stored:
        assert stored.read() == text.encode()
    body = client_for(technician).get(reverse("uploads:detail", args=["ACME-72", upload.pk])).content.decode()
    assert 'id="upload-error"' in body and f"line {line}: count is" in body


@pytest.mark.parametrize(
    ("name", "content", "line", "message"),
    [
        ("topology.txt", fixture_text("ibnetdiscover_02_hdr_superbench_faked_edited.txt").encode(), 1,
         "this is ibnetdiscover output"),
        ("notes.txt", b"hello\nthis is not a tool output\n", 1, "could not tell which tool produced this output"),
        ("core.bin", b"State : Active\n\x00\x01\x02", 2, "binary data"),
        ("latin1.txt", b"Operational Info\n---\nVendor : caf\xe9\n", 3, "is not UTF-8 text"),
    ],
)
def test_files_that_are_no_node_output_fail_with_a_line(page_upload, technician, nodes, name, content, line, message):
    page_upload(technician, name=name, host="gpu-001", data=content)
    upload = ToolUpload.objects.get()
    assert (upload.status, upload.error_line) == (JobStatus.FAILED, line)
    assert message in upload.error
    assert CheckResult.objects.count() == 0


def test_naming_the_wrong_tool_fails_with_the_line_the_parser_stopped_at(page_upload, technician, nodes):
    page_upload(technician, name="x.txt", host="gpu-001", text=fixture_text("nccl_allreduce_02.txt"), tool="mlxlink")
    upload = ToolUpload.objects.get()
    assert upload.status == JobStatus.FAILED and upload.error.startswith(f"line {upload.error_line}: ")


def test_unknown_host_is_refused_on_the_page_and_the_api(page_upload, node_api, technician, nodes):
    response = page_upload(technician, name=MLXLINK_LOOP, host="gpu-999")
    assert response.status_code == 200
    assert "No device named &#x27;gpu-999&#x27; in project ACME-72." in response.content.decode()
    response = node_api(technician).post_committed(
        "/api/uploads/", {"project": "ACME-72", "host": "gpu-999", "text": fixture_text(MLXLINK_LOOP)}
    )
    assert response.status_code == 400
    assert response.json() == {"host": ["No device named 'gpu-999' in project ACME-72."]}
    assert ToolUpload.objects.count() == 0


def test_api_refuses_an_empty_body_and_an_unknown_tool(node_api, technician, nodes):
    api = node_api(technician)
    response = api.post_committed("/api/uploads/?project=ACME-72&host=gpu-001", data=b"", content_type="text/plain")
    assert response.status_code == 400 and "file" in response.json()
    response = api.post_committed("/api/uploads/", {"project": "ACME-72", "host": "gpu-001", "text": "x", "tool": "ls"})
    assert response.status_code == 400 and "tool" in response.json()


def test_api_refuses_a_json_body_that_is_not_an_object(node_api, technician, nodes):
    response = node_api(technician).post_committed("/api/uploads/", ["not", "an", "object"], format="json")
    assert response.status_code == 400


def test_an_unexpected_error_marks_the_upload_failed_and_files_nothing(page_upload, technician, nodes, monkeypatch):
    from validation.uploads import services as upload_services

    def broken(*args):
        raise RuntimeError("a bug")

    monkeypatch.setitem(upload_services.BUILDERS, "nccl", broken)
    page_upload(technician, name="nccl_allreduce_02.txt", host="gpu-001")
    upload = ToolUpload.objects.get()
    assert upload.status == JobStatus.FAILED and upload.error_line is None
    assert upload.error == "internal error while filing the results (RuntimeError)"
    assert CheckRun.objects.count() == 0


def test_an_oversized_file_is_refused(page_upload, technician, nodes, settings):
    settings.UPLOAD_MAX_BYTES = 100
    response = page_upload(technician, name=MLXLINK_LOOP, host="gpu-001")
    assert response.status_code == 200 and "the limit is 100 bytes" in response.content.decode()
    assert ToolUpload.objects.count() == 0


def test_parsing_twice_files_the_results_once(page_upload, technician, nodes):
    page_upload(technician, name=MLXLINK_LOOP, host="gpu-001")
    upload = ToolUpload.objects.get()
    tasks.tool_upload_parse(upload.pk)  # a redelivered task
    assert CheckRun.objects.count() == 1 and CheckResult.objects.count() == 8


# -- who may do what -------------------------------------------------------------------------------------


def test_outsiders_get_404_on_every_upload_page_and_the_api(page_upload, client_for, node_api, technician, outsider,
                                                             nodes):
    page_upload(technician, name=MLXLINK_LOOP, host="gpu-001")
    upload = ToolUpload.objects.get()
    client = client_for(outsider)
    for name, args in [("list", []), ("create", []), ("detail", [upload.pk]), ("file", [upload.pk])]:
        assert client.get(reverse(f"uploads:{name}", args=["ACME-72", *args])).status_code == 404, name
    assert client.get(reverse("api-job-status", args=[upload.job_type, upload.pk])).status_code == 404
    response = node_api(outsider).post_committed(
        "/api/uploads/", {"project": "ACME-72", "host": "gpu-001", "text": fixture_text(MLXLINK_LOOP)}
    )
    assert response.status_code == 404
    assert ToolUpload.objects.count() == 1


def test_a_technician_of_another_project_gets_404_too(node_api, other_project, nodes):
    from projects.choices import Role
    from tests.factories import MembershipFactory, UserFactory

    stranger = UserFactory(username="their-tech")
    MembershipFactory(user=stranger, project=other_project, role=Role.TECHNICIAN)
    response = node_api(stranger).post_committed(
        "/api/uploads/", {"project": "ACME-72", "host": "gpu-001", "text": fixture_text(MLXLINK_LOOP)}
    )
    assert response.status_code == 404


def test_customers_may_look_but_get_403_for_uploading(page_upload, client_for, node_api, customer, nodes):
    client = client_for(customer)
    assert client.get(reverse("uploads:list", args=["ACME-72"])).status_code == 200
    assert client.get(reverse("uploads:create", args=["ACME-72"])).status_code == 403
    assert page_upload(customer, name=MLXLINK_LOOP, host="gpu-001").status_code == 403
    response = node_api(customer).post_committed(
        "/api/uploads/", {"project": "ACME-72", "host": "gpu-001", "text": fixture_text(MLXLINK_LOOP)}
    )
    assert response.status_code == 403
    assert ToolUpload.objects.count() == 0


def test_managers_upload_too(page_upload, manager, nodes):
    page_upload(manager, name="ibstat_01_initializing_no_sm.txt", host="gpu-001")
    [result] = results_of(ToolUpload.objects.get()).values()
    assert result.port.name == "ib0" and "port state Initializing, expected Active" in reasons(result)


# -- pure helpers ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "rail"),
    [("mlx5_3", 3), ("/dev/mst/mt4131_pciconf7", 7), ("mt4123_pciconf0", 0), ("mt4123_pciconf0.1", None),
     ("0000:1a:00.0", None), ("", None), (None, None), ("mlx5_bond_0", None)],
)
def test_rail_index_reads_rdma_and_mst_device_names(name, rail):
    assert rail_index(name) == rail


def test_split_text_gives_each_result_its_banner():
    text = "$ for d in a b\n===== a =====\n\nState : x\n-E- oops\n\n===== b =====\n\nState : y\n"
    first, second = split_text(text, [4, 9])
    assert first.startswith("$ for d") and "-E- oops" in first and "===== b" not in first
    assert second.startswith("===== b =====") and "State : y" in second


def test_an_xdr_4x_reading_of_a_two_plane_port_passes(page_upload, technician, project):
    # 800G NIC ports split 2 x 400G, one per plane: mlxlink reports the physical port, XDR at 4x.
    [node] = make_gpu_nodes(project, 1, prefix="plane", model=two_plane_server_model())
    text = mlxlink_text(SimRail(0, "mlx5_0", "ib0", 800, 4), random.Random(1))
    page_upload(technician, name="mlxlink-mlx5_0.txt", host=node.name, text=f"$ mlxlink -d mlx5_0\n{text}")
    [result] = results_of(ToolUpload.objects.get()).values()
    assert (result.port.name, result.metrics["width"]) == ("ib0", "4x")
    assert (result.verdict, result.reasons) == (Verdict.PASS, []), result.reasons


def test_an_mlxlink_output_without_module_info_warns_that_no_dom_was_reported(page_upload, technician, nodes):
    page_upload(technician, name=MLXLINK_LOOP, host=nodes[0].name)
    for result in results_of(ToolUpload.objects.get()).values():
        assert "no DOM reported (run mlxlink with -m; a passive cable says so itself)" in reasons(result)
        assert "passive copper cable: no DOM to check" not in reasons(result)

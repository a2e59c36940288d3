"""The review app over HTTP (Starlette's in-process client): CSRF on writes, no file outside
the item-listed images, trusted hosts, and the unit views (drift, diff, phrase checks)."""

from __future__ import annotations

import re

import pytest
from starlette.testclient import TestClient

from _review_fixtures import write_review_bench
from foilbench.review.app import SESSION_COOKIE, create_app, open_session

BASE_URL = "http://127.0.0.1:8766"


@pytest.fixture()
def client(tmp_path):
    session = open_session(write_review_bench(tmp_path / "bench"))
    with TestClient(create_app(session), base_url=BASE_URL) as c:
        c.session = session
        yield c
    session.store.close()


def _token(client) -> str:
    html = client.get("/").text
    return re.search(r'name="csrf-token" content="([0-9a-f]+)"', html).group(1)


DECISION = {"phase": "base", "key": "s0", "verdict": "accept"}


def test_post_without_or_with_wrong_csrf_token_is_refused(client):
    _token(client)  # the browser session cookie exists, but no header is sent
    r = client.post("/api/decide", json=DECISION)
    assert r.status_code == 403 and "CSRF" in r.json()["error"]
    r = client.post("/api/decide", json=DECISION, headers={"X-CSRF-Token": "0" * 64})
    assert r.status_code == 403
    assert client.post("/api/undo", json={}).status_code == 403
    assert client.session.store.events() == []  # nothing was written


def test_token_is_bound_to_the_session_cookie(client, tmp_path):
    token = _token(client)
    client.cookies.clear()
    client.cookies.set(SESSION_COOKIE, "another-session")
    r = client.post("/api/decide", json=DECISION, headers={"X-CSRF-Token": token})
    assert r.status_code == 403


def test_cross_origin_and_non_json_posts_are_refused(client):
    token = _token(client)
    r = client.post("/api/decide", json=DECISION,
                    headers={"X-CSRF-Token": token, "Origin": "http://evil.example"})
    assert r.status_code == 403
    r = client.post("/api/decide", content="phase=base",
                    headers={"X-CSRF-Token": token,
                             "Content-Type": "application/x-www-form-urlencoded"})
    assert r.status_code == 415
    assert client.session.store.events() == []


def test_post_with_token_writes_and_returns_live_rates(client):
    token = _token(client)
    r = client.post("/api/decide", headers={"X-CSRF-Token": token},
                    json={"phase": "base", "key": "s2", "verdict": "reject",
                          "failed": ["image_clean"], "note": "smudge"})
    assert r.status_code == 200
    summary = r.json()["summary"]
    assert summary["phases"]["base"]["reject"] == 1
    assert summary["phases"]["instance"]["invalidated"] == 3
    assert summary["can_undo"] is True
    r = client.post("/api/decide", headers={"X-CSRF-Token": token},
                    json={"phase": "base", "key": "s0", "verdict": "reject"})
    assert r.status_code == 400 and "failed criterion" in r.json()["error"]
    r = client.post("/api/undo", headers={"X-CSRF-Token": token}, json={})
    assert r.json()["undone"] == {"phase": "base", "key": "s2", "verdict": "reject"}


@pytest.mark.parametrize("path", ["../../../../etc/passwd", "/etc/passwd", "manifest.json",
                                  "items.parquet", "review/decisions.sqlite",
                                  "images/s0/../../manifest.json", "images/s0/missing.png",
                                  "%2e%2e/%2e%2e/etc/passwd"])
def test_no_file_outside_the_listed_images(client, path):
    r = client.get("/file", params={"path": path})
    assert r.status_code == 404
    assert b"csrf_secret" not in r.content and b"root:" not in r.content


def test_listed_images_and_masks_are_served(client):
    for rel in ("images/s0/base.png", "images/s0/foil_00.png", "masks/s0/foil_00.png"):
        r = client.get("/file", params={"path": rel})
        assert r.status_code == 200 and r.content[:4] == b"\x89PNG"


def test_foreign_host_header_is_refused(client):
    r = client.get("/api/summary", headers={"Host": "attacker.example"})
    assert r.status_code == 400


def test_security_headers(client):
    r = client.get("/")
    assert "script-src 'self'" in r.headers["content-security-policy"]
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["cache-control"] == "no-store"


def test_instance_view_shows_drift_outside_mask_and_word_diff(client):
    u = client.get("/api/unit", params={"phase": "instance", "key": "s2-f02"}).json()
    assert u["drift"]["outside_mask_pixels"] == 1
    assert [s["text"] for s in u["caption_foil"] if s["changed"]] == ["blue"]
    assert [s["text"] for s in u["caption_base"] if s["changed"]] == ["purple"]
    clean = client.get("/api/unit", params={"phase": "instance", "key": "s0-f00"}).json()
    assert clean["drift"]["outside_mask_pixels"] == 0
    assert clean["drift"]["changed_fraction"] == pytest.approx(clean["drift"]["mask_fraction"])
    for url in (u["drift_overlay"], u["mask_overlay"], u["mask_outline"]):
        r = client.get(url)
        assert r.status_code == 200 and r.headers["content-type"] == "image/png"


def test_verbosity_view_flags_a_reworded_phrase(client):
    u = client.get("/api/unit", params={"phase": "verbosity", "key": "s1-f02"}).json()
    medium = next(t for t in u["tiers"] if t["tier"] == "medium")
    assert (medium["base_kept"], medium["foil_kept"]) == (False, True)
    long = next(t for t in u["tiers"] if t["tier"] == "long")
    assert long["foil_kept"] is True


def test_queue_filters_by_edit_type_and_verdict(client):
    token = _token(client)
    client.post("/api/decide", headers={"X-CSRF-Token": token},
                json={"phase": "instance", "key": "s0-f00", "verdict": "accept"})
    rows = client.get("/api/queue", params={"phase": "instance", "verdict": "accept"}).json()
    assert [r["key"] for r in rows["units"]] == ["s0-f00"]
    rows = client.get("/api/queue", params={"phase": "instance",
                                            "edit_type": "modify_color"}).json()["units"]
    assert rows and all(r["edit_types"] == ["modify_color"] for r in rows)
    assert client.get("/api/queue", params={"phase": "nope"}).status_code == 400

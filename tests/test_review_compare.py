"""SugarCrepe App. E.2 as a review phase: two benchmarks' hard negatives side by side, the
paper's two questions, Table 9's counts and rates (planted pairs, rates computed by hand)."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from foilbench.review.compare import CompareSession, compare_report, summarize
from foilbench.review.compare_pairs import ComparePair, Negative, draw_pairs, negatives
from foilbench.review.units import ReviewError


def _bench(root, name, rows, kind="choice"):
    from PIL import Image

    from foilbench.data.benchmark import Manifest
    from foilbench.data.format import make_benchmark, write_benchmark

    for r in rows:
        path = root / r["image"]
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            Image.new("RGB", (8, 8), (120, 20, 20)).save(path)
    bench = make_benchmark(Manifest(name=name, kind=kind), pd.DataFrame(rows), root)
    write_benchmark(bench, root, copy_images=False)
    return bench


def _row(item_id, op, image, positive, *negs):
    return {"item_id": item_id, "operation": op, "image": image,
            "captions": [positive, *negs]}


@pytest.fixture()
def benches(tmp_path):
    a = _bench(tmp_path / "a", "aro-like", [
        _row("a_r0", "replace", "x.png", "A dog on a sofa.", "A cat on a sofa."),
        _row("a_r1", "replace", "coco/y.png", "Two men ride bikes", "Two men ride horses"),
        _row("a_r2", "replace", "z.png", "a red bus", "a blue bus"),
        _row("a_s0", "swap", "x.png", "the dog left of the cat", "the cat left of the dog"),
        _row("a_n0", "negate", "z.png", "a red bus", "there is no red bus"),
    ])
    b = _bench(tmp_path / "b", "sugar-like", [
        _row("b_r2", "replace", "w.png", "a green car", "a green truck"),
        _row("b_r1", "replace", "val/y.png", "men riding bicycles", "men riding scooters"),
        _row("b_r0", "replace", "q.png", "a  dog on a sofa", "a dog under a sofa"),
        _row("b_s0", "swap", "v.png", "a man and a horse", "a horse and a man"),
        _row("b_a0", "add", "z.png", "a red bus on a road", "a red bus and a cow on a road"),
        _row("b_x0", "shuffle", "u.png", "a cup", "cup a"),
    ])
    return a, b


def test_pairs_match_by_positive_then_image_then_sample_within_the_type(benches):
    """App. E.2: "Each example is organized to consist of (1) the original positive text, (2)
    its hard negative in ARO+CREPE, and (3) its hard negative in SugarCrepe. ... we compare
    Negate in ARO+CREPE to Add in SugarCrepe". Planted: replace has one shared positive
    (case, spacing, final stop aside), one shared image file name, one neither; negate meets
    add by image z.png; B's shuffle has no partner and is left out: 5 pairs."""
    a, b = benches
    pairs = draw_pairs(negatives(a, 0), negatives(b, 0), n=100, seed=0)
    got = {(p.a.item_id, p.b.item_id): (p.family, p.match) for p in pairs}
    assert got == {("a_r0", "b_r0"): ("replace", "positive"),
                   ("a_r1", "b_r1"): ("replace", "image"),
                   ("a_r2", "b_r2"): ("replace", "sampled"),
                   ("a_s0", "b_s0"): ("swap", "sampled"),
                   ("a_n0", "b_a0"): ("add", "image")}
    # --n 2: per type the closest matches come first (positive, then image)
    two = draw_pairs(negatives(a, 0), negatives(b, 0), n=2, seed=0)
    assert sorted(p.match for p in two if p.family == "replace") == ["image", "positive"]
    assert all(p.left in ("a", "b") for p in pairs)


def test_one_negative_per_item_chosen_with_the_seed_by_item():
    """An ARO-Order-like item ranks four negatives; the page shows one, keyed by item id."""
    class _B:  # the two attributes negatives() reads, on a tiny table
        def __init__(self, rows):
            import foilbench.kinds as kinds

            self.items = pd.DataFrame(rows)
            self.item_kind = kinds.KINDS["choice"]
            self.name, self.kind = "t", "choice"

    rows = [{"item_id": f"i{k}", "image": "x.png", "captions": ["p", "n1", "n2", "n3", "n4"]}
            for k in range(20)]
    first = negatives(_B(rows), 3)
    assert {x.negative for x in first} <= {"n1", "n2", "n3", "n4"}
    assert len({x.negative for x in first}) > 1  # not always the first one
    assert [x.negative for x in negatives(_B(rows[5:]), 3)] == \
        [x.negative for x in first[5:]]  # independent of the other items


def _pair(i, left="a"):
    return ComparePair(f"swap/{i}", "swap", "positive", Negative(f"a{i}", "swap", "", "p", "na"),
                       Negative(f"b{i}", "swap", "", "p", "nb"), left)


def test_rates_and_net_by_hand_with_ties_and_pending_apart():
    """Table 9: "the counts (out of 100 sampled examples) that the human user considers better
    or tie"; text: "SugarCrepe has 68% more sensical and 46% more fluent hard negatives than
    ARO+CREPE on Swap". Planted: 104 pairs, 4 pending; commonsense A 3 / tie 26 / B 71,
    grammar A 10 / tie 34 / B 56. The readings differ: B's better rate is 71% (56%), the net
    (B - A) / decided is 68 points (46), which is what we print as "net"."""
    pairs = [_pair(i) for i in range(104)]
    cs = ["a"] * 3 + ["tie"] * 26 + ["b"] * 71
    gr = ["a"] * 10 + ["tie"] * 34 + ["b"] * 56
    current = {f"swap/{i}": (cs[i], gr[i]) for i in range(100)}
    rep = summarize(pairs, current, {"a_name": "A", "b_name": "B", "n": "104", "seed": "0"})
    o = rep["overall"]
    assert (o["pairs"], o["decided"], o["pending"]) == (104, 100, 4)
    c, g = o["commonsense"], o["grammar"]
    assert c["counts"] == {"a": 3, "tie": 26, "b": 71}
    assert c["net"] == pytest.approx(0.68) and g["net"] == pytest.approx(0.46)
    assert c["b_better"]["rate"] == pytest.approx(0.71)
    assert c["tie"]["rate"] == pytest.approx(0.26) and g["a_better"]["rate"] == 0.10
    # Wilson by hand for 71/100: centre (p + z^2/2n)/(1 + z^2/n), half
    # z sqrt(p(1-p)/n + z^2/4n^2)/(1 + z^2/n) with z = 1.96
    z2, p, n = 1.96 ** 2, 0.71, 100
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = 1.96 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    assert (round(centre - half, 4), round(centre + half, 4)) == (0.6146, 0.7899)
    assert c["b_better"]["ci_low"] == pytest.approx(centre - half)
    assert c["b_better"]["ci_high"] == pytest.approx(centre + half)
    assert rep["by_family"]["swap"]["commonsense"]["counts"] == c["counts"]


def test_family_is_bounded_word_characters():
    """A family comes from the data (operation / edit_type) and reaches tables: bounded."""
    from types import SimpleNamespace as Row

    from foilbench.review.compare_pairs import FAMILY_LIMIT, family_of

    assert family_of(Row(operation=" Negate ")) == "add"  # App. E.2's pairing
    assert family_of(Row(operation=None, edit_type="replace_obj")) == "replace"
    assert family_of(Row(operation="", edit_type=None)) == "(none)"
    odd = family_of(Row(operation="sw|ap\x1b[31m" + "x" * 500))
    assert odd.startswith("sw-ap-31m") and len(odd) <= FAMILY_LIMIT


def test_nothing_decided_gives_no_rate():
    rep = summarize([_pair(0)], {}, {})
    assert rep["overall"]["commonsense"]["net"] is None
    assert rep["overall"]["grammar"]["b_better"]["rate"] is None


def test_decisions_persist_undo_and_resume_refuses_other_inputs(benches, tmp_path):
    a, b = benches
    out = tmp_path / "cmp"
    s = CompareSession(a, b, out, n=100, seed=0)
    ids = [p.pair_id for p in s.pairs]
    shown = s.by_id[ids[0]]
    s.decide_shown(ids[0], "left", "right")  # left is shown.left's benchmark
    s.decide(ids[1], "tie", "b")
    s.decide(ids[2], "a", "a")
    assert s.store.undo() == ids[2]
    with pytest.raises(ReviewError, match="unknown commonsense answer"):
        s.decide(ids[0], "left", "tie")  # the Python call names benchmarks: a / tie / b
    with pytest.raises(ReviewError, match="no pair"):
        s.decide("nope/0", "a", "a")
    s.close()
    again = CompareSession(a, b, out, n=100, seed=0)
    assert [p.pair_id for p in again.pairs] == ids
    other = "b" if shown.left == "a" else "a"
    assert again.store.current() == {ids[0]: (shown.left, other), ids[1]: ("tie", "b")}
    again.close()
    assert compare_report(out)["overall"]["decided"] == 2
    with pytest.raises(ReviewError, match="seed"):
        CompareSession(a, b, out, n=100, seed=1)
    with pytest.raises(ReviewError, match="no comparison was started"):
        compare_report(tmp_path / "empty")


def test_a_benchmark_without_negatives_is_refused(tmp_path, benches):
    from foilbench.data.benchmark import Manifest
    from foilbench.data.format import make_benchmark

    _, b = benches
    pairs = make_benchmark(Manifest(name="p", kind="pair"), pd.DataFrame(
        [{"item_id": "0", "image_base": "x.png", "image_foil": "x.png",
          "caption_base": "a b", "caption_foil": "b a"}]), tmp_path / "a", check_images=False)
    with pytest.raises(ReviewError, match="choice benchmark"):
        negatives(pairs, 0)
    with pytest.raises(ReviewError, match="share no type family"):
        draw_pairs([Negative("1", "swap", "", "p", "n")], negatives(b, 0)[-1:], 5, 0)


def test_app_over_http_hides_sides_and_guards_writes(benches, tmp_path):
    from foilbench.review.app import CSRF_HEADER
    from foilbench.review.compare_app import create_compare_app

    a, b = benches
    s = CompareSession(a, b, tmp_path / "cmp", n=100, seed=0)
    with TestClient(create_compare_app(s), base_url="http://127.0.0.1:8768") as c:
        page = c.get("/")
        token = page.text.split('name="csrf-token" content="')[1].split('"')[0]
        data = c.get("/api/pairs").json()
        text = json.dumps(data)
        assert "aro-like" not in text and "sugar-like" not in text and "a_r0" not in text
        first = data["pairs"][0]
        pair = s.by_id[first["pair_id"]]
        left = pair.a if pair.left == "a" else pair.b
        assert first["left"]["negative"] == left.negative
        body = {"pair": first["pair_id"], "commonsense": "right", "grammar": "tie"}
        assert c.post("/api/decide", json=body).status_code == 403  # no token
        assert c.post("/api/decide", json=body, headers={CSRF_HEADER: "x"}).status_code == 403
        bad = c.post("/api/decide", json={**body, "grammar": "b"},
                     headers={CSRF_HEADER: token})
        assert bad.status_code == 400 and "left, tie or right" in bad.json()["error"]
        big = c.post("/api/decide", content=b"{" + b" " * 70000 + b"}",
                     headers={CSRF_HEADER: token, "content-type": "application/json"})
        assert big.status_code == 413
        ok = c.post("/api/decide", json=body, headers={CSRF_HEADER: token})
        assert ok.status_code == 200 and ok.json()["progress"]["decided"] == 1
        right = "b" if pair.left == "a" else "a"
        assert s.store.current()[pair.pair_id] == (right, "tie")
        assert c.get("/api/pairs").json()["pairs"][0]["answers"] == \
            {"commonsense": "right", "grammar": "tie"}
        assert c.post("/api/undo", json={}, headers={CSRF_HEADER: token}).json()["undone"] \
            == pair.pair_id
        assert "Content-Security-Policy" in page.headers
    s.close()


def test_page_text_is_cut_and_controls_escaped(tmp_path):
    from foilbench.review.compare_app import pair_view
    from foilbench.review.compare_pairs import TEXT_LIMIT

    long = "<b>x</b>\x1b[31m" + "y" * 5000
    p = ComparePair("swap/0", "swap", "sampled", Negative("a", "swap", "", "p1", long),
                    Negative("b", "swap", "", "p2", "n"), "a")
    v = pair_view(p, None)
    assert len(v["left"]["negative"]) == TEXT_LIMIT and "\x1b" not in v["left"]["negative"]
    assert v["positive"] is None and v["left"]["positive"] == "p1"


def test_cli_report_export_and_errors(benches, tmp_path):
    from foilbench.cli.main import cli

    a, b = benches
    out = tmp_path / "cmp"
    args = ["review", "compare", str(a.root), str(b.root), "--out", str(out)]
    res = CliRunner().invoke(cli, [*args, "--report", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["overall"]["pairs"] == 5
    s = CompareSession(a, b, out)
    for p in s.pairs:
        s.decide(p.pair_id, "b", "tie")
    s.close()
    res = CliRunner().invoke(cli, [*args, "--export"])
    assert res.exit_code == 0, res.output
    assert "net" in res.output and "+100.0 pts" in res.output
    table = [line for line in res.output.splitlines() if not line.startswith("report: ")]
    assert max(len(line) for line in table) <= 80  # readable in a pipe (a path may be long)
    assert "A = aro-like\nB = sugar-like" in res.output
    md = (out / "compare_report.md").read_text()
    assert "| replace | commonsense | 3 | 0 | 0 | 0 | 3 |" in md
    assert pd.read_parquet(out / "compare_decisions.parquet").shape[0] == 5


def test_cli_exit_2_names_the_mismatch_and_the_benchmark(benches, tmp_path, monkeypatch,
                                                          capsys):
    from foilbench.cli.main import _main

    a, b = benches
    out = tmp_path / "cmp"
    CompareSession(a, b, out).close()
    for extra, said in ((["--seed", "2"], "seed: '0' then, '2' now"),
                        (["--n", "3"], "n: '100' then, '3' now")):
        monkeypatch.setattr("sys.argv", ["foilbench", "review", "compare", str(a.root),
                                         str(b.root), "--out", str(out), "--report", *extra])
        with pytest.raises(SystemExit) as exc:
            _main()
        assert exc.value.code == 2 and said in capsys.readouterr().err


def test_family_option_maps_types_and_is_part_of_what_resumes(benches, tmp_path):
    """--family FROM=TO counts a family as another in both benchmarks (ARO's Order shuffles
    as swaps, say; the paper does not say where they went). Planted: swap=shuffle puts a_s0,
    b_s0 and b_x0 in one family "shuffle" (A 1 item, B 2: one pair); no "swap" row is left."""
    from types import SimpleNamespace as Row

    from foilbench.cli.main import cli
    from foilbench.review.compare_pairs import family_of

    assert family_of(Row(operation="shuffle"), {"shuffle": "swap"}) == "swap"
    a, b = benches
    out = tmp_path / "cmp"
    args = ["review", "compare", str(a.root), str(b.root), "--out", str(out), "--report"]
    res = CliRunner().invoke(cli, [*args, "--json", "--family", "swap=shuffle"])
    assert res.exit_code == 0, res.output
    rep = json.loads(res.output)
    assert set(rep["by_family"]) == {"add", "replace", "shuffle"}
    assert rep["by_family"]["shuffle"]["pairs"] == 1
    with pytest.raises(ReviewError, match="aliases"):
        CompareSession(a, b, out)  # drawn with the mapping: refused without it
    res = CliRunner().invoke(cli, [*args, "--family", "swap"])
    assert res.exit_code == 2 and "FROM=TO" in res.output

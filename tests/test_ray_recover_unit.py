"""The driver's verdict on a lost worker (:mod:`foilbench.runner.ray.recover`), with a fake
``ray`` module: node gone -> the cell moves; node alive -> a retry; unknown -> wait until
Ray's node-death detection time has passed. No Ray needed."""

from __future__ import annotations

import time
from types import SimpleNamespace

from foilbench.runner.ray.recover import (
    MARGIN_S,
    Lost,
    detection_seconds,
    live_resources,
    verdict,
)


class FakeRay:
    """``wait``/``get`` over refs that are ("ok", value), ("err", None) or None (pending)."""

    def __init__(self, nodes=(), config=None):
        self._nodes = list(nodes)
        if config is not None:
            self._config = SimpleNamespace(**{k: (lambda v=v: v) for k, v in config.items()})

    def nodes(self):
        return self._nodes

    def wait(self, refs, timeout=0):
        ready = [r for r in refs if r is not None]
        return ready, [r for r in refs if r is None]

    def get(self, ref):
        kind, value = ref
        if kind == "err":
            raise RuntimeError("unschedulable: node dead")
        return value


def test_detection_time_is_period_times_threshold_plus_timeout():
    ray = FakeRay(config={"health_check_period_ms": 500, "health_check_failure_threshold": 4,
                          "health_check_timeout_ms": 1000})
    assert detection_seconds(ray) == 3.0  # (500 * 4 + 1000) / 1000
    assert detection_seconds(FakeRay()) == 25.0  # Ray's defaults: (3000 * 5 + 10000) / 1000


def test_live_resources_count_only_alive_nodes():
    ray = FakeRay(nodes=[{"NodeID": "a", "Alive": True, "Resources": {"CPU": 1.0, "GPU": 1.0}},
                         {"NodeID": "b", "Alive": False, "Resources": {"CPU": 4.0}},
                         {"NodeID": "c", "Alive": True, "Resources": {"CPU": 2.0}}])
    assert live_resources(ray) == {"CPU": 3.0, "GPU": 1.0}


def lost(node, probe=None, age=0.0):
    return Lost(model=None, work=None, node=node, since=time.perf_counter() - age, probe=probe)


def test_verdicts():
    ray = FakeRay()
    assert verdict(ray, lost("a"), alive={"b"}, detection=25) == "node"  # listed dead
    assert verdict(ray, lost("a", ("ok", True)), alive={"a"}, detection=25) == "process"
    assert verdict(ray, lost("a", ("err", None)), alive={"a"}, detection=25) == "node"
    assert verdict(ray, lost("a", None), alive={"a"}, detection=25) is None  # probe pending
    assert verdict(ray, lost(None), alive={"a"}, detection=25) is None
    old = 25 + MARGIN_S + 1  # past detection: Ray would have said if the node were dead
    assert verdict(ray, lost(None, age=old), alive={"a"}, detection=25) == "process"


def test_a_worker_lost_on_the_driver_s_own_node_died_alone_without_a_probe():
    ray = FakeRay()
    # no probe, no time waited: the driver's node lives while the driver runs on it
    assert verdict(ray, lost("home"), alive={"home", "b"}, detection=25, home="home") == \
        "process"
    # another node is not judged by that: it still waits for its probe or the detection time
    assert verdict(ray, lost("b"), alive={"home", "b"}, detection=25, home="home") is None
    assert verdict(ray, lost("b", ("err", None)), alive={"home", "b"}, detection=25,
                   home="home") == "node"
    # Ray's own word that the node is dead still comes first
    assert verdict(ray, lost("home"), alive={"b"}, detection=25, home="home") == "node"

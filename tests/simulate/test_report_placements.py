"""`simulate --show placements`: one row per live replica, gaps in indexes are not unplaced ones."""
from __future__ import annotations

from modelplane.simulate import report
from modelplane.simulate.world import World


def _world(replicas: int, indexes: list[int]) -> World:
    world = World()
    key = world.apply({"apiVersion": "modelplane.ai/v1alpha1", "kind": "ModelDeployment",
                       "metadata": {"name": "chat", "namespace": "ml-team"}, "spec": {"replicas": replicas}})
    world.xrs[key].obj["status"] = {"placements": [
        {"index": i, "name": f"chat-{i}-west", "cluster": "west",
         "members": [{"engine": "chat", "role": "Standalone", "pool": "h100"}]} for i in indexes]}
    return world


def _rows(world: World) -> list[str]:
    return [line for line in report.placements(world) if "ml-team/chat" in line]


def test_indexes_with_gaps_are_all_placed():
    rows = _rows(_world(3, [1, 3, 4]))
    assert len(rows) == 3
    assert not any("unplaced" in r for r in rows)
    assert [r.split()[1] for r in rows] == ["1", "3", "4"]


def test_missing_replicas_are_rows_of_their_own():
    rows = _rows(_world(3, [2]))
    assert len(rows) == 3
    assert sum("unplaced" in r for r in rows) == 2

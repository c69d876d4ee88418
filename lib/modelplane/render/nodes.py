"""YAML parse events to nodes with an explicit stack: any depth up to ``MAX_DEPTH``, never a crash.

PyYAML composes nodes by recursion, one Python frame per level or more, and
libyaml's composer (``CParser``) recurses in C: past a thousand levels the
first raises RecursionError, past a few hundred thousand the second
overflows the C stack and the process dies. ``crossplane render`` and
kubectl read YAML with go-yaml v2 and then encoding/json, which accept any
document up to 10,000 levels deep and refuse a deeper one (go-yaml: ``yaml:
line 10: exceeded max depth of 10000``; encoding/json: ``exceeded max
depth``; measured with crossplane v2.2.1: 10,000 levels load, 10,001 do not).

``EventComposer`` builds the same nodes as PyYAML's composer from the same
events, holding the open collections in a list, so the depth it reaches costs
memory, not stack. It refuses a collection deeper than ``MAX_DEPTH`` (the
root is level 1) with ``YAMLLimitError``, and an alias inside its own
anchor's value (it would make a cycle). Both PyYAML's parser and libyaml's
produce the events, so one composer serves both loaders. Path resolvers
(``add_path_resolver``), which Modelplane does not use, are not supported.
"""
from __future__ import annotations

import yaml
from yaml.composer import ComposerError
from yaml.events import (
    AliasEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
    StreamStartEvent,
)
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

__all__ = ["MAX_DEPTH", "EventComposer", "YAMLLimitError"]

MAX_DEPTH = 10_000  # go-yaml v2's max depth and encoding/json's maxNestingDepth


class YAMLLimitError(yaml.YAMLError):
    """YAML that would expand without bound (aliases), refers to itself, or nests too deeply."""


class EventComposer:
    """Replaces ``yaml.composer.Composer`` (and libyaml's) in a loader: put it first in the bases."""

    def check_node(self) -> bool:
        if self.check_event(StreamStartEvent):
            self.get_event()
        return not self.check_event(StreamEndEvent)

    def get_node(self):
        if not self.check_event(StreamEndEvent):
            return self.compose_document()
        return None

    def get_single_node(self):
        self.get_event()  # stream start
        document = None
        if not self.check_event(StreamEndEvent):
            document = self.compose_document()
        if not self.check_event(StreamEndEvent):
            event = self.get_event()
            raise ComposerError("expected a single document in the stream", document.start_mark,
                                "but found another document", event.start_mark)
        self.get_event()  # stream end
        return document

    def compose_document(self):
        self.get_event()  # document start
        node = self._compose({})
        self.get_event()  # document end
        return node

    def _compose(self, anchors: dict):
        """The next node and everything under it; ``anchors`` are this document's.

        One loop over events, dispatched on their class: a 50 MB file is millions of them."""
        get_event, resolve = self.get_event, self.resolve
        # The open collections, innermost last, each [node, its anchor, a mapping's key awaiting its value].
        stack: list[list] = []
        inside: set[str] = set()  # their anchors: an alias is checked in O(1) at any depth
        while True:
            event = get_event()
            cls = event.__class__
            if cls is ScalarEvent:
                tag = event.tag
                if tag is None or tag == "!":
                    tag = resolve(ScalarNode, event.value, event.implicit)
                node = ScalarNode(tag, event.value, event.start_mark, event.end_mark, style=event.style)
                if event.anchor is not None:
                    self._anchor(anchors, event, node)
            elif cls is MappingStartEvent or cls is SequenceStartEvent:
                node = self._collection(event, len(stack))
                stack.append([node, event.anchor, None])
                if event.anchor is not None:
                    self._anchor(anchors, event, node)
                    inside.add(event.anchor)
                continue
            elif cls is AliasEvent:
                node = anchors.get(event.anchor)
                if node is None:
                    raise ComposerError(None, None, f"found undefined alias {event.anchor!r}", event.start_mark)
                if event.anchor in inside:
                    raise ComposerError(None, None, f"anchor {event.anchor!r} value contains itself",
                                        event.start_mark)
            elif cls is MappingEndEvent or cls is SequenceEndEvent:
                node, anchor, _ = stack.pop()
                node.end_mark = event.end_mark
                inside.discard(anchor)
            else:
                raise ComposerError(None, None, f"unexpected {cls.__name__}", event.start_mark)
            if not stack:
                return node
            top = stack[-1]
            value = top[0].value
            if top[0].__class__ is SequenceNode:
                value.append(node)
            elif top[2] is None:
                top[2] = node
            else:
                value.append((top[2], node))
                top[2] = None

    @staticmethod
    def _anchor(anchors: dict, event, node) -> None:
        first = anchors.get(event.anchor)
        if first is not None:
            raise ComposerError(f"found duplicate anchor {event.anchor!r}; first occurrence", first.start_mark,
                                "second occurrence", event.start_mark)
        anchors[event.anchor] = node

    def _collection(self, event, depth: int):
        """An empty collection to fill; ``depth`` collections are open around it."""
        if depth + 1 > MAX_DEPTH:
            # go-yaml's words, then the fix.
            raise YAMLLimitError(f"yaml: line {event.start_mark.line + 1}: exceeded max depth of {MAX_DEPTH}: "
                                 f"nest at most {MAX_DEPTH:,} levels, as crossplane render and kubectl read")
        kind = SequenceNode if event.__class__ is SequenceStartEvent else MappingNode
        tag = event.tag
        if tag is None or tag == "!":
            tag = self.resolve(kind, None, event.implicit)
        return kind(tag, [], event.start_mark, None, flow_style=event.flow_style)

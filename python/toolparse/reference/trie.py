"""Pure-Python twin of the marker automaton (csrc/trie.c).

Aho-Corasick with leftmost-longest, non-overlapping streaming matches and holdback, as
specified in docs/primitives.md.  Same answers as the C matcher for every input and
every chunking; written for clarity, not speed.
"""

from __future__ import annotations

from collections import deque

from .._common import as_bytes, marker_bytes

Match = tuple[int, int, int]


class MarkerTrie:
    """An immutable automaton over a list of markers; make one matcher per stream."""

    def __init__(self, markers: list[str] | list[bytes] | list[str | bytes]) -> None:
        encoded = marker_bytes(markers)
        self._markers = tuple(encoded)
        # Node 0 is the root.  Per node: children, failure link, its string, the
        # longest marker ending there (id, length) and the longest live suffix length.
        children: list[dict[int, int]] = [{}]
        strings: list[bytes] = [b""]
        terminal: list[int] = [-1]
        for marker_id, marker in enumerate(encoded):
            node = 0
            for k, b in enumerate(marker):
                nxt = children[node].get(b)
                if nxt is None:
                    nxt = len(children)
                    children[node][b] = nxt
                    children.append({})
                    strings.append(marker[: k + 1])
                    terminal.append(-1)
                node = nxt
            terminal[node] = marker_id
        count = len(children)
        fail = [0] * count
        match_id = [-1] * count
        match_len = [0] * count
        live = [0] * count
        order = deque(children[0].values())
        while order:
            node = order.popleft()
            if terminal[node] >= 0:
                match_id[node], match_len[node] = terminal[node], len(strings[node])
            else:
                match_id[node], match_len[node] = match_id[fail[node]], match_len[fail[node]]
            live[node] = len(strings[node]) if children[node] else live[fail[node]]
            for b, child in children[node].items():
                fail[child] = self._goto(children, fail, fail[node], b) if node else 0
                order.append(child)
        self._children = children
        self._fail = fail
        self._strings = strings
        self._match_id = match_id
        self._match_len = match_len
        self._live = live

    @staticmethod
    def _goto(children: list[dict[int, int]], fail: list[int], node: int, b: int) -> int:
        while True:
            nxt = children[node].get(b)
            if nxt is not None:
                return nxt
            if node == 0:
                return 0
            node = fail[node]

    def transition(self, node: int, b: int) -> int:
        return self._goto(self._children, self._fail, node, b)

    @property
    def markers(self) -> tuple[bytes, ...]:
        return self._markers

    @property
    def max_length(self) -> int:
        return max(len(m) for m in self._markers)

    def __len__(self) -> int:
        return len(self._markers)

    def matcher(self) -> MarkerMatcher:
        return MarkerMatcher(self)

    def find_all(self, data: bytes | str) -> list[Match]:
        matcher = self.matcher()
        return matcher.feed(data) + matcher.finish()


class MarkerMatcher:
    """Streaming state over one input; see docs/primitives.md."""

    def __init__(self, trie: MarkerTrie) -> None:
        self._trie = trie
        self.reset()

    def reset(self) -> None:
        self._state = 0
        self._fed = 0
        self._scan = 0  # offset of the next byte the automaton reads
        self._cand: Match | None = None
        self._finished = False

    @property
    def position(self) -> int:
        return self._fed

    @property
    def holdback(self) -> int:
        if self._finished:
            return 0
        return self._fed - (self._scan - self._trie._live[self._state])

    @property
    def finished(self) -> bool:
        return self._finished

    def feed(self, data: bytes | str) -> list[Match]:
        if self._finished:
            raise ValueError("feed() after finish(); call reset() to match again")
        buf = as_bytes(data)
        out: list[Match] = []
        self._fed += len(buf)
        self._run(buf, out)
        return out

    def _run(self, buf: bytes, out: list[Match]) -> None:
        """Scans buf; a decided match restarts the scan at its end (rescanning)."""
        trie = self._trie
        pending = [buf]
        while pending:
            data = pending.pop()
            for k, b in enumerate(data):
                prev_string = trie._strings[self._state]
                self._state = trie.transition(self._state, b)
                self._scan += 1
                mid = trie._match_id[self._state]
                if mid >= 0:
                    start = self._scan - trie._match_len[self._state]
                    if self._cand is None or start <= self._cand[1]:
                        self._cand = (mid, start, self._scan)
                cand = self._cand
                if cand is None or self._scan - trie._live[self._state] <= cand[1]:
                    continue
                out.append(cand)
                self._cand = None
                self._state = 0
                # Rescan what followed the match: the tail of the previous state's
                # string, this byte, then the rest of data.
                behind = self._scan - cand[2]
                rescan = (prev_string + bytes([b]))[len(prev_string) + 1 - behind :]
                self._scan = cand[2]
                pending.append(data[k + 1 :])
                pending.append(rescan)
                break

    def finish(self) -> list[Match]:
        if self._finished:
            return []
        out: list[Match] = []
        trie = self._trie
        while self._cand is not None:
            cand = self._cand
            out.append(cand)
            self._cand = None
            string = trie._strings[self._state]
            behind = self._scan - cand[2]
            self._state = 0
            self._scan = cand[2]
            if behind:
                self._run(string[len(string) - behind :], out)
        self._finished = True
        self._state = 0
        return out

#!/usr/bin/env python3
"""Verify every round of the crash game's public hash chains, from public data only.

An independent check for players, operators and auditors: Python 3.11 or later,
standard library only, no account or session needed. It reads the public
fairness documents of a table server (or saved copies of them) and recomputes
everything it can.

Run:
  python3 verify_chains.py http://127.0.0.1:8080                 every chain
  python3 verify_chains.py http://127.0.0.1:8080 --game crash-classic
  python3 verify_chains.py http://127.0.0.1:8080 --chain crash-classic-c2
  python3 verify_chains.py --dir saved/                            saved copies

  BASE_URL is the table server's origin. The script sends GET requests with
  "Accept: application/json" to:
    {BASE}/fairness/chains?limit=100[&game_id=G][&before=ID]
        -> {"items": [Chain, ...], "next_before": "<chain id>" | absent}
    {BASE}/fairness/chains/{chain_id}            (only with --chain)
        -> Chain
    {BASE}/fairness/chains/{chain_id}/rounds?from=P&limit=1000
        -> {"items": [ChainRound, ...], "next_from": P | absent}
  and follows next_before and next_from until they are absent.

  --dir DIR reads the same documents from files instead:
    DIR/chains.json              {"items": [Chain, ...]} (a bare list is accepted too)
    DIR/rounds/{chain_id}.json   {"items": [ChainRound, ...]} (a bare list too)
  e.g. saved with
    curl -H 'Accept: application/json' "$BASE/fairness/chains" > DIR/chains.json
    curl -H 'Accept: application/json' "$BASE/fairness/chains/$ID/rounds" > DIR/rounds/$ID.json
  (one page each; a list longer than a page must be merged into one "items").

  It prints one line per chain (chain id, status, rounds verified, OK or
  FAILED), each failure under it (the round id and what differs; at most 50
  per chain unless --max-print N says otherwise, 0 for all), then a summary. Exit status: 0 when everything verified and at least one chain was
  checked; 1 when anything failed (bad or inconsistent data included) or
  nothing was there to check; 2 on a usage or network error.

Rules checked (the public fairness design, formula_version 1):
  hex:    a hash, a salt and a contribution value are 64 lowercase hex digits,
          the encoding of 32 bytes.
  chain:  chain_id = "<game_id>-c<number>". The chain serves the rounds with
          seq first_seq .. first_seq+length-1; round seq s is at position
          k = s - first_seq + 1 (1 <= k <= length) and its round_id is
          "<game_id>-<s>". SHA-256 of the 32 bytes of position k's hash is
          position k-1's hash; SHA-256 of position 1's hash is terminal_hash.
          A retired chain has last_seq (first_seq-1 <= last_seq <=
          first_seq+length-1) and serves no round after it. Two chains of one
          game never serve the same seq.
  rounds: the rounds list holds the ended rounds (status finished or void) in
          position order, so positions 1 .. n must all be listed: a missing
          position below a listed one is a gap and a failure; only the
          trailing end (the round in play, the rounds to come) may be absent.
  salt:   once fixed, with contributions v1..vn (every published value,
          duplicates kept, sorted ascending by bytes = by lowercase hex):
            salt = lowercase hex of SHA-256(terminal's 32 bytes || v1 || ... || vn)
          (each v as its 32 raw bytes). salt_source is "game_draw" when no
          operator contributed (then the game added one value, source
          "game") and "contributions" otherwise; at most one "game" and one
          "beacon" value, one value per operator; an operator value was
          received within [created_at, seeding_ends_at]; the salt was not
          fixed before seeding_ends_at.
  commit_reveal: a chain with contribution_rule "commit_reveal" (absent:
          "plain", the rule above) takes each operator's commitment =
          SHA-256(value's 32 bytes) within [created_at, seeding_ends_at] and
          the value within [seeding_ends_at, reveal_ends_at]; the salt is not
          fixed before reveal_ends_at. Each operator contribution publishes
          its commitment and withheld: a revealed value must hash to its
          commitment; a withheld one (withheld: true) must be the commitment
          itself, which stands in for the value in the salt (same salt rule).
          Before the salt is fixed the chain publishes the commitments only,
          never a value.
  seeding: a chain with status "seeding" has no salt, no published
          contributions and no round; an "active" or "retired" chain has a salt,
          except a chain retired during its seeding window (last_seq =
          first_seq-1): it served no round ("never played"), so it has none.
  crash:  r = top 52 bits of HMAC-SHA256(key = round hash's 32 bytes,
              msg = the salt's UTF-8 bytes, i.e. its 64 hex characters)
            = the first 13 hex digits of the HMAC;
          crash = min(max_multiplier,
                      max(100, floor(rtp_bp * 2^52 / (100 * (2^52 - r)))))
          in hundredths (153 = 1.53x), with the CHAIN's salt, rtp_bp and
          max_multiplier, which must be sane: 1 <= rtp_bp <= 10000,
          101 <= max_multiplier <= 2^63-1, formula_version = 1. A void
          round's crash_point is its committed one and is checked the same way.
  checkpoints: each {"position", "seq", "hash"} has a position that is a
          multiple of 1000 within 1..length, seq = first_seq + position - 1,
          and a hash equal to the listed round's hash at that position. (An
          ended round at a multiple of 1000 without a checkpoint is only a
          note: it may have ended after the chain document was read.)
  voids:  (table.v1 1.2.0) the chain's "voids" lists its void rounds; each
          must be the void round listed at its position (same round_id and
          hash) and its crash_point must follow from the formula. Tested are
          those without started_at (voided before take-off). For x = 200,
          1000, 10000 (2x, 10x, 100x): observed = tested voids with
          crash_point >= x; share = rtp_bp / (100 x) exactly (0 when x >
          max_multiplier); p_value = P[X >= observed], X ~ Binomial(tested,
          share), computed exactly with fractions, and the published one
          (4 significant digits) must be within 0.1 %; flagged = any p_value
          < 0.001 / 3. A figure that differs is a failure; a flag is printed
          as a WARNING line: the rounds still verify. A listed void round
          missing from "voids" is only a note (it may have ended after the
          chain was read), unless "voids" lists a later position: rounds
          end in position order, so it had ended and is a failure.
          (table.v1 1.5.0) "voids"."in_flight" tests the void rounds with
          started_at and voided_at: m = floor(100 * e^(0.00006 t)), t =
          voided_at - started_at in ms (at most an hour), must equal the
          round's multiplier_at_void; u = min(1, m / crash_point); S = sum
          of -ln u; p_value = P[Gamma(tested, 1) >= S] = e^-S * sum_{k <
          tested} S^k / k!, within 0.1 % of the published one; flagged =
          p_value < 0.001. Under honest voiding a round still flying at m
          crashes at or above c with chance m / c, so this p-value bounds
          the chance of so large an S; a flag is a WARNING line.

  beacon: (table.v1 1.3.0) a chain that names a round of a public randomness
          beacon publishes "beacon": {network, chain_hash, public_key,
          genesis_time (Unix s), period_s, scheme, round, round_time (Unix
          ms), and, once the salt is fixed, signature and randomness}.
          With t = reveal_ends_at (seeding_ends_at on a plain chain) +
          period_s*1000 in ms: round = 1 if t < genesis_time*1000, else
          floor((t - genesis_time*1000) / (period_s*1000)) + 2 (the first
          round emitted strictly after the window closed plus one period);
          round_time = (genesis_time + (round-1)*period_s)*1000;
          randomness = SHA-256(signature's bytes); the salt holds exactly one
          contribution of source "beacon", labelled "drand <network> round
          <round>", whose value is randomness; salt_fixed_at >= round_time.
          Before the salt is fixed, signature and randomness are absent: the
          chain waits for the round (a note). The BLS signature is checked
          only when the drand-verify Python package (module drand_verify) is
          installed; otherwise a note says it was not checked here. A
          "beacon" contribution without a "beacon" object is a chain from
          before: a fixed value from the installation's file (a note). A
          chain with neither names no beacon (a note).

Since every listed round is linked to its neighbours and position 1 to the
published terminal hash, every round's hash is proved to come from the chain
committed to before any contribution was made; the crash points then follow
from the formula alone.
"""

import argparse
import datetime
import hashlib
import hmac
import http.client
import json
import os
import re
import sys
import urllib.error
import urllib.parse
import urllib.request
from fractions import Fraction
from math import comb, exp, floor, lgamma, log

M = 2**52
INT64_MAX = 2**63 - 1
CHECKPOINT_EVERY = 1000
CHAIN_PAGE = 100
ROUND_PAGE = 1000
MAX_BODY = 64 << 20  # bytes read from one response at most
TIMEOUT = 30  # seconds per request
MAX_WALK = 5_000_000  # hashes walked across one gap at most

_HEX64 = re.compile(r"[0-9a-f]{64}")
_SAFE_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*")


# ---- the rules, as small functions -------------------------------------------------

def sha256(b):
    return hashlib.sha256(b).digest()


def is_hex64(v):
    return isinstance(v, str) and _HEX64.fullmatch(v) is not None


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def salt_from(terminal_hex, values_hex):
    """The salt fixed from the terminal hash and the contribution values (all 64 lowercase hex)."""
    data = bytes.fromhex(terminal_hex) + b"".join(bytes.fromhex(v) for v in sorted(values_hex))
    return hashlib.sha256(data).hexdigest()


def draw(round_hash, salt):
    """r: the first 13 hex digits (top 52 bits) of HMAC-SHA256(round hash bytes, salt UTF-8)."""
    mac = hmac.new(round_hash, salt.encode("utf-8"), hashlib.sha256).hexdigest()
    return int(mac[:13], 16)


def crash_from_r(r, rtp_bp, max_multiplier):
    return min(max_multiplier, max(100, (rtp_bp * M) // (100 * (M - r))))


def crash_point(round_hash, salt, rtp_bp, max_multiplier):
    return crash_from_r(draw(round_hash, salt), rtp_bp, max_multiplier)


def walk(h, steps):
    """SHA-256 applied steps times."""
    for _ in range(steps):
        h = sha256(h)
    return h


# ---- reading the documents ---------------------------------------------------------

class FetchError(Exception):
    """A network or usage problem: the check could not be done (exit 2)."""


class BadData(Exception):
    """A document is not what the design says: a failure (exit 1)."""


def _reject_constant(name):
    raise ValueError("%s is not JSON" % name)


def parse_json(raw, where):
    try:
        return json.loads(raw.decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise BadData("%s: not a JSON document (%s)" % (where, e)) from None


def page_items(doc, where):
    """The items of a listing page ({"items": [...]}; a bare list is read as the items)."""
    if isinstance(doc, list):
        return doc
    if not isinstance(doc, dict):
        raise BadData("%s: expected an object with \"items\", got %s" % (where, type(doc).__name__))
    items = doc.get("items")
    if not isinstance(items, list):
        raise BadData("%s: \"items\" is not a list" % where)
    return items


class HttpSource:
    def __init__(self, base):
        u = urllib.parse.urlsplit(base)
        if u.scheme not in ("http", "https") or not u.netloc:
            raise FetchError("BASE_URL must be an http:// or https:// origin, got %r" % base)
        self.base = base.rstrip("/")

    def get(self, path, params=None):
        url = self.base + path
        if params:
            url += "?" + urllib.parse.urlencode(params)
        req = urllib.request.Request(url, headers={"Accept": "application/json",
                                                   "User-Agent": "verify_chains.py"})
        try:
            with urllib.request.urlopen(req, timeout=TIMEOUT) as resp:
                raw = resp.read(MAX_BODY + 1)
        except urllib.error.HTTPError as e:
            raise FetchError("GET %s: HTTP %d %s" % (url, e.code, e.reason)) from None
        except (urllib.error.URLError, http.client.HTTPException, OSError, ValueError) as e:
            raise FetchError("GET %s: %s" % (url, getattr(e, "reason", e))) from None
        if len(raw) > MAX_BODY:
            raise BadData("GET %s: response larger than %d bytes" % (url, MAX_BODY))
        return parse_json(raw, "GET " + url)

    def chains(self, game, chain):
        if chain is not None:
            doc = self.get("/fairness/chains/" + urllib.parse.quote(chain, safe=""))
            return [doc]
        params = {"limit": str(CHAIN_PAGE)}
        if game is not None:
            params["game_id"] = game
        out, seen = [], set()
        while True:
            doc = self.get("/fairness/chains", params)
            items = page_items(doc, "chains listing")
            out.extend(items)
            nxt = doc.get("next_before") if isinstance(doc, dict) else None
            if nxt is None:
                return out
            if not isinstance(nxt, str) or nxt == "" or nxt in seen or not items:
                raise BadData("chains listing: next_before %r does not move on" % (nxt,))
            seen.add(nxt)
            params["before"] = nxt

    def rounds(self, chain_id):
        path = "/fairness/chains/%s/rounds" % urllib.parse.quote(chain_id, safe="")
        out, frm = [], 1
        while True:
            doc = self.get(path, {"from": str(frm), "limit": str(ROUND_PAGE)})
            items = page_items(doc, "rounds of %s" % chain_id)
            out.extend(items)
            nxt = doc.get("next_from") if isinstance(doc, dict) else None
            if nxt is None:
                return out
            if isinstance(nxt, str) and nxt.isdigit():
                nxt = int(nxt)
            if not is_int(nxt) or nxt <= frm or not items:
                raise BadData("rounds of %s: next_from %r does not move on from %d" % (chain_id, nxt, frm))
            frm = nxt


class DirSource:
    def __init__(self, path):
        if not os.path.isdir(path):
            raise FetchError("--dir %s: not a directory" % path)
        self.dir = path

    def _load(self, rel, missing_is_fetch_error):
        p = os.path.join(self.dir, *rel)
        try:
            with open(p, "rb") as f:
                raw = f.read(MAX_BODY + 1)
        except FileNotFoundError:
            if missing_is_fetch_error:
                raise FetchError("%s: no such file" % p) from None
            raise BadData("%s: no such file" % p) from None
        except OSError as e:
            raise FetchError("%s: %s" % (p, e)) from None
        if len(raw) > MAX_BODY:
            raise BadData("%s: larger than %d bytes" % (p, MAX_BODY))
        return parse_json(raw, p)

    def chains(self, game, chain):
        items = page_items(self._load(["chains.json"], True), "chains.json")
        if chain is not None:
            items = [c for c in items if not isinstance(c, dict) or c.get("chain_id") == chain]
        if game is not None:
            items = [c for c in items if not isinstance(c, dict) or c.get("game_id") == game]
        return items

    def rounds(self, chain_id):
        if _SAFE_ID.fullmatch(chain_id) is None:
            raise BadData("chain id %r cannot name a file" % chain_id)
        return page_items(self._load(["rounds", chain_id + ".json"], False), "rounds/%s.json" % chain_id)


# ---- verifying ---------------------------------------------------------------------

class ChainResult:
    def __init__(self, label):
        self.label = label
        self.status = "?"
        self.failures = []
        self.notes = []
        self.rounds_listed = 0
        self.rounds_failed = set()  # indexes in the rounds list
        self.served = None  # (game_id, number, first seq, last seq served) for cross-chain checks

    @property
    def rounds_verified(self):
        return self.rounds_listed - len(self.rounds_failed)

    @property
    def ok(self):
        return not self.failures


def _clean(s):
    """A string from the data, safe to print on one line."""
    return s if s.isprintable() and len(s) <= 200 else _show(s)


def _show(v):
    s = json.dumps(v) if not isinstance(v, str) else repr(v)
    return s if len(s) <= 80 else s[:77] + "..."


def verify_chain(doc, rounds, rounds_error=None):
    """Checks one Chain document and its listed rounds (None when they could not be read)."""
    label = _clean(doc["chain_id"]) if isinstance(doc, dict) and isinstance(doc.get("chain_id"), str) else "(chain without chain_id)"
    res = ChainResult(label)
    fail = res.failures.append
    if not isinstance(doc, dict):
        fail("chain: the document is not a JSON object")
        return res
    if rounds_error is not None:
        fail("rounds: " + rounds_error)

    # -- identity and settings
    cid, game, number = doc.get("chain_id"), doc.get("game_id"), doc.get("number")
    status = doc.get("status")
    res.status = _clean(status) if isinstance(status, str) else "?"
    if not isinstance(cid, str) or cid == "":
        fail("chain: chain_id missing or not a string")
    if not isinstance(game, str) or game == "":
        fail("chain: game_id missing or not a string: %s" % _show(game))
        game = None
    if not is_int(number) or number < 1:
        fail("chain: number is not a positive integer: %s" % _show(number))
        number = None
    if isinstance(cid, str) and game is not None and number is not None and cid != "%s-c%d" % (game, number):
        fail("chain: chain_id %r is not \"<game_id>-c<number>\" = %r" % (cid, "%s-c%d" % (game, number)))
    if status not in ("seeding", "active", "retired"):
        fail("chain: status %s is not seeding, active or retired" % _show(status))
    terminal = doc.get("terminal_hash")
    if not is_hex64(terminal):
        fail("chain: terminal_hash is not 64 lowercase hex digits: %s" % _show(terminal))
        terminal = None
    length, first_seq = doc.get("length"), doc.get("first_seq")
    if not is_int(length) or length < 1:
        fail("chain: length is not a positive integer: %s" % _show(length))
        length = None
    if not is_int(first_seq) or first_seq < 1:
        fail("chain: first_seq is not a positive integer: %s" % _show(first_seq))
        first_seq = None
    rtp, maxm, fv = doc.get("rtp_bp"), doc.get("max_multiplier"), doc.get("formula_version")
    if not is_int(rtp) or not 1 <= rtp <= 10000:
        fail("chain: rtp_bp %s is not within 1..10000" % _show(rtp))
        rtp = None
    if not is_int(maxm) or not 101 <= maxm <= INT64_MAX:
        fail("chain: max_multiplier %s is not within 101..2^63-1" % _show(maxm))
        maxm = None
    if not is_int(fv) or fv != 1:
        fail("chain: formula_version %s is not 1 (the only formula this script knows)" % _show(fv))
        fv = None
    last_seq = doc.get("last_seq")
    if status == "retired":
        if not is_int(last_seq):
            fail("chain: retired but last_seq is missing or not an integer: %s" % _show(last_seq))
            last_seq = None
        elif first_seq is not None and length is not None and not first_seq - 1 <= last_seq <= first_seq + length - 1:
            fail("chain: last_seq %d is outside first_seq-1 .. first_seq+length-1 = %d .. %d"
                 % (last_seq, first_seq - 1, first_seq + length - 1))
            last_seq = None
    else:
        last_seq = None
    created, ends = doc.get("created_at"), doc.get("seeding_ends_at")
    if not is_int(created) or not is_int(ends):
        created = ends = None
    elif ends < created:
        fail("chain: seeding_ends_at %d is before created_at %d" % (ends, created))

    # -- salt and contributions
    never_played = status == "retired" and last_seq is not None and first_seq is not None and last_seq == first_seq - 1
    salt = doc.get("salt")
    salt_present = salt is not None and salt != ""
    contributions = doc.get("contributions")
    if contributions is None:
        contributions = []
    if not isinstance(contributions, list):
        fail("chain: contributions is not a list")
        contributions = None
    rule = doc.get("contribution_rule", "plain")
    if rule not in ("plain", "commit_reveal"):
        fail("chain: contribution_rule %s is not plain or commit_reveal (the rules this script knows)" % _show(rule))
        rule = None
    reveal_ends = doc.get("reveal_ends_at")
    if rule == "commit_reveal":
        if not is_int(reveal_ends):
            fail("chain: commit_reveal but reveal_ends_at is missing or not an integer: %s" % _show(reveal_ends))
            reveal_ends = None
        elif ends is not None and reveal_ends < ends:
            fail("chain: reveal_ends_at %d is before seeding_ends_at %d" % (reveal_ends, ends))
    else:
        reveal_ends = None
    if not salt_present and rule == "commit_reveal" and isinstance(contributions, list):
        # Before the salt is fixed: the operators' commitments, never a value.
        for i, c in enumerate(contributions):
            where = "chain: contribution %d" % (i + 1)
            if not isinstance(c, dict) or c.get("source") != "operator" or not is_hex64(c.get("commitment")):
                fail(where + ": before the salt is fixed only operators' commitments are published")
            elif c.get("value") is not None:
                fail(where + ": a value is published before the salt is fixed (it must stay unreadable until every commitment is fixed and the reveal window is over)")
        contributions = []  # commitments alone: nothing more to check
    if status == "seeding":
        if salt_present:
            fail("chain: status seeding but a salt is published")
        if contributions and not salt_present:
            fail("chain: %d contributions published before the salt is fixed" % len(contributions))
    elif status == "retired" and not salt_present and never_played:
        # Retired during its seeding window (its settings changed before its
        # first round): it served no round, so it needs no salt. Any round
        # listed for it fails below (after last_seq).
        res.status = "retired (never played)"
        res.notes.append("chain: retired during its seeding window, before its first round: never played, no salt needed")
        if contributions:
            fail("chain: never played but %d contributions are published" % len(contributions))
    elif status in ("active", "retired") and not salt_present:
        fail("chain: status %s but no salt: no round may be played before the salt is fixed" % status)
    crash_salt = None
    if salt_present:
        if not isinstance(salt, str):
            fail("chain: salt is not a string: %s" % _show(salt))
        else:
            crash_salt = salt  # the formula uses the published salt's text, whatever it is
            if not is_hex64(salt):
                fail("chain: salt %s is not 64 lowercase hex digits" % _show(salt))
        fixed_at = doc.get("salt_fixed_at")
        if is_int(fixed_at) and ends is not None and fixed_at < ends:
            fail("chain: salt_fixed_at %d is before seeding_ends_at %d (the window was not over)" % (fixed_at, ends))
        if is_int(fixed_at) and reveal_ends is not None and fixed_at < reveal_ends:
            fail("chain: salt_fixed_at %d is before reveal_ends_at %d (the reveal window was not over)" % (fixed_at, reveal_ends))
        if doc.get("salt_source") == "legacy":
            # A chain recorded before salts were contributed: the server drew
            # its salt with the seed. There is no rule to recompute it from;
            # its rounds are still verified with it.
            res.notes.append("chain: legacy salt, drawn by the server before salts were contributed: not checkable")
            if contributions:
                fail("chain: a legacy chain publishes contributions")
        elif contributions is not None:
            values, ok_values = [], True
            operators, n_game, n_beacon = {}, 0, 0
            for i, c in enumerate(contributions):
                where = "chain: contribution %d" % (i + 1)
                if not isinstance(c, dict):
                    fail(where + " is not an object")
                    ok_values = False
                    continue
                src, v = c.get("source"), c.get("value")
                where += " (%s)" % (src if isinstance(src, str) else "?")
                if not is_hex64(v):
                    fail(where + ": value %s is not 64 lowercase hex digits" % _show(v))
                    ok_values = False
                else:
                    values.append(v)
                if src == "operator":
                    op = c.get("operator")
                    if not isinstance(op, str) or op == "":
                        fail(where + ": no operator name")
                    elif op in operators:
                        fail(where + ": operator %r contributed twice" % op)
                    else:
                        operators[op] = v
                    at = c.get("received_at")
                    if created is not None and is_int(at) and not created <= at <= ends:
                        fail(where + ": received_at %d is outside the seeding window %d .. %d" % (at, created, ends))
                    if rule == "commit_reveal":
                        cm, withheld = c.get("commitment"), c.get("withheld")
                        if not is_hex64(cm):
                            fail(where + ": commit_reveal but commitment %s is not 64 lowercase hex digits" % _show(cm))
                        elif withheld is True:
                            if v != cm:
                                fail(where + ": withheld, so its value must be its commitment %s, not %s" % (cm, _show(v)))
                            else:
                                res.notes.append("chain: operator %s withheld its value: its commitment stands in for it" % _show(op))
                        elif withheld is False:
                            if is_hex64(v) and hashlib.sha256(bytes.fromhex(v)).hexdigest() != cm:
                                fail(where + ": SHA-256 of the revealed value %s is not its commitment %s" % (v, cm))
                            rat = c.get("revealed_at")
                            if not is_int(rat):
                                fail(where + ": revealed but revealed_at is missing: %s" % _show(rat))
                            elif ends is not None and reveal_ends is not None and not ends <= rat < reveal_ends:
                                fail(where + ": revealed_at %d is outside the reveal window %d .. %d" % (rat, ends, reveal_ends))
                        else:
                            fail(where + ": commit_reveal but withheld is not true or false: %s" % _show(withheld))
                    elif c.get("commitment") is not None:
                        fail(where + ": a plain chain's contribution carries a commitment")
                elif src == "game":
                    n_game += 1
                elif src == "beacon":
                    n_beacon += 1
                else:
                    fail(where + ": source is not operator, beacon or game")
            if not contributions:
                fail("chain: salt fixed with no contribution (every salt has at least the game's own draw)")
            if n_game > 1:
                fail("chain: %d contributions from source game (at most one)" % n_game)
            if n_beacon > 1:
                fail("chain: %d contributions from source beacon (at most one)" % n_beacon)
            source = doc.get("salt_source")
            want_source = "contributions" if operators else "game_draw"
            if source != want_source:
                fail("chain: salt_source %s but %s" % (_show(source), "operators contributed: want \"contributions\""
                                                       if operators else "no operator contributed: want \"game_draw\""))
            if operators and n_game:
                fail("chain: a game value was added although operators contributed")
            if not operators and not n_game and contributions:
                fail("chain: no operator contributed and no game value was added")
            if ok_values and terminal is not None and isinstance(salt, str):
                want = salt_from(terminal, values)
                if want != salt:
                    fail("chain: salt differs: published %s, recomputed from the terminal and %d contributions %s"
                         % (salt, len(values), want))

    if not never_played and doc.get("salt_source") != "legacy":
        check_beacon(doc, (contributions or []) if salt_present else [], salt_present, rule,
                     reveal_ends if rule == "commit_reveal" else ends, res)

    # -- rounds
    if rounds is None:
        return res
    res.rounds_listed = len(rounds)
    if status == "seeding" and rounds:
        fail("chain: status seeding but %d rounds are listed" % len(rounds))
    can_crash = crash_salt is not None and rtp is not None and maxm is not None and fv is not None
    by_pos = {}  # position -> (index, round label, hash bytes)
    max_seq = None
    for i, rd in enumerate(rounds):
        def rfail(msg, _i=i):
            res.rounds_failed.add(_i)
            fail(msg)
        if not isinstance(rd, dict):
            rfail("round item %d: not a JSON object" % (i + 1))
            continue
        rid = rd.get("round_id")
        seq, pos, h, cp = rd.get("seq"), rd.get("position"), rd.get("hash"), rd.get("crash_point")
        pos_s = "position %s" % (pos if is_int(pos) else "?")
        who = "round %s (%s)" % (_clean(rid) if isinstance(rid, str) else "item %d" % (i + 1), pos_s)
        if not isinstance(rid, str) or rid == "":
            rfail(who + ": round_id missing or not a string")
        if not is_int(seq):
            rfail(who + ": seq is not an integer: %s" % _show(seq))
            seq = None
        if not is_int(pos):
            rfail(who + ": position is not an integer: %s" % _show(pos))
            pos = None
        if not is_hex64(h):
            rfail(who + ": hash is not 64 lowercase hex digits: %s" % _show(h))
            h = None
        if not is_int(cp):
            rfail(who + ": crash_point is not an integer: %s" % _show(cp))
            cp = None
        if rd.get("status") not in ("finished", "void"):
            rfail(who + ": status %s is not finished or void (only ended rounds are listed)" % _show(rd.get("status")))
        if seq is not None:
            max_seq = seq if max_seq is None else max(max_seq, seq)
            if isinstance(rid, str) and game is not None and rid != "%s-%d" % (game, seq):
                rfail(who + ": round_id is not \"<game_id>-<seq>\" = %r" % ("%s-%d" % (game, seq)))
            if first_seq is not None and pos is not None and pos != seq - first_seq + 1:
                rfail(who + ": position %d but seq %d - first_seq %d + 1 = %d" % (pos, seq, first_seq, seq - first_seq + 1))
            if last_seq is not None and seq > last_seq:
                rfail(who + ": seq %d is after the retired chain's last_seq %d" % (seq, last_seq))
        if pos is not None and length is not None and not 1 <= pos <= length:
            rfail(who + ": position %d is outside 1..length %d" % (pos, length))
            pos = None
        if h is not None:
            hb = bytes.fromhex(h)
            if can_crash and cp is not None:
                want = crash_point(hb, crash_salt, rtp, maxm)
                if want != cp:
                    rfail(who + ": crash_point %d, but the formula gives %d (hash %s, the chain's salt, rtp_bp %d, max_multiplier %d)"
                          % (cp, want, h, rtp, maxm))
            if pos is not None and pos >= 1:
                if pos in by_pos:
                    rfail(who + ": position %d listed twice" % pos)
                else:
                    by_pos[pos] = (i, who, hb)

    # links: position k's hash -> SHA-256 -> position k-1's hash (k = 1: the terminal)
    prev_pos, prev_hash = 0, bytes.fromhex(terminal) if terminal is not None else None
    for p in sorted(by_pos):
        i, who, hb = by_pos[p]
        if p - prev_pos > 1:
            missing = "%d" % (prev_pos + 1) if p - prev_pos == 2 else "%d..%d" % (prev_pos + 1, p - 1)
            res.rounds_failed.add(i)
            fail("%s: gap: position%s %s missing before it; only rounds after the last listed one may be missing"
                 % (who, "" if p - prev_pos == 2 else "s", missing))
        if prev_hash is not None and p - prev_pos > MAX_WALK:
            fail("%s: not linked to position %d: %d hashes apart, more than this script walks"
                 % (who, prev_pos, p - prev_pos))
        elif prev_hash is not None:
            got = walk(hb, p - prev_pos)
            if got != prev_hash:
                below = "the terminal hash" if prev_pos == 0 else "position %d's hash" % prev_pos
                times = "" if p - prev_pos == 1 else " applied %d times" % (p - prev_pos)
                res.rounds_failed.add(i)
                fail("%s: chain link broken: SHA-256%s of its hash is %s, but %s is %s"
                     % (who, times, got.hex(), below, prev_hash.hex()))
        prev_pos, prev_hash = p, hb

    # checkpoints
    cps = doc.get("checkpoints")
    if cps is None:
        cps = []
    if not isinstance(cps, list):
        fail("chain: checkpoints is not a list")
        cps = []
    cp_pos = set()
    for j, c in enumerate(cps):
        where = "checkpoint %d" % (j + 1)
        if not isinstance(c, dict):
            fail("chain: %s is not an object" % where)
            continue
        p, s, h = c.get("position"), c.get("seq"), c.get("hash")
        if not is_int(p):
            fail("chain: %s: position is not an integer: %s" % (where, _show(p)))
            continue
        where = "checkpoint at position %d" % p
        if p in cp_pos:
            fail("chain: %s listed twice" % where)
            continue
        cp_pos.add(p)
        if p < 1 or p % CHECKPOINT_EVERY != 0 or (length is not None and p > length):
            fail("chain: %s: not a multiple of %d within 1..length" % (where, CHECKPOINT_EVERY))
        if first_seq is not None and s != first_seq + p - 1:
            fail("chain: %s: seq %s, want first_seq + position - 1 = %d" % (where, _show(s), first_seq + p - 1))
        if not is_hex64(h):
            fail("chain: %s: hash is not 64 lowercase hex digits: %s" % (where, _show(h)))
            continue
        if p not in by_pos:
            fail("chain: %s: no listed (ended) round at that position to compare with" % where)
        elif by_pos[p][2].hex() != h:
            i, who, hb = by_pos[p]
            res.rounds_failed.add(i)
            fail("chain: %s: hash %s differs from the listed %s's hash %s" % (where, h, who, hb.hex()))
    for p in sorted(by_pos):
        if p % CHECKPOINT_EVERY == 0 and p not in cp_pos:
            res.notes.append("note: no checkpoint for the ended round at position %d (it may have ended after the chain was read)" % p)

    check_voids(doc, rounds, rtp, maxm, can_crash, crash_salt, res)

    if game is not None and first_seq is not None:
        end = last_seq if last_seq is not None else max_seq
        if end is not None and end >= first_seq:
            res.served = (game, number, first_seq, end)
    return res


BEACON_SCHEME = "bls-unchained-g1-rfc9380"
_HEX = re.compile(r"[0-9a-f]*")
NO_BEACON = ("note: this chain names no beacon: its salt rests on the operators' commitments "
             "(and the game's draw when none committed)")


def beacon_round(window_end_ms, genesis_s, period_s):
    """The round a chain names: the first round emitted strictly after the window's end plus one period."""
    t = window_end_ms + period_s * 1000
    if t < genesis_s * 1000:
        return 1
    return (t - genesis_s * 1000) // (period_s * 1000) + 2


def beacon_round_time(round_, genesis_s, period_s):
    """Unix ms at which the network emits round_."""
    return (genesis_s + (round_ - 1) * period_s) * 1000


def utc(ms):
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _hex_of(v, digits):
    return isinstance(v, str) and len(v) == digits and _HEX.fullmatch(v) is not None


def bls_check(round_, signature, public_key):
    """Checks the BLS signature with drand's own tool when installed: (True, text) verified,
    (False, text) refused, (None, text) not checked here."""
    try:
        import drand_verify  # the drand-verify package (pip install drand-verify)
    except ImportError:
        return None, ("note: the beacon's BLS signature was NOT checked here (the drand-verify Python package "
                      "is not installed); the game checked it before using the value, and you can check it "
                      "yourself as docs/fairness.md says (\"Checking the beacon value yourself\")")
    try:
        got = drand_verify.verify_quicknet(round_, signature, public_key)
    except ValueError as e:
        return False, "beacon: the BLS signature of round %d does not verify under the chain's public key (drand_verify: %s)" % (round_, e)
    return True, "chain: the beacon's BLS signature of round %d verifies (drand_verify), randomness %s" % (round_, got)


def check_beacon(doc, contributions, salt_present, rule, window_end, res):
    """The chain's beacon (table.v1 1.3.0): its round, its time, its value in the salt."""
    fail = res.failures.append
    beacon = doc.get("beacon")
    listed = [c for c in contributions if isinstance(c, dict) and c.get("source") == "beacon"]
    if beacon is None:
        if listed:
            label = listed[0].get("label")
            res.notes.append("note: this chain's beacon value (%s) was a configured value from the installation's "
                             "file, not a future round: it was known before the chain existed and closes nothing"
                             % (_show(label) if label is not None else "no label"))
        else:
            res.notes.append(NO_BEACON)
        return
    if not isinstance(beacon, dict):
        fail("beacon: not an object: %s" % _show(beacon))
        return
    net, rnd, rtime = beacon.get("network"), beacon.get("round"), beacon.get("round_time")
    genesis, period = beacon.get("genesis_time"), beacon.get("period_s")
    bad = False
    if not isinstance(net, str) or net == "":
        fail("beacon: network is not a name: %s" % _show(net))
        bad = True
    if not is_hex64(beacon.get("chain_hash")):
        fail("beacon: chain_hash is not 64 lowercase hex digits: %s" % _show(beacon.get("chain_hash")))
    if not _hex_of(beacon.get("public_key"), 192):
        fail("beacon: public_key is not 192 lowercase hex digits (a compressed G2 point): %s" % _show(beacon.get("public_key")))
    if beacon.get("scheme") != BEACON_SCHEME:
        fail("beacon: scheme %s is not %s (the only scheme this script knows)" % (_show(beacon.get("scheme")), BEACON_SCHEME))
    if not is_int(genesis) or genesis < 0:
        fail("beacon: genesis_time is not a Unix time in seconds: %s" % _show(genesis))
        bad = True
    if not is_int(period) or period < 1:
        fail("beacon: period_s is not a positive integer: %s" % _show(period))
        bad = True
    if not is_int(rnd) or rnd < 1:
        fail("beacon: round is not a positive integer: %s" % _show(rnd))
        bad = True
    if not is_int(rtime):
        fail("beacon: round_time is not an integer: %s" % _show(rtime))
        bad = True
    if bad:
        return
    if window_end is None:
        fail("beacon: the chain gives no window end to name the round from")
    else:
        want = beacon_round(window_end, genesis, period)
        if rnd != want:
            fail("beacon: round %d, but the first round emitted strictly after %s_ends_at %d + one period (%d s) is %d"
                 % (rnd, "reveal" if rule == "commit_reveal" else "seeding", window_end, period, want))
    want_time = beacon_round_time(rnd, genesis, period)
    if rtime != want_time:
        fail("beacon: round_time %d, but round %d is emitted at (genesis_time + (round-1)*period_s)*1000 = %d"
             % (rtime, rnd, want_time))
    sig, rand = beacon.get("signature"), beacon.get("randomness")
    if not salt_present:
        if sig is None and rand is None:
            res.notes.append("chain: waiting for the beacon's round %d (drand %s), due at %s; the salt is fixed once it is out"
                             % (rnd, _clean(net), utc(rtime)))
            return
    if not _hex_of(sig, 96):
        fail("beacon: signature is not 96 lowercase hex digits (a compressed G1 point): %s" % _show(sig))
        sig = None
    if not is_hex64(rand):
        fail("beacon: randomness is not 64 lowercase hex digits: %s" % _show(rand))
        rand = None
    if sig is not None and rand is not None and hashlib.sha256(bytes.fromhex(sig)).hexdigest() != rand:
        fail("beacon: randomness %s is not SHA-256 of the signature's bytes (%s)"
             % (rand, hashlib.sha256(bytes.fromhex(sig)).hexdigest()))
    if not salt_present:
        return
    label = "drand %s round %d" % (net, rnd)
    if len(listed) != 1:
        fail("beacon: the chain names round %d, but the salt has %d contributions of source beacon (want exactly one)"
             % (rnd, len(listed)))
    else:
        c = listed[0]
        if rand is not None and c.get("value") != rand:
            fail("beacon: the beacon contribution's value %s is not the round's randomness %s" % (_show(c.get("value")), rand))
        if c.get("label") != label:
            fail("beacon: the beacon contribution's label %s does not name the round: want %r" % (_show(c.get("label")), label))
    fixed_at = doc.get("salt_fixed_at")
    if not is_int(fixed_at):
        fail("beacon: salt_fixed_at is missing, so nothing shows the salt waited for round %d" % rnd)
    elif fixed_at < rtime:
        fail("beacon: salt_fixed_at %d is before round %d's time %d: the salt was fixed before the round existed"
             % (fixed_at, rnd, rtime))
    if sig is not None:
        ok, text = bls_check(rnd, sig, beacon.get("public_key"))
        if ok is False:
            fail(text)
        else:
            res.notes.append(text)
    res.notes.append("chain: beacon drand %s round %d, due at %s: its randomness is SHA-256 of its signature and is in the salt"
                     % (_clean(net), rnd, utc(rtime)))


VOID_THRESHOLDS = (200, 1000, 10000)  # 2x, 10x, 100x, in hundredths
VOID_FLAG_LEVEL = Fraction(1, 1000)  # flagged when any p-value < 0.001 / 3


def binomial_tail(n, k, p):
    """P[X >= k] for X ~ Binomial(n, p), p a Fraction: exact."""
    if k <= 0:
        return Fraction(1)
    if k > n or p == 0:
        return Fraction(0)
    q = 1 - p
    return sum(comb(n, i) * p**i * q**(n - i) for i in range(k, n + 1))


IN_FLIGHT_FLAG_LEVEL = 0.001  # flagged when the in-flight p-value < 0.001
MAX_INT64 = 2**63 - 1


def multiplier_at(ms):
    """The game's curve after ms whole milliseconds of flight, in hundredths:
    floor(100 * e^(0.00006 ms)) in IEEE double precision, 100 at or below 0,
    saturating at 2^63-1; an hour or more is read as an hour."""
    if ms <= 0:
        return 100
    m = 100 * exp(0.00006 * min(ms, 3_600_000))
    return MAX_INT64 if m >= MAX_INT64 else int(floor(m))


def gamma_tail(n, s):
    """P[G >= s] for G ~ Gamma(n, 1), n whole: e^-s * sum_{k<n} s^k / k!,
    summed in log space; 1 when n is 0 or s <= 0."""
    if n <= 0 or s <= 0:
        return 1.0
    terms = [-s + k * log(s) - lgamma(k + 1) for k in range(n)]
    top = max(terms)
    return min(1.0, exp(top + log(sum(exp(t - top) for t in terms))))


def check_in_flight(voids, flying, res):
    """The in-flight test ("voids"."in_flight", table.v1 1.5.0), recomputed from
    the void rounds that took off: (multiplier at voided_at, crash point)."""
    fail = res.failures.append
    f = voids.get("in_flight")
    if f is None:
        res.notes.append("note: the chain does not test its voids in flight (a server older than table.v1 1.5.0)")
        return
    if not isinstance(f, dict):
        fail("voids: in_flight is not an object")
        return
    s = sum(log(c / m) for m, c in flying if c > m > 0)
    p = gamma_tail(len(flying), s)
    flagged = p < IN_FLIGHT_FLAG_LEVEL
    if f.get("tested") != len(flying):
        fail("voids: in_flight tested %s, but %d void rounds took off and record voided_at" % (_show(f.get("tested")), len(flying)))
    try:
        published_p = float(f.get("p_value"))
    except (TypeError, ValueError):
        published_p = None
    if published_p is None or abs(published_p - p) > p / 1000:
        fail("voids: in_flight p_value %s, but P[Gamma(%d, 1) >= %.6g] = %.6g" % (_show(f.get("p_value")), len(flying), s, p))
    if f.get("flagged") is not flagged:
        fail("voids: in_flight flagged %s, but the p-value says %s" % (_show(f.get("flagged")), "true" if flagged else "false"))
    if flagged:
        res.notes.insert(0, "WARNING: the rounds voided in flight lean toward high crash points beyond chance "
                            "(p-value %.4g below 0.001, %d rounds tested, S = %.4g). The rounds still verify; "
                            "ask the operator why these rounds were voided." % (p, len(flying), s))


def check_voids(doc, rounds, rtp, maxm, can_crash, crash_salt, res):
    """The void rounds and their test ("voids"): recomputed from the published
    void rounds; a figure that differs is a failure, a raised flag a warning."""
    fail = res.failures.append
    voids = doc.get("voids")
    if voids is None:
        if doc.get("salt") is not None:
            res.notes.append("note: the chain publishes no void statistics (a server older than table.v1 1.2.0)")
        return
    if not isinstance(voids, dict) or not isinstance(voids.get("rounds"), list) or not isinstance(voids.get("tests"), list):
        fail("voids: not an object with rounds and tests lists")
        return
    listed = {}
    for rd in rounds or []:
        if isinstance(rd, dict) and is_int(rd.get("position")):
            listed[rd["position"]] = rd
    tested, flying, seen = [], [], set()
    for j, v in enumerate(voids["rounds"]):
        pos = v.get("position") if isinstance(v, dict) else None
        who = "voids: round %s" % (_show(v.get("round_id")) if isinstance(v, dict) else "item %d" % (j + 1))
        if not is_int(pos) or not is_hex64(v.get("hash")) or not is_int(v.get("crash_point")):
            fail(who + ": position, hash or crash_point missing or malformed")
            continue
        if pos in seen:
            fail(who + ": position %d listed twice" % pos)
            continue
        seen.add(pos)
        if can_crash:
            want = crash_point(bytes.fromhex(v["hash"]), crash_salt, rtp, maxm)
            if want != v["crash_point"]:
                fail(who + ": crash_point %d, but the formula gives %d" % (v["crash_point"], want))
        rd = listed.get(pos)
        if rounds is not None and (rd is None or rd.get("status") != "void" or rd.get("hash") != v["hash"]
                                   or rd.get("round_id") != v.get("round_id")):
            fail(who + ": not the void round listed at position %d" % pos)
        if v.get("started_at") is None:
            tested.append(v["crash_point"])
        elif v.get("voided_at") is not None:
            if not is_int(v["started_at"]) or not is_int(v["voided_at"]):
                fail(who + ": started_at or voided_at malformed")
                continue
            m = multiplier_at(v["voided_at"] - v["started_at"])
            if v.get("multiplier_at_void") not in (None, m):
                fail(who + ": multiplier_at_void %s, but the curve at voided_at - started_at = %d ms gives %d"
                     % (_show(v.get("multiplier_at_void")), v["voided_at"] - v["started_at"], m))
            flying.append((m, v["crash_point"]))
    last = max(seen) if seen else 0  # rounds end in position order: every void below it had ended when the chain was read
    for pos, rd in sorted(listed.items()):
        if rd.get("status") != "void" or pos in seen:
            continue
        if pos < last:
            fail("voids: the void round listed at position %d is missing from the chain's voids, which lists position %d"
                 % (pos, last))
        else:
            res.notes.append("note: the void round at position %d is not in the chain's voids (it may have ended after the chain was read)" % pos)
    if voids.get("tested") != len(tested):
        fail("voids: tested %s, but %d of the void rounds never took off" % (_show(voids.get("tested")), len(tested)))
    check_in_flight(voids, flying, res)
    if rtp is None or maxm is None:
        return
    tests = voids["tests"]
    if len(tests) != len(VOID_THRESHOLDS):
        fail("voids: %d tests, want %d (2x, 10x, 100x)" % (len(tests), len(VOID_THRESHOLDS)))
        return
    flagged, lines = False, []
    for x, t in zip(VOID_THRESHOLDS, tests):
        who = "voids: test at %d.%02dx" % (x // 100, x % 100)
        if not isinstance(t, dict) or t.get("at_least") != x:
            fail(who + ": at_least %s, want %d" % (_show(t.get("at_least") if isinstance(t, dict) else t), x))
            continue
        observed = sum(1 for c in tested if c >= x)
        share = Fraction(rtp, 100 * x) if x <= maxm else Fraction(0)
        p = binomial_tail(len(tested), observed, share)
        flagged = flagged or p < VOID_FLAG_LEVEL / len(VOID_THRESHOLDS)
        lines.append("%d of %d at or above %d.%02dx, expected share %s, p-value %.4g"
                     % (observed, len(tested), x // 100, x % 100, share_text(share), float(p)))
        if t.get("observed") != observed:
            fail(who + ": observed %s, but %d of the voids tested reach it" % (_show(t.get("observed")), observed))
        try:
            published_share = Fraction(t.get("share"))
        except (TypeError, ValueError):
            published_share = None
        if published_share != share:
            fail(who + ": share %s, but RTP / x = %s" % (_show(t.get("share")), share_text(share)))
        try:
            published_p = float(t.get("p_value"))
        except (TypeError, ValueError):
            published_p = None
        if published_p is None or abs(published_p - float(p)) > float(p) / 1000:
            fail(who + ": p_value %s, but P[X >= %d] = %.6g" % (_show(t.get("p_value")), observed, float(p)))
    if voids.get("flagged") is not flagged:
        fail("voids: flagged %s, but the p-values say %s" % (_show(voids.get("flagged")), "true" if flagged else "false"))
    if flagged:
        res.notes.insert(0, "WARNING: the void rounds that never took off lean toward high crash points beyond chance "
                            "(a p-value below 0.001 / 3): " + "; ".join(lines)
                            + ". The rounds still verify; ask the operator why these rounds were voided.")


def share_text(f):
    """A Fraction whose denominator divides a power of ten, as an exact decimal."""
    if f == 0:
        return "0"
    digits = 0
    while (f * 10**digits).denominator != 1:
        digits += 1
    s = "%d.%0*d" % (f.numerator * 10**digits // f.denominator // 10**digits, digits,
                     f.numerator * 10**digits // f.denominator % 10**digits) if digits else str(f.numerator)
    return s


def cross_chain_failures(results):
    """Two chains of one game never serve the same seq."""
    out = []
    by_game = {}
    for r in results:
        if r.served is not None:
            by_game.setdefault(r.served[0], []).append(r)
    for game, rs in sorted(by_game.items()):
        rs.sort(key=lambda r: r.served[2])
        for a, b in zip(rs, rs[1:]):
            if b.served[2] <= a.served[3]:
                out.append("game %s: chains %s (seq %d..%d) and %s (seq %d..%d) serve the same rounds"
                           % (game, a.label, a.served[2], a.served[3], b.label, b.served[2], b.served[3]))
    return out


# ---- the command -------------------------------------------------------------------

def parse_args(argv):
    ap = argparse.ArgumentParser(
        prog="verify_chains.py",
        description="Verify every round of the crash game's public hash chains (see the docstring for the rules).")
    ap.add_argument("base_url", nargs="?", metavar="BASE_URL", help="the table server's origin, e.g. http://127.0.0.1:8080")
    ap.add_argument("--dir", metavar="DIR", help="read saved documents from DIR (chains.json, rounds/<chain_id>.json) instead")
    ap.add_argument("--game", metavar="GAME_ID", help="only the chains of this game")
    ap.add_argument("--chain", metavar="CHAIN_ID", help="only this chain")
    ap.add_argument("--max-print", type=int, default=50, metavar="N",
                    help="print at most N failures per chain (default 50; 0 prints all)")
    args = ap.parse_args(argv)
    if (args.base_url is None) == (args.dir is None):
        ap.error("give either BASE_URL or --dir DIR")
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        return run(args)
    except FetchError as e:
        print("error: %s" % e, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 2
    except Exception as e:  # a case nobody foresaw: still no traceback, and not a pass
        print("FAIL unexpected: %s: %s" % (type(e).__name__, e))
        print("RESULT: FAILED")
        return 1


def run(args):
    source = DirSource(args.dir) if args.dir is not None else HttpSource(args.base_url)
    global_failures = []
    try:
        chains = source.chains(args.game, args.chain)
    except BadData as e:
        global_failures.append("listing: %s" % e)
        chains = []

    results, seen = [], set()
    for n, doc in enumerate(chains):
        cid = doc.get("chain_id") if isinstance(doc, dict) else None
        if args.chain is not None and isinstance(doc, dict) and cid != args.chain:
            global_failures.append("listing: asked for chain %s, got %s" % (args.chain, _show(cid)))
            continue
        if isinstance(doc, dict) and args.game is not None and doc.get("game_id") != args.game:
            if args.chain is None:
                global_failures.append("listing: chain %s of game %s was listed for game_id=%s"
                                       % (_show(cid), _show(doc.get("game_id")), args.game))
            continue
        if isinstance(cid, str):
            if cid in seen:
                global_failures.append("listing: chain %s is listed twice" % _show(cid))
                continue
            seen.add(cid)
        rounds, rounds_error = None, None
        if isinstance(cid, str) and cid != "":
            try:
                rounds = source.rounds(cid)
            except BadData as e:
                rounds_error = str(e)
        try:
            res = verify_chain(doc, rounds, rounds_error)
        except Exception as e:  # never a traceback on data nobody foresaw: a failure
            res = ChainResult(_clean(cid) if isinstance(cid, str) else "(chain item %d)" % (n + 1))
            res.failures.append("chain: unexpected data: %s: %s" % (type(e).__name__, e))
        results.append(res)
        print("%s  %s  rounds verified: %d of %d listed  %s"
              % (res.label, res.status, res.rounds_verified, res.rounds_listed,
                 "OK" if res.ok else "FAILED (%d failures)" % len(res.failures)))
        shown = res.failures if args.max_print <= 0 else res.failures[:args.max_print]
        for f in shown:
            print("    FAIL " + f)
        if len(shown) < len(res.failures):
            print("    ... and %d more failures (--max-print 0 prints all)" % (len(res.failures) - len(shown)))
        for note in res.notes[:10]:
            print("    " + note)
        sys.stdout.flush()

    global_failures.extend(cross_chain_failures(results))
    for f in global_failures:
        print("FAIL " + f)
    n_fail = sum(len(r.failures) for r in results) + len(global_failures)
    n_rounds = sum(r.rounds_listed for r in results)
    n_ok = sum(1 for r in results if r.ok)
    print("summary: %d chains checked (%d OK, %d FAILED), %d rounds listed, %d verified, %d failures"
          % (len(results), n_ok, len(results) - n_ok, n_rounds, sum(r.rounds_verified for r in results), n_fail))
    if n_fail:
        print("RESULT: FAILED")
        return 1
    if not results:
        print("RESULT: NOTHING VERIFIED (no chain was listed)")
        return 1
    print("RESULT: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())

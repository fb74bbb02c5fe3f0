#!/usr/bin/env python3
"""Self-test of verify_chains.py; standard library only.

Run from the repository root:
  python3 docs/examples/fairness/test_verify_chains.py -v

It builds real chains (seed -> SHA-256 chain -> terminal), fixes salts from
contributions, computes the rounds' crash points, serves the public documents
over http.server on 127.0.0.1 (a random port, in a thread; the routes and JSON
shapes of the fairness design, with small pages so that the paging is used),
and runs verify_chains.py as a subprocess (sys.executable), so that its exit
status is tested: the honest data must verify (exit 0) and every tampering
must fail (exit 1) with the failure it causes named in the output. The further
cases call the script's main() in this process (the same exit status, returned
instead of passed to sys.exit), which keeps the whole run within a few seconds. It also checks the --dir mode on
saved files, the usage and network errors (exit 2), and that this script's
formula agrees with internal/fairness/testdata/vectors.json, written by the
other Python implementation (vectors.py) and reproduced by the Go tests.
"""

import copy
import hashlib
import contextlib
import decimal
import hmac
import importlib.util
import io
import json
import math
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import unittest
import urllib.parse
from fractions import Fraction
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from math import comb

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "verify_chains.py")
VECTORS = os.path.normpath(os.path.join(HERE, "..", "..", "..", "internal", "fairness", "testdata", "vectors.json"))
M = 2**52

# Small server pages, so that the verifier has to follow next_before and next_from.
SERVER_CHAIN_PAGE = 2
SERVER_ROUND_PAGE = 700


# ---- building honest data (the test's own small implementation) --------------------

def sha(b):
    return hashlib.sha256(b).digest()


def hexval(label):
    return hashlib.sha256(label.encode()).hexdigest()


def crash(h, salt, rtp_bp, max_multiplier):
    r = int(hmac.new(h, salt.encode("utf-8"), hashlib.sha256).hexdigest()[:13], 16)
    return min(max_multiplier, max(100, (rtp_bp * M) // (100 * (M - r))))


def make_chain(game, number, length, first_seq, ended, rtp_bp, max_multiplier, contributions,
               status, created_at, last_seq=None, salt_source=None):
    """A Chain document and its ended rounds, exactly as the design shapes them."""
    seed = sha(("seed %s %d" % (game, number)).encode())
    hashes = [sha(seed)]
    for _ in range(length):
        hashes.append(sha(hashes[-1]))  # h(0) .. h(length); position k uses h(length-k)
    terminal = hashes[length].hex()
    ends = created_at + 300000
    doc = {
        "chain_id": "%s-c%d" % (game, number),
        "game_id": game,
        "number": number,
        "status": status,
        "terminal_hash": terminal,
        "length": length,
        "first_seq": first_seq,
        "rtp_bp": rtp_bp,
        "max_multiplier": max_multiplier,
        "formula_version": 1,
        "formula": "(the Formula text)",
        "created_at": created_at,
        "seeding_ends_at": ends,
        "contributions": [],
        "checkpoints": [],
    }
    if last_seq is not None:
        doc["last_seq"] = last_seq
    rounds = []
    if status != "seeding":
        values = sorted(bytes.fromhex(c["value"]) for c in contributions)
        salt = hashlib.sha256(bytes.fromhex(terminal) + b"".join(values)).hexdigest()
        doc.update(salt=salt, salt_fixed_at=ends + 12, salt_source=salt_source, contributions=contributions)
        for k in range(1, ended + 1):
            h = hashes[length - k]
            seq = first_seq + k - 1
            rounds.append({"round_id": "%s-%d" % (game, seq), "seq": seq, "position": k,
                           "status": "void" if k % 97 == 0 else "finished",
                           "hash": h.hex(), "crash_point": crash(h, salt, rtp_bp, max_multiplier),
                           "crashed_at": ends + 20000 * k})
            if k % 1000 == 0:
                doc["checkpoints"].append({"position": k, "seq": seq, "hash": h.hex()})
    return doc, rounds, hashes


T0 = 1795000000000


def honest_data():
    c1, r1, h1 = make_chain(
        "crash-classic", 1, length=1000, first_seq=1, ended=300, rtp_bp=9900, max_multiplier=1000,
        contributions=[{"source": "game", "value": hexval("game draw c1"), "received_at": T0 + 300005}],
        status="retired", created_at=T0, last_seq=300, salt_source="game_draw")
    c2, r2, h2 = make_chain(
        "crash-classic", 2, length=2500, first_seq=301, ended=2100, rtp_bp=9700, max_multiplier=1000000,
        contributions=[
            {"source": "operator", "operator": "acme-bet", "value": hexval("acme"), "received_at": T0 + 10**7 + 1000},
            {"source": "operator", "operator": "zeta-play", "value": hexval("zeta"), "received_at": T0 + 10**7 + 2000},
            {"source": "beacon", "label": "drand quicknet round 123", "value": hexval("beacon"),
             "received_at": T0 + 10**7 + 300001},
        ],
        status="active", created_at=T0 + 10**7, salt_source="contributions")
    c3, r3, h3 = make_chain(
        "crash-turbo", 1, length=500, first_seq=1, ended=0, rtp_bp=9800, max_multiplier=50000,
        contributions=[], status="seeding", created_at=T0 + 2 * 10**7)
    # Retired during its seeding window (its settings changed before its
    # first round): never played, no salt; the next chain serves seq 1.
    c4, r4, h4 = make_chain(
        "crash-mini", 1, length=200, first_seq=1, ended=0, rtp_bp=9700, max_multiplier=10000,
        contributions=[], status="seeding", created_at=T0 + 3 * 10**7)
    c4.update(status="retired", last_seq=0)
    c5, r5, h5 = make_chain(
        "crash-mini", 2, length=200, first_seq=1, ended=5, rtp_bp=9600, max_multiplier=10000,
        contributions=[{"source": "game", "value": hexval("game draw mini c2"), "received_at": T0 + 3 * 10**7 + 400005}],
        status="active", created_at=T0 + 3 * 10**7 + 100000, salt_source="game_draw")
    data = {"chains": [c1, c2, c3, c4, c5],
            "rounds": {c1["chain_id"]: r1, c2["chain_id"]: r2, c3["chain_id"]: r3, c4["chain_id"]: r4, c5["chain_id"]: r5}}
    return data, {c1["chain_id"]: h1, c2["chain_id"]: h2, c3["chain_id"]: h3, c4["chain_id"]: h4, c5["chain_id"]: h5}


def commit_reveal_chains():
    """Two chains of game crash-cr under contribution_rule commit_reveal: an
    active one whose operator acme-bet revealed its value and zeta-play
    withheld (its commitment stands in), and a seeding one that publishes
    acme-bet's commitment only."""
    created = T0 + 5 * 10**7
    ends, reveal_ends = created + 300000, created + 420000
    acme, zeta = hexval("acme cr"), hexval("zeta cr")
    c1, r1, _ = make_chain(
        "crash-cr", 1, length=300, first_seq=1, ended=40, rtp_bp=9700, max_multiplier=100000,
        contributions=[
            {"source": "operator", "operator": "acme-bet", "value": acme, "received_at": created + 1000,
             "commitment": sha(bytes.fromhex(acme)).hex(), "withheld": False, "revealed_at": ends + 500},
            {"source": "operator", "operator": "zeta-play", "value": sha(bytes.fromhex(zeta)).hex(),
             "received_at": created + 2000, "commitment": sha(bytes.fromhex(zeta)).hex(), "withheld": True},
        ],
        status="active", created_at=created, salt_source="contributions")
    c1.update(contribution_rule="commit_reveal", reveal_ends_at=reveal_ends, salt_fixed_at=reveal_ends + 3)
    c2, r2, _ = make_chain(
        "crash-cr", 2, length=300, first_seq=301, ended=0, rtp_bp=9700, max_multiplier=100000,
        contributions=[], status="seeding", created_at=created + 10**7)
    c2.update(contribution_rule="commit_reveal", reveal_ends_at=created + 10**7 + 420000, contributions=[
        {"source": "operator", "operator": "acme-bet", "received_at": created + 10**7 + 1000,
         "commitment": sha(bytes.fromhex(acme)).hex()}])
    return [c1, c2], {c1["chain_id"]: r1, c2["chain_id"]: r2}


QUICKNET = {
    "network": "quicknet",
    "chain_hash": "52db9ba70e0cc0f6eaf7803dd07447a1f5477735fd3f661792ba94600c84e971",
    "public_key": "83cf0f2896adee7eb8b5f01fcad3912212c437e0073e911fb90022d3e760183c"
                  "8c4b450b6a0a6c3ac6a5776a2d1064510d1fec758c921cc22b0e17e63aaf4bcb"
                  "5ed66304de9cf809bd274ca73bab4af5a6e9c76a4bc09e76eae8991ef5ece45a",
    "genesis_time": 1692803367, "period_s": 3, "scheme": "bls-unchained-g1-rfc9380",
}
# A real quicknet round, a published fact: the README of the drand-verify Python
# package (pypi.org/project/drand-verify) verifies it and gives its randomness.
QUICKNET_ROUND = 657413
QUICKNET_SIGNATURE = "b713718a38ae728dfd477991af2822e08d2f305e47718cef9f7848ce4050e7be41076862b98fad56e91a6b85b89cd97b"
QUICKNET_RANDOMNESS = "fc1873a13f3545aeade8401532ef5519920652eee6b0d2b19ca12643b87b3587"


def named_round(window_end_ms, genesis_s, period_s):
    """The test's own reading of the rule: the first round whose time is strictly
    after window_end + one period."""
    t = window_end_ms + period_s * 1000
    r = 1
    if t >= genesis_s * 1000:
        r = (t - genesis_s * 1000) // (period_s * 1000) + 1  # the round current at t
        r += 1
    return r


def beacon_chains():
    """Chains of game crash-bc that name a beacon round (table.v1 1.3.0):
    c1 active, with a made-up network whose "signature" is any 48 bytes (its
    randomness is SHA-256 of them; no BLS here); c2 active, with drand's real
    quicknet round 657413; c3 seeding, waiting for its round."""
    out, rounds = [], {}
    local = {"network": "localnet", "chain_hash": hexval("localnet"),
             "public_key": (sha(b"pk1") + sha(b"pk2") + sha(b"pk3")).hex(),
             "genesis_time": 1790000000, "period_s": 3, "scheme": "bls-unchained-g1-rfc9380"}
    created = T0 + 6 * 10**7
    for number, net, reveal_ends, sig in (
            (1, local, created + 420000, (sha(b"sig a") + sha(b"sig b")[:16]).hex()),
            (2, QUICKNET, QUICKNET["genesis_time"] * 1000 + 1972230500, QUICKNET_SIGNATURE)):
        created = reveal_ends - 420000
        rnd = named_round(reveal_ends, net["genesis_time"], net["period_s"])
        rtime = (net["genesis_time"] + (rnd - 1) * net["period_s"]) * 1000
        randomness = sha(bytes.fromhex(sig)).hex()
        acme = hexval("acme bc %d" % number)
        contributions = [
            {"source": "operator", "operator": "acme-bet", "value": acme, "received_at": created + 1000,
             "commitment": sha(bytes.fromhex(acme)).hex(), "withheld": False, "revealed_at": created + 300500},
            {"source": "beacon", "label": "drand %s round %d" % (net["network"], rnd), "value": randomness,
             "received_at": rtime + 700},
        ]
        doc, rs, _ = make_chain("crash-bc", number, length=200, first_seq=1 + 200 * (number - 1), ended=30,
                                rtp_bp=9700, max_multiplier=100000, contributions=contributions,
                                status="active" if number == 2 else "retired", created_at=created,
                                last_seq=30 if number == 1 else None, salt_source="contributions")
        doc.update(contribution_rule="commit_reveal", reveal_ends_at=reveal_ends, salt_fixed_at=rtime + 700,
                   beacon=dict(net, round=rnd, round_time=rtime, signature=sig, randomness=randomness))
        out.append(doc)
        rounds[doc["chain_id"]] = rs
    c3, r3, _ = make_chain("crash-bc", 3, length=200, first_seq=401, ended=0, rtp_bp=9700, max_multiplier=100000,
                           contributions=[], status="seeding", created_at=T0 + 7 * 10**7)
    reveal_ends = c3["created_at"] + 420000
    rnd = named_round(reveal_ends, local["genesis_time"], local["period_s"])
    c3.update(contribution_rule="commit_reveal", reveal_ends_at=reveal_ends,
              beacon=dict(local, round=rnd, round_time=(local["genesis_time"] + (rnd - 1) * 3) * 1000))
    out.append(c3)
    rounds[c3["chain_id"]] = r3
    return out, rounds


# ---- the server --------------------------------------------------------------------

class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def send(self, code, body, ctype="application/json"):
        if not isinstance(body, bytes):
            body = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        srv = self.server
        srv.accepts.append(self.headers.get("Accept"))
        data = srv.data
        u = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(u.query))
        parts = [urllib.parse.unquote(p) for p in u.path.split("/")]
        if "text/html" in (self.headers.get("Accept") or ""):
            return self.send(200, b"<!doctype html><title>chains</title>", "text/html")
        if parts[:3] != ["", "fairness", "chains"]:
            return self.send(404, {"error": "not found"})
        chains = [c for c in data["chains"]]  # (a tampered list may hold anything)
        field = lambda c, k: c.get(k) if isinstance(c, dict) else None
        if len(parts) == 3:
            if "game_id" in q:
                chains = [c for c in chains if field(c, "game_id") == q["game_id"]]
            chains.sort(key=lambda c: -(field(c, "created_at") or 0))  # newest first
            if "before" in q:
                ids = [field(c, "chain_id") for c in chains]
                chains = chains[ids.index(q["before"]) + 1:] if q["before"] in ids else []
            limit = min(int(q.get("limit", 100)), 100, SERVER_CHAIN_PAGE)
            page = {"items": chains[:limit]}
            if len(chains) > limit:
                page["next_before"] = field(chains[limit - 1], "chain_id")
            return self.send(200, page)
        doc = next((c for c in chains if field(c, "chain_id") == parts[3]), None)
        if doc is None:
            return self.send(404, {"error": "CHAIN_NOT_FOUND"})
        if len(parts) == 4:
            return self.send(200, doc)
        if len(parts) == 5 and parts[4] == "rounds":
            if parts[3] in data.get("raw_rounds", {}):
                return self.send(200, data["raw_rounds"][parts[3]])
            frm = int(q.get("from", 1))
            limit = min(int(q.get("limit", 1000)), 1000, SERVER_ROUND_PAGE)
            def pos(r):  # a malformed item is served on the first page
                p = field(r, "position")
                return p if isinstance(p, int) else 1
            rounds = sorted((r for r in data["rounds"].get(parts[3], []) if pos(r) >= frm), key=pos)
            page = {"items": rounds[:limit]}
            if len(rounds) > limit:
                page["next_from"] = frm if data.get("loop_rounds") else pos(rounds[limit])
            return self.send(200, page)
        return self.send(404, {"error": "not found"})


def load_verifier():
    spec = importlib.util.spec_from_file_location("verify_chains", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---- the tests ---------------------------------------------------------------------

class VerifyChainsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.honest, cls.hashes = honest_data()
        cls.verifier = load_verifier()
        cls.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        cls.server.data = cls.honest
        cls.server.accepts = []
        cls.thread = threading.Thread(target=cls.server.serve_forever, daemon=True)
        cls.thread.start()
        cls.base = "http://127.0.0.1:%d" % cls.server.server_address[1]

    @classmethod
    def tearDownClass(cls):
        cls.server.shutdown()
        cls.server.server_close()

    def run_verifier(self, *args, inproc=False):
        """Runs verify_chains.py as a subprocess (sys.executable), so that its exit status is
        what is tested. inproc=True calls its main() in this process instead, which returns
        that same status: the extra cases use it to keep the whole test fast."""
        if inproc:
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                rc = self.verifier.main(list(args))
            p = subprocess.CompletedProcess(args, rc, out.getvalue(), err.getvalue())
        else:
            p = subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True, timeout=60)
        self.assertNotIn("Traceback", p.stderr, p.stderr)
        self.assertNotIn("Traceback", p.stdout)
        return p

    def serve(self, data):
        self.server.data = data

    def tampered(self, mutate):
        # Round items are flat, so dict() copies them fully (and faster than deepcopy).
        data = {"chains": copy.deepcopy(self.honest["chains"]),
                "rounds": {cid: [dict(r) for r in rounds] for cid, rounds in self.honest["rounds"].items()}}
        mutate(data)
        return data

    @staticmethod
    def chain(data, cid):
        return next(c for c in data["chains"] if c["chain_id"] == cid)

    @staticmethod
    def round_at(data, cid, position):
        return next(r for r in data["rounds"][cid] if r["position"] == position)

    def assert_fails(self, mutate, *expect, args=(), inproc=False):
        self.serve(self.tampered(mutate))
        p = self.run_verifier(self.base, *args, inproc=inproc)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("RESULT: FAILED", p.stdout)
        for e in expect:
            self.assertIn(e, p.stdout)
        return p

    def assert_fails_inproc(self, mutate, *expect):
        return self.assert_fails(mutate, *expect, inproc=True)

    # -- commit_reveal (contribution_rule): commitments, reveals, withheld values

    def with_commit_reveal(self, mutate=None):
        chains, rounds = commit_reveal_chains()
        data = {"chains": copy.deepcopy(self.honest["chains"]) + chains,
                "rounds": dict(self.honest["rounds"], **rounds)}
        if mutate:
            mutate(data)
        return data

    def test_commit_reveal_chains_verify(self):
        self.serve(self.with_commit_reveal())
        p = self.run_verifier(self.base, "--game", "crash-cr", inproc=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("crash-cr-c1  active  rounds verified: 40 of 40 listed  OK", p.stdout)
        self.assertIn("crash-cr-c2  seeding  rounds verified: 0 of 0 listed  OK", p.stdout)
        self.assertIn("operator 'zeta-play' withheld its value: its commitment stands in for it", p.stdout)

    def assert_commit_reveal_fails(self, mutate, *expect):
        self.serve(self.with_commit_reveal(mutate))
        p = self.run_verifier(self.base, "--game", "crash-cr", inproc=True)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        for e in expect:
            self.assertIn(e, p.stdout)

    def test_commit_reveal_tampered(self):
        c = lambda d, cid: self.chain(d, cid)
        # A revealed value that is not the one committed to (the salt recomputed to match).
        def other_value(d):
            ch = c(d, "crash-cr-c1")
            ch["contributions"][0]["value"] = hexval("another acme value")
        self.assert_commit_reveal_fails(other_value, "is not its commitment")
        # A withheld value whose value is not its commitment.
        self.assert_commit_reveal_fails(
            lambda d: c(d, "crash-cr-c1")["contributions"][1].update(value=hexval("zeta cr")),
            "withheld, so its value must be its commitment")
        # A value published while the chain is seeding.
        self.assert_commit_reveal_fails(
            lambda d: c(d, "crash-cr-c2")["contributions"][0].update(value=hexval("acme cr")),
            "a value is published before the salt is fixed")
        # The salt fixed before the reveal window closed.
        self.assert_commit_reveal_fails(
            lambda d: c(d, "crash-cr-c1").update(salt_fixed_at=c(d, "crash-cr-c1")["reveal_ends_at"] - 1),
            "before reveal_ends_at")
        # A value revealed in the seeding window.
        self.assert_commit_reveal_fails(
            lambda d: c(d, "crash-cr-c1")["contributions"][0].update(revealed_at=c(d, "crash-cr-c1")["seeding_ends_at"] - 1),
            "outside the reveal window")
        # No commitment, or no withheld flag.
        self.assert_commit_reveal_fails(
            lambda d: c(d, "crash-cr-c1")["contributions"][0].pop("commitment"), "commitment null is not")
        self.assert_commit_reveal_fails(
            lambda d: c(d, "crash-cr-c1")["contributions"][0].pop("withheld"), "withheld is not true or false")
        # An unknown rule.
        self.assert_commit_reveal_fails(
            lambda d: c(d, "crash-cr-c1").update(contribution_rule="whatever"), "contribution_rule 'whatever'")

    # -- the beacon (table.v1 1.3.0)

    def with_beacon(self, mutate=None):
        chains, rounds = beacon_chains()
        data = {"chains": copy.deepcopy(self.honest["chains"]) + chains,
                "rounds": dict(self.honest["rounds"], **rounds)}
        if mutate:
            mutate(data)
        return data

    def run_without_drand(self, *args):
        """The verifier in this process with the drand_verify module made unimportable,
        so the BLS step must say it was not checked (the made-up network's signature
        is no BLS signature)."""
        saved = sys.modules.get("drand_verify", False)
        sys.modules["drand_verify"] = None  # import raises ImportError
        try:
            return self.run_verifier(self.base, *args, inproc=True)
        finally:
            if saved is False:
                del sys.modules["drand_verify"]
            else:
                sys.modules["drand_verify"] = saved

    def test_beacon_chains_verify(self):
        self.serve(self.with_beacon())
        p = self.run_without_drand("--game", "crash-bc")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("crash-bc-c1  retired  rounds verified: 30 of 30 listed  OK", p.stdout)
        self.assertIn("crash-bc-c2  active  rounds verified: 30 of 30 listed  OK", p.stdout)
        self.assertIn("crash-bc-c3  seeding  rounds verified: 0 of 0 listed  OK", p.stdout)
        self.assertIn("beacon drand quicknet round 657413, due at 2023-09-15 11:00:03 UTC", p.stdout)
        self.assertIn("the beacon's BLS signature was NOT checked here", p.stdout)
        self.assertNotIn("BLS signature of round", p.stdout)  # never claims a check it did not make
        c3 = self.chain(self.with_beacon(), "crash-bc-c3")
        self.assertIn("waiting for the beacon's round %d (drand localnet), due at" % c3["beacon"]["round"], p.stdout)

    def test_real_quicknet_round_is_the_fixture(self):
        c2 = self.chain(self.with_beacon(), "crash-bc-c2")
        b = c2["beacon"]
        self.assertEqual((b["round"], b["signature"], b["randomness"]),
                         (QUICKNET_ROUND, QUICKNET_SIGNATURE, QUICKNET_RANDOMNESS))
        self.assertEqual(b["round_time"], 1694775603000)
        # Whatever tool is installed here: the real round verifies, and a check is named only when made.
        self.serve(self.with_beacon())
        p = self.run_verifier(self.base, "--chain", "crash-bc-c2", inproc=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertTrue("verifies (drand_verify)" in p.stdout or "NOT checked here" in p.stdout, p.stdout)

    def test_legacy_and_no_beacon_chains_are_notes(self):
        self.serve(self.honest)
        p = self.run_verifier(self.base, "--game", "crash-classic", inproc=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("this chain's beacon value ('drand quicknet round 123') was a configured value from the "
                      "installation's file, not a future round", p.stdout)
        self.assertIn("this chain names no beacon: its salt rests on the operators' commitments "
                      "(and the game's draw when none committed)", p.stdout)

    def test_beacon_tampered(self):
        c = lambda d, n=1: self.chain(d, "crash-bc-c%d" % n)
        b = lambda d, n=1: c(d, n)["beacon"]
        def no_beacon_contribution(d):
            c(d)["contributions"] = [x for x in c(d)["contributions"] if x["source"] != "beacon"]
        cases = [
            (lambda d: b(d).update(round=b(d)["round"] + 1), "but the first round emitted strictly after reveal_ends_at"),
            (lambda d: b(d).update(round=b(d)["round"] - 1), "but the first round emitted strictly after reveal_ends_at"),
            (lambda d: b(d, 3).update(round=b(d, 3)["round"] - 1), "but the first round emitted strictly after reveal_ends_at"),
            (lambda d: b(d).update(round_time=b(d)["round_time"] + 3000), "beacon: round_time"),
            (lambda d: b(d).update(randomness=hexval("other randomness")), "is not SHA-256 of the signature's bytes"),
            (lambda d: b(d, 2).update(signature=b(d, 2)["signature"][:-2] + "7c"), "is not SHA-256 of the signature's bytes"),
            (lambda d: b(d).pop("signature"), "signature is not 96 lowercase hex digits"),
            (no_beacon_contribution, "0 contributions of source beacon (want exactly one)"),
            (lambda d: c(d)["contributions"][1].update(label="drand localnet round 1"), "does not name the round"),
            (lambda d: c(d).update(salt_fixed_at=b(d)["round_time"] - 1), "the salt was fixed before the round existed"),
            (lambda d: b(d).update(scheme="pedersen-bls-chained"), "scheme 'pedersen-bls-chained'"),
        ]
        for change, expect in cases:
            with self.subTest(expect=expect):
                self.serve(self.with_beacon(change))
                p = self.run_without_drand("--game", "crash-bc")
                self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
                self.assertIn("RESULT: FAILED", p.stdout)
                self.assertIn(expect, p.stdout)

    def test_beacon_value_swapped_with_salt_recomputed(self):
        # The beacon contribution and the randomness replaced together by another value, the salt
        # recomputed to match: only the signature still tells (SHA-256 of it is not the value).
        def f(d):
            ch = self.chain(d, "crash-bc-c1")
            other = hexval("a value the house chose")
            ch["beacon"]["randomness"] = other
            ch["contributions"][1]["value"] = other
        self.serve(self.with_beacon(f))
        p = self.run_without_drand("--chain", "crash-bc-c1")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("is not SHA-256 of the signature's bytes", p.stdout)

    def test_page_verifier_agrees_on_the_beacon(self):
        """The page's verifier (internal/table/web/static/fairness.js, run by node where it is
        installed) reads the same beacon chains the same way: honest ones pass with their
        state, each tampering fails with its reason."""
        node = shutil.which("node")
        if node is None:
            self.skipTest("node is not installed: the page's verifier is checked by the Go tests of internal/table")
        js = os.path.normpath(os.path.join(HERE, "..", "..", "..", "internal", "table", "web", "static", "fairness.js"))
        tmp = tempfile.mkdtemp(prefix="verify_page_")
        self.addCleanup(shutil.rmtree, tmp)
        shutil.copy(js, os.path.join(tmp, "fairness.mjs"))
        c = lambda d, n=1: self.chain(d, "crash-bc-c%d" % n)
        b = lambda d, n=1: c(d, n)["beacon"]
        def no_beacon_contribution(d):
            c(d)["contributions"] = [x for x in c(d)["contributions"] if x["source"] != "beacon"]
        cases = {
            "honest": (None, None),
            # the round alone: its time and the label no longer match it either
            "round": (lambda d: b(d).update(round=b(d)["round"] + 1), ["round", "time", "label"]),
            "waiting round": (lambda d: b(d, 3).update(round=b(d, 3)["round"] - 1), ["round", "time"]),
            # 3 s later: the salt, fixed 0.7 s after the true time, is now early too
            "time": (lambda d: b(d).update(round_time=b(d)["round_time"] + 3000), ["time", "early"]),
            "randomness": (lambda d: b(d).update(randomness=hexval("x")), ["randomness", "contribution"]),
            "signature": (lambda d: b(d, 2).update(signature=b(d, 2)["signature"][:-2] + "7c"), ["randomness"]),
            "contribution": (no_beacon_contribution, ["contribution"]),
            "label": (lambda d: c(d)["contributions"][1].update(label="drand localnet round 1"), ["label"]),
            "early": (lambda d: c(d).update(salt_fixed_at=b(d)["round_time"] - 1), ["early"]),
        }
        docs = {}
        for name, (change, _) in cases.items():
            docs[name] = {ch["chain_id"]: ch for ch in self.with_beacon(change)["chains"]
                          if ch["game_id"] in ("crash-bc", "crash-classic")}
        with open(os.path.join(tmp, "cases.json"), "w") as f:
            json.dump(docs, f)
        runner = """
import * as fair from './fairness.mjs';
import { readFileSync } from 'node:fs';
const cases = JSON.parse(readFileSync(new URL('./cases.json', import.meta.url)));
const out = {};
for (const [name, chains] of Object.entries(cases)) {
  out[name] = {};
  for (const [id, c] of Object.entries(chains)) {
    const v = new fair.ChainVerifier(c);
    await v.start();
    const s = v.finish(false);
    out[name][id] = { state: s.beacon.state, errors: s.first.filter((f) => f.kind === 'beacon').map((f) => f.what) };
  }
}
console.log(JSON.stringify(out));
"""
        with open(os.path.join(tmp, "run.mjs"), "w") as f:
            f.write(runner)
        p = subprocess.run([node, os.path.join(tmp, "run.mjs")], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        got = json.loads(p.stdout)
        honest = got["honest"]
        self.assertEqual({k: v["state"] for k, v in honest.items()},
                         {"crash-bc-c1": "fixed", "crash-bc-c2": "fixed", "crash-bc-c3": "waiting",
                          "crash-classic-c1": "none", "crash-classic-c2": "configured"})
        self.assertTrue(all(v["errors"] == [] for v in honest.values()), honest)
        where = {"waiting round": "crash-bc-c3", "signature": "crash-bc-c2"}
        for name, (_, want) in cases.items():
            if want is None:
                continue
            with self.subTest(case=name):
                self.assertEqual(sorted(got[name][where.get(name, "crash-bc-c1")]["errors"]), sorted(want))

    # -- honest data

    def test_honest_data_verifies(self):
        self.serve(self.honest)
        self.server.accepts.clear()
        p = self.run_verifier(self.base)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("crash-classic-c1  retired  rounds verified: 300 of 300 listed  OK", p.stdout)
        self.assertIn("crash-classic-c2  active  rounds verified: 2100 of 2100 listed  OK", p.stdout)
        self.assertIn("crash-turbo-c1  seeding  rounds verified: 0 of 0 listed  OK", p.stdout)
        self.assertIn("crash-mini-c1  retired (never played)  rounds verified: 0 of 0 listed  OK", p.stdout)
        self.assertIn("crash-mini-c2  active  rounds verified: 5 of 5 listed  OK", p.stdout)
        self.assertIn("5 chains checked (5 OK, 0 FAILED), 2405 rounds listed, 2405 verified, 0 failures", p.stdout)
        self.assertIn("RESULT: OK", p.stdout)
        # 5 chains at 2 per page: 3 listing pages; rounds (700 a page): crash-classic c1 1 page, c2 3
        # pages, crash-turbo c1 1, crash-mini c1 1 and c2 1
        self.assertEqual(len(self.server.accepts), 3 + 1 + 3 + 1 + 1 + 1)
        self.assertEqual(set(self.server.accepts), {"application/json"})

    def test_honest_data_has_what_the_cases_need(self):
        c2 = self.chain(self.honest, "crash-classic-c2")
        self.assertEqual([c["position"] for c in c2["checkpoints"]], [1000, 2000])
        c1 = self.chain(self.honest, "crash-classic-c1")
        capped = [r for r in self.honest["rounds"]["crash-classic-c1"] if r["crash_point"] == c1["max_multiplier"]]
        self.assertTrue(capped, "c1 needs a round at its cap for the raised max_multiplier case")
        self.assertTrue(any(r["status"] == "void" for r in self.honest["rounds"]["crash-classic-c2"]))

    def test_filters(self):
        self.serve(self.honest)
        p = self.run_verifier(self.base, "--chain", "crash-classic-c2", inproc=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("crash-classic-c2  active  rounds verified: 2100 of 2100", p.stdout)
        self.assertNotIn("crash-classic-c1", p.stdout)
        p = self.run_verifier(self.base, "--game", "crash-turbo", inproc=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("crash-turbo-c1  seeding", p.stdout)
        self.assertNotIn("crash-classic", p.stdout)
        p = self.run_verifier(self.base, "--game", "crash-classic", inproc=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("2 chains checked (2 OK", p.stdout)

    def test_missing_trailing_rounds_are_fine(self):
        def cut(d):
            d["rounds"]["crash-classic-c2"] = d["rounds"]["crash-classic-c2"][:-10]
            d["rounds"]["crash-classic-c1"] = d["rounds"]["crash-classic-c1"][:-1]  # retired, last not ended yet
        self.serve(self.tampered(cut))
        p = self.run_verifier(self.base, inproc=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("rounds verified: 2090 of 2090", p.stdout)

    def test_nothing_to_verify(self):
        self.serve({"chains": [], "rounds": {}})
        p = self.run_verifier(self.base, inproc=True)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("NOTHING VERIFIED", p.stdout)

    # -- the tamperings the brief names

    def test_changed_crash_point(self):
        def f(d):
            self.round_at(d, "crash-classic-c2", 500)["crash_point"] += 1
        p = self.assert_fails(f, "round crash-classic-800 (position 500): crash_point")
        self.assertIn("rounds verified: 2099 of 2100", p.stdout)

    def test_changed_crash_point_of_void_round(self):
        def f(d):
            r = self.round_at(d, "crash-classic-c1", 97)
            self.assertEqual(r["status"], "void")
            r["crash_point"] = 100 if r["crash_point"] != 100 else 101
        self.assert_fails_inproc(f, "round crash-classic-97 (position 97): crash_point")

    def test_changed_hash(self):
        def f(d):
            self.round_at(d, "crash-classic-c2", 700)["hash"] = hexval("forged")
        self.assert_fails(f, "round crash-classic-1000 (position 700): chain link broken",
                          "round crash-classic-1001 (position 701): chain link broken")

    def test_hash_of_another_chain(self):
        # A hash that is honestly on some chain, but not this one.
        def f(d):
            self.round_at(d, "crash-classic-c2", 1)["hash"] = self.hashes["crash-classic-c1"][999].hex()
        self.assert_fails_inproc(f, "(position 1): chain link broken: SHA-256 of its hash is")

    def test_changed_rtp_bp(self):
        self.assert_fails(lambda d: self.chain(d, "crash-classic-c2").update(rtp_bp=9800),
                          "but the formula gives", "rtp_bp 9800")

    def test_insane_settings(self):
        self.assert_fails_inproc(lambda d: self.chain(d, "crash-classic-c2").update(rtp_bp=10001), "rtp_bp 10001 is not within")
        self.assert_fails_inproc(lambda d: self.chain(d, "crash-classic-c2").update(max_multiplier=100),
                          "max_multiplier 100 is not within")
        self.assert_fails_inproc(lambda d: self.chain(d, "crash-classic-c2").update(formula_version=2),
                          "formula_version 2 is not 1")

    def test_changed_max_multiplier(self):
        self.assert_fails(lambda d: self.chain(d, "crash-classic-c2").update(max_multiplier=200),
                          "but the formula gives 200")
        self.assert_fails_inproc(lambda d: self.chain(d, "crash-classic-c1").update(max_multiplier=2000),
                          "crash_point 1000, but the formula gives")

    def test_changed_contribution(self):
        def f(d):
            self.chain(d, "crash-classic-c2")["contributions"][0]["value"] = hexval("other")
        self.assert_fails(f, "crash-classic-c2  active", "chain: salt differs")

    def test_removed_contribution(self):
        def f(d):
            del self.chain(d, "crash-classic-c2")["contributions"][2]  # the beacon
        self.assert_fails(f, "chain: salt differs")

    def test_removed_operator_contribution(self):
        def f(d):
            del self.chain(d, "crash-classic-c2")["contributions"][1]
        self.assert_fails_inproc(f, "chain: salt differs")

    def test_uppercase_contribution(self):
        def f(d):
            c = self.chain(d, "crash-classic-c2")["contributions"][0]
            c["value"] = c["value"].upper()
        self.assert_fails_inproc(f, "contribution 1 (operator): value", "not 64 lowercase hex digits")

    def test_changed_salt(self):
        self.assert_fails(lambda d: self.chain(d, "crash-classic-c2").update(salt=hexval("salt")),
                          "chain: salt differs", "but the formula gives")

    def test_salt_consistent_with_forged_contributions(self):
        # The salt and contributions agree with each other but not with the rounds played.
        def f(d):
            c = self.chain(d, "crash-classic-c2")
            c["contributions"][0]["value"] = hexval("other")
            vals = sorted(bytes.fromhex(x["value"]) for x in c["contributions"])
            c["salt"] = hashlib.sha256(bytes.fromhex(c["terminal_hash"]) + b"".join(vals)).hexdigest()
        p = self.assert_fails_inproc(f, "but the formula gives")
        self.assertNotIn("salt differs", p.stdout)

    def test_wrong_terminal(self):
        self.assert_fails(lambda d: self.chain(d, "crash-classic-c2").update(terminal_hash=hexval("terminal")),
                          "round crash-classic-301 (position 1): chain link broken", "but the terminal hash is",
                          "chain: salt differs")

    def test_gap_in_the_middle(self):
        def f(d):
            d["rounds"]["crash-classic-c2"] = [r for r in d["rounds"]["crash-classic-c2"] if r["position"] != 1500]
        p = self.assert_fails(f, "round crash-classic-1801 (position 1501): gap: position 1500 missing")
        self.assertNotIn("chain link broken", p.stdout)  # the hashes still link across the gap

    def test_missing_first_rounds(self):
        def f(d):
            d["rounds"]["crash-classic-c1"] = d["rounds"]["crash-classic-c1"][3:]
        self.assert_fails_inproc(f, "round crash-classic-4 (position 4): gap: positions 1..3 missing")

    def test_wrong_checkpoint(self):
        def f(d):
            self.chain(d, "crash-classic-c2")["checkpoints"][1]["hash"] = hexval("checkpoint")
        self.assert_fails(f, "checkpoint at position 2000: hash")

    def test_checkpoint_wrong_seq_or_position(self):
        def f(d):
            self.chain(d, "crash-classic-c2")["checkpoints"][0]["seq"] += 1
        self.assert_fails_inproc(f, "checkpoint at position 1000: seq 1301")
        def g(d):
            cp = self.chain(d, "crash-classic-c2")["checkpoints"][0]
            cp.update(position=999, seq=1299, hash=self.round_at(d, "crash-classic-c2", 999)["hash"])
        self.assert_fails_inproc(g, "checkpoint at position 999: not a multiple of 1000")

    def test_checkpoint_without_ended_round(self):
        def f(d):
            d["rounds"]["crash-classic-c2"] = d["rounds"]["crash-classic-c2"][:1999]
        self.assert_fails_inproc(f, "checkpoint at position 2000: no listed (ended) round")

    # -- more rules of the design

    def test_seeding_chain_with_a_round(self):
        def f(d):
            d["rounds"]["crash-turbo-c1"] = [copy.deepcopy(d["rounds"]["crash-classic-c2"][0])]
        self.assert_fails_inproc(f, "status seeding but 1 rounds are listed")

    def test_seeding_chain_with_salt_or_contributions(self):
        self.assert_fails_inproc(lambda d: self.chain(d, "crash-turbo-c1").update(salt=hexval("early")),
                          "status seeding but a salt is published")
        self.assert_fails_inproc(lambda d: self.chain(d, "crash-turbo-c1").update(
            contributions=[{"source": "operator", "operator": "acme-bet", "value": hexval("a"), "received_at": T0}]),
            "contributions published before the salt is fixed")

    def test_active_chain_without_salt(self):
        def f(d):
            c = self.chain(d, "crash-classic-c2")
            for k in ("salt", "salt_fixed_at", "salt_source"):
                del c[k]
        self.assert_fails_inproc(f, "status active but no salt")

    def test_never_played_chain(self):
        # A chain retired in its seeding window needs no salt, but nothing may
        # have been played or contributed on it.
        def listed(d):
            d["rounds"]["crash-mini-c1"] = [copy.deepcopy(d["rounds"]["crash-mini-c2"][0])]
            d["rounds"]["crash-mini-c1"][0]["round_id"] = "crash-mini-1"
        self.assert_fails_inproc(listed, "after the retired chain's last_seq 0")
        self.assert_fails_inproc(lambda d: self.chain(d, "crash-mini-c1").update(
            contributions=[{"source": "operator", "operator": "acme-bet", "value": hexval("a"), "received_at": T0 + 3 * 10**7}]),
            "never played but 1 contributions are published")

    def test_retired_played_chain_without_salt(self):
        def f(d):
            c = self.chain(d, "crash-classic-c1")
            for k in ("salt", "salt_fixed_at", "salt_source"):
                del c[k]
        self.assert_fails_inproc(f, "status retired but no salt")

    def test_salt_source(self):
        self.assert_fails_inproc(lambda d: self.chain(d, "crash-classic-c2").update(salt_source="game_draw"),
                          "salt_source 'game_draw' but operators contributed")
        self.assert_fails_inproc(lambda d: self.chain(d, "crash-classic-c1").update(salt_source="contributions"),
                          "no operator contributed")

    def test_contribution_after_window(self):
        def f(d):
            self.chain(d, "crash-classic-c2")["contributions"][0]["received_at"] = T0 + 10**7 + 300001
        self.assert_fails_inproc(f, "outside the seeding window")

    def test_position_seq_and_round_id(self):
        def f(d):
            self.round_at(d, "crash-classic-c2", 10)["seq"] += 1
        self.assert_fails_inproc(f, "position 10 but seq 311")
        def g(d):
            self.round_at(d, "crash-classic-c2", 10)["round_id"] = "crash-classic-9999"
        self.assert_fails_inproc(g, "round_id is not")
        def h(d):
            self.chain(d, "crash-classic-c2")["length"] = 2000
        self.assert_fails_inproc(h, "position 2001 is outside 1..length 2000")

    def test_round_after_retirement(self):
        # A genuine round of c1's chain, but after last_seq.
        def f(d):
            c1 = self.chain(d, "crash-classic-c1")
            h = self.hashes["crash-classic-c1"][1000 - 301]
            d["rounds"]["crash-classic-c1"].append({
                "round_id": "crash-classic-301", "seq": 301, "position": 301, "status": "finished",
                "hash": h.hex(), "crash_point": crash(h, c1["salt"], c1["rtp_bp"], c1["max_multiplier"]),
                "crashed_at": T0})
        self.assert_fails_inproc(f, "seq 301 is after the retired chain's last_seq 300")

    def test_overlapping_chains(self):
        self.assert_fails_inproc(lambda d: self.chain(d, "crash-classic-c1").update(last_seq=350),
                          "serve the same rounds")

    def test_duplicate_position(self):
        def f(d):
            d["rounds"]["crash-classic-c1"].append(copy.deepcopy(self.round_at(d, "crash-classic-c1", 5)))
        self.assert_fails_inproc(f, "position 5 listed twice")

    def test_bad_data_is_a_failure_not_a_crash(self):
        cases = [
            (lambda d: self.round_at(d, "crash-classic-c2", 3).update(crash_point="153"), "crash_point is not an integer"),
            (lambda d: self.round_at(d, "crash-classic-c2", 3).update(hash=None), "hash is not 64 lowercase"),
            (lambda d: self.round_at(d, "crash-classic-c2", 3).update(position=1.5), "position is not an integer"),
            (lambda d: self.chain(d, "crash-classic-c2").update(checkpoints={"x": 1}), "checkpoints is not a list"),
            (lambda d: self.chain(d, "crash-classic-c2").update(contributions="x"), "contributions is not a list"),
            (lambda d: self.chain(d, "crash-classic-c2").update(rtp_bp=True), "rtp_bp true"),
            (lambda d: self.chain(d, "crash-classic-c2").update(length=None, first_seq="1"), "length is not"),
            (lambda d: d["rounds"]["crash-classic-c2"].insert(0, ["not", "a", "round"]), "not a JSON object"),
            (lambda d: d.setdefault("raw_rounds", {}).update({"crash-classic-c2": b"<html>oops</html>"}),
             "not a JSON document"),
            (lambda d: d.setdefault("raw_rounds", {}).update({"crash-classic-c2": b'{"items": 5}'}),
             "\"items\" is not a list"),
            (lambda d: d.setdefault("raw_rounds", {}).update({"crash-classic-c2": b'{"items": [], "x": NaN}'}),
             "not a JSON document"),
            (lambda d: d.update(loop_rounds=True), "does not move on"),
            (lambda d: d["chains"].append(7), "the document is not a JSON object"),
        ]
        for mutate, expect in cases:
            with self.subTest(expect=expect):
                self.assert_fails_inproc(mutate, expect)

    # -- exit status 2

    def test_usage_and_network_errors(self):
        self.assertEqual(self.run_verifier().returncode, 2)
        self.assertEqual(self.run_verifier(self.base, "--dir", HERE).returncode, 2)
        self.assertEqual(self.run_verifier("ftp://example.com", inproc=True).returncode, 2)
        p = self.run_verifier("http://127.0.0.1:%d" % free_port())
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("error:", p.stderr)
        self.serve(self.honest)
        p = self.run_verifier(self.base, "--chain", "no-such-c1")
        self.assertEqual(p.returncode, 2, p.stdout + p.stderr)
        self.assertIn("HTTP 404", p.stderr)

    # -- saved copies

    def test_dir_mode(self):
        tmp = tempfile.mkdtemp(prefix="verify_chains_")
        self.addCleanup(shutil.rmtree, tmp)

        def save(data):
            shutil.rmtree(tmp)
            os.makedirs(os.path.join(tmp, "rounds"))
            with open(os.path.join(tmp, "chains.json"), "w") as f:
                json.dump({"items": data["chains"]}, f)
            for cid, rounds in data["rounds"].items():
                with open(os.path.join(tmp, "rounds", cid + ".json"), "w") as f:
                    json.dump({"items": rounds}, f)

        save(self.honest)
        p = self.run_verifier("--dir", tmp)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("5 chains checked (5 OK", p.stdout)
        p = self.run_verifier("--dir", tmp, "--chain", "crash-classic-c1", inproc=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("1 chains checked (1 OK", p.stdout)
        p = self.run_verifier("--dir", tmp, "--game", "crash-turbo", inproc=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("crash-turbo-c1  seeding", p.stdout)

        save(self.tampered(lambda d: self.round_at(d, "crash-classic-c2", 1234).update(crash_point=100000)))
        p = self.run_verifier("--dir", tmp)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("round crash-classic-1534 (position 1234): crash_point 100000", p.stdout)

        save(self.honest)
        os.remove(os.path.join(tmp, "rounds", "crash-classic-c1.json"))
        p = self.run_verifier("--dir", tmp, inproc=True)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("no such file", p.stdout)

        os.remove(os.path.join(tmp, "chains.json"))
        self.assertEqual(self.run_verifier("--dir", tmp).returncode, 2)
        self.assertEqual(self.run_verifier("--dir", os.path.join(tmp, "absent"), inproc=True).returncode, 2)

    # -- the void rounds and their test ("voids", table.v1 1.2.0)

    @staticmethod
    def publish_voids(doc, rounds):
        """The chain's "voids" as the game publishes them, computed here from the listed
        void rounds (none took off): counts at 2x, 10x, 100x, exact shares, p-values."""
        crashes = [r["crash_point"] for r in rounds if r["status"] == "void" and "flight_ms" not in r]
        n, tests, flagged = len(crashes), [], False
        for x, share in ((200, "0.485"), (1000, "0.097"), (10000, "0.0097")):
            p = Fraction(doc["rtp_bp"], 100 * x)
            self_check = Fraction(share) == p
            assert self_check, "the cases use rtp_bp 9700"
            k = sum(1 for c in crashes if c >= x)
            tail = sum(comb(n, i) * p**i * (1 - p)**(n - i) for i in range(k, n + 1)) if k > 0 else Fraction(1)
            flagged = flagged or tail < Fraction(1, 3000)
            tests.append({"at_least": x, "observed": k, "share": share, "p_value": "%.4g" % float(tail)})
        listed = []
        for r in rounds:
            if r["status"] != "void":
                continue
            v = {"round_id": r["round_id"], "seq": r["seq"], "position": r["position"], "hash": r["hash"],
                 "crash_point": r["crash_point"]}
            if "flight_ms" in r:  # voided in flight, flight_ms after take-off
                v.update(started_at=1_000_000, voided_at=1_000_000 + r["flight_ms"],
                         multiplier_at_void=int(math.floor(100 * math.exp(0.00006 * r["flight_ms"]))))
            listed.append(v)
        # The in-flight test (table.v1 1.5.0), written out here apart from the verifier's.
        flying = [(v["multiplier_at_void"], v["crash_point"]) for v in listed if "voided_at" in v]
        big_s = sum(math.log(c / m) for m, c in flying if c > m)
        tail = 1.0
        if flying and big_s > 0:  # in decimal, to 60 digits: no term overflows
            with decimal.localcontext() as ctx:
                ctx.prec = 60
                ds = decimal.Decimal(big_s)
                tail = float((-ds).exp() * sum(ds**k / math.factorial(k) for k in range(len(flying))))
        doc["voids"] = {
            "rounds": listed,
            "tested": n, "tests": tests, "flagged": flagged, "flag_rule": "(the rule)",
            "in_flight": {"tested": len(flying), "p_value": "%.4g" % tail, "flagged": tail < 0.001, "flag_rule": "(the rule)"}}

    def with_voids(self, lean_high=False, in_flight=None):
        """in_flight "high": the house voided, 1 s into their flight (1.06x), the
        rounds it knew reach 10x; "honest": every seventh round still flying at
        1.06x was voided then, whatever its crash point."""
        def f(d):
            rounds = d["rounds"]["crash-classic-c2"]
            if lean_high:  # the house voided, in betting, the rounds it knew reach 10x
                for r in rounds:
                    r["status"] = "void" if r["crash_point"] >= 1000 else "finished"
            for i, r in enumerate(rounds):
                if (in_flight == "high" and r["crash_point"] >= 1000) or (in_flight == "honest" and r["crash_point"] > 106 and i % 7 == 3):
                    r["status"], r["flight_ms"] = "void", 1000
            self.publish_voids(self.chain(d, "crash-classic-c2"), rounds)
            for r in rounds:
                r.pop("flight_ms", None)
        return f

    def test_void_statistics_verify(self):
        self.serve(self.tampered(self.with_voids()))
        p = self.run_verifier(self.base, "--chain", "crash-classic-c2", inproc=True)
        self.assertEqual(p.returncode, 0, p.stdout)
        self.assertNotIn("WARNING", p.stdout)
        self.assertFalse(self.chain(self.tampered(self.with_voids()), "crash-classic-c2")["voids"]["flagged"])

    def test_void_flag_is_a_warning_not_a_failure(self):
        data = self.tampered(self.with_voids(lean_high=True))
        self.assertTrue(self.chain(data, "crash-classic-c2")["voids"]["flagged"])
        self.serve(data)
        p = self.run_verifier(self.base, "--chain", "crash-classic-c2", inproc=True)
        self.assertEqual(p.returncode, 0, p.stdout)
        self.assertIn("WARNING: the void rounds that never took off lean toward high crash points", p.stdout)
        self.assertIn("RESULT: OK", p.stdout)

    def test_in_flight_voids(self):
        """Honest voids in flight verify, unflagged; a house that voids in flight
        the rounds it knows reach 10x is flagged, as a warning."""
        for kind, flagged in (("honest", False), ("high", True)):
            with self.subTest(kind=kind):
                data = self.tampered(self.with_voids(in_flight=kind))
                f = self.chain(data, "crash-classic-c2")["voids"]["in_flight"]
                self.assertGreater(f["tested"], 3)
                self.assertIs(f["flagged"], flagged)
                self.serve(data)
                p = self.run_verifier(self.base, "--chain", "crash-classic-c2", inproc=True)
                self.assertEqual(p.returncode, 0, p.stdout)
                self.assertEqual("WARNING: the rounds voided in flight lean toward high crash points" in p.stdout, flagged, p.stdout)
                self.assertIn("RESULT: OK", p.stdout)

    def test_in_flight_statistics_tampered(self):
        def voids(d):
            return self.chain(d, "crash-classic-c2")["voids"]

        def flown(d):
            return next(v for v in voids(d)["rounds"] if "voided_at" in v)

        def tamper(change):
            def f(d):
                self.with_voids(in_flight="honest")(d)
                change(d)
            return f
        cases = [
            (lambda d: voids(d)["in_flight"].update(p_value="0.5"), "voids: in_flight p_value"),
            (lambda d: voids(d)["in_flight"].update(flagged=True), "voids: in_flight flagged true"),
            (lambda d: voids(d)["in_flight"].update(tested=voids(d)["in_flight"]["tested"] - 1), "voids: in_flight tested"),
            (lambda d: flown(d).update(multiplier_at_void=flown(d)["multiplier_at_void"] + 1), "multiplier_at_void"),
            # A void recorded earlier than it was: a smaller m, a larger S.
            (lambda d: flown(d).update(voided_at=flown(d)["started_at"] + 10, multiplier_at_void=100), "voids: in_flight p_value"),
        ]
        for change, expect in cases:
            with self.subTest(expect=expect):
                self.assert_fails(tamper(change), expect, args=("--chain", "crash-classic-c2"), inproc=True)

    def test_void_statistics_tampered(self):
        def voids(d):
            return self.chain(d, "crash-classic-c2")["voids"]

        def tamper(change):
            def f(d):
                self.with_voids()(d)
                change(d)
            return f
        cases = [
            (lambda d: voids(d)["tests"][1].update(observed=voids(d)["tests"][1]["observed"] + 1), "voids: test at 10.00x: observed"),
            (lambda d: voids(d)["tests"][0].update(share="0.5"), "voids: test at 2.00x: share"),
            (lambda d: voids(d)["tests"][2].update(p_value="0.5"), "voids: test at 100.00x: p_value"),
            (lambda d: voids(d).update(flagged=True), "voids: flagged true"),
            (lambda d: voids(d).update(tested=voids(d)["tested"] + 1), "voids: tested"),
            (lambda d: voids(d)["rounds"].pop(), "voids: tested"),
            (lambda d: voids(d)["rounds"][0].update(crash_point=voids(d)["rounds"][0]["crash_point"] + 1), "but the formula gives"),
            (lambda d: voids(d)["rounds"][0].update(position=1, seq=301, round_id="crash-classic-301"), "not the void round listed at position 1"),
            (lambda d: voids(d).update(rounds=voids(d)["rounds"][1:], tested=voids(d)["tested"] - 1),
             "voids: the void round listed at position 97 is missing from the chain's voids"),
        ]
        for change, expect in cases:
            with self.subTest(expect=expect):
                self.assert_fails(tamper(change), expect, args=("--chain", "crash-classic-c2"), inproc=True)


class AgreesWithVectorsTest(unittest.TestCase):
    """verify_chains.py's formula against vectors.json, written by the other implementation."""

    def test_vectors(self):
        v = load_verifier()
        with open(VECTORS, encoding="utf-8") as f:
            doc = json.load(f)
        self.assertEqual(len(doc["rounds"]), doc["length"])
        settings = doc["settings"]
        checked = 0
        for rd in doc["rounds"]:
            h = bytes.fromhex(rd["hash"])
            for s, want in zip(settings, rd["results"], strict=True):
                self.assertEqual(v.draw(h, s["salt"]), want["r"], (rd["round"], s))
                self.assertEqual(v.crash_point(h, s["salt"], s["rtp_bp"], s["max_multiplier"]), want["crash"],
                                 (rd["round"], s))
                checked += 1
        self.assertEqual(checked, doc["length"] * len(settings))
        # The chain: round k -> SHA-256 -> round k-1; round 1 -> the terminal.
        prev = doc["terminal"]
        for rd in doc["rounds"]:
            self.assertEqual(v.walk(bytes.fromhex(rd["hash"]), 1).hex(), prev)
            prev = rd["hash"]
        self.assertEqual(v.walk(bytes.fromhex(doc["rounds"][-1]["hash"]), doc["length"]).hex(), doc["terminal"])
        for d in doc["draws"]:
            self.assertEqual(v.crash_from_r(d["r"], d["rtp_bp"], d["max_multiplier"]), d["crash"], d["note"])
        # One spelled out, so that a reader sees the agreement: round 1, the first settings.
        self.assertEqual(v.crash_point(bytes.fromhex(doc["rounds"][0]["hash"]), settings[0]["salt"], 9700, 1000000),
                         doc["rounds"][0]["results"][0]["crash"])

    def test_salt_rule(self):
        v = load_verifier()
        t = "00" * 31 + "01"
        a, b = "ff" * 32, "0f" * 32
        want = hashlib.sha256(bytes.fromhex(t) + bytes.fromhex(b) + bytes.fromhex(b) + bytes.fromhex(a)).hexdigest()
        self.assertEqual(v.salt_from(t, [a, b, b]), want)  # sorted ascending, duplicates kept
        self.assertEqual(v.salt_from(t, []), hashlib.sha256(bytes.fromhex(t)).hexdigest())


if __name__ == "__main__":
    unittest.main()

#!/usr/bin/env python3
"""A second, independent implementation of the crash game's fairness rules.

It writes vectors.json (beside this script, or to the path given as the only
argument); the Go tests of package fairness must reproduce every value in it.
Standard library only; Python's integers are unbounded, so the formula is
computed as written, without any 128-bit tricks, and r is read as the first 13
hex digits of the HMAC rather than by shifting bytes.

Rules (the Formula text of package fairness):
  chain:  h(0) = SHA-256(seed bytes), h(i+1) = SHA-256(h(i) bytes); with N
          rounds, round k uses h(N-k); h(N) is the published terminal hash.
  r:      top 52 bits of HMAC-SHA256(key = round hash bytes, msg = UTF-8 salt).
  crash:  min(max_multiplier, max(100, floor(rtp_bp * 2^52 / (100 * (2^52 - r))))).
"""

import hashlib
import hmac
import json
import os
import sys

M = 2**52
INT64_MAX = 2**63 - 1

SEED = bytes.fromhex("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f")
LENGTH = 64

SETTINGS = [
    {"salt": "0000000000000000000301e2801a9a9598bfb114e574a91a887f2132f33047e6", "rtp_bp": 9700, "max_multiplier": 1000000},
    {"salt": "crashgame", "rtp_bp": 9900, "max_multiplier": 10000},
    {"salt": "sal-ção 🚀", "rtp_bp": 10000, "max_multiplier": 200},
    {"salt": " spaced salt ", "rtp_bp": 1, "max_multiplier": 101},
]


def crash_from_r(r, rtp_bp, max_multiplier):
    assert 0 <= r < M
    return min(max_multiplier, max(100, (rtp_bp * M) // (100 * (M - r))))


def draw(round_hash, salt):
    mac = hmac.new(round_hash, salt.encode("utf-8"), hashlib.sha256).hexdigest()
    return int(mac[:13], 16)


def chain(seed, length):
    hashes = [hashlib.sha256(seed).digest()]
    for _ in range(length):
        hashes.append(hashlib.sha256(hashes[-1]).digest())
    return hashes  # h(0) .. h(length)


def threshold(rtp_bp, x):
    """The smallest r whose uncapped crash point is >= x (x >= 101)."""
    return M - (rtp_bp * M) // (100 * x)


def draws():
    out = []

    def add(r, rtp_bp, max_multiplier, note):
        out.append({"note": note, "r": r, "rtp_bp": rtp_bp, "max_multiplier": max_multiplier,
                    "crash": crash_from_r(r, rtp_bp, max_multiplier)})

    for rtp in (9700, 10000, 1):
        add(0, rtp, 1000000, "r = 0: floor(rtp_bp/100) <= 100, so 1.00x")
    add(0, 10000, INT64_MAX, "r = 0 at 100% RTP: the quotient is exactly 100")
    add(1, 10000, INT64_MAX, "r = 1 at 100% RTP: still exactly 100")
    add(M - 1, 9700, 1000000, "r = 2^52-1: capped at max_multiplier")
    add(M - 1, 9700, INT64_MAX, "r = 2^52-1 uncapped: 97 * 2^52")
    add(M - 1, 10000, INT64_MAX, "r = 2^52-1 uncapped at 100%: 100 * 2^52, the largest quotient")
    add(M - 2, 10000, INT64_MAX, "r = 2^52-2 uncapped at 100%: 50 * 2^52")
    add(M - 1, 1, 101, "r = 2^52-1 at rtp_bp 1: 2^52/100, capped at 101")
    add(M - 100, 9900, 1000000, "r = 2^52-100: 99 * 2^52 / 10000, capped")
    for rtp in (9700, 9900, 1):
        for x in (101, 150, 200, 1000, 1000000):
            t = threshold(rtp, x)
            add(t - 1, rtp, INT64_MAX, "r just below the threshold of x = %d: crash < x" % x)
            add(t, rtp, INT64_MAX, "threshold of x = %d: first r with crash >= x" % x)
    for x in (101, 10000):
        t = threshold(9700, x)
        add(t, 9700, x, "threshold of x = max_multiplier = %d: exactly the cap" % x)
        add(M - 1, 9700, x, "far above the threshold: still the cap %d" % x)
    return out


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "vectors.json")
    hashes = chain(SEED, LENGTH)
    rounds = []
    for k in range(1, LENGTH + 1):
        h = hashes[LENGTH - k]
        results = []
        for s in SETTINGS:
            r = draw(h, s["salt"])
            results.append({"r": r, "crash": crash_from_r(r, s["rtp_bp"], s["max_multiplier"])})
        rounds.append({"round": k, "hash": h.hex(), "results": results})
    # The chain property, checked here too: SHA-256(round k) == round k-1, round 1 -> terminal.
    for k in range(1, LENGTH + 1):
        prev = hashes[LENGTH] if k == 1 else bytes.fromhex(rounds[k - 2]["hash"])
        assert hashlib.sha256(bytes.fromhex(rounds[k - 1]["hash"])).digest() == prev
    doc = {
        "about": "Written by vectors.py, an independent implementation; do not edit. Hashes are lowercase hex of raw bytes; crash points are hundredths.",
        "seed": SEED.hex(),
        "length": LENGTH,
        "terminal": hashes[LENGTH].hex(),
        "settings": SETTINGS,
        "rounds": rounds,
        "draws": draws(),
    }
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        f.write(json.dumps(doc, indent=1, ensure_ascii=True) + "\n")


if __name__ == "__main__":
    main()

// Verifies a round in the browser with the formula of the server
// (GET /api/v1/fairness shows its text):
//   r = the top 52 bits of HMAC-SHA256(key = the round hash's 32 bytes,
//       message = the salt's UTF-8 bytes);
//   crash = min(max_multiplier, max(100, floor(rtp_bp * 2^52 / (100 * (2^52 - r)))))
// in exact integer arithmetic (BigInt), and the chain: SHA-256 of a round's
// hash bytes is the previous round's hash.

const TWO52 = 2n ** 52n;

export function hexToBytes(hex) {
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new Error('hash');
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  return out;
}

export function bytesToHex(bytes) {
  return Array.from(new Uint8Array(bytes), (b) => b.toString(16).padStart(2, '0')).join('');
}

// draw returns r for a round hash (hex) and the published salt.
export async function draw(hashHex, salt) {
  const key = await crypto.subtle.importKey('raw', hexToBytes(hashHex), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(salt)));
  return BigInt('0x' + bytesToHex(mac.slice(0, 7)).slice(0, 13));
}

// crashFromDraw is the arithmetic half of the formula.
export function crashFromDraw(r, rtpBp, maxMultiplier) {
  let c = (BigInt(rtpBp) * TWO52) / (100n * (TWO52 - BigInt(r)));
  if (c < 100n) c = 100n;
  if (c > BigInt(maxMultiplier)) c = BigInt(maxMultiplier);
  return c;
}

// crashPoint recomputes a round's crash point in hundredths (a BigInt).
export async function crashPoint(hashHex, salt, rtpBp, maxMultiplier) {
  return crashFromDraw(await draw(hashHex, salt), rtpBp, maxMultiplier);
}

// previousHash returns SHA-256 of the hash's bytes: the previous round's hash.
export async function previousHash(hashHex) {
  return bytesToHex(await crypto.subtle.digest('SHA-256', hexToBytes(hashHex)));
}

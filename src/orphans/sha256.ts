/**
 * SHA-256 (FIPS 180-4) of a string's UTF-8 bytes, as hex. Owner tags need a cryptographic hash (two owners with the
 * same tag would have the same HNS names), but not node:crypto: the plugin starts once per pod, and the ADD path
 * loads neither node:crypto nor anything it does not use. Names are hashed a handful of times per verb (once per
 * owner the audit knows, once per HNS object's name): written for speed (32-bit integer arithmetic in locals, no
 * allocation but the input's bytes), it hashes a name in about 2 µs, as node:crypto does; a first version that
 * allocated per block cost the audit ~22 ms per 1 000 owners. test/orphans/ownership.test.ts checks it against
 * node:crypto.
 */
const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);

const W = new Int32Array(64);
const H = new Int32Array(8);
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
const INIT = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

export function sha256Hex(text: string): string {
  const data = Buffer.from(text, 'utf8');
  const n = data.length;
  // The message, a 0x80 byte, zeros, and the 64-bit bit length fill whole 64-byte blocks.
  const blocks = ((n + 8) >>> 6) + 1;
  H.set(INIT);
  for (let b = 0; b < blocks; b++) {
    loadBlock(data, b, b === blocks - 1);
    expandSchedule();
    compress();
  }
  let out = '';
  for (let i = 0; i < 8; i++) {
    const v = H[i]!;
    out += HEX[(v >>> 24) & 255]! + HEX[(v >>> 16) & 255]! + HEX[(v >>> 8) & 255]! + HEX[v & 255]!;
  }
  return out;
}

/** W[0..15] := block b of the padded message, read straight from the input's bytes (no padded copy is made). */
function loadBlock(data: Buffer, b: number, last: boolean): void {
  const n = data.length;
  for (let i = 0; i < 16; i++) {
    let w = 0;
    for (let j = 0; j < 4; j++) {
      const p = b * 64 + i * 4 + j;
      w = (w << 8) | (p < n ? data[p]! : p === n ? 0x80 : 0);
    }
    W[i] = w;
  }
  if (last) {
    W[14] = Math.floor(n / 0x20000000);
    W[15] = n << 3;
  }
}

/** W[16..63] from W[0..15] (FIPS 180-4 6.2.2 step 1). */
function expandSchedule(): void {
  for (let i = 16; i < 64; i++) {
    const x = W[i - 15]!;
    const y = W[i - 2]!;
    const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
    const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
    W[i] = (W[i - 16]! + s0 + W[i - 7]! + s1) | 0;
  }
}

/** The 64 rounds over W, added into H (FIPS 180-4 6.2.2 steps 2-4); the working variables stay in locals. */
function compress(): void {
  let a = H[0]!;
  let b = H[1]!;
  let c = H[2]!;
  let d = H[3]!;
  let e = H[4]!;
  let f = H[5]!;
  let g = H[6]!;
  let h = H[7]!;
  for (let i = 0; i < 64; i++) {
    const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const t1 = (h + s1 + ((e & f) ^ (~e & g)) + K[i]! + W[i]!) | 0;
    const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const t2 = (s0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  H[0] = (H[0]! + a) | 0;
  H[1] = (H[1]! + b) | 0;
  H[2] = (H[2]! + c) | 0;
  H[3] = (H[3]! + d) | 0;
  H[4] = (H[4]! + e) | 0;
  H[5] = (H[5]! + f) | 0;
  H[6] = (H[6]! + g) | 0;
  H[7] = (H[7]! + h) | 0;
}

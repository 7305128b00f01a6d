/* seclookup captcha: the proof-of-work solver (PROTOCOL.md, "pow"). As a Worker it answers
 * {salt, difficulty, count} with progress messages, then {type:'done', counters}. Loaded as a
 * plain script in a page (the no-Worker fallback) it only defines self.seclookupPow. For each i
 * in 0..count-1 it finds c with SHA-256(salt(16) || u32be(i) || u32be(c)) starting with
 * `difficulty` zero bits. */
(function (self) {
  'use strict';
  var K = new Int32Array([
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74,
    0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d,
    0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e,
    0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5,
    0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
  ]);
  var MAX_WORK = 8388608; // 2^23 expected hashes
  var IV = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

  /** One SHA-256 block: w[0..15] holds the block (w is 64 long), h the state, updated in place. */
  function compress(h, w) {
    var i, x, y, t1, t2;
    for (i = 16; i < 64; i++) {
      x = w[i - 15];
      y = w[i - 2];
      w[i] =
        ((((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3)) +
          (((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10)) +
          w[i - 7] +
          w[i - 16]) |
        0;
    }
    var a = h[0],
      b = h[1],
      c = h[2],
      d = h[3],
      e = h[4],
      f = h[5],
      g = h[6],
      k = h[7];
    for (i = 0; i < 64; i++) {
      t1 = (k + (((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7))) + ((e & f) ^ (~e & g)) + K[i] + w[i]) | 0;
      t2 = ((((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10))) + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      k = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    h[0] = (h[0] + a) | 0;
    h[1] = (h[1] + b) | 0;
    h[2] = (h[2] + c) | 0;
    h[3] = (h[3] + d) | 0;
    h[4] = (h[4] + e) | 0;
    h[5] = (h[5] + f) | 0;
    h[6] = (h[6] + g) | 0;
    h[7] = (h[7] + k) | 0;
  }

  /** SHA-256 of a byte array (Uint8Array or array of 0..255): a Uint8Array of 32. */
  function sha256(bytes) {
    var n = bytes.length,
      blocks = ((n + 8) >> 6) + 1,
      h = new Int32Array(IV),
      w = new Int32Array(64);
    var out = new Uint8Array(32),
      i,
      j,
      p,
      bits;
    for (i = 0; i < blocks; i++) {
      for (j = 0; j < 16; j++) {
        p = i * 64 + j * 4;
        w[j] = (byteAt(bytes, n, p) << 24) | (byteAt(bytes, n, p + 1) << 16) | (byteAt(bytes, n, p + 2) << 8) | byteAt(bytes, n, p + 3);
      }
      if (i === blocks - 1) {
        bits = n * 8;
        w[14] = Math.floor(bits / 4294967296) | 0;
        w[15] = bits | 0;
      }
      compress(h, w);
    }
    for (i = 0; i < 32; i++) out[i] = (h[i >> 2] >>> (24 - (i & 3) * 8)) & 255;
    return out;
  }
  function byteAt(bytes, n, p) {
    return p < n ? bytes[p] & 255 : p === n ? 0x80 : 0;
  }

  /** Do the first `d` bits of the hash state h read zero? */
  function meets(h, d) {
    for (var k = 0; d > 0; k++, d -= 32) {
      if (d >= 32 ? h[k] !== 0 : h[k] >>> (32 - d) !== 0) return false;
    }
    return true;
  }

  /** A solver for `params` ({salt, difficulty, count}); throws on params it cannot solve. */
  function createSolver(params) {
    var salt = String(params && params.salt),
      d = params && params.difficulty,
      count = params && params.count;
    if (!/^[0-9a-fA-F]{32}$/.test(salt)) throw new Error('bad salt');
    if (!(d >= 0 && d <= 64 && d % 1 === 0) || !(count >= 1 && count <= 1000 && count % 1 === 0)) throw new Error('bad params');
    // The service asks at most 8 x 2^18 (high risk); a challenge 4x beyond that would spin for
    // minutes on a phone: refused (the widget says so) rather than solved.
    if (count * Math.pow(2, d) > MAX_WORK) throw new Error('too much work');
    var s = [];
    for (var j = 0; j < 4; j++) s.push(parseInt(salt.slice(j * 8, j * 8 + 8), 16) | 0);
    return { s: s, d: d, count: count, i: 0, c: 0, counters: [], h: new Int32Array(8), w: new Int32Array(64), hashes: 0 };
  }

  /** The hash state of SHA-256(salt || u32be(i) || u32be(c)): one 24-byte message, one block. */
  function powHash(st, i, c) {
    var h = st.h,
      w = st.w,
      s = st.s;
    for (var j = 0; j < 8; j++) h[j] = IV[j];
    w[0] = s[0];
    w[1] = s[1];
    w[2] = s[2];
    w[3] = s[3];
    w[4] = i;
    w[5] = c;
    w[6] = 0x80000000 | 0;
    for (j = 7; j < 15; j++) w[j] = 0;
    w[15] = 192;
    compress(h, w);
    return h;
  }

  /** Try up to `budget` counters; true once every puzzle is solved (st.counters holds them). */
  function step(st, budget) {
    while (st.i < st.count && budget-- > 0) {
      st.hashes++;
      if (meets(powHash(st, st.i, st.c), st.d)) {
        st.counters.push(st.c);
        st.i++;
        st.c = 0;
      } else if (++st.c > 0xffffffff) {
        throw new Error('no solution');
      }
    }
    return st.i >= st.count;
  }

  /** Fraction done, 0..1, counting the expected 2^d tries per puzzle. */
  function progress(st) {
    return Math.min(1, (st.i + Math.min(0.95, st.c / Math.pow(2, st.d))) / st.count);
  }

  self.seclookupPow = { sha256: sha256, createSolver: createSolver, step: step, progress: progress, meets: meets };

  if (typeof document === 'undefined') {
    self.onmessage = function (e) {
      var st;
      try {
        st = createSolver(e.data);
        while (!step(st, 16384)) self.postMessage({ type: 'progress', p: progress(st) });
      } catch (err) {
        self.postMessage({ type: 'error', message: String(err && err.message) });
        return;
      }
      self.postMessage({ type: 'done', counters: st.counters, hashes: st.hashes });
    };
  }
})(self);

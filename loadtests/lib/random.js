// Seeded randomness for the journeys: every VU draws its own reproducible sequence (SEED × VU), so
// two runs ask for the same keys in roughly the same order even though k6's Math.random is unseeded.

// mulberry32: a 32-bit generator, plenty for choosing keys and far cheaper than crypto.
export function seededRandom(seed) {
  let state = seed >>> 0;
  return function next() {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Zipf over ranks 1..n with P(k) ∝ k^-exponent, by rejection-inversion (Hörmann and Derflinger,
// "Rejection-inversion to generate variates from monotone discrete distributions", 1996), the method
// of Apache Commons RNG's RejectionInversionZipfSampler. It needs O(1) memory, where a precomputed
// CDF would keep n doubles in each of up to 2000 VUs, and accepts more than 90% of proposals.
export class ZipfSampler {
  constructor(n, exponent) {
    if (!(n >= 1) || !(exponent > 0)) {
      throw new Error(`Zipf needs n >= 1 and exponent > 0, got n=${n}, exponent=${exponent}`);
    }
    this.n = n;
    this.exponent = exponent;
    this.hIntegralX1 = this.hIntegral(1.5) - 1;
    this.hIntegralN = this.hIntegral(n + 0.5);
    this.squeeze = 2 - this.hIntegralInverse(this.hIntegral(2.5) - this.h(2));
  }

  sample(random) {
    for (;;) {
      const u = this.hIntegralN + random() * (this.hIntegralX1 - this.hIntegralN);
      const x = this.hIntegralInverse(u);
      const k = Math.min(this.n, Math.max(1, Math.floor(x + 0.5)));
      if (k - x <= this.squeeze || u >= this.hIntegral(k + 0.5) - this.h(k)) {
        return k;
      }
    }
  }

  // H(x) = ∫ x^-s dx = (x^(1-s) - 1) / (1 - s), written so that s = 1 (log x) needs no special case.
  hIntegral(x) {
    const logX = Math.log(x);
    return expm1OverX((1 - this.exponent) * logX) * logX;
  }

  h(x) {
    return Math.exp(-this.exponent * Math.log(x));
  }

  hIntegralInverse(x) {
    const t = Math.max(-1, x * (1 - this.exponent));
    return Math.exp(log1pOverX(t) * x);
  }
}

// log(1 + x) / x and (e^x - 1) / x, with Taylor series near 0 where the quotients lose precision.
function log1pOverX(x) {
  return Math.abs(x) > 1e-8 ? Math.log1p(x) / x : 1 - x * (0.5 - x * (1 / 3 - 0.25 * x));
}

function expm1OverX(x) {
  return Math.abs(x) > 1e-8 ? Math.expm1(x) / x : 1 + x * 0.5 * (1 + (x / 3) * (1 + 0.25 * x));
}

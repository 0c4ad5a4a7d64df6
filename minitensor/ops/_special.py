"""numpy has no gamma-family, inverse-error or Bessel functions, and minitensor depends on numpy
only: these are vectorised float64 implementations, each an ndarray in and an ndarray out (the
callers cast back to the input's dtype).

How each is computed, and why that is accurate:

- `lgamma`, `erf`, `erfc`: Python's `math` module has them exactly (correctly rounded to a few
  ulps); mapped over the elements, since their series are long and `math` already got them right.
- `digamma`: psi(x + 1) = psi(x) + 1/x shifts x up to >= 10, where the asymptotic series
  ln x - 1/(2x) - sum_k B_2k / (2k x^2k) has converged to double precision in 7 terms; below 1/2
  the reflection psi(x) = psi(1 - x) - pi / tan(pi x).
- `zeta(s, q)` (Hurwitz, sum_k (q + k)^-s), hence `polygamma(n, x) = (-1)^(n+1) n! zeta(n+1, x)`:
  the first terms summed until q + k >= 10 + s, then the Euler-Maclaurin tail with 12 Bernoulli terms.
- `erfinv`, `erfcinv`: a closed-form guess (Winitzki's, ~1e-3 relative), then Newton steps on
  erf(x) = y near 0 and on log erfc(x) = log z in the tails (where erf is flat but log erfc is
  nearly a parabola); each step doubles the correct digits, 5 steps are plenty.
- `erfcx(x) = e^(x^2) erfc(x)`: directly for x < 2, else erfc's continued fraction (no overflow).
- `bessel_i(nu, x)` (nu = 0, 1; `scaled` multiplies by e^-|x|): the power series for |x| <= 30,
  where all its terms are positive (no cancellation), the asymptotic series e^x / sqrt(2 pi x) *
  sum_k (-1)^k a_k(nu) / x^k beyond.
- `igamma(a, x)`, the regularized lower incomplete gamma P(a, x), and `igammac` = 1 - P: the power
  series for x < a + 1, the continued fraction of Q (modified Lentz) beyond.
"""
import math

import numpy as np

_SQRT_PI = math.sqrt(math.pi)
# B_2, B_4, ..., B_24: the Bernoulli numbers of the asymptotic and Euler-Maclaurin series
_BERNOULLI = [1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798,
              -174611 / 330, 854513 / 138, -236364091 / 2730]


def _elementwise(fn, at_error):
    """A scalar `math` function mapped over a float64 array; `at_error(x)` where it raises (a pole)."""
    def safe(x):
        try:
            return fn(x)
        except (ValueError, OverflowError):
            return at_error(x)
    mapped = np.vectorize(safe, otypes=[np.float64])
    return lambda a: mapped(np.asarray(a, dtype=np.float64)) if np.size(a) else np.asarray(a, np.float64)


lgamma = _elementwise(math.lgamma, lambda x: math.inf)  # poles at 0, -1, -2, ...: +inf, as PyTorch
erf = _elementwise(math.erf, lambda x: math.nan)
erfc = _elementwise(math.erfc, lambda x: math.nan)


def _float64(a):
    return np.atleast_1d(np.asarray(a, dtype=np.float64))  # (1-d at least: the masks below index it)


@np.errstate(divide="ignore", invalid="ignore", over="ignore")
def digamma(a):
    x = _float64(a)
    y = np.where(x < 0.5, 1 - x, x)
    acc = np.zeros_like(y)
    while True:  # psi(y) = psi(y + 1) - 1/y, until y >= 10 (at most 10 steps)
        low = y < 10
        if not low.any():
            break
        acc -= np.where(low, 1 / y, 0)
        y = np.where(low, y + 1, y)
    inv2 = 1 / (y * y)
    series, power = np.zeros_like(y), np.ones_like(y)
    for k, b in enumerate(_BERNOULLI[:7], start=1):
        power = power * inv2
        series += b / (2 * k) * power
    out = acc + np.log(y) - 0.5 / y - series
    out = np.where(x < 0.5, out - math.pi / np.tan(math.pi * x), out)
    out = np.where((x <= 0) & (x == np.floor(x)), np.nan, out)  # the poles at -1, -2, ...: NaN, as PyTorch
    out = np.where(x == 0, np.copysign(np.inf, -x), out)  # psi(+-0) = -+inf
    return np.where(x == np.inf, np.inf, out)


@np.errstate(divide="ignore", invalid="ignore", over="ignore")
def zeta(s, q):
    """The Hurwitz zeta function sum_{k>=0} (q + k)^-s, for s > 1 (NaN below, inf at s = 1)."""
    s, q = np.broadcast_arrays(_float64(s), _float64(q))
    s, q = s.copy(), q.copy()
    shift = 10 + np.where(np.isfinite(s), np.maximum(s, 0), 0)
    acc = np.zeros_like(q)
    while True:  # the first terms directly, until q >= 10 + s
        low = (q < shift) & np.isfinite(q) & (s > 1)
        if not low.any():
            break
        acc += np.where(low, q ** -s, 0)
        q = np.where(low, q + 1, q)
    tail = q ** (1 - s) / (s - 1) + 0.5 * q ** -s
    rising, power, factorial = s, q ** (-s - 1), 2.0  # s (s+1) ... (s + 2j - 2), q^(-s-2j+1), (2j)!
    for j, b in enumerate(_BERNOULLI, start=1):
        tail += b / factorial * rising * power
        rising = rising * (s + 2 * j - 1) * (s + 2 * j)
        power = power / (q * q)
        factorial *= (2 * j + 1) * (2 * j + 2)
    out = acc + tail
    out = np.where(s == 1, np.inf, np.where(s < 1, np.nan, out))
    pole = (q <= 0) & (q == np.floor(q))
    return np.where(pole & (s > 1), np.inf, np.where((q < 0) & (s != np.floor(s)), np.nan, out))


def polygamma(n, a):
    """The n-th derivative of digamma: (-1)^(n+1) n! zeta(n + 1, x) for n >= 1."""
    if n == 0:
        return digamma(a)
    return (-1) ** (n + 1) * math.factorial(n) * zeta(n + 1.0, a)


def _winitzki(log_one_minus_y2):
    """The guess |erfinv(y)| from w = log(1 - y^2): erf(x)^2 ~ 1 - exp(-x^2 (4/pi + a x^2) / (1 + a x^2))."""
    a = 0.147
    b = 2 / (math.pi * a) + log_one_minus_y2 / 2
    return np.sqrt(np.sqrt(b * b - log_one_minus_y2 / a) - b)


@np.errstate(divide="ignore", invalid="ignore", over="ignore")
def erfcinv(a):
    """x with erfc(x) = z, for z in [0, 2] (inf at 0, -inf at 2, NaN outside)."""
    z = _float64(a)
    upper = z > 1
    t = np.where(upper, 2 - z, z)  # erfcinv(z) = -erfcinv(2 - z); 2 - z is exact for z in [1, 2]
    out = np.empty_like(t)
    central = t >= 0.5
    out[central] = _erfinv_central(1 - t[central])  # exact for t in [1/2, 1]
    tail = ~central & (t > 0)
    tz = t[tail]
    x = _winitzki(np.log(tz * (2 - tz)))
    for _ in range(6):  # Newton on f(x) = log erfc(x) - log z = log erfcx(x) - x^2 - log z
        cx = erfcx(x)
        x = x + (np.log(cx) - x * x - np.log(tz)) * cx * _SQRT_PI / 2
    out[tail] = x
    out[t == 0] = np.inf
    out = np.where(upper, -out, out)
    return np.where((z < 0) | (z > 2) | np.isnan(z), np.nan, out)


def _erfinv_central(y):
    """erfinv(y) for |y| <= 1/2: Newton on erf(x) = y, whose slope 2/sqrt(pi) e^-x^2 is >= 0.88 here."""
    x = np.copysign(_winitzki(np.log1p(-y * y)), y)
    for _ in range(5):
        x = x - (erf(x) - y) * _SQRT_PI / 2 * np.exp(x * x)
    return x


@np.errstate(invalid="ignore")
def erfinv(a):
    """x with erf(x) = y, for y in [-1, 1] (+-inf at +-1, NaN outside)."""
    y = _float64(a)
    out = np.empty_like(y)
    central = np.abs(y) <= 0.5
    out[central] = _erfinv_central(y[central])
    out[~central] = np.copysign(erfcinv(1 - np.abs(y[~central])), y[~central])  # exact for |y| in [1/2, 1]
    return out


@np.errstate(over="ignore", invalid="ignore")
def erfcx(a):
    """e^(x^2) erfc(x), finite for large x where e^(x^2) alone overflows."""
    x = _float64(a)
    out = np.exp(x * x) * erfc(x)
    big = x >= 2
    xb = x[big]
    f = xb.copy()  # erfcx(x) = 1 / (sqrt(pi) (x + (1/2) / (x + 1 / (x + (3/2) / (x + ...))))), from the inside out
    for k in range(80, 0, -1):
        f = xb + (k / 2) / f
    out[big] = 1 / (_SQRT_PI * f)
    return np.where(x == np.inf, 0.0, out)


@np.errstate(over="ignore", invalid="ignore")
def bessel_i(nu, a, scaled=False):
    """The modified Bessel function I_nu(x) for nu = 0 or 1 (times e^-|x| when `scaled`)."""
    x = _float64(a)
    ax = np.abs(x)
    small = ax <= 30
    xs = ax[small]
    half = xs / 2
    term = half ** nu  # (x/2)^nu / nu!, for nu = 0, 1
    total = term.copy()
    quarter_sq = half * half
    for k in range(1, 90):
        term = term * quarter_sq / (k * (k + nu))
        total += term
    out = np.empty_like(x)
    out[small] = total * np.exp(-xs) if scaled else total
    xl = ax[~small]
    mu, coef, total = 4.0 * nu * nu, np.ones_like(xl), np.ones_like(xl)
    for k in range(1, 40):  # a_k = prod_{j<=k} (mu - (2j - 1)^2) / (k! 8^k)
        coef = coef * -(mu - (2 * k - 1) ** 2) / (k * 8 * xl)
        total += coef
    large = total / np.sqrt(2 * math.pi * xl)
    out[~small] = large if scaled else large * np.exp(xl)
    return np.copysign(out, x) if nu == 1 else out


@np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore")
def log_ndtr(a):
    """log Phi(x), Phi(x) = erfc(-x / sqrt 2) / 2: log1p of the small complement for x > 0, and
    through erfcx for x < 0, where Phi underflows (log Phi(x) ~ -x^2/2 then)."""
    x = _float64(a)
    u = x / math.sqrt(2)
    pos = x > 0
    return np.where(pos, np.log1p(-0.5 * erfc(np.where(pos, u, 0))),
                    np.log(0.5 * erfcx(np.where(pos, 0, -u))) - u * u)


@np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore")
def igamma(a, x, upper=False):
    """P(a, x) = gamma(a, x) / Gamma(a), the regularized lower incomplete gamma function (Q = 1 - P
    with `upper`), for a > 0, x >= 0."""
    a, x = np.broadcast_arrays(_float64(a), _float64(x))
    log_front = a * np.log(x) - x - lgamma(a)  # log(x^a e^-x / Gamma(a))
    series = x < a + 1  # where the series converges fast; the fraction elsewhere
    # the series P = x^a e^-x / Gamma(a + 1) * sum_n x^n / ((a + 1) ... (a + n))
    term = np.ones_like(a)
    total = term.copy()
    for n in range(1, 2000):  # until every term is below double precision of its sum
        term = term * x / (a + n)
        total += term
        if not np.any(series & (np.abs(term) > 1e-17 * np.abs(total))):
            break
    p_series = np.exp(log_front) * total / a
    # the continued fraction of Q = x^a e^-x / Gamma(a) * 1 / (x + 1 - a - 1 (1 - a) / (x + 3 - a - ...))
    tiny = 1e-300
    b = x + 1 - a
    c = np.full_like(a, 1 / tiny)
    d = 1 / np.where(b == 0, tiny, b)
    h = d.copy()
    for i in range(1, 2000):  # (modified Lentz, until the fraction stops changing)
        an = -i * (i - a)
        b = b + 2
        d = an * d + b
        d = 1 / np.where(np.abs(d) < tiny, tiny, d)
        c = b + an / c
        c = np.where(np.abs(c) < tiny, tiny, c)
        step = d * c
        h = h * step
        if not np.any(~series & (np.abs(step - 1) > 1e-16)):
            break
    q_fraction = np.exp(log_front) * h
    p = np.where(series, p_series, 1 - q_fraction)
    q = np.where(series, 1 - p_series, q_fraction)
    out = np.where(np.isnan(a) | np.isnan(x), np.nan, q if upper else p)
    # the edge cases as PyTorch (cephes) decides them, each rule above the ones after it: a or x < 0 is
    # NaN; a = 0 is the limit P = 1 for x > 0 (NaN at x = 0); x = 0 gives P = 0; a = inf gives P = 0
    # (NaN with x = inf too); x = inf gives P = 1. Applied from the weakest rule up.
    lo, hi = (1.0, 0.0) if upper else (0.0, 1.0)  # P's 0 and 1, as Q = 1 - P
    out = np.where(np.isposinf(x), hi, out)
    out = np.where(np.isposinf(a), np.where(np.isinf(x), np.nan, lo), out)
    out = np.where(x == 0, lo, out)
    out = np.where(a == 0, np.where(x > 0, hi, np.nan), out)
    return np.where((a < 0) | (x < 0), np.nan, out)


# ---- issue 29: the Bessel functions J, Y, K of orders 0 and 1, Airy's Ai, orthogonal polynomials ----
#
# Each Bessel function is split by |x| into ranges, each computed the way that is accurate there:
#
# - near 0, the power series (DLMF 10.2.2, 10.8.1, 10.31.1), whose terms shrink fast for small x;
# - J for 2 < |x| <= 25: Bessel's integral J_n(x) = 1/(2 pi) int_0^{2 pi} cos(n t - x sin t) dt by the trapezoid
#   rule on 64 points. The integrand is periodic and analytic, so the rule's error is about J_{64-n}(x), below
#   1e-17 for x <= 25: an absolute accuracy of a few 1e-16 (the series would lose e^x / x of its digits there);
# - K (and e^x K) for 2 < x <= 25: e^x K_nu(x) = int_0^inf e^{-x (cosh t - 1)} cosh(nu t) dt by the trapezoid
#   rule, step 0.05 on [0, 6]: the integrand decays like e^{-x t^2 / 2} and is analytic in a strip, so the
#   error falls like e^{-2 pi^2 / (x h^2)} < 1e-40, and the tail beyond t = 6 is below e^{-400};
# - large |x|: Hankel's asymptotic expansions (DLMF 10.17.3, 10.40.2) in a_k(nu) / x^k,
#   a_k(nu) = prod_{j<=k} (4 nu^2 - (2j - 1)^2) / (k! 8^k); their terms shrink until k ~ 2x, so at x > 25 the
#   first 40 give double precision (the smallest term is near e^{-2x});
# - Y for x <= 17: the series, with J from above; its terms grow to about I0(x), so its absolute error is
#   I0(x) * 1e-16 < 3e-10 (relative: 1e-9 away from Y's zeros). Beyond 17, Hankel's (smallest term < 1e-14).
# - Ai(x): the Maclaurin series Ai = Ai(0) f(x) + Ai'(0) g(x) for -7 <= x <= 2 (its terms grow like
#   e^{(2/3)|x|^{3/2}}: absolute error < 1e-11); Ai(x) = sqrt(x / 3) / pi K_{1/3}(zeta), zeta = (2/3) x^{3/2},
#   for x > 2; and Hankel's expansion of J_{+-1/3} for x < -7 (DLMF 9.6.6, 9.7.9).
#
# Checked against mpmath at 400 points from 1e-8 to 1e4 (tests/minitensor/test_torch_special_more.py): relative
# error below 1e-12 away from the zeros, absolute below 3e-10 everywhere. (PyTorch's own float64 J0/J1 are off
# by up to 2e-7 between 5 and 8; minitensor's values are the more accurate ones there.)

_EULER_GAMMA = 0.5772156649015329
_AI0, _AI1 = 0.3550280538878172, -0.2588194037928068  # Ai(0), Ai'(0)


def _series_terms(x2, nu, n_terms):
    """The terms (x^2/4)^k / (k! (k + nu)!) of the Bessel series, k = 0..n_terms-1, as rows (nu = 0, 1)."""
    terms = [np.full_like(x2, 1.0 / math.factorial(nu))]
    for k in range(1, n_terms):
        terms.append(terms[-1] * x2 / (k * (k + nu)))
    return terms


def _hankel_pq(nu, x, n_terms=40):
    """Hankel's P and Q: P = sum_k (-1)^k a_2k / x^2k, Q = sum_k (-1)^k a_{2k+1} / x^{2k+1}."""
    mu = 4.0 * nu * nu
    p, q, term = np.ones_like(x), np.zeros_like(x), np.ones_like(x)
    for k in range(1, n_terms):
        term = term * (mu - (2 * k - 1) ** 2) / (k * 8 * x)
        sign = 1 if k % 4 in (0, 1) else -1
        if k % 2:
            q += sign * term
        else:
            p += sign * term
    return p, q


def _hankel_cos_sin(nu, x):
    """cos and sin of omega = x - nu pi / 2 - pi / 4, from cos x and sin x (x - pi/4 would round for large x)."""
    c, s = np.cos(x) / math.sqrt(2), np.sin(x) / math.sqrt(2)
    return (c + s, s - c) if nu == 0 else (s - c, -(s + c))


@np.errstate(invalid="ignore", over="ignore")
def bessel_j(nu, a):
    """The Bessel function of the first kind J_nu(x), nu = 0 or 1."""
    x = _float64(a)
    ax = np.abs(x)
    out = np.full_like(ax, np.nan)
    small, big = ax <= 2, (ax > 25) & np.isfinite(ax)
    mid = (ax > 2) & (ax <= 25)
    xs = ax[small]
    out[small] = sum(t * (-1) ** k for k, t in enumerate(_series_terms(xs * xs / 4, nu, 25))) * (xs / 2) ** nu
    t = 2 * math.pi * np.arange(64) / 64
    out[mid] = np.cos(nu * t - ax[mid][:, None] * np.sin(t)).mean(axis=1)
    xb = ax[big]
    p, q = _hankel_pq(nu, xb)
    cw, sw = _hankel_cos_sin(nu, xb)
    out[big] = np.sqrt(2 / (math.pi * xb)) * (p * cw - q * sw)
    return np.where(x < 0, -out, out) if nu == 1 else out


@np.errstate(invalid="ignore", over="ignore", divide="ignore")
def bessel_y(nu, a):
    """The Bessel function of the second kind Y_nu(x), nu = 0 or 1 (-inf at 0, NaN for x < 0)."""
    x = _float64(a)
    out = np.full_like(x, np.nan)
    small, big = (x > 0) & (x <= 17), (x > 17) & np.isfinite(x)
    xs = x[small]
    terms = _series_terms(xs * xs / 4, nu, 60)
    log_half = np.log(xs / 2)
    if nu == 0:  # Y0 = (2/pi)(ln(x/2) + gamma) J0 + (2/pi) sum_{k>=1} (-1)^{k+1} H_k (x^2/4)^k / (k!)^2
        harmonic, total = 0.0, np.zeros_like(xs)
        for k in range(1, len(terms)):
            harmonic += 1 / k
            total += (-1) ** (k + 1) * harmonic * terms[k]
        out[small] = 2 / math.pi * ((log_half + _EULER_GAMMA) * bessel_j(0, xs) + total)
    else:  # Y1 = -2/(pi x) + (2/pi) ln(x/2) J1 - (x / 2pi) sum_k (psi(k+1) + psi(k+2)) (-x^2/4)^k / (k! (k+1)!)
        psi, total = -_EULER_GAMMA, np.zeros_like(xs)
        for k, term in enumerate(terms):
            total += (-1) ** k * (2 * psi + 1 / (k + 1)) * term
            psi += 1 / (k + 1)
        out[small] = -2 / (math.pi * xs) + 2 / math.pi * log_half * bessel_j(1, xs) - xs / (2 * math.pi) * total
    xb = x[big]
    p, q = _hankel_pq(nu, xb)
    cw, sw = _hankel_cos_sin(nu, xb)
    out[big] = np.sqrt(2 / (math.pi * xb)) * (p * sw + q * cw)
    return np.where(x == 0, -np.inf, out)


def _scaled_k_integral(nu, x):
    """e^x K_nu(x) = int_0^inf e^{-x (cosh t - 1)} cosh(nu t) dt, trapezoid rule (for x >= 1)."""
    h = 0.05
    t = np.arange(0, 6 + h / 2, h)
    f = np.exp(-x[:, None] * (np.cosh(t) - 1)) * np.cosh(nu * t)
    return h * (f.sum(axis=1) - 0.5 * f[:, 0])


def _scaled_k_asymptotic(nu, x, n_terms=40):
    """e^x K_nu(x) ~ sqrt(pi / 2x) sum_k a_k(nu) / x^k."""
    mu = 4.0 * nu * nu
    total, term = np.ones_like(x), np.ones_like(x)
    for k in range(1, n_terms):
        term = term * (mu - (2 * k - 1) ** 2) / (k * 8 * x)
        total += term
    return np.sqrt(math.pi / (2 * x)) * total


def _scaled_k_large(nu, x):
    """e^x K_nu(x) for x > 2: the integral up to 25, Hankel's expansion beyond."""
    return np.where(x <= 25, _scaled_k_integral(nu, np.minimum(x, 25)), _scaled_k_asymptotic(nu, np.maximum(x, 25)))


@np.errstate(invalid="ignore", over="ignore", divide="ignore", under="ignore")
def bessel_k(nu, a, scaled=False):
    """The modified Bessel function of the second kind K_nu(x), nu = 0 or 1 (times e^x when `scaled`);
    +inf at 0, NaN for x < 0."""
    x = _float64(a)
    out = np.full_like(x, np.nan)
    small, big = (x > 0) & (x <= 2), (x > 2) & np.isfinite(x)
    xs = x[small]
    terms = _series_terms(xs * xs / 4, nu, 30)
    log_half = np.log(xs / 2)
    if nu == 0:  # K0 = -(ln(x/2) + gamma) I0 + sum_{k>=1} H_k (x^2/4)^k / (k!)^2
        harmonic, total = 0.0, np.zeros_like(xs)
        for k in range(1, len(terms)):
            harmonic += 1 / k
            total += harmonic * terms[k]
        series = -(log_half + _EULER_GAMMA) * bessel_i(0, xs) + total
    else:  # K1 = 1/x + ln(x/2) I1 - (x/4) sum_k (psi(k+1) + psi(k+2)) (x^2/4)^k / (k! (k+1)!)
        psi, total = -_EULER_GAMMA, np.zeros_like(xs)
        for k, term in enumerate(terms):
            total += (2 * psi + 1 / (k + 1)) * term
            psi += 1 / (k + 1)
        series = 1 / xs + log_half * bessel_i(1, xs) - xs / 4 * total
    out[small] = series * np.exp(xs) if scaled else series
    xb = x[big]
    out[big] = _scaled_k_large(nu, xb) if scaled else _scaled_k_large(nu, xb) * np.exp(-xb)
    out = np.where(x == 0, np.inf, out)
    return np.where(x == np.inf, 0.0, out)


@np.errstate(invalid="ignore", over="ignore", under="ignore")
def airy_ai(a):
    """Airy's function Ai(x), the solution of y'' = x y that decays as x -> +inf."""
    x = _float64(a)
    out = np.full_like(x, np.nan)
    small, pos, neg = (x >= -7) & (x <= 2), (x > 2) & np.isfinite(x), (x < -7) & np.isfinite(x)
    xs = x[small]
    x3 = xs ** 3
    f_term, g_term = np.ones_like(xs), xs.copy()
    f, g = f_term.copy(), g_term.copy()
    for k in range(1, 40):  # f = sum 3^k (1/3)_k x^{3k} / (3k)!, g = sum 3^k (2/3)_k x^{3k+1} / (3k+1)!
        f_term = f_term * x3 / ((3 * k - 1) * (3 * k))
        g_term = g_term * x3 / ((3 * k) * (3 * k + 1))
        f += f_term
        g += g_term
    out[small] = _AI0 * f + _AI1 * g
    xp = x[pos]
    zeta = 2 / 3 * xp ** 1.5
    out[pos] = np.sqrt(xp / 3) / math.pi * _scaled_k_large(1 / 3, zeta) * np.exp(-zeta)
    xn = -x[neg]
    zeta = 2 / 3 * xn ** 1.5
    p, q = _hankel_pq(1 / 3, zeta)
    cw, sw = _hankel_cos_sin(0, zeta)  # Ai(-x) = x^{-1/4} / sqrt(pi) (P cos(zeta - pi/4) - Q sin(zeta - pi/4))
    out[neg] = xn ** -0.25 / math.sqrt(math.pi) * (p * cw - q * sw)
    return out


# The orthogonal polynomials, by their three-term recurrences p_{k+1} = step(k, x, p_k, p_{k-1}) from p_0 = 1
# and p_1: exact integers at the endpoints (T_n(1) = 1, ...), stable for |x| <= 1 (the Chebyshev ones, whose
# error grows like n ulps there), and what PyTorch computes for |x| > 1 (so overflow gives the same inf/NaN).
_POLYNOMIALS = {  # name: (p_1(x), step(k, x, p_k, p_{k-1}))
    "chebyshev_polynomial_t": (lambda x: x, lambda k, x, p, q: (x + x) * p - q),
    "chebyshev_polynomial_u": (lambda x: x + x, lambda k, x, p, q: (x + x) * p - q),
    "chebyshev_polynomial_v": (lambda x: x + x - 1, lambda k, x, p, q: (x + x) * p - q),
    "chebyshev_polynomial_w": (lambda x: x + x + 1, lambda k, x, p, q: (x + x) * p - q),
    "hermite_polynomial_h": (lambda x: x + x, lambda k, x, p, q: (x + x) * p - (k + k) * q),
    "hermite_polynomial_he": (lambda x: x, lambda k, x, p, q: x * p - k * q),
    "laguerre_polynomial_l": (lambda x: 1 - x, lambda k, x, p, q: ((k + k + 1 - x) * p - k * q) / (k + 1)),
    "legendre_polynomial_p": (lambda x: x, lambda k, x, p, q: ((k + k + 1) * x * p - k * q) / (k + 1)),
}


def polynomial_degrees(n):
    """n as int64 degrees, truncated toward zero as PyTorch casts them; NaN, +-inf and values beyond int64
    become -1 (PyTorch's cast makes them the most negative int64, whose polynomial is 0)."""
    n = np.asarray(n)
    if n.dtype.kind in "biu":
        return n.astype(np.int64)
    with np.errstate(invalid="ignore"):
        inside = np.isfinite(n) & (np.abs(n) < 2.0 ** 63)
        return np.where(inside, np.trunc(np.where(inside, n, 0)), -1).astype(np.int64)


@np.errstate(invalid="ignore", over="ignore")
def orthogonal_polynomial(name, x, n):
    """p_n(x) of the named family (`_POLYNOMIALS`; 'shifted_' + a Chebyshev name evaluates it at 2x - 1),
    elementwise over x and the degrees n (broadcast); 0 where n < 0. Costs max(n) steps over the whole array."""
    shifted = name.startswith("shifted_")
    first, step = _POLYNOMIALS[name[len("shifted_"):] if shifted else name]
    x = np.asarray(x, np.float64)
    x, n = np.broadcast_arrays(x + x - 1 if shifted else x, polynomial_degrees(n))
    out = np.where(n == 0, 1.0, 0.0)
    if n.size == 0 or n.max() < 1:
        return out
    previous, current = np.ones_like(x), first(x)
    out = np.where(n == 1, current, out)
    for k in range(1, int(n.max())):
        previous, current = current, step(k, x, current, previous)
        out = np.where(n == k + 1, current, out)
    return out

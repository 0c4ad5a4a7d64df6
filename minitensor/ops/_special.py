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
    out = q if upper else p
    out = np.where(x == 0, 1.0 if upper else 0.0, out)
    out = np.where(np.isposinf(x) & (a > 0), 0.0 if upper else 1.0, out)
    return np.where((a < 0) | (x < 0) | np.isnan(a) | np.isnan(x), np.nan, out)

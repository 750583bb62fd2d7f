// Runtime of the what-if panels (gpuconcepts.whatif). It runs inside the generated script,
// after DATA (symbols, formulas, GPUs, panels) and FORMULAS (each formula printed from sympy).
// Numbers are exact rationals of BigInts, as the library's sympy values are; a result is
// converted to a float (correctly rounded) only when it is not whole, as Formula.__call__ does.

// -- exact rationals -------------------------------------------------------------------------
const gcd = (a, b) => { while (b) { [a, b] = [b, a % b]; } return a < 0n ? -a : a; };
const make = (n, d) => {
  if (d < 0n) { n = -n; d = -d; }
  const g = gcd(n, d) || 1n;
  return { n: n / g, d: d / g };
};
const R = {
  int: (text) => ({ n: BigInt(text), d: 1n }),
  frac: (p, q) => make(BigInt(p), BigInt(q)),
  mul: (...xs) => xs.reduce((a, b) => make(a.n * b.n, a.d * b.d)),
  add: (...xs) => xs.reduce((a, b) => make(a.n * b.d + b.n * a.d, a.d * b.d)),
  inv: (a) => make(a.d, a.n),
  pow: (a, k) => make(a.n ** BigInt(k), a.d ** BigInt(k)),
  cmp: (a, b) => { const x = a.n * b.d, y = b.n * a.d; return x < y ? -1 : x > y ? 1 : 0; },
  max: (...xs) => xs.reduce((a, b) => (R.cmp(a, b) >= 0 ? a : b)),
  min: (...xs) => xs.reduce((a, b) => (R.cmp(a, b) <= 0 ? a : b)),
  isInt: (a) => a.d === 1n,
  // Rounding to a whole number, as sympy's floor and ceiling (toward -inf and +inf).
  floor: (a) => { const q = a.n / a.d; return make(a.n < 0n && q * a.d !== a.n ? q - 1n : q, 1n); },
  ceil: (a) => { const q = a.n / a.d; return make(a.n > 0n && q * a.d !== a.n ? q + 1n : q, 1n); },
  // A piecewise formula: condition, value thunk, ...; the first case that holds.
  cases(...pairs) {
    for (let i = 0; i < pairs.length; i += 2) if (pairs[i]) return pairs[i + 1]();
    throw new RangeError("no case of the piecewise formula holds");
  },
  // The exact value of a decimal literal such as "0.5", "989e12" or "1e+16".
  decimal(text) {
    const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text);
    const whole = m[2] || "", frac = m[3] || "";
    const exponent = Number(m[4] || 0) - frac.length;
    let n = BigInt((whole + frac) || "0");
    if (m[1] === "-") n = -n;
    return exponent >= 0 ? make(n * 10n ** BigInt(exponent), 1n) : make(n, 10n ** BigInt(-exponent));
  },
  // The float nearest to a rational (ties to even), like Python's float(Fraction).
  toNumber(a) {
    if (a.n === 0n) return 0;
    const negative = a.n < 0n;
    const n = negative ? -a.n : a.n;
    const shift = 64 - (n.toString(2).length - a.d.toString(2).length);
    const num = shift > 0 ? n << BigInt(shift) : n;
    const den = shift > 0 ? a.d : a.d << BigInt(-shift);
    const sticky = num % den === 0n ? 0n : 1n; // 64+ bits: one sticky bit decides the tie
    let x = Number((num / den) | sticky);
    for (let s = shift; s !== 0;) { const step = Math.max(-1000, Math.min(1000, s)); x /= 2 ** step; s -= step; }
    return negative ? -x : x;
  },
};

// -- numbers as the library prints them (gpuconcepts.units) ------------------------------------
// A port of units.py, value for value. Python's types are kept apart because the policy depends
// on them: a bigint is an int, a number is a float, a rational {n, d} is a Fraction. Decimals are
// exact rationals here, rounded where Python's decimal module rounds: a Fraction to 60
// significant digits (units._CONTEXT), a quotient of Decimals to 28 (the default context).
const UNITS_PREC = 60, DEFAULT_PREC = 28, FIXED_MAX = 15, FIXED_MIN = -4, FLOAT_EXACT = 2 ** 53;
const pow10 = (k) => 10n ** BigInt(k);
const absB = (a) => (a < 0n ? -a : a);
const group = (digits) => digits.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
const grouped = (n) => (n < 0n ? "-" : "") + group(absB(n).toString()); // format(Decimal(n), ",")
// Python's repr(float): shortest digits, exponent below 1e-4 and from 1e16.
function pyRepr(x) {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? "nan" : x > 0 ? "inf" : "-inf";
  if (Number.isInteger(x) && Math.abs(x) < 1e16) return Object.is(x, -0) ? "-0.0" : `${x}.0`;
  const [mantissa, exp] = x.toExponential().split("e");
  const e = Number(exp);
  if (e < -4 || e >= 16) return `${mantissa}e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;
  return String(x);
}
// The exact value of a float (Fraction(x), Decimal(x)).
function exactOf(x) {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const hi = view.getUint32(0), lo = view.getUint32(4);
  const biased = (hi >>> 20) & 0x7ff;
  let m = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
  if (biased) m |= 1n << 52n;
  if (hi >>> 31) m = -m;
  const e = (biased || 1) - 1075;
  return e >= 0 ? make(m << BigInt(e), 1n) : make(m, 1n << BigInt(-e));
}
const isFloat = (v) => typeof v === "number";
// Fraction(v): exact for an int, a float or a Fraction.
const fractionOf = (v) => (typeof v === "bigint" ? { n: v, d: 1n } : isFloat(v) ? exactOf(v) : v);
// round(q * 10**digits) with ties to even, as a BigInt (digits may be negative).
function roundEven(q, digits) {
  const n = digits >= 0 ? q.n * pow10(digits) : q.n;
  const d = digits >= 0 ? q.d : q.d * pow10(-digits);
  const sign = n < 0n ? -1n : 1n;
  const a = n * sign;
  let whole = a / d;
  const twice = 2n * (a % d);
  if (twice > d || (twice === d && whole % 2n === 1n)) whole += 1n;
  return whole * sign;
}
// Decimal.adjusted(): the exponent of the leading digit, floor(log10 |q|), for q != 0.
function adjusted(q) {
  const a = absB(q.n);
  const k = a.toString().length - q.d.toString().length;
  return (k >= 0 ? a >= q.d * pow10(k) : a * pow10(-k) >= q.d) ? k : k - 1;
}
// q rounded (half to even) to a multiple of 10**exp: Decimal.quantize.
function quantize(q, exp) {
  const c = roundEven(q, -exp);
  return exp <= 0 ? make(c, pow10(-exp)) : make(c * pow10(exp), 1n);
}
// q to `prec` significant digits, as a decimal context of that precision rounds.
const toPrecision = (q, prec) => (q.n === 0n ? q : quantize(q, adjusted(q) - prec + 1));
const divided = (q, by) => toPrecision(make(q.n, q.d * BigInt(by)), DEFAULT_PREC); // Decimal / int
const atLeast = (q, bound) => R.cmp({ n: absB(q.n), d: q.d }, bound) >= 0; // abs(q) >= bound
// units._decimal: ints and floats exactly, a Fraction to 60 digits.
const decimalOf = (v) => (typeof v === "bigint" || isFloat(v) ? fractionOf(v) : toPrecision(v, UNITS_PREC));
// The decimal places a rational with a power-of-ten denominator needs (its 2s and 5s).
function places(d) {
  let twos = 0, fives = 0;
  while (d % 2n === 0n) { d /= 2n; twos += 1; }
  while (d % 5n === 0n) { d /= 5n; fives += 1; }
  return Math.max(twos, fives);
}
// format(Decimal, ",.{digits}f") of a decimal rational (rounding half to even past `digits`).
function fixedText(q, digits, negative = q.n < 0n) {
  const r = absB(roundEven(q, digits)).toString().padStart(digits + 1, "0");
  const whole = r.slice(0, r.length - digits), frac = r.slice(r.length - digits);
  return (negative ? "-" : "") + group(whole) + (digits ? `.${frac}` : "");
}
// units._plain_decimal: fixed notation, separators, no trailing zeros.
function plainDecimal(q, negative = q.n < 0n) {
  const text = fixedText(q, places(q.d), negative);
  return text.includes(".") ? text.replace(/0+$/, "").replace(/\.$/, "") : text;
}
const SUPERSCRIPT = { "-": "⁻", 0: "⁰", 1: "¹", 2: "²", 3: "³", 4: "⁴", 5: "⁵", 6: "⁶", 7: "⁷", 8: "⁸", 9: "⁹" };
// units._parts: [mantissa, exponent], the exponent null in fixed notation.
function parts(v, digits) {
  if (isFloat(v) && !Number.isFinite(v)) throw new RangeError(`${pyRepr(v)} is not a number a reader can use`);
  const rounded = toPrecision(decimalOf(v), digits);
  if (rounded.n === 0n) return [plainDecimal(rounded, Object.is(v, -0)), null];
  const exponent = adjusted(rounded);
  if (exponent >= FIXED_MIN && exponent < FIXED_MAX) return [plainDecimal(rounded), null];
  const mantissa = exponent >= 0 ? make(rounded.n, rounded.d * pow10(exponent)) : make(rounded.n * pow10(-exponent), rounded.d);
  return [plainDecimal(mantissa), exponent];
}
function significant(v, digits = 3) {
  const [mantissa, exponent] = parts(v, digits);
  if (exponent === null) return mantissa;
  return `${mantissa}×10${String(exponent).replace(/./g, (c) => SUPERSCRIPT[c])}`;
}
function isWhole(v) {
  if (typeof v === "bigint") return true;
  if (!isFloat(v)) return v.d === 1n;
  return Number.isFinite(v) && Number.isInteger(v) && Math.abs(v) < FLOAT_EXACT;
}
const wholeOf = (v) => (typeof v === "bigint" ? v : isFloat(v) ? BigInt(v) : v.n); // int(v) of a whole v
const plainNumber = (v) => (isWhole(v) ? grouped(wholeOf(v)) : significant(v));
function latexNumber(v) {
  if (isWhole(v)) return grouped(wholeOf(v)).replaceAll(",", "{,}");
  const [text, exponent] = parts(v, 3);
  const mantissa = text.replaceAll(",", "{,}");
  return exponent === null ? mantissa : `${mantissa} \\times 10^{${exponent}}`;
}
// units._two_decimals of a decimal rational.
function twoDecimals(q) {
  if (adjusted(q) >= FIXED_MAX) return significant(q, 4);
  return plainDecimal(quantize(q, -2), q.n < 0n);
}
const DECIMAL = ["bytes", "kB", "MB", "GB", "TB", "PB"];
const BINARY = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB"];
function scaled(v, base, names) {
  let value = decimalOf(v), index = 0;
  while (atLeast(value, { n: BigInt(base), d: 1n }) && index < names.length - 1) {
    value = divided(value, base);
    index += 1;
  }
  return `${value.n === 0n ? plainDecimal(quantize(value, -2), Object.is(v, -0)) : twoDecimals(value)} ${names[index]}`;
}
const decimalBytes = (v) => scaled(v, 1000, DECIMAL);
const binaryBytes = (v) => scaled(v, 1024, BINARY);
function exactNumber(v, maxPlaces = 6) {
  if (isWhole(v)) return grouped(wholeOf(v));
  const value = fractionOf(v);
  for (let k = 1; k <= maxPlaces; k += 1) {
    if ((value.n * pow10(k)) % value.d === 0n) return fixedText(toPrecision(value, DEFAULT_PREC), k);
  }
  return significant(v);
}
const describeBytes = (v) => `${exactNumber(v)} bytes (${decimalBytes(v)}, ${binaryBytes(v)})`;
const WORDS = [[12, "trillion"], [9, "billion"], [6, "million"], [3, "thousand"]];
function inWords(v) {
  const value = decimalOf(v);
  if (value.n === 0n) return plainNumber(v);
  if (adjusted(value) >= WORDS[0][0] + 3) return significant(v, 3);
  for (const [power, word] of WORDS) {
    if (adjusted(value) >= power) return `${twoDecimals(divided(value, pow10(power)))} ${word}`;
  }
  return plainNumber(v);
}
// float(v), which refuses an int past the largest float.
function pyFloat(v) {
  const x = typeof v === "bigint" ? Number(v) : isFloat(v) ? v : R.toNumber(v);
  if (typeof v === "bigint" && !Number.isFinite(x)) throw new RangeError("int too large to convert to float");
  return x;
}
function describe(v, kind) {
  if (kind === "bytes") return describeBytes(v);
  if (kind === "seconds") return si(pyFloat(v), "s");
  const unit = kind === "count" ? "" : ` ${kind}`; // a count is a bare number, not a unit
  const value = decimalOf(v);
  if (["MACs", "FLOPs", "count"].includes(kind) && isWhole(v) && value.n !== 0n && adjusted(value) >= 6) {
    return `${plainNumber(v)}${unit} (${inWords(v)})`;
  }
  return `${plainNumber(v)}${unit}`;
}
const SI = [[1e15, "P"], [1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]];
function si(x, unit, digits = 3) {
  const r = toPrecision(decimalOf(x), digits);
  const shown = Math.abs(Number(r.n) / Number(r.d)); // the prefix of 999.6 µs is m: 1 ms
  if (unit === "s" && shown > 0 && shown < 1) {
    for (const [scale, prefix] of [[1e-3, "ms"], [1e-6, "µs"], [1e-9, "ns"], [1e-12, "ps"]]) {
      if (shown >= scale) return `${significant(x / scale, digits)} ${prefix}`;
    }
    return `${significant(x, digits)} s`;
  }
  for (const [scale, prefix] of SI) if (shown >= scale) return `${significant(x / scale, digits)} ${prefix}${unit}`;
  return `${significant(x, digits)} ${unit}`.replace(/\s+$/, "");
}
const howMany = (ratio) => (Math.abs(ratio) >= 10 ? grouped(roundEven(exactOf(ratio), 0)) : significant(ratio, 2));
const times = (ratio) => `${howMany(ratio)}×`;
function percent(fraction, digits = 2) {
  if (fraction === 0) return "0%";
  const q = fractionOf(fraction);
  return `${significant(make(q.n * 100n, q.d), digits)}%`;
}
const UNITS = {
  significant, plainNumber, latexNumber, exactNumber, decimalBytes, binaryBytes, describeBytes,
  inWords, describe, si, howMany, times, percent,
};

// -- formulas --------------------------------------------------------------------------------
const CODE = FORMULAS(R);
const CASE = CASES(R); // for a piecewise formula, the index of the case the values select
const FLOAT_MIN = 2.2250738585072014e-308; // sys.float_info.min
// formula(**values): {exact, value, isInt, text}, value as Python holds it (an int when whole,
// else a float) and text as Python prints it; or {exact, error} for a result no float holds.
function evaluate(name, values) {
  const exact = CODE[name](values);
  if (R.isInt(exact)) return { exact, value: exact.n, isInt: true, text: exact.n.toString() };
  const number = R.toNumber(exact);
  if (!Number.isFinite(number) || Math.abs(number) < FLOAT_MIN) {
    const params = DATA.formulas[name].params; // named in the order given, as Python does
    const given = Object.keys(values).filter((s) => params.includes(s)).map((s) => `${s}=${significant(values[s])}`).join(", ");
    return { exact, error: `${name}: the result, about ${significant(exact)}, is beyond what a float can hold (about 2.2e-308 to 1.8e308); got ${given}` };
  }
  return { exact, value: number, isInt: false, text: pyRepr(number) };
}
// formula._short_decimal: LaTeX of an exact decimal of at most six places, else null.
function shortDecimal(q, maxDigits = 6) {
  for (let digits = 0; digits <= maxDigits; digits += 1) {
    const scaledN = q.n * pow10(digits);
    if (scaledN % q.d === 0n) {
      const whole = latexNumber(q.n / q.d); // int(value): toward zero, as Python's int()
      return digits ? `${whole}.${String(absB(scaledN / q.d) % pow10(digits)).padStart(digits, "0")}` : whole;
    }
  }
  return null;
}
// formula.worked(): the template with the numbers in, then "= exact" or "\approx rounded".
function worked(name, values) {
  const f = DATA.formulas[name];
  const template = f.worked[name in CASE ? CASE[name](values) : 0]; // the case Python shows
  const body = template.replace(/@(\w+)@/g, (_, s) => shortDecimal(values[s]) ?? latexNumber(values[s]));
  const exact = CODE[name](values);
  const decimal = shortDecimal(exact);
  return `${body} ${decimal !== null ? `= ${decimal}` : `\\approx ${latexNumber(exact)}`}`;
}

// -- inputs: the rules of `gpuconcepts calc` (cli/calc.py, _parse_value) and Formula._exact_input -------
const MAX_DIGITS = 10000;
// What Python's str.strip() removes (str.isspace), and its repr() of a string.
const SPACE = "\\t\\n\\v\\f\\r\\x1c-\\x20\\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
const pyStrip = (t) => t.replace(new RegExp(`^[${SPACE}]+|[${SPACE}]+$`, "g"), "");
const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;
function pyReprStr(text) {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = "";
  for (const ch of text) {
    const code = ch.codePointAt(0);
    if (ch === quote || ch === "\\") out += `\\${ch}`;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (ch !== " " && UNPRINTABLE.test(ch)) {
      const hex = code.toString(16);
      out += code <= 0xff ? `\\x${hex.padStart(2, "0")}` : code <= 0xffff ? `\\u${hex.padStart(4, "0")}` : `\\U${hex.padStart(8, "0")}`;
    } else out += ch;
  }
  return `${quote}${out}${quote}`;
}
// A Unicode decimal digit as ASCII, as Decimal() reads it (digits come in runs of ten from 0).
function asciiDigit(ch) {
  if (ch >= "0" && ch <= "9") return ch;
  let code = ch.codePointAt(0), start = code;
  while (/\p{Nd}/u.test(String.fromCodePoint(start - 1))) start -= 1;
  return String((code - start) % 10);
}
const EMAX = 999999999999999999n, ETINY = -1999999999999999997n; // libmpdec's limits
// Decimal(text) as {finite, n, exp} (value n * 10**exp; exp a BigInt), or null where Decimal
// raises InvalidOperation.
function parseDecimal(text) {
  let ascii = "";
  for (const ch of text) {
    if (ch.codePointAt(0) < 128) ascii += ch;
    else if (new RegExp(`[${SPACE}]`).test(ch)) ascii += " ";
    else if (/\p{Nd}/u.test(ch)) ascii += asciiDigit(ch);
    else return null;
  }
  ascii = ascii.replace(/^[ \t\n\v\f\r]+|[ \t\n\v\f\r]+$/g, "");
  if (/^[+-]?(inf|infinity|s?nan\d*)$/i.test(ascii)) return { finite: false };
  const m = /^([+-]?)(?:(\d+)(?:\.(\d*))?|\.(\d+))(?:[eE]([+-]?\d+))?$/.exec(ascii);
  if (!m) return null;
  const digits = (m[2] || "") + (m[3] || m[4] || "");
  const exp = BigInt(m[5] || "0") - BigInt((m[3] || m[4] || "").length);
  const n = BigInt(m[1] + digits);
  const top = exp + BigInt(n === 0n ? 0 : absB(n).toString().length - 1);
  if (exp < ETINY || top > EMAX) return null;
  return { finite: true, n, exp };
}
// A JSON number for an exact decimal input (digits when whole, so Python reads it exactly).
function jsonOfDecimal(q) {
  if (q.d === 1n) return q.n.toString();
  const text = plainDecimal(q).replaceAll(",", "");
  const e = adjusted(q);
  if (e >= -6) return text;
  const digits = (absB(q.n) * pow10(places(q.d)) / q.d).toString().replace(/0+$/, "");
  return `${q.n < 0n ? "-" : ""}${digits[0]}${digits.length > 1 ? `.${digits.slice(1)}` : ""}e${e}`;
}
// Whether a value lies in a symbol's range (symbols.Symbol.allows).
function allows(range, value) {
  const low = R.decimal(range.low), c = R.cmp(value, low);
  if (!(c > 0 || (range.lowAllowed && c === 0))) return false;
  if (range.high === null) return true;
  const h = R.cmp(value, R.decimal(range.high));
  return h < 0 || (range.highAllowed && h === 0);
}
// {value, json} for a valid entry, {error} naming the symbol and the rule otherwise.
function parseInput(name, raw) {
  const symbol = DATA.symbols[name];
  const what = `${name} (${symbol.meaning})`;
  if (pyStrip(raw) === "") return { error: `missing value for ${what}` };
  const number = parseDecimal(pyStrip(raw.replaceAll("_", "")));
  if (number === null) return { error: `${what} must be a number; got ${pyReprStr(raw)}` };
  if (!number.finite) return { error: `${what} must be finite; got ${pyReprStr(raw)}` };
  const top = number.exp + BigInt(number.n === 0n ? 0 : absB(number.n).toString().length - 1);
  if (number.n !== 0n && absB(top) >= BigInt(MAX_DIGITS)) {
    const head = Array.from(raw).slice(0, 20).join("");
    return { error: `${what} must have fewer than ${grouped(BigInt(MAX_DIGITS))} digits; got ${pyReprStr(head)}...` };
  }
  const value = number.n === 0n ? R.int("0")
    : number.exp >= 0n ? make(number.n * 10n ** number.exp, 1n) : make(number.n, 10n ** -number.exp);
  if (symbol.count && value.d !== 1n) {
    return { error: `${what} must be a whole number (it is a count); got ${significant(value)}` };
  }
  if (!allows(symbol.range, value)) {
    return { error: `${what} ${symbol.rule}; got ${value.d === 1n ? value.n.toString() : significant(value)}` };
  }
  return { value, json: jsonOfDecimal(value) };
}

const API = { R, DATA, UNITS, evaluate, worked, parseInput, pyRepr };
if (typeof module === "object" && module.exports) module.exports = API;
if (typeof document === "undefined") return;

// -- the page --------------------------------------------------------------------------------
const el = (tag, attrs = {}, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  node.append(...children);
  return node;
};
const argsJson = (names, jsonOf) => `{${names.map((s) => `${JSON.stringify(s)}:${jsonOf[s]}`).join(",")}}`;
const math = (tex, display) => (display ? `\\[${tex}\\]` : `\\(${tex}\\)`);
let typesetting = Promise.resolve();
function typeset(nodes) {
  const mj = window.MathJax;
  if (!mj || !mj.startup || !mj.startup.promise) return;
  typesetting = typesetting
    .then(() => mj.startup.promise)
    .then(() => { if (mj.typesetClear) mj.typesetClear(nodes); return mj.typesetPromise(nodes); })
    .catch((error) => console.warn("gpuconcepts what-if: MathJax could not typeset", error));
}

function setOutput(node, name, params, jsonOf, values) {
  node.setAttribute("data-formula", name);
  if (params.some((s) => !(s in values))) {
    node.setAttribute("data-args", "");
    node.setAttribute("data-value", "");
    node.textContent = "—";
    return null;
  }
  const result = evaluate(name, values);
  node.setAttribute("data-args", argsJson(params, jsonOf));
  node.setAttribute("data-value", result.error ? "" : result.text);
  if (!result.error) return result;
  node.textContent = result.error; // the library's refusal, as `gpuconcepts calc` prints it
  return null;
}
// A time as the book prints it (units.seconds); a whole count of seconds past any float in full.
const secondsText = (v) => (Number.isFinite(Number(v)) ? describe(v, "seconds") : `${significant(v)} s`);

const SVG = "http://www.w3.org/2000/svg";
const svg = (tag, attrs = {}) => {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
};
// A log-log roofline: the chosen GPU's roofs (from attainable_flops), the workload's point and
// the build's measured kernels (the page's Run, when it carries one).
function drawChart(box, gpu, dtype, P, beta, ridgeResult, point, measured) {
  const W = 520, H = 320, left = 64, right = 16, top = 16, bottom = 44;
  const ridge = ridgeResult.exact, intensity = point.exact;
  const x = R.toNumber(intensity), r = R.toNumber(ridge);
  const xs = [x, r, ...measured.map((m) => m.intensity)], ys = measured.map((m) => m.flops_per_s);
  const lo = Math.floor(Math.log10(Math.min(...xs))) - 1, hi = Math.ceil(Math.log10(Math.max(...xs))) + 1;
  const roof = (i) => R.toNumber(CODE.attainable_flops({ I: R.decimal(pyRepr(i)), P, beta }));
  const yLo = Math.floor(Math.log10(Math.min(roof(10 ** lo), ...ys)));
  const yHi = Math.ceil(Math.log10(Math.max(R.toNumber(P), ...ys)));
  const px = (i) => left + ((Math.log10(i) - lo) / (hi - lo)) * (W - left - right);
  const py = (f) => top + ((yHi - Math.log10(f)) / (yHi - yLo)) * (H - top - bottom);
  const label = `Roofline of ${gpu}, ${dtype}: ridge at ${describe(ridgeResult.value, "FLOP/byte")}; `
    + `the workload at ${describe(point.value, "FLOP/byte")} is ${R.cmp(intensity, ridge) < 0 ? "memory" : "compute"}-bound`
    + (measured.length ? `; with this build's ${measured.length} measured kernels` : "");
  const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": label, class: "gc-chart" });
  const title = svg("title"); title.textContent = label; chart.append(title);
  for (let k = lo; k <= hi; k += 1) {
    chart.append(svg("line", { x1: px(10 ** k), x2: px(10 ** k), y1: top, y2: H - bottom, class: "gc-grid" }));
    const t = svg("text", { x: px(10 ** k), y: H - bottom + 16, "text-anchor": "middle" });
    t.textContent = `1e${k}`; chart.append(t);
  }
  for (let k = yLo; k <= yHi; k += 1) {
    chart.append(svg("line", { x1: left, x2: W - right, y1: py(10 ** k), y2: py(10 ** k), class: "gc-grid" }));
    const t = svg("text", { x: left - 6, y: py(10 ** k) + 4, "text-anchor": "end" });
    t.textContent = `1e${k}`; chart.append(t);
  }
  const corners = [10 ** lo, r, 10 ** hi].map((i) => `${px(i)},${py(roof(i))}`).join(" ");
  chart.append(svg("polyline", { points: corners, class: "gc-roof" }));
  chart.append(svg("line", { x1: px(r), x2: px(r), y1: top, y2: H - bottom, class: "gc-ridge" }));
  const roofName = svg("text", { x: W - right - 4, y: py(R.toNumber(P)) - 6, "text-anchor": "end" });
  roofName.textContent = `${gpu}, ${dtype}: ridge ${describe(ridgeResult.value, "FLOP/byte")}`;
  chart.append(roofName);
  for (const m of measured) { // this build's kernels, where they ran (not where the roofs say)
    const mark = svg("rect", { x: px(m.intensity) - 3, y: py(m.flops_per_s) - 3, width: 6, height: 6,
      class: "gc-measured", "data-workload": m.workload, "data-intensity": pyRepr(m.intensity) });
    const tip = svg("title");
    tip.textContent = `${m.workload}: ${describe(m.intensity, "FLOP/byte")}, ${si(m.flops_per_s, "FLOP/s")} measured`;
    mark.append(tip);
    chart.append(mark);
  }
  const dot = svg("circle", { cx: px(x), cy: py(roof(x)), r: 6, class: "gc-point", "data-intensity": pyRepr(x) });
  chart.append(dot);
  const xl = svg("text", { x: (left + W - right) / 2, y: H - 8, "text-anchor": "middle" });
  xl.textContent = "arithmetic intensity (FLOP/byte)";
  const yl = svg("text", { x: 14, y: (top + H - bottom) / 2, transform: `rotate(-90 14 ${(top + H - bottom) / 2})`, "text-anchor": "middle" });
  yl.textContent = "attainable FLOP/s";
  chart.append(xl, yl);
  box.replaceChildren(chart);
}

// This build's Run, when the page carries it (gpuconcepts.whatif.run_html): its measured peaks
// become one more choice of roofs on a chart panel, and its kernels are drawn on the chart.
const RUN = (() => {
  const island = document.querySelector("script.gc-run-data");
  return island ? JSON.parse(island.textContent) : null;
})();
const MEASURED = "this build's measured peaks";

function buildPanel(root) {
  const id = root.getAttribute("data-panel");
  const panel = DATA.panels[id];
  const run = panel.chart ? RUN : null;
  const gpus = run ? [...DATA.gpus, {
    name: MEASURED, measured: true, flops_per_s: { [run.dtype]: run.flops_per_s }, bytes_per_s: run.bytes_per_s,
  }] : DATA.gpus;
  const prefix = `gc-${id}`;
  root.replaceChildren();
  root.setAttribute("role", "group");
  root.setAttribute("aria-labelledby", `${prefix}-title`);
  root.append(el("p", { class: "gc-title", id: `${prefix}-title` }, panel.title));

  const inputs = {};
  const fields = el("div", { class: "gc-inputs" });
  for (const name of panel.symbols) {
    const s = DATA.symbols[name];
    const input = el("input", {
      id: `${prefix}-${name}`, "data-symbol": name, type: "text", inputmode: "decimal",
      autocomplete: "off", spellcheck: "false", value: panel.defaults[name],
      "aria-describedby": `${prefix}-${name}-help`,
    });
    const fromGpu = name in DATA.gpu_symbols ? `; set by the GPU: ${DATA.gpu_symbols[name]}` : "";
    const help = el("span", { id: `${prefix}-${name}-help`, class: "gc-help" }, `${s.meaning} (${s.unit}; ${s.domain}${fromGpu})`);
    fields.append(el("div", { class: "gc-field" },
      el("label", { for: input.id }, el("span", { class: "gc-sym" }, name)), input, help));
    inputs[name] = input;
  }
  const gpuSelect = el("select", { id: `${prefix}-gpu`, "data-control": "gpu" });
  for (const g of gpus) gpuSelect.append(el("option", { value: g.name }, g.measured ? `${g.name} (${run.label})` : g.name));
  gpuSelect.value = DATA.default_gpu;
  const dtypeSelect = el("select", { id: `${prefix}-dtype`, "data-control": "dtype" });
  fields.append(
    el("div", { class: "gc-field" }, el("label", { for: gpuSelect.id }, run ? "roofs (a datasheet GPU or this build)" : "GPU (datasheet)"), gpuSelect),
    el("div", { class: "gc-field" }, el("label", { for: dtypeSelect.id }, "data type of its peak"), dtypeSelect),
  );
  root.append(fields);

  const table = el("table", { class: "gc-outputs" });
  const outputs = {};
  for (const name of panel.outputs) {
    const f = DATA.formulas[name];
    const out = el("output", {}); // only the verdict is a live region: one announcement a change
    out.htmlFor = DATA.formulas[name].params.map((s) => `${prefix}-${s}`).join(" ");
    outputs[name] = out;
    table.append(el("tr", {}, el("th", { scope: "row" }, el("code", {}, name), " ",
      el("span", { class: "math notranslate nohighlight" }, math(f.equation, false))), el("td", {}, out)));
  }
  root.append(table);
  const derivations = el("div", { class: "gc-derivations" }, el("p", { class: "gc-subtitle" }, "Worked derivations"));
  const workedNodes = {};
  for (const name of panel.outputs) {
    workedNodes[name] = el("div", { class: "math notranslate nohighlight gc-worked", "data-worked": name });
    derivations.append(workedNodes[name]);
  }
  root.append(derivations);
  const bound = el("div", { class: "gc-bound", "aria-live": "polite" });
  const chartBox = panel.chart ? el("div", { class: "gc-chart-box" }) : null;
  root.append(bound);
  if (chartBox) root.append(chartBox);

  function fillDtypes(preferred) {
    const gpu = gpus.find((g) => g.name === gpuSelect.value);
    const listed = Object.keys(gpu.flops_per_s);
    const width = DATA.dtypes[preferred];
    const keep = listed.includes(preferred) ? preferred
      : listed.find((d) => DATA.dtypes[d] === width) || listed[0];
    dtypeSelect.replaceChildren(...listed.map((d) => el("option", { value: d }, d)));
    dtypeSelect.value = keep;
  }
  fillDtypes(panel.dtype);
  // The symbols the GPU sets (its peak, bandwidth, memory), still editable after.
  function fillFromGpu() {
    const gpu = gpus.find((g) => g.name === gpuSelect.value);
    const taken = { P: gpu.flops_per_s[dtypeSelect.value], beta: gpu.bytes_per_s, M_dev: gpu.memory_bytes };
    for (const [name, value] of Object.entries(taken)) {
      if (inputs[name] && value !== undefined) inputs[name].value = pyRepr(value).replace(/\.0$/, "");
    }
  }

  let pending = null;
  function update() {
    const values = {}, jsonOf = {};
    for (const [name, input] of Object.entries(inputs)) {
      const parsed = parseInput(name, input.value);
      const field = input.parentElement;
      field.querySelectorAll(".gc-error").forEach((e) => e.remove());
      if (parsed.error) {
        input.setAttribute("aria-invalid", "true");
        const error = el("span", { class: "gc-error", id: `${prefix}-${name}-error`, role: "alert" }, parsed.error);
        field.append(error);
        input.setAttribute("aria-describedby", `${prefix}-${name}-help ${error.id}`);
      } else {
        input.removeAttribute("aria-invalid");
        input.setAttribute("aria-describedby", `${prefix}-${name}-help`);
        values[name] = parsed.value;
        jsonOf[name] = parsed.json;
      }
    }
    const results = {};
    for (const name of panel.outputs) {
      const f = DATA.formulas[name];
      const result = setOutput(outputs[name], name, f.params, jsonOf, values);
      if (result) outputs[name].textContent = describe(result.value, f.kind);
      results[name] = result;
      const ready = f.params.every((s) => s in values); // Formula.worked needs no float
      workedNodes[name].textContent = ready ? math(`${f.lhs} = ${worked(name, values)}`, true) : "";
    }
    const gpu = gpus.find((g) => g.name === gpuSelect.value);
    const dtype = dtypeSelect.value;
    const P = R.decimal(pyRepr(gpu.flops_per_s[dtype])), beta = R.decimal(pyRepr(gpu.bytes_per_s));
    const peaks = { P, beta };
    const peakJson = { P: pyRepr(gpu.flops_per_s[dtype]), beta: pyRepr(gpu.bytes_per_s) };
    const ridgeOut = el("output", {});
    const ridge = setOutput(ridgeOut, "ridge_point", ["P", "beta"], peakJson, peaks);
    ridgeOut.textContent = describe(ridge.value, "FLOP/byte");
    const peakText = `${si(gpu.flops_per_s[dtype], "FLOP/s")} and ${si(gpu.bytes_per_s, "B/s")}`;
    bound.replaceChildren();
    for (const limit of panel.limits) {
      const line = el("p", { "data-limit": limit.formula });
      const need = results[limit.formula], have = values[limit.symbol];
      if (!need || !have) {
        line.append(`${limit.label}: no verdict until every input is valid.`);
      } else {
        const fits = R.cmp(need.exact, have) <= 0;
        line.append(`${limit.label}: ${describe(need.value, "bytes")} against ${limit.symbol} = `,
          `${describe(R.isInt(have) ? have.n : R.toNumber(have), "bytes")}: `,
          el("strong", { class: "gc-verdict", "data-fits": fits ? "yes" : "no" }, fits ? "fits" : "does not fit"), ".");
      }
      bound.append(line);
    }
    if (panel.workloads.length) bound.append(el("p", {}, gpu.measured
      ? `Ridge point of ${MEASURED} in ${dtype} (${peakText}, measured on ${run.label}): `
      : `Ridge point of the ${gpu.name} in ${dtype} (datasheet peaks ${peakText}): `, ridgeOut));
    let chartPoint = null;
    for (const w of panel.workloads) {
      const line = el("p", { "data-workload": w.label });
      const I = results[w.intensity];
      if (!I || !results[w.flops] || !results[w.bytes]) {
        const valid = panel.symbols.every((s) => s in values);
        line.append(valid ? `${w.label}: no verdict while one of its results is beyond what a float can hold.`
          : `${w.label}: no verdict until every input is valid.`);
        bound.append(line);
        continue;
      }
      const memory = R.cmp(I.exact, ridge.exact) < 0;
      const verdict = el("strong", { class: "gc-verdict", "data-bound": memory ? "memory" : "compute" }, `${memory ? "memory" : "compute"}-bound`);
      const time = el("output", {});
      const timeValues = { F: results[w.flops].exact, Q: results[w.bytes].exact, ...peaks };
      const timeJson = { F: results[w.flops].text, Q: results[w.bytes].text, ...peakJson };
      const t = setOutput(time, "roofline_seconds", ["F", "Q", "P", "beta"], timeJson, timeValues);
      if (t) time.textContent = secondsText(t.value);
      line.append(`${w.label}: its intensity is ${memory ? "below" : "at or above"} the ridge point, so the roofline predicts it `,
        verdict, "; it cannot take less than ", time, ".");
      bound.append(line);
      chartPoint = chartPoint || I;
    }
    if (chartBox) {
      const roofsName = gpu.measured ? "this build (measured)" : gpu.name;
      if (chartPoint) drawChart(chartBox, roofsName, dtype, P, beta, ridge, chartPoint, run ? run.points : []);
      else chartBox.replaceChildren(el("p", {}, "The chart returns when every input is valid."));
    }
    clearTimeout(pending);
    pending = setTimeout(() => typeset(Object.values(workedNodes)), 150);
  }
  for (const input of Object.values(inputs)) input.addEventListener("input", update);
  gpuSelect.addEventListener("change", () => { fillDtypes(dtypeSelect.value); fillFromGpu(); update(); });
  dtypeSelect.addEventListener("change", () => {
    const s = inputs.s;
    const width = DATA.dtypes[dtypeSelect.value];
    if (s && width) s.value = String(width); // the new width, still editable
    fillFromGpu();
    update();
  });
  update();
  // Before MathJax starts, its own first typeset of the page covers the panel as well.
  if (!(window.MathJax && window.MathJax.startup)) clearTimeout(pending);
}

document.querySelectorAll(".gc-whatif[data-panel]").forEach(buildPanel);

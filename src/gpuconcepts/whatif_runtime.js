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
const group = (digits) => digits.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
// Python's repr(float): shortest digits, exponent below 1e-4 and from 1e16.
function pyRepr(x) {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? "nan" : x > 0 ? "inf" : "-inf";
  if (Number.isInteger(x) && Math.abs(x) < 1e16) return `${x}.0`;
  const [mantissa, exp] = x.toExponential().split("e");
  const e = Number(exp);
  if (e < -4 || e >= 16) return `${mantissa}e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;
  return String(x);
}
// The exact value of a float, so that rounding ties go to even as Python's format() does.
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
// round(q * 10**digits) with ties to even, as a BigInt (digits may be negative).
function roundEven(q, digits) {
  const n = digits >= 0 ? q.n * 10n ** BigInt(digits) : q.n;
  const d = digits >= 0 ? q.d : q.d * 10n ** BigInt(-digits);
  const sign = n < 0n ? -1n : 1n;
  const a = n * sign;
  let whole = a / d;
  const twice = 2n * (a % d);
  if (twice > d || (twice === d && whole % 2n === 1n)) whole += 1n;
  return whole * sign;
}
// Python's format(x, f",.{digits}f") (grouped) or format(x, f".{digits}f").
function fixed(x, digits, grouped = true) {
  const r = roundEven(exactOf(x), digits);
  const negative = r < 0n || (r === 0n && x < 0);
  const text = (r < 0n ? -r : r).toString().padStart(digits + 1, "0");
  const whole = text.slice(0, text.length - digits), frac = text.slice(text.length - digits);
  return (negative ? "-" : "") + (grouped ? group(whole) : whole) + (digits ? `.${frac}` : "");
}
const stripZeros = (t) => (t.includes(".") ? t.replace(/0+$/, "").replace(/\.$/, "") : t);
// Python's format(x, ".{p}g").
function formatG(x, p) {
  if (x === 0) return "0";
  if (x < 0) return `-${formatG(-x, p)}`;
  let e = Number(x.toExponential().split("e")[1]);
  let m = roundEven(exactOf(x), p - 1 - e);
  if (m >= 10n ** BigInt(p)) { e += 1; m = roundEven(exactOf(x), p - 1 - e); }
  if (e >= -4 && e < p) return stripZeros(fixed(x, Math.max(0, p - 1 - e), false));
  const digits = m.toString();
  const mantissa = stripZeros(`${digits[0]}.${digits.slice(1)}`);
  return `${mantissa}e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;
}
// units._trim: two decimals, thousands separators, no trailing zeros.
const trim = (x, digits = 2) => stripZeros(fixed(x, digits));
const asNumber = (v) => (typeof v === "number" ? v : R.toNumber(v));
function plainNumber(v) {
  if (typeof v !== "number" && R.isInt(v)) return group(v.n.toString());
  const x = asNumber(v);
  return Number.isInteger(x) ? group(BigInt(x).toString()) : trim(x);
}
const DECIMAL = ["bytes", "kB", "MB", "GB", "TB", "PB"];
const BINARY = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB"];
function scaled(v, base, names) {
  let x = asNumber(v), i = 0;
  // Python divides a whole number exactly the first time (int / int), then in floats.
  if (typeof v !== "number" && R.isInt(v) && Math.abs(x) >= base) {
    x = R.toNumber(make(v.n, BigInt(base))); i = 1;
  }
  while (Math.abs(x) >= base && i < names.length - 1) { x /= base; i += 1; }
  return `${trim(x)} ${names[i]}`;
}
const WORDS = [[10n ** 12n, "trillion"], [10n ** 9n, "billion"], [10n ** 6n, "million"], [10n ** 3n, "thousand"]];
function inWords(v) {
  for (const [size, word] of WORDS) {
    if (R.cmp(v, { n: size, d: 1n }) >= 0) return `${trim(R.toNumber(make(v.n, v.d * size)))} ${word}`;
  }
  return plainNumber(v);
}
function describe(v, kind) {
  if (kind === "bytes") return `${plainNumber(v)} bytes (${scaled(v, 1000, DECIMAL)}, ${scaled(v, 1024, BINARY)})`;
  const unit = kind === "count" ? "" : ` ${kind}`;
  if (["MACs", "FLOPs", "count"].includes(kind) && R.cmp(v, R.int("1000")) >= 0) {
    return `${plainNumber(v)}${unit} (${inWords(v)}${unit})`;
  }
  return `${plainNumber(v)}${unit}`;
}
const SI = [[1e15, "P"], [1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]];
function si(x, unit, digits = 3) {
  const g = (y) => formatG(Number(formatG(y, digits)), 6);
  if (unit === "s" && x > 0 && x < 1) {
    for (const [scale, prefix] of [[1e-3, "ms"], [1e-6, "µs"], [1e-9, "ns"]]) {
      if (x >= scale) return `${g(x / scale)} ${prefix}`;
    }
    return `${formatG(x, digits)} s`;
  }
  for (const [scale, prefix] of SI) if (Math.abs(x) >= scale) return `${g(x / scale)} ${prefix}${unit}`;
  return `${g(x)} ${unit}`.trimEnd();
}
const latexNumber = (v) => plainNumber(v).replaceAll(",", "{,}");

// -- formulas --------------------------------------------------------------------------------
const CODE = FORMULAS(R);
// The exact value, and the string Python prints for formula(**args): an int when whole.
function evaluate(name, values) {
  const exact = CODE[name](values);
  const number = R.isInt(exact) ? null : R.toNumber(exact);
  return { exact, isInt: number === null, text: number === null ? exact.n.toString() : pyRepr(number) };
}
// formula.worked(): the template with the numbers in, then "= exact" or "\approx rounded".
function worked(name, values) {
  const f = DATA.formulas[name];
  const body = f.worked.replace(/@(\w+)@/g, (_, s) => latexNumber(values[s]));
  const exact = CODE[name](values);
  for (let digits = 0; digits <= 6; digits += 1) {
    const scaledN = exact.n * 10n ** BigInt(digits);
    if (scaledN % exact.d === 0n) {
      const whole = latexNumber({ n: exact.n / exact.d, d: 1n });
      const fraction = digits ? `.${String((scaledN / exact.d) % 10n ** BigInt(digits)).padStart(digits, "0")}` : "";
      return `${body} = ${whole}${fraction}`;
    }
  }
  const x = R.toNumber(exact);
  return `${body} \\approx ${Math.abs(x) >= 1 ? latexNumber(x) : formatG(x, 3)}`;
}

// -- inputs: the rules of Formula._exact_input and of `gpuconcepts calc` ----------------------
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
// {value, json} for a valid entry, {error} naming the symbol and the rule otherwise.
function parseInput(name, raw) {
  const symbol = DATA.symbols[name];
  const what = `${name} (${symbol.meaning})`;
  const text = raw.trim().replaceAll("_", "");
  if (text === "") return { error: `missing value for ${what}` };
  if (/^[+-]?\d+$/.test(text)) {
    const n = BigInt(text);
    if (n <= 0n) return { error: `${what} must be positive; got ${n}` };
    return { value: R.int(n), json: n.toString() };
  }
  if (!NUMBER.test(text)) return { error: `${what} must be a number; got '${raw.trim()}'` };
  const x = Number(text);
  if (!Number.isFinite(x)) return { error: `${what} must be finite; got ${pyRepr(x)}` };
  if (symbol.count) {
    if (!Number.isInteger(x)) return { error: `${what} must be a whole number (it is a count); got ${pyRepr(x)}` };
    if (x <= 0) return { error: `${what} must be positive; got ${BigInt(x)}` };
    return { value: R.int(BigInt(x)), json: BigInt(x).toString() };
  }
  if (x <= 0) return { error: `${what} must be positive; got ${pyRepr(x)}` };
  const repr = pyRepr(x); // Python keeps the decimal the user wrote: Fraction(str(float(value)))
  return { value: R.decimal(repr), json: repr };
}

const API = { R, DATA, evaluate, worked, parseInput, describe, si, formatG, pyRepr, plainNumber };
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
  node.setAttribute("data-value", result.text);
  return result;
}

const SVG = "http://www.w3.org/2000/svg";
const svg = (tag, attrs = {}) => {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
};
// A log-log roofline: the chosen GPU's roofs (from attainable_flops) and the workload's point.
function drawChart(box, gpu, dtype, P, beta, ridge, intensity) {
  const W = 520, H = 320, left = 64, right = 16, top = 16, bottom = 44;
  const x = R.toNumber(intensity), r = R.toNumber(ridge);
  const lo = Math.floor(Math.log10(Math.min(x, r))) - 1, hi = Math.ceil(Math.log10(Math.max(x, r))) + 1;
  const roof = (i) => R.toNumber(CODE.attainable_flops({ I: R.decimal(pyRepr(i)), P, beta }));
  const yLo = Math.floor(Math.log10(roof(10 ** lo))), yHi = Math.ceil(Math.log10(R.toNumber(P)));
  const px = (i) => left + ((Math.log10(i) - lo) / (hi - lo)) * (W - left - right);
  const py = (f) => top + ((yHi - Math.log10(f)) / (yHi - yLo)) * (H - top - bottom);
  const label = `Roofline of the ${gpu} in ${dtype}: ridge at ${trim(r)} FLOP/byte; `
    + `the workload at ${trim(x)} FLOP/byte is ${R.cmp(intensity, ridge) < 0 ? "memory" : "compute"}-bound`;
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
  roofName.textContent = `${gpu}, ${dtype}: ridge ${trim(r)} FLOP/byte`;
  chart.append(roofName);
  const dot = svg("circle", { cx: px(x), cy: py(roof(x)), r: 6, class: "gc-point", "data-intensity": pyRepr(x) });
  chart.append(dot);
  const xl = svg("text", { x: (left + W - right) / 2, y: H - 8, "text-anchor": "middle" });
  xl.textContent = "arithmetic intensity (FLOP/byte)";
  const yl = svg("text", { x: 14, y: (top + H - bottom) / 2, transform: `rotate(-90 14 ${(top + H - bottom) / 2})`, "text-anchor": "middle" });
  yl.textContent = "attainable FLOP/s";
  chart.append(xl, yl);
  box.replaceChildren(chart);
}

function buildPanel(root) {
  const id = root.getAttribute("data-panel");
  const panel = DATA.panels[id];
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
    const help = el("span", { id: `${prefix}-${name}-help`, class: "gc-help" }, `${s.meaning} (${s.unit}; ${s.domain})`);
    fields.append(el("div", { class: "gc-field" },
      el("label", { for: input.id }, el("span", { class: "gc-sym" }, name)), input, help));
    inputs[name] = input;
  }
  const gpuSelect = el("select", { id: `${prefix}-gpu`, "data-control": "gpu" });
  for (const g of DATA.gpus) gpuSelect.append(el("option", { value: g.name }, g.name));
  gpuSelect.value = DATA.default_gpu;
  const dtypeSelect = el("select", { id: `${prefix}-dtype`, "data-control": "dtype" });
  fields.append(
    el("div", { class: "gc-field" }, el("label", { for: gpuSelect.id }, "GPU (datasheet)"), gpuSelect),
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
    const gpu = DATA.gpus.find((g) => g.name === gpuSelect.value);
    const listed = Object.keys(gpu.flops_per_s);
    const width = DATA.dtypes[preferred];
    const keep = listed.includes(preferred) ? preferred
      : listed.find((d) => DATA.dtypes[d] === width) || listed[0];
    dtypeSelect.replaceChildren(...listed.map((d) => el("option", { value: d }, d)));
    dtypeSelect.value = keep;
  }
  fillDtypes(panel.dtype);

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
      if (result) outputs[name].textContent = describe(result.exact, f.kind);
      results[name] = result;
      workedNodes[name].textContent = result ? math(`${f.lhs} = ${worked(name, values)}`, true) : "";
    }
    const gpu = DATA.gpus.find((g) => g.name === gpuSelect.value);
    const dtype = dtypeSelect.value;
    const P = R.decimal(pyRepr(gpu.flops_per_s[dtype])), beta = R.decimal(pyRepr(gpu.bytes_per_s));
    const peaks = { P, beta };
    const peakJson = { P: pyRepr(gpu.flops_per_s[dtype]), beta: pyRepr(gpu.bytes_per_s) };
    const ridgeOut = el("output", {});
    const ridge = setOutput(ridgeOut, "ridge_point", ["P", "beta"], peakJson, peaks);
    ridgeOut.textContent = `${trim(R.toNumber(ridge.exact))} FLOP/byte`;
    bound.replaceChildren(el("p", {}, `Ridge point of the ${gpu.name} in ${dtype} (datasheet peaks ${si(R.toNumber(P), "FLOP/s")} and ${si(R.toNumber(beta), "B/s")}): `, ridgeOut));
    let chartPoint = null;
    for (const w of panel.workloads) {
      const line = el("p", { "data-workload": w.label });
      const I = results[w.intensity];
      if (!I || !results[w.flops] || !results[w.bytes]) {
        line.append(`${w.label}: no verdict until every input is valid.`);
        bound.append(line);
        continue;
      }
      const memory = R.cmp(I.exact, ridge.exact) < 0;
      const verdict = el("strong", { class: "gc-verdict", "data-bound": memory ? "memory" : "compute" }, `${memory ? "memory" : "compute"}-bound`);
      const time = el("output", {});
      const timeValues = { F: results[w.flops].exact, Q: results[w.bytes].exact, ...peaks };
      const timeJson = { F: results[w.flops].text, Q: results[w.bytes].text, ...peakJson };
      const t = setOutput(time, "roofline_seconds", ["F", "Q", "P", "beta"], timeJson, timeValues);
      time.textContent = si(R.toNumber(t.exact), "s");
      line.append(`${w.label}: its intensity is ${memory ? "below" : "at or above"} the ridge point, so the roofline predicts it `,
        verdict, "; it cannot take less than ", time, ".");
      bound.append(line);
      chartPoint = chartPoint || I.exact;
    }
    if (chartBox) {
      if (chartPoint) drawChart(chartBox, gpu.name, dtype, P, beta, ridge.exact, chartPoint);
      else chartBox.replaceChildren(el("p", {}, "The chart returns when every input is valid."));
    }
    clearTimeout(pending);
    pending = setTimeout(() => typeset(Object.values(workedNodes)), 150);
  }
  for (const input of Object.values(inputs)) input.addEventListener("input", update);
  gpuSelect.addEventListener("change", () => { fillDtypes(dtypeSelect.value); update(); });
  dtypeSelect.addEventListener("change", () => {
    const s = inputs.s;
    if (s) s.value = String(DATA.dtypes[dtypeSelect.value]); // the new width, still editable
    update();
  });
  update();
  // Before MathJax starts, its own first typeset of the page covers the panel as well.
  if (!(window.MathJax && window.MathJax.startup)) clearTimeout(pending);
}

document.querySelectorAll(".gc-whatif[data-panel]").forEach(buildPanel);

// A minimal DOM, enough to run the attention viewer's script under node: elements with children,
// text, style and events, table rows and cells, and a canvas whose 2-D context records the lines drawn.
// Usage: node viewer_dom_stub.js page.html  -> JSON of what the page shows before and after the user picks.
"use strict";
const fs = require("fs");
function Element(tag) {
  this.tagName = tag.toUpperCase(); this.children = []; this.style = {}; this.listeners = {};
  this._text = ""; this.className = ""; this.value = ""; this.title = "";
}
Element.prototype.appendChild = function (c) {
  this.children.push(c);
  if (this.tagName === "SELECT" && this.children.length === 1) this.value = c.value;
  return c;
};
Object.defineProperty(Element.prototype, "textContent", {
  get() { return this._text + this.children.map((c) => c.textContent).join(""); },
  set(v) { this._text = String(v); this.children = []; },
});
Object.defineProperty(Element.prototype, "value", {
  get() { return this._value; }, set(v) { this._value = String(v); },
});
Element.prototype.insertRow = function () { return this.appendChild(new Element("tr")); };
Element.prototype.insertCell = function () { return this.appendChild(new Element("td")); };
Element.prototype.addEventListener = function (type, fn) { (this.listeners[type] = this.listeners[type] || []).push(fn); };
Element.prototype.fire = function (type) { (this.listeners[type] || []).forEach((fn) => fn()); };
Element.prototype.getContext = function () {
  const canvas = this;
  canvas.lines = [];
  return { beginPath() {}, moveTo(x, y) { this.from = [x, y]; }, stroke() {}, fillText() {},
           lineTo(x, y) { canvas.lines.push({ from: this.from, to: [x, y], style: this.strokeStyle, width: this.lineWidth }); } };
};
const page = fs.readFileSync(process.argv[2], "utf8");
const ids = {};
for (const m of page.matchAll(/<(\w+)[^>]*\bid="([^"]+)"/g)) ids[m[2]] = new Element(m[1]);
const blob = page.match(/<script type="application\/json" id="attention-data">([\s\S]*?)<\/script>/)[1];
ids["attention-data"].textContent = blob;
global.document = { getElementById: (id) => ids[id], createElement: (tag) => new Element(tag) };
const code = page.match(/<script>([\s\S]*?)<\/script>/)[1];
eval(code);
function summary() {
  const grid = ids.grid, lines = ids.lines;
  return {
    layer: ids.layer.children.map((o) => o.textContent), head: ids.head.children.map((o) => o.textContent),
    query: ids.query.children.map((o) => o.textContent),
    rows: grid.children.length, header: grid.children[0].children.map((c) => c.textContent),
    selected: grid.children.findIndex((r) => r.className === "selected") - 1,
    cells: grid.children.slice(1).map((r) => r.children.slice(1).map((c) => c.title)),
    lines: lines.lines.length,
  };
}
const out = { initial: summary() };
// pick head 1 of layer 1 and query 2 in the menus, as a user would
ids.layer.value = "1"; ids.layer.fire("change");
ids.head.value = "1"; ids.head.fire("change");
ids.query.value = "2"; ids.query.fire("change");
out.picked = summary();
// click the row of query 0
ids.grid.children[1].fire("click");
out.clicked = summary();
ids.head.value = "mean"; ids.head.fire("change");
out.mean = summary();
console.log(JSON.stringify(out));

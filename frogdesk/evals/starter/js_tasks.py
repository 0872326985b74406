"""The starter suite's JavaScript tasks (checked with plain `node` and its assert module)."""

from __future__ import annotations

from frogdesk.evals.starter.build import node_task

CAPITALIZE = node_task(
    "js-title-case",
    "bugfix",
    "The tests in title.test.js fail. Fix titleCase in title.js so that they pass.",
    (
        "title.js",
        """// Every word of the text with its first letter upper-cased, the rest lower-cased.
function titleCase(text) {
  return text.charAt(0).toUpperCase() + text.slice(1).toLowerCase();
}

module.exports = { titleCase };
""",
    ),
    (
        "title.test.js",
        """const assert = require("node:assert");
const { titleCase } = require("./title.js");

assert.strictEqual(titleCase("hello"), "Hello");
assert.strictEqual(titleCase("the GREAT frog"), "The Great Frog");
console.log("all tests passed");
""",
    ),
    """// Every word of the text with its first letter upper-cased, the rest lower-cased.
function titleCase(text) {
  return text
    .split(" ")
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1).toLowerCase())
    .join(" ");
}

module.exports = { titleCase };
""",
)

CLAMP = node_task(
    "js-clamp",
    "bugfix",
    "The tests in clamp.test.js fail. Fix clamp in clamp.js so that they pass.",
    (
        "clamp.js",
        """// x limited to the range [low, high].
function clamp(x, low, high) {
  if (x < low) return high;
  if (x > high) return low;
  return x;
}

module.exports = { clamp };
""",
    ),
    (
        "clamp.test.js",
        """const assert = require("node:assert");
const { clamp } = require("./clamp.js");

assert.strictEqual(clamp(5, 0, 10), 5);
assert.strictEqual(clamp(-3, 0, 10), 0);
assert.strictEqual(clamp(42, 0, 10), 10);
console.log("all tests passed");
""",
    ),
    """// x limited to the range [low, high].
function clamp(x, low, high) {
  if (x < low) return low;
  if (x > high) return high;
  return x;
}

module.exports = { clamp };
""",
)

RANGE = node_task(
    "js-range",
    "feature",
    "Implement range in range.js as its comment says; range.test.js has the tests.",
    (
        "range.js",
        """// The numbers from start (included) to end (excluded) by step (default 1; may be
// negative); throws a RangeError when step is 0.
function range(start, end, step) {
  throw new Error("not implemented");
}

module.exports = { range };
""",
    ),
    (
        "range.test.js",
        """const assert = require("node:assert");
const { range } = require("./range.js");

assert.deepStrictEqual(range(0, 4), [0, 1, 2, 3]);
assert.deepStrictEqual(range(1, 10, 3), [1, 4, 7]);
assert.deepStrictEqual(range(5, 0, -2), [5, 3, 1]);
assert.deepStrictEqual(range(3, 3), []);
assert.throws(() => range(0, 5, 0), RangeError);
console.log("all tests passed");
""",
    ),
    """// The numbers from start (included) to end (excluded) by step (default 1; may be
// negative); throws a RangeError when step is 0.
function range(start, end, step = 1) {
  if (step === 0) throw new RangeError("step must not be 0");
  const out = [];
  for (let x = start; step > 0 ? x < end : x > end; x += step) out.push(x);
  return out;
}

module.exports = { range };
""",
)

JS_TASKS = (CAPITALIZE, CLAMP, RANGE)

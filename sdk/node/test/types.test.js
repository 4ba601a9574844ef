"use strict";
// index.d.ts against TypeScript's own compiler: a typed bot checks, and a bot that breaks the API does not.
const test = require("node:test");
const assert = require("node:assert/strict");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { spawnSync } = require("node:child_process");

const ROOT = path.join(__dirname, "..");
const TSC = path.join(ROOT, "node_modules", "typescript", "bin", "tsc");

// --skipLibCheck keeps each run to seconds (without it tsc checks all of @types/node); index.d.ts itself
// is checked on its own, without @types/node, which it does not need.
const CODE = ["--noEmit", "--strict", "--target", "es2022", "--module", "commonjs", "--skipLibCheck", "--types", "node"];
const DECLARATIONS = ["--noEmit", "--strict", "--target", "es2022", "--typeRoots", "./no-types-needed"];

function typecheck(file, options = CODE) {
  return spawnSync(process.execPath, [TSC, ...options, file], { cwd: ROOT, encoding: "utf8" });
}

test("the package.json points at the declarations and ships them", () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8"));
  assert.equal(pkg.types, "index.d.ts");
  assert.ok(pkg.files.includes("index.d.ts"));
  assert.ok(pkg.files.includes("proto/pyramid/v1/pyramid.proto"));
});

test("index.d.ts is valid TypeScript on its own", () => {
  const result = typecheck("index.d.ts", DECLARATIONS);
  assert.equal(result.status, 0, result.stdout + result.stderr);
});

test("a TypeScript bot type-checks against index.d.ts", () => {
  const result = typecheck("test/typed-bot.ts");
  assert.equal(result.status, 0, result.stdout + result.stderr);
});

test("a bot that returns what the API does not take fails to type-check", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pyramid-types-"));
  const file = path.join(dir, "wrong.ts");
  fs.writeFileSync(
    file,
    `import { Bot, Observation } from ${JSON.stringify(ROOT)};\n` +
      "class Wrong extends Bot {\n  play(obs: Observation): number { return obs.legalCards.length; }\n}\n" +
      "new Wrong().declare(undefined as unknown as Observation).tricks.toFixed();\n",
  );
  try {
    const result = typecheck(file);
    assert.notEqual(result.status, 0);
    assert.match(result.stdout, /error TS2416: Property 'play' in type 'Wrong'/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test("every export of index.js is declared in index.d.ts", () => {
  const declared = fs.readFileSync(path.join(ROOT, "index.d.ts"), "utf8");
  for (const name of Object.keys(require(".."))) {
    assert.match(declared, new RegExp(`export (?:class|function|const) ${name}\\b`), name);
  }
});

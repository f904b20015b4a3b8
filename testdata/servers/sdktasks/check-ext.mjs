// Checks the io.modelcontextprotocol/tasks extension traffic (2026-07-28)
// of an mcpx trace against the official schemas of
// @modelcontextprotocol/ext-tasks (core/v2): the client's requests
// (tasks/get, tasks/update, tasks/cancel and the extension declared in
// each tools/call's client capabilities) and the server's task results.
// It prints one line per message checked and exits 1 when any is invalid,
// 2 when there was nothing to check.
//
//   node check-ext.mjs TRACE.jsonl
//
// The package is found in $MCPX_NPM_CACHE, or the repository's .cache/npm.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const cache = process.env.MCPX_NPM_CACHE || join(here, "..", "..", "..", ".cache", "npm");
const v2 = await import(
  pathToFileURL(join(cache, "node_modules", "@modelcontextprotocol", "ext-tasks", "dist", "core", "v2", "index.js")).href
);

const requests = new Map();
let checked = 0;
let invalid = 0;
const check = (name, schema, value) => {
  checked++;
  const r = schema.safeParse(value);
  if (r.success) {
    console.log(`valid ${name}`);
    return;
  }
  invalid++;
  console.log(`INVALID ${name}: ${JSON.stringify(value)}: ${JSON.stringify(r.error.issues)}`);
};
const requestSchemas = {
  "tasks/get": v2.GetTaskRequestV2Schema,
  "tasks/update": v2.UpdateTaskRequestV2Schema,
  "tasks/cancel": v2.CancelTaskRequestV2Schema,
};
const resultSchemas = {
  "tasks/get": v2.GetTaskResultV2Schema,
  "tasks/update": v2.UpdateTaskResultV2Schema,
  "tasks/cancel": v2.CancelTaskResultV2Schema,
};
for (const line of readFileSync(process.argv[2], "utf8").split("\n")) {
  if (!line) continue;
  const e = JSON.parse(line);
  if (e.kind !== "frame" || !e.msg) continue;
  const m = e.msg;
  if (e.dir === "c2s" && m.method !== undefined) {
    if (m.id !== undefined) requests.set(JSON.stringify(m.id), m.method);
    if (requestSchemas[m.method]) check(`${m.method} request`, requestSchemas[m.method], m);
    if (m.method === "tools/call") {
      checked++;
      if (v2.hasTaskClientCapabilityV2(m.params)) console.log("valid tools/call declares the extension");
      else {
        invalid++;
        console.log(`INVALID tools/call does not declare the extension: ${JSON.stringify(m.params?._meta)}`);
      }
    }
  } else if (e.dir === "s2c" && m.id !== undefined && m.result !== undefined) {
    const method = requests.get(JSON.stringify(m.id));
    if (method === "tools/call" && m.result.resultType === "task") check("tools/call task result", v2.CreateTaskResultV2Schema, m.result);
    else if (resultSchemas[method]) check(`${method} result`, resultSchemas[method], m.result);
  }
}
console.log(`${checked} checked, ${invalid} invalid`);
process.exit(invalid > 0 ? 1 : checked === 0 ? 2 : 0);

// Runs the wasm32 determinism probe (tools/probe-wasm) under node, the way
// the native probe runs: the report on stdout, the build's description on
// stderr. Usage: node run.mjs lockstep_probe_wasm.wasm
import { readFileSync } from "node:fs";

const path = process.argv[2];
if (!path) {
    process.stderr.write("usage: node run.mjs MODULE.wasm\n");
    process.exit(2);
}
// The module imports nothing: no host function can reach the cases.
const { instance } = await WebAssembly.instantiate(readFileSync(path), {});
const e = instance.exports;
const text = (at, len) =>
    new TextDecoder().decode(new Uint8Array(e.memory.buffer, at, len));
const len = e.probe_run();
process.stderr.write(text(e.probe_target(), e.probe_target_len()) + "\n");
process.stdout.write(text(e.probe_output(), len));

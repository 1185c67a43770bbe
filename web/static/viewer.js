// The page: open a log (file picker, drag and drop, or ?log=URL), verify it
// in a worker, draw any frame with the viewer module, play and scrub.
// What it found is also written into data- attributes of <body>
// (data-frames, data-verified, data-first-bad, data-drawn-colours) for
// the headless browser test (web/test).
import { load } from "./module.js";

const $ = (id) => document.getElementById(id);
const canvas = $("view");
const context = canvas.getContext("2d");
const viewer = await load();
const params = new URLSearchParams(location.search);
let frames = 0;
let playing = null;

function say(id, text, cls) {
    $(id).textContent = text;
    if (cls !== undefined) $(id).className = cls;
}

function draw(frame) {
    const rgba = viewer.picture(frame, canvas.width, canvas.height);
    if (!rgba) return;
    context.putImageData(new ImageData(rgba, canvas.width, canvas.height), 0, 0);
    say("frame", `frame ${frame} / ${frames}`);
    // How many colours the picture holds: a blank canvas has one.
    const colours = new Set();
    for (let i = 0; i < rgba.length; i += 4) colours.add((rgba[i] << 16) | (rgba[i + 1] << 8) | rgba[i + 2]);
    document.body.dataset.drawnColours = colours.size;
}

function verdictText(v) {
    if (v.error) return [`cannot verify: ${v.error}`, "bad"];
    const speed = v.millis ? ` (${(v.replayed / 60 / (v.millis / 1000)).toFixed(1)}× real time at 60 Hz)` : "";
    if (v.verified) return [`ok: ${v.replayed} frames verified${speed}`, "ok"];
    const parts = [];
    if (v.first_mismatch !== null) parts.push(`first bad frame ${v.first_mismatch}; ${v.mismatches} frames differ`);
    if (v.first_bad_keyframe !== null) parts.push(`a keyframe is not the replayed state (before frame ${v.first_bad_keyframe})`);
    if (v.damage !== null) parts.push(`the log is damaged after frame ${v.damaged_after ?? v.first_bad_frame}: ${v.damage}`);
    return [`FAIL: ${parts.join("; ")}`, "bad"];
}

function firstBad(v) {
    if (v.error) return "error";
    return v.first_bad_frame === null ? "none" : String(v.first_bad_frame);
}

async function open(bytes, name) {
    stop();
    const opened = viewer.open(bytes);
    if (opened.error) {
        say("info", `${name}: ${opened.error}`);
        say("result", "—", "");
        document.body.dataset.verified = "error";
        return;
    }
    frames = opened.frames;
    document.body.dataset.frames = frames;
    say("info", `${name}: ${opened.game} (${opened.version}), ${frames} frames`);
    const timeline = $("timeline");
    timeline.max = frames;
    timeline.value = 0;
    timeline.disabled = false;
    $("play").disabled = false;
    draw(0);
    indexing = opened.frames;
    setTimeout(indexMore, 0);
    say("result", "verifying…", "");
    if (params.has("sync")) {
        // The headless test: verify on this thread, so the page is done
        // once its tasks are.
        const started = performance.now();
        const v = viewer.verify();
        v.millis = performance.now() - started;
        show(v);
        return;
    }
    const worker = new Worker(new URL("worker.js", import.meta.url), { type: "module" });
    worker.onmessage = (event) => {
        show(event.data);
        worker.terminate();
    };
    worker.postMessage(bytes.slice().buffer);
}

function show(v) {
    const [text, cls] = verdictText(v);
    say("result", text, cls);
    document.body.dataset.verified = v.error ? "error" : String(v.verified);
    document.body.dataset.replayed = v.replayed ?? 0;
    document.body.dataset.firstBad = firstBad(v);
    if (v.millis) document.body.dataset.timesRealTime = (v.replayed / 60 / (v.millis / 1000)).toFixed(2);
}

// Builds the index a few frames at a time while the page is idle, so a
// jump anywhere on the timeline re-simulates at most a second of play.
let indexing = 0;
function indexMore() {
    if (!indexing) return;
    const done = viewer.index(30);
    say("indexed", done >= indexing ? "" : `(indexing ${done} / ${indexing})`);
    if (done < indexing) setTimeout(indexMore, 0);
    else indexing = 0;
}

function stop() {
    if (playing) clearInterval(playing);
    playing = null;
    $("play").textContent = "play";
}

$("play").onclick = () => {
    if (playing) return stop();
    $("play").textContent = "pause";
    playing = setInterval(() => {
        const t = $("timeline");
        const next = Math.min(frames, Number(t.value) + 2);
        t.value = next;
        draw(next);
        if (next >= frames) stop();
    }, 1000 / 30);
};
$("timeline").oninput = (e) => draw(Number(e.target.value));
$("file").onchange = async (e) => {
    const f = e.target.files[0];
    if (f) open(new Uint8Array(await f.arrayBuffer()), f.name);
};
const drop = $("drop");
drop.ondragover = (e) => { e.preventDefault(); drop.classList.add("over"); };
drop.ondragleave = () => drop.classList.remove("over");
drop.ondrop = async (e) => {
    e.preventDefault();
    drop.classList.remove("over");
    const f = e.dataTransfer.files[0];
    if (f) open(new Uint8Array(await f.arrayBuffer()), f.name);
};
// ?log=URL opens a log at once; &frame=N shows that frame; &sync verifies
// on the page's thread (for the headless test).
const wanted = params.get("log");
if (wanted) {
    const response = await fetch(wanted);
    if (response.ok) {
        await open(new Uint8Array(await response.arrayBuffer()), wanted);
        const frame = Number(params.get("frame") ?? 0);
        if (frame > 0) {
            $("timeline").value = Math.min(frame, frames);
            draw(Math.min(frame, frames));
        }
    } else {
        say("info", `${wanted}: ${response.status} ${response.statusText}`);
    }
}

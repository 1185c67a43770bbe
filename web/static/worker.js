// Verifies a replay log off the page's thread: its own instance of the
// viewer module re-simulates every frame (which takes seconds) while the
// page stays responsive. Message in: the log's bytes; out: the verdict.
import { load } from "./module.js";

self.onmessage = async (event) => {
    const viewer = await load();
    const opened = viewer.open(new Uint8Array(event.data));
    if (opened.error) {
        self.postMessage(opened);
        return;
    }
    const started = performance.now();
    const verdict = viewer.verify();
    verdict.millis = performance.now() - started;
    self.postMessage(verdict);
};

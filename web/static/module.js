// The viewer module (lockstep_viewer.wasm) behind a small API: the log goes
// into the module's memory, answers come back as JSON text, pictures as
// RGBA bytes. The module imports nothing.
export async function load() {
    const response = await fetch(new URL("lockstep_viewer.wasm", import.meta.url));
    const { instance } = await WebAssembly.instantiate(await response.arrayBuffer(), {});
    const e = instance.exports;
    // Memory can grow during any call: view it only after the call.
    const text = (len) => {
        const at = e.viewer_text();
        return JSON.parse(new TextDecoder().decode(new Uint8Array(e.memory.buffer, at, len)));
    };
    return {
        open(bytes) {
            const at = e.viewer_input(bytes.length);
            new Uint8Array(e.memory.buffer, at, bytes.length).set(bytes);
            return text(e.viewer_open());
        },
        verify() {
            return text(e.viewer_verify());
        },
        // Indexes up to n more frames (seeks start from the index); the
        // frames indexed so far.
        index(n) {
            return e.viewer_index(n);
        },
        picture(frame, width, height) {
            const at = e.viewer_picture(frame, width, height);
            if (at === 0) return null;
            return new Uint8ClampedArray(e.memory.buffer.slice(at, at + width * height * 4));
        },
    };
}

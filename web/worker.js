// Makes the compressed server key off the page's thread: seconds of work
// (one thread in the browser) that would otherwise freeze the page. The key's
// bytes come from the page and stay in this browser.
import init, { ClientKey } from "./pkg/hearth_wasm.js";

const ready = init();

self.onmessage = async ({ data: keyBytes }) => {
  try {
    await ready;
    const key = ClientKey.fromBytes(keyBytes);
    const bytes = key.compressedServerKey();
    key.free();
    self.postMessage({ bytes }, [bytes.buffer]);
  } catch (e) {
    self.postMessage({ error: String(e.message || e) });
  }
};

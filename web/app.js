// The page: hearth's WebAssembly client (pkg/, made by scripts/wasm-build.sh)
// and a hearth server's HTTP API (docs/reference/http-api.md), no framework.
// The secret key stays in this browser: its bytes are kept in IndexedDB, only
// the compressed server key and encrypted bundles are sent.
import init, { ClientKey, Program, aesCtr, kreyvium } from "./pkg/hearth_wasm.js";

const $ = (id) => document.getElementById(id);

// What the page did, for its user and for the browser test
// (crates/hearth-py/tests/test_browser.py): times in ms, the last result.
const page = { state: "loading", timings: {}, result: null, error: null };
window.hearth = page;

function log(text, cls) {
  const li = document.createElement("li");
  li.textContent = text;
  if (cls) li.className = cls;
  $("log").append(li);
  return li;
}

// Lets the browser paint a status line before a long synchronous step.
const paint = () => new Promise((r) => setTimeout(r, 20));

async function timed(name, step) {
  const t0 = performance.now();
  const out = await step();
  page.timings[name] = performance.now() - t0;
  return out;
}

// ---- The key, in IndexedDB (never sent) -------------------------------------
function store(mode, act) {
  return new Promise((resolve, reject) => {
    const open = indexedDB.open("hearth", 1);
    open.onupgradeneeded = () => open.result.createObjectStore("keys");
    open.onerror = () => reject(open.error);
    open.onsuccess = () => {
      const tx = open.result.transaction("keys", mode);
      const req = act(tx.objectStore("keys"));
      tx.oncomplete = () => resolve(req.result);
      tx.onerror = () => reject(tx.error);
    };
  });
}
const loadKey = (params) => store("readonly", (s) => s.get(params));
const saveKey = (params, bytes) => store("readwrite", (s) => s.put(bytes, params));
const dropKey = (params) => store("readwrite", (s) => s.delete(params));

// ---- The server ------------------------------------------------------------
// One API call; an answer other than 2xx is thrown as an Error with the
// server's code and message (404 is returned where `missingOk`).
async function api(method, path, body, missingOk = false) {
  const server = $("server").value.trim().replace(/\/+$/, "");
  if (!server) throw new Error("enter the server's address first");
  const headers = {};
  const token = $("token").value.trim();
  if (token) headers["Authorization"] = `Bearer ${token}`;
  if (body) headers["Content-Type"] = "application/octet-stream";
  let r;
  try {
    r = await fetch(server + path, { method, headers, body });
  } catch (e) {
    throw new Error(`${method} ${path}: no answer from ${server} (is it running, and does ` +
      `its --allow-origin name ${location.origin}?)`);
  }
  if (r.ok || (missingOk && r.status === 404)) return r;
  let why = r.statusText;
  try {
    const e = await r.json();
    why = `${e.code}: ${e.message}`;
  } catch (_) { /* not a hearth error body */ }
  throw new Error(`${method} ${path}: ${r.status} ${why}`);
}

// ---- The model and its patients --------------------------------------------
let program, programBytes, model, patients = [], key = null;

function features() {
  return [...$("features").querySelectorAll("input")].map((i) => Number(i.value));
}

function showPatient(i) {
  const row = patients[i];
  $("features").replaceChildren(...row.map((v, j) => {
    const label = document.createElement("label");
    label.textContent = `f${j} `;
    const input = document.createElement("input");
    Object.assign(input, { type: "number", min: -127, max: 127, step: 1, value: v });
    label.append(input);
    return label;
  }));
}

// y = x·w + b: the model in the clear, on the same integers.
function clearModel(x) {
  return x.reduce((y, xi, i) => y + xi * model.weights[i], model.bias);
}

async function showKey() {
  page.key = key ? key.keyId : null;
  $("key-status").textContent = key
    ? `Key ${key.keyId} (${key.params}), kept in this browser.`
    : "No key yet: generate one (a few seconds).";
  $("keygen").disabled = false;
  $("forget").disabled = !key;
  $("run").disabled = !key;
}

async function generate() {
  $("keygen").disabled = true;
  const line = log(`generating a ${program.params} key…`);
  await paint();
  key = await timed("keygen", () => ClientKey.generate(program.params));
  await saveKey(program.params, key.toBytes());
  line.textContent = `key ${key.keyId} generated in ${page.timings.keygen.toFixed(0)} ms, ` +
    "kept in IndexedDB";
  await showKey();
}

// The compressed server key, made in a worker (worker.js) so that the page
// stays responsive meanwhile.
function compressedServerKey() {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL("worker.js", import.meta.url), { type: "module" });
    worker.onmessage = ({ data }) => {
      worker.terminate();
      if (data.error) reject(new Error(data.error));
      else resolve(data.bytes);
    };
    worker.onerror = (e) => {
      worker.terminate();
      reject(new Error(`the key worker failed: ${e.message}`));
    };
    worker.postMessage(key.toBytes());
  });
}

// ANCHOR: server_key
async function uploadServerKey() {
  const known = await api("GET", `/v1/keys/${key.keyId}`, undefined, true);
  if (known.ok) return log("the server already has this key's server key");
  const line = log("making a compressed server key (a few seconds)…");
  const t0 = performance.now();
  const ticker = setInterval(() => {
    line.textContent = "making a compressed server key… " +
      `${((performance.now() - t0) / 1000).toFixed(0)} s`;
  }, 1000);
  const bytes = await timed("server_key", compressedServerKey).finally(() => clearInterval(ticker));
  line.textContent = `server key made in ${page.timings.server_key.toFixed(0)} ms ` +
    `(${(bytes.length / 2 ** 20).toFixed(1)} MiB); uploading…`;
  await paint();
  await timed("upload", () => api("POST", "/v1/keys", bytes));
  line.textContent += ` uploaded in ${page.timings.upload.toFixed(0)} ms`;
}
// ANCHOR_END: server_key

async function waitFor(job) {
  const line = log(`job ${job}: queued`);
  for (;;) {
    const s = await (await api("GET", `/v1/jobs/${job}`)).json();
    if (s.state === "done") return line;
    if (s.state === "failed") throw new Error(`job ${job} failed: ${s.code}: ${s.message}`);
    if (s.state !== "running" && s.state !== "queued") {
      throw new Error(`job ${job}: unexpected answer ${JSON.stringify(s)}`);
    }
    line.textContent = s.state === "running"
      ? `job ${job}: ${s.done} / ${s.total} bootstraps`
      : `job ${job}: queued (${s.position} of yours before it)`;
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function run() {
  $("run").disabled = true;
  $("result").hidden = true;
  $("verdict").textContent = "";
  page.state = "running";
  try {
    const x = features();
    await uploadServerKey();
    // ANCHOR: encrypt
    const bundle = await timed("encrypt", () => key.encrypt(program, { x: [x] }));
    log(`10 features encrypted in ${page.timings.encrypt.toFixed(0)} ms ` +
      `(${(bundle.length / 1024).toFixed(0)} KiB)`);
    const body = new Uint8Array(programBytes.length + bundle.length);
    body.set(programBytes);
    body.set(bundle, programBytes.length);
    const { job_id: job, pbs, depth } = await (await api("POST", "/v1/jobs", body)).json();
    log(`submitted job ${job}: ${pbs} bootstraps, depth ${depth}`);
    const line = await waitFor(job);
    const result = new Uint8Array(await (await api("GET", `/v1/jobs/${job}/result`)).arrayBuffer());
    const out = await timed("decrypt", () => key.decrypt(result));
    // ANCHOR_END: encrypt
    page.last = { bundle, result };
    line.textContent = `job ${job}: done; result decrypted in ${page.timings.decrypt.toFixed(1)} ms`;
    await api("DELETE", `/v1/jobs/${job}`);
    const fhe = out.y[0], clear = clearModel(x);
    page.result = { fhe, clear, x };
    const scale = model.weight_scale;
    $("y-fhe").textContent = fhe;
    $("p-fhe").textContent = (fhe / scale).toFixed(1);
    $("y-clear").textContent = clear;
    $("p-clear").textContent = (clear / scale).toFixed(1);
    $("result").hidden = false;
    const same = fhe === clear;
    $("verdict").textContent = same
      ? "Exact: the encrypted computation gives the clear one's answer."
      : "Different: the encrypted result does not match the clear one.";
    $("verdict").className = same ? "ok" : "bad";
    page.state = "done";
  } catch (e) {
    fail(e);
  } finally {
    $("run").disabled = false;
  }
}

function fail(e) {
  page.state = "error";
  page.error = String(e.message || e);
  log(page.error, "error");
}

// Hooks for the browser test: the last job's bundles, and encryption and
// decryption of bundles made elsewhere (base64), for the round trip with
// native hearth. None hands out the key: the test reads it from IndexedDB,
// as only a script of this page's origin could (index.html's policy loads
// no other origin's script).
function b64(bytes) {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(s);
}
const unb64 = (s) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
page.encryptBase64 = (inputs) => b64(key.encrypt(program, inputs));
page.publicEncryptBase64 = (inputs) => b64(key.publicKey().encrypt(program, inputs));
page.decryptBase64 = (bundle) => key.decrypt(unb64(bundle));
page.lastBase64 = () => ({ bundle: b64(page.last.bundle), result: b64(page.last.result) });
// A device's side of transciphering: bytes sealed with AES-128-CTR or
// Kreyvium (base64 in and out).
page.sealBase64 = (cipher, key, nonce, data) =>
  b64((cipher === "aes" ? aesCtr : kreyvium)(unb64(key), unb64(nonce), unb64(data)));

async function main() {
  await init();
  // The address the user typed, never one from the link: a crafted link
  // would send the token typed next to it to a server of its choosing.
  $("server").value = localStorage.getItem("hearth-server") || "";
  $("server").addEventListener("change", () =>
    localStorage.setItem("hearth-server", $("server").value));
  programBytes = new Uint8Array(await (await fetch("reg/program.hprog")).arrayBuffer());
  program = Program.fromBytes(programBytes);
  model = await (await fetch("reg/model.json")).json();
  const csv = (await (await fetch("reg/rows.csv")).text()).trim().split("\n").slice(1);
  patients = csv.map((line) => line.split(",").slice(0, 10).map(Number));
  $("patient").replaceChildren(...patients.map((_, i) => new Option(`#${i + 1}`, i)));
  $("patient").addEventListener("change", () => showPatient(Number($("patient").value)));
  showPatient(0);
  const stored = await loadKey(program.params);
  if (stored) key = ClientKey.fromBytes(stored);
  $("keygen").addEventListener("click", () => generate().catch(fail));
  $("forget").addEventListener("click", async () => {
    await dropKey(program.params);
    key = null;
    await showKey();
  });
  $("run").addEventListener("click", run);
  await showKey();
  page.state = "ready";
}

main().catch(fail);

"""The browser client in headless Chromium over WebDriver (selenium): the
example page (``scripts/wasm-build.sh`` builds it into target/web) served
from one loopback origin, a ``hearth server`` on another that allows it
(``--allow-origin``), a tenant's token typed into the page. The page makes
its key in the browser, keeps it in IndexedDB, uploads the compressed
server key, encrypts a patient's features, submits the job and decrypts the
result, which must equal the model computed here in plain Python. Bundles
then cross between the browser and native hearth both ways, and the page's
times are written beside native ones (target/browser/report.md) with a
screenshot (target/browser/page.png): not a check of speed, the figures of
docs/results/browser.md.

Skipped, saying so, without Chromium, chromedriver, selenium or the built
page, unless HEARTH_REQUIRE_BROWSER is set (the test command then installs
them; it sets it itself once it has built the page)."""

import base64
import functools
import http.server
import json
import os
import pathlib
import shutil
import subprocess
import threading
import time

import pytest

import hearth
from test_server import hearth_command, running_server

ROOT = pathlib.Path(__file__).resolve().parents[3]
WEB = ROOT / "target" / "web"
REPORT = ROOT / "target" / "browser"
LIMIT = 240.0


def missing() -> str:
    """What the browser test lacks, or ''."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed"
    if not browser() or not shutil.which("chromedriver"):
        return "no chromium and chromedriver (Debian: chromium chromium-driver)"
    if not (WEB / "pkg" / "hearth_wasm_bg.wasm").exists():
        return "the page is not built (scripts/wasm-build.sh)"
    return ""


def browser() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return ""


@pytest.fixture(scope="module")
def tools():
    why = missing()
    if why:
        if os.environ.get("HEARTH_REQUIRE_BROWSER"):
            pytest.fail(f"browser test required (HEARTH_REQUIRE_BROWSER) but {why}")
        pytest.skip(f"browser test skipped: {why}")


class QuietFiles(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def page_origin(tools):
    handler = functools.partial(QuietFiles, directory=str(WEB))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


@pytest.fixture(scope="module")
def server(page_origin, tmp_path_factory):
    data = tmp_path_factory.mktemp("browser-server")
    hearth_bin = hearth_command()
    add = [hearth_bin, "server", "token", "add", "--data", data, "alice"]
    token = subprocess.run(add, capture_output=True, text=True, check=True).stdout.strip()
    with running_server(data, "--allow-origin", page_origin) as url:
        yield url, token


@pytest.fixture(scope="module")
def driver(tools):
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = browser()
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage",
                "--window-size=900,1500"):
        options.add_argument(arg)
    d = webdriver.Chrome(options=options, service=Service(shutil.which("chromedriver")))
    d.set_script_timeout(LIMIT)
    yield d
    d.quit()


def until(d, script: str, done, limit: float = LIMIT):
    """Polls `script` until `done` holds for its value (or the page failed)."""
    end = time.monotonic() + limit
    while True:
        value = d.execute_script(script)
        if done(value):
            return value
        error = d.execute_script("return window.hearth && window.hearth.error")
        assert not error, f"the page failed: {error}"
        assert time.monotonic() < end, f"{script!r} stayed {value!r}"
        time.sleep(0.1)


def model():
    m = json.loads((WEB / "reg" / "model.json").read_text())
    rows = (WEB / "reg" / "rows.csv").read_text().split("\n")[1:]
    patients = [[int(v) for v in r.split(",")[:10]] for r in rows if r.strip()]
    return m, patients


def clear(m, x):
    return sum(xi * wi for xi, wi in zip(x, m["weights"])) + m["bias"]


def open_page(d, page_origin, url, token):
    """The page, with the server's address and the token typed in (the page
    takes no address from its link)."""
    from selenium.webdriver.common.by import By

    d.get(f"{page_origin}/index.html?server=http://attacker.invalid")
    until(d, "return window.hearth && window.hearth.state", lambda s: s == "ready")
    server = d.find_element(By.ID, "server")
    assert "attacker" not in server.get_attribute("value")
    server.clear()
    server.send_keys(url)
    field = d.find_element(By.ID, "token")
    field.clear()
    field.send_keys(token)


# The key's bytes from the page's IndexedDB, base64: what any script of the
# page's origin could read, and only such a script (the page hands the key
# to no one).
STORED_KEY = """
const done = arguments[arguments.length - 1];
const open = indexedDB.open("hearth", 1);
open.onerror = () => done(null);
open.onsuccess = () => {
  const all = open.result.transaction("keys").objectStore("keys").getAll();
  all.onsuccess = () => {
    const b = all.result[0];
    let s = "";
    for (let i = 0; i < b.length; i += 0x8000) s += String.fromCharCode(...b.subarray(i, i + 0x8000));
    done(btoa(s));
  };
};
"""


def test_the_page_predicts_exactly_and_bundles_cross_to_native_hearth(
    driver, page_origin, server, tmp_path
):
    """One test, in this order (pytest-xdist may run separate tests of a
    module on separate workers): the page's own run, then bundles across."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    url, token = server
    m, patients = model()
    open_page(driver, page_origin, url, token)
    driver.find_element(By.ID, "keygen").click()
    key_id = until(driver, "return window.hearth.key", bool)
    # A patient, with one feature edited to the range's edge.
    Select(driver.find_element(By.ID, "patient")).select_by_index(2)
    f0 = driver.find_element(By.CSS_SELECTOR, "#features input")
    f0.clear()
    f0.send_keys("-127")
    x = [-127] + patients[2][1:]
    driver.find_element(By.ID, "run").click()
    until(driver, "return window.hearth.state", lambda s: s == "done")
    result = driver.execute_script("return window.hearth.result")
    assert result["x"] == x
    assert result["fhe"] == clear(m, x) == result["clear"]
    assert driver.find_element(By.ID, "verdict").text.startswith("Exact")
    timings = driver.execute_script("return window.hearth.timings")
    last = driver.execute_script("return window.hearth.lastBase64()")
    REPORT.mkdir(parents=True, exist_ok=True)
    driver.execute_script("window.scrollTo(0, document.body.scrollHeight)")
    driver.save_screenshot(str(REPORT / "page.png"))

    # The key outlives the page (IndexedDB).
    open_page(driver, page_origin, url, token)
    assert driver.execute_script("return window.hearth.key") == key_id

    # Bundles across: the browser's key, read here.
    key_file = tmp_path / "browser.key"
    assert driver.execute_script("return typeof window.hearth.keyBase64") == "undefined"
    key_file.write_bytes(base64.b64decode(driver.execute_async_script(STORED_KEY)))
    key = hearth.ClientKey.load(key_file)
    assert key.key_id == key_id
    program = hearth.CompiledProgram.load(WEB / "reg" / "program.hprog")

    # Browser to native: the page's job, its input bundle encrypted there
    # and its result run by the server under the server key the page
    # uploaded, both decrypted here; a result decrypts there too. With the
    # public key: decrypted here.
    def browser_bundle(hook, x):
        b64 = driver.execute_script(f"return window.hearth.{hook}({{x: [arguments[0]]}})", x)
        return hearth.Bundle.from_bytes(base64.b64decode(b64))

    bundle = hearth.Bundle.from_bytes(base64.b64decode(last["bundle"]))
    out = hearth.Bundle.from_bytes(base64.b64decode(last["result"]))
    # The server sent the result packed; the page decrypted it alone.
    assert out.packed
    assert key.decrypt(bundle).tolist() == [x]
    assert key.decrypt(out).tolist() == [clear(m, x)]
    assert decrypt_there(driver, out) == {"y": [clear(m, x)]}
    x = patients[5]
    assert key.decrypt(browser_bundle("publicEncryptBase64", x)).tolist() == [x]

    # Native to browser: encrypted here, decrypted there.
    x = patients[6]
    assert decrypt_there(driver, key.encrypt(program, x=[x])) == {"x": [x]}

    # The device's ciphers in the browser are the native ones.
    seal_key, nonce, data = b"sixteen byte key", bytes(range(16)), b"readings, sealed in a page"
    for cipher, native in (("aes", hearth.aes_ctr), ("kreyvium", hearth.kreyvium)):
        args = [base64.b64encode(b).decode() for b in (seal_key, nonce, data)]
        sealed = driver.execute_script(
            "return window.hearth.sealBase64(arguments[0], arguments[1], arguments[2], arguments[3])",
            cipher,
            *args,
        )
        assert base64.b64decode(sealed) == native(seal_key, nonce, data), cipher

    # Values the program cannot take are refused by name, in the browser.
    refusals = {
        "{x: [[128, 0, 0, 0, 0, 0, 0, 0, 0, 0]]}": "does not fit",
        "{x: [[1, 2, 3]]}": "dims",
        "{}": "missing",
        "{x: [[0,0,0,0,0,0,0,0,0,0]], z: 1}": "no input \"z\"",
        "{x: [[0.5,0,0,0,0,0,0,0,0,0]]}": "safe integer",
    }
    for inputs, why in refusals.items():
        message = driver.execute_script(
            f"try {{ window.hearth.encryptBase64({inputs}); return 'accepted' }}"
            " catch (e) { return String(e.message) }"
        )
        assert why in message, (inputs, message)
    message = driver.execute_script(
        "try { window.hearth.decryptBase64(btoa('HEARTH\\0\\nbroken')); return 'accepted' }"
        " catch (e) { return String(e.message) }"
    )
    assert message != "accepted" and "bundle" in message, message
    report(timings, key, program, patients[0], out, tmp_path)


def decrypt_there(driver, bundle):
    """What the page decrypts from a bundle made here."""
    return driver.execute_script(
        "return window.hearth.decryptBase64(arguments[0])",
        base64.b64encode(bundle.to_bytes()).decode(),
    )


def report(browser_ms, key, program, x, out, tmp_path):
    """Not a check of speed: the report the browser chapter shows
    (docs/results/browser.md), the page's times beside native hearth's on
    this machine, in this run."""
    import gzip
    native = {}
    t = time.perf_counter()
    hearth.ClientKey.generate(program.params)
    native["keygen"] = time.perf_counter() - t
    t = time.perf_counter()
    csk = key.compressed_server_key()
    native["server_key"] = time.perf_counter() - t
    csk.save(tmp_path / "server.key")
    t = time.perf_counter()
    key.encrypt(program, x=[x])
    native["encrypt"] = time.perf_counter() - t
    t = time.perf_counter()
    key.decrypt(out)
    native["decrypt"] = time.perf_counter() - t
    wasm = WEB / "pkg" / "hearth_wasm_bg.wasm"
    rows = [
        ("key generation", "keygen"),
        ("compressed server key", "server_key"),
        ("encrypt 10 inputs", "encrypt"),
        ("decrypt the result", "decrypt"),
    ]
    lines = [
        f"Program: the diabetes regression (`{program.params}`, 10 inputs of 7 digits), "
        f"compressed server key {(tmp_path / 'server.key').stat().st_size / 2**20:.1f} MiB.",
        f"WebAssembly module: {wasm.stat().st_size} bytes, "
        f"{len(gzip.compress(wasm.read_bytes(), 9))} gzipped.",
        "",
        "| step | headless Chromium (1 thread) | native (Python package, 2 threads) | ratio |",
        "|---|---:|---:|---:|",
    ]

    def ms(v):
        return f"{v:.0f} ms" if v >= 100 else f"{v:.3g} ms"

    for label, k in rows:
        b, n = browser_ms[k], native[k] * 1000
        lines.append(f"| {label} | {ms(b)} | {ms(n)} | {b / n:.1f}x |")
    (REPORT / "report.md").write_text("\n".join(lines) + "\n")
    print("\n" + "\n".join(lines))

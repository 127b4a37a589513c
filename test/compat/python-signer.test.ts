/**
 * The Python web sample's signer (`bharatx-in/BharatX-Sample-Web-SDK-Python-Integration` at
 * 98b1c1b8, `common/api/util.py`, `generate_signature`): it encodes the SHA-256 digest with
 * `base64.encodebytes`, which ends the value with a line break. Python's own HTTP client
 * (`http.client`, under `urllib.request`) refuses such a header value before anything is sent: an
 * integrator sees `ValueError: Invalid header value b'...\n'` on the first call, and the service
 * sees nothing. The same signature without the line break (`.strip()`, or `b64encode`) is accepted.
 * The script below is written for this test from those facts (standard library only).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type TestSandbox } from '../support/sandbox.js';

const SCRIPT = `
import base64, hashlib, json, sys, urllib.request, urllib.error
url, tx, strip = sys.argv[1], sys.argv[2], sys.argv[3] == "strip"
payload = json.dumps({"id": tx, "amount": 1000, "user": {"name": "Asha Rao", "phoneNumber": "+919000000001"}})
digest = hashlib.sha256((payload + "/api/transaction" + "testPrivateKey").encode("utf-8")).digest()
signature = base64.encodebytes(digest).decode("utf-8")
if strip:
    signature = signature.strip()
request = urllib.request.Request(url + "/api/transaction", data=payload.encode("utf-8"), method="POST",
    headers={"Content-Type": "application/json", "X-Partner-Id": "testPartnerId", "X-Signature": signature})
try:
    with urllib.request.urlopen(request) as answer:
        print(answer.status, json.loads(answer.read())["redirectUrl"][:4])
except urllib.error.HTTPError as error:
    print(error.code, error.read().decode())
`;

describe("the Python sample's signer (base64.encodebytes)", () => {
  let t: TestSandbox;
  let dir: string;
  beforeAll(async () => {
    t = await startSandbox();
    dir = mkdtempSync(join(tmpdir(), 'paylater-python-signer-'));
    writeFileSync(join(dir, 'sign.py'), SCRIPT);
  });
  afterAll(async () => {
    await t?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  // Asynchronous: the sandbox runs in this process and must keep answering while Python waits.
  const run = (transactionId: string, mode: 'as-sample' | 'strip') =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile('python3', [join(dir, 'sign.py'), t.url, transactionId, mode], { encoding: 'utf8', timeout: 30_000 }, (error, stdout, stderr) => {
        resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr });
      });
    });

  it('fails in Python before sending: ValueError: Invalid header value, and the service sees nothing', async () => {
    const result = await run('py_signer_newline', 'as-sample');
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(/ValueError: Invalid header value b'[A-Za-z0-9+/]{43}=\\n'/);
    const status = await t.request('GET', '/api/transaction/status?id=py_signer_newline', { headers: { 'X-Partner-Id': 'testPartnerId' } });
    expect(status.status).toBe(404);
  });

  it('is accepted once the line break is removed', async () => {
    const result = await run('py_signer_stripped', 'strip');
    expect(result.stderr).toBe('');
    expect(result.stdout.trim()).toBe('200 http');
  });
});

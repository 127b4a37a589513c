/**
 * The Python template: the standard library only (urllib.request, hashlib, base64, json); the body
 * is serialized once and those exact bytes are signed and sent. The webhook receiver is an
 * http.server that compares with hmac.compare_digest.
 */
import { pathName, renderLiteral, requestTarget, snakeCase, soleVariable, templateParts, type JsonPath, type OperationPlan, type Step, type WebhookPlan } from './plan.js';

const name = (variable: string): string => snakeCase(variable);

function quote(text: string): string {
  return JSON.stringify(text);
}

/** A Python string expression: literal text joined to variables with `+`. */
export function stringExpression(template: string, numbers: readonly string[]): string {
  const sole = soleVariable(template);
  if (sole !== undefined) return name(sole);
  void numbers;
  return templateParts(template)
    .map((part) => ('text' in part ? quote(part.text) : name(part.variable)))
    .join(' + ') || '""';
}

export function literal(value: unknown, numbers: readonly string[], indent: string): string {
  return renderLiteral(value, {
    string: (template) => stringExpression(template, numbers),
    key: quote,
    colon: ': ',
    emptyObject: '{}',
    object: ['{', '}'],
    null: 'None',
    true: 'True',
    false: 'False',
    indent: '    ',
  }, indent);
}

function access(variable: string, path: JsonPath): string {
  return `field(${variable}${path.map((key) => `, ${typeof key === 'number' ? key : quote(key)}`).join('')})`;
}

function requestPath(step: Step): string {
  return stringExpression(requestTarget(step), []);
}

const BASIC: Record<string, string> = {
  merchantApi: 'basic(MERCHANT_API_USERNAME, MERCHANT_API_PASSWORD)',
  transactional: 'basic(transactional_username, transactional_password)',
  extras: 'basic(EXTRAS_USERNAME, EXTRAS_PASSWORD)',
};

function stepLines(plan: OperationPlan, step: Step, index: number, last: boolean): string[] {
  const lines = [`# ${index + 1}. ${step.title}`];
  const path = requestPath(step);
  const body = step.body === undefined ? 'None' : 'body';
  if (step.body !== undefined) lines.push(`body = to_json(${literal(step.body, plan.numbers, '')})`);
  let call: string;
  if (step.auth === 'web') {
    lines.push(`path = ${path}`);
    call = `call("${step.method}", path, ${body}, {"X-Partner-Id": PARTNER_ID, "X-Signature": sign(${step.body === undefined ? 'b""' : 'body'}, path.encode())})`;
  } else if (step.auth === 'sdk') {
    call = `call("${step.method}", ${path}, body, {"X-Partnerid": PARTNER_ID, "X-Signature": sign(body)})`;
  } else {
    const auth = BASIC[step.auth];
    call = `call("${step.method}", ${path}, ${body}${auth === undefined ? '' : `, ${auth}`})`;
  }
  if (last) {
    lines.push(`status, answer, headers = ${call}`, 'print(f"HTTP {status}")');
    if (plan.printHeader !== undefined) lines.push(`print("${plan.printHeader}: " + headers.get(${quote(plan.printHeader)}, ""))`);
    for (const field of plan.print) lines.push(`print("${pathName(field)}: " + show(${access('answer', field)}))`);
    if (plan.checkStatusSignature) {
      lines.push(
        "# The answer's signature: base64(SHA-256(transactionId + status + key)), no separator (D22)",
        'expected = sign(str(field(answer, "transactionId")).encode(), str(field(answer, "status")).encode())',
        'print("signature valid: " + show(hmac.compare_digest(expected, str(field(answer, "signature")))))',
      );
    }
    lines.push('sys.exit(0 if 200 <= status < 300 else 1)');
    return lines;
  }
  const saves = Object.entries(step.save ?? {});
  lines.push(`${saves.length === 0 ? '' : 'answer = '}ok(${quote(step.title)}, ${call})`);
  for (const [variable, field] of saves) lines.push(`${name(variable)} = ${access('answer', field)}`);
  return lines;
}

const HELPERS = `def call(method, path, body=None, headers=None):
    """Sends one request; answers (status, the decoded JSON answer, the headers)."""
    headers = dict(headers or {})
    if body is not None:
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(BASE_URL + path, data=body, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status, raw, received = response.status, response.read(), response.headers
    except urllib.error.HTTPError as error:
        status, raw, received = error.code, error.read(), error.headers
    try:
        answer = json.loads(raw) if raw else None
    except ValueError:
        answer = None
    return status, answer, received


def ok(step, result):
    """The answer of a set-up step; stops with it when the step failed."""
    status, answer, _ = result
    if not 200 <= status < 300:
        sys.exit(f"{step} failed: {status} {json.dumps(answer)}")
    return answer


def field(value, *path):
    """A value inside a decoded answer, or None."""
    for key in path:
        try:
            value = value[key]
        except (KeyError, IndexError, TypeError):
            return None
    return value


def show(value):
    """A value as the samples print it (true, false, null as in JSON)."""
    return json.dumps(value) if value is None or isinstance(value, bool) else str(value)
`;

export function pythonOperation(plan: OperationPlan): string {
  const auths = new Set(plan.steps.map((step) => step.auth));
  const uses = (pattern: RegExp) => JSON.stringify(plan).match(pattern) !== null;
  const signs = auths.has('web') || auths.has('sdk');
  const basic = ['merchantApi', 'transactional', 'extras'].some((auth) => auths.has(auth as never));
  const imports = ['json', 'os', 'sys', 'urllib.error', 'urllib.request'];
  if (signs || basic) imports.push('base64');
  if (signs) imports.push('hashlib');
  if (plan.checkStatusSignature) imports.push('hmac');
  if (uses(/\$\{run\}/)) imports.push('secrets');
  const lines = [
    `"""${plan.summary} (${plan.operationId}), against the pay-later sandbox with the standard library only.`,
    '',
    'Run: python3 sample.py   (PAYLATER_BASE_URL: the service; default the sandbox of `npm start`)',
    '"""',
    ...imports.sort().map((module) => `import ${module}`),
  ];
  if (uses(/\$\{tomorrowIst\}/)) lines.push('from datetime import datetime, timedelta, timezone');
  lines.push('', 'BASE_URL = os.environ.get("PAYLATER_BASE_URL", "http://127.0.0.1:4000")');
  if (auths.has('merchantApi')) {
    lines.push('MERCHANT_API_USERNAME = os.environ.get("PAYLATER_MERCHANT_API_USERNAME", "pg_test")');
    lines.push('MERCHANT_API_PASSWORD = os.environ.get("PAYLATER_MERCHANT_API_PASSWORD", "pg_test_secret")');
  }
  if (auths.has('extras')) {
    lines.push('EXTRAS_USERNAME = os.environ.get("PAYLATER_EXTRAS_USERNAME", "extras_test")');
    lines.push('EXTRAS_PASSWORD = os.environ.get("PAYLATER_EXTRAS_PASSWORD", "extras_test_secret")');
  }
  if (signs) {
    lines.push('PARTNER_ID = os.environ.get("PAYLATER_PARTNER_ID", "partner_test")');
    lines.push('PRIVATE_KEY = os.environ.get("PAYLATER_PRIVATE_KEY", "test_private_key")');
  }
  lines.push('', '');
  if (signs) {
    lines.push(
      'def sign(*parts):',
      '    """base64(SHA-256(the parts joined, then the private key)): the signature over the exact bytes."""',
      '    return base64.b64encode(hashlib.sha256(b"".join(parts) + PRIVATE_KEY.encode()).digest()).decode()',
      '',
      '',
    );
  }
  if (basic) {
    lines.push(
      'def basic(username, password):',
      '    """The HTTP Basic header."""',
      '    return {"Authorization": "Basic " + base64.b64encode(f"{username}:{password}".encode()).decode()}',
      '',
      '',
    );
  }
  if (plan.steps.some((step) => step.body !== undefined)) {
    lines.push(
      'def to_json(value):',
      '    """The compact JSON that is signed and sent, as bytes."""',
      '    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()',
      '',
      '',
    );
  }
  lines.push(HELPERS, '');
  if (uses(/\$\{run\}/)) lines.push('run = secrets.token_hex(4)  # makes the ids of this run unique');
  if (uses(/\$\{tomorrowIst\}/)) lines.push('tomorrow_ist = (datetime.now(timezone(timedelta(hours=5, minutes=30))) + timedelta(days=1)).date().isoformat()');
  for (const [variable, template] of plan.vars) lines.push(`${name(variable)} = ${stringExpression(template, plan.numbers)}`);
  plan.steps.forEach((step, index) => lines.push('', ...stepLines(plan, step, index, index === plan.steps.length - 1)));
  return `${lines.join('\n')}\n`;
}

export function pythonWebhook(plan: WebhookPlan): string {
  const secret =
    plan.secret === 'privateKey'
      ? ['SECRET = os.environ.get("PAYLATER_PRIVATE_KEY", "test_private_key")  # the partner\'s private key']
      : [
          "# The merchant's Transactional API password (merchant.basicAuthDetails.password)",
          'SECRET = os.environ.get("PAYLATER_TRANSACTIONAL_PASSWORD") or sys.exit(',
          '    "Set PAYLATER_TRANSACTIONAL_PASSWORD to the merchant\'s Transactional API password."',
          ')',
        ];
  const value = (field: JsonPath) => `event${field.map((key) => `.get(${typeof key === 'number' ? key : quote(key)}, {})`).join('')}`;
  const lines = [
    `"""Receives the ${plan.name} webhook (${plan.operationId}) and verifies X-Signature =`,
    'base64(SHA-256(raw body + key)) over the exact bytes received, with hmac.compare_digest, before parsing.',
    '',
    'Run: python3 receiver.py   (PORT: default 8080)',
    '"""',
    'import base64',
    'import hashlib',
    'import hmac',
    'import json',
    'import os',
    'import sys',
    'from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer',
    '',
    'PORT = int(os.environ.get("PORT", "8080"))',
    ...secret,
    '',
    '',
    'def signature(data):',
    '    """base64(SHA-256(data + key))."""',
    '    return base64.b64encode(hashlib.sha256(data + SECRET.encode()).digest()).decode()',
    '',
    '',
    'class Receiver(BaseHTTPRequestHandler):',
    '    def do_POST(self):',
    '        length = int(self.headers.get("Content-Length") or 0)',
    '        if length > 1024 * 1024:',
    '            return self.reject(413, "the body is larger than 1 MiB")',
    '        raw = self.rfile.read(length)  # the raw body: never a re-encoded one',
    '        received = self.headers.get("X-Signature", "")',
    '        if not hmac.compare_digest(signature(raw).encode(), received.encode()):',
    '            return self.reject(401, "X-Signature is not the signature of this body")',
    '        try:',
    '            event = json.loads(raw)',
    '        except ValueError:',
    '            return self.reject(400, "the body is not JSON")',
    '        if not isinstance(event, dict):',
    '            return self.reject(400, "the body is not a JSON object")',
  ];
  if (plan.statusSignature) {
    lines.push(
      "        # The body's own signature: base64(SHA-256(transactionId + status + key)), no separator (D22)",
      '        expected = signature((str(event.get("transactionId", "")) + str(event.get("status", ""))).encode())',
      '        if not hmac.compare_digest(expected.encode(), str(event.get("signature", "")).encode()):',
      '            return self.reject(401, "the body\'s signature is not the status signature of its transactionId and status")',
    );
  }
  lines.push(
    '        # Verified. Deduplicate on X-Event-Id (the same on every retry), record the event, answer quickly.',
    '        print("verified: " + self.headers.get("X-Event-Id", ""), flush=True)',
    ...plan.print.map((field) => `        print("${pathName(field)}: " + str(${value(field).replace(/\.get\(([^)]*), \{\}\)$/, '.get($1, "")')}), flush=True)`),
    '        self.answer(200, {"received": True})',
    '',
    '    def reject(self, status, reason):',
    '        print("rejected: " + reason, flush=True)',
    '        self.answer(status, {"error": reason})',
    '',
    '    def answer(self, status, body):',
    '        data = json.dumps(body).encode()',
    '        self.send_response(status)',
    '        self.send_header("Content-Type", "application/json")',
    '        self.send_header("Content-Length", str(len(data)))',
    '        self.end_headers()',
    '        self.wfile.write(data)',
    '',
    '    def log_message(self, format, *args):',
    '        pass  # one line per event is printed above',
    '',
    '',
    'if __name__ == "__main__":',
    '    server = ThreadingHTTPServer(("127.0.0.1", PORT), Receiver)',
    '    print(f"listening on http://127.0.0.1:{PORT}", flush=True)',
    '    server.serve_forever()',
  );
  return `${lines.join('\n')}\n`;
}

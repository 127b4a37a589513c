/**
 * The PHP template: plain `curl_*` functions and `hash('sha256', ..., true)`, no framework or
 * library; the body is encoded once with json_encode and those exact bytes are signed and sent.
 * The webhook receiver runs under any PHP web server (`php -S` included) and compares with
 * `hash_equals`.
 */
import { pathName, renderLiteral, requestTarget, soleVariable, templateParts, type JsonPath, type OperationPlan, type Step, type WebhookPlan } from './plan.js';

function quote(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** A PHP string expression: literal text joined to `$variables` with `.`. */
export function stringExpression(template: string, numbers: readonly string[]): string {
  const sole = soleVariable(template);
  if (sole !== undefined) return `$${sole}`;
  void numbers;
  return templateParts(template)
    .map((part) => ('text' in part ? quote(part.text) : `$${part.variable}`))
    .join(' . ') || "''";
}

/** A PHP literal of a JSON value: arrays for lists and objects, `new stdClass()` for `{}`. */
export function literal(value: unknown, numbers: readonly string[], indent: string): string {
  return renderLiteral(value, {
    string: (template) => stringExpression(template, numbers),
    key: quote,
    colon: ' => ',
    emptyObject: 'new stdClass()',
    object: ['[', ']'],
    null: 'null',
    true: 'true',
    false: 'false',
    indent: '    ',
  }, indent);
}

function access(variable: string, path: JsonPath): string {
  return `field(${variable}${path.map((key) => `, ${typeof key === 'number' ? key : quote(key)}`).join('')})`;
}

/** The path and query as a PHP string expression. */
function requestPath(step: Step): string {
  return stringExpression(requestTarget(step), []);
}

const AUTH_ARGUMENTS: Record<string, string> = {
  merchantApi: '[], "$merchantApiUsername:$merchantApiPassword"',
  transactional: '[], "$transactionalUsername:$transactionalPassword"',
  extras: '[], "$extrasUsername:$extrasPassword"',
};

function stepLines(plan: OperationPlan, step: Step, index: number, last: boolean): string[] {
  const lines = [`// ${index + 1}. ${step.title}`];
  const path = requestPath(step);
  const body = step.body === undefined ? 'null' : '$body';
  if (step.body !== undefined) lines.push(`$body = json(${literal(step.body, plan.numbers, '')});`);
  let call: string;
  if (step.auth === 'web') {
    lines.push(`$path = ${path};`);
    call = `call('${step.method}', $path, ${body}, ['X-Partner-Id: ' . $partnerId, 'X-Signature: ' . sign(${step.body === undefined ? "''" : '$body'}, $path)])`;
  } else if (step.auth === 'sdk') {
    call = `call('${step.method}', ${path}, ${body}, ['X-Partnerid: ' . $partnerId, 'X-Signature: ' . sign($body)])`;
  } else {
    const auth = AUTH_ARGUMENTS[step.auth];
    call = `call('${step.method}', ${path}, ${body}${auth === undefined ? '' : `, ${auth}`})`;
  }
  if (last) {
    lines.push(`[$status, $answer, $headers] = ${call};`, 'echo "HTTP $status\\n";');
    if (plan.printHeader !== undefined) {
      lines.push(`echo '${plan.printHeader}: ' . ($headers[${quote(plan.printHeader)}] ?? '') . "\\n";`);
    }
    for (const field of plan.print) lines.push(`echo '${pathName(field)}: ' . show(${access('$answer', field)}) . "\\n";`);
    if (plan.checkStatusSignature) {
      lines.push(
        "// The answer's signature: base64(SHA-256(transactionId + status + key)), no separator (D22)",
        "$valid = hash_equals(sign((string) field($answer, 'transactionId'), (string) field($answer, 'status')), (string) field($answer, 'signature'));",
        "echo 'signature valid: ' . show($valid) . \"\\n\";",
      );
    }
    lines.push('exit($status >= 200 && $status < 300 ? 0 : 1);');
    return lines;
  }
  const saves = Object.entries(step.save ?? {});
  lines.push(`${saves.length === 0 ? '' : '$answer = '}ok(${quote(step.title)}, ${call});`);
  for (const [variable, field] of saves) lines.push(`$${variable} = ${access('$answer', field)};`);
  return lines;
}

const HELPERS = `/** Sends one request; answers [status, the decoded JSON answer, the headers by lower-case name]. */
function call(string $method, string $path, ?string $body, array $headers = [], ?string $basic = null): array
{
    global $baseUrl;
    $received = [];
    $curl = curl_init($baseUrl . $path);
    curl_setopt_array($curl, [
        CURLOPT_CUSTOMREQUEST => $method,
        CURLOPT_RETURNTRANSFER => true,
        CURLOPT_TIMEOUT => 30,
        CURLOPT_HEADERFUNCTION => function ($curl, string $line) use (&$received): int {
            $parts = explode(':', $line, 2);
            if (count($parts) === 2) {
                $received[strtolower(trim($parts[0]))] = trim($parts[1]);
            }
            return strlen($line);
        },
    ]);
    if ($body !== null) {
        $headers[] = 'Content-Type: application/json';
        curl_setopt($curl, CURLOPT_POSTFIELDS, $body); // exactly the bytes that were signed
    }
    if ($basic !== null) {
        curl_setopt($curl, CURLOPT_USERPWD, $basic);
    }
    $headers[] = 'Expect:';
    curl_setopt($curl, CURLOPT_HTTPHEADER, $headers);
    $raw = curl_exec($curl);
    if ($raw === false) {
        fwrite(STDERR, "$method $path failed: " . curl_error($curl) . "\\n");
        exit(1);
    }
    $status = curl_getinfo($curl, CURLINFO_RESPONSE_CODE);
    curl_close($curl);
    return [$status, json_decode($raw, true), $received];
}

/** The answer of a set-up step; stops with it when the step failed. */
function ok(string $step, array $result): mixed
{
    [$status, $answer] = $result;
    if ($status < 200 || $status >= 300) {
        fwrite(STDERR, "$step failed: $status " . json_encode($answer) . "\\n");
        exit(1);
    }
    return $answer;
}

/** A value inside a decoded answer, or null. */
function field(mixed $value, string|int ...$path): mixed
{
    foreach ($path as $key) {
        if (!is_array($value) || !array_key_exists($key, $value)) {
            return null;
        }
        $value = $value[$key];
    }
    return $value;
}

/** A value as the samples print it (true, false, null as in JSON). */
function show(mixed $value): string
{
    return is_bool($value) || $value === null ? json_encode($value) : (string) $value;
}
`;

export function phpOperation(plan: OperationPlan): string {
  const auths = new Set(plan.steps.map((step) => step.auth));
  const uses = (pattern: RegExp) => JSON.stringify(plan).match(pattern) !== null;
  const signs = auths.has('web') || auths.has('sdk');
  const lines = [
    '<?php',
    `// ${plan.summary} (${plan.operationId}), against the pay-later sandbox with plain curl_* functions.`,
    '// Run: php sample.php   (needs php-curl; PAYLATER_BASE_URL: the service; default the sandbox of `npm start`)',
    '',
    "$baseUrl = getenv('PAYLATER_BASE_URL') ?: 'http://127.0.0.1:4000';",
  ];
  if (auths.has('merchantApi')) {
    lines.push("$merchantApiUsername = getenv('PAYLATER_MERCHANT_API_USERNAME') ?: 'pg_test';");
    lines.push("$merchantApiPassword = getenv('PAYLATER_MERCHANT_API_PASSWORD') ?: 'pg_test_secret';");
  }
  if (auths.has('extras')) {
    lines.push("$extrasUsername = getenv('PAYLATER_EXTRAS_USERNAME') ?: 'extras_test';");
    lines.push("$extrasPassword = getenv('PAYLATER_EXTRAS_PASSWORD') ?: 'extras_test_secret';");
  }
  if (signs) {
    lines.push("$partnerId = getenv('PAYLATER_PARTNER_ID') ?: 'partner_test';");
    lines.push("$privateKey = getenv('PAYLATER_PRIVATE_KEY') ?: 'test_private_key';");
  }
  if (uses(/\$\{run\}/)) lines.push('$run = bin2hex(random_bytes(4)); // makes the ids of this run unique');
  if (uses(/\$\{tomorrowIst\}/)) lines.push("$tomorrowIst = (new DateTime('tomorrow', new DateTimeZone('Asia/Kolkata')))->format('Y-m-d');");
  for (const [variable, template] of plan.vars) lines.push(`$${variable} = ${stringExpression(template, plan.numbers)};`);
  lines.push('');
  if (signs) {
    lines.push(
      '/** base64(SHA-256(the parts joined, then the private key)): the signature over the exact bytes. */',
      'function sign(string ...$parts): string',
      '{',
      '    global $privateKey;',
      "    return base64_encode(hash('sha256', implode('', $parts) . $privateKey, true));",
      '}',
      '',
    );
  }
  if (plan.steps.some((step) => step.body !== undefined)) {
    lines.push(
      '/** The compact JSON that is signed and sent. */',
      'function json(mixed $value): string',
      '{',
      '    return json_encode($value, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR);',
      '}',
      '',
    );
  }
  lines.push(HELPERS);
  plan.steps.forEach((step, index) => lines.push(...stepLines(plan, step, index, index === plan.steps.length - 1), ''));
  return `${lines.join('\n').trimEnd()}\n`;
}

export function phpWebhook(plan: WebhookPlan): string {
  const secret =
    plan.secret === 'privateKey'
      ? ["$secret = getenv('PAYLATER_PRIVATE_KEY') ?: 'test_private_key'; // the partner's private key"]
      : [
          "// The merchant's Transactional API password (merchant.basicAuthDetails.password)",
          "$secret = getenv('PAYLATER_TRANSACTIONAL_PASSWORD');",
          'if ($secret === false || $secret === \'\') {',
          "    reject(500, 'PAYLATER_TRANSACTIONAL_PASSWORD is not set to the merchant\\'s Transactional API password');",
          '}',
        ];
  const lines = [
    '<?php',
    `// Receives the ${plan.name} webhook (${plan.operationId}) and verifies X-Signature =`,
    '// base64(SHA-256(raw body + key)) over the exact bytes received, with hash_equals, before parsing.',
    '// Run: php -S 127.0.0.1:8080 receiver.php   (or as the webhook URL\'s script under any PHP server)',
    '',
    '/** Writes to the server\'s log (the console of php -S). */',
    'function logLine(string $line): void',
    '{',
    "    file_put_contents('php://stderr', $line . \"\\n\");",
    '}',
    '',
    'function reject(int $status, string $reason): never',
    '{',
    "    logLine('rejected: ' . $reason);",
    '    http_response_code($status);',
    "    header('Content-Type: application/json');",
    "    echo json_encode(['error' => $reason]);",
    '    exit;',
    '}',
    '',
    ...secret,
    "if ($_SERVER['REQUEST_METHOD'] !== 'POST') {",
    "    reject(405, 'only POST is accepted');",
    '}',
    "$raw = file_get_contents('php://input'); // the raw body: never a re-encoded one",
    'if (strlen($raw) > 1048576) {',
    "    reject(413, 'the body is larger than 1 MiB');",
    '}',
    "$expected = base64_encode(hash('sha256', $raw . $secret, true));",
    "if (!hash_equals($expected, $_SERVER['HTTP_X_SIGNATURE'] ?? '')) {",
    "    reject(401, 'X-Signature is not the signature of this body');",
    '}',
    '$event = json_decode($raw, true);',
    'if (!is_array($event)) {',
    "    reject(400, 'the body is not a JSON object');",
    '}',
  ];
  if (plan.statusSignature) {
    lines.push(
      "// The body's own signature: base64(SHA-256(transactionId + status + key)), no separator (D22)",
      "$statusSignature = base64_encode(hash('sha256', ($event['transactionId'] ?? '') . ($event['status'] ?? '') . $secret, true));",
      "if (!is_string($event['signature'] ?? null) || !hash_equals($statusSignature, $event['signature'])) {",
      "    reject(401, 'the body\\'s signature is not the status signature of its transactionId and status');",
      '}',
    );
  }
  const value = (field: JsonPath) => `$event${field.map((key) => `[${typeof key === 'number' ? key : quote(key)}]`).join('')} ?? ''`;
  lines.push(
    '',
    '// Verified. Deduplicate on X-Event-Id (the same on every retry), record the event, answer quickly.',
    "logLine('verified: ' . ($_SERVER['HTTP_X_EVENT_ID'] ?? ''));",
    ...plan.print.map((field) => `logLine('${pathName(field)}: ' . (${value(field)}));`),
    "header('Content-Type: application/json');",
    "echo json_encode(['received' => true]);",
  );
  return `${lines.join('\n')}\n`;
}

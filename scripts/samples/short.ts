/**
 * The short call of each operation, per language: what a reader pastes into a shell or a file and
 * runs as it is against the sandbox of `npm start`. It reads the address and the credentials from
 * the environment with the sandbox's test values as defaults (a variable set but empty counts as
 * unset, as in the guides), makes its own ids (a random suffix,
 * as the complete programs do), sets up in a few plain requests what the call needs (a transaction
 * initiated, confirmed, ...) and then makes the call and prints its status and answer. The
 * reference shows it first, and the complete program (index.ts: every field printed and checked)
 * one click away.
 *
 * Shorter than the complete program: the gateway's transactional calls use the sandbox's
 * ready-made test merchant (`testPartnerId` / `testPrivateKey`) instead of onboarding one, and
 * nothing is checked but the last answer's status.
 */
import type { Family } from '../families.js';
import { HELPERS as SHELL_HELPERS, jsonWord, shellName, word } from './curl.js';
import { callOptions, literal as nodeLiteral, quote as nodeQuote, stringLiteral } from './node.js';
import { literal as phpLiteral, stringExpression as phpString } from './php.js';
import { literal as pythonLiteral, stringExpression as pythonString } from './python.js';
import { requestTarget, samplePlans, snakeCase, type Auth, type JsonPath, type OperationPlan, type Step } from './plan.js';

type Language = 'curl' | 'Node' | 'PHP' | 'Python';

/** One credential: the snippet's variable, the environment variable, the sandbox's test value. */
type Credential = readonly [name: string, variable: string, test: string];

/** Each kind of credentials: the user (or partner id) and the password (or key). */
const CREDENTIALS: Record<Exclude<Auth, 'none'>, readonly [Credential, Credential]> = {
  merchantApi: [
    ['merchantApiUsername', 'PAYLATER_MERCHANT_API_USERNAME', 'pg_test'],
    ['merchantApiPassword', 'PAYLATER_MERCHANT_API_PASSWORD', 'pg_test_secret'],
  ],
  // The sandbox's ready-made, enabled test merchant (docs/sandbox.md): no onboarding needed.
  transactional: [
    ['transactionalUsername', 'PAYLATER_TRANSACTIONAL_USERNAME', 'testPartnerId'],
    ['transactionalPassword', 'PAYLATER_TRANSACTIONAL_PASSWORD', 'testPrivateKey'],
  ],
  extras: [
    ['extrasUsername', 'PAYLATER_EXTRAS_USERNAME', 'extras_test'],
    ['extrasPassword', 'PAYLATER_EXTRAS_PASSWORD', 'extras_test_secret'],
  ],
  web: [
    ['partnerId', 'PAYLATER_PARTNER_ID', 'partner_test'],
    ['privateKey', 'PAYLATER_PRIVATE_KEY', 'test_private_key'],
  ],
  sdk: [
    ['partnerId', 'PAYLATER_PARTNER_ID', 'partner_test'],
    ['privateKey', 'PAYLATER_PRIVATE_KEY', 'test_private_key'],
  ],
};

const LIVE = 'For live: set PAYLATER_BASE_URL to the service and the PAYLATER_ credentials to your own (the defaults are the sandbox\'s test values); the /sandbox/ set-up calls exist only in the sandbox.';

/**
 * The plan the short call follows: the complete program's, without the onboarding of a merchant
 * when the call takes the Transactional API credentials (the ready-made test merchant has them).
 */
export function shortPlan(plan: OperationPlan): OperationPlan {
  if (plan.steps.at(-1)!.auth !== 'transactional') return plan;
  const onboarding = (step: Step) => step.auth === 'merchantApi' || step.path.startsWith('/sandbox/gateway/merchants/');
  const steps = plan.steps.filter((step) => !onboarding(step));
  const used = JSON.stringify(steps);
  return { ...plan, steps, vars: plan.vars.filter(([name]) => used.includes(`\${${name}}`)) };
}

/** The credentials the steps use, once each. */
function credentialsOf(plan: OperationPlan): Credential[] {
  const seen = new Map<string, Credential>();
  for (const step of plan.steps) for (const entry of step.auth === 'none' ? [] : CREDENTIALS[step.auth]) seen.set(entry[0], entry);
  return [...seen.values()];
}

const uses = (plan: OperationPlan, variable: string) => JSON.stringify(plan).includes(`\${${variable}}`);
const header = (plan: OperationPlan, comment: string) => [
  `${comment} ${plan.summary} (${plan.operationId}): runs as it is against the sandbox of \`npm start\`.`,
  `${comment} ${LIVE}`,
];

// ---------------------------------------------------------------------------------------------
// bash, curl and openssl

function curl(plan: OperationPlan): string {
  const lines = [...header(plan, '#'), 'BASE_URL="${PAYLATER_BASE_URL:-http://127.0.0.1:4000}"'];
  for (const [name, variable, test] of credentialsOf(plan)) lines.push(`${shellName(name)}="\${${variable}:-${test}}"`);
  if (uses(plan, 'run')) lines.push('RUN=$(openssl rand -hex 4)   # makes the ids unique');
  if (uses(plan, 'tomorrowIst')) lines.push("TOMORROW_IST=$(TZ=Asia/Kolkata date -d tomorrow +%F 2>/dev/null || TZ=Asia/Kolkata date -v+1d +%F)");
  for (const [name, template] of plan.vars) lines.push(`${shellName(name)}=${word(template)}`);
  if (plan.steps.some((step) => step.save !== undefined && Object.keys(step.save).length > 0)) lines.push(SHELL_HELPERS.json);
  plan.steps.forEach((step, index) => {
    const last = index === plan.steps.length - 1;
    lines.push(last ? (plan.steps.length > 1 ? '# The call' : '') : `# Set-up: ${step.title}`);
    const path = word(requestTarget(step));
    const body = step.body === undefined ? "''" : '"$BODY"';
    if (step.body !== undefined) lines.push(`BODY=${jsonWord(step.body, plan.numbers)}`);
    if (step.auth === 'web') lines.push(`SIGNATURE=$(printf '%s' ${body} ${path} "$PRIVATE_KEY" | openssl dgst -sha256 -binary | base64)`);
    if (step.auth === 'sdk') lines.push(`SIGNATURE=$(printf '%s' ${body} "$PRIVATE_KEY" | openssl dgst -sha256 -binary | base64)`);
    const saves = Object.entries(step.save ?? {});
    const output = last ? (plan.printHeader !== undefined ? `-o /dev/null -w 'HTTP %{http_code} %{${plan.printHeader.replace('-', '_')}}\\n'` : "-w '\\nHTTP %{http_code}\\n'") : saves.length > 0 ? '-f' : '-f -o /dev/null';
    const options = [`curl -sS ${output} -X ${step.method} "$BASE_URL"${path}`];
    if (step.auth === 'web' || step.auth === 'sdk') options.push(`-H "${step.auth === 'web' ? 'X-Partner-Id' : 'X-Partnerid'}: $PARTNER_ID" -H "X-Signature: $SIGNATURE"`);
    else if (step.auth !== 'none') options.push(`-u "$${shellName(CREDENTIALS[step.auth][0][0])}:$${shellName(CREDENTIALS[step.auth][1][0])}"`);
    if (step.body !== undefined) options.push(`-H 'Content-Type: application/json' --data-raw "$BODY"`);
    const command = options.join(' \\\n  ');
    if (saves.length === 0) lines.push(command);
    else {
      lines.push(`ANSWER=$(${command})`);
      for (const [name, path] of saves) lines.push(`${shellName(name)}=$(json_get "$ANSWER" ${path.map((key) => `'${key}'`).join(' ')})`);
    }
  });
  return `${lines.filter((line) => line !== '').join('\n')}\n`;
}

// ---------------------------------------------------------------------------------------------
// Node: the package's typed clients, which sign what they send

const FACTORY: Record<Exclude<Auth, 'none'>, [factory: string, client: string]> = {
  merchantApi: ['createMerchantApiClient', 'merchantApi'],
  transactional: ['createTransactionalApiClient', 'transactional'],
  extras: ['createExtrasClient', 'extras'],
  web: ['createWebClient', 'web'],
  sdk: ['createSdkClient', 'sdk'],
};

function nodeAccess(variable: string, path: JsonPath): string {
  return variable + path.map((key) => (typeof key === 'number' ? `[${key}]` : `.${key}`)).join('');
}

function node(plan: OperationPlan): string {
  const auths = [...new Set(plan.steps.map((step) => step.auth))].filter((auth): auth is Exclude<Auth, 'none'> => auth !== 'none');
  const lines = [...header(plan, '//')];
  if (uses(plan, 'run')) lines.push("import { randomBytes } from 'node:crypto';");
  if (auths.length > 0) lines.push(`import { ${auths.map((auth) => FACTORY[auth][0]).join(', ')} } from 'paylater-api';`);
  lines.push('', "const baseUrl = process.env.PAYLATER_BASE_URL || 'http://127.0.0.1:4000';");
  for (const [name, variable, test] of credentialsOf(plan)) lines.push(`const ${name} = process.env.${variable} || ${nodeQuote(test)};`);
  if (uses(plan, 'run')) lines.push("const run = randomBytes(4).toString('hex'); // makes the ids unique");
  if (uses(plan, 'tomorrowIst')) lines.push("const tomorrowIst = new Date(Date.now() + (24 * 60 + 330) * 60_000).toISOString().slice(0, 10); // India's date tomorrow");
  for (const [name, template] of plan.vars) lines.push(`const ${name} = ${stringLiteral(template, plan.numbers)};`);
  for (const auth of auths) {
    const [factory, client] = FACTORY[auth];
    const [user, password] = CREDENTIALS[auth];
    lines.push(`const ${client} = ${factory}({ baseUrl, ${auth === 'web' || auth === 'sdk' ? 'partnerId, privateKey' : `credentials: { username: ${user[0]}, password: ${password[0]} }`} });`);
  }
  plan.steps.forEach((step, index) => {
    const last = index === plan.steps.length - 1;
    if (plan.steps.length > 1) lines.push(last ? '// The call' : `// Set-up: ${step.title}`);
    let call: string;
    if (step.operationId === undefined) {
      const init = step.body === undefined ? "{ method: 'POST' }" : `{ method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(${nodeLiteral(step.body, plan.numbers, '')}) }`;
      call = `await fetch(new URL(${stringLiteral(step.path, plan.numbers)}, baseUrl), ${init})`;
    } else if (step.auth === 'none') call = `await fetch(new URL(${nodeQuote(step.path)}, baseUrl))`;
    else call = `await ${FACTORY[step.auth][1]}.${step.method}(${nodeQuote(step.path)}${callOptions(plan, step)})`;
    const saves = Object.entries(step.save ?? {});
    if (last && step.auth === 'none') lines.push(`const response = ${call};`, `console.log(response.status, ${plan.printHeader ? `response.headers.get(${nodeQuote(plan.printHeader)})` : 'await response.text()'});`);
    else if (last) lines.push(`const { data, error, response } = ${call};`, 'console.log(response.status, JSON.stringify(data ?? error));');
    else if (saves.length === 0) lines.push(`${call};`);
    else {
      lines.push(`const answer${index + 1} = (${call}).data;`);
      for (const [name, path] of saves) lines.push(`const ${name} = ${nodeAccess(`answer${index + 1}`, path)};`);
    }
  });
  return `${lines.join('\n')}\n`;
}

// ---------------------------------------------------------------------------------------------
// PHP and Python: a small call() that serializes the body once and signs those exact bytes

function phpCall(auths: Set<Auth>): string[] {
  return [
    'function call(string $method, string $path, mixed $body = null, string|array|null $auth = null): array',
    '{',
    '    global $baseUrl, $partnerId, $privateKey;',
    "    $data = $body === null ? '' : json_encode($body, JSON_UNESCAPED_SLASHES);",
    "    $headers = $body === null ? [] : ['Content-Type: application/json'];",
    ...(auths.has('web') ? ["    if ($auth === 'web') { // base64(SHA-256(body + path and query + key))", "        array_push($headers, \"X-Partner-Id: $partnerId\", 'X-Signature: ' . base64_encode(hash('sha256', $data . $path . $privateKey, true)));", '    }'] : []),
    ...(auths.has('sdk') ? ["    if ($auth === 'sdk') { // base64(SHA-256(body + key))", "        array_push($headers, \"X-Partnerid: $partnerId\", 'X-Signature: ' . base64_encode(hash('sha256', $data . $privateKey, true)));", '    }'] : []),
    '    $ch = curl_init($baseUrl . $path);',
    '    curl_setopt_array($ch, [CURLOPT_CUSTOMREQUEST => $method, CURLOPT_RETURNTRANSFER => true, CURLOPT_HTTPHEADER => $headers]);',
    '    if ($body !== null) curl_setopt($ch, CURLOPT_POSTFIELDS, $data);',
    "    if (is_array($auth)) curl_setopt($ch, CURLOPT_USERPWD, implode(':', $auth)); // HTTP Basic",
    '    $answer = curl_exec($ch);',
    '    return [curl_getinfo($ch, CURLINFO_RESPONSE_CODE), $answer];',
    '}',
  ];
}

function php(plan: OperationPlan): string {
  const lines = ['<?php', ...header(plan, '//'), "$baseUrl = getenv('PAYLATER_BASE_URL') ?: 'http://127.0.0.1:4000';"];
  const credentials = credentialsOf(plan);
  for (const [name, variable, test] of credentials) lines.push(`$${name} = getenv('${variable}') ?: '${test}';`);
  if (!credentials.some(([name]) => name === 'partnerId')) lines.push("$partnerId = $privateKey = '';");
  if (uses(plan, 'run')) lines.push('$run = bin2hex(random_bytes(4)); // makes the ids unique');
  if (uses(plan, 'tomorrowIst')) lines.push("$tomorrowIst = (new DateTime('tomorrow', new DateTimeZone('Asia/Kolkata')))->format('Y-m-d');");
  for (const [name, template] of plan.vars) lines.push(`$${name} = ${phpString(template, plan.numbers)};`);
  lines.push('', ...phpCall(new Set(plan.steps.map((step) => step.auth))), '');
  plan.steps.forEach((step, index) => {
    const last = index === plan.steps.length - 1;
    if (plan.steps.length > 1) lines.push(last ? '// The call' : `// Set-up: ${step.title}`);
    const auth = step.auth === 'web' || step.auth === 'sdk' ? `'${step.auth}'` : step.auth === 'none' ? 'null' : `[${CREDENTIALS[step.auth].map(([name]) => `$${name}`).join(', ')}]`;
    const call = `call('${step.method}', ${phpString(requestTarget(step), [])}, ${step.body === undefined ? 'null' : phpLiteral(step.body, plan.numbers, '')}, ${auth})`;
    const saves = Object.entries(step.save ?? {});
    if (last) lines.push(`[$status, $answer] = ${call};`, plan.printHeader ? 'echo $status, PHP_EOL;' : 'echo $status, \' \', $answer, PHP_EOL;');
    else if (saves.length === 0) lines.push(`${call};`);
    else {
      lines.push(`$answer${index + 1} = json_decode(${call}[1], true);`);
      for (const [name, path] of saves) lines.push(`$${name} = $answer${index + 1}${path.map((key) => `[${typeof key === 'number' ? key : `'${key}'`}]`).join('')};`);
    }
  });
  return `${lines.join('\n')}\n`;
}

function pythonCall(auths: Set<Auth>): string[] {
  return [
    'def call(method, path, body=None, auth=None):',
    "    data = b'' if body is None else json.dumps(body, separators=(',', ':')).encode()",
    "    headers = {} if body is None else {'Content-Type': 'application/json'}",
    ...(auths.has('web') ? ["    if auth == 'web':  # base64(SHA-256(body + path and query + key))", "        headers.update({'X-Partner-Id': partner_id, 'X-Signature': base64.b64encode(hashlib.sha256(data + path.encode() + private_key.encode()).digest()).decode()})"] : []),
    ...(auths.has('sdk') ? ["    if auth == 'sdk':  # base64(SHA-256(body + key))", "        headers.update({'X-Partnerid': partner_id, 'X-Signature': base64.b64encode(hashlib.sha256(data + private_key.encode()).digest()).decode()})"] : []),
    "    if isinstance(auth, tuple):  # HTTP Basic",
    "        headers['Authorization'] = 'Basic ' + base64.b64encode(':'.join(auth).encode()).decode()",
    '    request = urllib.request.Request(base_url + path, data=None if body is None else data, method=method, headers=headers)',
    '    try:',
    '        with urllib.request.urlopen(request) as answer:',
    '            return answer.status, answer.read().decode()',
    '    except urllib.error.HTTPError as answer:',
    '        return answer.code, answer.read().decode()',
  ];
}

function python(plan: OperationPlan): string {
  const lines = [...header(plan, '#'), `import base64, ${uses(plan, 'tomorrowIst') ? 'datetime, ' : ''}hashlib, json, os, secrets, urllib.error, urllib.request`, '', "base_url = os.environ.get('PAYLATER_BASE_URL') or 'http://127.0.0.1:4000'"];
  for (const [name, variable, test] of credentialsOf(plan)) lines.push(`${snakeCase(name)} = os.environ.get('${variable}') or '${test}'`);
  if (uses(plan, 'run')) lines.push('run = secrets.token_hex(4)  # makes the ids unique');
  if (uses(plan, 'tomorrowIst')) lines.push('tomorrow_ist = (datetime.datetime.now(datetime.timezone(datetime.timedelta(hours=5, minutes=30))) + datetime.timedelta(days=1)).date().isoformat()');
  for (const [name, template] of plan.vars) lines.push(`${snakeCase(name)} = ${pythonString(template, plan.numbers)}`);
  lines.push('', '', ...pythonCall(new Set(plan.steps.map((step) => step.auth))), '', '');
  plan.steps.forEach((step, index) => {
    const last = index === plan.steps.length - 1;
    if (plan.steps.length > 1) lines.push(last ? '# The call' : `# Set-up: ${step.title}`);
    const auth = step.auth === 'web' || step.auth === 'sdk' ? `'${step.auth}'` : step.auth === 'none' ? 'None' : `(${CREDENTIALS[step.auth].map(([name]) => snakeCase(name)).join(', ')})`;
    const call = `call('${step.method}', ${pythonString(requestTarget(step), [])}, ${step.body === undefined ? 'None' : pythonLiteral(step.body, plan.numbers, '')}, ${auth})`;
    const saves = Object.entries(step.save ?? {});
    if (last) lines.push(`status, answer = ${call}`, plan.printHeader ? 'print(status)' : 'print(status, answer)');
    else if (saves.length === 0) lines.push(call);
    else {
      lines.push(`answer${index + 1} = json.loads(${call}[1])`);
      for (const [name, path] of saves) lines.push(`${snakeCase(name)} = answer${index + 1}${path.map((key) => `[${typeof key === 'number' ? key : `'${key}'`}]`).join('')}`);
    }
  });
  return `${lines.join('\n')}\n`;
}

const RENDER: Record<Language, (plan: OperationPlan) => string> = { curl, Node: node, PHP: php, Python: python };

/** The short call of an operation in a language (by the sample's label: curl, Node, PHP, Python). */
export function shortCall(plan: OperationPlan, label: string): string {
  const render = RENDER[label as Language];
  if (!render) throw new Error(`no short call for the language ${label}`);
  return render(shortPlan(plan));
}

const FENCE: Record<string, string> = { Shell: 'bash', JavaScript: 'js', PHP: 'php', Python: 'python' };
const FULL_HEADING = '**The complete program.**';

/**
 * The copy of a bundle the reference renders: each operation's `x-codeSamples` (the language
 * tabs) hold its short call, and its description ends with the complete runnable programs, one
 * collapsible block per language (a click away). The bundle itself keeps the complete programs.
 */
export function withShortCalls(family: Family, document: Record<string, any>): Record<string, any> {
  const copy = structuredClone(document);
  for (const plan of samplePlans(family, copy)) {
    if (plan.kind !== 'operation') continue;
    const operation = findOperation(copy, plan.operationId);
    const full = (operation['x-codeSamples'] ?? []) as { lang: string; label: string; source: string }[];
    if (full.length === 0) continue;
    operation['x-codeSamples'] = full.map((sample) => ({ ...sample, source: shortCall(plan, sample.label) }));
    const blocks = full.map(
      (sample) =>
        `<details class="code-sample full-program" data-label="${sample.label}">\n<summary>${sample.label}: the complete program</summary>\n\n\`\`\`${FENCE[sample.lang] ?? ''}\n${sample.source.trimEnd()}\n\`\`\`\n\n</details>`,
    );
    operation.description = [
      String(operation.description ?? '').trimEnd(),
      '',
      `${FULL_HEADING} The samples beside show the call itself; each language's complete program, which sets up what the call needs and runs as it is against the sandbox (see the code samples guide):`,
      '',
      ...blocks,
    ].join('\n');
  }
  return copy;
}

function findOperation(document: Record<string, any>, operationId: string): Record<string, any> {
  for (const item of Object.values<any>(document.paths ?? {})) {
    for (const operation of Object.values<any>(item)) {
      if (operation && typeof operation === 'object' && operation.operationId === operationId) return operation;
    }
  }
  throw new Error(`no operation ${operationId}`);
}

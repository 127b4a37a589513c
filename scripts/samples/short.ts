/**
 * The short call of each operation, per language: only the request itself (the plan's last step),
 * its body from the contract's example, the credentials from the environment, and the signature
 * where the family needs one; what a reader copies into their own code. The reference shows it
 * first, and the complete runnable program (index.ts, run by the test suite) one click away.
 *
 * Values the full program saves from earlier answers (a check id, a merchant id) appear as
 * `<name>` placeholders; the plan's own variables appear with their example values.
 */
import type { Family } from '../families.js';
import type { Auth, OperationPlan, Step } from './plan.js';
import { requestTarget, samplePlans, templateParts } from './plan.js';

type Language = 'curl' | 'Node' | 'PHP' | 'Python';

/** The environment variables of each kind of credentials (the full programs read the same). */
const BASIC: Partial<Record<Auth, [string, string]>> = {
  merchantApi: ['PAYLATER_MERCHANT_API_USERNAME', 'PAYLATER_MERCHANT_API_PASSWORD'],
  transactional: ['PAYLATER_TRANSACTIONAL_USERNAME', 'PAYLATER_TRANSACTIONAL_PASSWORD'],
  extras: ['PAYLATER_EXTRAS_USERNAME', 'PAYLATER_EXTRAS_PASSWORD'],
};
const PARTNER_HEADER: Partial<Record<Auth, string>> = { web: 'X-Partner-Id', sdk: 'X-Partnerid' };
const NODE_CLIENT: Record<Auth, string> = {
  merchantApi: 'createMerchantApiClient({ baseUrl, credentials: { username: process.env.PAYLATER_MERCHANT_API_USERNAME, password: process.env.PAYLATER_MERCHANT_API_PASSWORD } })',
  transactional: 'createTransactionalApiClient({ baseUrl, credentials: { username: process.env.PAYLATER_TRANSACTIONAL_USERNAME, password: process.env.PAYLATER_TRANSACTIONAL_PASSWORD } })',
  extras: 'createExtrasClient({ baseUrl, credentials: { username: process.env.PAYLATER_EXTRAS_USERNAME, password: process.env.PAYLATER_EXTRAS_PASSWORD } })',
  web: 'createWebClient({ baseUrl, partnerId: process.env.PAYLATER_PARTNER_ID, privateKey: process.env.PAYLATER_PRIVATE_KEY })',
  sdk: 'createSdkClient({ baseUrl, partnerId: process.env.PAYLATER_PARTNER_ID, privateKey: process.env.PAYLATER_PRIVATE_KEY })',
  none: 'createClient({ baseUrl })',
};

/** A template with the plan's variables filled in (`${run}` dropped) and the others as `<name>`. */
function fill(template: string, plan: OperationPlan): string {
  const values = new Map<string, string>([['run', '']]);
  for (const [name, value] of plan.vars) values.set(name, fill(value, { ...plan, vars: [] }).replace(/_$/, ''));
  return templateParts(template)
    .map((part) => ('text' in part ? part.text : values.has(part.variable) ? values.get(part.variable)! : `<${part.variable}>`))
    .join('');
}

function fillJson(value: unknown, plan: OperationPlan): unknown {
  if (typeof value === 'string') return fill(value, plan);
  if (Array.isArray(value)) return value.map((item) => fillJson(item, plan));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fillJson(v, plan)]));
  return value;
}

interface Call {
  step: Step;
  target: string;
  body?: string;
  pathTemplate: string;
}

function callOf(plan: OperationPlan): Call {
  const step = plan.steps.at(-1)!;
  return {
    step,
    target: fill(requestTarget(step), plan),
    ...(step.body === undefined ? {} : { body: JSON.stringify(fillJson(step.body, plan)) }),
    pathTemplate: step.path,
  };
}

const shellQuote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;
const phpQuote = (text: string) => `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

function curl(plan: OperationPlan, call: Call): string {
  const { step } = call;
  const lines = [`# ${plan.summary} (${plan.operationId}): the call itself`, 'BASE_URL="${PAYLATER_BASE_URL:-http://127.0.0.1:4000}"'];
  if (call.body !== undefined) lines.push(`BODY=${shellQuote(call.body)}`);
  const body = call.body !== undefined ? '"$BODY"' : "''";
  if (step.auth === 'web') lines.push(`SIGNATURE=$(printf '%s%s%s' ${body} ${shellQuote(call.target)} "$PAYLATER_PRIVATE_KEY" | openssl dgst -sha256 -binary | base64)`);
  if (step.auth === 'sdk') lines.push(`SIGNATURE=$(printf '%s%s' ${body} "$PAYLATER_PRIVATE_KEY" | openssl dgst -sha256 -binary | base64)`);
  const options = [`curl -sS -X ${step.method} "$BASE_URL"${shellQuote(call.target)}`];
  const basic = BASIC[step.auth];
  if (basic) options.push(`-u "$${basic[0]}:$${basic[1]}"`);
  const partner = PARTNER_HEADER[step.auth];
  if (partner) options.push(`-H "${partner}: $PAYLATER_PARTNER_ID" -H "X-Signature: $SIGNATURE"`);
  if (call.body !== undefined) options.push(`-H 'Content-Type: application/json' --data-raw "$BODY"`);
  return `${lines.join('\n')}\n${options.join(' \\\n  ')}\n`;
}

function node(plan: OperationPlan, call: Call): string {
  const { step } = call;
  const factory = NODE_CLIENT[step.auth].split('(')[0]!;
  const options: string[] = [];
  const params = Object.entries(step.params ?? {}).map(([name, value]) => `${name}: ${JSON.stringify(fill(value, plan))}`);
  const query = (step.query ?? []).map(([name, value]) => `${/^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name)}: ${JSON.stringify(fill(value, plan))}`);
  if (params.length > 0 || query.length > 0) {
    options.push(`params: { ${[params.length > 0 ? `path: { ${params.join(', ')} }` : '', query.length > 0 ? `query: { ${query.join(', ')} }` : ''].filter(Boolean).join(', ')} }`);
  }
  if (call.body !== undefined) options.push(`body: ${JSON.stringify(JSON.parse(call.body), null, 2).replace(/\n/g, '\n  ')}`);
  return [
    `// ${plan.summary} (${plan.operationId}): the call itself`,
    `import { ${factory} } from 'paylater-api';`,
    '',
    "const baseUrl = process.env.PAYLATER_BASE_URL ?? 'http://127.0.0.1:4000';",
    `const client = ${NODE_CLIENT[step.auth]};`,
    `const { data, error, response } = await client.${step.method}('${call.pathTemplate}'${options.length > 0 ? `, {\n  ${options.join(',\n  ')},\n}` : ''});`,
    'console.log(response.status, data ?? error);',
    '',
  ].join('\n');
}

function php(plan: OperationPlan, call: Call): string {
  const { step } = call;
  const lines = ['<?php', `// ${plan.summary} (${plan.operationId}): the call itself`, "$baseUrl = getenv('PAYLATER_BASE_URL') ?: 'http://127.0.0.1:4000';"];
  lines.push(`$body = ${call.body !== undefined ? phpQuote(call.body) : "''"};`);
  const headers: string[] = [];
  if (call.body !== undefined) headers.push("'Content-Type: application/json'");
  if (step.auth === 'web') lines.push(`$signature = base64_encode(hash('sha256', $body . ${phpQuote(call.target)} . getenv('PAYLATER_PRIVATE_KEY'), true));`);
  if (step.auth === 'sdk') lines.push("$signature = base64_encode(hash('sha256', $body . getenv('PAYLATER_PRIVATE_KEY'), true));");
  const partner = PARTNER_HEADER[step.auth];
  if (partner) headers.push(`'${partner}: ' . getenv('PAYLATER_PARTNER_ID')`, "'X-Signature: ' . $signature");
  lines.push(`$ch = curl_init($baseUrl . ${phpQuote(call.target)});`);
  const options = [`CURLOPT_CUSTOMREQUEST => '${step.method}'`, 'CURLOPT_RETURNTRANSFER => true', `CURLOPT_HTTPHEADER => [${headers.join(', ')}]`];
  if (call.body !== undefined) options.push('CURLOPT_POSTFIELDS => $body');
  const basic = BASIC[step.auth];
  if (basic) options.push(`CURLOPT_USERPWD => getenv('${basic[0]}') . ':' . getenv('${basic[1]}')`);
  lines.push(`curl_setopt_array($ch, [\n    ${options.join(',\n    ')},\n]);`);
  lines.push('$answer = curl_exec($ch);', "echo curl_getinfo($ch, CURLINFO_RESPONSE_CODE), ' ', $answer, PHP_EOL;", '');
  return lines.join('\n');
}

function python(plan: OperationPlan, call: Call): string {
  const { step } = call;
  const lines = [`# ${plan.summary} (${plan.operationId}): the call itself`, 'import base64, hashlib, os, urllib.error, urllib.request', '', "base_url = os.environ.get('PAYLATER_BASE_URL', 'http://127.0.0.1:4000')"];
  lines.push(`body = ${call.body !== undefined ? `${phpQuote(call.body)}.encode()` : "b''"}`);
  const headers: string[] = [];
  if (call.body !== undefined) headers.push("'Content-Type': 'application/json'");
  if (step.auth === 'web') lines.push(`signature = base64.b64encode(hashlib.sha256(body + ${JSON.stringify(call.target)}.encode() + os.environ['PAYLATER_PRIVATE_KEY'].encode()).digest()).decode()`);
  if (step.auth === 'sdk') lines.push("signature = base64.b64encode(hashlib.sha256(body + os.environ['PAYLATER_PRIVATE_KEY'].encode()).digest()).decode()");
  const partner = PARTNER_HEADER[step.auth];
  if (partner) headers.push(`'${partner}': os.environ['PAYLATER_PARTNER_ID']`, "'X-Signature': signature");
  const basic = BASIC[step.auth];
  if (basic) headers.push(`'Authorization': 'Basic ' + base64.b64encode((os.environ['${basic[0]}'] + ':' + os.environ['${basic[1]}']).encode()).decode()`);
  lines.push(
    `request = urllib.request.Request(base_url + ${JSON.stringify(call.target)}, data=${call.body !== undefined ? 'body' : 'None'}, method='${step.method}', headers={${headers.join(', ')}})`,
    'try:',
    '    with urllib.request.urlopen(request) as answer:',
    '        print(answer.status, answer.read().decode())',
    'except urllib.error.HTTPError as answer:',
    '    print(answer.code, answer.read().decode())',
    '',
  );
  return lines.join('\n');
}

const RENDER: Record<Language, (plan: OperationPlan, call: Call) => string> = { curl, Node: node, PHP: php, Python: python };

/** The short call of an operation in a language (by the sample's label: curl, Node, PHP, Python). */
export function shortCall(plan: OperationPlan, label: string): string {
  const render = RENDER[label as Language];
  if (!render) throw new Error(`no short call for the language ${label}`);
  return render(plan, callOf(plan));
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

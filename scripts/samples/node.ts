/**
 * The Node template: an ES module that uses the package's typed clients (`createMerchantApiClient`,
 * `createTransactionalApiClient`, `createExtrasClient`, `createWebClient`, `createSdkClient`), which
 * sign the exact bytes they send, and its webhook handler (`createWebhookHandler`), which verifies
 * in constant time. Sandbox control endpoints, outside the contract, are called with fetch.
 */

import { pathName, renderLiteral, soleVariable, templateParts, type Auth, type JsonPath, type OperationPlan, type Step, type WebhookPlan } from './plan.js';

/**
 * How a sample's reader gets the package: not on the npm registry yet, so from a clone, packed
 * (docs/web-checkout.md, step 1); once it is published, `npm install paylater-api`.
 */
const INSTALL =
  'with paylater-api installed:\n// `npm install paylater-api` once it is published; until then `npm pack` in a clone of its repository, then\n' +
  '// `npm install ./paylater-api-<version>.tgz` (docs/web-checkout.md, step 1).';

/** A JavaScript string: a plain literal, or a template literal when it holds variables. */
export function stringLiteral(template: string, numbers: readonly string[]): string {
  const sole = soleVariable(template);
  if (sole !== undefined && numbers.includes(sole)) return sole;
  const parts = templateParts(template);
  if (parts.every((part) => 'text' in part)) return quote(template);
  if (parts.length === 1 && 'variable' in parts[0]!) return parts[0].variable;
  return `\`${parts.map((part) => ('text' in part ? part.text.replace(/[`\\]|\$\{/g, (m) => `\\${m}`) : `\${${part.variable}}`)).join('')}\``;
}

export function quote(text: string): string {
  return `'${JSON.stringify(text).slice(1, -1).replace(/\\"/g, '"').replace(/'/g, "\\'")}'`;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** A JavaScript literal of a JSON value whose strings are templates, indented. */
export function literal(value: unknown, numbers: readonly string[], indent: string): string {
  return renderLiteral(value, {
    string: (template) => stringLiteral(template, numbers),
    key: (key) => (IDENTIFIER.test(key) ? key : quote(key)),
    colon: ': ',
    emptyObject: '{}',
    object: ['{', '}'],
    null: 'null',
    true: 'true',
    false: 'false',
    indent: '  ',
  }, indent);
}

/** A value inside an answer, read with the program's `field` helper (answers may be unions of shapes). */
function fieldOf(variable: string, path: JsonPath): string {
  return `field(${variable}${path.map((key) => `, ${typeof key === 'number' ? key : quote(key)}`).join('')})`;
}

function access(variable: string, path: JsonPath): string {
  return variable + path.map((key) => (typeof key === 'number' ? `?.[${key}]` : IDENTIFIER.test(key) ? `?.${key}` : `?.[${quote(key)}]`)).join('');
}

const CLIENTS: Record<Exclude<Auth, 'transactional' | 'none'>, { factory: string; variable: string; options: string }> = {
  merchantApi: {
    factory: 'createMerchantApiClient',
    variable: 'merchantApi',
    options:
      "{\n  baseUrl,\n  credentials: {\n    username: process.env.PAYLATER_MERCHANT_API_USERNAME ?? 'pg_test',\n    password: process.env.PAYLATER_MERCHANT_API_PASSWORD ?? 'pg_test_secret',\n  },\n}",
  },
  extras: {
    factory: 'createExtrasClient',
    variable: 'extras',
    options:
      "{\n  baseUrl,\n  credentials: {\n    username: process.env.PAYLATER_EXTRAS_USERNAME ?? 'extras_test',\n    password: process.env.PAYLATER_EXTRAS_PASSWORD ?? 'extras_test_secret',\n  },\n}",
  },
  web: { factory: 'createWebClient', variable: 'web', options: '{ baseUrl, partnerId, privateKey }' },
  sdk: { factory: 'createSdkClient', variable: 'sdk', options: '{ baseUrl, partnerId, privateKey }' },
};

/** The second argument of a client call: path and query parameters, the body; '' when none. */
export function callOptions(plan: OperationPlan, step: Step): string {
  const params: string[] = [];
  if (step.params !== undefined) {
    params.push(`path: { ${Object.entries(step.params).map(([name, template]) => `${name}: ${stringLiteral(template, plan.numbers)}`).join(', ')} }`);
  }
  if (step.query !== undefined) {
    params.push(
      `query: { ${step.query.map(([name, template]) => `${IDENTIFIER.test(name) ? name : quote(name)}: ${/^\d+$/.test(template) ? template : stringLiteral(template, plan.numbers)}`).join(', ')} }`,
    );
  }
  const parts: string[] = [];
  if (params.length > 0) parts.push(`params: { ${params.join(', ')} }`);
  if (step.body === undefined) return parts.length === 0 ? '' : `, { ${parts.join(', ')} }`;
  parts.push(`body: ${literal(step.body, plan.numbers, '  ')}`);
  return `, {\n${parts.map((part) => `  ${part},`).join('\n')}\n}`;
}

function stepLines(plan: OperationPlan, step: Step, index: number, last: boolean, state: { transactional: boolean }): string[] {
  const lines = [`// ${index + 1}. ${step.title}`];
  if (step.auth === 'transactional' && !state.transactional) {
    state.transactional = true;
    lines.push(
      'const transactional = createTransactionalApiClient({',
      '  baseUrl,',
      '  credentials: { username: transactionalUsername, password: transactionalPassword },',
      '});',
    );
  }
  let call: string;
  if (step.operationId === undefined) {
    call = `await sandbox(${stringLiteral(step.path, plan.numbers)}${step.body === undefined ? '' : `, ${literal(step.body, plan.numbers, '')}`})`;
  } else if (step.auth === 'none') {
    call = `await fetch(new URL(${quote(step.path)}, baseUrl))`;
  } else {
    const client = step.auth === 'transactional' ? 'transactional' : CLIENTS[step.auth].variable;
    call = `await ${client}.${step.method}(${quote(step.path)}${callOptions(plan, step)})`;
  }
  if (last) {
    if (plan.printHeader !== undefined) {
      lines.push(`const response = ${call};`, 'console.log(`HTTP ${response.status}`);');
      lines.push(`console.log(\`${plan.printHeader}: \${response.headers.get(${quote(plan.printHeader)})}\`);`);
    } else {
      lines.push(`const { data, error, response } = ${call};`, 'console.log(`HTTP ${response.status}`);');
      for (const field of plan.print) lines.push(`console.log(\`${pathName(field)}: \${show(${fieldOf('data', field)})}\`);`);
      if (plan.checkStatusSignature) {
        lines.push(
          "// The answer's signature: base64(SHA-256(transactionId + status + key)), checked in constant time (D22)",
          "console.log(`signature valid: ${data !== undefined && verifyStatusSignature(data.signature, data.transactionId, data.status, privateKey)}`);",
        );
      }
    }
    if (plan.printHeader === undefined) lines.push('if (error !== undefined) console.log(`error: ${JSON.stringify(error)}`);');
    lines.push('process.exitCode = response.ok ? 0 : 1;');
    return lines;
  }
  const saves = Object.entries(step.save ?? {});
  if (saves.length === 0) {
    lines.push(`ok(${quote(step.title)}, ${call});`);
  } else {
    lines.push(`const answer${index + 1} = ok(${quote(step.title)}, ${call});`);
    for (const [variable, path] of saves) lines.push(`const ${variable} = ${fieldOf(`answer${index + 1}`, path)};`);
  }
  return lines;
}

export function nodeOperation(plan: OperationPlan): string {
  const auths = new Set(plan.steps.map((step) => step.auth));
  const uses = (pattern: RegExp) => JSON.stringify(plan).match(pattern) !== null;
  const factories = [...auths].flatMap((auth) =>
    auth === 'none' ? [] : auth === 'transactional' ? ['createTransactionalApiClient'] : [CLIENTS[auth].factory],
  );
  const lines = [
    `// ${plan.summary} (${plan.operationId}), against the pay-later sandbox with the package's typed client.`,
    `// Run: node sample.mjs   (PAYLATER_BASE_URL: the service; default the sandbox of \`npm start\`), ${INSTALL}`,
  ];
  if (uses(/\$\{run\}/)) lines.push("import { randomBytes } from 'node:crypto';");
  if (plan.checkStatusSignature) factories.push('verifyStatusSignature');
  if (factories.length > 0) lines.push(`import { ${[...new Set(factories)].sort().join(', ')} } from 'paylater-api';`);
  lines.push('', "const baseUrl = process.env.PAYLATER_BASE_URL ?? 'http://127.0.0.1:4000';");
  if (auths.has('web') || auths.has('sdk')) {
    lines.push("const partnerId = process.env.PAYLATER_PARTNER_ID ?? 'partner_test';");
    lines.push("const privateKey = process.env.PAYLATER_PRIVATE_KEY ?? 'test_private_key';");
  }
  for (const auth of ['merchantApi', 'extras', 'web', 'sdk'] as const) {
    if (auths.has(auth)) lines.push(`const ${CLIENTS[auth].variable} = ${CLIENTS[auth].factory}(${CLIENTS[auth].options});`);
  }
  if (uses(/\$\{run\}/)) lines.push("const run = randomBytes(4).toString('hex'); // makes the ids of this run unique");
  if (uses(/\$\{tomorrowIst\}/)) {
    lines.push("// Tomorrow's date in India (UTC+05:30), YYYY-MM-DD");
    lines.push('const tomorrowIst = new Date(Date.now() + (5.5 + 24) * 3_600_000).toISOString().slice(0, 10);');
  }
  for (const [variable, template] of plan.vars) lines.push(`const ${variable} = ${stringLiteral(template, plan.numbers)};`);
  lines.push(
    '',
    '/**',
    ' * A value inside a decoded answer, or undefined.',
    ' * @param {unknown} value',
    ' * @param {...(string | number)} path',
    ' * @returns {any}',
    ' */',
    'function field(value, ...path) {',
    '  return path.reduce((node, key) => (node == null ? undefined : /** @type {any} */ (node)[key]), value);',
    '}',
    '',
    '/** A value as the samples print it (true, false, null as in JSON). @param {unknown} value */',
    "const show = (value) => (value === undefined ? '' : String(value));",
  );
  if (plan.steps.length > 1) {
    lines.push(
      '',
      '/**',
      ' * The answer of a set-up step; stops with the error when it failed.',
      ' * @template T',
      ' * @param {string} step',
      ' * @param {{ data?: T; error?: unknown; response: Response }} result',
      ' * @returns {T}',
      ' */',
      'function ok(step, { data, error, response }) {',
      '  if (!response.ok) {',
      '    console.error(`${step} failed: ${response.status} ${JSON.stringify(error)}`);',
      '    process.exit(1);',
      '  }',
      '  return /** @type {T} */ (data);',
      '}',
    );
  }
  if (plan.steps.some((step) => step.operationId === undefined)) {
    lines.push(
      '',
      '/**',
      " * A sandbox control endpoint (the sandbox's own, not the service's), answered like the clients answer.",
      ' * @param {string} path',
      ' * @param {unknown} [body]',
      ' * @returns {Promise<{ data?: any; error?: any; response: Response }>}',
      ' */',
      'async function sandbox(path, body) {',
      '  const response = await fetch(new URL(path, baseUrl), {',
      "    method: 'POST',",
      "    ...(body === undefined ? {} : { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }),",
      '  });',
      '  const answer = await response.json();',
      '  return response.ok ? { data: answer, response } : { error: answer, response };',
      '}',
    );
  }
  const state = { transactional: false };
  plan.steps.forEach((step, index) => lines.push('', ...stepLines(plan, step, index, index === plan.steps.length - 1, state)));
  return `${lines.join('\n')}\n`;
}

export function nodeWebhook(plan: WebhookPlan): string {
  const secret =
    plan.secret === 'privateKey'
      ? ["const secret = process.env.PAYLATER_PRIVATE_KEY ?? 'test_private_key'; // the partner's private key"]
      : [
          "// The merchant's Transactional API password (merchant.basicAuthDetails.password)",
          'const secret = process.env.PAYLATER_TRANSACTIONAL_PASSWORD;',
          'if (!secret) {',
          "  console.error('Set PAYLATER_TRANSACTIONAL_PASSWORD to the merchant’s Transactional API password.');",
          '  process.exit(1);',
          '}',
        ];
  const checks =
    plan.family === 'web'
      ? 'X-Signature over the raw body and the body\'s status signature'
      : 'X-Signature over the raw body';
  const lines = [
    `// Receives the ${plan.name} webhook (${plan.operationId}): the package's handler checks ${checks}`,
    '// in constant time before anything is parsed, and the body against the contract.',
    `// Run: node receiver.mjs   (PORT: default 8080), ${INSTALL}`,
    "import { createServer } from 'node:http';",
    "import { createWebhookHandler } from 'paylater-api';",
    '',
    'const port = Number(process.env.PORT ?? 8080);',
    ...secret,
    '',
    'const handler = createWebhookHandler({',
    `  family: '${plan.family}',`,
    '  secret,',
    '  onEvent(event) {',
    ...(plan.sharesUrl
      ? [
          `    // Every ${plan.family} webhook arrives at the same URL; this sample handles the ${plan.name} ones.`,
          `    if (event.name !== '${plan.name}') return;`,
        ]
      : []),
    '    // Verified. Deduplicate on event.eventId (the same on every retry), record the event, answer quickly.',
    "    console.log(`verified: ${event.eventId ?? ''}`);",
    ...plan.print.map((field) => `    console.log(\`${pathName(field)}: \${${access('event.payload', field)}}\`);`),
    '  },',
    '  onError(error) {',
    '    // Answered 401 (signature) or 400 (anything else) by the handler.',
    '    console.log(`rejected: ${error instanceof Error ? error.message : String(error)}`);',
    '  },',
    '});',
    '',
    "createServer(handler).listen(port, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${port}`));",
  ];
  return `${lines.join('\n')}\n`;
}

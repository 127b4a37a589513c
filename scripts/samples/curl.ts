/**
 * The shell template: bash with curl, the signatures computed with openssl (`openssl dgst -sha256
 * -binary | base64` over the exact bytes sent). JSON answers are read with a few lines of bash
 * (`json_get`), so nothing beyond bash, curl and openssl is needed.
 */
import { pathName, requestTarget, snakeCase, soleVariable, templateParts, type OperationPlan, type Step, type WebhookPlan } from './plan.js';

export const shellName = (variable: string): string => snakeCase(variable).toUpperCase();

/** A shell word: single-quoted text and "$VARIABLES". */
export function word(template: string): string {
  return templateParts(template)
    .map((part) => ('text' in part ? `'${part.text.replace(/'/g, `'\\''`)}'` : `"$${shellName(part.variable)}"`))
    .join('') || "''";
}

/** Compact JSON of `value` as one shell word, template strings with their variables spliced in. */
export function jsonWord(value: unknown, numbers: readonly string[]): string {
  const pieces: string[] = [];
  let text = '';
  const flush = () => {
    if (text !== '') pieces.push(`'${text.replace(/'/g, `'\\''`)}'`);
    text = '';
  };
  const walk = (node: unknown): void => {
    if (typeof node === 'string') {
      const sole = soleVariable(node);
      if (sole !== undefined && numbers.includes(sole)) {
        flush();
        pieces.push(`"$${shellName(sole)}"`);
        return;
      }
      text += '"';
      for (const part of templateParts(node)) {
        if ('text' in part) text += JSON.stringify(part.text).slice(1, -1);
        else {
          flush();
          pieces.push(`"$${shellName(part.variable)}"`);
        }
      }
      text += '"';
    } else if (Array.isArray(node)) {
      text += '[';
      node.forEach((item, index) => {
        if (index > 0) text += ',';
        walk(item);
      });
      text += ']';
    } else if (node !== null && typeof node === 'object') {
      text += '{';
      Object.entries(node).forEach(([key, item], index) => {
        if (index > 0) text += ',';
        text += `${JSON.stringify(key)}:`;
        walk(item);
      });
      text += '}';
    } else {
      text += JSON.stringify(node);
    }
  };
  walk(value);
  flush();
  return pieces.join('');
}

/** The request path with its path parameters and query, as one shell word. */
function requestPath(step: Step): string {
  return word(requestTarget(step));
}

const CREDENTIALS: Record<string, string> = {
  merchantApi: '-u "$MERCHANT_API_USERNAME:$MERCHANT_API_PASSWORD"',
  transactional: '-u "$TRANSACTIONAL_USERNAME:$TRANSACTIONAL_PASSWORD"',
  extras: '-u "$EXTRAS_USERNAME:$EXTRAS_PASSWORD"',
  none: '',
};

function settings(plan: OperationPlan): string[] {
  const auths = new Set(plan.steps.map((step) => step.auth));
  const lines = ['BASE_URL="${PAYLATER_BASE_URL:-http://127.0.0.1:4000}"'];
  if (auths.has('merchantApi')) {
    lines.push('MERCHANT_API_USERNAME="${PAYLATER_MERCHANT_API_USERNAME:-pg_test}"');
    lines.push('MERCHANT_API_PASSWORD="${PAYLATER_MERCHANT_API_PASSWORD:-pg_test_secret}"');
  }
  if (auths.has('extras')) {
    lines.push('EXTRAS_USERNAME="${PAYLATER_EXTRAS_USERNAME:-extras_test}"');
    lines.push('EXTRAS_PASSWORD="${PAYLATER_EXTRAS_PASSWORD:-extras_test_secret}"');
  }
  if (auths.has('web') || auths.has('sdk')) {
    lines.push('PARTNER_ID="${PAYLATER_PARTNER_ID:-partner_test}"');
    lines.push('PRIVATE_KEY="${PAYLATER_PRIVATE_KEY:-test_private_key}"');
  }
  return lines;
}

export const HELPERS = {
  sign: `# base64(SHA-256(the arguments joined, then the private key)): the signature over the exact bytes
sign() { printf '%s' "$@" "$PRIVATE_KEY" | openssl dgst -sha256 -binary | base64; }`,
  call: `# call METHOD PATH BODY [curl options...]: sends the request; sets STATUS and ANSWER
call() {
  local method=$1 path=$2 body=$3 out
  shift 3
  if [[ -n $body ]]; then set -- "$@" -H 'Content-Type: application/json' --data-raw "$body"; fi
  out=$(curl -sS -X "$method" "$BASE_URL$path" "$@" -w '\\n%{http_code}')
  ANSWER=\${out%$'\\n'*} STATUS=\${out##*$'\\n'}
}

# expect_success WHAT: stops with the answer unless the last call succeeded
expect_success() {
  if [[ $STATUS != 2* ]]; then echo "$1 failed: $STATUS $ANSWER" >&2; exit 1; fi
}`,
  json: `# json_get JSON KEY...: the value found by its keys in order (array indexes skipped: the first item),
# strings without their quotes; enough for the answers read here (no escaped quotes in them)
json_get() {
  local rest=$1 key
  shift
  for key in "$@"; do
    [[ $key =~ ^[0-9]+$ ]] && continue
    [[ $rest == *"\\"$key\\":"* ]] || return 0
    rest=\${rest#*\\"$key\\":}
  done
  if [[ $rest == \\"* ]]; then rest=\${rest#\\"}; printf '%s\\n' "\${rest%%\\"*}"; else printf '%s\\n' "\${rest%%[,\\]\\}]*}"; fi
}`,
};

function stepLines(plan: OperationPlan, step: Step, index: number, last: boolean): string[] {
  const lines = [`# ${index + 1}. ${step.title}`];
  const path = requestPath(step);
  const body = step.body === undefined ? "''" : '"$BODY"';
  if (step.body !== undefined) lines.push(`BODY=${jsonWord(step.body, plan.numbers)}`);
  const options: string[] = [];
  if (step.auth === 'web') {
    lines.push(`REQUEST_PATH=${path}`);
    lines.push(`SIGNATURE=$(sign ${step.body === undefined ? "''" : '"$BODY"'} "$REQUEST_PATH")`);
    options.push(`-H "X-Partner-Id: $PARTNER_ID" -H "X-Signature: $SIGNATURE"`);
  } else if (step.auth === 'sdk') {
    lines.push(`SIGNATURE=$(sign ${body})`);
    options.push(`-H "X-Partnerid: $PARTNER_ID" -H "X-Signature: $SIGNATURE"`);
  } else if (CREDENTIALS[step.auth]) {
    options.push(CREDENTIALS[step.auth]!);
  }
  const target = step.auth === 'web' ? '"$REQUEST_PATH"' : path;
  if (last && plan.printHeader !== undefined) {
    lines.push(`OUT=$(curl -sS -o /dev/null "$BASE_URL"${target} -w '%{http_code} %{content_type}')`);
    lines.push('STATUS=${OUT%% *}');
    lines.push('echo "HTTP $STATUS"');
    lines.push(`echo "${plan.printHeader}: \${OUT#* }"`);
    return lines;
  }
  lines.push(['call', step.method, target, body, ...options].join(' '));
  if (last) {
    lines.push('echo "HTTP $STATUS"');
    for (const field of plan.print) {
      lines.push(`echo "${pathName(field)}: $(json_get "$ANSWER" ${field.map((key) => `'${key}'`).join(' ')})"`);
    }
    if (plan.checkStatusSignature) {
      lines.push(
        '# The answer\'s signature: base64(SHA-256(transactionId + status + key)), no separator (D22)',
        'EXPECTED=$(sign "$(json_get "$ANSWER" transactionId)" "$(json_get "$ANSWER" status)")',
        'if [[ $(json_get "$ANSWER" signature) == "$EXPECTED" ]]; then echo "signature valid: true"; else echo "signature valid: false"; fi',
      );
    }
  } else {
    lines.push(`expect_success '${step.title.replace(/'/g, '')}'`);
    for (const [variable, field] of Object.entries(step.save ?? {})) {
      lines.push(`${shellName(variable)}=$(json_get "$ANSWER" ${field.map((key) => `'${key}'`).join(' ')})`);
    }
  }
  return lines;
}

export function curlOperation(plan: OperationPlan): string {
  const uses = (pattern: RegExp) => JSON.stringify(plan).match(pattern) !== null;
  const signs = plan.steps.some((step) => step.auth === 'web' || step.auth === 'sdk');
  const lines = [
    '#!/usr/bin/env bash',
    `# ${plan.summary} (${plan.operationId}), against the pay-later sandbox with curl${signs ? ', signed with openssl' : ''}.`,
    '# Run: bash sample.sh   (PAYLATER_BASE_URL: the service; default the sandbox of `npm start`)',
    'set -euo pipefail',
    '',
    ...settings(plan),
  ];
  if (uses(/\$\{run\}/)) lines.push('RUN=$(openssl rand -hex 4)   # makes the ids of this run unique');
  if (uses(/\$\{tomorrowIst\}/)) {
    lines.push("# Tomorrow's date in India (GNU date, else BSD date)");
    lines.push('TOMORROW_IST=$(TZ=Asia/Kolkata date -d tomorrow +%F 2>/dev/null || TZ=Asia/Kolkata date -v+1d +%F)');
  }
  for (const [variable, template] of plan.vars) lines.push(`${shellName(variable)}=${word(template)}`);
  lines.push('');
  if (signs) lines.push(HELPERS.sign, '');
  if (plan.printHeader === undefined || plan.steps.length > 1) lines.push(HELPERS.call, '', HELPERS.json, '');
  plan.steps.forEach((step, index) => {
    lines.push(...stepLines(plan, step, index, index === plan.steps.length - 1), '');
  });
  lines.push('[[ $STATUS == 2* ]]');
  return `${lines.join('\n')}\n`;
}

export function curlWebhook(plan: WebhookPlan): string {
  const secret =
    plan.secret === 'privateKey'
      ? 'SECRET="${PAYLATER_PRIVATE_KEY:-test_private_key}"   # the partner\'s private key'
      : 'SECRET="${PAYLATER_TRANSACTIONAL_PASSWORD:?set PAYLATER_TRANSACTIONAL_PASSWORD to the Transactional API password of the merchant}"';
  const lines = [
    '#!/usr/bin/env bash',
    `# Receives the ${plan.name} webhook (${plan.operationId}) as a CGI script: the web server passes the`,
    '# raw body on standard input and the headers as HTTP_* variables (Apache mod_cgi, lighttpd, busybox',
    '# httpd, ...). X-Signature = base64(SHA-256(raw body + key)) is checked over the exact bytes received,',
    '# before anything is parsed. Needs bash and openssl.',
    'set -euo pipefail',
    '',
    secret,
    '',
    '# json_get JSON KEY...: the value found by its keys in order; enough for these bodies',
    HELPERS.json.split('\n').slice(2).join('\n'),
    '',
    '# same A B: compares two secrets in constant time: an HMAC of each under a random key, compared',
    '# (what a comparison of the two MACs reveals tells nothing about either value)',
    'same() {',
    '  local nonce',
    '  nonce=$(openssl rand -hex 32)',
    '  [[ $(printf \'%s\' "$1" | openssl dgst -sha256 -hmac "$nonce") == "$(printf \'%s\' "$2" | openssl dgst -sha256 -hmac "$nonce")" ]]',
    '}',
    '',
    '# answer STATUS TEXT BODY: the CGI answer',
    "answer() { printf 'Status: %s %s\\r\\nContent-Type: application/json\\r\\n\\r\\n%s\\n' \"$1\" \"$2\" \"$3\"; }",
    '',
    'if [[ ${REQUEST_METHOD:-} != POST ]]; then answer 405 \'Method Not Allowed\' \'{"error":"method_not_allowed"}\'; exit 0; fi',
    'LENGTH=${CONTENT_LENGTH:-0}',
    'if (( LENGTH > 1048576 )); then answer 413 \'Payload Too Large\' \'{"error":"payload_too_large"}\'; exit 0; fi',
    '',
    '# The raw body, byte for byte, in a file (a shell variable would lose trailing newlines)',
    'BODY_FILE=$(mktemp)',
    'trap \'rm -f "$BODY_FILE"\' EXIT',
    'head -c "$LENGTH" > "$BODY_FILE"',
    'EXPECTED=$({ cat "$BODY_FILE"; printf \'%s\' "$SECRET"; } | openssl dgst -sha256 -binary | base64)',
    'if ! same "${HTTP_X_SIGNATURE:-}" "$EXPECTED"; then',
    '  echo "rejected: X-Signature is not the signature of this body" >&2',
    '  answer 401 Unauthorized \'{"error":"bad_signature"}\'',
    '  exit 0',
    'fi',
    'BODY=$(cat "$BODY_FILE")',
  ];
  if (plan.statusSignature) {
    lines.push(
      '',
      '# The body\'s own signature: base64(SHA-256(transactionId + status + key)), no separator (D22)',
      'TRANSACTION_ID=$(json_get "$BODY" transactionId)',
      'TRANSACTION_STATUS=$(json_get "$BODY" status)',
      'STATUS_SIGNATURE=$(printf \'%s\' "$TRANSACTION_ID" "$TRANSACTION_STATUS" "$SECRET" | openssl dgst -sha256 -binary | base64)',
      'if ! same "$(json_get "$BODY" signature)" "$STATUS_SIGNATURE"; then',
      '  echo "rejected: the body\'s signature is not the status signature of its transactionId and status" >&2',
      '  answer 401 Unauthorized \'{"error":"bad_signature"}\'',
      '  exit 0',
      'fi',
    );
  }
  lines.push(
    '',
    '# Verified. Deduplicate on X-Event-Id (the same on every retry), record the event, answer quickly.',
    '{',
    '  echo "verified: ${HTTP_X_EVENT_ID:-}"',
    ...plan.print.map((field) => `  echo "${pathName(field)}: $(json_get "$BODY" ${field.map((key) => `'${key}'`).join(' ')})"`),
    '} >&2',
    "answer 200 OK '{\"received\":true}'",
  );
  return `${lines.join('\n')}\n`;
}

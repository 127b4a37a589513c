/**
 * The tests each language's file runs: every operation's program against a sandbox started here,
 * its output checked (`HTTP <status>` and the printed fields); every webhook receiver fed the
 * webhook the sandbox really sent (answered 200, the event's fields printed), the same body changed
 * by one byte (401, `rejected`), and for the web flow a body re-signed with a false status
 * signature (401).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sdkSignature } from '../../src/signature.js';
import {
  EXPECTED,
  deliver,
  expectOutput,
  outputWith,
  payloadField,
  recordWebhook,
  runProgram,
  sampleFile,
  samplesOf,
  startReceiver,
  startSandbox,
  tampered,
  workFolder,
  type LanguageRunner,
  type RecordedWebhook,
  type SampleSandbox,
  type Sample,
} from './support.js';

const PRIVATE_KEY = 'test_private_key';

/** Programs of one file running at once: the machine's two cores are shared. */
const AT_ONCE = 2;

/** Runs the functions given to it at most `limit` at a time. */
function limiter(limit: number): <T>(work: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (work) => {
    while (running >= limit) await new Promise<void>((done) => waiting.push(done));
    running++;
    try {
      return await work();
    } finally {
      running--;
      waiting.shift()?.();
    }
  };
}

export function describeSamples(runner: LanguageRunner): void {
  const samples = samplesOf(runner.label);
  const operations = samples.filter((sample) => sample.kind === 'operation');
  const webhooks = samples.filter((sample) => sample.kind === 'webhook');
  let running: SampleSandbox;
  let work: ReturnType<typeof workFolder>;
  const slot = limiter(AT_ONCE);

  beforeAll(async () => {
    running = await startSandbox();
    work = workFolder(runner.label);
    runner.prepare?.(work.dir);
  });

  afterAll(async () => {
    await running?.close();
    work?.cleanup();
  });

  describe(`${runner.label} samples of the operations`, () => {
    it('covers every operation of the four bundles', () => {
      expect(operations.map((sample) => sample.operationId).sort()).toEqual(Object.keys(EXPECTED).sort());
    });

    for (const sample of operations) {
      it.concurrent(`${sample.family} ${sample.operationId}: runs against the sandbox and prints its status and fields`, async () => {
        const file = sampleFile(work.dir, sample, runner.files.operation);
        const { command, args } = runner.run(file);
        const result = await slot(() => runProgram(command, args, { cwd: work.dir, env: { PAYLATER_BASE_URL: running.url } }));
        expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
        expectOutput(sample.operationId, result.stdout);
      });
    }
  });

  describe(`${runner.label} webhook receivers`, () => {
    it('covers the four webhooks', () => {
      expect(webhooks.map((sample) => `${sample.family}/${sample.webhook}`).sort()).toEqual([
        'gateway/refundUpdated',
        'gateway/transactionUpdated',
        'sdk/transactionStatus',
        'web/transactionStatus',
      ]);
    });

    for (const sample of webhooks) {
      it(`${sample.family} ${sample.webhook}: verifies the sandbox's webhook and refuses a changed one`, async () => {
        const webhook = await recordWebhook(running, sample.family, sample.webhook!);
        const secret = webhook.transactionalPassword ?? PRIVATE_KEY;
        const env: Record<string, string> = webhook.transactionalPassword ? { PAYLATER_TRANSACTIONAL_PASSWORD: secret } : {};
        const file = sampleFile(work.dir, sample, runner.files.webhook);
        const fields = printedFields(sample);

        const attempts: { webhook: RecordedWebhook; status: number; printed: RegExp }[] = [
          {
            webhook,
            status: 200,
            printed: new RegExp(
              [`verified: ${webhook.eventId}`, ...fields.map((field) => `${field}: ${escape(payloadField(webhook.body, field))}`)].join('\\n'),
            ),
          },
          { webhook: tampered(webhook), status: 401, printed: /rejected: / },
        ];
        if (sample.family === 'web') {
          // A valid X-Signature over a body whose own status signature is false.
          const body = webhook.body.replace('"status":"SUCCESS"', '"status":"FAILURE"');
          attempts.push({ webhook: { ...webhook, body, headers: { ...webhook.headers, 'X-Signature': sdkSignature(body, secret) } }, status: 401, printed: /rejected: .*status signature/ });
        }

        if ('cgi' in runner.receiver) {
          const { command, args } = runner.receiver.cgi(file);
          for (const attempt of attempts) {
            const result = await runProgram(command, args, {
              cwd: work.dir,
              input: attempt.webhook.body,
              env: {
                ...env,
                REQUEST_METHOD: 'POST',
                CONTENT_TYPE: 'application/json',
                CONTENT_LENGTH: String(Buffer.byteLength(attempt.webhook.body)),
                HTTP_X_SIGNATURE: attempt.webhook.headers['X-Signature'] ?? '',
                HTTP_X_EVENT_ID: attempt.webhook.headers['X-Event-Id'] ?? '',
              },
            });
            expect(result.code, result.stderr).toBe(0);
            expect(result.stdout.split('\r\n')[0]).toMatch(new RegExp(`^Status: ${attempt.status} `));
            expect(result.stderr).toMatch(attempt.printed);
          }
          return;
        }

        const server = runner.receiver.server;
        const receiver = await startReceiver((port) => server(file, port), { cwd: work.dir, env });
        try {
          let seen = 0;
          for (const attempt of attempts) {
            expect(await deliver(receiver.url, attempt.webhook.body, attempt.webhook.headers)).toBe(attempt.status);
            const output = await outputWith(receiver, (text) => attempt.printed.test(text.slice(seen)));
            expect(output.slice(seen)).toMatch(attempt.printed);
            seen = output.length;
          }
        } finally {
          await receiver.stop();
        }
      });
    }
  });
}

/** The fields of the body a receiver prints after `verified: <event id>`, in order. */
function printedFields(sample: Sample): string[] {
  const WEBHOOK_FIELDS: Record<string, string[]> = {
    'sdk/transactionStatus': ['merchantTransactionId', 'status'],
    'web/transactionStatus': ['transactionId', 'status'],
    'gateway/transactionUpdated': ['transaction.id', 'transaction.status'],
    'gateway/refundUpdated': ['refund.id', 'refund.transactionId', 'refund.status'],
  };
  return WEBHOOK_FIELDS[`${sample.family}/${sample.webhook}`]!;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Code samples for the reference (`x-codeSamples`, which Redocly shows as language tabs): for every
 * operation and webhook of a bundled document, one complete program per language, made from the
 * document's own examples by the plans of plan.ts and the templates of curl.ts, node.ts, php.ts and
 * python.ts. `npm run generate` adds them to the bundles under generated/openapi/, and
 * `npm run generate:check` fails when they are stale. docs/code-samples.md explains them.
 */
import type { Family } from '../families.js';
import { curlOperation, curlWebhook } from './curl.js';
import { nodeOperation, nodeWebhook } from './node.js';
import { phpOperation, phpWebhook } from './php.js';
import { samplePlans, type OperationPlan, type WebhookPlan } from './plan.js';
import { pythonOperation, pythonWebhook } from './python.js';

interface SampleLanguage {
  /** Redocly's `lang` (the highlighting). */
  lang: string;
  /** The tab's name. */
  label: string;
  /** The file name a reader saves it as, and the tests run it from. */
  file: { operation: string; webhook: string };
  operation(plan: OperationPlan): string;
  webhook(plan: WebhookPlan): string;
}

const LANGUAGES: readonly SampleLanguage[] = [
  { lang: 'Shell', label: 'curl', file: { operation: 'sample.sh', webhook: 'receiver.cgi' }, operation: curlOperation, webhook: curlWebhook },
  { lang: 'JavaScript', label: 'Node', file: { operation: 'sample.mjs', webhook: 'receiver.mjs' }, operation: nodeOperation, webhook: nodeWebhook },
  { lang: 'PHP', label: 'PHP', file: { operation: 'sample.php', webhook: 'receiver.php' }, operation: phpOperation, webhook: phpWebhook },
  { lang: 'Python', label: 'Python', file: { operation: 'sample.py', webhook: 'receiver.py' }, operation: pythonOperation, webhook: pythonWebhook },
];

interface CodeSample {
  lang: string;
  label: string;
  source: string;
}

type Document = Record<string, any>;

/** The document with `x-codeSamples` on every operation and webhook (a copy; the input is unchanged). */
export function withCodeSamples(family: Family, document: Document): Document {
  const result = structuredClone(document);
  const plans = samplePlans(family, result);
  for (const plan of plans) {
    const samples: CodeSample[] = LANGUAGES.map((language) => ({
      lang: language.lang,
      label: language.label,
      source: plan.kind === 'operation' ? language.operation(plan) : language.webhook(plan),
    }));
    const target = plan.kind === 'operation' ? findOperation(result, plan.operationId) : result.webhooks[plan.name].post;
    target['x-codeSamples'] = samples;
    // Redoc shows a webhook's payload only, not its x-codeSamples: the receivers go into its
    // description as well, one collapsible block per language.
    if (plan.kind === 'webhook') {
      const own = String(target.description ?? '').split(`\n\n${RECEIVERS_HEADING}`)[0]!.trimEnd();
      target.description = `${own}\n\n${receiverSection(samples)}`;
    }
  }
  return result;
}

const RECEIVERS_HEADING = '**Receiving it.**';

/** The Markdown of a webhook's receivers: a heading, then one `<details>` block per language. */
function receiverSection(samples: readonly CodeSample[]): string {
  const fence: Record<string, string> = { Shell: 'bash', JavaScript: 'js', PHP: 'php', Python: 'python' };
  const blocks = samples.map(
    (sample) =>
      `<details class="code-sample" data-label="${sample.label}">\n<summary>${sample.label}</summary>\n\n\`\`\`${fence[sample.lang] ?? ''}\n${sample.source.trimEnd()}\n\`\`\`\n\n</details>`,
  );
  return [`${RECEIVERS_HEADING} A complete receiver in each language, verifying the signature over the raw body in constant time (see the code samples guide):`, '', ...blocks].join('\n');
}

function findOperation(document: Document, operationId: string): Record<string, unknown> {
  for (const item of Object.values<any>(document.paths ?? {})) {
    for (const operation of Object.values<any>(item)) {
      if (operation && typeof operation === 'object' && operation.operationId === operationId) return operation;
    }
  }
  throw new Error(`no operation ${operationId}`);
}

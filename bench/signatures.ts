/** Sign and verify throughput against raw node:crypto SHA-256 over the same input. */
import { createHash } from 'node:crypto';
import { sdkSignature, verifySdkSignature, verifyWebSignature, webSignature } from '../src/signature.js';
import { compare, type Pair } from './measure.js';

const KEY = 'bench_private_key_0123456789';
const PATH = '/api/transaction?ref=bench%20run&x=1';

export interface SignatureFigures {
  size: string;
  operation: string;
  pair: Pair;
}

export function benchSignatures(): SignatureFigures[] {
  const results: SignatureFigures[] = [];
  for (const [size, bytes, iterations] of [
    ['1 KiB', 1024, 100_000],
    ['1 MiB', 1024 * 1024, 60],
  ] as const) {
    const body = Buffer.alloc(bytes, '{"k":"v"}');
    const raw = () => createHash('sha256').update(body).update(KEY).digest('base64');
    const rawWeb = () => createHash('sha256').update(body).update(PATH).update(KEY).digest('base64');
    const sdk = sdkSignature(body, KEY);
    const web = webSignature(body, PATH, KEY);
    results.push({ size, operation: 'sdkSignature', pair: compare(() => sdkSignature(body, KEY), raw, iterations) });
    results.push({ size, operation: 'verifySdkSignature', pair: compare(() => verifySdkSignature(sdk, body, KEY), raw, iterations) });
    results.push({ size, operation: 'webSignature', pair: compare(() => webSignature(body, PATH, KEY), rawWeb, iterations) });
    results.push({ size, operation: 'verifyWebSignature', pair: compare(() => verifyWebSignature(web, body, PATH, KEY), rawWeb, iterations) });
  }
  return results;
}

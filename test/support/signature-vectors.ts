/**
 * Reads test/vectors/signatures.json (written by scripts/make-vectors.sh with OpenSSL) and turns
 * each body description into its bytes.
 */
import { readFileSync } from 'node:fs';

export type VectorBody =
  | { utf8: string }
  | { base64: string }
  | { repeat: string; bytes: number };

interface VectorBase {
  name: string;
  key: string;
  signature: string;
}

export type WebVector = VectorBase & { kind: 'web'; body: VectorBody; pathAndQuery: string };
export type SdkVector = VectorBase & { kind: 'sdk'; body: VectorBody };
export type StatusVector = VectorBase & { kind: 'status'; transactionId: string; status: string };
export type Vector = WebVector | SdkVector | StatusVector;

export const vectors: Vector[] = (
  JSON.parse(
    readFileSync(new URL('../vectors/signatures.json', import.meta.url), 'utf8'),
  ) as { vectors: Vector[] }
).vectors;

/** The bytes a body description stands for. */
export function bodyBytes(body: VectorBody): Buffer {
  if ('utf8' in body) return Buffer.from(body.utf8, 'utf8');
  if ('base64' in body) return Buffer.from(body.base64, 'base64');
  const unit = Buffer.from(body.repeat, 'utf8');
  const bytes = Buffer.alloc(body.bytes);
  for (let offset = 0; offset < body.bytes; offset += unit.length) {
    unit.copy(bytes, offset);
  }
  return bytes;
}

export function vectorNamed(name: string): Vector {
  const vector = vectors.find((candidate) => candidate.name === name);
  if (vector === undefined) throw new Error(`no vector named '${name}'`);
  return vector;
}

/**
 * The memory store's units of work keep the promises the shared store keeps: a unit that throws
 * writes nothing (inline inside another too, whose own changes stay), and a change outside any
 * unit throws.
 */
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../src/sandbox/store.js';

describe('a unit of work of the memory store', () => {
  it('that throws writes nothing: its sets and deletes are put back, newest first', () => {
    const store = new MemoryStore();
    const records = store.collection<{ n: number }>('units');
    store.unit(() => {
      records.set('kept', { n: 1 });
      records.set('deleted', { n: 2 });
    });
    expect(() =>
      store.unit(() => {
        records.set('kept', { n: 10 });
        records.set('kept', { n: 11 });
        records.delete('deleted');
        records.set('new', { n: 3 });
        throw new Error('refused');
      }),
    ).toThrow('refused');
    expect(records.get('kept')).toEqual({ n: 1 });
    expect(records.get('deleted')).toEqual({ n: 2 });
    expect(records.has('new')).toBe(false);
    expect(records.values().sort((a, b) => a.n - b.n)).toEqual([{ n: 1 }, { n: 2 }]);
  });

  it('started inline and throwing: put back, while the outer unit keeps what it wrote', () => {
    const store = new MemoryStore();
    const records = store.collection<{ n: number }>('units');
    store.unit(() => {
      records.set('outer', { n: 1 });
      expect(() =>
        store.unit(() => {
          records.set('outer', { n: 2 });
          records.set('inner', { n: 3 });
          throw new Error('inner refused');
        }),
      ).toThrow('inner refused');
      records.set('after', { n: 4 });
    });
    expect(records.get('outer')).toEqual({ n: 1 });
    expect(records.has('inner')).toBe(false);
    expect(records.get('after')).toEqual({ n: 4 });
  });

  it('refuses a change outside any unit, saying where to make it, and changes nothing', () => {
    const store = new MemoryStore();
    const records = store.collection<{ n: number }>('units');
    expect(() => records.set('loose', { n: 1 })).toThrow(/units\/loose was changed outside a unit of work: make the change inside store\.unit/);
    store.unit(() => records.set('kept', { n: 1 }));
    expect(() => records.delete('kept')).toThrow(/outside a unit of work/);
    expect(() => store.clear()).toThrow(/outside a unit of work/);
    expect(records.get('kept')).toEqual({ n: 1 });
    expect(records.has('loose')).toBe(false);
  });

  it('asynchronous, is its synchronous part: a change after an await needs a unit of its own', async () => {
    const store = new MemoryStore();
    const records = store.collection<{ n: number }>('units');
    const late = store.unit(async () => {
      records.set('before', { n: 1 });
      await Promise.resolve();
      records.set('after', { n: 2 });
    });
    await expect(late).rejects.toThrow(/units\/after was changed outside a unit of work/);
    expect(records.get('before')).toEqual({ n: 1 });
    await store.unit(async () => {
      await Promise.resolve();
      store.unit(() => records.set('after', { n: 2 }));
    });
    expect(records.get('after')).toEqual({ n: 2 });
  });
});

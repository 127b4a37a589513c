/**
 * The attack suite's own logic (bench/attack/): what it reads from /proc, how it decides held or
 * FAILED, which flags it passes to a sandbox, how it reads pipelined answers, and how it judges a
 * CLI command. The attacks themselves run with `npm run bench -- --only attack`.
 */
import { describe, expect, it } from 'vitest';
import { commandProblem } from '../../bench/attack/cli-reads.js';
import { documentedSocketCap, ssrfForms } from '../../bench/attack/deliveries.js';
import { answerProblem, emptyObjects } from '../../bench/attack/flows.js';
import { parseAnswers, rawRequest } from '../../bench/attack/pipeline.js';
import { acceptedFlags, flagGroups } from '../../bench/attack/settings.js';
import { socketInodesOf, socketInodesTo } from '../../bench/attack/sockets.js';
import { secretsShown } from '../../bench/attack/tokens.js';
import { statusOf } from '../../bench/attack/transport.js';
import { formatTable, parseProcStatus, under, verdict } from '../../bench/attack/verdict.js';

const STATUS = `Name:\tnode
Umask:\t0022
State:\tS (sleeping)
VmPeak:\t 1234567 kB
VmSize:\t 1200000 kB
VmHWM:\t  812345 kB
VmRSS:\t  401234 kB
RssAnon:\t  380000 kB
Threads:\t11
`;

describe('parseProcStatus', () => {
  it('reads VmHWM and VmRSS in kB, not the similar fields around them', () => {
    expect(parseProcStatus(STATUS)).toEqual({ hwmKb: 812_345, rssKb: 401_234 });
  });

  it('answers undefined for a field that is absent (a process that has ended: a zombie has no Vm lines)', () => {
    expect(parseProcStatus('Name:\tnode\nState:\tZ (zombie)\n')).toEqual({ hwmKb: undefined, rssKb: undefined });
  });
});

describe('verdict', () => {
  it('is held with the note when every check holds', () => {
    expect(verdict([{ ok: true, reason: 'x' }], 'all refused')).toEqual({ outcome: 'held', reason: 'all refused' });
  });

  it('is FAILED with the first two failing reasons and how many more failed', () => {
    const checks = [
      { ok: true, reason: 'fine' },
      { ok: false, reason: 'the sandbox died (signal SIGABRT)' },
      { ok: false, reason: 'peak RSS 3000 MB over the bound of 1024 MB' },
      { ok: false, reason: 'third' },
    ];
    expect(verdict(checks)).toEqual({
      outcome: 'FAILED',
      reason: 'the sandbox died (signal SIGABRT); peak RSS 3000 MB over the bound of 1024 MB (+1 more failed check)',
    });
    expect(verdict(checks.slice(0, 3)).reason).toBe('the sandbox died (signal SIGABRT); peak RSS 3000 MB over the bound of 1024 MB');
    expect(verdict([...checks, ...checks]).reason).toMatch(/\(\+4 more failed checks\)$/);
  });

  it('checks a figure against its bound, the bound itself excluded; an unmeasured figure passes', () => {
    expect(under('longest stall', 499.4, 500, 'ms').ok).toBe(true);
    expect(under('longest stall', 500, 500, 'ms')).toEqual({ ok: false, reason: 'longest stall 500 ms over the bound of 500 ms' });
    expect(under('peak RSS', undefined, 1024, 'MB').ok).toBe(true);
  });
});

describe('formatTable', () => {
  it('prints one aligned line per attack, "-" for what was not measured', () => {
    const table = formatTable([
      { finding: '1', name: 'notes', peakRssMb: 2103.4, stallMs: 7883, outcome: 'FAILED', reason: 'died', seconds: 33.2 },
      { finding: '8a', name: 'host-headers', peakRssMb: undefined, stallMs: undefined, outcome: 'held', reason: '', seconds: 0.6 },
    ]);
    const lines = table.split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^#\s+attack\s+peak RSS\s+longest stall\s+time\s+outcome\s+reason$/);
    expect(lines[2]).toMatch(/^1\s+notes\s+2103 MB\s+7883 ms\s+33 s\s+FAILED\s+died$/);
    expect(lines[3]).toMatch(/^8a\s+host-headers\s+-\s+-\s+1 s\s+held$/);
    expect(lines[2]!.indexOf('FAILED')).toBe(lines[3]!.indexOf('held'));
  });
});

describe('sandbox flags', () => {
  const help = `Options:
  --port PORT         port to listen on
  --retain-deliveries N     completed webhook deliveries kept
  --quiet             do not print a line per request
`;

  it('passes a flag (with its value) only when the help names it, and says which it left out', () => {
    expect(acceptedFlags([['--retain-deliveries', '1000'], ['--max-connections', '100'], ['--quiet']], help)).toEqual({
      passed: ['--retain-deliveries', '1000', '--quiet'],
      ignored: ['--max-connections'],
    });
  });

  it('does not take a flag for another that it begins', () => {
    expect(acceptedFlags([['--retain'], ['--port-range', '1']], help).passed).toEqual([]);
  });

  it('splits typed flags into a flag and its values', () => {
    expect(flagGroups(' --a 1 --b  --c=2 --d x y')).toEqual([['--a', '1'], ['--b'], ['--c=2'], ['--d', 'x', 'y']]);
    expect(flagGroups('')).toEqual([]);
  });

  it('reads an overall socket cap from the help only where a line about sockets gives a default', () => {
    expect(documentedSocketCap(help)).toBeUndefined();
    expect(documentedSocketCap('  --webhook-concurrency N   attempts at once per receiver (default 8)')).toBeUndefined();
    expect(documentedSocketCap('  --max-webhook-sockets N   webhook sockets open at once, all receivers (default 1,024)')).toBe(1024);
  });
});

describe('request bodies and answers', () => {
  it('builds {"a":[{},...]} and [{},...] of at most the size asked, within 3 bytes of it', () => {
    for (const shape of ['object', 'array'] as const) {
      const text = emptyObjects(1000, shape);
      expect(text.length).toBeLessThanOrEqual(1000);
      expect(text.length).toBeGreaterThan(997);
      const parsed = JSON.parse(text) as { a: unknown[] } | unknown[];
      const list = Array.isArray(parsed) ? parsed : parsed.a;
      expect(list.every((item) => JSON.stringify(item) === '{}')).toBe(true);
    }
  });

  it('accepts a 2xx or a 4xx in the family format, and nothing else', () => {
    const reply = (status: number, body: string, error?: string) => ({ status, body, bytes: body.length, headers: {}, ms: 1, ...(error === undefined ? {} : { error }) });
    expect(answerProblem(reply(200, '{}'), 'messageError')).toBeUndefined();
    expect(answerProblem(reply(413, '{"message":"PAYLOAD_TOO_LARGE"}'), 'messageError')).toBeUndefined();
    expect(answerProblem(reply(400, '{"errorCode":"BAD_REQUEST","message":"x"}'), 'apiError')).toBeUndefined();
    expect(answerProblem(reply(400, '{"message":"BAD_REQUEST"}'), 'apiError')).toBe('answered 400 not in the apiError format');
    expect(answerProblem(reply(500, '{"message":"INTERNAL_SERVER_ERROR"}'), 'messageError')).toBe('answered 500');
    expect(answerProblem(reply(0, '', 'ECONNRESET'), 'messageError')).toBe('no answer (ECONNRESET)');
    expect(answerProblem(reply(413, 'Payload Too Large'), 'messageError')).toBe('answered 413 without a JSON body');
  });

  it('reads pipelined answers by their Content-Length and leaves an incomplete one', () => {
    const answer = (status: number, body: string) => `HTTP/1.1 ${status} X\r\nContent-Type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const whole = answer(201, '{"message":"TRANSACTION_INITIATED"}') + answer(400, '{"message":"ünïcode"}');
    const partial = answer(200, '{"a":1}').slice(0, -3);
    const { answers, used } = parseAnswers(Buffer.from(whole + partial));
    expect(answers).toEqual([
      [201, '{"message":"TRANSACTION_INITIATED"}'],
      [400, '{"message":"ünïcode"}'],
    ]);
    expect(used).toBe(Buffer.byteLength(whole));
  });

  it('writes a raw request with its Content-Length in bytes', () => {
    expect(rawRequest('POST', '/p', { 'X-A': '1' }, '{"n":"é"}')).toBe(
      'POST /p HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: 1\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{"n":"é"}',
    );
    expect(statusOf('HTTP/1.1 400 Bad Request\r\n\r\n')).toBe(400);
    expect(statusOf('')).toBe(0);
  });

  it('writes loopback in four IPv6 forms, each a URL Node parses, on the port given', () => {
    const forms = ssrfForms(4321);
    expect(forms).toHaveLength(4);
    for (const form of forms) expect(new URL(form).port).toBe('4321');
  });
});

describe('the sockets a process holds to some ports (/proc)', () => {
  const TCP = [
    '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
    '   0: 0100007F:8AD1 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 424277 1 0000 100 0 0 10 0',
    '   1: 0100007F:9C40 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0        0 5001 1 0000 20 4 30 10 -1',
    '   2: 0100007F:9C41 0100007F:1F90 02 00000000:00000000 00:00000000 00000000     0        0 5002 1 0000 20 4 30 10 -1',
    '   3: 0100007F:9C42 0100007F:1F90 06 00000000:00000000 03:00000000 00000000     0        0 0 3 0000',
    '   4: 0100007F:9C43 0100007F:1F91 01 00000000:00000000 00:00000000 00000000     0        0 5003 1 0000 20 4 30 10 -1',
  ].join('\n');

  it('finds the sockets to the ports given, connecting or established, not listening nor in TIME_WAIT', () => {
    // 0x1F90 = 8080, 0x1F91 = 8081
    expect([...socketInodesTo(TCP, new Set([8080]))]).toEqual(['5001', '5002']);
    expect([...socketInodesTo(TCP, new Set([8080, 8081]))]).toEqual(['5001', '5002', '5003']);
    expect(socketInodesTo(TCP, new Set([9000])).size).toBe(0);
  });

  it("reads the socket inodes of a process's descriptors", () => {
    expect([...socketInodesOf(['socket:[5001]', '/dev/null', 'pipe:[77]', 'socket:[5003]', 'anon_inode:[eventpoll]'])]).toEqual(['5001', '5003']);
  });
});

describe('secretsShown and commandProblem', () => {
  it('says where each secret was seen', () => {
    const places = new Map([
      ['banner', 'webhook http://127.0.0.1:1/hooks/tok_SECRET123'],
      ['deliveries list', '{"url":"http://127.0.0.1:1/hooks/tok_SECRET123?key=SECRET456"}'],
      ['401 answer', '{"message":"AUTHORIZATION_FAILED"}'],
    ]);
    expect([...secretsShown(['SECRET123', 'SECRET456', 'PASTEDKEY'], places)]).toEqual([
      ['SECRET123', ['banner', 'deliveries list']],
      ['SECRET456', ['deliveries list']],
    ]);
  });

  it('holds a command that exits non-zero in time, small, naming a size limit', () => {
    const limits = { ms: 5000, rssMb: 200 };
    const result = { code: 1, ms: 120, peakMb: 60, killedFor: undefined, stderr: 'paylater: the key file is larger than 64 KiB' };
    expect(commandProblem(result, limits)).toBeUndefined();
    expect(commandProblem({ ...result, stderr: 'paylater: cannot read the key file' }, limits)).toBe('no size limit named: "paylater: cannot read the key file"');
    expect(commandProblem({ ...result, code: 0 }, limits)).toBe('exited 0');
    expect(commandProblem({ ...result, code: null, killedFor: 'memory', peakMb: 612 }, limits)).toBe('still reading at 612 MB of RSS (killed)');
    expect(commandProblem({ ...result, code: null, killedFor: 'time', ms: 6000 }, limits)).toBe('still running after 6 s (killed), 60 MB');
    expect(commandProblem({ ...result, peakMb: 250 }, limits)).toBe('peak RSS 250 MB');
  });
});

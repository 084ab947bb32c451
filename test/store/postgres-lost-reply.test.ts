import { type Server, type Socket, connect, createServer } from 'node:net';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { createPostgresStore } from '../../src/store/postgres/postgres-store.js';
import type { Store } from '../../src/store/types.js';
import { MINUTE, T0, purchased, seedAccount, usage } from './cases/harness.js';
import { POSTGRES_URL, closeAdmin, createTestSchema, dropTestSchema, openPostgresStore } from './postgres-harness.js';

afterAll(closeAdmin);

/**
 * A TCP proxy in front of PostgreSQL that loses one reply: once the client sent a statement containing
 * `armedFor`, the connection is cut as the server's CommandComplete for it comes back, before the client
 * reads it. The server has committed by then (it flushes the statement's results with ReadyForQuery, after
 * the COMMIT of the implicit transaction), which is the case of issue 14 item 5: committed, reply lost.
 */
interface LosingProxy {
  port: number;
  arm(statement: string): Promise<void>;
  close(): Promise<void>;
}

async function startLosingProxy(host: string, port: number): Promise<LosingProxy> {
  const sockets = new Set<Socket>();
  let armedFor: string | null = null;
  let fired: (() => void) | null = null;
  const server: Server = createServer((client) => {
    const upstream = connect(port, host);
    sockets.add(client).add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    let watching = false;
    let pending = Buffer.alloc(0);
    client.on('data', (chunk: Buffer) => {
      if (armedFor !== null && chunk.includes(armedFor)) {
        armedFor = null;
        watching = true;
      }
      upstream.write(chunk);
    });
    // Server messages are a type byte and a 4-byte length (postgres.js does not negotiate TLS here).
    upstream.on('data', (chunk: Buffer) => {
      if (!watching) {
        client.write(chunk);
        return;
      }
      pending = Buffer.concat([pending, chunk]);
      let offset = 0;
      while (pending.length - offset >= 5) {
        const type = String.fromCharCode(pending[offset]!);
        const length = pending.readUInt32BE(offset + 1);
        if (pending.length - offset < 1 + length) break;
        if (type === 'C') {
          client.write(pending.subarray(0, offset));
          drop();
          fired?.();
          return;
        }
        offset += 1 + length;
      }
      client.write(pending.subarray(0, offset));
      pending = pending.subarray(offset);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('proxy has no port');
  return {
    port: address.port,
    arm(statement) {
      armedFor = statement;
      return new Promise((resolve) => (fired = resolve));
    },
    close() {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

describe('postgres: a reserve or settle that committed but whose reply was lost', () => {
  let schema: string;
  let clock: ManualClock;
  let direct: Store;
  let proxied: Store;
  let proxy: LosingProxy;

  beforeEach(async () => {
    schema = await createTestSchema();
    clock = new ManualClock(T0);
    direct = openPostgresStore(schema, clock);
    await direct.migrate();
    const target = new URL(POSTGRES_URL);
    proxy = await startLosingProxy(target.hostname, Number(target.port || 5432));
    target.host = `127.0.0.1:${proxy.port}`;
    proxied = createPostgresStore({ url: target.toString(), clock, schema, max: 1 });
  });

  afterEach(async () => {
    await proxied.close();
    await proxy.close();
    await direct.close();
    await dropTestSchema(schema);
  });

  it('answers the retried settle with the first charge, and charges once', async () => {
    const owner = await seedAccount(direct);
    await direct.ledger.grant(purchased(owner, 100));
    const reserved = await direct.ledger.reserve({ holdId: 'hold_lost_settle', keyId: owner.keyId, amount: 30, leaseMs: MINUTE });
    expect(reserved).toMatchObject({ ok: true, status: 'pending' });

    const cut = proxy.arm('svc_settle_v3');
    const record = usage({ shortfallCredits: 0 });
    await expect(proxied.ledger.settle({ holdId: 'hold_lost_settle', amount: 12, usage: record })).rejects.toMatchObject({
      code: 'unavailable',
    });
    await cut;
    // The caller retries what it sent: the hold is found final, settled for what the lost reply said.
    const retried = await proxied.ledger.settle({ holdId: 'hold_lost_settle', amount: 12, usage: record });
    expect(retried).toEqual({
      status: 'already_final',
      charged: 12,
      voided: false,
      balance: { accountId: owner.accountId, environment: 'live', earned: 0, earnedNextExpiry: null, purchased: 88, reserved: 0 },
    });
    const rows = await direct.usage.rollup({ accountId: owner.accountId, environment: 'live', startDay: '2025-01-15', endDay: '2025-01-15', model: null });
    expect(rows).toEqual([expect.objectContaining({ requests: 1, credits: 12 })]);
    expect(await direct.ledger.audit()).toMatchObject({ findings: [] });
  });

  it('answers the retried reserve with the hold it made, still pending, and holds once', async () => {
    const owner = await seedAccount(direct);
    await direct.ledger.grant(purchased(owner, 100));
    const cut = proxy.arm('svc_reserve_v2');
    const input = { holdId: 'hold_lost_reserve', keyId: owner.keyId, amount: 30, leaseMs: MINUTE };
    await expect(proxied.ledger.reserve(input)).rejects.toMatchObject({ code: 'unavailable' });
    await cut;
    expect(await proxied.ledger.reserve(input)).toEqual({
      ok: true,
      holdId: 'hold_lost_reserve',
      amount: 30,
      leaseExpiresAt: T0 + MINUTE,
      status: 'pending',
    });
    expect(await direct.ledger.balance(owner.accountId, 'live')).toMatchObject({ purchased: 70, reserved: 30 });
    expect(await direct.ledger.countPendingHolds(owner.accountId)).toBe(1);
  });
});

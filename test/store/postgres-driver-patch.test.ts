import postgres from 'postgres';
import { describe, expect, it } from 'vitest';
import { POSTGRES_URL } from './postgres-harness.js';

/**
 * The driver fix carried in patches/postgres+3.4.9.patch (porsager/postgres#1189, #823, PR #1218): a
 * `sql.begin()` whose BEGIN fills a connection's pipeline must still reserve that connection. Unpatched,
 * the bench's gateway answered 500 with UNSAFE_TRANSACTION at 128 connections on PostgreSQL.
 */
/** `max_pipeline` is a documented driver option its type declarations leave out. */
function pipelineOptions(max: number, maxPipeline: number): postgres.Options<Record<string, never>> {
  const options = { max, max_pipeline: maxPipeline, onnotice: () => undefined };
  return options;
}

describe('postgres driver patch: sql.begin() always reserves its connection', () => {
  it('runs transactions when every query fills the pipeline (max_pipeline 0 makes the boundary certain)', async () => {
    const sql = postgres(POSTGRES_URL, pipelineOptions(4, 0));
    try {
      const results = await Promise.all(
        Array.from({ length: 16 }, (_, i) =>
          sql.begin(async (tx) => {
            const [row] = await tx<{ n: number }[]>`SELECT ${i}::int AS n, txid_current_if_assigned() AS t`;
            return row?.n;
          }),
        ),
      );
      expect(results).toEqual(Array.from({ length: 16 }, (_, i) => i));
    } finally {
      await sql.end({ timeout: 1 });
    }
  });

  it('keeps each transaction on its own connection when BEGINs queue behind plain queries', async () => {
    // Two connections, pipelines of two: plain queries and transactions interleave at the boundary, and
    // every statement of a transaction must run on the backend its BEGIN ran on.
    const sql = postgres(POSTGRES_URL, pipelineOptions(2, 2));
    try {
      const work = Array.from({ length: 40 }, (_, i) =>
        i % 2 === 0
          ? sql.begin(async (tx) => {
              const [a] = await tx<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
              const [b] = await tx<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`;
              return a?.pid === b?.pid;
            })
          : sql`SELECT 1`.then(() => true),
      );
      const outcomes = await Promise.all(work);
      expect(outcomes.every(Boolean)).toBe(true);
    } finally {
      await sql.end({ timeout: 1 });
    }
  });
});

import { AUDIT_CHECKS, type LedgerAudit } from '../ledger-audit.js';
import type { PgSql } from './database.js';

/**
 * Runs the shared audit checks in one REPEATABLE READ, READ ONLY transaction: every check sees the same
 * snapshot, so a settle committing in the middle cannot show up as a disagreement between two tables.
 * The checks are pipelined (one round trip); the transaction takes no row locks and blocks no writer.
 */
export async function auditLedger(sql: PgSql): Promise<LedgerAudit> {
  const results = await sql.begin('isolation level repeatable read read only', (tx) =>
    Promise.all(AUDIT_CHECKS.map((check) => tx.unsafe<{ subject: string; detail: string }[]>(check.sql))),
  );
  return {
    checks: AUDIT_CHECKS.length,
    findings: AUDIT_CHECKS.flatMap((check, index) =>
      (results[index] ?? []).map((row) => ({ check: check.name, rule: check.rule, subject: String(row.subject), detail: String(row.detail) })),
    ),
  };
}

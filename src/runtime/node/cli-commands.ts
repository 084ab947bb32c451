/** The operator commands that act on the store: accounts, credits, keys, migrate. */
import { systemClock } from '../../core/clock.js';
import { newId } from '../../core/ids.js';
import { createApiKey, keyView } from '../../keys/key-service.js';
import type { Environment, Store } from '../../store/types.js';
import { adminApiFrom, pathSegment, type AdminApi } from './cli-admin-api.js';
import { CliError, emit } from './cli-output.js';
import { openStore } from './open-store.js';

export type Flags = Record<string, string | boolean | undefined>;

export function str(flags: Flags, name: string): string | undefined {
  const v = flags[name];
  return typeof v === 'string' ? v : undefined;
}

export function required(flags: Flags, name: string): string {
  const v = str(flags, name);
  if (v === undefined || v === '') throw new CliError(`missing --${name}`, 2);
  return v;
}

function positiveInt(flags: Flags, name: string): number | undefined {
  const v = str(flags, name);
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || Number(v) < 1 || !Number.isSafeInteger(Number(v))) {
    throw new CliError(`--${name} must be a positive integer, got '${v}'`, 2);
  }
  return Number(v);
}

function environment(flags: Flags): Environment {
  const v = str(flags, 'environment') ?? 'live';
  if (v !== 'live' && v !== 'test') throw new CliError(`--environment must be live or test, got '${v}'`, 2);
  return v;
}

/** The admin API when `--url` (or SVC_ADMIN_URL) is given: the command then goes through the gateway. */
function remote(flags: Flags): AdminApi | null {
  return adminApiFrom(str(flags, 'url') ?? process.env.SVC_ADMIN_URL, process.env.SVC_ADMIN_TOKEN);
}

/** Commands that need the database itself refuse `--url` rather than ignore it. */
export function databaseOnly(flags: Flags, command: string): void {
  if ((str(flags, 'url') ?? process.env.SVC_ADMIN_URL ?? '') !== '') {
    throw new CliError(`'${command}' works on the database (SVC_DATABASE_URL), not through the admin API: drop --url / SVC_ADMIN_URL`, 2);
  }
}

function balanceLine(b: { earned: number; purchased: number }): string {
  return `Balance: ${b.earned + b.purchased} (${b.earned} earned, ${b.purchased} purchased).`;
}

export async function withStore<T>(fn: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore(process.env.SVC_DATABASE_URL, systemClock);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

export async function requireAccount(store: Store, id: string): Promise<void> {
  if (!(await store.keys.getAccount(id))) throw new CliError(`no account '${id}'`);
}

export async function accountsCreate(flags: Flags, json: boolean): Promise<void> {
  const api = remote(flags);
  if (api) {
    const name = str(flags, 'name');
    const account = await api.call('POST', '/accounts', name === undefined ? {} : { name });
    emit(json, account, `Created account ${String(account.id)}${typeof account.name === 'string' ? ` (${account.name})` : ''}.`);
    return;
  }
  await withStore(async (store) => {
    const account = await store.keys.createAccount({ id: newId('acct_'), name: str(flags, 'name') ?? null });
    emit(
      json,
      { id: account.id, object: 'account', name: account.name, created_at: new Date(account.createdAt).toISOString() },
      `Created account ${account.id}${account.name ? ` (${account.name})` : ''}.`,
    );
  });
}

export async function creditsGrant(flags: Flags, json: boolean): Promise<void> {
  const accountId = required(flags, 'account');
  const purchased = positiveInt(flags, 'purchased');
  const earned = positiveInt(flags, 'earned');
  if ((purchased === undefined) === (earned === undefined)) {
    throw new CliError('give exactly one of --purchased N or --earned N --expires-at ISO8601', 2);
  }
  let expiresAt: number | null = null;
  if (earned !== undefined) {
    const text = required(flags, 'expires-at');
    expiresAt = Date.parse(text);
    if (Number.isNaN(expiresAt) || !/^\d{4}-\d{2}-\d{2}/.test(text)) {
      throw new CliError(`--expires-at must be an ISO 8601 date or time, got '${text}'`, 2);
    }
    if (expiresAt <= Date.now()) throw new CliError('--expires-at is in the past', 2);
  }
  const env = environment(flags);
  const api = remote(flags);
  if (api) {
    // Over the network an answer can be lost after the grant committed: every grant carries an idempotency
    // key (a fresh one unless given), and a failure says which, so a rerun with it grants once.
    const idempotencyKey = str(flags, 'idempotency-key') ?? `cli_${newId('grant_')}`;
    const grant = await api
      .call('POST', `/accounts/${pathSegment(accountId)}/credits`, {
        kind: earned !== undefined ? 'earned' : 'purchased',
        amount: earned ?? purchased,
        environment: env,
        ...(expiresAt === null ? {} : { expires_at: new Date(expiresAt).toISOString() }),
        idempotency_key: idempotencyKey,
      })
      .catch((e: unknown) => {
        if (e instanceof CliError) throw new CliError(`${e.message}\nIf the grant may have been made, rerun with --idempotency-key ${idempotencyKey}: it grants once.`, e.exitCode);
        throw e;
      });
    // The admin API's balance view (docs/api.md): earned_credits, purchased_credits.
    const view = grant.balance as { earned_credits: number; purchased_credits: number };
    const balance = { earned: view.earned_credits, purchased: view.purchased_credits };
    emit(
      json,
      grant,
      `${grant.created === true ? 'Granted' : 'Already granted (same idempotency key)'} ${String(grant.amount)} ${String(grant.kind)} ${env} credits to ${accountId}` +
        `${typeof grant.expires_at === 'string' ? `, expiring ${grant.expires_at}` : ''}. ${balanceLine(balance)}`,
    );
    return;
  }
  await withStore(async (store) => {
    await requireAccount(store, accountId);
    const { grant, created } = await store.ledger.grant({
      accountId,
      environment: env,
      kind: earned !== undefined ? 'earned' : 'purchased',
      amount: (earned ?? purchased) as number,
      expiresAt,
      idempotencyKey: str(flags, 'idempotency-key') ?? null,
    });
    const balance = await store.ledger.balance(accountId, env);
    emit(
      json,
      {
        id: grant.id,
        object: 'credit_grant',
        created,
        account_id: accountId,
        environment: env,
        kind: grant.kind,
        amount: grant.amount,
        expires_at: grant.expiresAt === null ? null : new Date(grant.expiresAt).toISOString(),
        balance: { earned: balance.earned, purchased: balance.purchased, total: balance.earned + balance.purchased },
      },
      `${created ? 'Granted' : 'Already granted (same idempotency key)'} ${grant.amount} ${grant.kind} ${env} credits to ${accountId}` +
        `${grant.expiresAt === null ? '' : `, expiring ${new Date(grant.expiresAt).toISOString()}`}. ${balanceLine(balance)}`,
    );
  });
}

export async function keysCreate(flags: Flags, json: boolean): Promise<void> {
  const accountId = required(flags, 'account');
  const env = environment(flags);
  const limit = positiveInt(flags, 'daily-credit-limit') ?? null;
  const rpmLimit = positiveInt(flags, 'rpm-limit') ?? null;
  const tpmLimit = positiveInt(flags, 'tpm-limit') ?? null;
  const created = (record: { id: string }, secret: string): string =>
    `Created ${env} key ${record.id}${limit === null ? '' : ` (daily limit ${limit} credits)`}.\n` + `Secret (shown once, store it now):\n\n  ${secret}\n`;
  const api = remote(flags);
  if (api) {
    const name = str(flags, 'name');
    const key = await api.call('POST', `/accounts/${pathSegment(accountId)}/keys`, {
      environment: env,
      ...(name === undefined ? {} : { name }),
      daily_credit_limit: limit,
      rpm_limit: rpmLimit,
      tpm_limit: tpmLimit,
    });
    emit(json, key, created({ id: String(key.id) }, String(key.secret)));
    return;
  }
  await withStore(async (store) => {
    await requireAccount(store, accountId);
    const { record, secret } = await createApiKey(store.keys, {
      accountId,
      environment: env,
      name: str(flags, 'name') ?? null,
      dailyCreditLimit: limit,
      rpmLimit,
      tpmLimit,
    });
    emit(json, { ...keyView(record), secret }, created(record, secret));
  });
}

/** A key as keyView and the admin API show it; the list prints a few of its fields. */
type KeyLine = Record<string, unknown>;

export async function keysList(flags: Flags, json: boolean): Promise<void> {
  const accountId = required(flags, 'account');
  const print = (keys: KeyLine[]): void => {
    const lines = keys.map(
      (k) =>
        `${String(k.id)}  ${String(k.environment)}  ${String(k.redacted_key)}  ${String(k.name ?? '-')}  cap=${String(k.daily_credit_limit ?? 'none')}  ` +
        `rpm=${String(k.rpm_limit ?? 'default')}  tpm=${String(k.tpm_limit ?? 'default')}`,
    );
    emit(json, { object: 'list', data: keys }, lines.length ? lines.join('\n') : `No active keys for ${accountId}.`);
  };
  const api = remote(flags);
  if (api) {
    const list = await api.call('GET', `/accounts/${pathSegment(accountId)}/keys`);
    print(Array.isArray(list.data) ? (list.data as KeyLine[]) : []);
    return;
  }
  await withStore(async (store) => {
    await requireAccount(store, accountId);
    print((await store.keys.listActiveKeys(accountId)).map(keyView));
  });
}

export async function keysRevoke(flags: Flags, positionals: string[], json: boolean): Promise<void> {
  const id = positionals[0];
  if (!id) throw new CliError('usage: svc-gateway keys revoke KEY_ID', 2);
  const api = remote(flags);
  if (api) {
    const key = await api.call('DELETE', `/keys/${pathSegment(id)}`);
    emit(json, key, `Revoked ${String(key.id)}. Requests with it are refused from now on.`);
    return;
  }
  await withStore(async (store) => {
    const key = await store.keys.revokeKey(id);
    if (!key) throw new CliError(`no key '${id}'`);
    emit(json, { ...keyView(key), deleted: true }, `Revoked ${key.id}. Requests with it are refused from now on.`);
  });
}

export async function migrate(json: boolean): Promise<void> {
  // openStore applies pending migrations.
  await withStore(async () => undefined);
  emit(json, { migrated: true }, 'Database schema is up to date.');
}

/** Exit code 1 when the journal disagrees with the materialized balances, so it can gate a deploy or a cron. */
export async function ledgerVerify(json: boolean): Promise<void> {
  const audit = await withStore((store) => store.ledger.audit());
  const lines = audit.findings.map((f) => `  ${f.check} ${f.subject}: ${f.detail}\n    (${f.rule})`);
  emit(
    json,
    { ok: audit.findings.length === 0, checks: audit.checks, findings: audit.findings },
    audit.findings.length === 0
      ? `Ledger consistent: ${audit.checks} checks, no disagreement between the journal and the balances.`
      : `Ledger INCONSISTENT: ${audit.findings.length} finding(s):\n${lines.join('\n')}`,
  );
  if (audit.findings.length > 0) process.exitCode = 1;
}

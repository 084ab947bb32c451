/** `svc-gateway <command>`: the operator CLI. The only other place, with server.ts, that reads process.env. */
import { parseArgs } from 'node:util';
import { ConfigError } from '../../config/schema.js';
import { StoreError } from '../../store/errors.js';
import { accountsCreate, creditsGrant, databaseOnly, keysCreate, keysList, keysRevoke, ledgerVerify, migrate, type Flags } from './cli-commands.js';
import { CliError } from './cli-output.js';
import { routeCommand } from './cli-route.js';
import { sandboxCommand, serveCommand } from './cli-serve.js';
import { usageExport } from './cli-usage-export.js';

const HELP = `Usage: svc-gateway <command> [options]   (every command accepts --json)

  serve [--port N]                                   run the gateway (PORT, default 8080)
  accounts create [--name N]
  credits grant --account ID (--purchased N | --earned N --expires-at ISO8601)
                [--environment live|test] [--idempotency-key K]
  keys create --account ID [--environment live|test] [--name N] [--daily-credit-limit N] [--rpm-limit N] [--tpm-limit N]
  keys list --account ID
  keys revoke KEY_ID
  usage export --from YYYY-MM-DD [--to YYYY-MM-DD] --format csv|jsonl
               [--account ID] [--environment live|test] [--output FILE]
                                                     one row per charged request of the UTC days --from..--to
                                                     (inclusive; --to defaults to --from); every account and
                                                     both environments unless given; to stdout unless --output
  migrate                                            apply database migrations
  ledger verify                                      recompute every balance from the journal (exit 1 on mismatch)
  route "<prompt>" [--quality-bias 0..1]             which tier svc-auto picks for a prompt, and why (or the prompt on stdin)
  sandbox [--port N]                                 run the sandbox upstream (default 8090)

accounts, credits and keys commands take --url URL (or SVC_ADMIN_URL): they then go through that gateway's
admin API (/admin/v1) with SVC_ADMIN_TOKEN, for a deployment whose database this machine does not reach
(a Cloudflare Worker, a private network). The other commands work on the database.

Environment: SVC_DATABASE_URL (default: SQLite ./data/svc-gateway.db), SVC_CONFIG (JSON or YAML), PORT, HOST,
SVC_ADMIN_TOKEN (enables the operator API under /admin/v1; with --url, the token sent to it), SVC_ADMIN_URL.`;

const OPTIONS = {
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  port: { type: 'string' },
  name: { type: 'string' },
  account: { type: 'string' },
  environment: { type: 'string' },
  purchased: { type: 'string' },
  earned: { type: 'string' },
  'expires-at': { type: 'string' },
  'idempotency-key': { type: 'string' },
  'daily-credit-limit': { type: 'string' },
  'rpm-limit': { type: 'string' },
  'tpm-limit': { type: 'string' },
  'quality-bias': { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  format: { type: 'string' },
  output: { type: 'string' },
  url: { type: 'string' },
} as const;

async function run(argv: string[]): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (e) {
    throw new CliError(e instanceof Error ? e.message : String(e), 2);
  }
  const { values, positionals } = parsed;
  const flags = values as Flags;
  const json = values.json === true;
  const [cmd, sub, ...rest] = positionals;
  if (values.help || !cmd) {
    process.stdout.write(HELP + '\n');
    return;
  }
  if (cmd === 'route') return routeCommand(positionals.slice(1), values, json);
  switch (`${cmd} ${sub ?? ''}`.trim()) {
    case 'serve':
      return serveCommand(values.port);
    case 'sandbox':
      return sandboxCommand(values.port);
    case 'migrate':
      databaseOnly(flags, 'migrate');
      return migrate(json);
    case 'accounts create':
      return accountsCreate(flags, json);
    case 'credits grant':
      return creditsGrant(flags, json);
    case 'keys create':
      return keysCreate(flags, json);
    case 'keys list':
      return keysList(flags, json);
    case 'keys revoke':
      return keysRevoke(flags, rest, json);
    case 'ledger verify':
      databaseOnly(flags, 'ledger verify');
      return ledgerVerify(json);
    case 'usage export':
      databaseOnly(flags, 'usage export');
      return usageExport(flags, rest, json);
    default:
      throw new CliError(`unknown command '${positionals.join(' ')}'\n\n${HELP}`, 2);
  }
}

run(process.argv.slice(2)).catch((e: unknown) => {
  if (e instanceof CliError || e instanceof ConfigError) {
    process.stderr.write(`svc-gateway: ${e.message}\n`);
    process.exitCode = e instanceof CliError ? e.exitCode : 1;
    return;
  }
  // A database that cannot be used now (a full disk, a lock another process held too long, PostgreSQL away)
  // is the operator's to fix, not a bug: its reason, without a stack trace; exit 75 (EX_TEMPFAIL), to retry.
  if (e instanceof StoreError && e.code === 'unavailable') {
    process.stderr.write(`svc-gateway: the database cannot be used now: ${e.message}\n`);
    process.exitCode = 75;
    return;
  }
  process.stderr.write(`svc-gateway: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exitCode = 1;
});

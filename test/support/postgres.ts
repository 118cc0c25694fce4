/**
 * A test file's own corner of the run's PostgreSQL server (harness/postgres.ts, shared through
 * test/support/services.ts; started here when outside such a run): two login roles of its own, the tables'
 * owner and the app's role, which owns nothing and is granted row access only, so row-level security
 * applies to it as it would on Aurora (neither is a superuser nor BYPASSRLS), and a template database
 * with the search schema (lib/store/postgres/schema.ts) migrated by the owner. `fresh()` copies the
 * template into a new database for one case. `bare()` makes an empty database instead, as a new Aurora
 * cluster's, owned by a role that may create roles (the master user's stand-in), with the name of an app
 * role not made yet (`ensureAppRole` makes it). Everything is dropped when the file ends.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import type { EmulatorProcess } from '../../harness/emulator-processes.js';
import { launchPostgres } from '../../harness/postgres.js';
import { sharedEndpoint } from '../../harness/shared.js';
import { PgRunner } from '../../lib/store/postgres/pg-runner.js';
import { migrateSearchSchema } from '../../lib/store/postgres/schema.js';

/** One database with the search schema. */
export interface SearchDatabase {
  name: string;
  /** the app role's connection URL (row-level security applies) */
  appUrl: string;
  /** the owner's connection URL (owns the tables; FORCE makes the policy apply to it too) */
  ownerUrl: string;
  /** the app role's name (what the Data API emulation's secret stands for) */
  appRole: string;
}

/** An empty database, as a new Aurora cluster's is before the indexer first migrates it. */
export interface BareDatabase {
  name: string;
  /** the owner's connection URL: a role that may create roles (CREATEROLE), as Aurora's master user */
  ownerUrl: string;
  /** a role name of this file's, not yet created (dropped when the file ends if something created it) */
  appRole: string;
  /** the URL `appRole` connects with, once it exists with `password` */
  appUrl(password: string): string;
}

export interface PostgresHandle {
  /** a new database copied from the file's migrated template */
  fresh(): Promise<SearchDatabase>;
  /** a new empty database with its own owner that may create roles, and a new app role's name */
  bare(): Promise<BareDatabase>;
  /** drops a database `fresh` made (also done for all of them when the file ends) */
  drop(db: SearchDatabase): Promise<void>;
}

/** `url` with another user, password and database. */
function withLogin(url: string, user: string, password: string, database: string): string {
  const u = new URL(url);
  u.username = user;
  u.password = password;
  u.pathname = `/${database}`;
  return u.toString();
}

/** Registers the file's hooks (see the module comment); `fresh` works from `beforeAll` on. */
export function usePostgres(): PostgresHandle {
  const id = randomBytes(5).toString('hex');
  const owner = { role: `hansard_owner_${id}`, password: randomBytes(12).toString('hex') };
  const app = { role: `hansard_app_${id}`, password: randomBytes(12).toString('hex') };
  const template = `hansard_tpl_${id}`;
  const made = new Set<string>();
  // bare(): an owner that may create roles (as Aurora's master user), and the app roles named for it.
  const creator = { role: `hansard_creator_${id}`, password: randomBytes(12).toString('hex') };
  const bareRoles: string[] = [];
  let own: EmulatorProcess | undefined;
  let superuser = '';
  let admin: pg.Client | undefined;

  const live = () => {
    if (!admin)
      throw new Error('usePostgres: the server is reached in beforeAll; call fresh() in a test or hook');
    return admin;
  };

  beforeAll(async () => {
    const shared = await sharedEndpoint('postgres');
    if (shared) superuser = shared;
    else {
      own = await launchPostgres();
      superuser = own.endpoint;
    }
    admin = new pg.Client({ connectionString: superuser });
    await admin.connect();
    await admin.query(`CREATE ROLE ${owner.role} LOGIN PASSWORD '${owner.password}'`);
    await admin.query(`CREATE ROLE ${app.role} LOGIN PASSWORD '${app.password}'`);
    await admin.query(`CREATE ROLE ${creator.role} LOGIN CREATEROLE PASSWORD '${creator.password}'`);
    await admin.query(`CREATE DATABASE ${template} OWNER ${owner.role}`);
    const runner = new PgRunner({
      connection: withLogin(superuser, owner.role, owner.password, template),
      max: 1,
    });
    try {
      await migrateSearchSchema(runner, { appRole: app.role });
    } finally {
      await runner.close();
    }
  });

  afterAll(async () => {
    if (admin) {
      for (const name of [...made, template])
        await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      for (const role of bareRoles) await admin.query(`DROP ROLE IF EXISTS ${role}`);
      await admin.query(`DROP ROLE IF EXISTS ${creator.role}`);
      await admin.query(`DROP ROLE IF EXISTS ${app.role}`);
      await admin.query(`DROP ROLE IF EXISTS ${owner.role}`);
      await admin.end();
    }
    await own?.stop();
  });

  return {
    async fresh() {
      const name = `hansard_${id}_${randomBytes(4).toString('hex')}`;
      await live().query(`CREATE DATABASE ${name} TEMPLATE ${template} OWNER ${owner.role}`);
      made.add(name);
      return {
        name,
        appUrl: withLogin(superuser, app.role, app.password, name),
        ownerUrl: withLogin(superuser, owner.role, owner.password, name),
        appRole: app.role,
      };
    },
    async bare() {
      const name = `hansard_${id}_${randomBytes(4).toString('hex')}`;
      await live().query(`CREATE DATABASE ${name} OWNER ${creator.role}`);
      made.add(name);
      const appRole = `hansard_app_${id}_${bareRoles.length + 1}`;
      bareRoles.push(appRole);
      return {
        name,
        ownerUrl: withLogin(superuser, creator.role, creator.password, name),
        appRole,
        appUrl: (password) => withLogin(superuser, appRole, password, name),
      };
    },
    async drop(db) {
      await live().query(`DROP DATABASE IF EXISTS ${db.name} WITH (FORCE)`);
      made.delete(db.name);
    },
  };
}

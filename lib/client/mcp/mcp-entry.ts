/**
 * The program of `dist/mcp.js` (scripts/build.mjs): `hansard mcp serve [--status]` without loading the
 * whole CLI, so an MCP client's start-up wait stays short. bin/hansard runs it for exactly those
 * arguments; anything else (`--help`) goes to the full CLI.
 */
import { serveMcp } from './server.js';

serveMcp({ env: process.env, cwd: process.cwd(), statusOnly: process.argv.includes('--status') }).then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`hansard mcp: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);

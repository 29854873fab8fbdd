#!/usr/bin/env node
// Runs a command on another Node.js major version, beside the one on PATH, without disturbing it:
//
//   node scripts/with-node.mjs 24 npm test        # what `npm run test:node24` and CI run
//   node scripts/with-node.mjs 24 npm start
//
// 1. The Node binary comes from the npm registry's `node-<platform>-<arch>@<major>` package (an
//    ordinary registry package: nothing is downloaded from nodejs.org). It is installed once into
//    node_modules/.cache/node-<major>/, not into our dependencies; delete that folder to move to
//    the newest <major>.x. The package ships Node's headers (include/node), so native addons build
//    against it offline: npm_config_nodedir points node-gyp there (it overrides a `nodedir` in
//    ~/.npmrc, which points at the default Node's headers).
// 2. better-sqlite3 12 is built on V8's own API, not Node-API, so each Node major (each ABI) needs
//    its own build. Its loader (`bindings`) tries build/Release first, then
//    lib/binding/node-v<ABI>-<platform>-<arch>/. So every build is moved to that per-ABI folder:
//    the default Node and this one each find their own, in any order, and neither run breaks the
//    other. A missing build is made with `npm rebuild better-sqlite3` on that Node (its prebuilt
//    download where reachable, else a compile from source: one to two minutes).
//    sharp needs nothing: it loads a prebuilt Node-API binary, the same for every version.
// 3. The command runs with that Node first on PATH, so npm, npx, vitest and every child started
//    with process.execPath run on it. The exit code is the command's.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Headers to build native addons against when the runtime's own must not be used. From 24.19 on,
 * Node 24's node_object_wrap.h makes every `node::ObjectWrap` destructor call
 * RemoveEnvironmentCleanupHook, which aborts the process (`Assertion failed: (env) != nullptr`)
 * when a garbage collection with no JavaScript context entered frees a wrapped object: here a
 * better-sqlite3 Statement, within seconds of a test run (nodejs/node#65446, open). Headers up
 * to 24.18.1 have no such hook, and a module built against any 24.x header runs on every 24.x
 * (one ABI): better-sqlite3's own prebuilt binaries for 12.6 (January 2026) were built so.
 * better-sqlite3 13 (Node-API) does not derive from ObjectWrap, but does not run on Node 20.
 */
const HEADERS = { 24: '24.18.1' };

const [major, ...command] = process.argv.slice(2);
if (!/^\d+$/.test(major ?? '') || command.length === 0) {
  console.error('usage: node scripts/with-node.mjs <major> <command> [args...]   (e.g. 24 npm test)');
  process.exit(64);
}
if (process.platform === 'win32') {
  console.error(`with-node: Linux and macOS only; on Windows install Node ${major} and run the command with it.`);
  process.exit(64);
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const pkg = `node-${process.platform}-${process.arch}`;
const prefix = path.join(root, 'node_modules', '.cache', `node-${major}`);
const nodeDir = path.join(prefix, 'node_modules', pkg);
const nodeBin = path.join(nodeDir, 'bin', 'node');

function run(cmd, args, options = {}) {
  const r = spawnSync(cmd, args, { cwd: root, encoding: 'utf8', ...options });
  if (r.error) throw r.error;
  return r;
}
function must(cmd, args, options = {}) {
  const r = run(cmd, args, { stdio: ['ignore', 'pipe', 'inherit'], ...options });
  if (r.status !== 0) {
    console.error(r.stdout);
    console.error(`with-node: \`${cmd} ${args.join(' ')}\` failed (exit ${r.status ?? r.signal})`);
    process.exit(r.status || 1);
  }
  return r.stdout.trim();
}
const versionOf = (bin) => run(bin, ['--version']).stdout.trim();
/** PATH and node-gyp settings that make `node`, `npm` and native builds use the given Node. */
const envFor = (bin, headers) => ({
  ...process.env,
  PATH: `${path.dirname(bin)}${path.delimiter}${process.env.PATH ?? ''}`,
  ...(headers ? { npm_config_nodedir: headers } : {}),
});

// 1. The Node binary, and the headers to build against.
if (!(fs.existsSync(nodeBin) && versionOf(nodeBin).startsWith(`v${major}.`))) {
  console.log(`with-node: installing ${pkg}@${major} into ${path.relative(root, prefix)}`);
  fs.mkdirSync(prefix, { recursive: true });
  const quiet = ['--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--loglevel=error'];
  must('npm', ['install', '--prefix', prefix, ...quiet, `${pkg}@${major}`]);
}
let headers = nodeDir;
if (HEADERS[major]) {
  headers = path.join(prefix, `headers-${HEADERS[major]}`);
  if (!fs.existsSync(path.join(headers, 'include', 'node', 'node.h'))) {
    console.log(`with-node: taking the headers of ${pkg}@${HEADERS[major]} (see HEADERS in this script)`);
    fs.mkdirSync(headers, { recursive: true });
    const packed = must('npm', ['pack', `${pkg}@${HEADERS[major]}`, '--pack-destination', headers, '--loglevel=error']);
    const tgz = path.join(headers, packed.split('\n').at(-1));
    must('tar', ['-xzf', tgz, '-C', headers, '--strip-components=1', 'package/include']);
    fs.rmSync(tgz);
  }
}
if (!fs.existsSync(path.join(headers, 'include', 'node', 'node.h'))) {
  console.error(`with-node: no include/node in ${headers}: native addons cannot be built for Node ${major} offline`);
  process.exit(1);
}

// 2. better-sqlite3, for this Node and for the default one.
const sqliteDir = path.dirname(
  run(process.execPath, ['-p', "require.resolve('better-sqlite3/package.json')"]).stdout.trim(),
);
const abis = new Map();
const abiOf = (bin) =>
  abis.get(bin) ?? abis.set(bin, run(bin, ['-p', 'process.versions.modules']).stdout.trim()).get(bin);
const parked = (bin) =>
  path.join(
    sqliteDir,
    'lib',
    'binding',
    `node-v${abiOf(bin)}-${process.platform}-${process.arch}`,
    'better_sqlite3.node',
  );
const loads = (bin) => run(bin, ['-e', "new (require('better-sqlite3'))(':memory:').close()"]).status === 0;
/** A build against headers with the ObjectWrap cleanup hook (see HEADERS) calls this; better-sqlite3 itself never does. */
const hasHookBug = (file) => fs.existsSync(file) && fs.readFileSync(file).includes('RemoveEnvironmentCleanupHook');

/** Moves build/Release's addon to lib/binding/node-v<ABI>-…/, for the ABI of whichever Node loads it. */
function park() {
  const built = path.join(sqliteDir, 'build', 'Release', 'better_sqlite3.node');
  if (!fs.existsSync(built)) return;
  const probe = `process.dlopen({ exports: {} }, ${JSON.stringify(built)})`;
  const owner = [process.execPath, nodeBin].find((bin) => run(bin, ['-e', probe]).status === 0);
  if (!owner) return; // built for some third Node: the next rebuild replaces it
  fs.mkdirSync(path.dirname(parked(owner)), { recursive: true });
  fs.renameSync(built, parked(owner));
}

function ensureSqlite(bin, buildHeaders) {
  park();
  const ok = () => loads(bin) && !(bin === nodeBin && hasHookBug(parked(bin)));
  if (ok()) return;
  fs.rmSync(parked(bin), { force: true });
  console.log(
    `with-node: building better-sqlite3 for Node ${versionOf(bin)}${buildHeaders ? ` (headers: ${buildHeaders})` : ''}`,
  );
  must('npm', ['rebuild', 'better-sqlite3', '--loglevel=error'], { env: envFor(bin, buildHeaders) });
  park();
  if (!ok()) {
    console.error(`with-node: better-sqlite3 still does not load cleanly on Node ${versionOf(bin)}`);
    process.exit(1);
  }
}
ensureSqlite(nodeBin, headers);
ensureSqlite(process.execPath); // the default Node keeps working, whatever was there before

// 3. The command.
console.log(`with-node: running \`${command.join(' ')}\` on Node ${versionOf(nodeBin)}`);
const result = spawnSync(command[0], command.slice(1), { stdio: 'inherit', env: envFor(nodeBin, headers) });
if (result.error) throw result.error;
process.exit(result.status ?? 1);

#!/usr/bin/env node
// `npm run bench:device`: device-bundle/, everything the device bench needs on a bare x86-64
// Linux GPU machine with no Node and no network (bench/README.md): the bench compiled to one
// file, Dawn's native module, a Node binary, the Vulkan loader, and run.sh. Node and dawn.node
// travel xz-compressed (the device tool carries at most 64 MiB, the working tree included);
// run.sh unpacks them with Python's lzma module, since the machine may have no xz.
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { build } from 'esbuild';

const root = new URL('..', import.meta.url).pathname;
const out = join(root, 'device-bundle');
const cache = join(root, '.cache', 'device-bundle');
const MiB = 2 ** 20;
/** The device tool's 64 MiB hold the repository's tracked files (~8 MiB) too. */
const LIMIT_MiB = 60;
/** A stock Ubuntu or Debian image has these; anything else node or dawn.node needs must travel. */
const STOCK_LIBS = /^(linux-vdso|libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|ld-linux-x86-64)\.so/;
/**
 * Sonames carried in lib/: the Vulkan loader Dawn dlopen()s (the GPU image may lack libvulkan1),
 * and what NVIDIA's Vulkan driver library (libGLX_nvidia.so.0) links against beyond libc:
 * glvnd's dispatcher and the X client libraries. run.sh puts on the library path only those the
 * machine does not have, so its own copies win.
 */
const REQUIRED_LIBS = ['libvulkan.so.1'];
const OPTIONAL_LIBS = ['libGLdispatch.so.0', 'libX11.so.6', 'libXext.so.6', 'libxcb.so.1', 'libXau.so.6', 'libXdmcp.so.6', 'libbsd.so.0', 'libmd.so.0'];

function fail(message) {
  console.error(`bench:device: ${message}`);
  process.exit(1);
}

function sha256(file) {
  return createHash('sha256').update(readFileSync(file)).digest('hex');
}

function run(cmd, args) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 256 * MiB });
  if (r.error) return null;
  return r.status === 0 ? r.stdout : null;
}

/** Libraries `ldd` says a binary needs that a stock image may lack. */
function unusualLibs(file) {
  const ldd = run('ldd', [file]);
  if (ldd === null) fail(`ldd ${file} failed; cannot check what it links against`);
  return ldd
    .split('\n')
    .map((l) => l.trim().split(/\s+/)[0])
    .filter((name) => name && !STOCK_LIBS.test(name) && !name.startsWith('/'));
}

/** `xz -9e` of `src`, cached by content under .cache/ (it takes a minute for node). */
function xzCached(src, name) {
  const hash = sha256(src);
  const cached = join(cache, `${name}-${hash.slice(0, 16)}.xz`);
  if (!existsSync(cached)) {
    if (run('xz', ['--version']) === null) fail('xz is not installed: apt-get install -y xz-utils');
    console.error(`bench:device: compressing ${src} with xz -9e (a minute or two)...`);
    mkdirSync(cache, { recursive: true });
    const r = spawnSync('xz', ['-9e', '-T1', '-c', src], { maxBuffer: 512 * MiB });
    if (r.status !== 0) fail(`xz -9e ${src} failed: ${r.stderr}`);
    writeFileSync(`${cached}.tmp`, r.stdout);
    renameSync(`${cached}.tmp`, cached);
  }
  copyFileSync(cached, join(out, `${name}.xz`));
  return { from: `${name}.xz`, sha256: hash, bytes: statSync(src).size };
}

/** Where the dynamic linker finds `soname` on this machine, from ldconfig's cache. */
function findLib(soname) {
  const listing = run('ldconfig', ['-p']) ?? run('/sbin/ldconfig', ['-p']) ?? '';
  const line = listing.split('\n').find((l) => l.trim().startsWith(`${soname} (libc6,x86-64)`));
  const path = line?.split('=>')[1]?.trim();
  return path && existsSync(path) ? realpathSync(path) : null;
}

/**
 * The `webgpu` package loads dist/<platform>-<arch>/dawn.node beside its own index.js; in the
 * bundle, "its own folder" is the bundle's, and dawn.node sits right there.
 */
const dawnBesideBundle = {
  name: 'dawn-beside-bundle',
  setup(b) {
    b.onLoad({ filter: /[\\/]node_modules[\\/]webgpu[\\/]index\.js$/ }, (args) => {
      const src = readFileSync(args.path, 'utf8');
      const from = "join(__dirname, 'dist', `${process.platform}-${arch}`, 'dawn.node')";
      if (!src.includes(from)) fail(`${args.path} no longer builds dawn.node's path as ${from}; update scripts/build-device-bundle.mjs`);
      return { contents: src.replace(from, "join(__dirname, 'dawn.node')"), loader: 'js' };
    });
  },
};

if (process.platform !== 'linux' || process.arch !== 'x64')
  fail(`the GPU machine is x86-64 Linux; this is ${process.platform} ${process.arch}, whose node and dawn.node would not run there`);
const nodeBinary = realpathSync(process.env.DEVICE_NODE ?? process.execPath);
const dawn = join(root, 'node_modules', 'webgpu', 'dist', 'linux-x64', 'dawn.node');
if (!existsSync(dawn)) fail(`${dawn} is missing: npm install (the webgpu devDependency)`);
for (const bin of [nodeBinary, dawn]) {
  const extra = unusualLibs(bin);
  if (extra.length)
    fail(`${bin} links against ${extra.join(', ')}, which a stock image may lack; bundle them or use another build (DEVICE_NODE=/path/to/node)`);
}

rmSync(out, { recursive: true, force: true });
mkdirSync(join(out, 'lib'), { recursive: true });

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const webgpuVersion = JSON.parse(readFileSync(join(root, 'node_modules', 'webgpu', 'package.json'), 'utf8')).version;
const commit = run('git', ['-C', root, 'rev-parse', '--short', 'HEAD'])?.trim() ?? 'unknown';
const dirty = (run('git', ['-C', root, 'status', '--porcelain', '--', 'src', 'bench']) ?? '').trim() !== '';
const info = { builtAt: new Date().toISOString(), commit: dirty ? `${commit} with uncommitted changes` : commit, node: process.version, webgpu: webgpuVersion };

await build({
  entryPoints: [join(root, 'bench', 'device', 'main.ts')],
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: `node${pkg.engines.node.replace(/^>=\s*/, '').split('.')[0]}`,
  outfile: join(out, 'bench.mjs'),
  define: { __DEVICE_BUNDLE__: JSON.stringify(info) },
  plugins: [dawnBesideBundle],
  logLevel: 'warning',
});

const unpack = { node: { ...xzCached(nodeBinary, 'node'), mode: 0o755 }, 'dawn.node': { ...xzCached(dawn, 'dawn.node'), mode: 0o644 } };
const libs = {};
for (const soname of [...REQUIRED_LIBS, ...OPTIONAL_LIBS]) {
  const path = findLib(soname);
  if (!path) {
    if (REQUIRED_LIBS.includes(soname)) fail(`${soname} is not installed here: apt-get install -y libvulkan1`);
    console.error(`bench:device: ${soname} not found here; the bundle goes without it`);
    continue;
  }
  copyFileSync(path, join(out, 'lib', soname));
  libs[soname] = basename(path);
}
copyFileSync(join(root, 'bench', 'device', 'run.sh'), join(out, 'run.sh'));
chmodSync(join(out, 'run.sh'), 0o755);
writeFileSync(join(out, 'manifest.json'), JSON.stringify({ ...info, unpack, libs }, null, 2) + '\n');

const sizes = [];
const walk = (dir) => {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) walk(p);
    else sizes.push([p.slice(out.length + 1), statSync(p).size]);
  }
};
walk(out);
const total = sizes.reduce((s, [, n]) => s + n, 0);
for (const [p, n] of sizes.sort((a, b) => b[1] - a[1])) console.error(`  ${(n / MiB).toFixed(2).padStart(6)} MiB  ${p}`);
console.error(`bench:device: device-bundle/ holds ${(total / MiB).toFixed(1)} MiB (limit ${LIMIT_MiB} MiB)`);
if (total > LIMIT_MiB * MiB) fail(`device-bundle/ is ${(total / MiB).toFixed(1)} MiB, over the ${LIMIT_MiB} MiB the device tool leaves for it`);
